/*
 * fanjian — the Python module: a CPython extension over the C library
 * (include/fanjian.h), which is linked into it statically. See
 * python/README.md for the Python API and the decisions behind it.
 *
 *   fanjian.convert(text, profile="s2t", *, compat=False, quotes=None, punct=False, dict=None,
 *                   repair="auto")
 *   fanjian.Converter(profile="s2t", *, compat=False, quotes=None, punct=False, dict=None,
 *                     repair="auto")
 *   fanjian.detect(text, *, dict=None)
 *   fanjian.profiles(*, dict=None)
 *   fanjian.OpenCC(config="t2s")      OpenCC 1.4.2-identical (FJ_COMPAT; compat=False: default mode)
 *   fanjian.opencc                    a submodule like the `opencc` package
 *
 * Dictionaries. Each dictionary file is opened once per process and kept
 * open for the life of the process (an fj_dict is immutable and may be shared
 * by any number of threads): every Converter and every module-level call on
 * the same file uses the same fj_dict. The cache is keyed by the file's
 * identity (device, inode, size, modification time), so a dictionary that is
 * rebuilt or replaced is opened anew on the next lookup, while converters made
 * before keep the image they were made with.
 *
 * The module-level convert() likewise keeps one fj_converter per dictionary,
 * profile and mode (opening one builds tables: 0.1 to 1 ms); a Converter or
 * OpenCC object opens its own, released by close() or when it is freed.
 *
 * Threads. Conversion and detection run without the GIL. The input is the
 * str's own UTF-8 form (PyUnicode_AsUTF8AndSize), valid while we hold a
 * reference to the str. A Converter's fj_converter is reference-counted (the
 * count changes only under the GIL), so close() or set_conversion() while
 * another thread is converting frees it only when that conversion is done.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fanjian.h"
#include "fanjian-formats.h"

PyMODINIT_FUNC PyInit_fanjian(void);

/* ---- the dictionary cache --------------------------------------------------- */

typedef struct dict_entry {
    struct dict_entry *next;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    fj_dict *dict;
    fj_clean *clean; /* the default clean rules, opened on first use (under dict_lock) */
    char path[]; /* absolute, as it was first opened */
} dict_entry;

/* Entries are never freed: an fj_dict lives as long as the process. */
static pthread_mutex_t dict_lock = PTHREAD_MUTEX_INITIALIZER;
static dict_entry *dict_cache;

/* A fork while another thread holds the lock (it never waits for the GIL
 * then) would leave the child's copy locked for good: fork waits for it. */
static void lock_for_fork(void) { pthread_mutex_lock(&dict_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&dict_lock); }

static int same_file(const dict_entry *e, const struct stat *sb)
{
    return e->dev == sb->st_dev && e->ino == sb->st_ino && e->size == sb->st_size &&
           e->mtime.tv_sec == sb->st_mtim.tv_sec && e->mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

/* The opened dictionary at `path`, from the cache or opened now. Runs without
 * the GIL. On failure returns NULL with *st, *err and *sys_errno (0 when not
 * known) set. */
static dict_entry *dict_get(const char *path, fj_status *st, fj_error *err, int *sys_errno)
{
    struct stat sb;
    *sys_errno = 0;
    if (stat(path, &sb) != 0) {
        int e = errno;
        /* Let the library word the message, as the CLI does. */
        fj_dict *d = NULL;
        *st = fj_dict_open(path, NULL, &d, err);
        if (*st == FJ_OK) { /* it appeared in between: report what stat saw */
            fj_dict_close(d);
            *st = FJ_ERR_IO;
            snprintf(err->message, sizeof err->message, "cannot open dictionary %s: %s", path,
                     strerror(e));
        }
        *sys_errno = e;
        return NULL;
    }
    pthread_mutex_lock(&dict_lock);
    dict_entry *e;
    for (e = dict_cache; e; e = e->next)
        if (same_file(e, &sb))
            break;
    if (!e) {
        fj_dict *d = NULL;
        errno = 0;
        *st = fj_dict_open(path, NULL, &d, err);
        if (*st != FJ_OK) {
            *sys_errno = *st == FJ_ERR_IO ? errno : 0;
        } else {
            /* Kept absolute, for Converter.dict_path. */
            char *real = realpath(path, NULL);
            const char *name = real ? real : path;
            size_t n = strlen(name) + 1;
            e = malloc(sizeof *e + n);
            if (!e) {
                fj_dict_close(d);
                *st = FJ_ERR_NOMEM;
                snprintf(err->message, sizeof err->message, "%s", fj_strerror(FJ_ERR_NOMEM));
            } else {
                e->dev = sb.st_dev;
                e->ino = sb.st_ino;
                e->size = sb.st_size;
                e->mtime = sb.st_mtim;
                e->dict = d;
                e->clean = NULL;
                memcpy(e->path, name, n);
                e->next = dict_cache;
                dict_cache = e;
            }
            free(real);
        }
    }
    pthread_mutex_unlock(&dict_lock);
    return e;
}

/* Converters for the module-level convert(), which would otherwise open one
 * per call (building a profile's tables takes 0.1 ms, its context tables in
 * the default mode about 1 ms). One per dictionary, profile and mode, kept
 * like the dictionaries; immutable, so shared by every thread. */
typedef struct conv_entry {
    struct conv_entry *next;
    const dict_entry *dict;
    unsigned flags;
    int quotes;     /* fj_options.quotes */
    unsigned punct; /* fj_options.punct */
    fj_converter *conv;
    char name[24]; /* the profile's canonical name, or "to:TARGET" */
} conv_entry;

/* The one converter for `profile` (a profile's name or file, or
 * "to:TARGET" for target-only conversion), mode and typography: quotes an
 * fj_quotes or FJ_QUOTES_PROFILE, punct FJ_PUNCT_*. */
/* A caller's phrases=, protect= and markup=, in fj_options' shape; `keep`
 * holds the str objects whose UTF-8 the arrays point into. */
typedef struct user_entries {
    fj_phrase *phrases;
    size_t phrase_count;
    const char **protect;
    size_t protect_count;
    int markup;
    PyObject *keep;
} user_entries;

static void user_entries_free(user_entries *u)
{
    PyMem_Free(u->phrases);
    PyMem_Free((void *)u->protect);
    Py_XDECREF(u->keep);
    memset(u, 0, sizeof *u);
}

/* One str argument's UTF-8, kept alive in u->keep; NULL with an error set. */
static const char *user_text(user_entries *u, PyObject *s, const char *what)
{
    Py_ssize_t n;
    const char *t = PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &n) : NULL;
    if (!t) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be str without lone surrogates, not %.80s",
                         what, Py_TYPE(s)->tp_name);
        }
        return NULL;
    }
    if (n == 0 || (size_t)n != strlen(t)) {
        PyErr_Format(PyExc_ValueError, "%s must be a non-empty str without NUL", what);
        return NULL;
    }
    return PyList_Append(u->keep, s) == 0 ? t : NULL;
}

/* phrases: a mapping {from: to} or pairs (from, to); protect: strs. None: none. */
static int user_entries_read(PyObject *phrases, PyObject *protect, int markup, user_entries *u)
{
    memset(u, 0, sizeof *u);
    u->markup = markup;
    if ((phrases == Py_None || !phrases) && (protect == Py_None || !protect))
        return 0;
    if (!(u->keep = PyList_New(0)))
        return -1;
    if (phrases && phrases != Py_None) {
        PyObject *items = PyMapping_Check(phrases) && !PyUnicode_Check(phrases) &&
                                  PyObject_HasAttrString(phrases, "items")
                              ? PyMapping_Items(phrases)
                              : PySequence_List(phrases);
        if (!items) {
            user_entries_free(u);
            PyErr_SetString(PyExc_TypeError, "phrases must be a dict {from: to} or (from, to) pairs");
            return -1;
        }
        Py_ssize_t n = PyList_GET_SIZE(items);
        u->phrases = PyMem_Calloc((size_t)n + 1, sizeof *u->phrases);
        for (Py_ssize_t i = 0; u->phrases && i < n; i++) {
            PyObject *pair = PyList_GET_ITEM(items, i);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_TypeError, "phrases must be a dict {from: to} or (from, to) pairs");
                break;
            }
            const char *from = user_text(u, PyTuple_GET_ITEM(pair, 0), "a phrase's key");
            const char *to = from ? user_text(u, PyTuple_GET_ITEM(pair, 1), "a phrase's value") : NULL;
            if (!to)
                break;
            u->phrases[u->phrase_count].from = from;
            u->phrases[u->phrase_count++].to = to;
        }
        if (!u->phrases)
            PyErr_NoMemory();
        Py_DECREF(items);
        if (PyErr_Occurred()) {
            user_entries_free(u);
            return -1;
        }
    }
    if (protect && protect != Py_None) {
        PyObject *items = PyUnicode_Check(protect) ? NULL : PySequence_List(protect);
        if (!items) {
            user_entries_free(u);
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "protect must be a list of str");
            return -1;
        }
        Py_ssize_t n = PyList_GET_SIZE(items);
        u->protect = PyMem_Calloc((size_t)n + 1, sizeof *u->protect);
        for (Py_ssize_t i = 0; u->protect && i < n; i++) {
            const char *t = user_text(u, PyList_GET_ITEM(items, i), "a protected term");
            if (!t)
                break;
            u->protect[u->protect_count++] = t;
        }
        if (!u->protect)
            PyErr_NoMemory();
        Py_DECREF(items);
        if (PyErr_Occurred()) {
            user_entries_free(u);
            return -1;
        }
    }
    return 0;
}

static int user_entries_any(const user_entries *u)
{
    return u && (u->phrase_count || u->protect_count || u->markup);
}

static fj_status open_named_user(const fj_dict *dict, const char *profile, unsigned flags,
                                 int quotes, unsigned punct, const user_entries *u,
                                 fj_converter **out, fj_error *err)
{
    fj_options o;
    fj_options_init(&o);
    if (u) {
        o.phrases = u->phrases;
        o.phrase_count = u->phrase_count;
        o.protect = u->protect;
        o.protect_count = u->protect_count;
        o.markup = u->markup ? FJ_MARKUP_INLINE : 0;
    }
    if (strncmp(profile, "to:", 3) == 0)
        o.target = profile + 3;
    else
        o.profile = profile;
    o.flags = flags;
    o.quotes = quotes;
    o.punct = punct;
    return fj_converter_open_options(dict, &o, out, err);
}

static fj_status open_named(const fj_dict *dict, const char *profile, unsigned flags, int quotes,
                            unsigned punct, fj_converter **out, fj_error *err)
{
    return open_named_user(dict, profile, flags, quotes, punct, NULL, out, err);
}

