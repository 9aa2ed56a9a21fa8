/* store.c: the service's durable state in one SQLite database (store.h). */
#include "service/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/util.h"
#include "service/token.h"

struct store {
    sqlite3 *db;
    char *path;
};

/* ---- schema -------------------------------------------------------------- */

/* Version 0 -> 1: the first schema. */
static const char schema_1[] =
    "CREATE TABLE tokens ("
    "  id TEXT PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  op INTEGER NOT NULL CHECK (op IN (0, 1)),"
    "  salt BLOB NOT NULL CHECK (length(salt) = 16),"
    "  hash BLOB NOT NULL CHECK (length(hash) = 32),"
    "  created INTEGER NOT NULL,"
    "  revoked INTEGER);"
    "CREATE INDEX tokens_name ON tokens (name);"
    "CREATE TABLE jobs ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  id TEXT UNIQUE NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  body TEXT NOT NULL,"
    "  request TEXT NOT NULL,"
    "  decision TEXT NOT NULL,"
    "  answer TEXT NOT NULL,"
    "  state TEXT NOT NULL,"
    "  progress INTEGER NOT NULL,"
    "  submitted INTEGER NOT NULL,"
    "  updated INTEGER NOT NULL);"
    "CREATE INDEX jobs_owner ON jobs (owner, seq);"
    "CREATE INDEX jobs_state ON jobs (state, seq);"
    "CREATE TABLE events ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job TEXT,"
    "  at INTEGER NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  detail TEXT NOT NULL);"
    "CREATE INDEX events_job ON events (job, seq);"
    "CREATE TABLE plans ("
    "  version INTEGER PRIMARY KEY,"
    "  at INTEGER NOT NULL,"
    "  why TEXT NOT NULL,"
    "  admitted INTEGER NOT NULL);"
    "CREATE TABLE plan_current ("
    "  one INTEGER PRIMARY KEY CHECK (one = 1),"
    "  version INTEGER NOT NULL REFERENCES plans (version),"
    "  text TEXT NOT NULL);"
    "CREATE TABLE meta ("
    "  key TEXT PRIMARY KEY,"
    "  value INTEGER NOT NULL);";

/* Version 1 -> 2: the closed loop (efplan serve --backend): a job's
 * at-risk reason, the attempts the loop launched (intent recorded before
 * every launch and stop), and the drained nodes. */
static const char schema_2[] =
    "ALTER TABLE jobs ADD COLUMN risk TEXT;"
    "CREATE TABLE attempts ("
    "  job TEXT NOT NULL,"
    "  attempt INTEGER NOT NULL CHECK (attempt >= 1),"
    "  state TEXT NOT NULL CHECK (state IN ('intended', 'running',"
    "                                       'stopping', 'ended')),"
    "  place TEXT NOT NULL,"
    "  handle TEXT NOT NULL,"
    "  started INTEGER NOT NULL,"
    "  ended INTEGER,"
    "  result TEXT,"
    "  why TEXT NOT NULL,"
    "  PRIMARY KEY (job, attempt));"
    "CREATE INDEX attempts_state ON attempts (state);"
    "CREATE TABLE nodes ("
    "  node INTEGER PRIMARY KEY CHECK (node >= 0),"
    "  state TEXT NOT NULL CHECK (state IN ('drained', 'down')),"
    "  why TEXT NOT NULL,"
    "  at INTEGER NOT NULL);";

/* Version 2 -> 3: a token's Unix account (efplan token add --unix-user):
 * its jobs run as that user; NULL: as the service's job user. */
static const char schema_3[] =
    "ALTER TABLE tokens ADD COLUMN unix_user TEXT;";

/* Version 3 -> 4: what the closed loop has measured of each model (owner
 * ''), and of each user's jobs of it: the speed against the curve and
 * the restart cost against the overhead model's, smoothed over runs. */
static const char schema_4[] =
    "CREATE TABLE learned ("
    "  model TEXT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  speed REAL NOT NULL,"
    "  speed_runs INTEGER NOT NULL,"
    "  restart REAL NOT NULL,"
    "  restart_runs INTEGER NOT NULL,"
    "  PRIMARY KEY (model, owner));";

/* Version 4 -> 5: retention and per-user limits (efplan serve --keep,
 * --max-queued, --max-submit-rate): a token's own limits (NULL: the
 * service's; -1: none), an index of the jobs by their last change (the
 * ended ones are pruned by it) and one of a user's jobs by state (the
 * queued-jobs limit counts them). */
static const char schema_5[] =
    "ALTER TABLE tokens ADD COLUMN max_queued INTEGER;"
    "ALTER TABLE tokens ADD COLUMN max_rate INTEGER;"
    "CREATE INDEX jobs_updated ON jobs (updated);"
    "CREATE INDEX jobs_owner_state ON jobs (owner, state);";

/* The migrations: steps[v] takes a store from schema v to v + 1 (one SQL
 * script, no data in it). */
static const char *const steps[] = {
    schema_1,
    schema_2,
    schema_3,
    schema_4,
    schema_5,
};
_Static_assert(sizeof steps / sizeof steps[0] == STORE_SCHEMA,
               "one migration step per schema version");

/* ---- helpers ------------------------------------------------------------- */

/* An SQLite failure of 'what': EF_E_INPUT when the file is not a
 * database (or a damaged one), else EF_E_INTERNAL. */
static int dberr(store *s, const char *what, ef_err *e)
{
    int code = sqlite3_errcode(s->db);
    ef_errkind k = code == SQLITE_NOTADB || code == SQLITE_CORRUPT ?
                   EF_E_INPUT : EF_E_INTERNAL;
    if (k == EF_E_INPUT)
        return ef_fail(e, k, "%s: not an efplan store: %s", s->path,
                       sqlite3_errmsg(s->db));
    return ef_fail(e, k, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

/* Run constant SQL (never built from data). */
static int run_sql(store *s, const char *sql, const char *what, ef_err *e)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return dberr(s, what, e);
    return EF_OK;
}

static int prep(store *s, const char *sql, sqlite3_stmt **st,
                const char *what, ef_err *e)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return dberr(s, what, e);
    }
    return EF_OK;
}

static int bind_str(sqlite3_stmt *st, int i, const char *v)
{
    if (!v)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static int bind_i64(sqlite3_stmt *st, int i, int64_t v)
{
    return sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static char *col_str(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return ef_strdup(t ? (const char *)t : "");
}

/* Step a statement that returns no rows; finalize it. */
static int step_done(store *s, sqlite3_stmt *st, const char *what,
                     ef_err *e)
{
    int rc = sqlite3_step(st);
    int out = EF_OK;
    if (rc != SQLITE_DONE)
        out = dberr(s, what, e);
    sqlite3_finalize(st);
    return out;
}

/* Step statement st (prepared and bound; finalized here) and collect its
 * rows: read(st, row) fills each of 'elem' bytes, zeroed first, into a
 * heap array *rows of *n (NULL when none). On a failure the rows read so
 * far go to drop(rows, count) and the error names 'what'. */
static int collect(store *s, sqlite3_stmt *st, size_t elem,
                   void (*read)(sqlite3_stmt *st, void *row),
                   void (*drop)(void *rows, int n), void **rows, int *n,
                   const char *what, ef_err *e)
{
    char *r = NULL;
    int nr = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (nr == cap) {
            cap = cap ? 2 * cap : 8;
            r = ef_realloc(r, (size_t)cap * elem);
        }
        memset(r + (size_t)nr * elem, 0, elem);
        read(st, r + (size_t)nr * elem);
        nr++;
    }
    if (rc != SQLITE_DONE) {
        dberr(s, what, e);
        sqlite3_finalize(st);
        drop(r, nr);
        return EF_ERR;
    }
    sqlite3_finalize(st);
    *rows = r;
    *n = nr;
    return EF_OK;
}

/* A unit of several statements that lands together: BEGIN IMMEDIATE
 * outside a transaction (so its writes never wait on a read snapshot),
 * a savepoint inside the caller's. */
static int unit_begin(store *s, int *inner, ef_err *e)
{
    *inner = !sqlite3_get_autocommit(s->db);
    return run_sql(s, *inner ? "SAVEPOINT store_unit" : "BEGIN IMMEDIATE",
                   "begin", e);
}

static int unit_end(store *s, int inner, int ok, ef_err *e)
{
    if (ok == EF_OK) {
        if (run_sql(s, inner ? "RELEASE store_unit" : "COMMIT", "commit",
                    e) == EF_OK)
            return EF_OK;
    }
    /* the failed statement may have ended the transaction already */
    if (inner)
        sqlite3_exec(s->db, "ROLLBACK TO store_unit; RELEASE store_unit",
                     NULL, NULL, NULL);
    else if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return EF_ERR;
}

static int query_i64(store *s, const char *sql, int64_t *v, const char *what,
                     ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, sql, &st, what, e) != EF_OK)
        return EF_ERR;
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        int out = dberr(s, what, e);
        sqlite3_finalize(st);
        return out;
    }
    *v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return EF_OK;
}

