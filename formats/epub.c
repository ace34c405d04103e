/* fanjian formats: EPUB books (OCF ZIP containers).
 *
 * The whole archive is checked before anything is written: entry count,
 * names, sizes, compression, the mimetype, container.xml, the package
 * documents. Then a new archive is built in memory: mimetype first and
 * stored, then every other entry in its original order. The package
 * document, the XHTML content documents (the navigation document among
 * them) and the NCX are rewritten (xml.c); everything else is copied by
 * libzip as it is stored, never decompressed, so its bytes cannot change.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <expat.h>

#include "dynload.h"
#include "fanjian-formats.h"

/* libzip, loaded on first use (dynlib.h); fjf_epub_convert checks it loads. */
#define ZIP(f) (fjf_zip_api_load(NULL, 0)->f)

#define MIMETYPE "application/epub+zip"
#define MT_XHTML "application/xhtml+xml"
#define MT_NCX "application/x-dtbncx+xml"
#define MT_OPF "application/oebps-package+xml"

enum { K_COPY = -1 };

typedef struct entry {
    const char *name; /* as stored (owned by the input archive) */
    zip_stat_t st;
    int kind;      /* K_COPY or an fjf_xml_kind */
    int encrypted; /* listed in META-INF/encryption.xml: never parsed */
    int nav;       /* the navigation document (a TOC is not a site notice) */
    fjf_buf data;  /* its bytes, once read */
    int loaded;
} entry;

/* An entry by its stored name, for lookups by exact bytes. */
typedef struct name_ref {
    const char *name;
    zip_uint64_t index;
} name_ref;

typedef struct book {
    zip_t *za;
    entry *e;
    name_ref *by_name; /* the entries sorted by name (strcmp) */
    zip_uint64_t n;
    unsigned long long max_total, max_entry, read_total;
    fjf_error *err;
} book;

/* ---- names and paths --------------------------------------------------------- */

/* A name fit for an error message: control bytes shown as '?'. */
static void printable(const char *s, char *buf, size_t size)
{
    size_t i = 0;
    for (; s[i] && i + 1 < size; i++)
        buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    buf[i] = 0;
}

/* Why a stored name must not be written anywhere, or NULL. */
static const char *unsafe_name(const char *name)
{
    if (!*name)
        return "an empty name";
    if (name[0] == '/')
        return "an absolute path";
    if (strchr(name, '\\'))
        return "a backslash";
    if (((name[0] | 0x20) >= 'a' && (name[0] | 0x20) <= 'z') && name[1] == ':')
        return "a drive letter";
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "a \"..\" component";
        p += n;
        if (*p == '/')
            p++;
    }
    return NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The entry name an href refers to: href (percent-encoded, relative to the
 * directory base[0..base_len)) decoded, with "." and ".." resolved. NULL
 * when it names no entry (a URL with a scheme, a NUL, above the root), or
 * with *oom set when memory runs out. */
static char *resolve(const char *base, size_t base_len, const char *href, int *oom)
{
    size_t n = strcspn(href, "#?");
    size_t k = strcspn(href, ":/");
    if (k < n && href[k] == ':')
        return NULL; /* http:, data:, ... */
    char *joined = malloc(base_len + n + 1);
    if (!joined) {
        *oom = 1;
        return NULL;
    }
    size_t j = 0;
    if (href[0] != '/') {
        memcpy(joined, base, base_len);
        j = base_len;
    }
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (href[i] == '%' && i + 2 < n && (h = hexval(href[i + 1])) >= 0 &&
            (l = hexval(href[i + 2])) >= 0) {
            char c = (char)(h * 16 + l);
            if (c == 0) {
                free(joined);
                return NULL;
            }
            joined[j++] = c;
            i += 2;
        } else {
            joined[j++] = href[i];
        }
    }
    joined[j] = 0;

    /* Segments: "" and "." vanish, ".." takes one back. */
    char *out = malloc(j + 1);
    if (!out) {
        free(joined);
        *oom = 1;
        return NULL;
    }
    size_t o = 0;
    for (char *p = joined; *p || p == joined;) {
        size_t s = strcspn(p, "/");
        if ((s == 1 && p[0] == '.') || s == 0) {
            /* nothing */
        } else if (s == 2 && p[0] == '.' && p[1] == '.') {
            if (o == 0) {
                free(joined);
                free(out);
                return NULL;
            }
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--; /* the slash before it */
        } else {
            if (o > 0)
                out[o++] = '/';
            memcpy(out + o, p, s);
            o += s;
        }
        p += s;
        if (!*p)
            break;
        p++;
    }
    out[o] = 0;
    free(joined);
    return out;
}

