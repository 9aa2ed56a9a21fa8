/* test_htime.c: times as a person reads and writes them (common/htime.h):
 * ISO-8601 in UTC and in a fixed local zone, durations, and the times a
 * person types (Unix seconds, ISO-8601, now+SPAN) with their refusals. */
#include "testutil.h"

#include <stdlib.h>
#include <time.h>

#include "common/htime.h"
#include "common/util.h"

static void test_fmt_utc(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(ef_ht_fmt(1748913473, EF_HT_UTC, b, sizeof b),
                        "2025-06-03T01:17:53Z");
    assert_string_equal(ef_ht_fmt(1748913473, EF_HT_EPOCH, b, sizeof b),
                        "1748913473");
    /* a synthetic clock (a trace counting from 0): its offsets, or the
     * seconds in epoch */
    assert_string_equal(ef_ht_fmt(3600, EF_HT_UTC, b, sizeof b), "+1h");
    assert_string_equal(ef_ht_fmt(5628, EF_HT_LOCAL, b, sizeof b),
                        "+1h 33m 48s");
    assert_string_equal(ef_ht_fmt(5628, EF_HT_EPOCH, b, sizeof b), "5628");
    assert_string_equal(ef_ht_fmt(EF_HT_WALL_MIN, EF_HT_UTC, b, sizeof b),
                        "2000-01-01T00:00:00Z");
    /* too small a buffer: cut, still terminated */
    assert_string_equal(ef_ht_fmt(1748913473, EF_HT_UTC, b, 5), "2025");
}

static void test_fmt_local(void **state)
{
    (void)state;
    char b[32];
    setenv("TZ", "UTC-2", 1); /* POSIX: two hours east of UTC */
    tzset();
    assert_string_equal(ef_ht_fmt(1748913473, EF_HT_LOCAL, b, sizeof b),
                        "2025-06-03T03:17:53+02:00");
    setenv("TZ", "UTC+5:30", 1);
    tzset();
    assert_string_equal(ef_ht_fmt(1748913473, EF_HT_LOCAL, b, sizeof b),
                        "2025-06-02T19:47:53-05:30");
    setenv("TZ", "UTC", 1);
    tzset();
    assert_string_equal(ef_ht_fmt(1748913473, EF_HT_LOCAL, b, sizeof b),
                        "2025-06-03T01:17:53Z");
}

/* ef_ht_at: a date on the wall clock, an offset off it, "t=N s" in
 * epoch */
static void test_at(void **state)
{
    (void)state;
    char b[48];
    assert_string_equal(ef_ht_at(1748913473, EF_HT_UTC, b, sizeof b),
                        "2025-06-03T01:17:53Z");
    assert_string_equal(ef_ht_at(5628, EF_HT_UTC, b, sizeof b),
                        "+1h 33m 48s");
    assert_string_equal(ef_ht_at(1748913473, EF_HT_EPOCH, b, sizeof b),
                        "t=1748913473 s");
    assert_string_equal(ef_ht_at(5628, EF_HT_EPOCH, b, sizeof b),
                        "t=5628 s");
    assert_string_equal(ef_ht_at(0, EF_HT_LOCAL, b, sizeof b), "+0s");
}

/* ef_ht_parse reads back what ef_ht_offset writes */
static void test_offset_parse(void **state)
{
    (void)state;
    const int64_t ts[] = {0, 45, 60, 693, 5628, 7200, 3 * 86400 + 5,
                          1234567};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        char b[32];
        int64_t v = -1;
        assert_int_equal(ef_ht_parse(ef_ht_offset(ts[i], b, sizeof b), 99,
                                     &v, NULL), 0);
        assert_int_equal(v, ts[i]);
    }
    int64_t v = -1;
    assert_int_equal(ef_ht_parse("+1h33m48s", 0, &v, NULL), 0);
    assert_int_equal(v, 5628);
    const char *why = NULL;
    assert_int_equal(ef_ht_parse("+1h  33m", 0, &v, &why), -1);
    assert_int_equal(ef_ht_parse("+", 0, &v, &why), -1);
    assert_int_equal(ef_ht_parse("+5", 0, &v, &why), -1);
}

/* ef_ht_offset: exact, from the largest unit not zero to the last */
static void test_offset(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(ef_ht_offset(0, b, sizeof b), "+0s");
    assert_string_equal(ef_ht_offset(45, b, sizeof b), "+45s");
    assert_string_equal(ef_ht_offset(60, b, sizeof b), "+1m");
    assert_string_equal(ef_ht_offset(693, b, sizeof b), "+11m 33s");
    assert_string_equal(ef_ht_offset(7200, b, sizeof b), "+2h");
    assert_string_equal(ef_ht_offset(7260, b, sizeof b), "+2h 01m");
    assert_string_equal(ef_ht_offset(5628, b, sizeof b), "+1h 33m 48s");
    assert_string_equal(ef_ht_offset(3 * 86400 + 5, b, sizeof b),
                        "+3d 00h 00m 05s");
    assert_string_equal(ef_ht_offset(-90, b, sizeof b), "-1m 30s");
    assert_string_equal(ef_ht_offset(INT64_MIN, b, sizeof b),
                        "-106751991167300d 15h 30m 08s");
    /* too small a buffer: cut, still terminated */
    assert_string_equal(ef_ht_offset(5628, b, 5), "+1h ");
}