/* ---- open ---------------------------------------------------------------- */

/* What the file holds: its schema version into *ver (0: empty, to be
 * created), or EF_E_INPUT when it is not an efplan store or a newer one. */
static int classify(store *s, int64_t *ver, ef_err *e)
{
    int64_t app, v, nobj;
    if (query_i64(s, "PRAGMA application_id", &app, "application_id",
                  e) != EF_OK ||
        query_i64(s, "PRAGMA user_version", &v, "user_version", e) != EF_OK ||
        query_i64(s, "SELECT count(*) FROM sqlite_master", &nobj, "schema",
                  e) != EF_OK)
        return EF_ERR;
    if (app == STORE_APP_ID) {
        if (v > STORE_SCHEMA)
            return ef_fail(e, EF_E_INPUT, "%s: an efplan store of schema %"
                           PRId64 ", newer than this efplan's (%d): use the "
                           "efplan that wrote it, or a newer one", s->path,
                           v, STORE_SCHEMA);
        if (v >= 1 || nobj == 0) {
            *ver = v;
            return EF_OK;
        }
        return ef_fail(e, EF_E_INPUT, "%s: an efplan store without a schema "
                       "version (user_version 0 and %" PRId64 " tables): "
                       "damaged, not opened", s->path, nobj);
    }
    if (app != 0)
        return ef_fail(e, EF_E_INPUT, "%s: a SQLite database of another "
                       "application (application_id 0x%08" PRIx64 "), not "
                       "an efplan store", s->path, (uint64_t)app & 0xffffffffu);
    if (v == 0 && nobj == 0) {
        *ver = 0;
        return EF_OK;
    }
    return ef_fail(e, EF_E_INPUT, "%s: a SQLite database that is not an "
                   "efplan store (no efplan application_id; %" PRId64
                   " schema objects, user_version %" PRId64 ")", s->path,
                   nobj, v);
}

/* Bring the store to STORE_SCHEMA in one transaction (another process
 * may have done it meanwhile: the version is read again inside). */
static int migrate(store *s, ef_err *e)
{
    if (run_sql(s, "BEGIN IMMEDIATE", "begin", e) != EF_OK)
        return EF_ERR;
    int64_t ver;
    int rc = classify(s, &ver, e);
    for (int64_t v = ver; rc == EF_OK && v < STORE_SCHEMA; v++)
        rc = run_sql(s, steps[v], "schema migration", e);
    if (rc == EF_OK && ver < STORE_SCHEMA) {
        char sql[96]; /* constants only */
        snprintf(sql, sizeof sql, "PRAGMA application_id = %ld; "
                 "PRAGMA user_version = %d", (long)STORE_APP_ID,
                 STORE_SCHEMA);
        rc = run_sql(s, sql, "schema version", e);
    }
    if (rc == EF_OK)
        rc = run_sql(s, "COMMIT", "commit", e);
    if (rc != EF_OK && !sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* A store holds every user's jobs (their commands and environments) and
 * the tokens' hashes: refused when others may read or write it, or when
 * it is not ours (opening it would make SQLite's -wal and -shm files
 * ours, which its owner then cannot open), as ssh refuses a private key. */
static int store_check_private(const char *path, const struct stat *st,
                               ef_err *e)
{
    if (st->st_uid != geteuid())
        return ef_fail(e, EF_E_INPUT, "%s: the store belongs to uid %ld, not "
                       "to this user (uid %ld): run efplan as its owner, or "
                       "chown %ld %s if this user is to serve it", path,
                       (long)st->st_uid, (long)geteuid(), (long)geteuid(),
                       path);
    if (st->st_mode & (S_IRWXG | S_IRWXO))
        return ef_fail(e, EF_E_INPUT, "%s: mode %04o lets others read or "
                       "change the store (its jobs' commands and "
                       "environments, its tokens): chmod 600 %s", path,
                       (unsigned)(st->st_mode & 07777), path);
    return EF_OK;
}

/* Check the path is a regular file, or create it (mode 0600). */
static int prepare_file(const char *path, ef_err *e)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return ef_fail(e, EF_E_INPUT, "%s: is a directory (expected an "
                           "efplan store, a SQLite file)", path);
        if (!S_ISREG(st.st_mode))
            return ef_fail(e, EF_E_INPUT, "%s: is not a regular file "
                           "(expected an efplan store, a SQLite file)", path);
        return EF_OK;
    }
    if (errno != ENOENT)
        return ef_fail(e, EF_E_INPUT, "%s: %s", path, strerror(errno));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST) /* another process made it meanwhile */
            return prepare_file(path, e);
        return ef_fail(e, EF_E_INPUT, "%s: cannot create the store: %s", path,
                       strerror(errno));
    }
    /* exactly 0600, whatever the umask took away */
    int rc = fchmod(fd, 0600);
    int err = errno;
    close(fd);
    if (rc != 0)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot set mode 0600: %s",
                       path, strerror(err));
    return EF_OK;
}

int store_open(store **out, const char *path, ef_err *e)
{
    *out = NULL;
    if (!path || !path[0])
        return ef_fail(e, EF_E_USAGE, "store: the path is empty");
    if (token_init() != 0)
        return ef_fail(e, EF_E_INTERNAL, "%s: libsodium cannot start", path);
    if (prepare_file(path, e) != EF_OK)
        return EF_ERR;
    store *s = ef_calloc(1, sizeof *s);
    s->path = ef_strdup(path);
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
                             SQLITE_OPEN_CREATE, NULL);
    if (!s->db)
        ef_panic("sqlite3_open_v2: out of memory");
    if (rc != SQLITE_OK) {
        ef_fail(e, EF_E_INPUT, "%s: cannot open the store: %s", path,
                sqlite3_errmsg(s->db));
        store_close(s);
        return EF_ERR;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    int64_t ver = 0;
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        ef_fail(e, EF_E_INPUT, "%s: the store is not writable", path);
        goto fail;
    }
    if (run_sql(s, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL",
                "settings", e) != EF_OK ||
        classify(s, &ver, e) != EF_OK)
        goto fail;
    /* an efplan store (or an empty file): private, or not used */
    struct stat fst;
    if (stat(path, &fst) != 0) {
        ef_fail(e, EF_E_INPUT, "%s: %s", path, strerror(errno));
        goto fail;
    }
    if (store_check_private(path, &fst, e) != EF_OK)
        goto fail;
    /* only now that the file is ours (or empty) is anything written */
    sqlite3_stmt *st;
    if (prep(s, "PRAGMA journal_mode = WAL", &st, "journal_mode", e) != EF_OK)
        goto fail;
    rc = sqlite3_step(st);
    const unsigned char *mode = rc == SQLITE_ROW ?
                                sqlite3_column_text(st, 0) : NULL;
    if (!mode || strcmp((const char *)mode, "wal") != 0) {
        if (rc == SQLITE_ROW)
            ef_fail(e, EF_E_INTERNAL, "%s: cannot use WAL mode (journal_mode "
                    "is %s)", path, mode ? (const char *)mode : "unknown");
        else
            dberr(s, "journal_mode", e);
        sqlite3_finalize(st);
        goto fail;
    }
    sqlite3_finalize(st);
    if (ver < STORE_SCHEMA && migrate(s, e) != EF_OK)
        goto fail;
    *out = s;
    return EF_OK;
