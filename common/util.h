/*
 * util.h: small helpers every input reader uses: reading a whole file,
 * strict number parsing, ISO-8601 timestamps, quoting user text in error
 * messages, and "did you mean" suggestions; a growable output buffer with
 * JSON and shell quoting.
 */
#ifndef EF_UTIL_H
#define EF_UTIL_H

/* efplan's version: --version, the client's User-Agent, /healthz. */
#ifndef EFPLAN_VERSION
#define EFPLAN_VERSION "0.1.0"
#endif

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Largest time, iteration count or duration efplan accepts: 10^15 (about
 * 31 million years in seconds), so sums and products stay far from int64
 * overflow. */
#define EF_MAX_I64 1000000000000000LL

/* Read the whole file at 'path' into a NUL-terminated heap buffer. On
 * success *buf (free with free()) and *len are set. Only regular files
 * (or symbolic links to one) are read: a directory, FIFO, socket or
 * device is refused before it is opened, so a FIFO never blocks the
 * reader. Errors (EF_E_INPUT) name the path: missing file, not a regular
 * file ("is a FIFO (expected a regular file)"), unreadable, over 1 GiB.
 * The path "-" is standard input (whatever it is), read once per
 * process: a second "-" is an error (EF_E_INPUT). */
int ef_read_file(const char *path, char **buf, size_t *len, ef_err *e);

/*
 * ef_write_file_atomic: write 'len' bytes to 'path' atomically, the one
 * way efplan writes a file. The bytes go to a new temporary file in the
 * target's directory, ".NAME.tmp.XXXXXX" (XXXXXX random), created with
 * O_EXCL | O_NOFOLLOW so that no file or symbolic link planted under a
 * name is ever opened, with the mode a plain create gives under the
 * umask, or the permission bits of the file it replaces; then fsync and
 * rename over the target. Readers see the old file or the new one, never
 * a part.
 *
 * The target is 'path', or, when 'path' is a symbolic link, where its
 * chain of links ends (relative links from their own directory): the
 * link is written through and stays a link; a dangling link creates its
 * target. Only a regular file is ever replaced.
 *
 * Errors, naming 'path' (and the link's target): "-" or an empty path
 * (EF_E_USAGE: standard output is the caller's business); the target
 * exists and is not a regular file (a directory, device, FIFO, socket;
 * EF_E_INTERNAL, as every output error); the temporary cannot be
 * created, written or renamed (EF_E_INTERNAL). The temporary is removed
 * then, and nothing is left at 'path' that was not there before. After
 * the rename the directory is synced (fsync), so the new name survives a
 * power loss; should that fail, the error says so ("written, but its
 * directory could not be synced") and the new file is in place.
 *
 * A process killed between creating the temporary and the rename (kill
 * -9, a crash, a power loss) leaves its ".NAME.tmp.XXXXXX" behind; every
 * failure that returns removes it.
 */
int ef_write_file_atomic(const char *path, const char *data, size_t len,
                         ef_err *e);

/*
 * ef_write_file_with: ef_write_file_atomic (the same steps, checks and
 * errors), the bytes written by 'fill' instead of taken from memory:
 * fill(fd, tmp, arg, e) writes the whole content to the temporary, open
 * for writing as 'fd', or to the file named 'tmp' (for a library that
 * only writes to a path; the name is the freshly created temporary's).
 * It returns EF_OK, or EF_ERR with 'e' filled (its message is kept, the
 * temporary is removed and the target is left as it was). The one
 * implementation of atomic writes: ef_write_file_atomic is this with a
 * fill that writes its bytes.
 */
typedef int (*ef_fill_fn)(int fd, const char *tmp, void *arg, ef_err *e);
int ef_write_file_with(const char *path, ef_fill_fn fill, void *arg,
                       ef_err *e);

/*
 * ef_lock_file: take an exclusive lock on the lock file at 'path' (an
 * flock, waiting for whoever holds it), creating it (mode 0644) when it
 * is missing; a symlink at 'path' is refused (O_NOFOLLOW). Returns the
 * descriptor that holds the lock (>= 0; release with ef_unlock_file, or
 * by exiting), or -1 with *e filled (EF_E_INTERNAL, naming the path: the
 * file cannot be created or opened, or the lock cannot be taken). The
 * lock file itself is never removed: removing it would let two processes
 * lock two different files of one name.
 */
int ef_lock_file(const char *path, ef_err *e);

/* Release and close a descriptor from ef_lock_file; -1 is ignored. */
void ef_unlock_file(int fd);

/* Result of the strict number parsers. */
typedef enum ef_numerr {
    EF_NUM_OK = 0,
    EF_NUM_EMPTY,    /* nothing there */
    EF_NUM_SYNTAX,   /* not a number (or trailing garbage) */
    EF_NUM_RANGE,    /* a number, but outside [min, max] or overflowing */
    EF_NUM_NOTFINITE /* nan or inf */
} ef_numerr;

/* Parse a decimal integer (optional leading '+' or '-', digits only, no
 * spaces, no exponent) and check min <= value <= max. */
ef_numerr ef_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* Parse a finite decimal floating-point number (digits, '.', exponent;
 * no hex, no inf/nan: those give EF_NUM_NOTFINITE or EF_NUM_SYNTAX). */
