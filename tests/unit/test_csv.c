/* test_csv.c: the position-aware CSV tokenizer (common/csv.h). */
#include "testutil.h"

#include "common/csv.h"

/* Read every record of buf[0..len) and render it as
 *   "LINE: COL=field COL=field\n" per record
 * into a heap string. *rc gets the last csv_next result (0 at the end,
 * EF_ERR on error); 'e' the error. */
static char *dump_n(const char *name, const char *buf, size_t len, int *rc,
                    ef_err *e)
{
    csv_reader r;
    csv_row row = {0};
    size_t cap = 256, o = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    csv_open(&r, name, buf, len);
    while ((*rc = csv_next(&r, &row, e)) == 1) {
        size_t need = 32;
        for (int i = 0; i < row.nf; i++)
            need += strlen(row.f[i]) + 16;
        while (o + need >= cap) {
            cap *= 2;
            out = realloc(out, cap);
        }
        o += (size_t)sprintf(out + o, "%ld:", row.line);
        for (int i = 0; i < row.nf; i++)
            o += (size_t)sprintf(out + o, " %d=%s", row.col[i], row.f[i]);
        out[o++] = '\n';
        out[o] = '\0';
    }
    csv_row_free(&row);
    return out;
}

/* The records of 'buf' must render as 'want', with no error. */
static void check_rows(const char *buf, size_t len, const char *want,
                       const char *file, int line)
{
    int rc;
    ef_err e = {0};
    char *got = dump_n("t.csv", buf, len, &rc, &e);
    if (rc != 0) {
        print_error("    unexpected error: %s\n", e.msg);
        free(got);
        _fail(file, line);
    }
    if (strcmp(got, want) != 0) {
        print_error("    got:\n%s    expected:\n%s", got, want);
        free(got);
        _fail(file, line);
    }
    free(got);
}
#define assert_rows(buf, want) \
    check_rows((buf), strlen(buf), (want), __FILE__, __LINE__)
#define assert_rows_n(buf, len, want) \
    check_rows((buf), (len), (want), __FILE__, __LINE__)

/* Reading buf must fail with exactly 'pre' as the start of the message
 * and contain 'sub'. */
static void check_error(const char *buf, size_t len, const char *pre,
                        const char *sub, const char *file, int line)
{
    int rc;
    ef_err e = {0};
    char *got = dump_n("t.csv", buf, len, &rc, &e);
    free(got);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
}
#define assert_csv_error(buf, pre, sub) \
    check_error((buf), strlen(buf), (pre), (sub), __FILE__, __LINE__)
#define assert_csv_error_n(buf, len, pre, sub) \
    check_error((buf), (len), (pre), (sub), __FILE__, __LINE__)

static void test_simple(void **state)
{
    assert_rows("a,b\n1,2\n", "1: 1=a 3=b\n2: 1=1 3=2\n");
    assert_rows("x\n", "1: 1=x\n");
}

static void test_empty_inputs(void **state)
{
    assert_rows("", "");
    assert_rows("\n\n", "");
    assert_rows("   \n\t\n \r\n", "");
    assert_rows("\xEF\xBB\xBF", "");
}

static void test_bom_skipped(void **state)
{
    /* The BOM is not part of the first field, and columns are counted
     * after it. */
    assert_rows("\xEF\xBB\xBFglobal_batch_size,1\n64,2\n",
                "1: 1=global_batch_size 19=1\n2: 1=64 4=2\n");
    /* A BOM later in the file is just bytes. */
    assert_rows("a\n\xEF\xBB\xBF" "b\n", "1: 1=a\n2: 1=\xEF\xBB\xBF" "b\n");
}

static void test_crlf(void **state)
{
    assert_rows("a,b\r\n1,2\r\n", "1: 1=a 3=b\n2: 1=1 3=2\n");
    assert_rows("a,\"b\"\r\n", "1: 1=a 3=b\n");
    assert_rows("a,b\r\n\r\n\r\nc,d", "1: 1=a 3=b\n4: 1=c 3=d\n");
}

static void test_no_final_newline(void **state)
{
    assert_rows("a,b\n1,2", "1: 1=a 3=b\n2: 1=1 3=2\n");
    assert_rows("a,\"q\"", "1: 1=a 3=q\n");
    assert_rows("a,", "1: 1=a 3=\n");
}

static void test_blank_lines_keep_line_numbers(void **state)
{
    assert_rows("a\n\n   \n\t\n\r\nb\n\nc", "1: 1=a\n6: 1=b\n8: 1=c\n");
    assert_rows("\n\nx,y\n", "3: 1=x 3=y\n");
    assert_rows("a\n\n\n", "1: 1=a\n");
}

static void test_quoted_fields(void **state)
{
    assert_rows("\"x,y\",\"he said \"\"hi\"\"\",\"\"\n",
                "1: 1=x,y 7=he said \"hi\" 24=\n");
    assert_rows("\"\"\"\"\n", "1: 1=\"\n");
    assert_rows("\"  keep  \",b\n", "1: 1=  keep   12=b\n");
    assert_rows("\"a\"\n\"b\"\n", "1: 1=a\n2: 1=b\n");
}

static void test_spaces_trimmed(void **state)
{
    /* columns point at the first character of the field (the opening
     * quote of a quoted one) */
    assert_rows("  a  ,\tb\t, \"q\" \n", "1: 3=a 8=b 12=q\n");
    assert_rows("a b , c\n", "1: 1=a b 7=c\n");
    assert_rows(" , \n", "1: 2= 4=\n");
}