fail:
    store_close(s);
    return EF_ERR;
}

int store_open_reader(store **out, const char *path, ef_err *e)
{
    *out = NULL;
    store *s = ef_calloc(1, sizeof *s);
    s->path = ef_strdup(path);
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY, NULL);
    if (!s->db)
        ef_panic("sqlite3_open_v2: out of memory");
    if (rc != SQLITE_OK) {
        ef_fail(e, EF_E_INTERNAL, "%s: cannot open a reader: %s", path,
                sqlite3_errmsg(s->db));
        store_close(s);
        return EF_ERR;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    *out = s;
    return EF_OK;
}

void store_close(store *s)
{
    if (!s)
        return;
    if (s->db) {
        if (!sqlite3_get_autocommit(s->db))
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close_v2(s->db);
    }
    free(s->path);
    free(s);
}

const char *store_path(const store *s)
{
    return s->path;
}

/* ---- transactions -------------------------------------------------------- */

int store_begin(store *s, ef_err *e)
{
    if (!sqlite3_get_autocommit(s->db))
        return ef_fail(e, EF_E_INTERNAL, "%s: begin: a transaction is "
                       "already open", s->path);
    return run_sql(s, "BEGIN IMMEDIATE", "begin", e);
}

int store_commit(store *s, ef_err *e)
{
    if (sqlite3_get_autocommit(s->db))
        return ef_fail(e, EF_E_INTERNAL, "%s: commit: no transaction is "
                       "open", s->path);
    if (run_sql(s, "COMMIT", "commit", e) == EF_OK)
        return EF_OK;
    store_rollback(s);
    return EF_ERR;
}

void store_rollback(store *s)
{
    if (s && s->db && !sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- tokens -------------------------------------------------------------- */

int store_token_add(store *s, const char *name, int op, int64_t now,
                    char *text, size_t cap, store_ident *who, ef_err *e)
{
    return store_token_add_as(s, name, op, NULL, now, text, cap, who, e);
}

/* The Unix account (unix_user, cap bytes; "" when none) of the token of
 * 'name' that query 'sql' (?1: the name) picks: 1 when it found one, 0
 * when not, EF_ERR. */
static int token_account(store *s, const char *sql, const char *name,
                         char *unix_user, size_t cap, const char *what,
                         ef_err *e)
{
    unix_user[0] = '\0';
    sqlite3_stmt *st;
    if (prep(s, sql, &st, what, e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, name)) {
        int out = dberr(s, what, e);
        sqlite3_finalize(st);
        return out;
    }
    int rc = sqlite3_step(st), out = 0;
    if (rc == SQLITE_ROW) {
        const unsigned char *u = sqlite3_column_text(st, 0);
        snprintf(unix_user, cap, "%s", u ? (const char *)u : "");
        out = 1;
    } else if (rc != SQLITE_DONE) {
        out = dberr(s, what, e);
    }
    sqlite3_finalize(st);
    return out;
}

/* The Unix account of the live tokens of 'name' into unix_user (cap
 * bytes; "" when they have none): 1 when 'name' has a live token, 0 when
 * not. */
static int live_unix_user(store *s, const char *name, char *unix_user,
                          size_t cap, ef_err *e)
{
    return token_account(s, "SELECT coalesce(unix_user, '') FROM tokens "
                         "WHERE name = ?1 AND revoked IS NULL ORDER BY "
                         "created DESC, id LIMIT 1", name, unix_user, cap,
                         "token user", e);
}

int store_token_add_as(store *s, const char *name, int op,
                       const char *unix_user, int64_t now, char *text,
                       size_t cap, store_ident *who, ef_err *e)
{
    const char *why = token_name_check(name);
    if (why) {
        char q[160];
        return ef_fail(e, EF_E_INPUT, "%s: token name \"%s\": %s (%s)",
                       s->path, ef_quote(name ? name : "", q, sizeof q), why,
                       TOKEN_NAME_RULE);
    }
    if (unix_user && !unix_user[0])
        unix_user = NULL;
    why = unix_user ? token_unix_user_check(unix_user) : NULL;
    if (why) {
        char q[160];
        return ef_fail(e, EF_E_INPUT, "%s: --unix-user \"%s\": %s (%s)",
                       s->path, ef_quote(unix_user, q, sizeof q), why,
                       TOKEN_UNIX_RULE);
    }
    /* one user, one account: every live token of a name runs its jobs as
     * the same Unix user */
    char had[TOKEN_UNIX_MAX + 8];
    int live = live_unix_user(s, name, had, sizeof had, e);
    if (live < 0)
        return EF_ERR;
    if (live && strcmp(had, unix_user ? unix_user : "") != 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s's live tokens run jobs as %s%s, "
                       "not as %s: a user's jobs run as one account (revoke "
                       "them first: efplan token revoke %s)", s->path, name,
                       had[0] ? "Unix user " : "", had[0] ? had :
                       "the service's job user",
                       unix_user ? unix_user : "the service's job user", name);
    char buf[TOKEN_TEXT_MAX + 1], id[TOKEN_ID_LEN + 1];
    unsigned char salt[TOKEN_SALT_LEN], hash[TOKEN_HASH_LEN];
    int rc = EF_ERR;
    /* a new id that happens to be taken (36^10 ids) is drawn again */
    for (int attempt = 0; attempt < 8; attempt++) {
        token_make(buf, id, salt, hash);
        if (strlen(buf) >= cap) {
            rc = ef_fail(e, EF_E_INTERNAL, "%s: token add: a buffer of %zu "
                         "bytes cannot hold a token", s->path, cap);
            break;
        }
        sqlite3_stmt *st;
        if (prep(s, "INSERT INTO tokens (id, name, op, salt, hash, created, "
                 "unix_user) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &st,
                 "token add", e) != EF_OK)
            break;
        if (bind_str(st, 1, id) || bind_str(st, 2, name) ||
            sqlite3_bind_int(st, 3, op ? 1 : 0) ||
            sqlite3_bind_blob(st, 4, salt, sizeof salt, SQLITE_STATIC) ||
            sqlite3_bind_blob(st, 5, hash, sizeof hash, SQLITE_STATIC) ||
            bind_i64(st, 6, now) || bind_str(st, 7, unix_user)) {
            rc = dberr(s, "token add", e);
            sqlite3_finalize(st);
            break;
        }
        int step = sqlite3_step(st);
        int ext = sqlite3_extended_errcode(s->db);
        if (step != SQLITE_DONE)
            rc = dberr(s, "token add", e);
        else
            rc = EF_OK;
        sqlite3_finalize(st);
        if (step == SQLITE_DONE || ext != SQLITE_CONSTRAINT_PRIMARYKEY)
            break;
    }
    if (rc == EF_OK) {
        memcpy(text, buf, strlen(buf) + 1);
        if (who) {
            memset(who, 0, sizeof *who);
            snprintf(who->id, sizeof who->id, "%s", id);
            snprintf(who->name, sizeof who->name, "%s", name);
            snprintf(who->unix_user, sizeof who->unix_user, "%s",
                     unix_user ? unix_user : "");
            who->op = op ? 1 : 0;
        }
    }
    token_wipe(buf, sizeof buf);
    return rc;
}

int store_token_check(store *s, const char *text, store_ident *who,
                      ef_err *e)
{
    char id[TOKEN_ID_LEN + 1];
    if (!text || token_parse(text, id) != 0)
        return 0;
    sqlite3_stmt *st;
    if (prep(s, "SELECT name, op, salt, hash, coalesce(unix_user, ''), "
             "coalesce(max_queued, 0), coalesce(max_rate, 0) "
             "FROM tokens WHERE id = ?1 AND revoked IS NULL", &st,
             "token check",
             e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, id)) {
        int out = dberr(s, "token check", e);
        sqlite3_finalize(st);
        return out;
    }
    int rc = sqlite3_step(st);
    int out = 0;
    if (rc == SQLITE_ROW) {
        const void *salt = sqlite3_column_blob(st, 2);
        int nsalt = sqlite3_column_bytes(st, 2);
        const void *hash = sqlite3_column_blob(st, 3);
        int nhash = sqlite3_column_bytes(st, 3);
        if (salt && hash && nsalt == TOKEN_SALT_LEN &&
            nhash == TOKEN_HASH_LEN && token_verify(text, salt, hash)) {
            out = 1;
            if (who) {
                memset(who, 0, sizeof *who);
                snprintf(who->id, sizeof who->id, "%s", id);
                const unsigned char *n = sqlite3_column_text(st, 0);
                snprintf(who->name, sizeof who->name, "%s",
                         n ? (const char *)n : "");
                who->op = sqlite3_column_int(st, 1) != 0;
                const unsigned char *u = sqlite3_column_text(st, 4);
                snprintf(who->unix_user, sizeof who->unix_user, "%s",
                         u ? (const char *)u : "");
                who->max_queued = sqlite3_column_int64(st, 5);
                who->max_rate = sqlite3_column_int64(st, 6);
            }
        }
    } else if (rc != SQLITE_DONE) {
        out = dberr(s, "token check", e);
    }
    sqlite3_finalize(st);
    return out;
}

int store_token_list(store *s, store_token_row **rows, int *n, ef_err *e)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(s, "SELECT id, name, op, created, coalesce(revoked, -1), "
             "coalesce(unix_user, ''), coalesce(max_queued, 0), "
             "coalesce(max_rate, 0) FROM tokens ORDER BY created, id", &st,
             "token list",
             e) != EF_OK)
        return EF_ERR;
    store_token_row *r = NULL;
    int nr = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (nr == cap) {
            cap = cap ? 2 * cap : 8;
            r = ef_realloc(r, (size_t)cap * sizeof *r);
        }
        store_token_row *t = &r[nr++];
        memset(t, 0, sizeof *t);
        const unsigned char *id = sqlite3_column_text(st, 0);
        const unsigned char *name = sqlite3_column_text(st, 1);
        snprintf(t->who.id, sizeof t->who.id, "%s",
                 id ? (const char *)id : "");
        snprintf(t->who.name, sizeof t->who.name, "%s",
                 name ? (const char *)name : "");
        t->who.op = sqlite3_column_int(st, 2) != 0;
        t->created = sqlite3_column_int64(st, 3);
        t->revoked = sqlite3_column_int64(st, 4);
        const unsigned char *u = sqlite3_column_text(st, 5);
        snprintf(t->who.unix_user, sizeof t->who.unix_user, "%s",
                 u ? (const char *)u : "");
        t->who.max_queued = sqlite3_column_int64(st, 6);
        t->who.max_rate = sqlite3_column_int64(st, 7);
    }
    if (rc != SQLITE_DONE) {
        dberr(s, "token list", e);
        sqlite3_finalize(st);
        free(r);
        return EF_ERR;
    }
    sqlite3_finalize(st);
    *rows = r;
    *n = nr;
    return EF_OK;
}

