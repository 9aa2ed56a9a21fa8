/* test_svg.c: what the charts share (common/svg.h): XML escaping, nice
 * steps, the time axis in hours and on the wall clock, lone time labels,
 * ink on the palette, shortened ids. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/svg.h"
#include "common/util.h"

static void test_esc(void **state)
{
    (void)state;
    ef_buf b = {0};
    svg_esc(&b, "a<b>&\"c'\x01\x7f" "d");
    assert_string_equal(b.s, "a&lt;b&gt;&amp;&quot;c&apos;d");
    free(b.s);
    b = (ef_buf){0};
    /* UTF-8 kept; a cut sequence, a stray byte, a surrogate: "?" */
    svg_esc(&b, "\xc3\xa9-\xe2\x82-\xff-\xed\xa0\x80-\xf0\x9f\x98\x80");
    assert_string_equal(b.s, "\xc3\xa9-?" "?-?-?" "?" "?-\xf0\x9f\x98\x80");
    free(b.s);
    b = (ef_buf){0};
    svg_text(&b, 1, 2, "", "%s (%d)", "x&y", 3);
    assert_string_equal(b.s, "<text x=\"1.0\" y=\"2.0\">x&amp;y (3)</text>\n");
    free(b.s);
}

static void test_nice_step(void **state)
{
    (void)state;
    assert_true(svg_nice_step(32, 8, 1) == 5);
    assert_true(svg_nice_step(1, 5, 0) == 0.2);
    assert_true(svg_nice_step(100, 10, 0) == 10);
    assert_true(svg_nice_step(3, 10, 1) == 1);  /* never below 1 */
    assert_true(svg_nice_step(512, 8, 1) == 100);
}

/* 1 iff 'b' holds ">LABEL</text>" */
static int has_label(const ef_buf *b, const char *label)
{
    char k[64];
    snprintf(k, sizeof k, ">%s</text>", label);
    return strstr(b->s, k) != NULL;
}

static void test_time_axis_hours(void **state)
{
    (void)state;
    ef_buf b = {0};
    /* 15 h from 0 across 1000 px: ticks every 2 h, "0h" .. "14h" */
    svg_time_axis(&b, 0, 15 * 3600, 100, 1100, 500, 100, EF_HT_UTC);
    assert_true(has_label(&b, "0h"));
    assert_true(has_label(&b, "2h"));
    assert_true(has_label(&b, "14h"));
    assert_false(has_label(&b, "16h"));
    assert_true(has_label(&b, "time from the start"));
    free(b.s);
    /* one minute: seconds */
    b = (ef_buf){0};
    svg_time_axis(&b, 0, 60, 100, 1100, 500, 500, EF_HT_UTC);
    assert_true(has_label(&b, "60s"));
    free(b.s);
    /* 52 days: whole days */
    b = (ef_buf){0};
    svg_time_axis(&b, 0, 52 * 86400, 100, 1100, 500, 500, EF_HT_UTC);
    assert_true(has_label(&b, "7d"));
    assert_true(has_label(&b, "49d"));
    free(b.s);
}

static void test_time_axis_wall(void **state)
{
    (void)state;
    ef_buf b = {0};
    /* 2026-05-28T20:26:40Z for 1h38m: round times in UTC, the date once */
    int64_t t0 = 1780000000;
    svg_time_axis(&b, t0, t0 + 5880, 100, 1100, 500, 100, EF_HT_UTC);
    assert_true(has_label(&b, "20:30"));
    assert_true(has_label(&b, "22:00"));
    assert_true(has_label(&b, "2026-05-28"));
    assert_true(has_label(&b, "time (UTC)"));
    const char *d = strstr(b.s, ">2026-05-28<");
    assert_non_null(d);
    assert_null(strstr(d + 1, ">2026-05-28<"));
    free(b.s);
    /* across midnight: the new date under the first tick of the day */
    b = (ef_buf){0};
    svg_time_axis(&b, t0, t0 + 6 * 3600, 100, 1100, 500, 100, EF_HT_UTC);
    assert_true(has_label(&b, "2026-05-29"));
    free(b.s);
    /* epoch: hours from the start, never a date */
    b = (ef_buf){0};
    svg_time_axis(&b, t0, t0 + 5880, 100, 1100, 500, 100, EF_HT_EPOCH);
    assert_true(has_label(&b, "0m") || has_label(&b, "0h"));
    assert_null(strstr(b.s, "2026"));
    free(b.s);
}

static void test_time_axis_local(void **state)
{
    (void)state;
    ef_buf b = {0};
    setenv("TZ", "UTC-2", 1); /* POSIX: two hours east of UTC */
    tzset();
    int64_t t0 = 1780000000; /* 2026-05-28T20:26:40Z */
    svg_time_axis(&b, t0, t0 + 5880, 100, 1100, 500, 100, EF_HT_LOCAL);
    assert_true(has_label(&b, "22:30"));
    assert_true(has_label(&b, "00:00"));
    assert_true(has_label(&b, "2026-05-29"));
    assert_true(has_label(&b, "time (UTC+02:00)"));
    char d[48];
    assert_string_equal(svg_time_label(1780012000, t0, EF_HT_LOCAL, d,
                                       sizeof d), "2026-05-29 01:46");
    setenv("TZ", "UTC", 1);
    tzset();
    free(b.s);
}

static void test_time_label(void **state)
{
    (void)state;
    char d[48];
    assert_string_equal(svg_time_label(1780012000, 1780000000, EF_HT_UTC,
                                       d, sizeof d), "2026-05-28 23:46");
    assert_string_equal(svg_time_label(5400, 0, EF_HT_UTC, d, sizeof d),
                        "+1h 30m");
}

static void test_palette(void **state)
{
    (void)state;
    for (int k = 0; k < SVG_NCOLOURS; k++) {
        const char *c = svg_colour(k);
        assert_int_equal(strlen(c), 7);
        for (int m = 0; m < k; m++)
            assert_string_not_equal(c, svg_colour(m));
    }
    assert_string_equal(svg_colour(SVG_NCOLOURS), svg_colour(0));
    assert_string_equal(svg_ink("#ffffff"), "black");
    assert_string_equal(svg_ink("#202020"), "white");
    assert_string_equal(svg_ink(SVG_GREY), "black");
    char s[32];
    assert_string_equal(svg_short("abcdefghijklmnop", 10, s, sizeof s),
                        "abcdefg...");
    assert_string_equal(svg_short("j01", 10, s, sizeof s), "j01");
    assert_true(svg_text_width("j01 (4 GPUs)", 10) > 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_esc),
        cmocka_unit_test(test_nice_step),
        cmocka_unit_test(test_time_axis_hours),
        cmocka_unit_test(test_time_axis_wall),
        cmocka_unit_test(test_time_axis_local),
        cmocka_unit_test(test_time_label),
        cmocka_unit_test(test_palette),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
