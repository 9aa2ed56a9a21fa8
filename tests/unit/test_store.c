/* test_store.c: the service's store (service/store.h) and its bearer
 * tokens (service/token.h): open, create, refuse; tokens; jobs; events;
 * plans; meta; transactions, and a process killed in the middle of one. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "service/store.h"
#include "service/token.h"

static char dir[256];

/* What schema 5 added (retention and limits): undone to make an older
 * store. */
#define SCHEMA5_UNDO "DROP INDEX jobs_updated; DROP INDEX jobs_owner_state; " \
                     "ALTER TABLE tokens DROP COLUMN max_queued; " \
                     "ALTER TABLE tokens DROP COLUMN max_rate; "

static int setup(void **state)
{
    tu_tmpdir(dir, sizeof dir);
    return 0;
}

static int teardown(void **state)
{
    tu_rmtree(dir);
    return 0;
}

/* dir/name into dst */
static const char *in_dir(char *dst, size_t len, const char *name)
{
    return tu_join(dst, len, dir, name);
}

static store *open_ok(const char *path)
{
    store *s = NULL;
    ef_err e = {0};
    assert_ok(store_open(&s, path, &e), e);
    assert_non_null(s);
    return s;
}

/* A pragma's integer value, read with SQLite directly. */
static int64_t raw_pragma(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The whole file's bytes (heap) and *n. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, len = 0, k;
    char *b = malloc(cap);
    while ((k = fread(b + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap)
            b = realloc(b, cap *= 2);
    }
    fclose(f);
    *n = len;
    return b;
}

static int has_bytes(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(hay + i, needle, m) == 0)
            return 1;
    return 0;
}

/* ---- open ------------------------------------------------------------- */

static void test_open_create_reopen(void **state)
{
    char path[512], wal[600];
    in_dir(path, sizeof path, "s.db");
    snprintf(wal, sizeof wal, "%s-wal", path);
    mode_t old = umask(0); /* the file is 0600 whatever the umask */
    store *s = open_ok(path);
    umask(old);
    assert_string_equal(store_path(s), path);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    ef_err e = {0};
    assert_int_equal(store_meta_set(s, "epoch", 7, &e), EF_OK);
    if (stat(wal, &st) == 0) /* SQLite gives it the database's mode */
        assert_int_equal(st.st_mode & 07777, 0600);
    store_close(s);

    assert_int_equal(raw_pragma(path, "PRAGMA user_version"), STORE_SCHEMA);
    assert_int_equal(raw_pragma(path, "PRAGMA application_id"),
                     STORE_APP_ID);
    assert_int_equal(raw_pragma(path, "SELECT count(*) FROM sqlite_master "
                                "WHERE type = 'table' AND name IN ('tokens',"
                                " 'jobs', 'events', 'plans', 'plan_current',"
                                " 'meta')"), 6);

    s = open_ok(path);
    int64_t v = 0;
    assert_int_equal(store_meta_get(s, "epoch", &v, &e), 1);
    assert_int_equal(v, 7);
    /* WAL mode, persistent */
    store *s2 = open_ok(path);
    store_close(s2);
    store_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q,
                                        NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    sqlite3_close(db);

    /* an empty file is a new store; close(NULL) is nothing */
    char empty[512];
    tu_write(dir, "empty.db", "", empty, sizeof empty);
    /* readable by others: refused, naming the fix (as ssh does) */
    assert_int_equal(chmod(empty, 0644), 0);
    s = (store *)1;
    ef_err e2 = {0};
    assert_err(store_open(&s, empty, &e2), e2, empty,
               ": mode 0644 lets others read or change the store");
    assert_null(s);
    assert_int_equal(chmod(empty, 0600), 0);
    s = open_ok(empty);
    store_close(s);
    assert_int_equal(raw_pragma(empty, "PRAGMA user_version"), STORE_SCHEMA);
    store_close(NULL);
}

/* store_open refuses 'path' with EF_E_INPUT naming it and saying 'sub';
 * the file's bytes are as before. */
static void refused(const char *path, const char *sub)
{
    size_t n0 = 0, n1 = 0;
    struct stat st;
    char *before = stat(path, &st) == 0 && S_ISREG(st.st_mode) ?
                   slurp(path, &n0) : NULL;
    store *s = (store *)1;
    ef_err e = {0};
    int rc = store_open(&s, path, &e);
    assert_err(rc, e, path, sub);
    assert_null(s);
    if (before) {
        char *after = slurp(path, &n1);
        assert_int_equal(n0, n1);
        assert_memory_equal(before, after, n0);
        free(after);
        free(before);
    }
}

static void test_refuse(void **state)
{
    char path[512];
    /* a SQLite file of someone else: tables, no efplan id */
    in_dir(path, sizeof path, "foreign.db");
    raw_exec(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    refused(path, "not an efplan store");
    /* ... with its own user_version and no tables */
    in_dir(path, sizeof path, "foreign2.db");
    raw_exec(path, "PRAGMA user_version = 3;");
    refused(path, "not an efplan store");
    /* ... with its own application_id */
    in_dir(path, sizeof path, "other.db");
    raw_exec(path, "PRAGMA application_id = 1234;");
    refused(path, "another application");
    /* a store from a newer efplan */
    in_dir(path, sizeof path, "newer.db");
    store_close(open_ok(path));
    char newer[64];
    snprintf(newer, sizeof newer, "PRAGMA user_version = %d;",
             STORE_SCHEMA + 1);
    raw_exec(path, newer);
    refused(path, "newer");
    /* a text file */
    tu_write(dir, "text.db", "this is not a database, just some text that "
             "is long enough to have a header's worth of bytes in it......"
             "................................................\n", path,
             sizeof path);
    refused(path, "not an efplan store");
    /* a directory */
    in_dir(path, sizeof path, "sub");
    assert_int_equal(mkdir(path, 0700), 0);
    refused(path, "is a directory");
    /* a directory on the way that does not exist */
    in_dir(path, sizeof path, "nodir/s.db");
    refused(path, "cannot create");
    /* a device */
    refused("/dev/null", "not a regular file");
    /* empty path */
    store *s;
    ef_err e = {0};
    assert_int_equal(store_open(&s, "", &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_USAGE);
}

/* ---- tokens ----------------------------------------------------------- */

static void test_name_check(void **state)
{
    char n64[65], n65[66];
    memset(n64, 'a', 64);
    n64[64] = '\0';
    memset(n65, 'b', 65);
    n65[65] = '\0';
    assert_null(token_name_check("a"));
    assert_null(token_name_check("alice"));
    assert_null(token_name_check("A.b_c-9"));
    assert_null(token_name_check("_x"));
    assert_null(token_name_check("9"));
    assert_null(token_name_check("a."));
    assert_null(token_name_check("a-"));
    assert_null(token_name_check(n64));
    assert_string_equal(token_name_check(NULL), "empty");
    assert_string_equal(token_name_check(""), "empty");
    assert_string_equal(token_name_check(n65), "too long");
    assert_string_equal(token_name_check(".a"), "starts with '.'");
    assert_string_equal(token_name_check("."), "starts with '.'");
    assert_string_equal(token_name_check("-a"), "starts with '-'");
    assert_string_equal(token_name_check("a b"), "contains a space");
    assert_string_equal(token_name_check("a/b"), "contains '/'");
    assert_string_equal(token_name_check("a\nb"),
                        "contains a control character");
    assert_string_equal(token_name_check("caf\xc3\xa9"),
                        "contains a non-ASCII character");
    assert_non_null(token_name_check("a:b"));
    assert_non_null(token_name_check("a@b"));
    assert_non_null(token_name_check("a\"b"));
}

static int token_form_ok(const char *t)
{
    if (strlen(t) != 58 || strncmp(t, "efp_", 4) != 0 || t[14] != '_')
        return 0;
    for (int i = 4; i < 14; i++)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9')))
            return 0;
    for (int i = 15; i < 58; i++)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
              (t[i] >= '0' && t[i] <= '9') || t[i] == '-' || t[i] == '_'))
            return 0;
    return 1;
}