/* ---- the central directory as stored ---------------------------------------------- */

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* libzip shows a NUL in a stored name as a space, so the names are looked
 * at in the central directory itself. Returns the index of the first entry
 * whose name holds a NUL, or -1 (also when the directory cannot be walked
 * here: libzip has opened the archive and stays the authority on it). */
static long long name_with_nul(const unsigned char *in, size_t len)
{
    if (len < 22)
        return -1;
    size_t eocd = (size_t)-1;
    size_t lowest = len > 22 + 65535 ? len - 22 - 65535 : 0;
    for (size_t i = len - 22 + 1; i-- > lowest;)
        if (in[i] == 'P' && in[i + 1] == 'K' && in[i + 2] == 5 && in[i + 3] == 6) {
            eocd = i;
            break;
        }
    if (eocd == (size_t)-1)
        return -1;
    uint64_t count = rd16(in + eocd + 10), off = rd32(in + eocd + 16);
    if (count == 0xFFFF || off == 0xFFFFFFFFu) {
        /* ZIP64: the locator just before the record gives the real record. */
        if (eocd < 20 || rd32(in + eocd - 20) != 0x07064b50u)
            return -1;
        uint64_t z = rd64(in + eocd - 20 + 8);
        if (z > len || len - z < 56 || rd32(in + z) != 0x06064b50u)
            return -1;
        count = rd64(in + z + 32);
        off = rd64(in + z + 48);
    }
    size_t p = (size_t)off;
    for (uint64_t k = 0; k < count; k++) {
        if (off > len || p > len || len - p < 46 || rd32(in + p) != 0x02014b50u)
            return -1;
        size_t nl = rd16(in + p + 28), el = rd16(in + p + 30), cl = rd16(in + p + 32);
        if (len - p - 46 < nl + el + cl)
            return -1;
        if (memchr(in + p + 46, 0, nl))
            return (long long)k;
        p += 46 + nl + el + cl;
    }
    return -1;
}

/* ---- reading entries ---------------------------------------------------------------- */

/* Reads entry i into e->data, trusting no header: reading stops with an
 * error as soon as more comes out than the header declared or the limits
 * allow (a zip bomb never gets far). */
static int read_entry(book *b, zip_uint64_t i)
{
    entry *e = &b->e[i];
    char shown[200];
    if (e->loaded)
        return 0;
    printable(e->name, shown, sizeof shown);
    zip_file_t *f = ZIP(zip_fopen_index)(b->za, i, 0);
    if (!f) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %s", shown, ZIP(zip_strerror)(b->za));
        return -1;
    }
    char chunk[16384];
    unsigned long long total = 0;
    for (;;) {
        zip_int64_t got = ZIP(zip_fread)(f, chunk, sizeof chunk);
        if (got < 0) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %s", shown, ZIP(zip_file_strerror)(f));
            goto fail;
        }
        if (got == 0)
            break;
        total += (unsigned long long)got;
        b->read_total += (unsigned long long)got;
        if (total > e->st.size) {
            fjf_error_set(b->err, FJF_NO_OFFSET,
                          "%s: more data than its header declares (%llu bytes): "
                          "a damaged or hostile archive",
                          shown, (unsigned long long)e->st.size);
            goto fail;
        }
        if (total > b->max_entry || b->read_total > b->max_total) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "%s: past the size limit", shown);
            goto fail;
        }
        if (fjf_buf_append(&e->data, chunk, (size_t)got) < 0) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "%s: out of memory", shown);
            goto fail;
        }
    }
    ZIP(zip_fclose)(f);
    if (total != e->st.size) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %llu bytes, but its header declares %llu", shown,
                      total, (unsigned long long)e->st.size);
        fjf_buf_free(&e->data);
        return -1;
    }
    e->loaded = 1;
    return 0;
fail:
    ZIP(zip_fclose)(f);
    fjf_buf_free(&e->data);
    return -1;
}

static int name_ref_order(const void *pa, const void *pb)
{
    const name_ref *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* The entry stored as exactly `name`, or -1. Not zip_name_locate: libzip
 * indexes names as it decodes them (CP437 for a name that is not UTF-8 and
 * lacks the UTF-8 flag, as GBK names from Chinese zip tools), so a stored
 * GBK name would not be found by its own bytes. */
static long long locate(const book *b, const char *name)
{
    size_t lo = 0, hi = (size_t)b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, b->by_name[mid].name);
        if (c == 0)
            return (long long)b->by_name[mid].index;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

/* ---- the container's XML files -------------------------------------------------------- */

/* Only start tags matter here; the handlers get this. */
typedef struct scan {
    book *b;
    int failed; /* out of memory */
    /* container.xml */
    char **rootfiles;
    size_t nroot;
    /* the package document */
    const char *base; /* its directory, with the final '/' */
    size_t base_len;
    size_t manifest; /* open <manifest> elements */
    struct item {
        char *id, *path;
        int kind;
        int nav; /* the navigation document: converted, never cleaned */
    } *items;
    size_t nitems, capitems;
    char *toc;
} scan;

static const char *attr(const XML_Char **atts, const char *name)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0)
            return atts[i + 1];
    return NULL;
}

