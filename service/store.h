/*
 * store.h: the service's durable state (store_*), one SQLite database.
 *
 * The store is the queue's single source of truth for efplan serve and
 * for efplan token. It holds, in one file:
 *   - tokens: bearer tokens (token.h), by public id, owner name and role
 *     (operator or not); the secret only as a salted hash;
 *   - jobs: every job ever submitted, with its owner, the job as the
 *     server planned it (efplan-jobs JSON, one object), the admission
 *     answer (JSON), state, progress and times; a job is deleted only
 *     by retention (store_prune_jobs: ended longer ago than efplan serve
 *     --keep), with its events and attempts;
 *   - events: an append-only history, per job and of the service;
 *   - the current plan (efplan-plan text) with its version, and a row per
 *     plan version (why it was made, when, how many jobs it admitted);
 *   - meta: named values of the service (its plan epoch, its clock, ...);
 *   - attempts: every launch of a job by the closed loop (efplan serve
 *     --backend), its intent written before the launch and before every
 *     stop, so that a restarted service adopts what runs and never
 *     launches a job twice;
 *   - nodes: the nodes drained by an operator or seen down.
 *
 * Durability: the database is in WAL mode with synchronous=FULL, so a
 * change is on disk when store_commit (or a single-statement call
 * outside a transaction) returns; a process killed at any moment leaves
 * either all of a transaction or none of it. The schema is versioned
 * (PRAGMA user_version = STORE_SCHEMA); store_open creates a new file at
 * that version and migrates an older one forward, in one transaction;
 * a file from a newer efplan is refused.
 *
 * Concurrency: one store handle serves one thread at a time (the caller
 * serialises). Several processes may open the same file (efplan serve and
 * efplan token): a write waits up to 5 s for another's lock, then fails.
 *
 * Errors: every function returns EF_OK / EF_ERR (or a count/flag where
 * said) and fills 'e': EF_E_INPUT when the file is not an efplan store or
 * is from a newer version, EF_E_INTERNAL for SQLite failures (the
 * message names the file and SQLite's words; never a token's secret).
 * Libraries never print.
 */
#ifndef EF_STORE_H
#define EF_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define STORE_SCHEMA 5
/* PRAGMA application_id of an efplan store ("efpl"): a SQLite file with
 * another non-zero id is another program's and is refused. */
#define STORE_APP_ID 0x6566706c

typedef struct store store;

/* Open (creating if absent, mode 0600) the store at 'path': *s, closed
 * with store_close. A new or empty file gets the schema; a store of an
 * older schema is migrated (steps version N -> N + 1, all in one
 * transaction). Refused with EF_E_INPUT, naming the path, and nothing
 * written to the file: a directory or other non-regular file, a file
 * that is not SQLite, a SQLite file of another program (another
 * application_id, or tables but no efplan id), a store of a newer
 * schema, a read-only file; a missing directory on the way (cannot
 * create); a file that others may read or write (any group or other
 * permission bit: "chmod 600 FILE") or that another user owns (the
 * message names both uids and the fix), as ssh refuses a private key.
 * EF_E_INTERNAL: SQLite failures (a lock held past 5 s, ...). */
int store_open(store **s, const char *path, ef_err *e);
/* store_open_reader: a second, read-only connection to the store at
 * 'path' that store_open has opened (and migrated): in WAL mode it reads
 * the last committed state without waiting for the writer and never
 * blocks it, so the service's readers (tokens, job rows, events) need
 * not wait for its planning. Only the reading functions may be called on
 * it. Errors: EF_E_INTERNAL. */
int store_open_reader(store **s, const char *path, ef_err *e);
/* Close (NULL: nothing); a transaction still open is rolled back. */
void store_close(store *s);
/* The path it was opened with. */
const char *store_path(const store *s);