static void test_token_make(void **state)
{
    assert_int_equal(token_init(), 0);
    assert_int_equal(token_init(), 0);
    char text[TOKEN_TEXT_MAX + 1], id[TOKEN_ID_LEN + 1], id2[32];
    unsigned char salt[TOKEN_SALT_LEN], hash[TOKEN_HASH_LEN];
    unsigned char salt2[TOKEN_SALT_LEN];
    token_make(text, id, salt, hash);
    assert_true(token_form_ok(text));
    assert_int_equal(strlen(id), TOKEN_ID_LEN);
    assert_int_equal(token_parse(text, id2), 0);
    assert_string_equal(id, id2);
    assert_int_equal(token_verify(text, salt, hash), 1);
    memcpy(salt2, salt, sizeof salt);
    salt2[0] ^= 1;
    assert_int_equal(token_verify(text, salt2, hash), 0);
    /* two tokens differ everywhere that is random */
    char text2[TOKEN_TEXT_MAX + 1];
    unsigned char hash2[TOKEN_HASH_LEN];
    token_make(text2, id2, salt2, hash2);
    assert_string_not_equal(text, text2);
    assert_int_equal(token_verify(text2, salt, hash), 0);
    /* forms */
    char t[80];
    assert_int_equal(token_parse("", id2), -1);
    assert_int_equal(token_parse("efp_", id2), -1);
    snprintf(t, sizeof t, "efq%s", text + 3);
    assert_int_equal(token_parse(t, id2), -1);
    snprintf(t, sizeof t, "%sA", text);
    assert_int_equal(token_parse(t, id2), -1);
    snprintf(t, sizeof t, "%.57s", text);
    assert_int_equal(token_parse(t, id2), -1);
    snprintf(t, sizeof t, "%s", text);
    t[5] = 'Z'; /* upper case in the id */
    assert_int_equal(token_parse(t, id2), -1);
    snprintf(t, sizeof t, "%s", text);
    t[14] = '-';
    assert_int_equal(token_parse(t, id2), -1);
    snprintf(t, sizeof t, "%s", text);
    t[20] = '=';
    assert_int_equal(token_parse(t, id2), -1);
    snprintf(t, sizeof t, "%s", text);
    t[20] = '+';
    assert_int_equal(token_parse(t, id2), -1);
    /* the last character carries 2 unused bits: 'A' + 1 is not the
     * encoding of any 32 bytes */
    snprintf(t, sizeof t, "%s", text);
    t[57] = 'B';
    assert_int_equal(token_parse(t, id2), -1);
    t[57] = 'E';
    assert_int_equal(token_parse(t, id2), 0);
}

static int check(store *s, const char *text, store_ident *who)
{
    ef_err e = {0};
    int r = store_token_check(s, text, who, &e);
    if (r < 0)
        print_error("    store_token_check: %s\n", e.msg);
    return r;
}