static const char *local_of(const char *qname)
{
    const char *c = strrchr(qname, ':');
    return c ? c + 1 : qname;
}

/* A media type without parameters, case-insensitively. */
static int media_is(const char *mt, const char *want)
{
    if (!mt)
        return 0;
    while (*mt == ' ' || *mt == '\t')
        mt++;
    size_t n = strlen(want);
    if (strncasecmp(mt, want, n) != 0)
        return 0;
    mt += n;
    while (*mt == ' ' || *mt == '\t')
        mt++;
    return *mt == 0 || *mt == ';';
}

static int has_token(const char *list, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = list; p && *p;) {
        p += strspn(p, " \t\r\n");
        size_t s = strcspn(p, " \t\r\n");
        if (s == n && memcmp(p, tok, n) == 0)
            return 1;
        p += s;
    }
    return 0;
}

static void container_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    scan *s = ud;
    if (s->failed || strcmp(local_of(name), "rootfile") != 0)
        return;
    const char *path = attr(atts, "full-path"), *mt = attr(atts, "media-type");
    if (!path || (mt && !media_is(mt, MT_OPF)))
        return; /* another rendition format, not a package document */
    char **r = realloc(s->rootfiles, (s->nroot + 1) * sizeof *r);
    if (!r || !(r[s->nroot] = strdup(path))) {
        if (r)
            s->rootfiles = r;
        s->failed = 1;
        return;
    }
    s->rootfiles = r;
    s->nroot++;
}

static void encryption_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    scan *s = ud;
    const char *uri;
    if (s->failed || strcmp(local_of(name), "CipherReference") != 0 ||
        !(uri = attr(atts, "URI")))
        return;
    /* Relative to the container's root. */
    char *path = resolve("", 0, uri, &s->failed);
    if (!path)
        return;
    long long i = locate(s->b, path);
    if (i >= 0)
        s->b->e[i].encrypted = 1;
    free(path);
}

static void opf_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    scan *s = ud;
    const char *local = local_of(name);
    if (s->failed)
        return;
    if (strcmp(local, "manifest") == 0) {
        s->manifest++;
        return;
    }
    if (strcmp(local, "spine") == 0) {
        const char *toc = attr(atts, "toc");
        if (toc && !s->toc && !(s->toc = strdup(toc)))
            s->failed = 1;
        return;
    }
    if (strcmp(local, "item") != 0 || !s->manifest)
        return;
    const char *id = attr(atts, "id"), *href = attr(atts, "href");
    const char *mt = attr(atts, "media-type"), *props = attr(atts, "properties");
    if (!href)
        return;
    int kind = K_COPY;
    if (media_is(mt, MT_XHTML) || has_token(props, "nav"))
        kind = FJF_XML_XHTML;
    else if (media_is(mt, MT_NCX))
        kind = FJF_XML_NCX;
    char *path = resolve(s->base, s->base_len, href, &s->failed);
    if (!path)
        return;
    if (s->nitems == s->capitems) {
        size_t cap = s->capitems ? s->capitems * 2 : 64;
        struct item *it = realloc(s->items, cap * sizeof *it);
        if (!it) {
            free(path);
            s->failed = 1;
            return;
        }
        s->items = it;
        s->capitems = cap;
    }
    char *idc = id ? strdup(id) : NULL;
    if (id && !idc) {
        free(path);
        s->failed = 1;
        return;
    }
    s->items[s->nitems++] = (struct item){idc, path, kind, has_token(props, "nav")};
}

static void opf_end(void *ud, const XML_Char *name)
{
    scan *s = ud;
    if (strcmp(local_of(name), "manifest") == 0 && s->manifest)
        s->manifest--;
}

static void ignore_default(void *ud, const XML_Char *s, int len)
{
    (void)ud;
    (void)s;
    (void)len;
}