int store_user_unix(store *s, const char *name, char *unix_user,
                    size_t cap, ef_err *e)
{
    /* its live tokens' account, else its latest token's */
    int rc = token_account(s, "SELECT coalesce(unix_user, '') FROM tokens "
                           "WHERE name = ?1 ORDER BY revoked IS NULL DESC, "
                           "created DESC, id LIMIT 1", name, unix_user, cap,
                           "user account", e);
    return rc == 1 ? unix_user[0] != '\0' : rc;
}

int store_users_count(store *s, int64_t *n, ef_err *e)
{
    return query_i64(s, "SELECT count(DISTINCT name) FROM tokens WHERE "
                     "revoked IS NULL AND op = 0", n, "users", e);
}

/* Whether token key 'key' (an id or a name) is a token's id: *ids the
 * count of tokens with that id (0: take it as a name). */
static int key_is_id(store *s, const char *key, const char *what,
                     int64_t *ids, ef_err *e)
{
    sqlite3_stmt *st;
    *ids = 0;
    int rc = prep(s, "SELECT count(*) FROM tokens WHERE id = ?1", &st, what,
                  e);
    if (rc == EF_OK) {
        if (bind_str(st, 1, key) || sqlite3_step(st) != SQLITE_ROW)
            rc = dberr(s, what, e);
        else
            *ids = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return rc;
}

int store_token_revoke(store *s, const char *key, int64_t now, int *count,
                       ef_err *e)
{
    *count = 0;
    int inner;
    if (unit_begin(s, &inner, e) != EF_OK)
        return EF_ERR;
    int64_t ids = 0;
    sqlite3_stmt *st;
    int rc = key_is_id(s, key, "token revoke", &ids, e);
    if (rc == EF_OK)
        rc = prep(s, ids ? "UPDATE tokens SET revoked = ?1 "
                  "WHERE id = ?2 AND revoked IS NULL" :
                  "UPDATE tokens SET revoked = ?1 "
                  "WHERE name = ?2 AND revoked IS NULL", &st, "token revoke",
                  e);
    if (rc == EF_OK) {
        if (bind_i64(st, 1, now) || bind_str(st, 2, key)) {
            rc = dberr(s, "token revoke", e);
            sqlite3_finalize(st);
        } else {
            rc = step_done(s, st, "token revoke", e);
        }
    }
    int changed = rc == EF_OK ? sqlite3_changes(s->db) : 0;
    if (unit_end(s, inner, rc, e) != EF_OK)
        return EF_ERR;
    *count = changed;
    return EF_OK;
}

/* A limit as store_token_set_limits takes it: 0 when it may be stored. */
static int limit_ok(int64_t v)
{
    return v == STORE_LIMIT_KEEP || v == STORE_LIMIT_SERVICE ||
           v == STORE_LIMIT_NONE || (v >= 1 && v <= 1000000000);
}

int store_token_set_limits(store *s, const char *key, int64_t max_queued,
                           int64_t max_rate, int *count, ef_err *e)
{
    *count = 0;
    if (!limit_ok(max_queued) || !limit_ok(max_rate))
        return ef_fail(e, EF_E_INPUT, "%s: a limit must be 1 to 1000000000, "
                       "none or the service's", s->path);
    int inner;
    if (unit_begin(s, &inner, e) != EF_OK)
        return EF_ERR;
    int64_t ids = 0;
    sqlite3_stmt *st;
    int rc = key_is_id(s, key, "token limits", &ids, e);
    /* ?1, ?2: the new values; ?3, ?4: 1 to keep the old one */
    if (rc == EF_OK)
        rc = prep(s, ids ?
                  "UPDATE tokens SET max_queued = CASE WHEN ?3 THEN "
                  "max_queued ELSE nullif(?1, 0) END, max_rate = CASE WHEN "
                  "?4 THEN max_rate ELSE nullif(?2, 0) END "
                  "WHERE id = ?5 AND revoked IS NULL" :
                  "UPDATE tokens SET max_queued = CASE WHEN ?3 THEN "
                  "max_queued ELSE nullif(?1, 0) END, max_rate = CASE WHEN "
                  "?4 THEN max_rate ELSE nullif(?2, 0) END "
                  "WHERE name = ?5 AND revoked IS NULL", &st,
                  "token limits", e);
    if (rc == EF_OK) {
        int kq = max_queued == STORE_LIMIT_KEEP;
        int kr = max_rate == STORE_LIMIT_KEEP;
        if (bind_i64(st, 1, kq ? 0 : max_queued) ||
            bind_i64(st, 2, kr ? 0 : max_rate) ||
            sqlite3_bind_int(st, 3, kq) || sqlite3_bind_int(st, 4, kr) ||
            bind_str(st, 5, key)) {
            rc = dberr(s, "token limits", e);
            sqlite3_finalize(st);
        } else {
            rc = step_done(s, st, "token limits", e);
        }
    }
    int changed = rc == EF_OK ? sqlite3_changes(s->db) : 0;
    if (unit_end(s, inner, rc, e) != EF_OK)
        return EF_ERR;
    *count = changed;
    return EF_OK;
}

/* ---- jobs ---------------------------------------------------------------- */

#define JOB_COLS "id, owner, body, request, decision, answer, state, " \
                 "progress, submitted, updated, seq, risk"

static void read_job(sqlite3_stmt *st, store_job *j)
{
    j->id = col_str(st, 0);
    j->owner = col_str(st, 1);
    j->body = col_str(st, 2);
    j->request = col_str(st, 3);
    j->decision = col_str(st, 4);
    j->answer = col_str(st, 5);
    j->state = col_str(st, 6);
    j->progress = sqlite3_column_int64(st, 7);
    j->submitted = sqlite3_column_int64(st, 8);
    j->updated = sqlite3_column_int64(st, 9);
    j->seq = sqlite3_column_int64(st, 10);
    j->risk = sqlite3_column_type(st, 11) == SQLITE_NULL ? NULL :
              col_str(st, 11);
}

static void read_job_row(sqlite3_stmt *st, void *row)
{
    read_job(st, row);
}

static void drop_jobs(void *rows, int n)
{
    store_jobs_free(rows, n);
}

void store_job_free(store_job *j)
{
    if (!j)
        return;
    free(j->id);
    free(j->owner);
    free(j->body);
    free(j->request);
    free(j->decision);
    free(j->answer);
    free(j->state);
    free(j->risk);
    memset(j, 0, sizeof *j);
}

/* Bind a job row's ten columns to ?1 .. ?10 of st, in the order of the
 * insert (id, owner, body, request, decision, answer, state, progress,
 * submitted, updated). Nonzero on failure. */
static int bind_job(sqlite3_stmt *st, const store_job *j)
{
    return bind_str(st, 1, j->id) || bind_str(st, 2, j->owner) ||
           bind_str(st, 3, j->body) || bind_str(st, 4, j->request) ||
           bind_str(st, 5, j->decision) || bind_str(st, 6, j->answer) ||
           bind_str(st, 7, j->state) || bind_i64(st, 8, j->progress) ||
           bind_i64(st, 9, j->submitted) || bind_i64(st, 10, j->updated);
}

int store_job_insert(store *s, store_job *j, ef_err *e)
{
    const char *missing = !j->id ? "id" : !j->owner ? "owner" :
                          !j->body ? "body" : !j->request ? "request" :
                          !j->decision ? "decision" : !j->answer ? "answer" :
                          !j->state ? "state" : NULL;
    if (missing)
        return ef_fail(e, EF_E_INTERNAL, "%s: job insert: no %s", s->path,
                       missing);
    sqlite3_stmt *st;
    if (prep(s, "INSERT INTO jobs (id, owner, body, request, decision, "
             "answer, state, progress, submitted, updated) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &st,
             "job insert", e) != EF_OK)
        return EF_ERR;
    if (bind_job(st, j)) {
        int out = dberr(s, "job insert", e);
        sqlite3_finalize(st);
        return out;
    }
    int rc = sqlite3_step(st);
    int out = EF_OK;
    if (rc != SQLITE_DONE) {
        char q[160];
        if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE)
            out = ef_fail(e, EF_E_INPUT, "%s: job \"%s\" is already in the "
                          "store", s->path, ef_quote(j->id, q, sizeof q));
        else
            out = dberr(s, "job insert", e);
    } else {
        j->seq = sqlite3_last_insert_rowid(s->db);
    }
    sqlite3_finalize(st);
    return out;
}