static void test_tokens(void **state)
{
    char path[512], path2[512];
    in_dir(path, sizeof path, "t.db");
    in_dir(path2, sizeof path2, "t2.db");
    store *s = open_ok(path), *s2 = open_ok(path2);
    ef_err e = {0};
    char ta[TOKEN_TEXT_MAX + 1], tb[TOKEN_TEXT_MAX + 1];
    char tc[TOKEN_TEXT_MAX + 1], tx[TOKEN_TEXT_MAX + 1];
    store_ident a, b, c, w;
    assert_ok(store_token_add(s, "alice", 0, 100, ta, sizeof ta, &a, &e), e);
    assert_ok(store_token_add(s, "bob", 1, 200, tb, sizeof tb, &b, &e), e);
    assert_ok(store_token_add(s, "alice", 0, 300, tc, sizeof tc, &c, &e), e);
    assert_ok(store_token_add(s2, "alice", 0, 100, tx, sizeof tx, NULL, &e),
              e);
    assert_true(token_form_ok(ta) && token_form_ok(tb) && token_form_ok(tc));
    assert_string_equal(a.name, "alice");
    assert_int_equal(a.op, 0);
    assert_int_equal(b.op, 1);
    assert_int_equal(strncmp(ta + 4, a.id, TOKEN_ID_LEN), 0);

    memset(&w, 0, sizeof w);
    assert_int_equal(check(s, ta, &w), 1);
    assert_string_equal(w.id, a.id);
    assert_string_equal(w.name, "alice");
    assert_int_equal(w.op, 0);
    assert_int_equal(check(s, tb, &w), 1);
    assert_string_equal(w.name, "bob");
    assert_int_equal(w.op, 1);
    assert_int_equal(check(s, tb, NULL), 1);
    /* two stores' tokens do not cross */
    assert_int_equal(check(s2, ta, &w), 0);
    assert_int_equal(check(s, tx, &w), 0);
    assert_int_equal(check(s2, tx, &w), 1);

    /* a tampered secret, an id that is not there, malformed texts */
    char t[80];
    snprintf(t, sizeof t, "%s", ta);
    t[30] = t[30] == 'x' ? 'y' : 'x';
    assert_int_equal(check(s, t, &w), 0);
    snprintf(t, sizeof t, "%.15s%s", ta, tb + 15); /* a's id, b's secret */
    assert_int_equal(check(s, t, &w), 0);
    snprintf(t, sizeof t, "efp_zzzzzzzzzz_%s", ta + 15);
    assert_int_equal(check(s, t, &w), 0);
    const char *bad[] = {"", "efp_", "Bearer x", ta + 1, "efp_abc_def",
                         "efp_AAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                         "AAAAAAA"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(check(s, bad[i], &w), 0);
    assert_int_equal(check(s, NULL, &w), 0);
    snprintf(t, sizeof t, "%s ", ta);
    assert_int_equal(check(s, t, &w), 0);

    /* list: by creation, never a secret */
    store_token_row *rows;
    int n;
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].who.id, a.id);
    assert_string_equal(rows[1].who.id, b.id);
    assert_string_equal(rows[2].who.id, c.id);
    assert_int_equal(rows[1].created, 200);
    assert_int_equal(rows[1].revoked, -1);
    assert_int_equal(rows[1].who.op, 1);
    free(rows);

    /* revoke by id: that token only; a second time: none */
    int count = -1;
    assert_ok(store_token_revoke(s, a.id, 400, &count, &e), e);
    assert_int_equal(count, 1);
    assert_int_equal(check(s, ta, &w), 0);
    assert_int_equal(check(s, tc, &w), 1);
    assert_ok(store_token_revoke(s, a.id, 401, &count, &e), e);
    assert_int_equal(count, 0);
    assert_ok(store_token_revoke(s, "nobody", 401, &count, &e), e);
    assert_int_equal(count, 0);
    /* revoke by name: every live token of it */
    char tc2[TOKEN_TEXT_MAX + 1];
    assert_ok(store_token_add(s, "carol", 0, 500, tc2, sizeof tc2, NULL, &e),
              e);
    assert_ok(store_token_add(s, "carol", 0, 501, t, sizeof t, NULL, &e), e);
    assert_ok(store_token_revoke(s, "carol", 600, &count, &e), e);
    assert_int_equal(count, 2);
    assert_int_equal(check(s, tc2, &w), 0);
    assert_int_equal(check(s, t, &w), 0);
    assert_int_equal(check(s, tb, &w), 1);
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 5);
    assert_int_equal(rows[0].revoked, 400);
    assert_int_equal(rows[2].revoked, -1);
    assert_int_equal(rows[3].revoked, 600);
    free(rows);

    /* bad names; a buffer too small: nothing stored */
    assert_err(store_token_add(s, "a b", 0, 1, t, sizeof t, NULL, &e), e,
               path, "contains a space");
    assert_contains(e.msg, TOKEN_NAME_RULE);
    assert_err(store_token_add(s, "", 0, 1, t, sizeof t, NULL, &e), e, path,
               "empty");
    assert_err(store_token_add(s, NULL, 0, 1, t, sizeof t, NULL, &e), e,
               path, "empty");
    assert_err_kind(store_token_add(s, "dave", 0, 1, t, 20, NULL, &e), e,
                    EF_E_INTERNAL, path, "cannot hold");
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 5);
    free(rows);

    /* another handle (another process's view): a revoke there takes
     * effect here at once */
    store *s3 = open_ok(path);
    assert_int_equal(check(s3, tb, &w), 1);
    assert_ok(store_token_revoke(s3, b.id, 700, &count, &e), e);
    assert_int_equal(count, 1);
    assert_int_equal(check(s, tb, &w), 0);
    store_close(s3);
    store_close(s2);
    store_close(s);

    /* the secrets are nowhere in the file (the WAL folded in at close) */
    size_t len;
    char *bytes = slurp(path, &len);
    assert_true(len > 0);
    assert_false(has_bytes(bytes, len, ta + 15));
    assert_false(has_bytes(bytes, len, tb + 15));
    assert_false(has_bytes(bytes, len, tc + 15));
    assert_true(has_bytes(bytes, len, a.id));
    free(bytes);
}

/* ---- jobs ------------------------------------------------------------- */

static store_job mkjob(const char *id, const char *owner, const char *state,
                       int64_t t)
{
    store_job j = {
        .id = (char *)id, .owner = (char *)owner,
        .body = (char *)"{\"id\": \"x\"}", .request = (char *)"{}",
        .decision = (char *)"admitted", .answer = (char *)"{\"a\": 1}",
        .state = (char *)state, .progress = 0, .submitted = t, .updated = t,
        .seq = -1};
    return j;
}

static void count_cb(const char *state, int64_t n, void *arg)
{
    char *out = arg;
    size_t l = strlen(out);
    snprintf(out + l, 256 - l, "%s=%lld;", state, (long long)n);
}

static void test_jobs(void **state)
{
    char path[512];
    in_dir(path, sizeof path, "j.db");
    store *s = open_ok(path);
    ef_err e = {0};
    store_job j1 = mkjob("j1", "alice", "queued", 10);
    store_job j2 = mkjob("j2", "bob", "running", 20);
    store_job j3 = mkjob("j3", "alice", "running", 30);
    store_job j4 = mkjob("j4", "alice", "done", 40);
    j2.body = (char *)"{\"id\": \"j2\", \"n\": \"\xc3\xa9\"}";
    j2.decision = (char *)"best_effort";
    assert_ok(store_job_insert(s, &j1, &e), e);
    assert_ok(store_job_insert(s, &j2, &e), e);
    assert_ok(store_job_insert(s, &j3, &e), e);
    assert_ok(store_job_insert(s, &j4, &e), e);
    assert_int_equal(j1.seq, 1);
    assert_int_equal(j2.seq, 2);
    assert_int_equal(j4.seq, 4);

    /* a duplicate id changes nothing */
    store_job d = mkjob("j2", "carol", "queued", 50);
    assert_err(store_job_insert(s, &d, &e), e, path, "already in the store");
    assert_contains(e.msg, "\"j2\"");
    store_job d2 = mkjob("j9", NULL, "queued", 50);
    assert_err_kind(store_job_insert(s, &d2, &e), e, EF_E_INTERNAL, path,
                    "no owner");

    store_job g;
    assert_int_equal(store_job_get(s, "j2", &g, &e), 1);
    assert_string_equal(g.id, "j2");
    assert_string_equal(g.owner, "bob");
    assert_string_equal(g.body, j2.body);
    assert_string_equal(g.request, "{}");
    assert_string_equal(g.decision, "best_effort");
    assert_string_equal(g.answer, "{\"a\": 1}");
    assert_string_equal(g.state, "running");
    assert_int_equal(g.submitted, 20);
    assert_int_equal(g.seq, 2);
    store_job_free(&g);
    assert_int_equal(store_job_get(s, "nope", &g, &e), 0);
    store_job_free(&g);

    assert_int_equal(store_job_update(s, "j1", "running", 5, 60, &e), 1);
    assert_int_equal(store_job_update(s, "nope", "running", 5, 60, &e), 0);
    assert_int_equal(store_job_get(s, "j1", &g, &e), 1);
    assert_string_equal(g.state, "running");
    assert_int_equal(g.progress, 5);
    assert_int_equal(g.updated, 60);
    assert_int_equal(g.submitted, 10);
    store_job_free(&g);

    store_job *rows;
    int n;
    assert_ok(store_jobs_list(s, NULL, NULL, &rows, &n, &e), e);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++)
        assert_int_equal(rows[i].seq, i + 1);
    store_jobs_free(rows, n);
    assert_ok(store_jobs_list(s, "alice", NULL, &rows, &n, &e), e);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].id, "j1");
    assert_string_equal(rows[1].id, "j3");
    assert_string_equal(rows[2].id, "j4");
    store_jobs_free(rows, n);
    assert_ok(store_jobs_list(s, NULL, "running", &rows, &n, &e), e);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].id, "j1");
    assert_string_equal(rows[1].id, "j2");
    assert_string_equal(rows[2].id, "j3");
    store_jobs_free(rows, n);
    assert_ok(store_jobs_list(s, "alice", "running", &rows, &n, &e), e);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].id, "j1");
    assert_string_equal(rows[1].id, "j3");
    store_jobs_free(rows, n);
    assert_ok(store_jobs_list(s, "nobody", NULL, &rows, &n, &e), e);
    assert_int_equal(n, 0);
    assert_null(rows);
    store_jobs_free(rows, n);

    char counts[256] = "";
    assert_ok(store_jobs_count(s, count_cb, counts, &e), e);
    assert_string_equal(counts, "done=1;running=3;");
    assert_int_equal(store_job_update(s, "j4", "cancelled", 0, 70, &e), 1);
    counts[0] = '\0';
    assert_ok(store_jobs_count(s, count_cb, counts, &e), e);
    assert_string_equal(counts, "cancelled=1;running=3;");
    store_close(s);

    /* seq continues after reopening */
    s = open_ok(path);
    store_job j5 = mkjob("j5", "bob", "queued", 80);
    assert_ok(store_job_insert(s, &j5, &e), e);
    assert_int_equal(j5.seq, 5);
    store_close(s);
}