/* Parses entry i (already read) for its start tags. */
static int scan_entry(book *b, zip_uint64_t i, scan *s, XML_StartElementHandler start,
                      XML_EndElementHandler end)
{
    entry *e = &b->e[i];
    char shown[200];
    printable(e->name, shown, sizeof shown);
    if (e->data.len > INT_MAX) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "%s: too large", shown);
        return -1;
    }
    XML_Parser p = EXPAT(XML_ParserCreate)(NULL);
    if (!p) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    EXPAT(XML_SetUserData)(p, s);
    EXPAT(XML_SetElementHandler)(p, start, end);
    /* A default handler keeps internal entities unexpanded in content. */
    EXPAT(XML_SetDefaultHandler)(p, ignore_default);
    int rc = 0;
    if (EXPAT(XML_Parse)(p, e->data.data ? e->data.data : "", (int)e->data.len, 1) !=
        XML_STATUS_OK) {
        /* Where expat gives no position, the error is at the end. */
        XML_Index at = EXPAT(XML_GetCurrentByteIndex)(p);
        if (at < 0 || (size_t)at > e->data.len)
            at = (XML_Index)e->data.len;
        fjf_error_set(b->err, FJF_NO_OFFSET, "%s, byte %ld: line %lu, column %lu: %s", shown,
                      (long)at, (unsigned long)EXPAT(XML_GetCurrentLineNumber)(p),
                      (unsigned long)EXPAT(XML_GetCurrentColumnNumber)(p) + 1,
                      EXPAT(XML_ErrorString)(EXPAT(XML_GetErrorCode)(p)));
        rc = -1;
    } else if (s->failed) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "out of memory");
        rc = -1;
    }
    EXPAT(XML_ParserFree)(p);
    return rc;
}

static void scan_free(scan *s)
{
    for (size_t i = 0; i < s->nroot; i++)
        free(s->rootfiles[i]);
    free(s->rootfiles);
    for (size_t i = 0; i < s->nitems; i++) {
        free(s->items[i].id);
        free(s->items[i].path);
    }
    free(s->items);
    free(s->toc);
    memset(s, 0, sizeof *s);
}

/* Marks what one package document makes us rewrite: itself, its XHTML
 * (the navigation document included) and its NCX. */
static int package(book *b, long long opf)
{
    entry *pe = &b->e[opf];
    char shown[200];
    printable(pe->name, shown, sizeof shown);
    if (pe->encrypted) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "%s: the package document is encrypted", shown);
        return -1;
    }
    if (read_entry(b, (zip_uint64_t)opf) < 0)
        return -1;
    scan s;
    memset(&s, 0, sizeof s);
    s.b = b;
    s.base = pe->name;
    const char *slash = strrchr(pe->name, '/');
    s.base_len = slash ? (size_t)(slash - pe->name) + 1 : 0;
    if (scan_entry(b, (zip_uint64_t)opf, &s, opf_start, opf_end) < 0) {
        scan_free(&s);
        return -1;
    }
    pe->kind = FJF_XML_OPF;
    for (size_t k = 0; k < s.nitems; k++) {
        struct item *it = &s.items[k];
        int kind = it->kind;
        /* EPUB 2 names its NCX by the spine's toc. */
        if (kind == K_COPY && s.toc && it->id && strcmp(it->id, s.toc) == 0) {
            size_t pl = strlen(it->path);
            if (pl > 4 && strcasecmp(it->path + pl - 4, ".ncx") == 0)
                kind = FJF_XML_NCX;
        }
        if (kind == K_COPY)
            continue;
        long long i = locate(b, it->path);
        if (i < 0)
            continue; /* listed but absent: nothing to convert */
        entry *e = &b->e[i];
        size_t nl = strlen(e->name);
        if (e->kind != K_COPY || e->encrypted || (nl && e->name[nl - 1] == '/') ||
            strcmp(e->name, "mimetype") == 0 || strncmp(e->name, "META-INF/", 9) == 0)
            continue;
        e->kind = kind;
        e->nav = it->nav;
    }
    scan_free(&s);
    return 0;
}

/* The encoding an XML declaration at the start of d[0..n) names, into
 * out; 0 when there is none. */