/* A transaction: everything between begin and commit lands together.
 * store_begin takes the write lock at once (BEGIN IMMEDIATE; waits up to
 * 5 s for another process's); one already open is a bug (EF_E_INTERNAL).
 * A commit that fails has rolled back: nothing of the transaction landed.
 * store_rollback is safe to call when no transaction is open. The other
 * calls may be used inside a transaction (their own several statements
 * then nest as a savepoint) or outside (each is its own transaction). */
int store_begin(store *s, ef_err *e);
int store_commit(store *s, ef_err *e);
void store_rollback(store *s);

/* ---- tokens ------------------------------------------------------------ */

/* Who a token is. */
typedef struct store_ident {
    char id[32];      /* the token's public id (TOKEN_ID_LEN chars) */
    char name[128];   /* its owner's name (TOKEN_NAME_RULE) */
    int op;           /* 1: an operator */
    char unix_user[40]; /* the Unix account its jobs run as
                           (token_unix_user_check); "": none, the
                           service's job user (efplan serve --job-user) */
    /* its per-user limits (efplan token add --max-queued,
     * --max-submit-rate): STORE_LIMIT_SERVICE (0): the service's own
     * (efplan serve --max-queued, --max-submit-rate); STORE_LIMIT_NONE:
     * none; else the limit (jobs queued or running; submissions per
     * minute of the service's clock) */
    int64_t max_queued, max_rate;
} store_ident;

#define STORE_LIMIT_SERVICE 0
#define STORE_LIMIT_NONE (-1)
/* store_token_set_limits: leave that limit as it is */
#define STORE_LIMIT_KEEP INT64_MIN

typedef struct store_token_row {
    store_ident who;
    int64_t created;  /* Unix seconds */
    int64_t revoked;  /* Unix seconds; -1: live */
} store_token_row;

/* Make a new token for 'name' (token_name_check), operator if 'op':
 * the secret text (TOKEN_TEXT_MAX bytes at most, NUL-terminated) goes to
 * 'text' (cap bytes; TOKEN_TEXT_MAX + 1 always suffice), the row (salt
 * and hash only) to the store, who it is to *who (may be NULL). 'now' is
 * the creation time. A bad name is EF_E_INPUT (the message gives the
 * rule); a 'cap' too small EF_E_INTERNAL, with nothing stored. */
int store_token_add(store *s, const char *name, int op, int64_t now,
                    char *text, size_t cap, store_ident *who, ef_err *e);
/* store_token_add, its jobs to run as Unix account 'unix_user'
 * (token_unix_user_check; NULL or "": none, the service's job user). Every
 * live token of a name maps to the same account: another account than
 * that of the name's live tokens is EF_E_INPUT (revoke them first), as
 * is a malformed account name. Whether the account exists is not checked
 * here (the caller's host may not be the service's). */
int store_token_add_as(store *s, const char *name, int op,
                       const char *unix_user, int64_t now, char *text,
                       size_t cap, store_ident *who, ef_err *e);
/* The Unix account user 'name''s jobs run as: that of its live tokens,
 * else of its latest token: 1 with unix_user (cap bytes) filled, 0 when
 * it has none (its jobs run as the job user; unix_user ""), EF_ERR on a
 * store failure. */
int store_user_unix(store *s, const char *name, char *unix_user,
                    size_t cap, ef_err *e);
/* How many users (distinct names) hold a live token that is not an
 * operator's, into *n. */
int store_users_count(store *s, int64_t *n, ef_err *e);
/* Check a bearer token's text: 1 (and *who filled) when it is a live
 * token of this store, 0 when not (malformed, unknown, revoked: which one
 * is not said), EF_ERR on a store failure. The comparison of hashes is
 * constant-time. */
int store_token_check(store *s, const char *text, store_ident *who,
                      ef_err *e);
/* Every token, live and revoked, by creation then id: *rows (heap, NULL
 * when *n is 0; free with free()), *n. */
int store_token_list(store *s, store_token_row **rows, int *n, ef_err *e);
/* Revoke the live token with public id 'key', or every live token of the
 * name 'key' when no token (live or revoked) has that id; *count = how
 * many were revoked (0: none matched or all were revoked already, not an
 * error). Revoked rows stay, with their time 'now'. */