/* ---- events, plans, meta ---------------------------------------------- */

static void test_events(void **state)
{
    char path[512];
    in_dir(path, sizeof path, "e.db");
    store *s = open_ok(path);
    ef_err e = {0};
    assert_ok(store_event_add(s, NULL, 1, "started", "{\"v\": 1}", &e), e);
    assert_ok(store_event_add(s, "j1", 2, "submitted", NULL, &e), e);
    assert_ok(store_event_add(s, "j2", 3, "submitted", "{}", &e), e);
    assert_ok(store_event_add(s, "j1", 4, "running", "{\"g\": 8}", &e), e);
    assert_ok(store_event_add(s, NULL, 5, "replanned", NULL, &e), e);
    assert_ok(store_event_add(s, "j1", 5, "done", NULL, &e), e);
    store_event *ev;
    int n;
    assert_ok(store_events(s, "j1", &ev, &n, &e), e);
    assert_int_equal(n, 3);
    assert_string_equal(ev[0].kind, "submitted");
    assert_string_equal(ev[0].detail, "{}");
    assert_string_equal(ev[0].job, "j1");
    assert_int_equal(ev[0].at, 2);
    assert_string_equal(ev[1].kind, "running");
    assert_string_equal(ev[1].detail, "{\"g\": 8}");
    assert_string_equal(ev[2].kind, "done");
    assert_true(ev[0].seq < ev[1].seq && ev[1].seq < ev[2].seq);
    store_events_free(ev, n);
    assert_ok(store_events(s, NULL, &ev, &n, &e), e);
    assert_int_equal(n, 2);
    assert_null(ev[0].job);
    assert_string_equal(ev[0].kind, "started");
    assert_int_equal(ev[0].seq, 1);
    assert_string_equal(ev[1].kind, "replanned");
    assert_int_equal(ev[1].seq, 5);
    store_events_free(ev, n);
    assert_ok(store_events(s, "nope", &ev, &n, &e), e);
    assert_int_equal(n, 0);
    store_events_free(ev, n);
    store_close(s);
}

static void test_plans_meta(void **state)
{
    char path[512];
    in_dir(path, sizeof path, "p.db");
    store *s = open_ok(path);
    ef_err e = {0};
    int64_t v = -1;
    char *text = (char *)"x";
    assert_int_equal(store_plan_get(s, &v, &text, &e), 0);
    assert_null(text);
    assert_ok(store_plan_put(s, 1, 100, "replan", 3, "{\"plan\": 1}", &e),
              e);
    assert_ok(store_plan_put(s, 2, 200, "submit j1", 4, "{\"plan\": 2}",
                             &e), e);
    assert_int_equal(store_plan_get(s, &v, &text, &e), 1);
    assert_int_equal(v, 2);
    assert_string_equal(text, "{\"plan\": 2}");
    free(text);
    /* not above the last version: refused, nothing changes */
    assert_err_kind(store_plan_put(s, 2, 300, "replan", 1, "{}", &e), e,
                    EF_E_INTERNAL, path, "not above");
    assert_err_kind(store_plan_put(s, 1, 300, "replan", 1, "{}", &e), e,
                    EF_E_INTERNAL, path, "not above");
    assert_ok(store_plan_put(s, 5, 400, "cancel j1", 3, "{\"plan\": 5}", &e),
              e);
    store_close(s);
    assert_int_equal(raw_pragma(path, "SELECT count(*) FROM plans"), 3);
    assert_int_equal(raw_pragma(path, "SELECT admitted FROM plans "
                                "WHERE version = 2"), 4);
    assert_int_equal(raw_pragma(path, "SELECT count(*) FROM plan_current"),
                     1);
    s = open_ok(path);
    assert_int_equal(store_plan_get(s, &v, &text, &e), 1);
    assert_int_equal(v, 5);
    assert_string_equal(text, "{\"plan\": 5}");
    free(text);

    assert_int_equal(store_meta_get(s, "epoch", &v, &e), 0);
    assert_ok(store_meta_set(s, "epoch", 1700000000, &e), e);
    assert_ok(store_meta_set(s, "other", -3, &e), e);
    assert_int_equal(store_meta_get(s, "epoch", &v, &e), 1);
    assert_int_equal(v, 1700000000);
    assert_ok(store_meta_set(s, "epoch", INT64_MAX, &e), e);
    assert_int_equal(store_meta_get(s, "epoch", &v, &e), 1);
    assert_true(v == INT64_MAX);
    assert_int_equal(store_meta_get(s, "other", &v, &e), 1);
    assert_int_equal(v, -3);
    store_close(s);
}

/* ---- transactions ----------------------------------------------------- */

