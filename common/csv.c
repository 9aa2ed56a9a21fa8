/* csv.c: strict CSV tokenizer (see csv.h). */
#include "common/csv.h"

#include <stdint.h>
#include <string.h>

#include "common/util.h"

void csv_open(csv_reader *r, const char *name, const char *buf, size_t len)
{
    r->name = name;
    r->buf = buf;
    r->len = len;
    r->pos = 0;
    r->line = 1;
    r->pos = ef_bom_len(buf, len);
    r->line_start = r->pos;
}

void csv_row_free(csv_row *row)
{
    free(row->f);
    free(row->col);
    free(row->store);
    memset(row, 0, sizeof *row);
}

static int col_of(const csv_reader *r, size_t pos)
{
    return (int)(pos - r->line_start) + 1;
}

static int fail_at(const csv_reader *r, size_t pos, ef_err *e, const char *what)
{
    return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s", r->name, r->line,
                   col_of(r, pos), what);
}

static void push_field(csv_row *row, size_t off, int col)
{
    if (row->nf == row->cap) {
        row->cap = row->cap ? row->cap * 2 : 16;
        row->f = ef_realloc(row->f, (size_t)row->cap * sizeof *row->f);
        row->col = ef_realloc(row->col, (size_t)row->cap * sizeof *row->col);
    }
    /* Store offsets for now; pointers are fixed once the store is final. */
    row->f[row->nf] = (char *)(uintptr_t)off;
    row->col[row->nf] = col;
    row->nf++;
}

static void store_put(csv_row *row, size_t *n, char c)
{
    if (*n + 1 >= row->store_cap) {
        row->store_cap = row->store_cap ? row->store_cap * 2 : 256;
        row->store = ef_realloc(row->store, row->store_cap);
    }
    row->store[(*n)++] = c;
}

static int is_blank_line(const csv_reader *r)
{
    for (size_t p = r->pos; p < r->len; p++) {
        char c = r->buf[p];
        if (c == '\n')
            return 1;
        if (c == '\r' && p + 1 < r->len && r->buf[p + 1] == '\n')
            return 1;
        if (c != ' ' && c != '\t')
            return 0;
    }
    return 1;
}

/* Move past the end of the current line (LF or CRLF). */
static void skip_eol(csv_reader *r)
{
    if (r->pos < r->len && r->buf[r->pos] == '\r')
        r->pos++;
    if (r->pos < r->len && r->buf[r->pos] == '\n')
        r->pos++;
    r->line++;
    r->line_start = r->pos;
}

int csv_next(csv_reader *r, csv_row *row, ef_err *e)
{
    /* Skip blank lines. */
    for (;;) {
        if (r->pos >= r->len)
            return 0;
        if (!is_blank_line(r))
            break;
        while (r->pos < r->len && r->buf[r->pos] != '\n')
            r->pos++;
        if (r->pos < r->len)
            r->pos++;
        r->line++;
        r->line_start = r->pos;
    }
    row->nf = 0;
    row->line = r->line;
    size_t n = 0;
    for (;;) {
        /* One field. */
        while (r->pos < r->len && (r->buf[r->pos] == ' ' || r->buf[r->pos] == '\t'))
            r->pos++;
        size_t fstart = r->pos;
        push_field(row, n, col_of(r, fstart));
        if (r->pos < r->len && r->buf[r->pos] == '"') {
            r->pos++;
            for (;;) {
                if (r->pos >= r->len)
                    return fail_at(r, fstart, e,
                                   "unterminated quoted field (expected a "
                                   "closing '\"')");
                char c = r->buf[r->pos];
                if (c == '"') {
                    if (r->pos + 1 < r->len && r->buf[r->pos + 1] == '"') {
                        store_put(row, &n, '"');
                        r->pos += 2;
                        continue;
                    }
                    r->pos++;
                    break;
                }
                if (c == '\n' || c == '\r')
                    return fail_at(r, fstart, e,
                                   "line break inside a quoted field "
                                   "(expected a closing '\"' on the same line)");
                if (c == '\0')
                    return fail_at(r, r->pos, e,
                                   "NUL byte in input (is this a text file?)");
                store_put(row, &n, c);
                r->pos++;
            }
            while (r->pos < r->len && (r->buf[r->pos] == ' ' || r->buf[r->pos] == '\t'))
                r->pos++;
            if (r->pos < r->len && r->buf[r->pos] != ',' &&
                r->buf[r->pos] != '\n' &&
                !(r->buf[r->pos] == '\r' && r->pos + 1 < r->len &&
                  r->buf[r->pos + 1] == '\n'))
                return fail_at(r, r->pos, e,
                               "text after a closing quote (expected ',' or "
                               "end of line)");
        } else {
            size_t last_nonspace = n;
            while (r->pos < r->len) {
                char c = r->buf[r->pos];
                if (c == ',' || c == '\n')
                    break;
                if (c == '\r') {
                    if (r->pos + 1 < r->len && r->buf[r->pos + 1] == '\n')
                        break;
                    return fail_at(r, r->pos, e,
                                   "carriage return not followed by a line "
                                   "feed (expected LF or CRLF line ends)");
                }
                if (c == '\0')
                    return fail_at(r, r->pos, e,
                                   "NUL byte in input (is this a text file?)");
                if (c == '"')
                    return fail_at(r, r->pos, e,
                                   "quote inside an unquoted field (quote the "
                                   "whole field and double inner quotes)");
                store_put(row, &n, c);
                if (c != ' ' && c != '\t')
                    last_nonspace = n;
                r->pos++;
            }
            n = last_nonspace;
        }
        store_put(row, &n, '\0');
        if (r->pos < r->len && r->buf[r->pos] == ',') {
            r->pos++;
            continue;
        }
        break;
    }
    skip_eol(r);
    for (int i = 0; i < row->nf; i++)
        row->f[i] = row->store + (uintptr_t)row->f[i];
    return 1;
}