int store_job_replace(store *s, const store_job *j, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, "UPDATE jobs SET owner = ?2, body = ?3, request = ?4, "
             "decision = ?5, answer = ?6, state = ?7, progress = ?8, "
             "submitted = ?9, updated = ?10 WHERE id = ?1", &st,
             "job replace", e) != EF_OK)
        return EF_ERR;
    if (bind_job(st, j)) {
        int out = dberr(s, "job replace", e);
        sqlite3_finalize(st);
        return out;
    }
    int out = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db) > 0
                                               : dberr(s, "job replace", e);
    sqlite3_finalize(st);
    return out;
}

int store_job_get(store *s, const char *id, store_job *j, ef_err *e)
{
    memset(j, 0, sizeof *j);
    sqlite3_stmt *st;
    if (prep(s, "SELECT " JOB_COLS " FROM jobs WHERE id = ?1", &st,
             "job get", e) != EF_OK)
        return EF_ERR;
    int out = 0;
    if (bind_str(st, 1, id)) {
        out = dberr(s, "job get", e);
    } else {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            read_job(st, j);
            out = 1;
        } else if (rc != SQLITE_DONE) {
            out = dberr(s, "job get", e);
        }
    }
    sqlite3_finalize(st);
    return out;
}

int store_job_update(store *s, const char *id, const char *state,
                     int64_t progress, int64_t now, ef_err *e)
{
    if (!state)
        return ef_fail(e, EF_E_INTERNAL, "%s: job update: no state",
                       s->path);
    sqlite3_stmt *st;
    if (prep(s, "UPDATE jobs SET state = ?1, progress = ?2, updated = ?3 "
             "WHERE id = ?4", &st, "job update", e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, state) || bind_i64(st, 2, progress) ||
        bind_i64(st, 3, now) || bind_str(st, 4, id)) {
        int out = dberr(s, "job update", e);
        sqlite3_finalize(st);
        return out;
    }
    if (step_done(s, st, "job update", e) != EF_OK)
        return EF_ERR;
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
}

int store_job_update_live(store *s, const char *id, const char *state,
                          int64_t progress, int64_t now, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, "UPDATE jobs SET state = ?1, progress = ?2, updated = ?3 "
             "WHERE id = ?4 AND state IN ('queued', 'running')", &st,
             "job update", e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, state) || bind_i64(st, 2, progress) ||
        bind_i64(st, 3, now) || bind_str(st, 4, id)) {
        int out = dberr(s, "job update", e);
        sqlite3_finalize(st);
        return out;
    }
    if (step_done(s, st, "job update", e) != EF_OK)
        return EF_ERR;
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
}

int store_jobs_list(store *s, const char *owner, const char *state,
                    store_job **rows, int *n, ef_err *e)
{
    *rows = NULL;
    *n = 0;
    /* one constant statement per filter (no SQL built from data) */
    static const char *const sql[4] = {
        "SELECT " JOB_COLS " FROM jobs ORDER BY seq",
        "SELECT " JOB_COLS " FROM jobs WHERE owner = ?1 ORDER BY seq",
        "SELECT " JOB_COLS " FROM jobs WHERE state = ?2 ORDER BY seq",
        "SELECT " JOB_COLS " FROM jobs WHERE owner = ?1 AND state = ?2 "
        "ORDER BY seq",
    };
    sqlite3_stmt *st;
    if (prep(s, sql[(owner ? 1 : 0) + (state ? 2 : 0)], &st, "job list",
             e) != EF_OK)
        return EF_ERR;
    /* ?2 exists only when the statement names it */
    if ((owner && bind_str(st, 1, owner)) ||
        (state && bind_str(st, 2, state))) {
        int out = dberr(s, "job list", e);
        sqlite3_finalize(st);
        return out;
    }
    return collect(s, st, sizeof **rows, read_job_row, drop_jobs,
                   (void **)rows, n, "job list", e);
}