/* The name a converter answers to: "to:TARGET" as asked, else the
 * profile's canonical name. */
static const char *name_of(const fj_converter *c, const char *asked)
{
    return strncmp(asked, "to:", 3) == 0 ? asked : fj_converter_profile(c);
}

/* `to` as a profile string ("to:" TARGET) in buf, or `profile` (default
 * "s2t"); NULL with ValueError when both are given. */
static const char *profile_or_target(const char *profile, const char *to, char *buf, size_t size)
{
    if (to && profile) {
        PyErr_SetString(PyExc_ValueError, "give a profile or to=, not both");
        return NULL;
    }
    if (!to)
        return profile ? profile : "s2t";
    snprintf(buf, size, "to:%s", to);
    return buf;
}

static conv_entry *conv_cache; /* under dict_lock */

static conv_entry *conv_find(const dict_entry *d, unsigned flags, int quotes, unsigned punct,
                             const char *name)
{
    for (conv_entry *e = conv_cache; e; e = e->next)
        if (e->dict == d && e->flags == flags && e->quotes == quotes && e->punct == punct &&
            strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* The shared converter for `profile` (a name or "DIR/NAME.json"). Runs
 * without the GIL. */
static fj_status conv_get(const dict_entry *d, const char *profile, unsigned flags, int quotes,
                          unsigned punct, const fj_converter **out, fj_error *err)
{
    /* The profile's name as fj_converter_open takes it from `profile`. */
    char key[64];
    const char *base = strrchr(profile, '/');
    base = base ? base + 1 : profile;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    if (n >= sizeof key)
        n = sizeof key - 1;
    memcpy(key, base, n);
    key[n] = 0;

    fj_status st = FJ_OK;
    pthread_mutex_lock(&dict_lock);
    conv_entry *e =
        conv_find(d, flags, quotes, punct, strncmp(profile, "to:", 3) == 0 ? profile : key);
    if (!e) {
        fj_converter *c = NULL;
        st = open_named(d->dict, profile, flags, quotes, punct, &c, err);
        /* Should the library name it otherwise, keep one all the same. */
        if (st == FJ_OK && (e = conv_find(d, flags, quotes, punct, name_of(c, profile))) != NULL) {
            fj_converter_close(c);
        } else if (st == FJ_OK) {
            e = malloc(sizeof *e);
            if (!e) {
                fj_converter_close(c);
                st = FJ_ERR_NOMEM;
            } else {
                e->dict = d;
                e->flags = flags;
                e->quotes = quotes;
                e->punct = punct;
                e->conv = c;
                snprintf(e->name, sizeof e->name, "%s", name_of(c, profile));
                e->next = conv_cache;
                conv_cache = e;
            }
        }
    }
    pthread_mutex_unlock(&dict_lock);
    if (e)
        *out = e->conv;
    return st;
}

/* ---- errors ------------------------------------------------------------------ */

static PyObject *DictionaryError; /* fanjian.DictionaryError, an OSError */

/* Raises the Python exception for a library failure: ValueError for an
 * unknown profile, OSError (FileNotFoundError, PermissionError, ... when the
 * errno is known) when a dictionary cannot be read, DictionaryError (an
 * OSError) when it is damaged or of another format version, MemoryError,
 * else RuntimeError. The message is the library's. */
static void raise_fj(fj_status st, const fj_error *err, int sys_errno)
{
    if (st == FJ_ERR_NOMEM) {
        PyErr_NoMemory();
        return;
    }
    const char *text = err && err->message[0] ? err->message : fj_strerror(st);
    /* Messages name files, whose names need not be UTF-8. */
    PyObject *msg = PyUnicode_DecodeFSDefault(text);
    if (!msg)
        return;
    PyObject *type = PyExc_RuntimeError;
    switch (st) {
    case FJ_ERR_UNKNOWN_PROFILE:
    case FJ_ERR_INVALID_ARGUMENT:
        type = PyExc_ValueError;
        break;
    case FJ_ERR_IO:
        type = PyExc_OSError;
        break;
    case FJ_ERR_DICT_FORMAT:
    case FJ_ERR_DICT_VERSION:
    case FJ_ERR_DICT_CHECKSUM:
        type = DictionaryError;
        break;
    default:
        break;
    }
    if (type == PyExc_OSError && sys_errno) {
        /* OSError(errno, message) becomes the matching subclass. */
        PyObject *args = Py_BuildValue("(iO)", sys_errno, msg);
        if (args) {
            PyErr_SetObject(type, args);
            Py_DECREF(args);
        }
    } else {
        PyErr_SetObject(type, msg);
    }
    Py_DECREF(msg);
}

/* ---- which dictionary --------------------------------------------------------- */

static PyObject *the_module;  /* for its __file__ */
static PyObject *beside_path; /* bytes: <module's directory>/fanjian.fjd, once known */

/* The dictionary beside the module file, when that file exists: a new
 * reference, or NULL (with no error set when there is none). */
static PyObject *dict_beside_module(void)
{
    if (!beside_path && the_module) {
        PyObject *file = PyObject_GetAttrString(the_module, "__file__");
        PyObject *fs = NULL;
        if (!file || !PyUnicode_FSConverter(file, &fs)) {
            Py_XDECREF(file);
            PyErr_Clear(); /* no file: a module loaded otherwise */
            return NULL;
        }
        Py_DECREF(file);
        const char *s = PyBytes_AS_STRING(fs);
        const char *slash = strrchr(s, '/');
        char *dir = slash ? strndup(s, (size_t)(slash - s) + (slash == s)) : strdup(".");
        char *real = dir ? realpath(dir, NULL) : NULL;
        Py_DECREF(fs);
        if (real)
            beside_path = PyBytes_FromFormat("%s%sfanjian.fjd", real,
                                             strcmp(real, "/") == 0 ? "" : "/");
        free(real);
        free(dir);
    }
    if (!beside_path)
        return NULL;
    struct stat sb;
    if (stat(PyBytes_AS_STRING(beside_path), &sb) != 0)
        return NULL;
    Py_INCREF(beside_path);
    return beside_path;
}

/* The dictionary to use, as bytes: `arg` (str, bytes or os.PathLike) unless
 * it is None, else $FANJIAN_DICT when set and not empty, else fanjian.fjd
 * beside the module file when it exists, else fj_dict_default_path(). */
static PyObject *dict_path_for(PyObject *arg)
{
    if (arg && arg != Py_None) {
        PyObject *b = NULL;
        if (!PyUnicode_FSConverter(arg, &b))
            return NULL;
        return b;
    }
    /* Read under the GIL, as os.environ writes it. */
    const char *env = getenv("FANJIAN_DICT");
    if (env && *env)
        return PyBytes_FromString(env);
    PyObject *beside = dict_beside_module();
    if (beside || PyErr_Occurred())
        return beside;
    return PyBytes_FromString(fj_dict_default_path());
}

/* The opened dictionary for `arg` (see dict_path_for), or NULL with an
 * exception set. */
static dict_entry *open_dict(PyObject *arg)
{
    PyObject *path = dict_path_for(arg);
    if (!path)
        return NULL;
    const char *p = PyBytes_AS_STRING(path);
    fj_status st = FJ_OK;
    fj_error err;
    int sys_errno = 0;
    dict_entry *d;
    memset(&err, 0, sizeof err);
    Py_BEGIN_ALLOW_THREADS
    d = dict_get(p, &st, &err, &sys_errno);
    Py_END_ALLOW_THREADS
    if (!d)
        raise_fj(st, &err, sys_errno);
    Py_DECREF(path);
    return d;
}

/* ---- text in and out ------------------------------------------------------------ */

/* A str's UTF-8 form, valid while `keep` is held. A str with lone surrogates
 * (which UTF-8 cannot carry) is encoded with 'surrogatepass': the library
 * copies those bytes unchanged, and the result is decoded the same way, so
 * the surrogates come back where they were. */
typedef struct utf8_text {
    const char *data;
    Py_ssize_t len;
    PyObject *keep;
    int surrogates;
} utf8_text;

static int text_arg(PyObject *text, const char *func)
{
    if (PyUnicode_Check(text))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() argument must be str, not %.200s", func,
                 Py_TYPE(text)->tp_name);
    return -1;
}

/* convert() takes UTF-8 bytes too (as the `opencc` package did). */
static int text_or_bytes_arg(PyObject *text, const char *func)
{
    if (PyUnicode_Check(text) || PyBytes_Check(text))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() argument must be str or bytes, not %.200s", func,
                 Py_TYPE(text)->tp_name);
    return -1;
}

static int utf8_get(PyObject *text, utf8_text *t)
{
    t->data = PyUnicode_AsUTF8AndSize(text, &t->len);
    if (t->data) {
        Py_INCREF(text);
        t->keep = text;
        t->surrogates = 0;
        return 0;
    }
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return -1;
    PyErr_Clear();
    PyObject *b = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
    if (!b)
        return -1;
    t->data = PyBytes_AS_STRING(b);
    t->len = PyBytes_GET_SIZE(b);
    t->keep = b;
    t->surrogates = 1;
    return 0;
}

/* A growing malloc'd buffer, written by fj_punct without the GIL. */
typedef struct growbuf {
    char *data;
    size_t len, cap;
    int nomem;
} growbuf;

static int growbuf_write(void *ctx, const char *data, size_t len)
{
    growbuf *g = ctx;
    if (len > g->cap - g->len) {
        size_t cap = g->cap ? g->cap : 64;
        while (cap - g->len < len) {
            if (cap > SIZE_MAX / 2) {
                g->nomem = 1;
                return -1;
            }
            cap *= 2;
        }
        char *p = realloc(g->data, cap);
        if (!p) {
            g->nomem = 1;
            return -1;
        }
        g->data = p;
        g->cap = cap;
    }
    memcpy(g->data + g->len, data, len);
    g->len += len;
    return 0;
}

/* Converts, then applies the typography when asked. Runs without the GIL.
 * On FJ_OK, *out is to be released with fj_free (when *out_fj) or free. */
static fj_status run_convert(const fj_converter *conv, fj_quotes quotes, unsigned punct,
                             const char *in, size_t n, char **out, size_t *out_len, int *out_fj)
{
    char *buf = NULL;
    size_t len = 0;
    fj_status st = fj_convert_alloc(conv, in, n, &buf, &len);
    if (st != FJ_OK)
        return st;
    if (quotes == FJ_QUOTES_KEEP && !punct) {
        *out = buf;
        *out_len = len;
        *out_fj = 1;
        return FJ_OK;
    }
    growbuf g = {NULL, 0, 0, 0};
    g.cap = len + len / 8 + 16;
    g.data = malloc(g.cap);
    fj_punct *p = NULL;
    if (!g.data)
        st = FJ_ERR_NOMEM;
    if (st == FJ_OK)
        st = fj_punct_new(quotes, punct, NULL, growbuf_write, &g, &p);
    if (st == FJ_OK)
        st = fj_punct_feed(p, buf, len);
    if (st == FJ_OK)
        st = fj_punct_finish(p);
    fj_punct_free(p);
    fj_free(conv, buf);
    if (st == FJ_ERR_CALLBACK && g.nomem)
        st = FJ_ERR_NOMEM;
    if (st != FJ_OK) {
        free(g.data);
        return st;
    }
    *out = g.data;
    *out_len = g.len;
    *out_fj = 0;
    return FJ_OK;
}