int store_token_revoke(store *s, const char *key, int64_t now, int *count,
                       ef_err *e);

/* Set the limits (max_queued, max_rate: STORE_LIMIT_SERVICE,
 * STORE_LIMIT_NONE, a limit >= 1, or STORE_LIMIT_KEEP to leave it) of the
 * live token with public id 'key', or of every live token of the name
 * 'key' when no token has that id; *count = how many changed (0: no live
 * token matched, not an error). A value out of range is EF_E_INPUT and
 * changes nothing. A running service reads them at the token's next
 * request. */
int store_token_set_limits(store *s, const char *key, int64_t max_queued,
                           int64_t max_rate, int *count, ef_err *e);

/* ---- jobs -------------------------------------------------------------- */

typedef struct store_job {
    char *id;         /* the job id (job_id_check) */
    char *owner;      /* the submitting token's name */
    char *body;       /* the job as planned: one efplan-jobs job object
                         (JSON text, keys sorted), submit_time included */
    char *request;    /* the request body as received, canonical JSON (keys
                         sorted, no server-set members): what a retry is
                         compared with */
    char *decision;   /* "admitted", "rejected" or "best_effort" */
    char *answer;     /* the admission answer (JSON object text) */
    char *state;      /* "queued", "running", "done", "failed",
                         "cancelled"; a rejected job is "rejected" */
    int64_t progress; /* iterations done as last reported */
    int64_t submitted, updated; /* Unix seconds */
    int64_t seq;      /* submission order, 1, 2, ... */
    char *risk;       /* admitted but at risk of missing its deadline:
                         why, and its earliest finish (NULL: not) */
} store_job;

void store_job_free(store_job *j);

/* Insert a new job (j->id not yet in the store; seq is assigned and
 * written back to j->seq). Every string member must be set (else
 * EF_E_INTERNAL); an id already in the store is EF_E_INPUT ("job "ID" is
 * already in the store") and changes nothing. */
int store_job_insert(store *s, store_job *j, ef_err *e);
/* Replace every member of the job whose id is j->id (a rejected job
 * submitted again with another body) but its seq: 1 when done, 0 if there
 * is no such job. */
int store_job_replace(store *s, const store_job *j, ef_err *e);
/* The job with id 'id': 1 (and *j filled, free with store_job_free), 0
 * if there is none. */
int store_job_get(store *s, const char *id, store_job *j, ef_err *e);
/* Set a job's state and progress and its updated time: 1 when done, 0
 * if there is no such job, EF_ERR on a store failure. */
int store_job_update(store *s, const char *id, const char *state,
                     int64_t progress, int64_t now, ef_err *e);
/* store_job_update of a job that is queued or running only (a
 * cancelled or ended one keeps its state): 1 when done, 0 if there is no
 * such live job. */
int store_job_update_live(store *s, const char *id, const char *state,
                          int64_t progress, int64_t now, ef_err *e);
/* Jobs by seq: of 'owner' only (NULL: everyone's), in state 'state' only
 * (NULL: any). *rows heap array of *n jobs (NULL when none); free with
 * store_jobs_free. */
int store_jobs_list(store *s, const char *owner, const char *state,
                    store_job **rows, int *n, ef_err *e);
void store_jobs_free(store_job *rows, int n);
/* How many jobs of 'owner' are queued or running (not ended), into *n:
 * what efplan serve --max-queued limits. */
int store_user_live(store *s, const char *owner, int64_t *n, ef_err *e);
/* Count jobs per state: calls f(state, count, arg) once per state that
 * has jobs, in the order of the state names (strcmp order). */
int store_jobs_count(store *s, void (*f)(const char *state, int64_t n,
                                         void *arg),
                     void *arg, ef_err *e);

/* ---- events -------------------------------------------------------------- */

