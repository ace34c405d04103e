/* fanjian serve: the JavaScript package under /js/ (serve_js.h). */
#include "serve_js.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"

static const struct {
    const char *name, *type;
} files[FJX_JS_FILES] = {
    {"browser.mjs", "text/javascript; charset=utf-8"},
    {"core.mjs", "text/javascript; charset=utf-8"},
    {"fanjian.wasm", "application/wasm"},
    {"fanjian.fjd", "application/octet-stream"},
};

int fjx_js_route(const char *url)
{
    if (strncmp(url, "/js/", 4) != 0)
        return -1;
    for (int i = 0; i < FJX_JS_FILES; i++)
        if (strcmp(url + 4, files[i].name) == 0)
            return i;
    return -1;
}

void fjx_js_close(fjx_js *js)
{
    for (int i = 0; i < FJX_JS_FILES; i++)
        if (js->file[i].data)
            munmap(js->file[i].data, js->file[i].len);
    memset(js, 0, sizeof *js);
}

static int map_file(fjx_js *js, int i, const char *dir, char *why, size_t why_size)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) {
        snprintf(why, why_size, "%s: %s", path,
                 fd < 0 ? strerror(errno) : "not a regular file with content");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, why_size, "cannot map %s: %s", path, strerror(errno));
        return -1;
    }
    js->file[i].name = files[i].name;
    js->file[i].type = files[i].type;
    js->file[i].data = p;
    js->file[i].len = (size_t)sb.st_size;
    /* Changes whenever the file does: size and modification time. */
    snprintf(js->file[i].etag, sizeof js->file[i].etag, "\"%llx-%llx.%lx\"",
             (unsigned long long)sb.st_size, (unsigned long long)sb.st_mtim.tv_sec,
             (unsigned long)sb.st_mtim.tv_nsec);
    return 0;
}

static int map_all(fjx_js *js, const char *dir, char *why, size_t why_size)
{
    for (int i = 0; i < FJX_JS_FILES; i++)
        if (map_file(js, i, dir, why, why_size) != 0) {
            fjx_js_close(js);
            return -1;
        }
    return 1;
}

int fjx_js_open(fjx_js *js, const char *dir, char *why, size_t why_size)
{
    memset(js, 0, sizeof *js);
    if (dir)
        return map_all(js, dir, why, why_size);
    /* As the dictionary is found (cli/convert.c). */
    static const char *const rel[] = {"js/pkg", "../share/fanjian/js"};
    char found[PATH_MAX + 128];
    if (!fjx_beside_program(rel, sizeof rel / sizeof *rel, "browser.mjs", found, sizeof found))
        return 0;
    return map_all(js, found, why, why_size);
}
