/* test_util.c: strict number parsing, ISO-8601 times, quoting (error
 * messages, sh words), suggestions and file helpers (common/util.h). */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sys/wait.h>
#include <time.h>

#include "common/lat.h"
#include "common/util.h"

#include <signal.h>
#include <sys/resource.h>

/* fsync as this program sees it (it takes the place of libc's for the
 * library code linked in): counts the directories synced, and the last
 * one's inode, then syncs with fdatasync. */
static int dir_syncs;
static ino_t dir_synced;

int fsync(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        dir_syncs++;
        dir_synced = st.st_ino;
    }
    return fdatasync(fd);
}

/* ---- ef_parse_i64 ------------------------------------------------------- */

static ef_numerr i64(const char *s, int64_t *out)
{
    return ef_parse_i64(s, INT64_MIN, INT64_MAX, out);
}

static void test_i64_ok(void **state)
{
    int64_t v = 0;
    assert_int_equal(i64("42", &v), EF_NUM_OK);
    assert_true(v == 42);
    assert_int_equal(i64("0", &v), EF_NUM_OK);
    assert_true(v == 0);
    assert_int_equal(i64("-17", &v), EF_NUM_OK);
    assert_true(v == -17);
    assert_int_equal(i64("+5", &v), EF_NUM_OK);
    assert_true(v == 5);
    v = 99;
    assert_int_equal(i64("-0", &v), EF_NUM_OK);
    assert_true(v == 0);
}

static void test_i64_empty_and_syntax(void **state)
{
    int64_t v = 0;
    assert_int_equal(i64("", &v), EF_NUM_EMPTY);
    const char *bad[] = {"12a", "1e3", " 1", "1 ", "+", "-", "1.0", "0x10",
                         "++1", "+-1", "1,000", "a", "\t3", "1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (i64(bad[i], &v) != EF_NUM_SYNTAX) {
            print_error("    \"%s\" is not EF_NUM_SYNTAX\n", bad[i]);
            fail();
        }
    }
}

static void test_i64_int64_limits(void **state)
{
    int64_t v = 0;
    assert_int_equal(i64("9223372036854775807", &v), EF_NUM_OK);
    assert_true(v == INT64_MAX);
    assert_int_equal(i64("9223372036854775808", &v), EF_NUM_RANGE);
    assert_int_equal(i64("99999999999999999999", &v), EF_NUM_RANGE);
    assert_int_equal(i64("18446744073709551616", &v), EF_NUM_RANGE);
    assert_int_equal(i64("-9223372036854775807", &v), EF_NUM_OK);
    assert_true(v == -INT64_MAX);
    /* INT64_MIN is a valid int64 and inside [INT64_MIN, INT64_MAX]. */
    assert_int_equal(i64("-9223372036854775808", &v), EF_NUM_OK);
    assert_true(v == INT64_MIN);
    assert_int_equal(i64("-9223372036854775809", &v), EF_NUM_RANGE);
    assert_int_equal(i64("-99999999999999999999", &v), EF_NUM_RANGE);
}

static void test_i64_bounds(void **state)
{
    int64_t v = 0;
    assert_int_equal(ef_parse_i64("1", 1, 4, &v), EF_NUM_OK);
    assert_true(v == 1);
    assert_int_equal(ef_parse_i64("4", 1, 4, &v), EF_NUM_OK);
    assert_true(v == 4);
    assert_int_equal(ef_parse_i64("0", 1, 4, &v), EF_NUM_RANGE);
    assert_int_equal(ef_parse_i64("5", 1, 4, &v), EF_NUM_RANGE);
    assert_int_equal(ef_parse_i64("-1", 0, 10, &v), EF_NUM_RANGE);
    assert_int_equal(ef_parse_i64("-0", 0, 10, &v), EF_NUM_OK);
    assert_int_equal(ef_parse_i64("1000000000000000", 0, EF_MAX_I64, &v),
                     EF_NUM_OK);
    assert_true(v == EF_MAX_I64);
    assert_int_equal(ef_parse_i64("1000000000000001", 0, EF_MAX_I64, &v),
                     EF_NUM_RANGE);
    /* Syntax is judged before range. */
    assert_int_equal(ef_parse_i64("5x", 1, 4, &v), EF_NUM_SYNTAX);
}

/* ---- ef_parse_double ---------------------------------------------------- */

static void test_double_ok(void **state)
{
    struct { const char *s; double v; } ok[] = {
        {"1.5", 1.5}, {"-2", -2.0}, {"+3.25", 3.25}, {"1e3", 1000.0},
        {"2.5E-1", 0.25}, {".5", 0.5}, {"5.", 5.0}, {"0", 0.0},
        {"46.914146350193334", 46.914146350193334}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        double v = -1;
        if (ef_parse_double(ok[i].s, &v) != EF_NUM_OK || v != ok[i].v) {
            print_error("    \"%s\" did not parse to %g\n", ok[i].s, ok[i].v);
            fail();
        }
    }
}

