/*
 * csv.h: a strict, position-aware CSV tokenizer over an in-memory buffer.
 *
 * Accepts what spreadsheet and pandas exports contain: a UTF-8 byte order
 * mark at the start (skipped), LF or CRLF line ends, a missing newline at
 * the end, blank lines (skipped), spaces around unquoted fields (trimmed)
 * and RFC 4180 double-quoted fields ("a,b" and "" for a quote).
 * Rejects with file:line:col: NUL bytes, a lone carriage return, a newline
 * inside quotes, an unterminated quote and text after a closing quote.
 */
#ifndef EF_CSV_H
#define EF_CSV_H

#include <stddef.h>

#include "common/err.h"

typedef struct csv_reader {
    const char *name; /* file name used in messages */
    const char *buf;
    size_t len;
    size_t pos;
    long line;        /* line number of the next line to read (1-based) */
    size_t line_start;
} csv_reader;

/* One record: nf fields, each NUL-terminated, with its 1-based line and
 * column (byte offset in the line, after the BOM). Reused across calls. */
typedef struct csv_row {
    int nf;
    long line;
    char **f;
    int *col;
    int cap;
    char *store;
    size_t store_cap;
} csv_row;

/* Start reading 'buf' (len bytes). 'name' is kept by pointer. */
void csv_open(csv_reader *r, const char *name, const char *buf, size_t len);

/* Read the next non-blank record into 'row'. Returns 1 when a record was
 * read, 0 at end of input, EF_ERR (EF_E_INPUT, "name:line:col: ...") on
 * malformed input. */
int csv_next(csv_reader *r, csv_row *row, ef_err *e);

/* Release the memory of a row. */
void csv_row_free(csv_row *row);

#endif