static void test_transactions(void **state)
{
    char path[512];
    in_dir(path, sizeof path, "x.db");
    store *s = open_ok(path);
    ef_err e = {0};
    store_rollback(s); /* none open: nothing */
    assert_err_kind(store_commit(s, &e), e, EF_E_INTERNAL, path,
                    "no transaction");

    assert_ok(store_begin(s, &e), e);
    assert_err_kind(store_begin(s, &e), e, EF_E_INTERNAL, path,
                    "already open");
    store_job j = mkjob("a", "alice", "queued", 1);
    assert_ok(store_job_insert(s, &j, &e), e);
    assert_ok(store_meta_set(s, "k", 1, &e), e);
    assert_ok(store_plan_put(s, 1, 1, "replan", 1, "{}", &e), e);
    assert_ok(store_event_add(s, "a", 1, "submitted", NULL, &e), e);
    char t[TOKEN_TEXT_MAX + 1];
    assert_ok(store_token_add(s, "alice", 0, 1, t, sizeof t, NULL, &e), e);
    assert_int_equal(check(s, t, NULL), 1); /* seen inside */
    /* a failing call inside (its savepoint) leaves the rest standing */
    assert_int_equal(store_plan_put(s, 1, 2, "replan", 1, "{}", &e), EF_ERR);
    int64_t v;
    assert_int_equal(store_meta_get(s, "k", &v, &e), 1);
    store_rollback(s);
    store_rollback(s);

    store_job g;
    assert_int_equal(store_job_get(s, "a", &g, &e), 0);
    assert_int_equal(store_meta_get(s, "k", &v, &e), 0);
    char *text;
    assert_int_equal(store_plan_get(s, &v, &text, &e), 0);
    store_event *ev;
    int n;
    assert_ok(store_events(s, "a", &ev, &n, &e), e);
    assert_int_equal(n, 0);
    store_token_row *rows;
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 0);
    assert_int_equal(check(s, t, NULL), 0);

    /* committed: there, for another handle too */
    assert_ok(store_begin(s, &e), e);
    assert_ok(store_job_insert(s, &j, &e), e);
    assert_ok(store_meta_set(s, "k", 2, &e), e);
    assert_ok(store_commit(s, &e), e);
    store *s2 = open_ok(path);
    assert_int_equal(store_job_get(s2, "a", &g, &e), 1);
    store_job_free(&g);
    assert_int_equal(store_meta_get(s2, "k", &v, &e), 1);
    assert_int_equal(v, 2);
    /* a transaction left open at close is rolled back */
    assert_ok(store_begin(s2, &e), e);
    assert_ok(store_meta_set(s2, "k", 3, &e), e);
    store_close(s2);
    assert_int_equal(store_meta_get(s, "k", &v, &e), 1);
    assert_int_equal(v, 2);
    store_close(s);
}

/* A child writes committed data, then starts a transaction and dies in
 * it: by its own SIGKILL, by _exit, or killed by the parent while it
 * keeps inserting. Only the committed data is there afterwards. */
enum { DIE_SELF_KILL, DIE_EXIT, DIE_KILLED };

static void child(const char *path, int how, int wfd)
{
    store *s;
    ef_err e = {0};
    if (store_open(&s, path, &e) != EF_OK)
        _exit(10);
    char id[32];
    /* committed: one transaction of 50 jobs, and a meta value */
    if (store_begin(s, &e) != EF_OK)
        _exit(11);
    for (int i = 0; i < 50; i++) {
        snprintf(id, sizeof id, "c%d", i);
        store_job j = mkjob(id, "alice", "queued", i);
        if (store_job_insert(s, &j, &e) != EF_OK)
            _exit(12);
    }
    if (store_commit(s, &e) != EF_OK ||
        store_meta_set(s, "committed", 1, &e) != EF_OK)
        _exit(13);
    /* then a transaction that never ends */
    if (store_begin(s, &e) != EF_OK)
        _exit(14);
    if (store_meta_set(s, "lost", 1, &e) != EF_OK ||
        store_plan_put(s, 1, 1, "replan", 0, "{}", &e) != EF_OK ||
        store_event_add(s, NULL, 1, "lost", NULL, &e) != EF_OK)
        _exit(15);
    for (int i = 0;; i++) {
        snprintf(id, sizeof id, "u%d", i);
        store_job j = mkjob(id, "bob", "queued", i);
        if (store_job_insert(s, &j, &e) != EF_OK)
            _exit(16);
        if (i == 200) {
            /* tell the parent this point was reached */
            char c = 'x';
            if (write(wfd, &c, 1) != 1)
                _exit(17);
            if (how == DIE_SELF_KILL)
                kill(getpid(), SIGKILL);
            if (how == DIE_EXIT)
                _exit(0);
        }
    }
}

static void test_killed(void **state)
{
    for (int how = DIE_SELF_KILL; how <= DIE_KILLED; how++) {
        char path[512], name[32];
        snprintf(name, sizeof name, "k%d.db", how);
        in_dir(path, sizeof path, name);
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child(path, how, fds[1]);
            _exit(20);
        }
        close(fds[1]);
        char c;
        assert_int_equal(read(fds[0], &c, 1), 1); /* 200 rows in */
        if (how == DIE_KILLED)
            kill(pid, SIGKILL);
        close(fds[0]);
        int st;
        while (waitpid(pid, &st, 0) < 0)
            assert_int_equal(errno, EINTR);
        if (how == DIE_EXIT) {
            /* its status may be valgrind's, which counts the open store
             * as leaked */
            assert_true(WIFEXITED(st));
        } else {
            assert_true(WIFSIGNALED(st));
            assert_int_equal(WTERMSIG(st), SIGKILL);
        }

        store *s = open_ok(path);
        ef_err e = {0};
        store_job *rows;
        int n;
        assert_ok(store_jobs_list(s, NULL, NULL, &rows, &n, &e), e);
        assert_int_equal(n, 50);
        for (int i = 0; i < n; i++)
            assert_string_equal(rows[i].owner, "alice");
        store_jobs_free(rows, n);
        int64_t v;
        assert_int_equal(store_meta_get(s, "committed", &v, &e), 1);
        assert_int_equal(store_meta_get(s, "lost", &v, &e), 0);
        char *text;
        assert_int_equal(store_plan_get(s, &v, &text, &e), 0);
        store_event *ev;
        assert_ok(store_events(s, NULL, &ev, &n, &e), e);
        assert_int_equal(n, 0);
        /* and the store takes new writes */
        store_job j = mkjob("after", "carol", "queued", 1);
        assert_ok(store_job_insert(s, &j, &e), e);
        assert_int_equal(j.seq, 51);
        store_close(s);
    }
}

/* A store of schema 1 (before the closed loop) is migrated to the current
 * schema with its rows; the loop's tables then work: attempts (insert,
 * update, live filter), a job's risk, drained nodes. */
