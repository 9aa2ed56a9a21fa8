/* err.c: error buffers, panics and checked allocation (see err.h). */
#include "common/err.h"

#include <stdarg.h>
#include <string.h>

int ef_fail(ef_err *e, ef_errkind kind, const char *fmt, ...)
{
    if (!e)
        return EF_ERR;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->kind = kind;
    return EF_ERR;
}

int ef_prefix(ef_err *e, const char *fmt, ...)
{
    if (!e)
        return EF_ERR;
    char head[EF_ERR_LEN], old[EF_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t h = strnlen(head, sizeof head - 1);
    size_t o = strnlen(old, sizeof old - 1);
    if (h + o > sizeof e->msg - 1)
        o = sizeof e->msg - 1 - h;
    memcpy(e->msg, head, h);
    memcpy(e->msg + h, old, o);
    e->msg[h + o] = '\0';
    return EF_ERR;
}

void ef_panic_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "efplan: internal error: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

static void oom(size_t n)
{
    fprintf(stderr, "efplan: internal error: out of memory (%zu bytes)\n", n);
    exit(5); /* EXIT_INTERNAL in cli/cli.h (README: Exit codes) */
}

void *ef_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *ef_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *ef_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *ef_strdup(const char *s)
{
    return ef_strndup(s, strlen(s));
}

char *ef_strndup(const char *s, size_t n)
{
    char *p = ef_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