void store_jobs_free(store_job *rows, int n)
{
    if (!rows)
        return;
    for (int i = 0; i < n; i++)
        store_job_free(&rows[i]);
    free(rows);
}

int store_jobs_count(store *s, void (*f)(const char *state, int64_t n,
                                         void *arg),
                     void *arg, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, "SELECT state, count(*) FROM jobs GROUP BY state "
             "ORDER BY state COLLATE BINARY", &st, "job count", e) != EF_OK)
        return EF_ERR;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *state = sqlite3_column_text(st, 0);
        f(state ? (const char *)state : "", sqlite3_column_int64(st, 1),
          arg);
    }
    int out = EF_OK;
    if (rc != SQLITE_DONE)
        out = dberr(s, "job count", e);
    sqlite3_finalize(st);
    return out;
}

int store_user_live(store *s, const char *owner, int64_t *n, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, "SELECT count(*) FROM jobs WHERE owner = ?1 AND state IN "
             "('queued', 'running')", &st, "user's jobs", e) != EF_OK)
        return EF_ERR;
    int out = EF_OK;
    if (bind_str(st, 1, owner) || sqlite3_step(st) != SQLITE_ROW)
        out = dberr(s, "user's jobs", e);
    else
        *n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return out;
}

/* ---- events -------------------------------------------------------------- */

int store_event_add(store *s, const char *job, int64_t at, const char *kind,
                    const char *detail, ef_err *e)
{
    if (!kind)
        return ef_fail(e, EF_E_INTERNAL, "%s: event add: no kind", s->path);
    sqlite3_stmt *st;
    if (prep(s, "INSERT INTO events (job, at, kind, detail) "
             "VALUES (?1, ?2, ?3, ?4)", &st, "event add", e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, job) || bind_i64(st, 2, at) ||
        bind_str(st, 3, kind) || bind_str(st, 4, detail ? detail : "{}")) {
        int out = dberr(s, "event add", e);
        sqlite3_finalize(st);
        return out;
    }
    return step_done(s, st, "event add", e);
}

static void read_event(sqlite3_stmt *st, void *row)
{
    store_event *v = row;
    v->seq = sqlite3_column_int64(st, 0);
    v->at = sqlite3_column_int64(st, 1);
    v->job = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL :
             col_str(st, 2);
    v->kind = col_str(st, 3);
    v->detail = col_str(st, 4);
}

static void drop_events(void *rows, int n)
{
    store_events_free(rows, n);
}

int store_events(store *s, const char *job, store_event **ev, int *n,
                 ef_err *e)
{
    *ev = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(s, job ? "SELECT seq, at, job, kind, detail FROM events "
             "WHERE job = ?1 ORDER BY seq" :
             "SELECT seq, at, job, kind, detail FROM events "
             "WHERE job IS NULL ORDER BY seq", &st, "events", e) != EF_OK)
        return EF_ERR;
    if (job && bind_str(st, 1, job)) {
        int out = dberr(s, "events", e);
        sqlite3_finalize(st);
        return out;
    }
    return collect(s, st, sizeof **ev, read_event, drop_events, (void **)ev,
                   n, "events", e);
}

void store_events_free(store_event *ev, int n)
{
    if (!ev)
        return;
    for (int i = 0; i < n; i++) {
        free(ev[i].job);
        free(ev[i].kind);
        free(ev[i].detail);
    }
    free(ev);
}

/* ---- plans --------------------------------------------------------------- */

int store_plan_put(store *s, int64_t version, int64_t at, const char *why,
                   int admitted, const char *text, ef_err *e)
{
    if (!why || !text)
        return ef_fail(e, EF_E_INTERNAL, "%s: plan put: no %s", s->path,
                       !why ? "why" : "text");
    int inner;
    if (unit_begin(s, &inner, e) != EF_OK)
        return EF_ERR;
    int64_t last;
    int rc = query_i64(s, "SELECT coalesce(max(version), -1) FROM plans",
                       &last, "plan put", e);
    if (rc == EF_OK && last >= 0 && version <= last)
        rc = ef_fail(e, EF_E_INTERNAL, "%s: plan put: version %" PRId64
                     " is not above the last one (%" PRId64 ")", s->path,
                     version, last);
    sqlite3_stmt *st;
    if (rc == EF_OK)
        rc = prep(s, "INSERT INTO plans (version, at, why, admitted) "
                  "VALUES (?1, ?2, ?3, ?4)", &st, "plan put", e);
    if (rc == EF_OK) {
        if (bind_i64(st, 1, version) || bind_i64(st, 2, at) ||
            bind_str(st, 3, why) || sqlite3_bind_int(st, 4, admitted)) {
            rc = dberr(s, "plan put", e);
            sqlite3_finalize(st);
        } else {
            rc = step_done(s, st, "plan put", e);
        }
    }
    if (rc == EF_OK)
        rc = prep(s, "INSERT INTO plan_current (one, version, text) "
                  "VALUES (1, ?1, ?2) ON CONFLICT (one) DO UPDATE "
                  "SET version = excluded.version, text = excluded.text",
                  &st, "plan put", e);
    if (rc == EF_OK) {
        if (bind_i64(st, 1, version) || bind_str(st, 2, text)) {
            rc = dberr(s, "plan put", e);
            sqlite3_finalize(st);
        } else {
            rc = step_done(s, st, "plan put", e);
        }
    }
    return unit_end(s, inner, rc, e);
}

int store_plan_get(store *s, int64_t *version, char **text, ef_err *e)
{
    *text = NULL;
    sqlite3_stmt *st;
    if (prep(s, "SELECT version, text FROM plan_current WHERE one = 1", &st,
             "plan get", e) != EF_OK)
        return EF_ERR;
    int rc = sqlite3_step(st);
    int out = 0;
    if (rc == SQLITE_ROW) {
        *version = sqlite3_column_int64(st, 0);
        *text = col_str(st, 1);
        out = 1;
    } else if (rc != SQLITE_DONE) {
        out = dberr(s, "plan get", e);
    }
    sqlite3_finalize(st);
    return out;
}

/* ---- retention ------------------------------------------------------------ */

/* Run 'sql' bound with ?1 = a (text) or, when a is NULL, ?1 = i and
 * ?2 = j; add the rows it changed to *n. */
static int prune_exec(store *s, sqlite3_stmt *st, const char *a, int64_t i,
                      int64_t j, int64_t *n, ef_err *e)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    int bad = a ? bind_str(st, 1, a)
                : (bind_i64(st, 1, i) || bind_i64(st, 2, j));
    if (bad || sqlite3_step(st) != SQLITE_DONE)
        return dberr(s, "prune", e);
    *n += sqlite3_changes(s->db);
    return EF_OK;
}

/* The ids of at most 'batch' ended jobs to prune (heap array, *n). */
static int prune_pick(store *s, int64_t before, int batch, char ***ids,
                      int *n, ef_err *e)
{
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(s, "SELECT id FROM jobs WHERE updated < ?1 AND state IN "
             "('done', 'failed', 'cancelled', 'rejected', 'planned-done') "
             "AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job = "
             "jobs.id AND a.state != 'ended') ORDER BY updated, seq "
             "LIMIT ?2", &st, "prune", e) != EF_OK)
        return EF_ERR;
    if (bind_i64(st, 1, before) || bind_i64(st, 2, batch)) {
        int out = dberr(s, "prune", e);
        sqlite3_finalize(st);
        return out;
    }
    char **r = ef_calloc((size_t)batch + 1, sizeof *r);
    int nr = 0, rc = SQLITE_DONE;
    while (nr < batch && (rc = sqlite3_step(st)) == SQLITE_ROW)
        r[nr++] = col_str(st, 0);
    if (nr < batch && rc != SQLITE_DONE) {
        dberr(s, "prune", e);
        sqlite3_finalize(st);
        for (int k = 0; k < nr; k++)
            free(r[k]);
        free(r);
        return EF_ERR;
    }
    sqlite3_finalize(st);
    *ids = r;
    *n = nr;
    return EF_OK;
}