/* Converts the str `text` (checked by the caller) with the GIL released. */
static PyObject *convert_text(const fj_converter *conv, fj_quotes quotes, unsigned punct,
                              PyObject *text)
{
    utf8_text t;
    if (utf8_get(text, &t) < 0)
        return NULL;
    char *out = NULL;
    size_t len = 0;
    int out_fj = 0;
    fj_status st;
    Py_BEGIN_ALLOW_THREADS
    st = run_convert(conv, quotes, punct, t.data, (size_t)t.len, &out, &len, &out_fj);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (st != FJ_OK) {
        raise_fj(st, NULL, 0);
    } else {
        if (len > (size_t)PY_SSIZE_T_MAX)
            PyErr_NoMemory();
        else
            result = PyUnicode_DecodeUTF8(len ? out : "", (Py_ssize_t)len,
                                          t.surrogates ? "surrogatepass" : NULL);
        if (out_fj)
            fj_free(conv, out);
        else
            free(out);
    }
    Py_DECREF(t.keep);
    return result;
}

/* Converts bytes to bytes with the GIL released. They are UTF-8; bytes that
 * are not valid UTF-8 are copied unchanged, as the library does. */
static PyObject *convert_bytes_obj(const fj_converter *conv, PyObject *bytes)
{
    const char *in = PyBytes_AS_STRING(bytes);
    size_t n = (size_t)PyBytes_GET_SIZE(bytes);
    char *out = NULL;
    size_t len = 0;
    int out_fj = 0;
    fj_status st;
    Py_INCREF(bytes);
    Py_BEGIN_ALLOW_THREADS
    st = run_convert(conv, FJ_QUOTES_KEEP, 0, in, n, &out, &len, &out_fj);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (st != FJ_OK) {
        raise_fj(st, NULL, 0);
        return NULL;
    }
    PyObject *result = len > (size_t)PY_SSIZE_T_MAX
                           ? PyErr_NoMemory()
                           : PyBytes_FromStringAndSize(len ? out : "", (Py_ssize_t)len);
    if (out_fj)
        fj_free(conv, out);
    else
        free(out);
    return result;
}

/* str to str, bytes to bytes (the typography: the converter's). */
static PyObject *convert_any(const fj_converter *conv, PyObject *text)
{
    if (PyBytes_Check(text))
        return convert_bytes_obj(conv, text);
    return convert_text(conv, FJ_QUOTES_KEEP, 0, text);
}

/* ---- options --------------------------------------------------------------------- */

static const char *const quotes_names[] = {"keep", "tw", "cn"}; /* by fj_quotes */

/* quotes=: None (*given = 0), "tw" or "hk", "cn", "keep". */
static int quotes_arg(PyObject *arg, fj_quotes *q, int *given)
{
    *given = 0;
    if (!arg || arg == Py_None)
        return 0;
    if (PyUnicode_Check(arg)) {
        *given = 1;
        if (PyUnicode_CompareWithASCIIString(arg, "tw") == 0 ||
            PyUnicode_CompareWithASCIIString(arg, "hk") == 0) {
            *q = FJ_QUOTES_CORNER;
            return 0;
        }
        if (PyUnicode_CompareWithASCIIString(arg, "cn") == 0) {
            *q = FJ_QUOTES_CURLY;
            return 0;
        }
        if (PyUnicode_CompareWithASCIIString(arg, "keep") == 0) {
            *q = FJ_QUOTES_KEEP;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "quotes must be None, 'tw', 'cn' or 'keep', not %R", arg);
    return -1;
}

#define PUNCT_ALL (FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH)

/* ---- Converter -------------------------------------------------------------------- */

/* An fj_converter shared by a Converter and the conversions running on it.
 * `refs` changes only under the GIL. */
typedef struct conv_handle {
    fj_converter *conv;
    fjf_opencc_config *config; /* a custom OpenCC config's image under conv, or NULL */
    Py_ssize_t refs;
} conv_handle;

static void handle_release(conv_handle *h)
{
    if (h && --h->refs == 0) {
        fj_converter_close(h->conv);
        fjf_opencc_config_free(h->config);
        PyMem_Free(h);
    }
}

typedef struct {
    PyObject_HEAD
    conv_handle *h;    /* NULL when closed or never initialised */
    dict_entry *dict;  /* the cache's, never freed */
    unsigned flags;    /* FJ_COMPAT or 0 */
    fj_quotes quotes;  /* in effect */
    unsigned punct;    /* FJ_PUNCT_* */
    PyObject *profile; /* str: canonical name, or NULL */
    PyObject *config;  /* OpenCC only: str, the config as given (+ ".json") */
} ConverterObject;

static PyTypeObject ConverterType;
static PyTypeObject OpenCCType;

/* Opens `profile` on `dict` and installs it in `self`, replacing what was
 * there. `quotes_given` 0: the profile's style (keep in compat mode). */
static int converter_setup(ConverterObject *self, dict_entry *dict, const char *profile,
                           unsigned flags, fj_quotes quotes, int quotes_given, unsigned punct,
                           const user_entries *user)
{
    fj_converter *c = NULL;
    fj_error err;
    memset(&err, 0, sizeof err);
    /* A config file: a stock one is its profile, any other brings its own
     * image (formats/opencc_config.c). */
    fjf_opencc_config *config = NULL;
    fjf_error config_err;
    if (fjf_opencc_config_load(dict->dict, profile, NULL, 0, &config, &config_err) != 0) {
        PyObject *msg = PyUnicode_DecodeFSDefault(config_err.message);
        if (msg) {
            PyErr_SetObject(PyExc_ValueError, msg);
            Py_DECREF(msg);
        }
        return -1;
    }
    fj_status st = open_named_user(config ? fjf_opencc_config_dict(config) : dict->dict,
                                   config ? fjf_opencc_config_profile(config) : profile, flags,
                                   quotes_given ? (int)quotes : FJ_QUOTES_PROFILE, punct, user,
                                   &c, &err);
    if (st != FJ_OK) {
        fjf_opencc_config_free(config);
        raise_fj(st, &err, 0);
        return -1;
    }
    const char *canonical = fj_converter_profile(c);
    PyObject *name = PyUnicode_FromString(name_of(c, profile));
    conv_handle *h = name ? PyMem_Malloc(sizeof *h) : NULL;
    if (!h) {
        Py_XDECREF(name);
        fj_converter_close(c);
        fjf_opencc_config_free(config);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    h->conv = c;
    h->config = config;
    h->refs = 1;
    conv_handle *old = self->h;
    self->h = h;
    handle_release(old);
    Py_XSETREF(self->profile, name);
    self->dict = dict;
    self->flags = flags;
    if (!quotes_given)
        quotes = (flags & FJ_COMPAT) ? FJ_QUOTES_KEEP : fj_profile_quotes(canonical);
    self->quotes = quotes;
    self->punct = punct;
    return 0;
}

/* The flags for `compat` and `repair` ("auto", "careful", "thorough", "off"
 * or None for auto). */
static int mode_flags(int compat, const char *repair, unsigned *flags)
{
    *flags = compat ? FJ_COMPAT : 0;
    if (!repair || strcmp(repair, "auto") == 0)
        return 0;
    unsigned level = strcmp(repair, "careful") == 0    ? FJ_REPAIR_CAREFUL
                     : strcmp(repair, "thorough") == 0 ? FJ_REPAIR_THOROUGH
                     : strcmp(repair, "off") == 0      ? FJ_REPAIR_OFF
                                                       : 0;
    if (level) {
        *flags |= level;
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "repair must be 'auto', 'careful', 'thorough' or 'off', not '%s'", repair);
    return -1;
}

static int Converter_init(ConverterObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"profile", "compat", "quotes", "punct", "dict", "repair", "to",
                             "phrases", "protect", "markup", NULL};
    const char *profile = NULL, *repair = NULL, *to = NULL;
    int compat = 0, punct = 0, quotes_given, markup = 0;
    unsigned flags;
    PyObject *quotes = Py_None, *dictarg = Py_None, *phrases = Py_None, *protect = Py_None;
    fj_quotes q = FJ_QUOTES_KEEP;
    char target[32];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|z$pOpOzzOOp:Converter", kwlist, &profile,
                                     &compat, &quotes, &punct, &dictarg, &repair, &to, &phrases,
                                     &protect, &markup))
        return -1;
    if (!(profile = profile_or_target(profile, to, target, sizeof target)))
        return -1;
    if (quotes_arg(quotes, &q, &quotes_given) < 0 || mode_flags(compat, repair, &flags) < 0)
        return -1;
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return -1;
    user_entries user;
    if (user_entries_read(phrases, protect, markup, &user) < 0)
        return -1;
    int rc = converter_setup(self, d, profile, flags, q, quotes_given, punct ? PUNCT_ALL : 0, &user);
    user_entries_free(&user);
    return rc;
}