static void test_double_rejects(void **state)
{
    double v = 0;
    assert_int_equal(ef_parse_double("", &v), EF_NUM_EMPTY);
    const char *nf[] = {"nan", "NaN", "inf", "-inf", "+inf", "Infinity",
                        "-nan", "INF"};
    for (size_t i = 0; i < sizeof nf / sizeof *nf; i++)
        if (ef_parse_double(nf[i], &v) != EF_NUM_NOTFINITE) {
            print_error("    \"%s\" is not EF_NUM_NOTFINITE\n", nf[i]);
            fail();
        }
    const char *syn[] = {"0x10", "0x1p3", "  ", " 1", "1 ", "1.2.3", "1e",
                         "e5", ".", "-", "1,5", "abc", "12a", "1e+", "--1"};
    for (size_t i = 0; i < sizeof syn / sizeof *syn; i++)
        if (ef_parse_double(syn[i], &v) != EF_NUM_SYNTAX) {
            print_error("    \"%s\" is not EF_NUM_SYNTAX\n", syn[i]);
            fail();
        }
    assert_int_equal(ef_parse_double("1e400", &v), EF_NUM_RANGE);
    assert_int_equal(ef_parse_double("-1e400", &v), EF_NUM_RANGE);
}

/* ---- ef_parse_iso8601 --------------------------------------------------- */

static void iso_ok(const char *s, int64_t want, const char *file, int line)
{
    int64_t v = -1;
    const char *why = NULL;
    if (ef_parse_iso8601(s, &v, &why) != EF_OK) {
        print_error("    \"%s\" rejected: %s\n", s, why ? why : "(no reason)");
        _fail(file, line);
    }
    if (v != want) {
        print_error("    \"%s\" -> %lld, expected %lld\n", s, (long long)v,
                    (long long)want);
        _fail(file, line);
    }
}
#define assert_iso(s, want) iso_ok((s), (want), __FILE__, __LINE__)

static void iso_bad(const char *s, const char *why_sub, const char *file,
                    int line)
{
    int64_t v = 0;
    const char *why = NULL;
    if (ef_parse_iso8601(s, &v, &why) != EF_ERR) {
        print_error("    \"%s\" accepted as %lld\n", s, (long long)v);
        _fail(file, line);
    }
    if (!why || !why[0]) {
        print_error("    \"%s\" rejected without a reason\n", s);
        _fail(file, line);
    }
    if (why_sub)
        tu_contains(why, why_sub, file, line);
}
#define assert_iso_bad(s, sub) iso_bad((s), (sub), __FILE__, __LINE__)

static void test_iso_values(void **state)
{
    assert_iso("1970-01-01T00:00:00Z", 0);
    assert_iso("2021-03-04T00:00:00Z", 1614816000);
    assert_iso("2021-03-04t00:00:00z", 1614816000);
    assert_iso("2021-03-04 00:00:00Z", 1614816000);
    assert_iso("2021-03-04T00:00Z", 1614816000);
    assert_iso("2021-03-04T00:00:01Z", 1614816001);
    assert_iso("2000-02-29T00:00:00Z", 951782400);
    assert_iso("2024-02-29T12:00:00Z", 1709208000);
}

static void test_iso_offsets(void **state)
{
    assert_iso("2021-03-04T02:00:00+02:00", 1614816000);
    assert_iso("2021-03-04T02:00:00+0200", 1614816000);
    assert_iso("2021-03-03T18:30:00-05:30", 1614816000);
    assert_iso("2021-03-03T18:30:00-0530", 1614816000);
    assert_iso("2021-03-04T00:00:00+00:00", 1614816000);
    assert_iso("1970-01-01T01:00:00+01:00", 0);
}

static void test_iso_fraction(void **state)
{
    assert_iso("2021-03-04T00:00:00.999Z", 1614816000);
    assert_iso("2021-03-04T00:00:07.5Z", 1614816007);
    assert_iso("2021-03-04T00:00:07,25+00:00", 1614816007);
    assert_iso_bad("2021-03-04T00:00:00.Z", NULL);
}

static void test_iso_rejects(void **state)
{
    assert_iso_bad("2023-02-29T00:00:00Z", "out of range");
    assert_iso_bad("1900-02-29T00:00:00Z", "out of range");
    assert_iso_bad("2021-13-01T00:00:00Z", "out of range");
    assert_iso_bad("2021-00-10T00:00:00Z", "out of range");
    assert_iso_bad("2021-04-31T00:00:00Z", "out of range");
    assert_iso_bad("2021-03-00T00:00:00Z", "out of range");
    assert_iso_bad("2021-03-04T24:00:00Z", "out of range");
    assert_iso_bad("2021-03-04T23:60:00Z", "out of range");
    /* missing zone, with a reason that says so */
    assert_iso_bad("2021-03-04T00:00:00", "zone");
    assert_iso_bad("2021-03-04T00:00", "zone");
    /* date only */
    assert_iso_bad("2021-03-04", "without a time");
    assert_iso_bad("", NULL);
    assert_iso_bad("1614816000", NULL);
    assert_iso_bad("21-03-04T00:00:00Z", NULL);
    assert_iso_bad("2021/03/04T00:00:00Z", NULL);
    assert_iso_bad("2021-03-04T00:00:00Z ", NULL);
    assert_iso_bad("2021-03-04T00:00:00Zjunk", NULL);
    assert_iso_bad("2021-03-04T00:00:00+2", NULL);
    assert_iso_bad("2021-03-04T00:00:00+24:00", NULL);
    assert_iso_bad("2021-03-04T0:00:00Z", NULL);
    assert_iso_bad("2021-03-04T00:00:00 UTC", NULL);
    assert_iso_bad("2021-03-04T", NULL);
    /* A NULL 'why' is allowed. */
    int64_t v;
    assert_int_equal(ef_parse_iso8601("2021-03-04", &v, NULL), EF_ERR);
}