int store_prune_jobs(store *s, int64_t before, int batch, store_pruned *p,
                     ef_err *e)
{
    if (batch < 1)
        return 0;
    int inner;
    if (unit_begin(s, &inner, e) != EF_OK)
        return EF_ERR;
    char **ids = NULL;
    int n = 0;
    store_pruned d = {0};
    int rc = prune_pick(s, before, batch, &ids, &n, e);
    sqlite3_stmt *de = NULL, *da = NULL, *dj = NULL, *ds = NULL;
    if (rc == EF_OK &&
        (prep(s, "DELETE FROM events WHERE job = ?1", &de, "prune",
              e) != EF_OK ||
         prep(s, "DELETE FROM attempts WHERE job = ?1", &da, "prune",
              e) != EF_OK ||
         prep(s, "DELETE FROM jobs WHERE id = ?1", &dj, "prune", e) != EF_OK ||
         prep(s, "DELETE FROM events WHERE seq IN (SELECT seq FROM events "
              "WHERE job IS NULL AND at < ?1 ORDER BY seq LIMIT ?2)", &ds,
              "prune", e) != EF_OK))
        rc = EF_ERR;
    for (int k = 0; rc == EF_OK && k < n; k++)
        if (prune_exec(s, de, ids[k], 0, 0, &d.events, e) != EF_OK ||
            prune_exec(s, da, ids[k], 0, 0, &d.attempts, e) != EF_OK ||
            prune_exec(s, dj, ids[k], 0, 0, &d.jobs, e) != EF_OK)
            rc = EF_ERR;
    if (rc == EF_OK)
        rc = prune_exec(s, ds, NULL, before, batch, &d.events, e);
    int64_t total = 0;
    if (rc == EF_OK && d.jobs > 0) {
        int got = store_meta_get(s, "pruned_jobs", &total, e);
        rc = got < 0 ? EF_ERR
                     : store_meta_set(s, "pruned_jobs", total + d.jobs, e);
    }
    sqlite3_finalize(de);
    sqlite3_finalize(da);
    sqlite3_finalize(dj);
    sqlite3_finalize(ds);
    for (int k = 0; k < n; k++)
        free(ids[k]);
    free(ids);
    if (unit_end(s, inner, rc, e) != EF_OK)
        return EF_ERR;
    p->jobs += d.jobs;
    p->events += d.events;
    p->attempts += d.attempts;
    return (int)d.jobs;
}

int store_prune_plans(store *s, int keep, int batch, store_pruned *p,
                      ef_err *e)
{
    if (keep < 1 || batch < 1)
        return 0;
    sqlite3_stmt *st;
    /* ?1: keep, ?2: batch */
    if (prep(s, "DELETE FROM plans WHERE version IN (SELECT version FROM "
             "plans WHERE version < (SELECT version FROM plans ORDER BY "
             "version DESC LIMIT 1 OFFSET ?1 - 1) AND version NOT IN "
             "(SELECT version FROM plan_current) ORDER BY version LIMIT ?2)",
             &st, "prune plans", e) != EF_OK)
        return EF_ERR;
    int64_t n = 0;
    int rc = prune_exec(s, st, NULL, keep, batch, &n, e);
    sqlite3_finalize(st);
    if (rc != EF_OK)
        return EF_ERR;
    p->plans += n;
    return (int)n;
}

/* ---- meta ---------------------------------------------------------------- */

int store_meta_get(store *s, const char *key, int64_t *v, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, "SELECT value FROM meta WHERE key = ?1", &st, "meta get",
             e) != EF_OK)
        return EF_ERR;
    int out = 0;
    if (bind_str(st, 1, key)) {
        out = dberr(s, "meta get", e);
    } else {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int64(st, 0);
            out = 1;
        } else if (rc != SQLITE_DONE) {
            out = dberr(s, "meta get", e);
        }
    }
    sqlite3_finalize(st);
    return out;
}

int store_meta_set(store *s, const char *key, int64_t v, ef_err *e)
{
    if (!key)
        return ef_fail(e, EF_E_INTERNAL, "%s: meta set: no key", s->path);
    sqlite3_stmt *st;
    if (prep(s, "INSERT INTO meta (key, value) VALUES (?1, ?2) "
             "ON CONFLICT (key) DO UPDATE SET value = excluded.value", &st,
             "meta set", e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, key) || bind_i64(st, 2, v)) {
        int out = dberr(s, "meta set", e);
        sqlite3_finalize(st);
        return out;
    }
    return step_done(s, st, "meta set", e);
}

/* ---- learned: measured speeds and restart costs ----------------------------- */

/* A row's measure (speed or restart) after one more run measured x: the
 * first run sets it, each later one moves it STORE_LEARN_ALPHA of the
 * way. */
double store_smooth(double est, int runs, double x)
{
    return runs <= 0 ? x : est + STORE_LEARN_ALPHA * (x - est);
}

/* The learned row of (model, owner) as stored ("": the model's); speed
 * and restart 1.0 with no runs where there is none. */
static int learned_row(store *s, const char *model, const char *owner,
                       store_learnt *out, ef_err *e)
{
    *out = STORE_LEARNT_NONE;
    sqlite3_stmt *st;
    if (prep(s, "SELECT speed, speed_runs, restart, restart_runs "
             "FROM learned WHERE model = ?1 AND owner = ?2", &st, "learned",
             e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, model) || bind_str(st, 2, owner)) {
        int bad = dberr(s, "learned", e);
        sqlite3_finalize(st);
        return bad;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->speed = sqlite3_column_double(st, 0);
        out->speed_runs = sqlite3_column_int(st, 1);
        out->restart = sqlite3_column_double(st, 2);
        out->restart_runs = sqlite3_column_int(st, 3);
        out->speed_own = owner[0] != '\0';
        rc = sqlite3_step(st);
    }
    int bad = rc != SQLITE_DONE;
    if (bad)
        dberr(s, "learned", e);
    sqlite3_finalize(st);
    return bad ? EF_ERR : EF_OK;
}

/* One run measured x, smoothed into the row of (model, owner). */
static int learn_row(store *s, const char *model, const char *owner,
                     int restart, double x, ef_err *e)
{
    store_learnt r;
    if (learned_row(s, model, owner, &r, e) != EF_OK)
        return EF_ERR;
    if (restart) {
        r.restart = store_smooth(r.restart, r.restart_runs, x);
        r.restart_runs++;
    } else {
        r.speed = store_smooth(r.speed, r.speed_runs, x);
        r.speed_runs++;
    }
    sqlite3_stmt *st;
    if (prep(s, "INSERT INTO learned VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
             "ON CONFLICT (model, owner) DO UPDATE SET speed = ?3, "
             "speed_runs = ?4, restart = ?5, restart_runs = ?6", &st,
             "learned", e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, model) || bind_str(st, 2, owner) ||
        sqlite3_bind_double(st, 3, r.speed) != SQLITE_OK ||
        sqlite3_bind_int(st, 4, r.speed_runs) != SQLITE_OK ||
        sqlite3_bind_double(st, 5, r.restart) != SQLITE_OK ||
        sqlite3_bind_int(st, 6, r.restart_runs) != SQLITE_OK) {
        int out = dberr(s, "learned", e);
        sqlite3_finalize(st);
        return out;
    }
    return step_done(s, st, "learned", e);
}

int store_learn(store *s, const char *model, const char *owner, int restart,
                double x, ef_err *e)
{
    if (!model || !(x > 0) || x > 1e6)
        return EF_OK; /* nothing measured */
    /* a restart is a job's own report (its first progress), so one that
     * reports at once would make its model's moves look free: never
     * learned cheaper than the overhead model charges */
    if (restart && x < 1)
        x = 1;
    if (learn_row(s, model, "", restart, x, e) != EF_OK)
        return EF_ERR;
    return owner && owner[0] ? learn_row(s, model, owner, restart, x, e)
                             : EF_OK;
}