/* Tokens mapped to Unix accounts: one account per user, kept by the
 * store, given by check and list; a store of schema 2 gets the column
 * with its tokens unmapped. */
static void test_unix_user(void **state)
{
    (void)state;
    char path[512], text[TOKEN_TEXT_MAX + 1];
    in_dir(path, sizeof path, "unix.db");
    store *s = open_ok(path);
    ef_err e = {0};
    store_ident who, chk;
    assert_ok(store_token_add_as(s, "alice", 0, "alice", 1, text,
                                 sizeof text, &who, &e), e);
    assert_string_equal(who.unix_user, "alice");
    assert_int_equal(store_token_check(s, text, &chk, &e), 1);
    assert_string_equal(chk.unix_user, "alice");
    /* a second account for alice's live tokens is refused */
    assert_err(store_token_add_as(s, "alice", 0, "mallory", 2, text,
                                  sizeof text, &who, &e), e, path,
               "alice's live tokens run jobs as Unix user alice");
    assert_err(store_token_add_as(s, "bob", 0, "-x", 2, text, sizeof text,
                                  &who, &e), e, path,
               "--unix-user \"-x\": starts with '-'");
    assert_ok(store_token_add(s, "bob", 0, 3, text, sizeof text, &who, &e),
              e);
    assert_string_equal(who.unix_user, "");
    assert_ok(store_token_add(s, "ops", 1, 4, text, sizeof text, &who, &e),
              e);
    char acct[64];
    assert_int_equal(store_user_unix(s, "alice", acct, sizeof acct, &e), 1);
    assert_string_equal(acct, "alice");
    assert_int_equal(store_user_unix(s, "bob", acct, sizeof acct, &e), 0);
    assert_int_equal(store_user_unix(s, "nobody", acct, sizeof acct, &e), 0);
    int64_t users = 0;
    assert_ok(store_users_count(s, &users, &e), e);
    assert_int_equal(users, 2); /* alice and bob; ops is an operator */
    /* revoked, alice keeps her account for her jobs; a new one may differ */
    int count = 0;
    assert_ok(store_token_revoke(s, "alice", 5, &count, &e), e);
    assert_int_equal(store_user_unix(s, "alice", acct, sizeof acct, &e), 1);
    assert_string_equal(acct, "alice");
    assert_ok(store_users_count(s, &users, &e), e);
    assert_int_equal(users, 1);
    store_token_row *rows;
    int n;
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].who.unix_user, "alice");
    assert_string_equal(rows[1].who.unix_user, "");
    free(rows);
    store_close(s);
    /* schema 2: no column; migrated, the tokens unmapped */
    raw_exec(path, SCHEMA5_UNDO "ALTER TABLE tokens DROP COLUMN unix_user; "
             "DROP TABLE learned; PRAGMA user_version = 2;");
    s = open_ok(path);
    assert_int_equal(raw_pragma(path, "PRAGMA user_version"), STORE_SCHEMA);
    assert_int_equal(store_user_unix(s, "alice", acct, sizeof acct, &e), 0);
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].who.unix_user, "");
    free(rows);
    store_close(s);
    /* a store that another may read is refused */
    assert_int_equal(chmod(path, 0640), 0);
    refused(path, "chmod 600 ");
}

static void test_loop_tables(void **state)
{
    (void)state;
    char path[512];
    in_dir(path, sizeof path, "v1.db");
    store *s = open_ok(path);
    ef_err e = {0};
    store_job j1 = mkjob("a", "ann", "queued", 1);
    assert_ok(store_job_insert(s, &j1, &e), e);
    store_close(s);
    /* make it a schema-1 file again */
    raw_exec(path, SCHEMA5_UNDO "DROP TABLE attempts; DROP TABLE nodes; "
             "ALTER TABLE jobs "
             "DROP COLUMN risk; ALTER TABLE tokens DROP COLUMN unix_user; "
             "DROP TABLE learned; PRAGMA user_version = 1;");
    assert_int_equal(raw_pragma(path, "PRAGMA user_version"), 1);
    s = open_ok(path);
    assert_int_equal(raw_pragma(path, "PRAGMA user_version"), STORE_SCHEMA);
    store_job g;
    assert_int_equal(store_job_get(s, "a", &g, &e), 1);
    assert_null(g.risk);
    store_job_free(&g);
    assert_int_equal(store_job_set_risk(s, "a", "late", 5, &e), 1);
    assert_int_equal(store_job_set_risk(s, "nope", "late", 5, &e), 0);
    assert_int_equal(store_job_get(s, "a", &g, &e), 1);
    assert_string_equal(g.risk, "late");
    store_job_free(&g);
    store_attempt a = {"a", 1, STORE_A_INTENDED, "[]", "", 10, -1, NULL,
                       "start"};
    assert_ok(store_attempt_put(s, &a, &e), e);
    a.state = STORE_A_RUNNING;
    a.handle = "123:4";
    assert_ok(store_attempt_put(s, &a, &e), e);
    store_attempt b = {"a", 2, STORE_A_INTENDED, "[]", "", 20, -1, NULL,
                       "resize"};
    assert_ok(store_attempt_put(s, &b, &e), e);
    a.state = STORE_A_ENDED;
    a.ended = 19;
    a.result = "stopped";
    assert_ok(store_attempt_put(s, &a, &e), e);
    store_attempt *rows;
    int n;
    assert_ok(store_attempts_list(s, NULL, 0, &rows, &n, &e), e);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].attempt, 1);
    assert_int_equal(rows[0].state, STORE_A_ENDED);
    assert_string_equal(rows[0].handle, "123:4");
    assert_string_equal(rows[0].result, "stopped");
    assert_int_equal(rows[0].ended, 19);
    assert_int_equal(rows[1].state, STORE_A_INTENDED);
    assert_null(rows[1].result);
    assert_int_equal(rows[1].ended, -1);
    store_attempts_free(rows, n);
    assert_ok(store_attempts_list(s, "a", 1, &rows, &n, &e), e);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].attempt, 2);
    store_attempts_free(rows, n);
    assert_ok(store_attempts_list(s, "b", 0, &rows, &n, &e), e);
    assert_int_equal(n, 0);
    assert_null(rows);
    /* an incomplete row is refused */
    store_attempt bad = {"a", 0, STORE_A_INTENDED, "[]", "", 0, -1, NULL,
                         "x"};
    assert_int_equal(store_attempt_put(s, &bad, &e), EF_ERR);
    /* nodes */
    store_node *nd;
    assert_int_equal(store_node_set(s, 1, "drained", "maintenance", 7, &e), 1);
    assert_int_equal(store_node_set(s, 0, "down", "sinfo", 8, &e), 1);
    assert_ok(store_nodes_list(s, &nd, &n, &e), e);
    assert_int_equal(n, 2);
    assert_int_equal(nd[0].node, 0);
    assert_string_equal(nd[1].state, "drained");
    assert_string_equal(nd[1].why, "maintenance");
    store_nodes_free(nd, n);
    assert_int_equal(store_node_set(s, 0, NULL, NULL, 9, &e), 1);
    assert_int_equal(store_node_set(s, 0, NULL, NULL, 9, &e), 0);
    assert_ok(store_nodes_list(s, &nd, &n, &e), e);
    assert_int_equal(n, 1);
    store_nodes_free(nd, n);
    store_close(s);
}

