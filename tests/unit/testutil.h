/*
 * testutil.h: helpers shared by the cmocka unit tests in tests/unit/.
 *
 * Everything here is 'static inline' so each test program can use what it
 * needs without unused-function warnings.
 *
 *   assert_contains(s, sub)      s contains sub
 *   assert_prefix(s, pre)        s starts with pre
 *   assert_err(rc, e, pre, sub)  rc == EF_ERR, e.kind == EF_E_INPUT, the
 *                                message starts with pre and contains sub
 *                                (sub may be NULL)
 *   tu_root()                    the repository root: $EFPLAN_ROOT (which
 *                                tests/run.sh exports), else "."
 *   assert_keys_sorted(json)     every object's keys in the JSON text
 *                                come in strcmp order, none twice
 *   tu_tmpdir / tu_write / tu_rmtree   a scratch directory per test
 */
#ifndef EF_TESTUTIL_H
#define EF_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

static inline void tu_contains(const char *s, const char *sub,
                               const char *file, int line)
{
    if (!s || !sub || !strstr(s, sub)) {
        print_error("    \"%s\"\n  does not contain\n    \"%s\"\n",
                    s ? s : "(null)", sub ? sub : "(null)");
        _fail(file, line);
    }
}

static inline void tu_not_contains(const char *s, const char *sub,
                                   const char *file, int line)
{
    if (!s || strstr(s, sub)) {
        print_error("    \"%s\"\n  contains (but should not)\n    \"%s\"\n",
                    s ? s : "(null)", sub);
        _fail(file, line);
    }
}

static inline void tu_prefix(const char *s, const char *pre,
                             const char *file, int line)
{
    if (!s || !pre || strncmp(s, pre, strlen(pre)) != 0) {
        print_error("    \"%s\"\n  does not start with\n    \"%s\"\n",
                    s ? s : "(null)", pre ? pre : "(null)");
        _fail(file, line);
    }
}

static inline void tu_err(int rc, const ef_err *e, ef_errkind kind,
                          const char *pre, const char *sub, const char *file,
                          int line)
{
    if (rc != EF_ERR) {
        print_error("    expected EF_ERR, got %d\n", rc);
        _fail(file, line);
    }
    if (e->kind != kind) {
        print_error("    error kind %d, expected %d (message: \"%s\")\n",
                    (int)e->kind, (int)kind, e->msg);
        _fail(file, line);
    }
    tu_prefix(e->msg, pre, file, line);
    if (sub)
        tu_contains(e->msg, sub, file, line);
}

#define assert_contains(s, sub) tu_contains((s), (sub), __FILE__, __LINE__)
#define assert_not_contains(s, sub) \
    tu_not_contains((s), (sub), __FILE__, __LINE__)
#define assert_prefix(s, pre) tu_prefix((s), (pre), __FILE__, __LINE__)
#define assert_err(rc, e, pre, sub) \
    tu_err((rc), &(e), EF_E_INPUT, (pre), (sub), __FILE__, __LINE__)
#define assert_err_kind(rc, e, kind, pre, sub) \
    tu_err((rc), &(e), (kind), (pre), (sub), __FILE__, __LINE__)
/* An EF_OK call; print the error message if it was not. */
#define assert_ok(rc, e)                                                    \
    do {                                                                    \
        if ((rc) != EF_OK) {                                                \
            print_error("    unexpected error: %s\n", (e).msg);             \
            _fail(__FILE__, __LINE__);                                      \
        }                                                                   \
    } while (0)

/* Every object's keys in 'json' come in ascending order (a small scanner:
 * strings, and the key before each ':' at its depth; keys of at most 63
 * bytes, objects nested at most 15 deep). */