static int declared_encoding(const char *d, size_t n, char *out, size_t size)
{
    size_t i = n >= 3 && memcmp(d, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    if (n - i < 6 || memcmp(d + i, "<?xml", 5) != 0)
        return 0;
    const char *end = memchr(d + i, '>', n - i);
    if (!end)
        return 0;
    size_t e = (size_t)(end - d);
    for (i += 5; i + 8 <= e; i++) {
        if (memcmp(d + i, "encoding", 8) != 0)
            continue;
        i += 8;
        while (i < e && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n' || d[i] == '='))
            i++;
        if (i >= e || (d[i] != '"' && d[i] != '\''))
            return 0;
        char q = d[i++];
        size_t k = 0;
        while (i < e && d[i] != q && k + 1 < size)
            out[k++] = d[i++];
        out[k] = 0;
        return k > 0;
    }
    return 0;
}

/* ---- writing ------------------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Everything about entry i that libzip lets us carry over: time, external
 * attributes (permissions), comment, extra fields (but those libzip writes
 * itself: ZIP64 and the Info-ZIP UTF-8 name and comment). */
static int carry_over(zip_t *za, zip_uint64_t i, const zip_stat_t *st, zip_t *oza,
                      zip_uint64_t j)
{
    if ((st->valid & ZIP_STAT_MTIME) && ZIP(zip_file_set_mtime)(oza, j, st->mtime, 0) < 0)
        return -1;
    zip_uint8_t opsys;
    zip_uint32_t attrs;
    if (ZIP(zip_file_get_external_attributes)(za, i, 0, &opsys, &attrs) == 0 &&
        ZIP(zip_file_set_external_attributes)(oza, j, 0, opsys, attrs) < 0)
        return -1;
    zip_uint32_t clen = 0;
    const char *c = ZIP(zip_file_get_comment)(za, i, &clen, ZIP_FL_ENC_RAW);
    if (c && clen > 0 && clen <= 0xFFFF && ZIP(zip_file_set_comment)(oza, j, c, (zip_uint16_t)clen, 0) < 0)
        return -1;
    const zip_flags_t where[2] = {ZIP_FL_LOCAL, ZIP_FL_CENTRAL};
    for (int w = 0; w < 2; w++) {
        zip_int16_t n = ZIP(zip_file_extra_fields_count)(za, i, where[w]);
        for (zip_int16_t k = 0; k < n; k++) {
            zip_uint16_t id, len;
            const zip_uint8_t *d = ZIP(zip_file_extra_field_get)(za, i, (zip_uint16_t)k, &id, &len,
                                                            where[w]);
            if (!d || id == 0x0001 || id == 0x6375 || id == 0x7075)
                continue;
            if (ZIP(zip_file_extra_field_set)(oza, j, id, ZIP_EXTRA_FIELD_NEW, d, len, where[w]) < 0)
                return -1;
        }
    }
    return 0;
}

/* Adds src as `name`; libzip owns src from here, even on failure. */
static long long add(zip_t *oza, const char *name, zip_source_t *src, zip_int32_t method,
                     fjf_error *err)
{
    /* The stored bytes; libzip writes the UTF-8 flag where they are valid
     * UTF-8, and no flag (as they came, in GBK and the like) where not. */
    zip_int64_t j = ZIP(zip_file_add)(oza, name, src, ZIP_FL_ENC_GUESS);
    if (j < 0) {
        char shown[200];
        printable(name, shown, sizeof shown);
        fjf_error_set(err, FJF_NO_OFFSET, "%s: %s", shown, ZIP(zip_strerror)(oza));
        ZIP(zip_source_free)(src);
        return -1;
    }
    if (ZIP(zip_set_file_compression)(oza, (zip_uint64_t)j, method, 0) < 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "%s", ZIP(zip_strerror)(oza));
        return -1;
    }
    return j;
}

static int build(book *b, long long mimetype, const fjf_rewrite *rw, int out_fd)
{
    zip_error_t ze;
    ZIP(zip_error_init)(&ze);
    zip_source_t *dst = ZIP(zip_source_buffer_create)(NULL, 0, 0, &ze);
    zip_t *oza = dst ? ZIP(zip_open_from_source)(dst, ZIP_TRUNCATE, &ze) : NULL;
    if (!oza) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "creating the new EPUB: %s",
                      ZIP(zip_error_strerror)(&ze));
        ZIP(zip_error_fini)(&ze);
        if (dst)
            ZIP(zip_source_free)(dst);
        return -1;
    }
    ZIP(zip_error_fini)(&ze);
    ZIP(zip_source_keep)(dst); /* it outlives the archive: the bytes are read after close */

    /* An EPUB is not re-encoded: its documents keep declaring UTF-8. */
    fjf_rewrite sub = {0};
    if (rw)
        sub = *rw;
    sub.charset = NULL;

    /* mimetype: first, stored, no extra field, so readers can sniff it. */
    zip_source_t *ms = ZIP(zip_source_buffer)(oza, MIMETYPE, sizeof MIMETYPE - 1, 0);
    long long j = ms ? add(oza, "mimetype", ms, ZIP_CM_STORE, b->err) : -1;
    if (!ms)
        fjf_error_set(b->err, FJF_NO_OFFSET, "%s", ZIP(zip_strerror)(oza));
    if (j < 0)
        goto fail;
    zip_uint8_t opsys;
    zip_uint32_t attrs;
    if ((b->e[mimetype].st.valid & ZIP_STAT_MTIME) &&
        ZIP(zip_file_set_mtime)(oza, (zip_uint64_t)j, b->e[mimetype].st.mtime, 0) < 0)
        goto libfail;
    if (ZIP(zip_file_get_external_attributes)(b->za, (zip_uint64_t)mimetype, 0, &opsys, &attrs) == 0 &&
        ZIP(zip_file_set_external_attributes)(oza, (zip_uint64_t)j, 0, opsys, attrs) < 0)
        goto libfail;

    for (zip_uint64_t i = 0; i < b->n; i++) {
        if ((long long)i == mimetype)
            continue;
        entry *e = &b->e[i];
        char shown[200];
        printable(e->name, shown, sizeof shown);
        zip_source_t *src;
        if (e->kind == K_COPY) {
            /* Whole, method unchanged: libzip copies the compressed bytes as
             * stored, without inflating or recompressing them. */
            src = ZIP(zip_source_zip)(oza, b->za, i, 0, 0, -1);
        } else {
            if (read_entry(b, i) < 0)
                goto fail;
            fjf_buf conv = {0};
            fjf_error xe = {FJF_NO_OFFSET, "", FJF_ERR_FORMAT, NULL};
            /* Content is read as UTF-8; one that says otherwise but is UTF-8
             * (a common mislabel) is converted and relabelled. */
            fjf_rewrite one = sub;
            /* Boilerplate is removed from content documents only. */
            if (e->nav)
                one.clean = NULL;
            one.part = e->name;
            char enc[40], note[128] = "";
            if (declared_encoding(e->data.data, e->data.len, enc, sizeof enc) &&
                strcasecmp(enc, "UTF-8") != 0) {
                one.charset = "UTF-8";
                snprintf(note, sizeof note, " (it declares %s; EPUB content is read as UTF-8)",
                         enc);
            }
            if (fjf_xml_rewrite((fjf_xml_kind)e->kind, e->data.data ? e->data.data : "",
                                e->data.len, &one, &conv, &xe) < 0) {
                fjf_buf_free(&conv);
                if (xe.offset != FJF_NO_OFFSET)
                    fjf_error_set(b->err, FJF_NO_OFFSET, "%s, byte %zu: %s%s", shown, xe.offset,
                                  xe.message, note);
                else
                    fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %s%s", shown, xe.message, note);
                goto fail;
            }
            fjf_buf_free(&e->data);
            src = ZIP(zip_source_buffer)(oza, conv.data, conv.len, 1);
            if (!src)
                fjf_buf_free(&conv);
        }
        if (!src) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %s", shown, ZIP(zip_strerror)(oza));
            goto fail;
        }
        j = add(oza, e->name, src, (zip_int32_t)e->st.comp_method, b->err);
        if (j < 0)
            goto fail;
        if (carry_over(b->za, i, &e->st, oza, (zip_uint64_t)j) < 0)
            goto libfail;
    }
    int clen = 0;
    const char *comment = ZIP(zip_get_archive_comment)(b->za, &clen, ZIP_FL_ENC_RAW);
    if (comment && clen > 0 && clen <= 0xFFFF &&
        ZIP(zip_set_archive_comment)(oza, comment, (zip_uint16_t)clen) < 0)
        goto libfail;

    if (ZIP(zip_close)(oza) < 0) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "writing the new EPUB: %s", ZIP(zip_strerror)(oza));
        goto fail;
    }
    oza = NULL;

    /* Only now, with the whole book made, does anything reach out_fd. */
    if (ZIP(zip_source_open)(dst) < 0) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "reading the new EPUB back: %s",
                      ZIP(zip_error_strerror)(ZIP(zip_source_error)(dst)));
        ZIP(zip_source_free)(dst);
        return -1;
    }
    char chunk[65536];
    int rc = 0;
    for (;;) {
        zip_int64_t got = ZIP(zip_source_read)(dst, chunk, sizeof chunk);
        if (got < 0) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "reading the new EPUB back: %s",
                          ZIP(zip_error_strerror)(ZIP(zip_source_error)(dst)));
            rc = -1;
            break;
        }
        if (got == 0)
            break;
        if (write_all(out_fd, chunk, (size_t)got) < 0) {
            int e = errno;
            char msg[128];
            if (strerror_r(e, msg, sizeof msg) != 0)
                snprintf(msg, sizeof msg, "error %d", e);
            fjf_error_set(b->err, FJF_NO_OFFSET, "writing the EPUB: %s", msg);
            rc = -1;
            break;
        }
    }
    ZIP(zip_source_close)(dst);
    ZIP(zip_source_free)(dst);
    return rc;