/* What the loop learns of a model: the first run sets it, later runs are
 * smoothed in; a user's own row wins once it has STORE_LEARN_OWN runs;
 * it survives a reopen; nonsense is ignored. */
static void test_learned(void **state)
{
    (void)state;
    char path[512];
    in_dir(path, sizeof path, "learn.db");
    store *s = open_ok(path);
    ef_err e = {0};
    store_learnt l;
    assert_ok(store_learned(s, "bert", "ann", &l, &e), e);
    assert_int_equal(l.speed_runs, 0);
    assert_true(l.speed == 1.0 && l.restart == 1.0);
    assert_ok(store_learn(s, "bert", "bob", 0, 0.5, &e), e);
    assert_ok(store_learn(s, "bert", "bob", 0, 1.0, &e), e);
    assert_ok(store_learn(s, "bert", "ann", 1, 3.0, &e), e);
    assert_ok(store_learn(s, "bert", "ann", 0, -1, &e), e); /* ignored */
    assert_ok(store_learned(s, "bert", "ann", &l, &e), e);
    assert_int_equal(l.speed_runs, 2);
    assert_false(l.speed_own);
    assert_true(fabs(l.speed - (0.5 + STORE_LEARN_ALPHA * 0.5)) < 1e-12);
    assert_int_equal(l.restart_runs, 1);
    assert_true(l.restart == 3.0);
    store_close(s);
    s = open_ok(path);
    assert_ok(store_learned(s, "bert", "bob", &l, &e), e);
    assert_true(l.speed_own && l.speed_runs == 2); /* bob's own two */
    assert_ok(store_learned(s, "gpt2", "bob", &l, &e), e);
    assert_int_equal(l.speed_runs, 0);
    /* a restart reported cheaper than the model charges (a job that
     * writes progress at once) is learned at the model's charge */
    assert_ok(store_learn(s, "gpt2", "bob", 1, 0.01, &e), e);
    assert_ok(store_learned(s, "gpt2", "bob", &l, &e), e);
    assert_int_equal(l.restart_runs, 1);
    assert_true(l.restart == 1.0);
    store_close(s);
}

/* Per-user limits on tokens: none set reads as the service's; set by id
 * or by name (every live token of it), one at a time or both, kept when
 * not given; nonsense refused; a schema-4 store is migrated with its
 * tokens on the service's limits. The live jobs of a user count queued
 * and running ones only. */
static void test_limits(void **state)
{
    (void)state;
    char path[512];
    in_dir(path, sizeof path, "lim.db");
    store *s = open_ok(path);
    ef_err e = {0};
    char text[TOKEN_TEXT_MAX + 1];
    store_ident a1, a2, b;
    assert_ok(store_token_add(s, "alice", 0, 1, text, sizeof text, &a1, &e),
              e);
    assert_ok(store_token_add(s, "alice", 0, 2, text, sizeof text, &a2, &e),
              e);
    assert_ok(store_token_add(s, "bob", 0, 3, text, sizeof text, &b, &e), e);
    store_ident who;
    assert_int_equal(store_token_check(s, text, &who, &e), 1);
    assert_int_equal(who.max_queued, STORE_LIMIT_SERVICE);
    assert_int_equal(who.max_rate, STORE_LIMIT_SERVICE);
    int count = 0;
    /* bob's token by id: both limits */
    assert_ok(store_token_set_limits(s, b.id, 5, STORE_LIMIT_NONE, &count,
                                     &e), e);
    assert_int_equal(count, 1);
    assert_int_equal(store_token_check(s, text, &who, &e), 1);
    assert_int_equal(who.max_queued, 5);
    assert_int_equal(who.max_rate, STORE_LIMIT_NONE);
    /* the rate alone: the queued limit stays */
    assert_ok(store_token_set_limits(s, "bob", STORE_LIMIT_KEEP, 12, &count,
                                     &e), e);
    assert_int_equal(count, 1);
    assert_int_equal(store_token_check(s, text, &who, &e), 1);
    assert_int_equal(who.max_queued, 5);
    assert_int_equal(who.max_rate, 12);
    /* by name: both of alice's; back to the service's */
    assert_ok(store_token_set_limits(s, "alice", 3, STORE_LIMIT_KEEP, &count,
                                     &e), e);
    assert_int_equal(count, 2);
    store_token_row *rows;
    int n;
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].who.max_queued, 3);
    assert_int_equal(rows[1].who.max_queued, 3);
    assert_int_equal(rows[1].who.max_rate, STORE_LIMIT_SERVICE);
    assert_int_equal(rows[2].who.max_rate, 12);
    free(rows);
    assert_ok(store_token_set_limits(s, "bob", STORE_LIMIT_SERVICE,
                                     STORE_LIMIT_SERVICE, &count, &e), e);
    assert_int_equal(store_token_check(s, text, &who, &e), 1);
    assert_int_equal(who.max_queued, STORE_LIMIT_SERVICE);
    assert_int_equal(who.max_rate, STORE_LIMIT_SERVICE);
    /* no such token: nothing changed, not an error; nonsense refused */
    assert_ok(store_token_set_limits(s, "carol", 1, 1, &count, &e), e);
    assert_int_equal(count, 0);
    assert_int_equal(store_token_set_limits(s, "bob", 0 - 7, 1, &count, &e),
                     EF_ERR);
    assert_int_equal(e.kind, EF_E_INPUT);
    /* a revoked token is not changed */
    assert_ok(store_token_revoke(s, a1.id, 9, &count, &e), e);
    assert_ok(store_token_set_limits(s, a1.id, 8, 8, &count, &e), e);
    assert_int_equal(count, 0);
    /* the live jobs of a user */
    store_job j[5] = {mkjob("q1", "alice", "queued", 1),
                      mkjob("r1", "alice", "running", 2),
                      mkjob("d1", "alice", "done", 3),
                      mkjob("x1", "alice", "rejected", 4),
                      mkjob("q2", "bob", "queued", 5)};
    for (int k = 0; k < 5; k++)
        assert_ok(store_job_insert(s, &j[k], &e), e);
    int64_t live = -1;
    assert_ok(store_user_live(s, "alice", &live, &e), e);
    assert_int_equal(live, 2);
    assert_ok(store_user_live(s, "carol", &live, &e), e);
    assert_int_equal(live, 0);
    store_close(s);
    /* a schema-4 store: migrated, its tokens on the service's limits */
    raw_exec(path, SCHEMA5_UNDO "PRAGMA user_version = 4;");
    s = open_ok(path);
    assert_int_equal(raw_pragma(path, "PRAGMA user_version"), STORE_SCHEMA);
    assert_ok(store_token_list(s, &rows, &n, &e), e);
    assert_int_equal(n, 3);
    for (int k = 0; k < n; k++) {
        assert_int_equal(rows[k].who.max_queued, STORE_LIMIT_SERVICE);
        assert_int_equal(rows[k].who.max_rate, STORE_LIMIT_SERVICE);
    }
    free(rows);
    assert_ok(store_user_live(s, "alice", &live, &e), e);
    assert_int_equal(live, 2);
    store_close(s);
}

