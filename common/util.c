/* util.c: file reading, strict number parsing, timestamps (see util.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define EF_MAX_FILE (1L << 30)

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* Read all of open 'fd' ('hint': its size, 0 unknown) into *buf and *len;
 * closes fd unless it is standard input. Errors name 'path'. */
static int read_fd(int fd, const char *path, off_t hint, char **buf,
                   size_t *len, ef_err *e)
{
    /* the size is a hint: the file may grow while it is read, and files
     * of /proc say 0 */
    size_t cap = hint > 0 ? (size_t)hint + 1 : 4096;
    if (hint > EF_MAX_FILE) {
        if (fd != 0)
            close(fd);
        return ef_fail(e, EF_E_INPUT, "%s: file too large (over 1 GiB)", path);
    }
    char *b = ef_malloc(cap);
    size_t n = 0;
    for (;;) {
        /* a pipe or standard input is held to the same limit as a file:
         * never more than EF_MAX_FILE + 1 bytes read or kept */
        if (n > (size_t)EF_MAX_FILE) {
            free(b);
            if (fd != 0)
                close(fd);
            return ef_fail(e, EF_E_INPUT, "%s: file too large (over 1 GiB)",
                           path);
        }
        if (n + 1 >= cap) {
            cap = cap > (size_t)EF_MAX_FILE / 2 ? (size_t)EF_MAX_FILE + 2
                                                : cap * 2;
            b = ef_realloc(b, cap);
        }
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            free(b);
            if (fd != 0)
                close(fd);
            return ef_fail(e, EF_E_INPUT, "%s: cannot read: %s", path,
                           strerror(err));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (fd != 0)
        close(fd);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return EF_OK;
}

int ef_read_file(const char *path, char **buf, size_t *len, ef_err *e)
{
    *buf = NULL;
    *len = 0;
    if (strcmp(path, "-") == 0) {
        /* standard input, whatever it is (a pipe, a file), read once */
        static int stdin_read;
        if (stdin_read++)
            return ef_fail(e, EF_E_INPUT, "-: standard input is read once "
                           "(\"-\" given for two inputs)");
        return read_fd(0, "-", 0, buf, len, e);
    }
    /* Look before opening: opening a FIFO waits for a writer, opening a
     * device may do anything. */
    struct stat st;
    if (stat(path, &st) != 0)
        return ef_fail(e, EF_E_INPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ef_fail(e, EF_E_INPUT, "%s: is %s (expected a regular file)",
                       path, file_kind(st.st_mode));
    /* O_NONBLOCK: should the name have become a FIFO since, open returns
     * at once and fstat below refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ef_fail(e, EF_E_INPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return ef_fail(e, EF_E_INPUT, "%s: cannot stat: %s", path,
                       strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ef_fail(e, EF_E_INPUT, "%s: is %s (expected a regular file)",
                       path, file_kind(st.st_mode));
    }
    return read_fd(fd, path, st.st_size, buf, len, e);
}

/* Fill r[0..n) with bytes nobody can predict (getrandom). */
static int random_bytes(unsigned char *r, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(r + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* Create the temporary file for 'target' in the target's directory:
 * ".NAME.tmp.XXXXXX" (NAME cut to 200 bytes, XXXXXX random letters and
 * digits), created with O_EXCL | O_NOFOLLOW (a name that exists, a
 * symbolic link included, is never opened: another name is drawn) and
 * mode 0666, so the umask (or the directory's default ACL) gives it the
 * mode a plain create would. Returns the descriptor and *tmp (heap), or
 * -1 with errno set. */
static int create_temp(const char *target, char **tmp)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const char *slash = strrchr(target, '/');
    size_t dl = slash ? (size_t)(slash - target) + 1 : 0;
    size_t bl = strlen(target + dl);
    if (bl > 200)
        bl = 200;
    size_t n = dl + bl + 16;
    char *t = ef_malloc(n);
    int fd = -1, err = EEXIST;
    for (int tries = 0; tries < 100 && fd < 0 && err == EEXIST; tries++) {
        unsigned char r[6];
        char sfx[7];
        if (random_bytes(r, sizeof r) != 0) {
            err = errno ? errno : EIO;
            break;
        }
        for (size_t k = 0; k < sizeof r; k++)
            sfx[k] = digits[r[k] % (sizeof digits - 1)];
        sfx[6] = '\0';
        snprintf(t, n, "%.*s.%.*s.tmp.%s", (int)dl, target, (int)bl,
                 target + dl, sfx);
        fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0666);
        if (fd < 0)
            err = errno;
    }
    if (fd < 0) {
        free(t);
        errno = err;
        return -1;
    }
    *tmp = t;
    return fd;
}

/* The contents of symbolic link 'link' (heap), or NULL with errno. */
static char *read_link(const char *link, size_t hint)
{
    size_t cap = hint > 0 ? hint + 1 : 256;
    for (;;) {
        char *l = ef_malloc(cap);
        ssize_t r = readlink(link, l, cap);
        if (r < 0) {
            int err = errno;
            free(l);
            errno = err;
            return NULL;
        }
        if ((size_t)r < cap) {
            l[r] = '\0';
            return l;
        }
        free(l);
        cap *= 2;
    }
}

#define EF_MAX_LINKS 40

/* The file a write to 'path' replaces: 'path' itself, or where its chain
 * of symbolic links ends (a relative link is taken from the link's own
 * directory). *exists: something is there (described by *st); a dangling
 * link ends at a name that does not exist yet. Heap string, or NULL with
 * *e filled (EF_E_INTERNAL, naming 'path'). */
static char *write_target(const char *path, struct stat *st, int *exists,
                          ef_err *e)
{
    char *cur = ef_strdup(path);
    for (int hops = 0;; hops++) {
        if (lstat(cur, st) != 0) {
            int err = errno;
            if (err == ENOENT) {
                *exists = 0;
                return cur;
            }
            ef_fail(e, EF_E_INTERNAL, "%s: cannot write: %s", path,
                    strerror(err));
            free(cur);
            return NULL;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            return cur;
        }
        char *l = hops < EF_MAX_LINKS ? read_link(cur, (size_t)st->st_size)
                                      : NULL;
        if (!l) {
            ef_fail(e, EF_E_INTERNAL, "%s: cannot write: %s", path,
                    hops < EF_MAX_LINKS ? strerror(errno)
                                        : "too many levels of symbolic links");
            free(cur);
            return NULL;
        }
        const char *slash = strrchr(cur, '/');
        if (l[0] != '/' && slash) {
            size_t dl = (size_t)(slash - cur) + 1, ll = strlen(l);
            char *next = ef_malloc(dl + ll + 1);
            memcpy(next, cur, dl);
            memcpy(next + dl, l, ll + 1);
            free(l);
            l = next;
        }
        free(cur);
        cur = l;
    }
}

/* fsync the directory 'target' is in, so that its new name survives a
 * power loss. Returns 0 or an errno (EINVAL, a file system that cannot
 * sync directories, counts as done). */
static int sync_dir(const char *target)
{
    const char *slash = strrchr(target, '/');
    char *dir = slash ? ef_strndup(target, (size_t)(slash - target) + 1)
                      : ef_strdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
    free(dir);
    if (fd < 0)
        return errno;
    if (fsync(fd) != 0 && errno != EINVAL)
        err = errno;
    close(fd);
    return err;
}

int ef_write_file_with(const char *path, ef_fill_fn fill, void *arg,
                       ef_err *e)
{
    if (strcmp(path, "-") == 0)
        return ef_fail(e, EF_E_USAGE, "-: this output cannot go to standard "
                       "output (write ./- for a file named \"-\")");
    if (path[0] == '\0')
        return ef_fail(e, EF_E_USAGE, "an empty output path");
    struct stat st;
    int exists;
    char *target = write_target(path, &st, &exists, e);
    if (!target)
        return EF_ERR;
    /* how messages name the target when a link leads there */
    int via = strcmp(target, path) != 0;
    const char *tq = via ? target : "", *to = via ? " (the link's target " : "",
               *tc = via ? ")" : "";
    if (exists && !S_ISREG(st.st_mode)) {
        int rc = ef_fail(e, EF_E_INTERNAL, "%s%s%s%s: is %s (expected a "
                         "regular file: efplan replaces only regular files)",
                         path, to, tq, tc, file_kind(st.st_mode));
        free(target);
        return rc;
    }
    char *tmp = NULL;
    int fd = create_temp(target, &tmp);
    if (fd < 0) {
        int rc = ef_fail(e, EF_E_INTERNAL, "%s%s%s%s: cannot write: cannot "
                         "create a temporary file in its directory: %s", path,
                         to, tq, tc, strerror(errno));
        free(target);
        return rc;
    }
    const char *fail = NULL;
    int err = 0, filled = 0;
    /* replacing a file keeps its permissions */
    if (exists && fchmod(fd, st.st_mode & 0777) != 0) {
        fail = "cannot write";
        err = errno;
    }
    if (!fail && fill(fd, tmp, arg, e) != EF_OK)
        filled = -1; /* fill's own message */
    if (!fail && !filled && fsync(fd) != 0) {
        fail = "write failed";
        err = errno;
    }
    if (close(fd) != 0 && !fail && !filled) {
        fail = "write failed";
        err = errno;
    }
    if (!fail && !filled && rename(tmp, target) != 0) {
        fail = "cannot rename into place";
        err = errno;
    }
    int rc = EF_OK;
    if (fail || filled) {
        unlink(tmp);
        rc = filled ? EF_ERR
                    : ef_fail(e, EF_E_INTERNAL, "%s%s%s%s: %s: %s", path, to,
                              tq, tc, fail, strerror(err));
    } else if ((err = sync_dir(target)) != 0) {
        rc = ef_fail(e, EF_E_INTERNAL, "%s%s%s%s: written, but its directory "
                     "could not be synced: %s", path, to, tq, tc,
                     strerror(err));
    }
    free(tmp);
    free(target);
    return rc;
}

/* The bytes of ef_write_file_atomic. */
typedef struct mem_fill {
    const char *data;
    size_t len;
    const char *path;
} mem_fill;

static int fill_mem(int fd, const char *tmp, void *arg, ef_err *e)
{
    const mem_fill *m = arg;
    size_t off = 0;
    (void)tmp;
    while (off < m->len) {
        ssize_t w = write(fd, m->data + off, m->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return ef_fail(e, EF_E_INTERNAL, "%s: write failed: %s", m->path,
                           strerror(errno));
        off += (size_t)w;
    }
    return EF_OK;
}

int ef_write_file_atomic(const char *path, const char *data, size_t len,
                         ef_err *e)
{
    mem_fill m = {data, len, path};
    return ef_write_file_with(path, fill_mem, &m, e);
}

ef_numerr ef_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '\0')
        return EF_NUM_EMPTY;
    if (*p == '+' || *p == '-')
        neg = (*p++ == '-');
    if (!isdigit((unsigned char)*p))
        return EF_NUM_SYNTAX;
    uint64_t v = 0;
    int over = 0;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (*p != '\0')
        return EF_NUM_SYNTAX;
    /* -9223372036854775808 (INT64_MIN) has no positive counterpart. */
    if (over || v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return EF_NUM_RANGE;
    int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;
    if (x < min || x > max)
        return EF_NUM_RANGE;
    *out = x;
    return EF_NUM_OK;
}

ef_numerr ef_parse_double(const char *s, double *out)
{
    if (*s == '\0')
        return EF_NUM_EMPTY;
    const char *q = s;
    if (*q == '+' || *q == '-')
        q++;
    if (strncasecmp(q, "nan", 3) == 0 || strncasecmp(q, "inf", 3) == 0)
        return EF_NUM_NOTFINITE;
    /* Only plain decimal syntax: reject hex floats and stray letters. */
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
            return EF_NUM_SYNTAX;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return EF_NUM_SYNTAX;
    if (errno == ERANGE || !isfinite(v))
        return EF_NUM_RANGE;
    *out = v;
    return EF_NUM_OK;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return 0;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 1;
}

int ef_parse_iso8601(const char *s, int64_t *out, const char **why)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *p = s;
    int y, mo, d, h, mi, se = 0;
    const char *w = "expected YYYY-MM-DDTHH:MM:SSZ or an offset like +02:00";
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) ||
        *p++ != '-' || !digits(&p, 2, &d))
        goto bad;
    if (*p != 'T' && *p != 't' && *p != ' ') {
        if (*p == '\0')
            w = "a date without a time; add a time and zone, e.g. "
                "T00:00:00Z";
        goto bad;
    }
    p++;
    if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
        goto bad;
    if (*p == ':') {
        p++;
        if (!digits(&p, 2, &se))
            goto bad;
        if (*p == '.' || *p == ',') {
            p++;
            if (!isdigit((unsigned char)*p))
                goto bad;
            while (isdigit((unsigned char)*p))
                p++;
        }
    }
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
        (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) ||
        h > 23 || mi > 59 || se > 60) {
        w = "date or time out of range";
        goto bad;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (!digits(&p, 2, &oh))
            goto bad;
        if (*p == ':')
            p++;
        if (!digits(&p, 2, &om) || oh > 23 || om > 59)
            goto bad;
        off = sign * (oh * 3600 + om * 60);
    } else {
        w = *p == '\0' ? "no time zone; add Z (UTC) or an offset like +02:00"
                       : "unexpected text after the time";
        goto bad;
    }
    if (*p != '\0') {
        w = "unexpected text after the time zone";
        goto bad;
    }
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    return EF_OK;
bad:
    if (why)
        *why = w;
    return EF_ERR;
}