libfail:
    fjf_error_set(b->err, FJF_NO_OFFSET, "%s", ZIP(zip_strerror)(oza));
fail:
    if (oza)
        ZIP(zip_discard)(oza);
    ZIP(zip_source_free)(dst);
    return -1;
}

/* Only reads: each document build() would rewrite goes through rw's text
 * callback, in the archive's order, and nothing is written. */
static int read_text(book *b, const fjf_rewrite *rw)
{
    for (zip_uint64_t i = 0; i < b->n; i++) {
        entry *e = &b->e[i];
        if (e->kind == K_COPY)
            continue;
        if (read_entry(b, i) < 0)
            return -1;
        fjf_rewrite one = {0};
        if (rw)
            one = *rw;
        one.charset = NULL;
        one.clean = NULL;
        one.part = e->name;
        fjf_buf discard = {0};
        fjf_error xe = {FJF_NO_OFFSET, "", FJF_ERR_FORMAT, NULL};
        int rc = fjf_xml_rewrite((fjf_xml_kind)e->kind, e->data.data ? e->data.data : "",
                                 e->data.len, &one, &discard, &xe);
        fjf_buf_free(&discard);
        fjf_buf_free(&e->data);
        if (rc < 0) {
            char shown[200];
            printable(e->name, shown, sizeof shown);
            if (xe.offset != FJF_NO_OFFSET)
                fjf_error_set(b->err, FJF_NO_OFFSET, "%s, byte %zu: %s", shown, xe.offset,
                              xe.message);
            else
                fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %s", shown, xe.message);
            return -1;
        }
    }
    return 0;
}