/* How many rows 'sql' counts. */
static int64_t raw_count(const char *path, const char *sql)
{
    return raw_pragma(path, sql);
}

/* Retention: only ended jobs older than the cutoff go, oldest first, in
 * batches, with their events and attempts; a job with an attempt still
 * live stays; the service's old events go; "pruned_jobs" counts them.
 * The plan history keeps its newest N and the current plan. */
static void test_prune(void **state)
{
    (void)state;
    char path[512];
    in_dir(path, sizeof path, "prune.db");
    store *s = open_ok(path);
    ef_err e = {0};
    const char *st[] = {"done", "failed", "cancelled", "rejected",
                        "planned-done", "queued", "running", "done"};
    char id[16];
    for (int k = 0; k < 8; k++) {
        snprintf(id, sizeof id, "j%d", k);
        store_job j = mkjob(id, "alice", st[k], 100 + k);
        assert_ok(store_job_insert(s, &j, &e), e);
        assert_ok(store_event_add(s, id, 100 + k, "submitted", NULL, &e), e);
        assert_ok(store_event_add(s, id, 100 + k, "ended", NULL, &e), e);
    }
    /* j7 ended late (after the cutoff); j0 has a live attempt and one
     * ended; j1 only ended ones */
    assert_int_equal(store_job_update(s, "j7", "done", 0, 500, &e), 1);
    store_attempt a = {"j0", 1, STORE_A_RUNNING, "[]", "h", 10, -1, NULL,
                       "start"};
    assert_ok(store_attempt_put(s, &a, &e), e);
    store_attempt b = {"j1", 1, STORE_A_ENDED, "[]", "h", 10, 20, "failed",
                       "start"};
    assert_ok(store_attempt_put(s, &b, &e), e);
    assert_ok(store_event_add(s, NULL, 50, "started", NULL, &e), e);
    assert_ok(store_event_add(s, NULL, 400, "started", NULL, &e), e);
    store_pruned p = {0};
    /* batch 2: j1, j2 (oldest first; j0 is held by its attempt) */
    assert_int_equal(store_prune_jobs(s, 300, 2, &p, &e), 2);
    store_job g;
    assert_int_equal(store_job_get(s, "j0", &g, &e), 1);
    store_job_free(&g);
    assert_int_equal(store_job_get(s, "j1", &g, &e), 0);
    assert_int_equal(store_job_get(s, "j2", &g, &e), 0);
    assert_int_equal(store_job_get(s, "j3", &g, &e), 1);
    store_job_free(&g);
    assert_int_equal(p.jobs, 2);
    assert_int_equal(p.attempts, 1);
    /* 4 events of the two jobs, the service's event at 50 */
    assert_int_equal(p.events, 5);
    int64_t total = 0;
    assert_int_equal(store_meta_get(s, "pruned_jobs", &total, &e), 1);
    assert_int_equal(total, 2);
    /* the rest: j3, j4; then nothing */
    assert_int_equal(store_prune_jobs(s, 300, 10, &p, &e), 2);
    assert_int_equal(store_prune_jobs(s, 300, 10, &p, &e), 0);
    assert_int_equal(store_meta_get(s, "pruned_jobs", &total, &e), 1);
    assert_int_equal(total, 4);
    store_job *rows;
    int n;
    assert_ok(store_jobs_list(s, NULL, NULL, &rows, &n, &e), e);
    assert_int_equal(n, 4); /* j0 (attempt), j5, j6 (live), j7 (late) */
    assert_string_equal(rows[0].id, "j0");
    assert_string_equal(rows[3].id, "j7");
    store_jobs_free(rows, n);
    store_event *ev;
    assert_ok(store_events(s, NULL, &ev, &n, &e), e);
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].at, 400);
    store_events_free(ev, n);
    assert_ok(store_events(s, "j7", &ev, &n, &e), e);
    assert_int_equal(n, 2);
    store_events_free(ev, n);
    /* the attempt ends: j0 goes too */
    a.state = STORE_A_ENDED;
    a.ended = 30;
    a.result = "done";
    assert_ok(store_attempt_put(s, &a, &e), e);
    assert_int_equal(store_prune_jobs(s, 300, 10, &p, &e), 1);
    assert_int_equal(raw_count(path, "SELECT count(*) FROM attempts"), 0);
    /* plans: versions 1..6, the current one is 3 (a rewind cannot happen,
     * but the current one is never pruned whatever its place) */
    for (int v = 1; v <= 6; v++)
        assert_ok(store_plan_put(s, v, v, "replan", 0, "{}", &e), e);
    assert_int_equal(store_prune_plans(s, 2, 2, &p, &e), 2);
    assert_int_equal(store_prune_plans(s, 2, 2, &p, &e), 2);
    assert_int_equal(store_prune_plans(s, 2, 2, &p, &e), 0);
    assert_int_equal(raw_count(path, "SELECT count(*) FROM plans"), 2);
    assert_int_equal(raw_count(path, "SELECT min(version) FROM plans"), 5);
    int64_t ver;
    char *text;
    assert_int_equal(store_plan_get(s, &ver, &text, &e), 1);
    assert_int_equal(ver, 6);
    free(text);
    raw_exec(path, "UPDATE plan_current SET version = 5");
    assert_int_equal(store_prune_plans(s, 1, 10, &p, &e), 0);
    assert_int_equal(raw_count(path, "SELECT count(*) FROM plans"), 2);
    assert_int_equal(p.plans, 4);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_create_reopen),
        cmocka_unit_test(test_refuse),
        cmocka_unit_test(test_name_check),
        cmocka_unit_test(test_token_make),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_plans_meta),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_killed),
        cmocka_unit_test(test_loop_tables),
        cmocka_unit_test(test_unix_user),
        cmocka_unit_test(test_learned),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_prune),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