typedef struct store_event {
    int64_t seq;      /* its order in the whole store */
    int64_t at;       /* Unix seconds */
    char *job;        /* NULL: an event of the service */
    char *kind;       /* "submitted", "cancelled", "replanned", ... */
    char *detail;     /* JSON object text */
} store_event;

/* Append an event ('job' NULL: of the service; 'detail' NULL: "{}").
 * 'job' is not checked against the jobs table. */
int store_event_add(store *s, const char *job, int64_t at, const char *kind,
                    const char *detail, ef_err *e);
/* A job's events (job NULL: the service's own), by seq: *ev heap array
 * of *n (NULL when none). Free with store_events_free. */
int store_events(store *s, const char *job, store_event **ev, int *n,
                 ef_err *e);
void store_events_free(store_event *ev, int n);

/* ---- plans --------------------------------------------------------------- */

/* Make 'text' (an efplan-plan file's text) the current plan, version
 * 'version' (greater than every earlier one: else EF_E_INTERNAL and
 * nothing changes), with a history row: when, why ("submit ID", "cancel
 * ID", "replan", ...), and how many jobs it admits. Both land together. */
int store_plan_put(store *s, int64_t version, int64_t at, const char *why,
                   int admitted, const char *text, ef_err *e);
/* The current plan: 1 (*version, *text heap) or 0 when there is none. */
int store_plan_get(store *s, int64_t *version, char **text, ef_err *e);

/* Set (risk NULL: clear) a job's at-risk reason: 1 when done, 0 if there
 * is no such job. */
int store_job_set_risk(store *s, const char *id, const char *risk,
                       int64_t now, ef_err *e);

/* ---- attempts (the closed loop) ------------------------------------------ */

typedef enum store_astate {
    STORE_A_INTENDED = 0, /* a launch is about to happen: the backend may
                             or may not have it (find it on restart) */
    STORE_A_RUNNING,      /* launched: 'handle' is the backend's */
    STORE_A_STOPPING,     /* its checkpoint signal is about to be or was
                             sent */
    STORE_A_ENDED         /* over: 'result' says how */
} store_astate;

typedef struct store_attempt {
    char *job;        /* job id */
    int attempt;      /* 1, 2, ... per job */
    store_astate state;
    char *place;      /* where: a placement's JSON (placement.h), with
                         "batch" for an elastic-batch allocation */
    char *handle;     /* the backend's handle ("" before the launch) */
    int64_t started;  /* plan time of the intent */
    int64_t ended;    /* ended: plan time; -1 otherwise */
    char *result;     /* ended: "done", "stopped", "failed", "lost",
                         "not_launched"; NULL otherwise */
    char *why;        /* why it was launched, or why it ended */
} store_attempt;

/* Insert or replace attempt (a->job, a->attempt). Every string but
 * 'result' must be set (else EF_E_INTERNAL). */
int store_attempt_put(store *s, const store_attempt *a, ef_err *e);
/* Attempts of 'job' (NULL: every job), by job then attempt; 'live': only
 * those not ended. *rows heap (NULL when none): free with
 * store_attempts_free. */
int store_attempts_list(store *s, const char *job, int live,
                        store_attempt **rows, int *n, ef_err *e);
void store_attempts_free(store_attempt *rows, int n);

/* ---- nodes ---------------------------------------------------------------- */

typedef struct store_node {
    int node;         /* the cluster's node index, from 0 */
    char *state;      /* "drained" (by an operator) or "down" (seen so by
                         the backend) */
    char *why;
    int64_t at;       /* plan time */
} store_node;

/* Mark node 'node' (state "drained" or "down", why, at), or make it
 * usable again (state NULL): 1 when a row changed, 0 when not. */
int store_node_set(store *s, int node, const char *state, const char *why,
                   int64_t at, ef_err *e);
/* Every node that is not usable, by node: *rows heap (NULL when none),
 * free with store_nodes_free. */
int store_nodes_list(store *s, store_node **rows, int *n, ef_err *e);
void store_nodes_free(store_node *rows, int n);

/* ---- learned: what the closed loop measured ----------------------------- */