static void Converter_dealloc(ConverterObject *self)
{
    handle_release(self->h);
    Py_XDECREF(self->profile);
    Py_XDECREF(self->config);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *closed_error(ConverterObject *self)
{
    PyErr_SetString(PyExc_ValueError, self->profile ? "the converter is closed"
                                                    : "the converter is not initialised");
    return NULL;
}

PyDoc_STRVAR(Converter_convert_doc,
"convert(text, /) -> str or bytes\n\n"
"Converts `text`: a str to a str, UTF-8 bytes to bytes (bytes that are not\n"
"valid UTF-8 are copied unchanged). The GIL is released while converting,\n"
"so threads may share one Converter.");

static PyObject *converter_run(ConverterObject *self, PyObject *text)
{
    conv_handle *h = self->h;
    if (!h)
        return closed_error(self);
    h->refs++; /* close() meanwhile leaves it to us */
    PyObject *r = convert_any(h->conv, text);
    handle_release(h);
    return r;
}

static PyObject *Converter_convert(ConverterObject *self, PyObject *text)
{
    if (text_or_bytes_arg(text, "convert") < 0)
        return NULL;
    return converter_run(self, text);
}

/* ---- inspect ------------------------------------------------------------------------ */

/* One fj_choice, copied while the GIL is released. */
typedef struct choice_copy {
    size_t offset, length, line, column;
    char chosen[32];
    size_t chosen_len, alt_count;
    char form[8][32];
    size_t form_len[8];
    double margin[8];
} choice_copy;

typedef struct choice_list {
    choice_copy *items;
    size_t count, cap;
    int failed;
} choice_list;

static int copy_choice(void *ctx, const fj_choice *ch)
{
    choice_list *l = ctx;
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        choice_copy *items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            l->failed = 1;
            return 1;
        }
        l->items = items;
        l->cap = cap;
    }
    choice_copy *c = &l->items[l->count];
    c->offset = ch->offset;
    c->length = ch->length;
    c->line = ch->line;
    c->column = ch->column;
    c->chosen_len = ch->chosen_len < sizeof c->chosen ? ch->chosen_len : sizeof c->chosen;
    memcpy(c->chosen, ch->chosen, c->chosen_len);
    c->alt_count = ch->alternative_count < 8 ? ch->alternative_count : 8;
    for (size_t i = 0; i < c->alt_count; i++) {
        size_t n = ch->alternatives[i].form_len;
        c->form_len[i] = n < sizeof c->form[i] ? n : sizeof c->form[i];
        memcpy(c->form[i], ch->alternatives[i].form, c->form_len[i]);
        c->margin[i] = ch->alternatives[i].margin;
    }
    l->count++;
    return 0;
}

/* A dict of the choice c in data; offset counts characters for a str. */
static PyObject *choice_object(const choice_copy *c, const char *data, Py_ssize_t offset)
{
    PyObject *alts = PyList_New((Py_ssize_t)c->alt_count);
    if (!alts)
        return NULL;
    for (size_t i = 0; i < c->alt_count; i++) {
        PyObject *a = Py_BuildValue("{s:s#,s:d}", "form", c->form[i], (Py_ssize_t)c->form_len[i],
                                    "margin", c->margin[i]);
        if (!a) {
            Py_DECREF(alts);
            return NULL;
        }
        PyList_SET_ITEM(alts, (Py_ssize_t)i, a);
    }
    return Py_BuildValue("{s:n,s:n,s:n,s:s#,s:s#,s:N}", "line", (Py_ssize_t)c->line, "column",
                         (Py_ssize_t)c->column, "offset", offset, "source", data + c->offset,
                         (Py_ssize_t)c->length, "chosen", c->chosen, (Py_ssize_t)c->chosen_len,
                         "alternatives", alts);
}

PyDoc_STRVAR(Converter_inspect_doc,
"inspect(text, /) -> list[dict]\n\n"
"Each character of `text` whose form the model chose among several, in\n"
"order, for proofreading: {'line', 'column' (from 1), 'offset' (index in a\n"
"str, byte offset in bytes), 'source', 'chosen', 'alternatives': [{'form',\n"
"'margin'}]}, margins in nats (how much less likely), smallest first. A\n"
"compat converter chooses nothing and returns [].");

static PyObject *Converter_inspect(ConverterObject *self, PyObject *text)
{
    if (text_or_bytes_arg(text, "inspect") < 0)
        return NULL;
    conv_handle *h = self->h;
    if (!h)
        return closed_error(self);
    utf8_text t;
    int is_bytes = PyBytes_Check(text);
    if (is_bytes) {
        t.data = PyBytes_AS_STRING(text);
        t.len = PyBytes_GET_SIZE(text);
        t.keep = text;
        Py_INCREF(text);
    } else if (utf8_get(text, &t) < 0) {
        return NULL;
    }
    h->refs++;
    choice_list l = {NULL, 0, 0, 0};
    fj_status st;
    Py_BEGIN_ALLOW_THREADS
    st = fj_inspect(h->conv, t.data, (size_t)t.len, copy_choice, &l);
    Py_END_ALLOW_THREADS
    handle_release(h);
    PyObject *result = NULL;
    if (l.failed)
        PyErr_NoMemory();
    else if (st != FJ_OK)
        raise_fj(st, NULL, 0);
    else if ((result = PyList_New((Py_ssize_t)l.count))) {
        /* Character offsets, counted on from one choice to the next. */
        size_t byte = 0;
        Py_ssize_t chars = 0;
        for (size_t i = 0; i < l.count; i++) {
            if (!is_bytes)
                for (; byte < l.items[i].offset; byte++)
                    chars += ((unsigned char)t.data[byte] & 0xC0) != 0x80;
            PyObject *c = choice_object(&l.items[i], t.data,
                                        is_bytes ? (Py_ssize_t)l.items[i].offset : chars);
            if (!c) {
                Py_CLEAR(result);
                break;
            }
            PyList_SET_ITEM(result, (Py_ssize_t)i, c);
        }
    }
    free(l.items);
    Py_DECREF(t.keep);
    return result;
}

PyDoc_STRVAR(Converter_close_doc,
"close() -> None\n\n"
"Releases the converter; convert() then raises ValueError. Conversions\n"
"running in other threads finish first. The dictionary stays open for\n"
"other converters. Closing twice is allowed.");

static PyObject *Converter_close(ConverterObject *self, PyObject *Py_UNUSED(ignored))
{
    conv_handle *h = self->h;
    self->h = NULL;
    handle_release(h);
    Py_RETURN_NONE;
}

static PyObject *Converter_enter(ConverterObject *self, PyObject *Py_UNUSED(ignored))
{
    if (!self->h)
        return closed_error(self);
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Converter_exit(ConverterObject *self, PyObject *Py_UNUSED(args))
{
    return Converter_close(self, NULL);
}

static PyObject *Converter_repr(ConverterObject *self)
{
    if (!self->profile)
        return PyUnicode_FromFormat("<%s (not initialised)>", Py_TYPE(self)->tp_name);
    return PyUnicode_FromFormat("<%s profile=%R compat=%s quotes='%s' punct=%s%s>",
                                Py_TYPE(self)->tp_name, self->profile,
                                (self->flags & FJ_COMPAT) ? "True" : "False",
                                quotes_names[self->quotes], self->punct ? "True" : "False",
                                self->h ? "" : " closed");
}

static PyObject *Converter_get_profile(ConverterObject *self, void *Py_UNUSED(closure))
{
    if (!self->profile)
        Py_RETURN_NONE;
    Py_INCREF(self->profile);
    return self->profile;
}

static PyObject *Converter_get_compat(ConverterObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong((self->flags & FJ_COMPAT) != 0);
}

static PyObject *Converter_get_repair(ConverterObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString((self->flags & FJ_REPAIR_THOROUGH)  ? "thorough"
                                : (self->flags & FJ_REPAIR_CAREFUL) ? "careful"
                                : (self->flags & FJ_REPAIR_OFF)     ? "off"
                                                                    : "auto");
}

static PyObject *Converter_get_quotes(ConverterObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(quotes_names[self->quotes]);
}

static PyObject *Converter_get_punct(ConverterObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->punct != 0);
}

static PyObject *Converter_get_closed(ConverterObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->h == NULL);
}

static PyObject *Converter_get_dict_path(ConverterObject *self, void *Py_UNUSED(closure))
{
    if (!self->dict)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(self->dict->path);
}

/* ---- Stream: a Converter's conversion of text that arrives in pieces ------------------ */

typedef struct {
    PyObject_HEAD
    conv_handle *h;      /* the converter's, referenced */
    fj_stream *stream;   /* NULL once finished */
    growbuf out;         /* what the stream wrote during the current call */
    unsigned char carry[4]; /* a character the stream has written only part of */
    size_t carry_len;
    int surrogates;      /* some piece was encoded with surrogatepass */
    int busy;            /* a feed is running (without the GIL) */
} StreamObject;

static PyTypeObject StreamType;

static void Stream_dealloc(StreamObject *self)
{
    fj_stream_free(self->stream);
    free(self->out.data);
    handle_release(self->h);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* What the stream wrote, as str: whole characters only, the rest carried to
 * the next call (or, at the end, decoded as it is). */
static PyObject *stream_take(StreamObject *self, int final)
{
    growbuf *g = &self->out;
    size_t keep = 0;
    if (!final) { /* a UTF-8 sequence cut by the end of this piece's output */
        size_t i = g->len, back = 0;
        while (i > 0 && back < 3 && ((unsigned char)g->data[i - 1] & 0xC0) == 0x80) {
            i--;
            back++;
        }
        if (i > 0) {
            unsigned char lead = (unsigned char)g->data[i - 1];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (need > back + 1)
                keep = back + 1;
        }
    }
    PyObject *r = PyUnicode_DecodeUTF8(g->len - keep ? g->data : "", (Py_ssize_t)(g->len - keep),
                                       self->surrogates ? "surrogatepass" : "replace");
    if (keep) /* g->data is NULL while nothing was written */
        memcpy(self->carry, g->data + g->len - keep, keep);
    self->carry_len = keep;
    g->len = 0;
    return r;
}

static int stream_write(void *ctx, const char *data, size_t len)
{
    StreamObject *self = ctx;
    return growbuf_write(&self->out, data, len);
}

/* Starts a call: the carried bytes first. 0, or -1 with an exception. */
static int stream_enter(StreamObject *self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the stream is in use by another thread");
        return -1;
    }
    if (!self->stream) {
        PyErr_SetString(PyExc_ValueError, "the stream is finished");
        return -1;
    }
    self->out.len = 0;
    self->out.nomem = 0;
    if (self->carry_len && growbuf_write(&self->out, (const char *)self->carry, self->carry_len))
        return PyErr_NoMemory(), -1;
    self->carry_len = 0;
    return 0;
}

static PyObject *stream_fail(StreamObject *self, fj_status st)
{
    fj_error err;
    fj_stream_error(self->stream, &err);
    fj_stream_free(self->stream);
    self->stream = NULL;
    if (self->out.nomem || st == FJ_ERR_NOMEM)
        return PyErr_NoMemory();
    raise_fj(st, &err, 0);
    return NULL;
}

PyDoc_STRVAR(Stream_feed_doc,
"feed(text, /) -> str\n\n"
"Converts the next piece; returns what is now decided (the undecided tail\n"
"is kept for the next piece). The pieces' results joined are exactly\n"
"Converter.convert() of the pieces joined, however the text is cut.");

static PyObject *Stream_feed(StreamObject *self, PyObject *text)
{
    if (text_arg(text, "feed") < 0 || stream_enter(self) < 0)
        return NULL;
    utf8_text t;
    if (utf8_get(text, &t) < 0)
        return NULL;
    self->surrogates |= t.surrogates;
    fj_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = fj_stream_feed(self->stream, t.data, (size_t)t.len);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    Py_DECREF(t.keep);
    if (st != FJ_OK)
        return stream_fail(self, st);
    return stream_take(self, 0);
}

