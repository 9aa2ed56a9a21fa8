/*
 * err.h: error reporting shared by every efplan library.
 *
 * Library functions return EF_OK (0) or EF_ERR (-1). On EF_ERR they have
 * filled the caller's ef_err with a kind (which the CLI maps to an exit
 * code) and one line of text that names the place and the problem, e.g.
 *
 *     jobs.csv:3:14: iterations: expected a positive integer, got "-5"
 *
 * The CLI prints it as "efplan: error: <msg>". Libraries never print and
 * never exit.
 */
#ifndef EF_ERR_H
#define EF_ERR_H

#include <stdio.h>
#include <stdlib.h>

#define EF_OK 0
#define EF_ERR (-1)

/* What went wrong, in the user's terms. The CLI maps each kind to one
 * documented exit code (see README.md, "Exit codes"). */
typedef enum ef_errkind {
    EF_E_NONE = 0,
    EF_E_USAGE,      /* bad command line */
    EF_E_INPUT,      /* an input file is missing, unreadable or invalid */
    EF_E_INFEASIBLE, /* the inputs are valid but no answer exists */
    EF_E_INTERNAL    /* out of memory, write failure, a bug */
} ef_errkind;

#define EF_ERR_LEN 1024

typedef struct ef_err {
    ef_errkind kind;
    char msg[EF_ERR_LEN];
} ef_err;

/* Fill 'e' (which may be NULL) with a kind and a printf-style message.
 * Always returns EF_ERR so callers can write 'return ef_fail(...)'. */
int ef_fail(ef_err *e, ef_errkind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the message already in 'e' with printf-style text (used to add a
 * file name to an error raised by a lower layer). Returns EF_ERR. */
int ef_prefix(ef_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Internal invariant checks: print file/line and abort. These guard bugs,
 * never user input. */
#define ef_assert(cond)                                                     \
    ((cond) ? (void)0 : ef_panic_at(__FILE__, __LINE__, "assertion failed: %s", #cond))
#define ef_panic(...) ef_panic_at(__FILE__, __LINE__, __VA_ARGS__)
void ef_panic_at(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

/* Allocation that never returns NULL: out of memory is reported as an
 * internal error and the process exits with the internal exit code. */
void *ef_malloc(size_t n);
void *ef_calloc(size_t n, size_t size);
void *ef_realloc(void *p, size_t n);
char *ef_strdup(const char *s);
char *ef_strndup(const char *s, size_t n);

#endif