ef_numerr ef_parse_double(const char *s, double *out);

/* Parse an ISO-8601 UTC date-time "YYYY-MM-DDTHH:MM[:SS[.fff]]" followed by
 * "Z" or an offset "+HH:MM"/"-HH:MM" into Unix seconds (fractions are
 * rounded down). A space may stand for 'T'. A time without a zone is
 * rejected. Returns EF_OK or EF_ERR (with a reason in 'why', if given). */
int ef_parse_iso8601(const char *s, int64_t *out, const char **why);

/* The UTF-8 character at s[0..n): its length in bytes (1 to 4) and its
 * code point in *cp, or 0 when the bytes there are not valid UTF-8 (a
 * stray continuation byte, a sequence cut short, an overlong form, a
 * surrogate, beyond U+10FFFF). n >= 1. */
int ef_utf8_char(const char *s, size_t n, uint32_t *cp);

/* 1 iff code point cp is a control character: C0 (U+0000..U+001F), DEL
 * (U+007F) or C1 (U+0080..U+009F; U+009B is a terminal's CSI). */
int ef_is_control(uint32_t cp);

/* Copy 's' into 'dst' for use inside an error message: at most ~40
 * bytes, with "..." when cut. Printable ASCII and valid UTF-8 characters
 * are kept (never cut in the middle); quotes, backslashes, control
 * characters and bytes that are not valid UTF-8 are escaped as \xNN,
 * so the message is one line a terminal prints as it is. */
const char *ef_quote(const char *s, char *dst, size_t dstlen);

/* Levenshtein distance of two short strings, capped at 'cap'+1. */
int ef_edit_distance(const char *a, const char *b, int cap);

/* Among 'n' candidate words, the one closest to 'word' when it is close
 * enough to be a likely typo (distance <= 2, or one is a prefix of the
 * other); NULL otherwise. Ties go to the earlier candidate. */
const char *ef_suggest(const char *word, const char *const *cands, int n);

/* A growable NUL-terminated string for writing output files. Start with
 * {0}; free b->s when done. */
typedef struct ef_buf {
    char *s;
    size_t n, cap;
} ef_buf;

/* Make room for 'more' bytes (plus the NUL) after b->n. */
void ef_buf_grow(ef_buf *b, size_t more);
/* Append a string; append printf-style text. */
void ef_buf_put(ef_buf *b, const char *s);
void ef_buf_printf(ef_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append 's' as a JSON string literal (quotes, escapes). */
void ef_buf_json_str(ef_buf *b, const char *s);

/* Append 's' as one POSIX sh word in single quotes: every byte stands for
 * itself inside them except the quote, which is written as '\'' (close,
 * escaped quote, reopen). Safe for every byte 1..255 (sh reads the word
 * back as exactly 's'), for the empty string (''), and wherever a word may
 * stand, command name and assignment value included. The one quoting of
 * the executor: the Slurm batch script and the dry run's lines. */
void ef_sh_quote(ef_buf *b, const char *s);

/* Append 's' as a sh word for people to read: bare when it is not empty and
 * every byte is a letter, digit or one of _ - . / = : , + @ % (none of them
 * special to sh, so the bare word reads back as 's' in any argument or
 * assignment-value position), else as ef_sh_quote writes it. A bare word
 * with '=' stands for an assignment when it comes before the command name:
 * quote such a word with ef_sh_quote. */
void ef_sh_word(ef_buf *b, const char *s);

/* The first grid point now + k*slot (k >= 0) that is >= x; now if x <= now. */
int64_t ef_align_up(int64_t now, int64_t x, int slot);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals only
 * (timeouts, waits, measured run times), never a time of day. */
double ef_mono_seconds(void);

struct timespec;
/* *ts = the wall clock (CLOCK_REALTIME) 'seconds' (>= 0) from now: the
 * deadline pthread_cond_timedwait takes for a wait of that long. */
void ef_abstime_in(struct timespec *ts, double seconds);

/* 3 if buf starts with a UTF-8 byte order mark, else 0. */
size_t ef_bom_len(const char *buf, size_t len);

/* Return 1 if 'x' is a positive power of two. */
int ef_is_pow2(int64_t x);

/* ef_cmp_strp: qsort / bsearch comparison of two elements that are
 * strings (const char *), in strcmp order. */
int ef_cmp_strp(const void *a, const void *b);

/* ef_rank: give each item 0..n-1 its place in the order 'cmp' sets
 * (qsort_r's comparison, called on pointers to two item indices, with
 * ctx): rank[i] is 0 for the first, and items that compare equal share a
 * rank. So a fixed order can later be compared as two integers. */
void ef_rank(int n, int (*cmp)(const void *, const void *, void *),
             void *ctx, int *rank);

/* ef_sort_ints: sort a[0..n-1] ascending, a list that is mostly sorted
 * already (a sorted list with a few items added or moved) in O(n) per
 * item out of place: the items out of order are taken out and put back
 * by binary search; a list far from sorted is sorted by qsort. The same
 * result as qsort with an integer comparison, for any input. */
void ef_sort_ints(int *a, int n);

#endif