static void test_dur(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(ef_ht_dur(0, b, sizeof b), "0s");
    assert_string_equal(ef_ht_dur(45, b, sizeof b), "45s");
    assert_string_equal(ef_ht_dur(750, b, sizeof b), "12m 30s");
    assert_string_equal(ef_ht_dur(8 * 3600 + 5 * 60 + 59, b, sizeof b),
                        "8h 05m");
    assert_string_equal(ef_ht_dur(3 * 86400 + 4 * 3600, b, sizeof b),
                        "3d 04h");
    assert_string_equal(ef_ht_dur(-90, b, sizeof b), "-1m 30s");
    assert_string_equal(ef_ht_dur(INT64_MIN, b, sizeof b),
                        "-106751991167300d 15h");
}

static void test_zone_parse(void **state)
{
    (void)state;
    ef_ht_zone z;
    assert_int_equal(ef_ht_zone_parse("UTC", &z), 0);
    assert_int_equal(z, EF_HT_UTC);
    assert_int_equal(ef_ht_zone_parse("local", &z), 0);
    assert_int_equal(z, EF_HT_LOCAL);
    assert_int_equal(ef_ht_zone_parse("epoch", &z), 0);
    assert_int_equal(z, EF_HT_EPOCH);
    assert_int_equal(ef_ht_zone_parse("gmt", &z), -1);
}

static void test_parse_ok(void **state)
{
    (void)state;
    int64_t t;
    const char *why = NULL;
    assert_int_equal(ef_ht_parse("1748913473", 0, &t, &why), 0);
    assert_int_equal(t, 1748913473);
    assert_int_equal(ef_ht_parse("2025-06-03T01:17:53Z", 0, &t, &why), 0);
    assert_int_equal(t, 1748913473);
    assert_int_equal(ef_ht_parse("2025-06-03T03:17:53+02:00", 0, &t, &why),
                     0);
    assert_int_equal(t, 1748913473);
    assert_int_equal(ef_ht_parse("now", 1000, &t, &why), 0);
    assert_int_equal(t, 1000);
    assert_int_equal(ef_ht_parse("now+8h", 1000, &t, &why), 0);
    assert_int_equal(t, 1000 + 8 * 3600);
    assert_int_equal(ef_ht_parse("now+8hours", 1000, &t, &why), 0);
    assert_int_equal(t, 1000 + 8 * 3600);
    assert_int_equal(ef_ht_parse("NOW+1h30m", 0, &t, &why), 0);
    assert_int_equal(t, 5400);
    assert_int_equal(ef_ht_parse("now-10m", 1000, &t, &why), 0);
    assert_int_equal(t, 400);
    assert_int_equal(ef_ht_parse("now+2d1w", 0, &t, &why), 0);
    assert_int_equal(t, 9 * 86400);
}

static void expect_refused(const char *s, int64_t now, const char *why_part)
{
    int64_t t = -7;
    const char *why = NULL;
    assert_int_equal(ef_ht_parse(s, now, &t, &why), -1);
    assert_int_equal(t, -7);
    assert_non_null(why);
    if (strstr(why, why_part) == NULL)
        fail_msg("\"%s\": reason \"%s\" lacks \"%s\"", s, why, why_part);
}

static void test_parse_refused(void **state)
{
    (void)state;
    expect_refused("now+", 0, "nothing after the sign");
    expect_refused("now+8", 0, "without a unit");
    expect_refused("now+8y", 0, "unknown unit");
    expect_refused("now+h", 0, "expected a number");
    expect_refused("nowish", 0, "expected now");
    expect_refused("now-2h", 3600, "before the start");
    expect_refused("now+99999999999999999999s", 0, "too large");
    expect_refused("now+1000000000000000s", 1, "largest time");
    expect_refused("12x", 0, "Unix seconds");
    expect_refused("2025-06-03", 0, "a date without a time");
    expect_refused("2025-06-03T01:17:53", 0, "no time zone");
    expect_refused("1969-12-31T23:59:59Z", 0, "before 1970");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_utc),
        cmocka_unit_test(test_fmt_local),
        cmocka_unit_test(test_dur),
        cmocka_unit_test(test_at),
        cmocka_unit_test(test_offset),
        cmocka_unit_test(test_offset_parse),
        cmocka_unit_test(test_zone_parse),
        cmocka_unit_test(test_parse_ok),
        cmocka_unit_test(test_parse_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