/* ---- the book ------------------------------------------------------------------------ */

/* Everything that can be known from the directory: count, names, sizes. */
static int check_entries(book *b, const char *in, size_t len, unsigned max_entries)
{
    zip_int64_t n = ZIP(zip_get_num_entries)(b->za, 0);
    if (n < 0 || (unsigned long long)n > max_entries) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "%lld entries, more than the limit of %u",
                      (long long)n, max_entries);
        return -1;
    }
    b->n = (zip_uint64_t)n;
    b->e = calloc(b->n ? b->n : 1, sizeof *b->e);
    b->by_name = calloc(b->n ? b->n : 1, sizeof *b->by_name);
    if (!b->e || !b->by_name) {
        fjf_error_set(b->err, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    long long nul = name_with_nul((const unsigned char *)in, len);
    unsigned long long total = 0, ctotal = 0;
    for (zip_uint64_t i = 0; i < b->n; i++) {
        entry *e = &b->e[i];
        char shown[200];
        e->kind = K_COPY;
        e->name = ZIP(zip_get_name)(b->za, i, ZIP_FL_ENC_RAW);
        if (!e->name || ZIP(zip_stat_index)(b->za, i, ZIP_FL_ENC_RAW, &e->st) < 0) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "entry %llu: %s", (unsigned long long)i,
                          ZIP(zip_strerror)(b->za));
            return -1;
        }
        printable(e->name, shown, sizeof shown);
        const char *why = (long long)i == nul ? "a NUL byte" : unsafe_name(e->name);
        if (why) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "unsafe entry name \"%s\": %s", shown, why);
            return -1;
        }
        b->by_name[i] = (name_ref){e->name, i};
        if ((e->st.valid & ZIP_STAT_ENCRYPTION_METHOD) && e->st.encryption_method != ZIP_EM_NONE) {
            fjf_error_set(b->err, FJF_NO_OFFSET,
                          "%s: ZIP encryption, which EPUB does not allow", shown);
            return -1;
        }
        if (e->st.comp_method != ZIP_CM_STORE && e->st.comp_method != ZIP_CM_DEFLATE) {
            fjf_error_set(b->err, FJF_NO_OFFSET,
                          "%s: compression method %d (EPUB allows stored and deflate)", shown,
                          (int)e->st.comp_method);
            return -1;
        }
        if (e->st.size > b->max_entry) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "%s: %llu bytes, more than the limit of %llu",
                          shown, (unsigned long long)e->st.size, b->max_entry);
            return -1;
        }
        /* Compressed sizes count too: overlapping entries copied as stored
         * could otherwise make the output far larger than the input. */
        if (e->st.size > b->max_total - total || e->st.comp_size > b->max_total - ctotal) {
            fjf_error_set(b->err, FJF_NO_OFFSET, "more than the limit of %llu bytes in all",
                          b->max_total);
            return -1;
        }
        total += e->st.size;
        ctotal += e->st.comp_size;
    }
    /* Names are compared as stored bytes: distinct bytes, distinct names. */
    qsort(b->by_name, (size_t)b->n, sizeof *b->by_name, name_ref_order);
    for (zip_uint64_t i = 1; i < b->n; i++)
        if (strcmp(b->by_name[i - 1].name, b->by_name[i].name) == 0) {
            char shown[200];
            printable(b->by_name[i].name, shown, sizeof shown);
            fjf_error_set(b->err, FJF_NO_OFFSET, "entry \"%s\" appears twice", shown);
            return -1;
        }
    return 0;
}