/* ---- ef_quote ----------------------------------------------------------- */

static void test_quote_plain_and_escapes(void **state)
{
    char q[128];
    assert_string_equal(ef_quote("abc", q, sizeof q), "abc");
    assert_string_equal(ef_quote("", q, sizeof q), "");
    assert_string_equal(ef_quote("a\nb\tc\x01", q, sizeof q),
                        "a\\x0ab\\x09c\\x01");
    assert_string_equal(ef_quote("\x7f", q, sizeof q), "\\x7f");
    /* No raw quote characters end up inside a "quoted" message part. */
    ef_quote("say \"hi\"", q, sizeof q);
    assert_not_contains(q, "\"");
    assert_prefix(q, "say ");
    /* UTF-8 text stays readable. */
    assert_string_equal(ef_quote("r\xc3\xa9sum\xc3\xa9", q, sizeof q),
                        "r\xc3\xa9sum\xc3\xa9");
    /* bytes that are not UTF-8, and C1 controls (CSI), are escaped */
    assert_string_equal(ef_quote("a\xff" "b", q, sizeof q), "a\\xff" "b");
    assert_string_equal(ef_quote("\xc2\x9b" "31m", q, sizeof q),
                        "\\xc2\\x9b" "31m");
    assert_string_equal(ef_quote("\xc0\xaf", q, sizeof q), "\\xc0\\xaf");
    assert_string_equal(ef_quote("x\xe2\x82", q, sizeof q), "x\\xe2\\x82");
    assert_string_equal(ef_quote("\xe2\x82\xac", q, sizeof q),
                        "\xe2\x82\xac");
}

static void test_utf8_char(void **state)
{
    uint32_t cp = 0;
    static const struct {
        const char *s;
        int len;
        uint32_t cp;
    } ok[] = {{"A", 1, 0x41}, {"\x7f", 1, 0x7f}, {"\xc2\x80", 2, 0x80},
              {"\xc3\xa9", 2, 0xe9}, {"\xe2\x82\xac", 3, 0x20ac},
              {"\xef\xbf\xbf", 3, 0xffff}, {"\xf0\x9f\x98\x80", 4, 0x1f600},
              {"\xf4\x8f\xbf\xbf", 4, 0x10ffff}};
    for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
        assert_int_equal(ef_utf8_char(ok[k].s, strlen(ok[k].s), &cp),
                         ok[k].len);
        assert_true(cp == ok[k].cp);
    }
    /* stray continuation, overlong, surrogate, too large, cut short */
    static const char *const bad[] = {"\x80", "\xbf", "\xc0\xaf",
                                      "\xc1\xbf", "\xe0\x80\xaf",
                                      "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "\xf5\x80\x80\x80", "\xff", "\xc3",
                                      "\xe2\x82", "\xc3(", "\xe2\x82("};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        assert_int_equal(ef_utf8_char(bad[k], strlen(bad[k]), &cp), 0);
    /* n bounds the bytes looked at */
    assert_int_equal(ef_utf8_char("\xc3\xa9", 1, &cp), 0);
    assert_true(ef_is_control(0) && ef_is_control(0x1b) &&
                ef_is_control(0x7f) && ef_is_control(0x80) &&
                ef_is_control(0x9b) && ef_is_control(0x9f));
    assert_false(ef_is_control(' ') || ef_is_control('~') ||
                 ef_is_control(0xa0) || ef_is_control(0xe9) ||
                 ef_is_control(0x20ac));
}

static void test_quote_truncates(void **state)
{
    char q[128], in[101], want[64];
    memset(in, 'x', 100);
    in[100] = '\0';
    ef_quote(in, q, sizeof q);
    assert_true(strlen(q) < 60);
    size_t n = strlen(q);
    assert_true(n > 3);
    assert_string_equal(q + n - 3, "...");
    /* what comes before the dots is the start of the text */
    assert_true(strspn(q, "x") == n - 3);
    assert_true(n - 3 >= 20);
    /* text of exactly 40 characters is not cut */
    memset(want, 'y', 40);
    want[40] = '\0';
    assert_string_equal(ef_quote(want, q, sizeof q), want);
    /* a short destination is never overrun and stays terminated */
    char small[16];
    memset(small, '#', sizeof small);
    ef_quote(in, small, sizeof small);
    assert_true(memchr(small, '\0', sizeof small) != NULL);
    assert_prefix(small, "xxxx");
    /* escapes are not split at the end of a short destination */
    char tiny[12];
    ef_quote("\n\n\n\n\n\n\n\n", tiny, sizeof tiny);
    assert_true(memchr(tiny, '\0', sizeof tiny) != NULL);
    size_t tl = strlen(tiny);
    if (tl >= 3 && strcmp(tiny + tl - 3, "...") == 0)
        tl -= 3;
    assert_true(tl > 0 && tl % 4 == 0);
    for (size_t i = 0; i < tl; i += 4)
        assert_memory_equal(tiny + i, "\\x0a", 4);
}