int ef_utf8_char(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    int len;
    uint32_t c, min;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    if (u[0] >= 0xc2 && u[0] <= 0xdf) {
        len = 2;
        c = u[0] & 0x1f;
        min = 0x80;
    } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
        len = 3;
        c = u[0] & 0x0f;
        min = 0x800;
    } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
        len = 4;
        c = u[0] & 0x07;
        min = 0x10000;
    } else {
        return 0; /* a continuation byte, 0xc0, 0xc1 or 0xf5..0xff */
    }
    if (n < (size_t)len)
        return 0;
    for (int k = 1; k < len; k++) {
        if ((u[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (u[k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

int ef_is_control(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
}

const char *ef_quote(const char *s, char *dst, size_t dstlen)
{
    size_t o = 0, i = 0, n = strlen(s);
    const size_t limit = 40;
    if (dstlen < 8) {
        if (dstlen)
            dst[0] = '\0';
        return dst;
    }
    while (i < n && i < limit) {
        uint32_t cp;
        int l = ef_utf8_char(s + i, n - i, &cp);
        if (l > 0 && !ef_is_control(cp) && cp != '"' && cp != '\\') {
            if (o + (size_t)l + 4 >= dstlen)
                break;
            memcpy(dst + o, s + i, (size_t)l);
            o += (size_t)l;
            i += (size_t)l;
        } else if (l == 2 && o + 9 < dstlen) { /* a C1 control: 2 bytes */
            o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x\\x%02x",
                                  (unsigned char)s[i],
                                  (unsigned char)s[i + 1]);
            i += 2;
        } else if (l != 2 && o + 5 < dstlen) {
            o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x",
                                  (unsigned char)s[i]);
            i++;
        } else {
            break;
        }
    }
    if (i < n && o + 4 < dstlen) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o < dstlen ? o : dstlen - 1] = '\0';
    return dst;
}

int ef_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return cap + 1;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = diag + (tolower((unsigned char)a[i - 1]) !=
                              tolower((unsigned char)b[j - 1]));
            int best = sub;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}

const char *ef_suggest(const char *word, const char *const *cands, int n)
{
    const char *best = NULL;
    int bestd = 3;
    size_t lw = strlen(word);
    for (int i = 0; i < n; i++) {
        int d = ef_edit_distance(word, cands[i], 2);
        size_t lc = strlen(cands[i]);
        if (d > 2 && lw >= 3 && lc >= 3 &&
            (strncmp(word, cands[i], lw < lc ? lw : lc) == 0))
            d = 2;
        if (d < bestd) {
            bestd = d;
            best = cands[i];
        }
    }
    return best;
}

int ef_is_pow2(int64_t x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

void ef_rank(int n, int (*cmp)(const void *, const void *, void *),
             void *ctx, int *rank)
{
    int *ord = ef_malloc((size_t)(n > 0 ? n : 1) * sizeof *ord);
    for (int i = 0; i < n; i++)
        ord[i] = i;
    qsort_r(ord, (size_t)(n > 0 ? n : 0), sizeof *ord, cmp, ctx);
    for (int k = 0, r = 0; k < n; k++) {
        if (k > 0 && cmp(&ord[k - 1], &ord[k], ctx) != 0)
            r++;
        rank[ord[k]] = r;
    }
    free(ord);
}

int ef_cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void ef_sort_ints(int *a, int n)
{
    if (n < 2)
        return;
    /* a non-decreasing run kept in place (front of a), the items that
     * break it set aside; too many set aside: not mostly sorted */
    int lim = n / 8 + 16;
    int *out = ef_malloc((size_t)lim * sizeof *out);
    int nk = 1, no = 0;
    for (int i = 1; i < n; i++) {
        if (a[i] >= a[nk - 1]) {
            a[nk++] = a[i];
        } else if (no < lim) {
            out[no++] = a[i];
        } else { /* give back what was set aside, sort the whole */
            memcpy(a + nk, out, (size_t)no * sizeof *a); /* nk + no = i */
            qsort(a, (size_t)n, sizeof *a, cmp_ints);
            free(out);
            return;
        }
    }
    qsort(out, (size_t)no, sizeof *out, cmp_ints);
    /* merge from the back: a[0..nk-1] and out[0..no-1] into a[0..n-1] */
    for (int i = nk - 1, j = no - 1, k = n - 1; j >= 0; k--)
        a[k] = i >= 0 && a[i] > out[j] ? a[i--] : out[j--];
    free(out);
}

void ef_buf_grow(ef_buf *b, size_t more)
{
    if (b->n + more + 1 <= b->cap)
        return;
    while (b->n + more + 1 > b->cap)
        b->cap = b->cap ? b->cap * 2 : 1 << 16;
    b->s = ef_realloc(b->s, b->cap);
}

void ef_buf_put(ef_buf *b, const char *s)
{
    size_t l = strlen(s);
    ef_buf_grow(b, l);
    memcpy(b->s + b->n, s, l + 1);
    b->n += l;
}

void ef_buf_printf(ef_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int l = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    ef_buf_grow(b, (size_t)l);
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)l + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)l;
}

int64_t ef_align_up(int64_t now, int64_t x, int slot)
{
    if (x <= now)
        return now;
    return now + (x - now + slot - 1) / slot * slot;
}

size_t ef_bom_len(const char *buf, size_t len)
{
    return len >= 3 && (unsigned char)buf[0] == 0xEF &&
                   (unsigned char)buf[1] == 0xBB &&
                   (unsigned char)buf[2] == 0xBF
               ? 3 : 0;
}

void ef_buf_json_str(ef_buf *b, const char *s)
{
    ef_buf_put(b, "\"");
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* copy a run of bytes that need no escape at once */
        const unsigned char *q = p;
        while (*q && *q != '"' && *q != '\\' && *q >= 0x20)
            q++;
        if (q > p) {
            size_t n = (size_t)(q - p);
            ef_buf_grow(b, n);
            memcpy(b->s + b->n, p, n);
            b->n += n;
            b->s[b->n] = '\0';
            p = q;
            continue;
        }
        if (*p == '"' || *p == '\\')
            ef_buf_printf(b, "\\%c", *p);
        else
            ef_buf_printf(b, "\\u%04x", *p);
        p++;
    }
    ef_buf_put(b, "\"");
}