static void test_empty_fields(void **state)
{
    assert_rows("a,,b,\n", "1: 1=a 3= 4=b 6=\n");
    assert_rows(",\n", "1: 1= 2=\n");
}

static void test_row_reuse_and_growth(void **state)
{
    /* A short row after a long one; many fields; a long field. */
    char buf[8192];
    size_t o = 0;
    for (int i = 0; i < 100; i++)
        o += (size_t)sprintf(buf + o, "%sf%d", i ? "," : "", i);
    o += (size_t)sprintf(buf + o, "\nz\n");
    memset(buf + o, 'L', 1000);
    o += 1000;
    o += (size_t)sprintf(buf + o, ",\"");
    memset(buf + o, 'Q', 600);
    o += 600;
    o += (size_t)sprintf(buf + o, "\"\n");

    csv_reader r;
    csv_row row = {0};
    ef_err e = {0};
    csv_open(&r, "t.csv", buf, o);
    assert_int_equal(csv_next(&r, &row, &e), 1);
    assert_int_equal(row.nf, 100);
    assert_string_equal(row.f[0], "f0");
    assert_string_equal(row.f[99], "f99");
    assert_int_equal(row.col[99], (int)(strstr(buf, "f99") - buf) + 1);
    assert_int_equal(csv_next(&r, &row, &e), 1);
    assert_int_equal(row.nf, 1);
    assert_int_equal(row.line, 2);
    assert_string_equal(row.f[0], "z");
    assert_int_equal(csv_next(&r, &row, &e), 1);
    assert_int_equal(row.nf, 2);
    assert_int_equal(strlen(row.f[0]), 1000);
    assert_int_equal(strlen(row.f[1]), 600);
    assert_int_equal(row.f[1][0], 'Q');
    assert_int_equal(row.col[1], 1002);
    assert_int_equal(csv_next(&r, &row, &e), 0);
    /* the end stays the end */
    assert_int_equal(csv_next(&r, &row, &e), 0);
    csv_row_free(&row);
}

static void test_err_unterminated_quote(void **state)
{
    assert_csv_error("a,b\n1,\"abc", "t.csv:2:3: ", "unterminated");
    assert_csv_error("\"", "t.csv:1:1: ", "unterminated");
    /* a newline inside quotes is an error on the opening line */
    assert_csv_error("x,\"ab\ncd\"\n", "t.csv:1:3: ", "line break");
    assert_csv_error("x,\"ab\r\ncd\"\n", "t.csv:1:3: ", "line break");
}

static void test_err_text_after_quote(void **state)
{
    assert_csv_error("\"ab\"c,d\n", "t.csv:1:5: ", "after a closing quote");
    assert_csv_error("a\n\"x\" y\n", "t.csv:2:5: ", "after a closing quote");
    assert_csv_error("\"ab\"\"", "t.csv:1:1: ", "unterminated");
}

static void test_err_lone_cr(void **state)
{
    assert_csv_error("ab\rcd\n", "t.csv:1:3: ", "carriage return");
    assert_csv_error("a,b\n1,2\r3\n", "t.csv:2:4: ", "carriage return");
    assert_csv_error("a,b\r", "t.csv:1:4: ", "carriage return");
    assert_csv_error("\"q\"\r,x\n", "t.csv:1:4: ", NULL);
}

static void test_err_nul_byte(void **state)
{
    assert_csv_error_n("a,b\nc,d\0e\n", 10, "t.csv:2:4: ", "NUL byte");
    assert_csv_error_n("\"a\0\"\n", 5, "t.csv:1:3: ", "NUL byte");
    assert_csv_error_n("\0\n", 2, "t.csv:1:1: ", "NUL byte");
    assert_csv_error_n("a\n\n\0", 4, "t.csv:3:1: ", "NUL byte");
}

static void test_err_quote_in_unquoted(void **state)
{
    assert_csv_error("ab\"c\n", "t.csv:1:3: ", "quote inside an unquoted");
    assert_csv_error("x,y\n1,2\"\n", "t.csv:2:4: ", "quote inside an unquoted");
}

static void test_err_position_after_bom_and_blanks(void **state)
{
    assert_csv_error("\xEF\xBB\xBF" "a\n\n\nb\"\n", "t.csv:4:2: ",
                     "quote inside an unquoted");
    assert_csv_error("\xEF\xBB\xBF" "ab\"\n", "t.csv:1:3: ", NULL);
    assert_csv_error("a\r\n\r\n  x\ry\n", "t.csv:3:4: ", "carriage return");
}

static void test_err_names_the_file(void **state)
{
    int rc;
    ef_err e = {0};
    char *got = dump_n("dir/jobs.csv", "a\"b", 3, &rc, &e);
    free(got);
    assert_err(rc, e, "dir/jobs.csv:1:2: ", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple),
        cmocka_unit_test(test_empty_inputs),
        cmocka_unit_test(test_bom_skipped),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_no_final_newline),
        cmocka_unit_test(test_blank_lines_keep_line_numbers),
        cmocka_unit_test(test_quoted_fields),
        cmocka_unit_test(test_spaces_trimmed),
        cmocka_unit_test(test_empty_fields),
        cmocka_unit_test(test_row_reuse_and_growth),
        cmocka_unit_test(test_err_unterminated_quote),
        cmocka_unit_test(test_err_text_after_quote),
        cmocka_unit_test(test_err_lone_cr),
        cmocka_unit_test(test_err_nul_byte),
        cmocka_unit_test(test_err_quote_in_unquoted),
        cmocka_unit_test(test_err_position_after_bom_and_blanks),
        cmocka_unit_test(test_err_names_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