/* ---- ef_suggest, ef_edit_distance --------------------------------------- */

static void test_suggest(void **state)
{
    static const char *const keys[] = {
        "id", "model", "batch_size", "iterations", "submit_time",
        "deadline", "iterations_done", "num_gpu", "duration"};
    int n = (int)(sizeof keys / sizeof *keys);
    const char *s = ef_suggest("iteration", keys, n);
    assert_non_null(s);
    assert_string_equal(s, "iterations");
    s = ef_suggest("modle", keys, n);
    assert_non_null(s);
    assert_string_equal(s, "model");
    s = ef_suggest("dedline", keys, n);
    assert_non_null(s);
    assert_string_equal(s, "deadline");
    s = ef_suggest("Deadline", keys, n);
    assert_non_null(s);
    assert_string_equal(s, "deadline");
    assert_null(ef_suggest("banana", keys, n));
    assert_null(ef_suggest("priority", keys, n));
    assert_null(ef_suggest("x", keys, 0));
}

static void test_edit_distance(void **state)
{
    assert_int_equal(ef_edit_distance("kitten", "sitting", 10), 3);
    assert_int_equal(ef_edit_distance("", "abc", 10), 3);
    assert_int_equal(ef_edit_distance("same", "same", 10), 0);
    /* capped at cap + 1 */
    assert_int_equal(ef_edit_distance("kitten", "sitting", 1), 2);
}

/* ---- ef_is_pow2 ---------------------------------------------------------- */