PyDoc_STRVAR(Stream_finish_doc,
"finish() -> str\n\n"
"Ends the text and returns the rest. The stream can then only be dropped.");

static PyObject *Stream_finish(StreamObject *self, PyObject *Py_UNUSED(ignored))
{
    if (stream_enter(self) < 0)
        return NULL;
    fj_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = fj_stream_finish(self->stream);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (st != FJ_OK)
        return stream_fail(self, st);
    fj_stream_free(self->stream);
    self->stream = NULL;
    return stream_take(self, 1);
}

static PyMethodDef Stream_methods[] = {
    {"feed", (PyCFunction)Stream_feed, METH_O, Stream_feed_doc},
    {"finish", (PyCFunction)Stream_finish, METH_NOARGS, Stream_finish_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fanjian.Stream",
    .tp_basicsize = sizeof(StreamObject),
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A Converter's conversion of text in pieces (Converter.stream()). One thread at a time.",
    .tp_methods = Stream_methods,
};

PyDoc_STRVAR(Converter_stream_doc,
"stream() -> Stream\n\n"
"A stream over this converter, for text that arrives in pieces (a file read\n"
"in chunks, a socket): feed(piece) returns the converted text that is\n"
"decided, finish() the rest. Memory stays bounded by the longest stretch\n"
"one dictionary match depends on, not by the text.");

static PyObject *Converter_stream(ConverterObject *self, PyObject *Py_UNUSED(ignored))
{
    conv_handle *h = self->h;
    if (!h)
        return closed_error(self);
    StreamObject *s = PyObject_New(StreamObject, &StreamType);
    if (!s)
        return NULL;
    s->h = h;
    h->refs++;
    s->stream = NULL;
    memset(&s->out, 0, sizeof s->out);
    s->carry_len = 0;
    s->surrogates = 0;
    s->busy = 0;
    if (fj_stream_new(h->conv, stream_write, s, &s->stream) != FJ_OK) {
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    return (PyObject *)s;
}

static PyMethodDef Converter_methods[] = {
    {"convert", (PyCFunction)Converter_convert, METH_O, Converter_convert_doc},
    {"inspect", (PyCFunction)Converter_inspect, METH_O, Converter_inspect_doc},
    {"close", (PyCFunction)Converter_close, METH_NOARGS, Converter_close_doc},
    {"stream", (PyCFunction)Converter_stream, METH_NOARGS, Converter_stream_doc},
    {"__enter__", (PyCFunction)Converter_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Converter_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Converter_getset[] = {
    {"profile", (getter)Converter_get_profile, NULL, "The canonical profile name ('s2twp').", NULL},
    {"compat", (getter)Converter_get_compat, NULL, "True: OpenCC 1.4.2-identical output.", NULL},
    {"repair", (getter)Converter_get_repair, NULL,
     "How Traditional input is repaired: 'auto', 'careful', 'thorough' or 'off'.", NULL},
    {"quotes", (getter)Converter_get_quotes, NULL,
     "The quotation marks written: 'tw' (「」), 'cn' (“”) or 'keep'.", NULL},
    {"punct", (getter)Converter_get_punct, NULL, "True: 。。。 -> …… and full-width , ! ? : ;", NULL},
    {"closed", (getter)Converter_get_closed, NULL, "True after close().", NULL},
    {"dict_path", (getter)Converter_get_dict_path, NULL, "The dictionary file in use.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Converter_doc,
"Converter(profile='s2t', *, compat=False, quotes=None, punct=False, dict=None)\n\n"
"A conversion profile bound to a dictionary, for converting many texts.\n\n"
"profile: s2t t2s s2tw tw2s s2twp tw2sp s2hk hk2s s2hkp hk2sp t2tw tw2t\n"
"  t2hk hk2t t2jp jp2t, or an OpenCC config name such as 's2t.json'.\n"
"compat: True for OpenCC 1.4.2-identical output (maximum matching);\n"
"  False (the default) chooses forms from context.\n"
"quotes: None for the profile's own style (s2twp and s2hkp write 「」,\n"
"  tw2sp and hk2sp “”, the others and compat mode keep them), or 'tw',\n"
"  'cn', 'keep'.\n"
"punct: True turns 。。。 and ... into …… and , ! ? : ; between Han\n"
"  characters into full-width marks.\n"
"dict: a dictionary file; else $FANJIAN_DICT, else fanjian.fjd beside this\n"
"  module, else fanjian.DEFAULT_DICT.\n\n"
"Immutable and thread-safe; also a context manager (close() on exit).\n"
"Raises ValueError for an unknown profile, OSError when the dictionary\n"
"cannot be read (DictionaryError when it is damaged).");

static PyTypeObject ConverterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fanjian.Converter",
    .tp_basicsize = sizeof(ConverterObject),
    .tp_dealloc = (destructor)Converter_dealloc,
    .tp_repr = (reprfunc)Converter_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = Converter_doc,
    .tp_methods = Converter_methods,
    .tp_getset = Converter_getset,
    .tp_init = (initproc)Converter_init,
    .tp_new = PyType_GenericNew,
};

/* ---- OpenCC: the `opencc` package's class, OpenCC-identical ---------------------------- */

/* The name the `opencc` package keeps in .config: with ".json". */
static PyObject *config_name(const char *config)
{
    size_t n = strlen(config);
    if (n >= 5 && strcmp(config + n - 5, ".json") == 0)
        return PyUnicode_FromString(config);
    return PyUnicode_FromFormat("%s.json", config);
}

/* `compat` 1: OpenCC-identical, quotation marks kept; 0: the default mode
 * with the profile's own quotation marks, as Converter(config). */
static int opencc_setup(ConverterObject *self, dict_entry *d, const char *config, int compat)
{
    PyObject *name = config_name(config);
    if (!name)
        return -1;
    if (converter_setup(self, d, config, compat ? FJ_COMPAT : 0, FJ_QUOTES_KEEP, compat, 0, NULL) < 0) {
        Py_DECREF(name);
        return -1;
    }
    Py_XSETREF(self->config, name);
    return 0;
}

static int OpenCC_init(ConverterObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"config", "conversion", "dict", "compat", NULL};
    const char *config = NULL, *conversion = NULL;
    PyObject *dictarg = Py_None;
    int compat = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|z$zOp:OpenCC", kwlist, &config, &conversion,
                                     &dictarg, &compat))
        return -1;
    if (config && conversion) {
        PyErr_SetString(PyExc_TypeError, "OpenCC() takes config or conversion, not both");
        return -1;
    }
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return -1;
    return opencc_setup(self, d, config ? config : conversion ? conversion : "t2s", compat);
}

PyDoc_STRVAR(OpenCC_set_conversion_doc,
"set_conversion(conversion, /) -> None\n\n"
"Switches to another profile ('s2tw' or 's2tw.json'), on the same\n"
"dictionary and in the same mode (as opencc-python-reimplemented's OpenCC\n"
"does).");

static PyObject *OpenCC_set_conversion(ConverterObject *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "set_conversion() argument must be str, not %.200s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t len;
    const char *conversion = PyUnicode_AsUTF8AndSize(arg, &len);
    if (!conversion)
        return NULL;
    if (strlen(conversion) != (size_t)len) {
        PyErr_SetString(PyExc_ValueError, "embedded null character");
        return NULL;
    }
    dict_entry *d = self->dict;
    if (!d && !(d = open_dict(Py_None)))
        return NULL;
    int compat = self->profile ? (self->flags & FJ_COMPAT) != 0 : 1; /* the mode it has */
    if (opencc_setup(self, d, conversion, compat) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *OpenCC_get_config(ConverterObject *self, void *Py_UNUSED(closure))
{
    if (!self->config)
        Py_RETURN_NONE;
    Py_INCREF(self->config);
    return self->config;
}

PyDoc_STRVAR(OpenCC_convert_doc,
"convert(text, /) -> str\n\n"
"Converts `text`, a str or UTF-8 bytes, and returns a str, as the `opencc`\n"
"package does (bytes that are not UTF-8: UnicodeDecodeError).");

static PyObject *OpenCC_convert(ConverterObject *self, PyObject *text)
{
    if (text_or_bytes_arg(text, "convert") < 0)
        return NULL;
    if (!PyBytes_Check(text))
        return converter_run(self, text);
    PyObject *s = PyUnicode_FromEncodedObject(text, "utf-8", "strict");
    if (!s)
        return NULL;
    PyObject *r = converter_run(self, s);
    Py_DECREF(s);
    return r;
}

static PyMethodDef OpenCC_methods[] = {
    {"convert", (PyCFunction)OpenCC_convert, METH_O, OpenCC_convert_doc},
    {"set_conversion", (PyCFunction)OpenCC_set_conversion, METH_O, OpenCC_set_conversion_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef OpenCC_getset[] = {
    {"config", (getter)OpenCC_get_config, NULL, "The config, as the opencc package keeps it ('s2t.json').", NULL},
    {"conversion", (getter)Converter_get_profile, NULL, "The profile ('s2t').", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(OpenCC_doc,
"OpenCC(config='t2s', *, dict=None, compat=True)\n\n"
"A drop-in for the `opencc` package's class: OpenCC('s2t').convert(text).\n"
"config is a profile name or an OpenCC config file name ('s2tw.json', a\n"
"leading directory is ignored); the default is 't2s', as in `opencc`.\n"
"Converts in compatibility mode (FJ_COMPAT): the output is byte for byte\n"
"OpenCC 1.4.2's, and quotation marks are kept; compat=False converts in\n"
"the default mode, as Converter(config). convert() takes str or UTF-8\n"
"bytes and returns str, as `opencc` does. Also has .config\n"
"('s2t.json'), .conversion ('s2t') and set_conversion(name), and is a\n"
"fanjian.Converter (profile, close(), context manager).");

static PyTypeObject OpenCCType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fanjian.OpenCC",
    .tp_basicsize = sizeof(ConverterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = OpenCC_doc,
    .tp_methods = OpenCC_methods,
    .tp_getset = OpenCC_getset,
    .tp_init = (initproc)OpenCC_init,
    .tp_new = PyType_GenericNew,
};

/* ---- module functions -------------------------------------------------------------------- */

PyDoc_STRVAR(mod_convert_doc,
"convert(text, profile='s2t', *, compat=False, quotes=None, punct=False, dict=None,\n"
"        repair='auto', to=None) -> str or bytes\n\n"
"Converts `text` (a str, or UTF-8 bytes to bytes) with `profile`, or with\n"
"to='tw' (twp, hk, hkp, hant, cn, hans) any input to that standard; the\n"
"options are Converter's.\n"
"The GIL is released while converting.");

static PyObject *mod_convert(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"text",   "profile", "compat",  "quotes", "punct", "dict",
                             "repair", "to",      "phrases", "protect", "markup", NULL};
    PyObject *text, *quotes = Py_None, *dictarg = Py_None, *phrases = Py_None, *protect = Py_None;
    const char *profile = NULL, *repair = NULL, *to = NULL;
    int compat = 0, punct = 0, quotes_given, markup = 0;
    unsigned flags;
    fj_quotes q = FJ_QUOTES_KEEP;
    char target[32];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|z$pOpOzzOOp:convert", kwlist, &text, &profile,
                                     &compat, &quotes, &punct, &dictarg, &repair, &to, &phrases,
                                     &protect, &markup))
        return NULL;
    if (!(profile = profile_or_target(profile, to, target, sizeof target)))
        return NULL;
    if (text_or_bytes_arg(text, "convert") < 0 || quotes_arg(quotes, &q, &quotes_given) < 0 ||
        mode_flags(compat, repair, &flags) < 0)
        return NULL;
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return NULL;
    user_entries user;
    if (user_entries_read(phrases, protect, markup, &user) < 0)
        return NULL;
    const fj_converter *c = NULL;
    fj_error err;
    fj_status st;
    memset(&err, 0, sizeof err);
    if (user_entries_any(&user)) {
        /* The caller's own entries: a converter for this call alone. */
        fj_converter *own = NULL;
        Py_BEGIN_ALLOW_THREADS
        st = open_named_user(d->dict, profile, flags, quotes_given ? (int)q : FJ_QUOTES_PROFILE,
                             punct ? PUNCT_ALL : 0, &user, &own, &err);
        Py_END_ALLOW_THREADS
        user_entries_free(&user);
        if (st != FJ_OK) {
            raise_fj(st, &err, 0);
            return NULL;
        }
        PyObject *r = convert_any(own, text);
        fj_converter_close(own);
        return r;
    }
    user_entries_free(&user);
    Py_BEGIN_ALLOW_THREADS
    st = conv_get(d, profile, flags, quotes_given ? (int)q : FJ_QUOTES_PROFILE,
                  punct ? PUNCT_ALL : 0, &c, &err);
    Py_END_ALLOW_THREADS
    if (st != FJ_OK) {
        raise_fj(st, &err, 0);
        return NULL;
    }
    return convert_any(c, text);
}

static PyTypeObject DetectionType, SpanType;
static int structseq_ready;

static PyStructSequence_Field detection_fields[] = {
    {"script", "'none', 'simplified', 'traditional', 'both', 'mixed' or 'binary'"},
    {"confidence", "in [0, 1]"},
    {"han", "the number of Han characters"},
    {"simplified", "of them, found only in Simplified text"},
    {"traditional", "of them, found only in Traditional text"},
    {"spans", "list of Span: the stretches in the minority script"},
    {"damage", "for Traditional text, how much looks converted character by character "
               "(0..1), or None when the text shows too little"},
    {NULL, NULL},
};
static PyStructSequence_Desc detection_desc = {
    "fanjian.Detection", "The result of fanjian.detect().", detection_fields, 7};

static PyStructSequence_Field span_fields[] = {
    {"start", "index of its first character in the str"},
    {"end", "index after its last character: text[start:end] is the span"},
    {"script", "'simplified' or 'traditional'"},
    {NULL, NULL},
};
static PyStructSequence_Desc span_desc = {
    "fanjian.Span", "A stretch of text in the minority script (see fanjian.detect).",
    span_fields, 3};

/* Character index of UTF-8 byte offset `target`: lead bytes before it,
 * counted on from the cursor (*byte, *chars) when it is not past `target`. */
static Py_ssize_t char_index(const char *s, size_t target, size_t *byte, Py_ssize_t *chars)
{
    if (target < *byte) {
        *byte = 0;
        *chars = 0;
    }
    for (size_t i = *byte; i < target; i++)
        *chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    *byte = target;
    return *chars;
}

PyDoc_STRVAR(mod_detect_doc,
"detect(text, *, dict=None) -> Detection\n\n"
"What script `text` is written in: a Detection with script ('none',\n"
"'simplified', 'traditional', 'both', 'mixed', or 'binary' for a str that\n"
"is not text: a NUL, or mostly control characters), confidence (0..1), han,\n"
"simplified and traditional (character counts) and spans, the stretches in\n"
"the minority script as Span(start, end, script), with str indices\n"
"(text[start:end]). See fj_detect in include/fanjian.h.");

static PyObject *mod_detect(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"text", "dict", NULL};
    PyObject *text, *dictarg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$O:detect", kwlist, &text, &dictarg))
        return NULL;
    if (text_arg(text, "detect") < 0)
        return NULL;
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return NULL;
    utf8_text t;
    if (utf8_get(text, &t) < 0)
        return NULL;
    fj_script_span small[16];
    fj_script_span *spans = small;
    size_t cap = sizeof small / sizeof small[0];
    fj_detection r;
    fj_status st;
    PyObject *result = NULL, *list = NULL;
    for (;;) {
        memset(&r, 0, sizeof r);
        r.size = sizeof r;
        r.spans = spans;
        r.span_capacity = cap;
        Py_BEGIN_ALLOW_THREADS
        st = fj_detect(d->dict, t.data, (size_t)t.len, &r);
        Py_END_ALLOW_THREADS
        if (st != FJ_OK || r.span_count <= cap)
            break;
        cap = r.span_count;
        if (spans != small)
            PyMem_Free(spans);
        spans = PyMem_New(fj_script_span, cap);
        if (!spans) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (st != FJ_OK) {
        raise_fj(st, NULL, 0);
        goto done;
    }
    list = PyList_New((Py_ssize_t)r.span_count);
    if (!list)
        goto done;
    size_t byte = 0;
    Py_ssize_t chars = 0;
    for (size_t i = 0; i < r.span_count; i++) {
        size_t end = spans[i].offset + spans[i].length;
        if (end > (size_t)t.len || spans[i].offset > end) {
            PyErr_SetString(PyExc_RuntimeError, "fj_detect returned a span outside the text");
            goto done;
        }
        PyObject *span = PyStructSequence_New(&SpanType);
        if (!span)
            goto done;
        PyList_SET_ITEM(list, (Py_ssize_t)i, span);
        Py_ssize_t a = char_index(t.data, spans[i].offset, &byte, &chars);
        Py_ssize_t b = char_index(t.data, end, &byte, &chars);
        PyObject *v0 = PyLong_FromSsize_t(a), *v1 = PyLong_FromSsize_t(b);
        PyObject *v2 = PyUnicode_FromString(fj_script_name(spans[i].script));
        if (v0)
            PyStructSequence_SET_ITEM(span, 0, v0);
        if (v1)
            PyStructSequence_SET_ITEM(span, 1, v1);
        if (v2)
            PyStructSequence_SET_ITEM(span, 2, v2);
        if (!v0 || !v1 || !v2)
            goto done;
    }
    result = PyStructSequence_New(&DetectionType);
    if (!result)
        goto done;
    PyObject *vals[5] = {
        PyUnicode_FromString(fj_script_name(r.script)), PyFloat_FromDouble(r.confidence),
        PyLong_FromSize_t(r.han), PyLong_FromSize_t(r.simplified),
        PyLong_FromSize_t(r.traditional)};
    int failed = 0;
    for (int i = 0; i < 5; i++) {
        if (vals[i])
            PyStructSequence_SET_ITEM(result, i, vals[i]);
        else
            failed = 1;
    }
    PyStructSequence_SET_ITEM(result, 5, list);
    list = NULL;
    PyObject *damage = r.damage < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(r.damage);
    if (damage)
        PyStructSequence_SET_ITEM(result, 6, damage);
    else
        failed = 1;
    if (failed)
        Py_CLEAR(result);
done:
    Py_XDECREF(list);
    if (spans != small)
        PyMem_Free(spans);
    Py_DECREF(t.keep);
    return result;
}

/* ---- clean ------------------------------------------------------------------------ */

/* The default rules' fj_clean for `d`, opened once and kept like the
 * dictionary. Runs without the GIL. */
static fj_status clean_get(dict_entry *d, const fj_clean **out, fj_error *err)
{
    fj_status st = FJ_OK;
    pthread_mutex_lock(&dict_lock);
    if (!d->clean)
        st = fj_clean_open(d->dict, NULL, 0, 0, &d->clean, err);
    *out = d->clean;
    pthread_mutex_unlock(&dict_lock);
    return st;
}

/* Cleans in[0..n) into *g. Runs without the GIL. */
static fj_status run_clean(const fj_clean *c, const char *in, size_t n, growbuf *g)
{
    fj_clean_stream *cs = NULL;
    fj_status st = fj_clean_stream_new(c, growbuf_write, g, NULL, NULL, &cs);
    if (st == FJ_OK)
        st = fj_clean_stream_feed(cs, in, n);
    if (st == FJ_OK)
        st = fj_clean_stream_finish(cs);
    fj_clean_stream_free(cs);
    if (st == FJ_ERR_CALLBACK && g->nomem)
        st = FJ_ERR_NOMEM;
    return st;
}

PyDoc_STRVAR(mod_clean_doc,
"clean(text, rules=None, *, dict=None) -> str\n\n"
"`text` without the site boilerplate of scraped chapters: a line that is\n"
"wholly a notice goes with its line ending; of any other line only the\n"
"notice goes (天才一秒记住本站地址：… inside a paragraph), the rest stays as\n"
"it was. `rules`: a rules text in the format of data/clean-rules.txt, added\n"
"to the default rules (ValueError names its line when it is malformed).\n"
"See fj_clean_find in include/fanjian.h.");

static PyObject *mod_clean(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"text", "rules", "dict", NULL};
    PyObject *text, *rules = Py_None, *dictarg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O$O:clean", kwlist, &text, &rules, &dictarg))
        return NULL;
    if (text_arg(text, "clean") < 0)
        return NULL;
    if (rules != Py_None && !PyUnicode_Check(rules)) {
        PyErr_Format(PyExc_TypeError, "clean() rules must be str or None, not %.200s",
                     Py_TYPE(rules)->tp_name);
        return NULL;
    }
    fj_clean_rules extra = {"rules", NULL, 0};
    if (rules != Py_None) {
        Py_ssize_t n;
        extra.text = PyUnicode_AsUTF8AndSize(rules, &n);
        if (!extra.text)
            return NULL;
        extra.len = (size_t)n;
    }
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return NULL;
    utf8_text t;
    if (utf8_get(text, &t) < 0)
        return NULL;
    fj_error err;
    memset(&err, 0, sizeof err);
    growbuf g = {NULL, 0, 0, 0};
    fj_clean *own = NULL;
    const fj_clean *c = NULL;
    fj_status st;
    Py_BEGIN_ALLOW_THREADS
    if (rules == Py_None) {
        st = clean_get(d, &c, &err);
    } else {
        st = fj_clean_open(d->dict, &extra, 1, 0, &own, &err);
        c = own;
    }
    if (st == FJ_OK)
        st = run_clean(c, t.data, (size_t)t.len, &g);
    fj_clean_close(own);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (st == FJ_ERR_RULES) {
        PyErr_SetString(PyExc_ValueError, err.message);
    } else if (st != FJ_OK) {
        raise_fj(st, &err, 0);
    } else if (g.len > (size_t)PY_SSIZE_T_MAX) {
        PyErr_NoMemory();
    } else {
        result = PyUnicode_DecodeUTF8(g.len ? g.data : "", (Py_ssize_t)g.len,
                                      t.surrogates ? "surrogatepass" : NULL);
    }
    free(g.data);
    Py_DECREF(t.keep);
    return result;
}

/* ---- files, through libfanjian-formats ------------------------------------------------ */

/* What convert_file() and convert_bytes() were asked, as the CLI's options. */
typedef struct file_args {
    fjf_settings s;
    int format;        /* fjf_format, or -1: by the file's extension (convert_file) */
    char from_buf[32], to_buf[32];
} file_args;

/* An encoding argument (None, or a name iconv knows) as the formats'
 * canonical name; 0, or -1 with ValueError. */
static int encoding_arg(const char *name, const char *what, char buf[32], const char **out)
{
    *out = NULL;
    if (!name)
        return 0;
    if (!(*out = fjf_encoding_canonical(name, buf))) {
        PyErr_Format(PyExc_ValueError, "%s: unknown encoding '%s'", what, name);
        return -1;
    }
    return 0;
}

/* Parses what both calls take after their first arguments into *a; 0, or -1
 * with an exception. The converter and clean-up rules are the module's
 * cached ones: shared, never freed. */
static int file_args_parse(file_args *a, const char *profile, const char *to, int compat,
                           const char *repair, PyObject *quotes, int punct, int clean,
                           const char *from_encoding, const char *to_encoding, int lossy,
                           const char *format, PyObject *dictarg)
{
    memset(a, 0, sizeof *a);
    a->format = -1;
    char target[32];
    int quotes_given;
    unsigned flags;
    fj_quotes q = FJ_QUOTES_KEEP;
    if (!(profile = profile_or_target(profile, to, target, sizeof target)))
        return -1;
    if (quotes_arg(quotes, &q, &quotes_given) < 0 || mode_flags(compat, repair, &flags) < 0)
        return -1;
    if (format && (a->format = fjf_format_from_name(format)) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "format must be 'text', 'html', 'xhtml', 'markdown', 'srt', 'ass', 'vtt' "
                     "or 'epub', not '%s'", format);
        return -1;
    }
    if (encoding_arg(from_encoding, "from_encoding", a->from_buf, &a->s.from_encoding) < 0 ||
        encoding_arg(to_encoding, "to_encoding", a->to_buf, &a->s.to_encoding) < 0)
        return -1;
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return -1;
    const fj_converter *c = NULL;
    const fj_clean *cl = NULL;
    fj_error err;
    fj_status st;
    memset(&err, 0, sizeof err);
    Py_BEGIN_ALLOW_THREADS
    st = conv_get(d, profile, flags, quotes_given ? (int)q : FJ_QUOTES_PROFILE,
                  punct ? PUNCT_ALL : 0, &c, &err);
    if (st == FJ_OK && clean)
        st = clean_get(d, &cl, &err);
    Py_END_ALLOW_THREADS
    if (st != FJ_OK) {
        raise_fj(st, &err, 0);
        return -1;
    }
    /* The converter does the typography, as the command line's; markup's
     * language tag is the profile's. */
    a->s.conv = c;
    a->s.clean = cl;
    a->s.quotes = FJ_QUOTES_KEEP;
    a->s.punct_flags = 0;
    a->s.recode_flags = lossy ? FJF_LOSSY : 0;
    fj_profile_info info;
    info.size = sizeof info;
    a->s.lang = fj_profile_info_get(NULL, fj_converter_profile(c), &info) == FJ_OK ? info.lang
                                                                                 : NULL;
    return 0;
}

/* Raises what an fjf_error says: OSError for reading and writing,
 * MemoryError, ValueError for what the input or its encoding is. */
static void raise_fjf(const fjf_error *err, int write_errno)
{
    char msg[1400];
    if (err->kind == FJF_ERR_READ)
        snprintf(msg, sizeof msg, "cannot read %s: %s", err->subject ? err->subject : "input",
                 err->message);
    else if (err->subject)
        snprintf(msg, sizeof msg, "%s: %s", err->subject, err->message);
    else
        snprintf(msg, sizeof msg, "%s", err->message);
    switch (err->kind) {
    case FJF_ERR_NOMEM:
        PyErr_NoMemory();
        break;
    case FJF_ERR_WRITE:
        errno = write_errno;
        PyErr_SetFromErrno(PyExc_OSError);
        break;
    case FJF_ERR_READ:
        PyErr_SetString(PyExc_OSError, msg);
        break;
    default:
        PyErr_SetString(PyExc_ValueError, msg);
    }
}

/* A writer to a file descriptor, keeping errno of its failure. */
typedef struct fd_writer {
    int fd;
    int err;
} fd_writer;

static int fd_write(void *ctx, const char *data, size_t len)
{
    fd_writer *w = ctx;
    while (len) {
        ssize_t n = write(w->fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            w->err = errno;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Converts one input, the whole file descriptor `in_fd` or data[0..len)
 * (in_fd -1), as `format`, to `write` (an EPUB to out_fd). Runs without
 * the GIL; 0, or -1 with err. */
static int run_file(const file_args *a, fjf_format format, int in_fd, const char *data, size_t len,
                    const char *name, const char *output, fj_write_fn write, void *write_ctx,
                    int out_fd, fjf_error *err)
{
    if (format == FJF_TEXT) {
        fjf_text *t = NULL;
        int rc = fjf_text_begin(&a->s, output, write, write_ctx, &t, err);
        if (rc == 0)
            rc = in_fd >= 0 ? fjf_text_input(t, in_fd, name, NULL, err)
                            : fjf_text_input_memory(t, data, len, name, NULL, err);
        if (rc == 0)
            rc = fjf_text_end(t, NULL, err);
        fjf_text_free(t);
        return rc;
    }
    char *own = NULL;
    if (in_fd >= 0) {
        own = fjf_read_all(in_fd, &len, fjf_document_limit(&a->s, format));
        if (!own) {
            fjf_error_set(err, FJF_NO_OFFSET, "%s", errno == E2BIG ? "too large" : strerror(errno));
            err->kind = errno == ENOMEM ? FJF_ERR_NOMEM : FJF_ERR_READ;
            err->subject = name;
            return -1;
        }
        data = own;
    }
    int rc = fjf_document_convert(&a->s, format, data, len, name, write, write_ctx, out_fd, NULL,
                                  err);
    free(own);
    return rc;
}

PyDoc_STRVAR(mod_convert_file_doc,
"convert_file(src, dst, profile='s2t', *, format=None, from_encoding=None,\n"
"             to_encoding=None, lossy=False, clean=False, compat=False, quotes=None,\n"
"             punct=False, repair='auto', to=None, dict=None) -> None\n\n"
"Converts the file `src` into `dst`, as `fanjian -c PROFILE -i SRC -o DST`\n"
"does, byte for byte: text in any encoding (detected unless given), HTML,\n"
"XHTML, Markdown, SRT, ASS, WebVTT and EPUB (format: by the extension of\n"
"src unless given). `dst` appears whole or not at all: it is written\n"
"beside itself and renamed into place, keeping its permissions when it\n"
"exists. OSError for files, ValueError for input that is not what it\n"
"should be (naming the byte). The GIL is released while converting.");

static PyObject *mod_convert_file(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"src", "dst", "profile", "format", "from_encoding", "to_encoding",
                             "lossy", "clean", "compat", "quotes", "punct", "repair", "to",
                             "dict", NULL};
    PyObject *src_obj = NULL, *dst_obj = NULL, *quotes = Py_None, *dictarg = Py_None;
    const char *profile = NULL, *format = NULL, *from = NULL, *to_enc = NULL, *repair = NULL,
               *to = NULL;
    int lossy = 0, clean = 0, compat = 0, punct = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&O&|z$zzzpppOpzzO:convert_file", kwlist,
                                     PyUnicode_FSConverter, &src_obj, PyUnicode_FSConverter,
                                     &dst_obj, &profile, &format, &from, &to_enc, &lossy, &clean,
                                     &compat, &quotes, &punct, &repair, &to, &dictarg)) {
        Py_XDECREF(src_obj);
        return NULL;
    }
    PyObject *result = NULL;
    file_args a;
    if (file_args_parse(&a, profile, to, compat, repair, quotes, punct, clean, from, to_enc, lossy,
                        format, dictarg) < 0)
        goto done;
    const char *src = PyBytes_AS_STRING(src_obj), *dst = PyBytes_AS_STRING(dst_obj);
    fjf_format fmt = a.format >= 0 ? (fjf_format)a.format : fjf_format_from_path(src);
    /* The temporary: beside dst, so that rename() replaces it in one step. */
    size_t dlen = strlen(dst);
    char *tmp = malloc(dlen + 32);
    if (!tmp) {
        PyErr_NoMemory();
        goto done;
    }
    const char *slash = strrchr(dst, '/');
    size_t dir_len = slash ? (size_t)(slash - dst) + 1 : 0;
    fjf_error err;
    memset(&err, 0, sizeof err);
    int in_fd = -1, out_fd = -1, sys_err = 0, rc = -1;
    fd_writer w = {-1, 0};
    Py_BEGIN_ALLOW_THREADS
    in_fd = open(src, O_RDONLY | O_CLOEXEC);
    if (in_fd < 0) {
        sys_err = errno;
    } else {
        for (unsigned attempt = 0; attempt < 100 && out_fd < 0; attempt++) {
            snprintf(tmp, dlen + 32, "%.*s.fanjian-%06lx", (int)dir_len, dst,
                     ((unsigned long)getpid() * 2654435761u + attempt * 40503u +
                      (unsigned long)(uintptr_t)tmp) & 0xFFFFFF);
            out_fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (out_fd < 0 && errno != EEXIST)
                break;
        }
        if (out_fd < 0) {
            sys_err = errno;
        } else {
            struct stat sb;
            if (stat(dst, &sb) == 0 && S_ISREG(sb.st_mode))
                (void)fchmod(out_fd, sb.st_mode & 07777);
            w.fd = out_fd;
            rc = run_file(&a, fmt, in_fd, NULL, 0, src, dst, fd_write, &w, out_fd, &err);
            if (close(out_fd) != 0 && rc == 0) {
                sys_err = errno;
                rc = -1;
            } else if (rc == 0 && rename(tmp, dst) != 0) {
                sys_err = errno;
                rc = -1;
            }
            if (rc != 0)
                unlink(tmp);
        }
        close(in_fd);
    }
    Py_END_ALLOW_THREADS
    if (rc == 0) {
        result = Py_None;
        Py_INCREF(result);
    } else if (sys_err) {
        errno = sys_err;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, in_fd < 0 ? src_obj : dst_obj);
    } else {
        raise_fjf(&err, w.err);
    }
    free(tmp);
done:
    Py_DECREF(src_obj);
    Py_DECREF(dst_obj);
    return result;
}

PyDoc_STRVAR(mod_convert_bytes_doc,
"convert_bytes(data, profile='s2t', *, encoding=None, format='text', to_encoding=None,\n"
"              lossy=False, clean=False, compat=False, quotes=None, punct=False,\n"
"              repair='auto', to=None, dict=None) -> bytes\n\n"
"Converts the bytes of a file, as convert_file() would: `encoding` is the\n"
"input's (None: detected), `format` one of 'text', 'html', 'xhtml',\n"
"'markdown', 'srt', 'ass', 'vtt', 'epub'. The result is in to_encoding\n"
"(None: UTF-8; for markup, the declared charset follows it).");

static PyObject *mod_convert_bytes(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"data", "profile", "encoding", "format", "to_encoding", "lossy",
                             "clean", "compat", "quotes", "punct", "repair", "to", "dict", NULL};
    Py_buffer in;
    PyObject *quotes = Py_None, *dictarg = Py_None;
    const char *profile = NULL, *format = "text", *from = NULL, *to_enc = NULL, *repair = NULL,
               *to = NULL;
    int lossy = 0, clean = 0, compat = 0, punct = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|z$zzzpppOpzzO:convert_bytes", kwlist, &in,
                                     &profile, &from, &format, &to_enc, &lossy, &clean, &compat,
                                     &quotes, &punct, &repair, &to, &dictarg))
        return NULL;
    PyObject *result = NULL;
    file_args a;
    if (file_args_parse(&a, profile, to, compat, repair, quotes, punct, clean, from, to_enc, lossy,
                        format ? format : "text", dictarg) < 0) {
        PyBuffer_Release(&in);
        return NULL;
    }
    fjf_format fmt = (fjf_format)a.format;
    fjf_error err;
    memset(&err, 0, sizeof err);
    growbuf g = {NULL, 0, 0, 0};
    int rc, sys_err = 0;
    Py_BEGIN_ALLOW_THREADS
    if (fmt == FJF_EPUB) {
        /* An EPUB is written to a file (libzip): an unnamed temporary one. */
        FILE *f = tmpfile();
        rc = -1;
        if (!f) {
            sys_err = errno;
        } else {
            rc = run_file(&a, fmt, -1, in.buf, (size_t)in.len, "data", "output", growbuf_write, &g,
                          fileno(f), &err);
            if (rc == 0) {
                size_t len = 0;
                char *all = lseek(fileno(f), 0, SEEK_SET) == 0 ? fjf_read_all(fileno(f), &len, 0)
                                                                : NULL;
                if (!all) {
                    sys_err = errno ? errno : EIO;
                    rc = -1;
                } else {
                    free(g.data);
                    g.data = all;
                    g.len = g.cap = len;
                }
            }
            fclose(f);
        }
    } else {
        rc = run_file(&a, fmt, -1, in.buf, (size_t)in.len, "data", "output", growbuf_write, &g, -1,
                      &err);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (rc == 0)
        result = PyBytes_FromStringAndSize(g.len ? g.data : "", (Py_ssize_t)g.len);
    else if (sys_err)
        PyErr_SetFromErrno(PyExc_OSError);
    else if (g.nomem)
        PyErr_NoMemory();
    else
        raise_fjf(&err, 0);
    free(g.data);
    return result;
}