static inline void tu_keys_sorted(const char *json, const char *file,
                                  int line)
{
    char last[16][64];
    int depth = 0;
    for (const char *p = json; *p; p++) {
        if (*p == '{') {
            if (++depth >= 16) {
                print_error("    objects nested too deep\n");
                _fail(file, line);
            }
            last[depth][0] = 0;
        } else if (*p == '}') {
            depth--;
        } else if (*p == '"') {
            const char *s = ++p;
            while (*p != '"')
                p += *p == '\\' ? 2 : 1;
            const char *q = p + 1;
            while (*q == ' ')
                q++;
            if (*q == ':') {
                char key[64];
                snprintf(key, sizeof key, "%.*s", (int)(p - s), s);
                if (strcmp(last[depth], key) >= 0) {
                    print_error("    key \"%s\" after \"%s\"\n", key,
                                last[depth]);
                    _fail(file, line);
                }
                snprintf(last[depth], sizeof last[depth], "%s", key);
            }
        }
    }
    if (depth != 0) {
        print_error("    unbalanced braces (depth %d at the end)\n", depth);
        _fail(file, line);
    }
}

#define assert_keys_sorted(json) tu_keys_sorted((json), __FILE__, __LINE__)

static inline const char *tu_root(void)
{
    const char *r = getenv("EFPLAN_ROOT");
    return r && r[0] ? r : ".";
}

/* "<root>/<rel>" into dst. */
static inline const char *tu_path(char *dst, size_t len, const char *rel)
{
    snprintf(dst, len, "%s/%s", tu_root(), rel);
    return dst;
}

/* A fresh empty directory under /tmp; its path goes to dst (>= 64). */
static inline const char *tu_tmpdir(char *dst, size_t len)
{
    const char *t = getenv("TMPDIR");
    snprintf(dst, len, "%s/efplan-unit-XXXXXX", t && t[0] ? t : "/tmp");
    if (!mkdtemp(dst)) {
        print_error("    mkdtemp(%s) failed\n", dst);
        fail();
    }
    return dst;
}

/* dst = a + "/" + b, cut to fit (no snprintf: keeps -Wformat-truncation
 * quiet for the callers' fixed buffers). */
static inline const char *tu_join(char *dst, size_t len, const char *a,
                                  const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (len == 0)
        return dst;
    if (la > len - 1)
        la = len - 1;
    memcpy(dst, a, la);
    size_t o = la;
    if (o < len - 1)
        dst[o++] = '/';
    if (lb > len - 1 - o)
        lb = len - 1 - o;
    memcpy(dst + o, b, lb);
    dst[o + lb] = '\0';
    return dst;
}

/* Write 'text' (len bytes; (size_t)-1 for strlen) to dir/name; the path
 * goes to dst (if given). */
static inline void tu_write_n(const char *dir, const char *name,
                              const char *text, size_t n, char *dst,
                              size_t len)
{
    char path[4096];
    tu_join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        print_error("    cannot create %s\n", path);
        fail();
    }
    fwrite(text, 1, n == (size_t)-1 ? strlen(text) : n, f);
    fclose(f);
    if (dst)
        tu_join(dst, len, dir, name);
}

static inline void tu_write(const char *dir, const char *name,
                            const char *text, char *dst, size_t len)
{
    tu_write_n(dir, name, text, (size_t)-1, dst, len);
}

/* Number of entries of 'dir' other than . and .. (-1 if unreadable). */
static inline int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* Remove a scratch directory made by tu_tmpdir and everything in it
 * (subdirectories too; a symbolic link is removed, never followed).
 * Returns 0 when it is gone, -1 when something could not be removed. */
static inline int tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    char path[4096];
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        tu_join(path, sizeof path, dir, de->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rmtree(path);
        else
            unlink(path);
    }
    closedir(d);
    return rmdir(dir);
}

/* Put directory 'bin' (stand-in commands) first on PATH; returns the old
 * PATH (heap) for tu_path_restore. */
static inline char *tu_path_prepend(const char *bin)
{
    const char *path0 = getenv("PATH");
    char *oldpath = strdup(path0 ? path0 : "/usr/bin:/bin");
    size_t n = strlen(bin) + strlen(oldpath) + 2;
    char *np = malloc(n);
    snprintf(np, n, "%s:%s", bin, oldpath);
    setenv("PATH", np, 1);
    free(np);
    return oldpath;
}

/* Set PATH back to what tu_path_prepend returned, and free it. */
static inline void tu_path_restore(char *oldpath)
{
    setenv("PATH", oldpath, 1);
    free(oldpath);
}

#endif