int store_learned_rows(store *s, const char *model, const char *owner,
                       store_learnt *all, store_learnt *own, ef_err *e)
{
    if (learned_row(s, model, "", all, e) != EF_OK)
        return EF_ERR;
    if (!owner || !owner[0]) {
        *own = STORE_LEARNT_NONE;
        return EF_OK;
    }
    return learned_row(s, model, owner, own, e);
}

void store_learnt_pick(const store_learnt *all, const store_learnt *own,
                       store_learnt *out)
{
    *out = *all;
    out->speed_own = 0;
    if (own->speed_runs >= STORE_LEARN_OWN) {
        out->speed = own->speed;
        out->speed_runs = own->speed_runs;
        out->speed_live = own->speed_live;
        out->speed_own = own->speed_runs > 0;
    }
    if (own->restart_runs >= STORE_LEARN_OWN) {
        out->restart = own->restart;
        out->restart_runs = own->restart_runs;
    }
}

int store_learned(store *s, const char *model, const char *owner,
                  store_learnt *out, ef_err *e)
{
    store_learnt all, own;
    if (store_learned_rows(s, model, owner, &all, &own, e) != EF_OK) {
        *out = STORE_LEARNT_NONE;
        return EF_ERR;
    }
    store_learnt_pick(&all, &own, out);
    return EF_OK;
}

/* ---- the loop: risk, attempts, nodes -------------------------------------- */

int store_job_set_risk(store *s, const char *id, const char *risk,
                       int64_t now, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, "UPDATE jobs SET risk = ?1, updated = ?2 WHERE id = ?3",
             &st, "job risk", e) != EF_OK)
        return EF_ERR;
    if (bind_str(st, 1, risk) || bind_i64(st, 2, now) || bind_str(st, 3, id)) {
        int out = dberr(s, "job risk", e);
        sqlite3_finalize(st);
        return out;
    }
    if (step_done(s, st, "job risk", e) != EF_OK)
        return EF_ERR;
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
}

static const char *const attempt_states[] = {"intended", "running",
                                             "stopping", "ended"};

int store_attempt_put(store *s, const store_attempt *a, ef_err *e)
{
    if (!a->job || !a->place || !a->handle || !a->why ||
        a->state < STORE_A_INTENDED || a->state > STORE_A_ENDED ||
        a->attempt < 1)
        return ef_fail(e, EF_E_INTERNAL, "%s: attempt put: incomplete row",
                       s->path);
    sqlite3_stmt *st;
    if (prep(s, "INSERT INTO attempts (job, attempt, state, place, handle, "
             "started, ended, result, why) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
             "?7, ?8, ?9) ON CONFLICT (job, attempt) DO UPDATE SET "
             "state = excluded.state, place = excluded.place, "
             "handle = excluded.handle, started = excluded.started, "
             "ended = excluded.ended, result = excluded.result, "
             "why = excluded.why", &st, "attempt put", e) != EF_OK)
        return EF_ERR;
    int bad = bind_str(st, 1, a->job) || bind_i64(st, 2, a->attempt) ||
              bind_str(st, 3, attempt_states[a->state]) ||
              bind_str(st, 4, a->place) || bind_str(st, 5, a->handle) ||
              bind_i64(st, 6, a->started) ||
              (a->state == STORE_A_ENDED ? bind_i64(st, 7, a->ended)
                                         : sqlite3_bind_null(st, 7)) ||
              bind_str(st, 8, a->result) || bind_str(st, 9, a->why);
    if (bad) {
        int out = dberr(s, "attempt put", e);
        sqlite3_finalize(st);
        return out;
    }
    return step_done(s, st, "attempt put", e);
}

void store_attempts_free(store_attempt *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].job);
        free(rows[i].place);
        free(rows[i].handle);
        free(rows[i].result);
        free(rows[i].why);
    }
    free(rows);
}

static void read_attempt(sqlite3_stmt *st, void *row)
{
    store_attempt *a = row;
    a->job = col_str(st, 0);
    a->attempt = sqlite3_column_int(st, 1);
    const char *stt = (const char *)sqlite3_column_text(st, 2);
    for (int k = 0; k < 4; k++)
        if (stt && strcmp(stt, attempt_states[k]) == 0)
            a->state = (store_astate)k;
    a->place = col_str(st, 3);
    a->handle = col_str(st, 4);
    a->started = sqlite3_column_int64(st, 5);
    a->ended = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 :
               sqlite3_column_int64(st, 6);
    a->result = sqlite3_column_type(st, 7) == SQLITE_NULL ? NULL :
                col_str(st, 7);
    a->why = col_str(st, 8);
}

static void drop_attempts(void *rows, int n)
{
    store_attempts_free(rows, n);
}

int store_attempts_list(store *s, const char *job, int live,
                        store_attempt **rows, int *n, ef_err *e)
{
    *rows = NULL;
    *n = 0;
    /* one constant statement per filter (no SQL built from data) */
    static const char *const sql[4] = {
        "SELECT job, attempt, state, place, handle, started, ended, result, "
        "why FROM attempts ORDER BY job, attempt",
        "SELECT job, attempt, state, place, handle, started, ended, result, "
        "why FROM attempts WHERE job = ?1 ORDER BY attempt",
        "SELECT job, attempt, state, place, handle, started, ended, result, "
        "why FROM attempts WHERE state <> 'ended' ORDER BY job, attempt",
        "SELECT job, attempt, state, place, handle, started, ended, result, "
        "why FROM attempts WHERE job = ?1 AND state <> 'ended' "
        "ORDER BY attempt",
    };
    sqlite3_stmt *st;
    if (prep(s, sql[(live ? 2 : 0) + (job != NULL)], &st, "attempts", e) !=
        EF_OK)
        return EF_ERR;
    if (job && bind_str(st, 1, job)) {
        int out = dberr(s, "attempts", e);
        sqlite3_finalize(st);
        return out;
    }
    return collect(s, st, sizeof **rows, read_attempt, drop_attempts,
                   (void **)rows, n, "attempts", e);
}

int store_node_set(store *s, int node, const char *state, const char *why,
                   int64_t at, ef_err *e)
{
    sqlite3_stmt *st;
    if (prep(s, state ? "INSERT INTO nodes (node, state, why, at) VALUES "
             "(?1, ?2, ?3, ?4) ON CONFLICT (node) DO UPDATE SET "
             "state = excluded.state, why = excluded.why, at = excluded.at"
             : "DELETE FROM nodes WHERE node = ?1", &st, "node set",
             e) != EF_OK)
        return EF_ERR;
    int bad = bind_i64(st, 1, node);
    if (state)
        bad = bad || bind_str(st, 2, state) ||
              bind_str(st, 3, why ? why : "") || bind_i64(st, 4, at);
    if (bad) {
        int out = dberr(s, "node set", e);
        sqlite3_finalize(st);
        return out;
    }
    if (step_done(s, st, "node set", e) != EF_OK)
        return EF_ERR;
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
}

void store_nodes_free(store_node *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].state);
        free(rows[i].why);
    }
    free(rows);
}

static void read_node(sqlite3_stmt *st, void *row)
{
    store_node *v = row;
    v->node = sqlite3_column_int(st, 0);
    v->state = col_str(st, 1);
    v->why = col_str(st, 2);
    v->at = sqlite3_column_int64(st, 3);
}

static void drop_nodes(void *rows, int n)
{
    store_nodes_free(rows, n);
}

int store_nodes_list(store *s, store_node **rows, int *n, ef_err *e)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prep(s, "SELECT node, state, why, at FROM nodes ORDER BY node", &st,
             "nodes", e) != EF_OK)
        return EF_ERR;
    return collect(s, st, sizeof **rows, read_node, drop_nodes,
                   (void **)rows, n, "nodes", e);
}