PyDoc_STRVAR(mod_profiles_doc,
"profiles(*, dict=None) -> list of str\n\n"
"The profile names the dictionary offers ('s2t', 't2s', 's2tw', ...).");

static PyObject *mod_profiles(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dict", NULL};
    PyObject *dictarg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$O:profiles", kwlist, &dictarg))
        return NULL;
    dict_entry *d = open_dict(dictarg);
    if (!d)
        return NULL;
    size_t n = fj_dict_profile_count(d->dict);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_FromString(fj_dict_profile_name(d->dict, i));
        if (!s)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static PyMethodDef module_methods[] = {
    {"convert", (PyCFunction)(void (*)(void))mod_convert, METH_VARARGS | METH_KEYWORDS,
     mod_convert_doc},
    {"detect", (PyCFunction)(void (*)(void))mod_detect, METH_VARARGS | METH_KEYWORDS,
     mod_detect_doc},
    {"profiles", (PyCFunction)(void (*)(void))mod_profiles, METH_VARARGS | METH_KEYWORDS,
     mod_profiles_doc},
    {"clean", (PyCFunction)(void (*)(void))mod_clean, METH_VARARGS | METH_KEYWORDS, mod_clean_doc},
    {"convert_file", (PyCFunction)(void (*)(void))mod_convert_file, METH_VARARGS | METH_KEYWORDS,
     mod_convert_file_doc},
    {"convert_bytes", (PyCFunction)(void (*)(void))mod_convert_bytes, METH_VARARGS | METH_KEYWORDS,
     mod_convert_bytes_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc,
"Chinese script conversion: Simplified, Traditional, Taiwan, Hong Kong and\n"
"Japanese kanji forms (the fanjian C library).\n\n"
"    import fanjian\n"
"    fanjian.convert('头发干了', 's2t')          # '頭髮乾了'\n"
"    with fanjian.Converter('s2twp') as c:\n"
"        c.convert('鼠标和打印机')                # '滑鼠和印表機'\n"
"    fanjian.detect('這是繁體').script           # 'traditional'\n"
"    fanjian.OpenCC('s2t').convert('头发干了')   # OpenCC 1.4.2's output: '頭髮幹了'\n\n"
"Text is str; a str with lone surrogates is accepted and they are kept.\n"
"Conversion releases the GIL. The dictionary: dict=, else $FANJIAN_DICT,\n"
"else fanjian.fjd beside this module, else DEFAULT_DICT; each file is\n"
"opened once per process and shared.");

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "fanjian", module_doc, -1, module_methods, NULL, NULL, NULL, NULL};

PyDoc_STRVAR(opencc_doc,
"fanjian.opencc: the `opencc` package's interface on fanjian.\n\n"
"    import fanjian.opencc as opencc\n"
"    opencc.OpenCC('s2t.json').convert('汉字')\n\n"
"OpenCC is fanjian.OpenCC (OpenCC 1.4.2-identical output); CONFIGS lists\n"
"the config names ('s2t.json', ...).");

/* fanjian.opencc, registered in sys.modules as os.path is, so that
 * `import fanjian.opencc as opencc` works. */
static PyObject *make_opencc_module(void)
{
    PyObject *m = PyModule_New("fanjian.opencc");
    if (!m)
        return NULL;
    /* The library's profiles, which every fanjian dictionary offers. */
    size_t n = 0;
    while (fj_profile_name(n))
        n++;
    PyObject *configs = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; configs && i < n; i++) {
        PyObject *s = PyUnicode_FromFormat("%s.json", fj_profile_name(i));
        if (!s)
            Py_CLEAR(configs);
        else
            PyList_SET_ITEM(configs, (Py_ssize_t)i, s);
    }
    PyObject *doc = PyUnicode_FromString(opencc_doc);
    PyObject *all = Py_BuildValue("[ss]", "OpenCC", "CONFIGS");
    if (!configs || !doc || !all || PyModule_AddObjectRef(m, "CONFIGS", configs) < 0 ||
        PyModule_AddObjectRef(m, "OpenCC", (PyObject *)&OpenCCType) < 0 ||
        PyModule_AddObjectRef(m, "__doc__", doc) < 0 ||
        PyModule_AddObjectRef(m, "__all__", all) < 0)
        Py_CLEAR(m);
    Py_XDECREF(configs);
    Py_XDECREF(doc);
    Py_XDECREF(all);
    return m;
}

