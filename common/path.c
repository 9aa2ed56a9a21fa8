/* path.c: file names relative to other files; where the bundled inputs
 * are (path.h). */
#define _GNU_SOURCE 1 /* realpath */
#include "common/path.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

#ifndef EFPLAN_DATADIR
#define EFPLAN_DATADIR "inputs"
#endif

const char *ef_datadir_builtin(void)
{
    return EFPLAN_DATADIR;
}

/* The directory found beside the executable ("" when none), set once. */
static char beside[PATH_MAX];
static pthread_once_t beside_once = PTHREAD_ONCE_INIT;

static void find_beside(void)
{
    static const char *const rel[] = {EF_DATA_BESIDE_INSTALLED,
                                      EF_DATA_BESIDE_BUILD};
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0';
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[PATH_MAX + 64], curves[PATH_MAX + 80];
        struct stat st;
        snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
        snprintf(curves, sizeof curves, "%s/curves", cand);
        if (stat(curves, &st) == 0 && S_ISDIR(st.st_mode) &&
            realpath(cand, beside))
            return;
        beside[0] = '\0';
    }
}

const char *ef_datadir_found(ef_data_from *from)
{
    const char *d = getenv("EFPLAN_DATA");
    ef_data_from f = EF_DATA_ENV;
    if (!d || !d[0]) {
        pthread_once(&beside_once, find_beside);
        d = beside;
        f = EF_DATA_BESIDE;
        if (!d[0]) {
            d = EFPLAN_DATADIR;
            f = EF_DATA_BUILTIN;
        }
    }
    if (from)
        *from = f;
    return d;
}

const char *ef_datadir(void)
{
    return ef_datadir_found(NULL);
}

/* The directory part of 'name' (heap): "." when it has none, "/" for a
 * name right under the root. */
static char *dir_of(const char *name)
{
    const char *slash = strrchr(name, '/');
    if (!slash)
        return ef_strdup(".");
    size_t n = slash == name ? 1 : (size_t)(slash - name);
    char *d = ef_malloc(n + 1);
    memcpy(d, name, n);
    d[n] = '\0';
    return d;
}

char *ef_path_from_file(const char *path, const char *file)
{
    if (path[0] == '/' || !strchr(file, '/'))
        return ef_strdup(path);
    return ef_path_between(path, file);
}

char *ef_path_between(const char *path, const char *file)
{
    char *fd = dir_of(file), *pd = dir_of(path);
    char a[PATH_MAX + 1], b[PATH_MAX + 1]; /* both directories, real, '/' at
                                             the end */
    int ok = realpath(fd, a) && realpath(pd, b);
    free(fd);
    free(pd);
    if (!ok)
        return NULL;
    if (strcmp(a, "/") != 0)
        strcat(a, "/");
    if (strcmp(b, "/") != 0)
        strcat(b, "/");
    size_t common = 0; /* length of the leading directories both share */
    for (size_t k = 0; a[k] && a[k] == b[k]; k++)
        if (a[k] == '/')
            common = k + 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (common <= 1) { /* nothing shared but the root: the absolute name */
        char *r = ef_malloc(strlen(b) + strlen(base) + 1);
        strcpy(r, b);
        strcat(r, base);
        return r;
    }
    int ups = 0; /* directories of a's below the common ones */
    for (const char *s = a + common; *s; s++)
        ups += *s == '/';
    size_t n = 3 * (size_t)ups + strlen(b + common) + strlen(base) + 1;
    char *r = ef_malloc(n), *w = r;
    for (int i = 0; i < ups; i++, w += 3)
        memcpy(w, "../", 3);
    strcpy(w, b + common);
    strcat(w, base);
    return r;
}

char *ef_path_beside(const char *file, const char *rel)
{
    if (rel[0] == '/' || !strchr(file, '/'))
        return ef_strdup(rel);
    char *d = dir_of(file);
    size_t n = strlen(d) + strlen(rel) + 2;
    char *r = ef_malloc(n);
    snprintf(r, n, "%s%s%s", d, strcmp(d, "/") == 0 ? "" : "/", rel);
    free(d);
    return r;
}