void ef_sh_quote(ef_buf *b, const char *s)
{
    ef_buf_put(b, "'");
    for (const char *c = s; *c; c++) {
        if (*c == '\'')
            ef_buf_put(b, "'\\''");
        else {
            char one[2] = {*c, 0};
            ef_buf_put(b, one);
        }
    }
    ef_buf_put(b, "'");
}

void ef_sh_word(ef_buf *b, const char *s)
{
    int bare = s[0] != '\0';
    for (const char *c = s; *c && bare; c++)
        bare = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789_-./=:,+@%", *c) != NULL;
    if (bare)
        ef_buf_put(b, s);
    else
        ef_sh_quote(b, s);
}

int ef_lock_file(const char *path, ef_err *e)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        ef_fail(e, EF_E_INTERNAL, "%s: cannot open the lock file: %s", path,
                strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR)
            continue;
        int err = errno;
        close(fd);
        ef_fail(e, EF_E_INTERNAL, "%s: cannot lock: %s", path,
                strerror(err));
        return -1;
    }
    return fd;
}

void ef_unlock_file(int fd)
{
    if (fd < 0)
        return;
    flock(fd, LOCK_UN);
    close(fd);
}

double ef_mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ef_abstime_in(struct timespec *ts, double seconds)
{
    clock_gettime(CLOCK_REALTIME, ts);
    double whole = floor(seconds);
    long ns = ts->tv_nsec + (long)((seconds - whole) * 1e9);
    ts->tv_sec += (time_t)whole + ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
}