int fjf_epub_convert(const char *in, size_t len, int out_fd, const fjf_rewrite *rw,
                     const fjf_epub_limits *limits, fjf_error *err)
{
    char why[200];
    if (!fjf_zip_api_load(why, sizeof why) || !fjf_expat_api_load(why, sizeof why)) {
        fjf_error_set(err, FJF_NO_OFFSET, "%s", why);
        return -1;
    }
    book b;
    memset(&b, 0, sizeof b);
    b.err = err;
    b.max_total = limits && limits->max_total ? limits->max_total : 1ull << 30;
    b.max_entry = limits && limits->max_entry ? limits->max_entry : 256ull << 20;
    unsigned max_entries = limits && limits->max_entries ? limits->max_entries : 65536;
    int rc = -1;
    scan s;
    memset(&s, 0, sizeof s);

    zip_error_t ze;
    ZIP(zip_error_init)(&ze);
    zip_source_t *src = ZIP(zip_source_buffer_create)(in, len, 0, &ze);
    if (src)
        b.za = ZIP(zip_open_from_source)(src, ZIP_RDONLY, &ze);
    if (!b.za) {
        fjf_error_set(err, FJF_NO_OFFSET, "not an EPUB (not a readable ZIP archive: %s)",
                      ZIP(zip_error_strerror)(&ze));
        ZIP(zip_error_fini)(&ze);
        if (src)
            ZIP(zip_source_free)(src);
        return -1;
    }
    ZIP(zip_error_fini)(&ze);

    if (check_entries(&b, in, len, max_entries) < 0)
        goto done;

    long long mt = locate(&b, "mimetype");
    if (mt < 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "not an EPUB: no mimetype entry");
        goto done;
    }
    if (b.e[mt].st.size != sizeof MIMETYPE - 1) {
        fjf_error_set(err, FJF_NO_OFFSET, "not an EPUB: mimetype is not \"" MIMETYPE "\"");
        goto done;
    }
    if (read_entry(&b, (zip_uint64_t)mt) < 0)
        goto done;
    if (memcmp(b.e[mt].data.data, MIMETYPE, sizeof MIMETYPE - 1) != 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "not an EPUB: mimetype is not \"" MIMETYPE "\"");
        goto done;
    }

    long long enc = locate(&b, "META-INF/encryption.xml");
    if (enc >= 0) {
        s.b = &b;
        if (read_entry(&b, (zip_uint64_t)enc) < 0 ||
            scan_entry(&b, (zip_uint64_t)enc, &s, encryption_start, NULL) < 0)
            goto done;
        scan_free(&s);
    }

    long long ci = locate(&b, "META-INF/container.xml");
    if (ci < 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "not an EPUB: no META-INF/container.xml");
        goto done;
    }
    s.b = &b;
    if (read_entry(&b, (zip_uint64_t)ci) < 0 ||
        scan_entry(&b, (zip_uint64_t)ci, &s, container_start, NULL) < 0)
        goto done;
    if (s.nroot == 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "META-INF/container.xml names no package document");
        goto done;
    }
    /* Every rendition's package document (usually there is one). */
    for (size_t r = 0; r < s.nroot; r++) {
        long long opf = locate(&b, s.rootfiles[r]);
        if (opf < 0) {
            int oom = 0;
            char *path = resolve("", 0, s.rootfiles[r], &oom);
            opf = path ? locate(&b, path) : -1;
            free(path);
            if (oom) {
                fjf_error_set(err, FJF_NO_OFFSET, "out of memory");
                goto done;
            }
        }
        if (opf < 0) {
            char shown[200];
            printable(s.rootfiles[r], shown, sizeof shown);
            fjf_error_set(err, FJF_NO_OFFSET,
                          "META-INF/container.xml names %s, which is not in the book", shown);
            goto done;
        }
        if (b.e[opf].kind == FJF_XML_OPF)
            continue;
        if (package(&b, opf) < 0)
            goto done;
    }

    rc = out_fd < 0 ? read_text(&b, rw) : build(&b, mt, rw, out_fd);
done:
    scan_free(&s);
    for (zip_uint64_t i = 0; i < b.n; i++)
        fjf_buf_free(&b.e[i].data);
    free(b.e);
    free(b.by_name);
    ZIP(zip_discard)(b.za);
    return rc;
}