PyMODINIT_FUNC PyInit_fanjian(void)
{
    if (PyType_Ready(&ConverterType) < 0)
        return NULL;
    OpenCCType.tp_base = &ConverterType;
    if (PyType_Ready(&OpenCCType) < 0 || PyType_Ready(&StreamType) < 0)
        return NULL;
    if (!structseq_ready) {
        if (PyStructSequence_InitType2(&DetectionType, &detection_desc) < 0 ||
            PyStructSequence_InitType2(&SpanType, &span_desc) < 0)
            return NULL;
        structseq_ready = 1;
    }
    if (!DictionaryError) { /* first time only */
        if (pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "pthread_atfork failed");
            return NULL;
        }
        DictionaryError = PyErr_NewExceptionWithDoc(
            "fanjian.DictionaryError",
            "The dictionary file is damaged or not a fanjian dictionary of this version.",
            PyExc_OSError, NULL);
        if (!DictionaryError)
            return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    PyObject *sub = make_opencc_module();
    PyObject *modules = PyImport_GetModuleDict();
    if (!sub || PyModule_AddObjectRef(m, "Converter", (PyObject *)&ConverterType) < 0 ||
        PyModule_AddObjectRef(m, "Stream", (PyObject *)&StreamType) < 0 ||
        PyModule_AddObjectRef(m, "OpenCC", (PyObject *)&OpenCCType) < 0 ||
        PyModule_AddObjectRef(m, "Detection", (PyObject *)&DetectionType) < 0 ||
        PyModule_AddObjectRef(m, "Span", (PyObject *)&SpanType) < 0 ||
        PyModule_AddObjectRef(m, "DictionaryError", DictionaryError) < 0 ||
        PyModule_AddStringConstant(m, "__version__", fj_version()) < 0 ||
        PyModule_AddStringConstant(m, "DEFAULT_DICT", fj_dict_default_path()) < 0 ||
        PyModule_AddObjectRef(m, "opencc", sub) < 0 ||
        PyDict_SetItemString(modules, "fanjian.opencc", sub) < 0) {
        Py_XDECREF(sub);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(sub);
    Py_XSETREF(the_module, Py_NewRef(m));
    return m;
}
