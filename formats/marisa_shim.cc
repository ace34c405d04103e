// The one C++ file: libmarisa's trie, as formats/ocd2.h declares it for C.
// Every exception stops here and becomes an error message.
#include <marisa.h>

#include <cstdio>
#include <exception>
#include <new>

#include "ocd2.h"

struct fjf_marisa {
    marisa::Trie trie;
};

static void set_error(char *err, size_t errlen, const char *what)
{
    if (err && errlen)
        std::snprintf(err, errlen, "%s", what);
}

extern "C" fjf_marisa *fjf__marisa_map(const void *data, size_t len, size_t *used, size_t *keys,
                                       char *err, size_t errlen)
{
    fjf_marisa *t = nullptr;
    try {
        t = new fjf_marisa;
        // map() reads in place, checking each size against len, so a
        // damaged size is an error rather than a huge allocation.
        t->trie.map(data, len);
        *used = t->trie.io_size();
        *keys = t->trie.num_keys();
        if (*used > len) {
            set_error(err, errlen, "the trie is longer than the file");
            delete t;
            return nullptr;
        }
        return t;
    } catch (const std::bad_alloc &) {
        set_error(err, errlen, "out of memory");
    } catch (const marisa::Exception &e) {
        set_error(err, errlen, e.error_code() == MARISA_MEMORY_ERROR ? "out of memory" : e.what());
    } catch (const std::exception &e) {
        set_error(err, errlen, e.what());
    } catch (...) {
        set_error(err, errlen, "the trie does not load");
    }
    delete t;
    return nullptr;
}

extern "C" int fjf__marisa_each_key(const fjf_marisa *t, fjf_marisa_key_fn fn, void *ctx,
                                    char *err, size_t errlen)
{
    try {
        marisa::Agent agent;
        agent.set_query("");
        while (t->trie.predictive_search(agent)) {
            const marisa::Key &k = agent.key();
            if (fn(ctx, k.ptr(), k.length(), k.id()) != 0)
                return -1;
        }
        return 0;
    } catch (const std::bad_alloc &) {
        set_error(err, errlen, "out of memory");
    } catch (const marisa::Exception &e) {
        set_error(err, errlen, e.error_code() == MARISA_MEMORY_ERROR ? "out of memory" : e.what());
    } catch (const std::exception &e) {
        set_error(err, errlen, e.what());
    } catch (...) {
        set_error(err, errlen, "the trie cannot be read");
    }
    return -1;
}

extern "C" void fjf__marisa_free(fjf_marisa *t) { delete t; }