static void test_is_pow2(void **state)
{
    int64_t yes[] = {1, 2, 4, 8, 64, 1024, 1LL << 40, 1LL << 62};
    int64_t no[] = {0, -1, -2, -8, 3, 6, 12, 1000, INT64_MIN, INT64_MAX,
                    (1LL << 40) + 1};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_true(ef_is_pow2(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_false(ef_is_pow2(no[i]));
}

/* ---- files -------------------------------------------------------------- */

/* ---- ef_sort_ints ------------------------------------------------------- */

static int cmp_plain(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* ef_sort_ints against qsort on one list (copied), element by element */
static void sort_like_qsort(const int *in, int n)
{
    int *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    int *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    for (int i = 0; i < n; i++)
        a[i] = b[i] = in[i];
    ef_sort_ints(a, n);
    qsort(b, (size_t)n, sizeof *b, cmp_plain);
    for (int i = 0; i < n; i++)
        assert_int_equal(a[i], b[i]);
    free(a);
    free(b);
}

static void test_sort_ints(void **state)
{
    (void)state;
    int none[1] = {0};
    sort_like_qsort(none, 0);
    int one[] = {7};
    sort_like_qsort(one, 1);
    /* sorted, with items appended (the simulator's active list after a
     * point's arrivals), an item moved, duplicates, INT_MIN/INT_MAX */
    int app[] = {1, 4, 9, 12, 30, 31, 2, 40, 0};
    sort_like_qsort(app, 9);
    int moved[] = {100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    sort_like_qsort(moved, 11);
    int dup[] = {3, 3, 1, 3, 2, 2, INT_MAX, INT_MIN, 0, INT_MIN};
    sort_like_qsort(dup, 10);
    /* long lists: nearly sorted (the in-place path), reversed and
     * scrambled (past the set-aside limit: qsort), and the limit's edge */
    enum { N = 5000 };
    int *v = malloc(N * sizeof *v);
    for (int k = 0; k < 4; k++) {
        unsigned x = 12345u + (unsigned)k;
        for (int i = 0; i < N; i++) {
            x = x * 1103515245u + 12345u;
            v[i] = k == 0   ? (i % 97 == 0 ? (int)(x >> 8) % N : i)
                   : k == 1 ? N - i
                   : k == 2 ? (int)(x >> 4)
                            : (i < N - (N / 8 + 16) ? i : N - i);
        }
        sort_like_qsort(v, N);
    }
    free(v);
}

static void test_write_atomic(void **state)
{
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out.json", dir);
    ef_err e = {0};
    const char *text = "{\"a\": 1}\n";
    assert_ok(ef_write_file_atomic(path, text, strlen(text), &e), e);
    char *buf;
    size_t len;
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_int_equal(len, strlen(text));
    assert_string_equal(buf, text);
    free(buf);
    /* only the target is left: no temporary file */
    assert_int_equal(tu_count_entries(dir), 1);
    /* replacing an existing file */
    assert_ok(ef_write_file_atomic(path, "xy", 2, &e), e);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_int_equal(len, 2);
    assert_string_equal(buf, "xy");
    free(buf);
    assert_int_equal(tu_count_entries(dir), 1);
    /* an empty file, and bytes with NULs */
    assert_ok(ef_write_file_atomic(path, "a\0b", 3, &e), e);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_int_equal(len, 3);
    assert_memory_equal(buf, "a\0b", 3);
    free(buf);
    assert_ok(ef_write_file_atomic(path, "", 0, &e), e);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_int_equal(len, 0);
    free(buf);
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
}

static void test_write_atomic_missing_dir(void **state)
{
    char dir[256], sub[512], path[600];
    tu_tmpdir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/nope", dir);
    snprintf(path, sizeof path, "%s/out.csv", sub);
    ef_err e = {0};
    int rc = ef_write_file_atomic(path, "x\n", 2, &e);
    assert_int_equal(rc, EF_ERR);
    assert_int_not_equal(e.kind, EF_E_NONE);
    assert_prefix(e.msg, path);
    /* nothing was created anywhere */
    struct stat st;
    assert_int_not_equal(stat(sub, &st), 0);
    assert_int_equal(tu_count_entries(dir), 0);
    tu_rmtree(dir);
}

static void test_write_atomic_onto_directory(void **state)
{
    /* the final rename fails: an error, and no temporary file is left */
    char dir[256], sub[512];
    tu_tmpdir(dir, sizeof dir);
    tu_join(sub, sizeof sub, dir, "out");
    assert_int_equal(mkdir(sub, 0755), 0);
    ef_err e = {0};
    assert_int_equal(ef_write_file_atomic(sub, "x\n", 2, &e), EF_ERR);
    assert_int_not_equal(e.kind, EF_E_NONE);
    assert_prefix(e.msg, sub);
    assert_int_equal(tu_count_entries(dir), 1);
    assert_int_equal(tu_count_entries(sub), 0);
    tu_rmtree(dir);
}

/* Symbolic links planted under the names of the temporary files of the
 * old scheme (PATH.tmp.PID: this process's id, and the ids after it) and
 * pointing at a victim: the write must not open them, the victim keeps
 * its bytes and the links stay as they were. */
static void test_write_atomic_planted_symlinks(void **state)
{
    char dir[256], path[512], victim[512], link[600], got[64];
    tu_tmpdir(dir, sizeof dir);
    tu_join(path, sizeof path, dir, "out.json");
    tu_write(dir, "victim", "precious\n", victim, sizeof victim);
    long pid = (long)getpid();
    for (long k = 0; k < 8; k++) {
        snprintf(link, sizeof link, "%s.tmp.%ld", path, pid + k);
        assert_int_equal(symlink(victim, link), 0);
    }
    ef_err e = {0};
    assert_ok(ef_write_file_atomic(path, "new\n", 4, &e), e);
    char *buf;
    size_t len;
    assert_ok(ef_read_file(victim, &buf, &len, &e), e);
    assert_string_equal(buf, "precious\n");
    free(buf);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_string_equal(buf, "new\n");
    free(buf);
    for (long k = 0; k < 8; k++) {
        snprintf(link, sizeof link, "%s.tmp.%ld", path, pid + k);
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        ssize_t n = readlink(link, got, sizeof got - 1);
        assert_true(n > 0);
        got[n] = '\0';
        assert_string_equal(got, victim);
    }
    /* the victim, out.json and the 8 links: no temporary left */
    assert_int_equal(tu_count_entries(dir), 10);
    tu_rmtree(dir);
}

/* The mode of a written file: what a plain create gives under the umask
 * for a new file, the old permission bits for a replaced one. */
static void test_write_atomic_mode(void **state)
{
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    tu_join(path, sizeof path, dir, "out.csv");
    ef_err e = {0};
    struct stat st;
    static const mode_t masks[] = {022, 0, 077, 027};
    mode_t old = umask(022);
    for (size_t k = 0; k < sizeof masks / sizeof *masks; k++) {
        unlink(path);
        umask(masks[k]);
        assert_ok(ef_write_file_atomic(path, "x\n", 2, &e), e);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0666 & ~masks[k]);
    }
    /* replacing keeps the old bits, whatever the umask */
    umask(022);
    assert_int_equal(chmod(path, 0640), 0);
    assert_ok(ef_write_file_atomic(path, "y\n", 2, &e), e);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(chmod(path, 0604), 0);
    umask(077);
    assert_ok(ef_write_file_atomic(path, "z\n", 2, &e), e);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0604);
    umask(old);
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
}

/* Links are written through (the link stays, where the chain ends gets
 * the bytes), a loop of links and targets that are not regular files are
 * refused, and "-" is not a file name here. */
static void test_write_atomic_links(void **state)
{
    char dir[256], sub[512], a[600], b[600], c[600], loop[600], real[600];
    tu_tmpdir(dir, sizeof dir);
    tu_join(sub, sizeof sub, dir, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    tu_join(real, sizeof real, sub, "real.txt");
    tu_join(a, sizeof a, dir, "a");
    tu_join(b, sizeof b, dir, "b");
    tu_join(c, sizeof c, dir, "c");
    /* a -> b (relative) -> sub/real.txt (absolute), not there yet */
    assert_int_equal(symlink("b", a), 0);
    assert_int_equal(symlink(real, b), 0);
    ef_err e = {0};
    assert_ok(ef_write_file_atomic(a, "one\n", 4, &e), e);
    char *buf;
    size_t len;
    assert_ok(ef_read_file(real, &buf, &len, &e), e);
    assert_string_equal(buf, "one\n");
    free(buf);
    struct stat st;
    assert_int_equal(lstat(a, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(b, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_ok(ef_write_file_atomic(a, "two\n", 4, &e), e);
    assert_ok(ef_read_file(real, &buf, &len, &e), e);
    assert_string_equal(buf, "two\n");
    free(buf);
    assert_int_equal(tu_count_entries(dir), 3);
    assert_int_equal(tu_count_entries(sub), 1);
    /* c -> c */
    assert_int_equal(symlink("c", c), 0);
    assert_err_kind(ef_write_file_atomic(c, "x", 1, &e), e, EF_E_INTERNAL,
                    c, "too many levels of symbolic links");
    /* a link to a directory (devices: tests/e2e/files.sh, in a scratch
     * directory: a regression must not replace /dev/null) */
    tu_join(loop, sizeof loop, dir, "to-sub");
    assert_int_equal(symlink("sub", loop), 0);
    assert_err_kind(ef_write_file_atomic(loop, "x", 1, &e), e, EF_E_INTERNAL,
                    loop, "is a directory (expected a regular file");
    assert_err_kind(ef_write_file_atomic("-", "x", 1, &e), e, EF_E_USAGE,
                    "-: ", "standard output");
    assert_int_equal(tu_count_entries(dir), 5);
    assert_int_equal(tu_count_entries(sub), 1);
    unlink(real);
    tu_rmtree(dir);
}

/* After the rename the target's directory is synced (a new name is only
 * durable then): the directory the file is in, also through a link. */
static void test_write_atomic_syncs_directory(void **state)
{
    char dir[256], sub[512], path[600], link[600];
    tu_tmpdir(dir, sizeof dir);
    tu_join(sub, sizeof sub, dir, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    tu_join(path, sizeof path, sub, "plan.json");
    tu_join(link, sizeof link, dir, "plan.json");
    assert_int_equal(symlink("sub/plan.json", link), 0);
    struct stat st;
    assert_int_equal(stat(sub, &st), 0);
    ef_err e = {0};
    dir_syncs = 0;
    assert_ok(ef_write_file_atomic(path, "a\n", 2, &e), e);
    assert_int_equal(dir_syncs, 1);
    assert_true(dir_synced == st.st_ino);
    dir_syncs = 0;
    dir_synced = 0;
    assert_ok(ef_write_file_atomic(link, "b\n", 2, &e), e);
    assert_int_equal(dir_syncs, 1);
    assert_true(dir_synced == st.st_ino);
    unlink(path);
    tu_rmtree(dir);
}

static int fill_fails(int fd, const char *tmp, void *arg, ef_err *e)
{
    (void)fd;
    *(int *)arg = access(tmp, F_OK) == 0;
    return ef_fail(e, EF_E_INTERNAL, "the filler failed");
}

static int fill_by_name(int fd, const char *tmp, void *arg, ef_err *e)
{
    (void)fd;
    FILE *f = fopen(tmp, "w");
    if (!f || fputs((const char *)arg, f) < 0 || fclose(f) != 0)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot write", tmp);
    return EF_OK;
}

/* A write that fails removes its temporary and leaves the target as it
 * was: the filler's error, a write the file size limit cuts short. */
static void test_write_atomic_failure_leaves_no_temporary(void **state)
{
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "out.csv", "old\n", path, sizeof path);
    ef_err e = {0};
    int existed = 0;
    assert_err_kind(ef_write_file_with(path, fill_fails, &existed, &e), e,
                    EF_E_INTERNAL, "the filler failed", NULL);
    assert_true(existed); /* the filler saw its temporary */
    assert_int_equal(tu_count_entries(dir), 1);
    char *buf;
    size_t len;
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_string_equal(buf, "old\n");
    free(buf);
    /* a filler that writes by name */
    assert_ok(ef_write_file_with(path, fill_by_name, "by name\n", &e), e);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_string_equal(buf, "by name\n");
    free(buf);
    assert_int_equal(tu_count_entries(dir), 1);
    /* writes past RLIMIT_FSIZE fail with EFBIG (SIGXFSZ ignored) */
    struct rlimit old, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 1024;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    char big[4096];
    memset(big, 'x', sizeof big);
    int rc = ef_write_file_atomic(path, big, sizeof big, &e);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, was);
    assert_err_kind(rc, e, EF_E_INTERNAL, path, "write failed");
    assert_int_equal(tu_count_entries(dir), 1);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_string_equal(buf, "by name\n");
    free(buf);
    tu_rmtree(dir);
}

static void test_read_file_errors(void **state)
{
    char dir[256], path[512], pre[600];
    tu_tmpdir(dir, sizeof dir);
    char *buf = (char *)1;
    size_t len = 7;
    ef_err e = {0};

    snprintf(path, sizeof path, "%s/missing.csv", dir);
    snprintf(pre, sizeof pre, "%s: ", path);
    assert_err(ef_read_file(path, &buf, &len, &e), e, pre, NULL);
    assert_null(buf);

    snprintf(pre, sizeof pre, "%s: ", dir);
    assert_err(ef_read_file(dir, &buf, &len, &e), e, pre, "directory");
    assert_null(buf);

    /* a device is not read: /dev/null would read as an empty file, and
     * a FIFO would block (tests/e2e/files.sh) */
    assert_err(ef_read_file("/dev/null", &buf, &len, &e), e,
               "/dev/null: is a character device (expected a regular file)",
               NULL);
    assert_null(buf);

    tu_write(dir, "empty.csv", "", path, sizeof path);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_non_null(buf);
    assert_int_equal(len, 0);
    assert_int_equal(buf[0], '\0');
    free(buf);

    tu_write(dir, "a.txt", "hello", path, sizeof path);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_int_equal(len, 5);
    assert_string_equal(buf, "hello");
    free(buf);
    tu_rmtree(dir);
}

/* "-" is standard input, whatever it is (here a pipe), read once per
 * process: a second "-" is an input error */
static void test_read_file_stdin(void **state)
{
    (void)state;
    int fd[2], saved = dup(0);
    assert_int_equal(pipe(fd), 0);
    assert_int_equal(write(fd[1], "from stdin\n", 11), 11);
    close(fd[1]);
    assert_int_equal(dup2(fd[0], 0), 0);
    close(fd[0]);
    char *buf = NULL;
    size_t len = 0;
    ef_err e = {0};
    assert_ok(ef_read_file("-", &buf, &len, &e), e);
    assert_int_equal(len, 11);
    assert_string_equal(buf, "from stdin\n");
    free(buf);
    assert_err(ef_read_file("-", &buf, &len, &e), e,
               "-: standard input is read once", NULL);
    assert_null(buf);
    dup2(saved, 0);
    close(saved);
}

static void test_read_file_large(void **state)
{
    /* bigger than any initial buffer guess, from a pipe-like source size */
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    size_t n = 300000;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    big[n] = '\0';
    tu_write(dir, "big.txt", big, path, sizeof path);
    char *buf;
    size_t len;
    ef_err e = {0};
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    assert_int_equal(len, n);
    assert_memory_equal(buf, big, n);
    assert_int_equal(buf[n], '\0');
    free(buf);
    free(big);
    tu_rmtree(dir);
}

/* ---- ef_sh_quote / ef_sh_word ------------------------------------------- */

/* Run /bin/sh -c script in directory 'dir'; its standard output (any
 * bytes) into out, its length into *n. Fails the test unless sh exits 0. */
static void sh_output(const char *dir, const char *script, char *out,
                      size_t cap, size_t *n)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        if (chdir(dir) != 0)
            _exit(126);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    *n = 0;
    for (;;) {
        ssize_t r = read(fds[0], out + *n, cap - *n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        *n += (size_t)r;
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        assert_int_equal(errno, EINTR);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* sh reads quote(s) back as exactly s: as an argument, as the value of an
 * assignment, and (set --) as a positional parameter; run in 'dir', whose
 * files "a", "x" and "axb" a glob left bare would match. */
static void sh_roundtrip(const char *dir,
                         void (*quote)(ef_buf *, const char *), const char *s,
                         int c)
{
    ef_buf w = {0}, sc = {0};
    quote(&w, s);
    ef_buf_printf(&sc, "printf '%%s' %s; V=%s; printf '%%s' \"$V\"; "
                  "set -- %s; printf '%%s' \"$1\"", w.s, w.s, w.s);
    char out[4096];
    size_t n, l = strlen(s);
    sh_output(dir, sc.s, out, sizeof out, &n);
    if (n != 3 * l || memcmp(out, s, l) != 0 || memcmp(out + l, s, l) != 0 ||
        memcmp(out + 2 * l, s, l) != 0) {
        print_error("    byte %d: the word %s came back as %zu bytes, "
                    "expected 3 x %zu\n", c, w.s, n, l);
        fail();
    }
    free(w.s);
    free(sc.s);
}

static void test_sh_quote_every_byte(void **state)
{
    (void)state;
    void (*fn[2])(ef_buf *, const char *) = {ef_sh_quote, ef_sh_word};
    char all[256];
    for (int c = 1; c < 256; c++)
        all[c - 1] = (char)c;
    all[255] = '\0';
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "a", "", NULL, 0);
    tu_write(dir, "x", "", NULL, 0);
    tu_write(dir, "axb", "", NULL, 0);
    for (int f = 0; f < 2; f++) {
        for (int c = 1; c < 256; c++) {
            char one[2] = {(char)c, 0}, mid[8], quoted[8];
            snprintf(mid, sizeof mid, "a%cb", c);
            snprintf(quoted, sizeof quoted, "a%c'b", c);
            sh_roundtrip(dir, fn[f], one, c);
            sh_roundtrip(dir, fn[f], mid, c);
            sh_roundtrip(dir, fn[f], quoted, c);
        }
        sh_roundtrip(dir, fn[f], all, 0);
        sh_roundtrip(dir, fn[f], "", 0);
        sh_roundtrip(dir, fn[f], "''\\'\"$(x)`y`*?~ \t\n", 0);
    }
    tu_rmtree(dir);
}

static void test_sh_quote_forms(void **state)
{
    (void)state;
    ef_buf b = {0};
    ef_sh_quote(&b, "it's");
    ef_buf_put(&b, " ");
    ef_sh_quote(&b, "plain");
    ef_buf_put(&b, " ");
    ef_sh_quote(&b, "");
    assert_string_equal(b.s, "'it'\\''s' 'plain' ''");
    free(b.s);
    memset(&b, 0, sizeof b);
    /* plain words stay bare; anything else is quoted */
    ef_sh_word(&b, "CUDA_VISIBLE_DEVICES=4,5");
    ef_buf_put(&b, " ");
    ef_sh_word(&b, "/a/b-c.d:e+f@g%h");
    ef_buf_put(&b, " ");
    ef_sh_word(&b, "a b");
    ef_buf_put(&b, " ");
    ef_sh_word(&b, "~");
    ef_buf_put(&b, " ");
    ef_sh_word(&b, "");
    assert_string_equal(b.s, "CUDA_VISIBLE_DEVICES=4,5 /a/b-c.d:e+f@g%h "
                             "'a b' '~' ''");
    free(b.s);
}

/* ---- latency records (common/lat.h) ---------------------------------------- */

/* Nearest-rank quantiles over every value, or over the last 'window';
 * count, mean and max over every value added. */
static int cmp_val(const void *a, const void *b, void *ctx)
{
    const int *v = ctx;
    int x = v[*(const int *)a], y = v[*(const int *)b];
    return (x > y) - (x < y);
}

/* ef_rank: places in the order, equal items sharing one, none skipped */
static void test_rank(void **state)
{
    (void)state;
    int v[] = {30, 10, 20, 10, 40, 30};
    int want[] = {2, 0, 1, 0, 3, 2};
    int rank[6];
    ef_rank(6, cmp_val, v, rank);
    for (int i = 0; i < 6; i++)
        assert_int_equal(rank[i], want[i]);
    ef_rank(0, cmp_val, v, rank); /* nothing to rank: no access */
}

static void test_lat(void **state)
{
    (void)state;
    ef_lat l;
    ef_lat_summary s;
    ef_lat_init(&l, 0);
    ef_lat_summarise(&l, &s);
    assert_true(s.count == 0 && s.p50 == 0 && s.max == 0);
    for (int i = 100; i >= 1; i--)   /* 1..100, in reverse */
        ef_lat_add(&l, i);
    ef_lat_summarise(&l, &s);
    assert_int_equal(s.count, 100);
    assert_true(s.p50 == 50 && s.p99 == 99 && s.max == 100 && s.top == 100);
    assert_true(fabs(s.mean - 50.5) < 1e-12);
    ef_lat_add(&l, 1000);            /* 101 values: p99 is the 100th */
    ef_lat_summarise(&l, &s);
    assert_true(s.p50 == 51 && s.p99 == 100 && s.max == 1000);
    ef_lat_free(&l);
    /* a window of 10: the quantiles forget, max does not */
    ef_lat_init(&l, 10);
    ef_lat_add(&l, 500);
    for (int i = 1; i <= 25; i++)
        ef_lat_add(&l, i);           /* keeps 16..25 */
    ef_lat_summarise(&l, &s);
    assert_int_equal(s.count, 26);
    assert_int_equal(l.n, 10);
    assert_true(s.p50 == 20 && s.p99 == 25 && s.top == 25 && s.max == 500);
    ef_lat_free(&l);
}

/* ef_abstime_in: a wall-clock deadline that many seconds on, its
 * nanoseconds normalised (a fraction that carries into the seconds, a
 * wait of several seconds, none). Bounds only: no timing assertion. */
static void test_abstime_in(void **state)
{
    (void)state;
    const double waits[] = {0, 0.05, 0.25, 0.999999, 1.5, 7.75, 3600};
    for (size_t k = 0; k < sizeof waits / sizeof *waits; k++) {
        struct timespec before, ts;
        clock_gettime(CLOCK_REALTIME, &before);
        ef_abstime_in(&ts, waits[k]);
        assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
        double b = (double)before.tv_sec + before.tv_nsec * 1e-9;
        double t = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        assert_true(t >= b + waits[k] - 1e-6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abstime_in),
        cmocka_unit_test(test_lat),
        cmocka_unit_test(test_i64_ok),
        cmocka_unit_test(test_i64_empty_and_syntax),
        cmocka_unit_test(test_i64_int64_limits),
        cmocka_unit_test(test_i64_bounds),
        cmocka_unit_test(test_double_ok),
        cmocka_unit_test(test_double_rejects),
        cmocka_unit_test(test_iso_values),
        cmocka_unit_test(test_iso_offsets),
        cmocka_unit_test(test_iso_fraction),
        cmocka_unit_test(test_iso_rejects),
        cmocka_unit_test(test_quote_plain_and_escapes),
        cmocka_unit_test(test_quote_truncates),
        cmocka_unit_test(test_utf8_char),
        cmocka_unit_test(test_sh_quote_every_byte),
        cmocka_unit_test(test_sh_quote_forms),
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_is_pow2),
        cmocka_unit_test(test_sort_ints),
        cmocka_unit_test(test_write_atomic),
        cmocka_unit_test(test_write_atomic_missing_dir),
        cmocka_unit_test(test_write_atomic_onto_directory),
        cmocka_unit_test(test_write_atomic_planted_symlinks),
        cmocka_unit_test(test_write_atomic_mode),
        cmocka_unit_test(test_write_atomic_links),
        cmocka_unit_test(test_write_atomic_syncs_directory),
        cmocka_unit_test(test_write_atomic_failure_leaves_no_temporary),
        cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_read_file_stdin),
        cmocka_unit_test(test_read_file_large),
        cmocka_unit_test(test_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