/* Each run moves a smoothed measure this share of the way to what it saw;
 * a user's own row counts once it has this many runs (else the model's). */
#define STORE_LEARN_ALPHA 0.3
#define STORE_LEARN_OWN 2

typedef struct store_learnt {
    double speed;      /* real speed over the curve's (1: none measured) */
    int speed_runs;    /* runs it is smoothed over (0: none) */
    int speed_live;    /* of them, attempts still running, counted as
                          measured so far (the service's, svc.h; the
                          store keeps ended runs only: 0) */
    int speed_own;     /* 1: the user's own jobs of the model, else all */
    double restart;    /* a restart's real cost over the overhead model's
                          charge (1: none measured) */
    int restart_runs;
} store_learnt;

/* Nothing measured: the curve's speed and the model's restart charge. */
#define STORE_LEARNT_NONE ((store_learnt){.speed = 1.0, .restart = 1.0})

/* store_learn: one run of 'model' by 'owner' (may be NULL) measured x:
 * its speed over its curve's (restart 0), or a restart's cost over the
 * model's charge for it (restart 1; below 1 taken as 1: a restart is never
 * learned cheaper than the model charges); smoothed into the model's row
 * and the owner's. x outside (0, 1e6] is ignored. */
int store_learn(store *s, const char *model, const char *owner, int restart,
                double x, ef_err *e);
/* store_learned: what is known of 'model' for 'owner' (the owner's own
 * runs where there are STORE_LEARN_OWN, else the model's); 1.0 and 0 runs
 * where nothing was measured. */
int store_learned(store *s, const char *model, const char *owner,
                  store_learnt *out, ef_err *e);
/* store_learned_rows: the model's row (*all) and the owner's (*own;
 * none when owner is NULL or ""), each as stored: speed and restart 1.0
 * and 0 runs where there is none. */
int store_learned_rows(store *s, const char *model, const char *owner,
                       store_learnt *all, store_learnt *own, ef_err *e);
/* store_learnt_pick: what store_learned answers from the two rows: the
 * owner's measure (speed, restart each) where it has STORE_LEARN_OWN
 * runs, else the model's. */
void store_learnt_pick(const store_learnt *all, const store_learnt *own,
                       store_learnt *out);
/* store_smooth: a smoothed measure over 'runs' runs, est, after one more
 * run measured x (the first run's x itself; then STORE_LEARN_ALPHA of the
 * way to x). The one rule of store_learn, for callers that preview it. */
double store_smooth(double est, int runs, double x);

/* ---- retention (efplan serve --keep, --keep-plans) ----------------------- */

/* What one pruning step deleted (added to by each call). */
typedef struct store_pruned {
    int64_t jobs, events, attempts, plans;
} store_pruned;

/* store_prune_jobs: in one transaction, delete at most 'batch' jobs that
 * ended (state done, failed, cancelled, rejected or planned-done) with
 * their last change ('updated') before 'before' and no attempt of the
 * loop that has not ended, oldest first, with every event and attempt of
 * them; and at most 'batch' events of the service (no job) before
 * 'before'. The meta value "pruned_jobs" counts the jobs deleted over
 * the store's life. Returns how many jobs it deleted (0: none left to
 * delete), or EF_ERR (nothing deleted). */
int store_prune_jobs(store *s, int64_t before, int batch, store_pruned *p,
                     ef_err *e);
/* store_prune_plans: in one transaction, delete at most 'batch' rows of
 * the plan history older than its newest 'keep' (>= 1), never the
 * current plan's. Returns how many it deleted, or EF_ERR. */
int store_prune_plans(store *s, int keep, int batch, store_pruned *p,
                      ef_err *e);

/* ---- meta ---------------------------------------------------------------- */

/* A named integer of the service: 1 (*v) or 0 when unset. */
int store_meta_get(store *s, const char *key, int64_t *v, ef_err *e);
/* Set it (insert or replace). */
int store_meta_set(store *s, const char *key, int64_t v, ef_err *e);

#endif
