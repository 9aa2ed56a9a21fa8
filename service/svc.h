/*
 * svc.h: the queue service (svc_*): what efplan serve does, without HTTP.
 *
 * A svc owns one store (store.h) and the current plan. Every operation
 * takes the caller's identity (a checked token, store_ident) and the
 * wall-clock time, and answers as an HTTP handler does: a status code and
 * a body (svc_reply), JSON unless said otherwise; an error body is always
 * {"error": {"status": N, "message": TEXT[, "path": JSON-PATH]}}. The HTTP
 * layer (http.h) only routes and authenticates; tests drive svc directly.
 *
 * The plan: the service plans its queue as efplan plan does, in Unix
 * time, from an epoch (the slot boundary at or before the first start;
 * kept in the store), on the cluster, curves, slot and overhead model
 * it was started with. The plan is the one source of every answer:
 * decisions, planned ends, GPUs and placements now.
 *
 * The promise: a submission is decided by plan_submit's rule (submit.h):
 * the queue plus the new job is planned again, and the job is admitted
 * only if its deadline is guaranteed and every job admitted before stays
 * admitted. A cancel or a re-plan keeps a new plan only if every admitted
 * job that is still live stays admitted; otherwise the old plan stays
 * (a cancelled job's reservation is then kept until a later re-plan can
 * free it). No later operation revokes an admission.
 *
 * Durability: an answer with a 2xx status is given only after its change
 * (job row, events, new plan version) is committed to the store in one
 * transaction. A failed commit changes nothing and answers 500.
 *
 * Serialisation: every operation runs under the svc's one lock, taken
 * in the order asked (a ticket lock), so submissions never interleave,
 * none is lost, and none waits behind later ones.
 *
 * Idempotence: a POST of a job id that the same user already submitted
 * with the same body (compared as canonical JSON) returns the first
 * answer (status 200) and changes nothing; another body, or an id another
 * user holds, is 409. A rejected job's id may be submitted again with
 * another body (a new decision, e.g. at the earliest feasible deadline).
 */
#ifndef EF_SVC_H
#define EF_SVC_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "service/store.h"

/* The largest request body the service reads (bytes); a larger one is
 * 413. */
#define SVC_BODY_MAX (256 * 1024)

typedef struct svc svc;

typedef struct svc_config {
    const char *db;        /* the store's path */
    const char *cluster;   /* cluster_from_arg */
    const char *curves;    /* curve_set_load_arg: a directory or A100/T4 */
    int slot;              /* seconds */
    int overhead;          /* ovh_mode */
    const char *snapshots; /* directory for re-plan snapshots; NULL: DB.plans
                              next to the store */
} svc_config;

/* One answer. 'body' heap text, 'ctype' its media type (static). */
typedef struct svc_reply {
    int status;
    char *body;
    size_t len;
    const char *ctype;
} svc_reply;

void svc_reply_free(svc_reply *r);
/* Fill *r with the JSON error body of 'status', message 'msg' and, when
 * not NULL, the JSON path 'path'. */
void svc_reply_error(svc_reply *r, int status, const char *path,
                     const char *msg);

/*
 * svc_open: open the store at cfg->db (creating it), load its current
 * plan, or plan an empty queue from the epoch floor(now / slot) * slot
 * when it has none. The cluster and curves of a store's plan must be the
 * ones given: another cluster or curves is EF_E_USAGE (say which), as
 * re-planning a promised queue onto other hardware is not done silently.
 * Errors: the store (store.h), the cluster or curves (EF_E_INPUT).
 */
int svc_open(svc **s, const svc_config *cfg, int64_t now, ef_err *e);
void svc_close(svc *s);

/* The store, for the HTTP layer's token checks (use under svc_lock). */
store *svc_store(svc *s);
void svc_lock(svc *s);
void svc_unlock(svc *s);

/* POST /v1/jobs: decide the job in body[0..len) for 'who' at 'now'. */
void svc_submit(svc *s, const store_ident *who, const char *body,
                size_t len, int64_t now, svc_reply *r);
/* GET /v1/jobs: 'all' (operators only: 403 otherwise), 'state' NULL or a
 * state name (400 for an unknown one). */
void svc_list(svc *s, const store_ident *who, int all, const char *state,
              int64_t now, svc_reply *r);
/* GET /v1/jobs/{id} */
void svc_show(svc *s, const store_ident *who, const char *id, int64_t now,
              svc_reply *r);
/* DELETE /v1/jobs/{id} */
void svc_cancel(svc *s, const store_ident *who, const char *id, int64_t now,
                svc_reply *r);
/* GET /v1/plan: the plan file's text; *version its version. */
void svc_plan(svc *s, svc_reply *r, int64_t *version);
/* POST /v1/replan (operators; 'who' NULL: the daily re-plan) */
void svc_replan(svc *s, const store_ident *who, int64_t now, svc_reply *r);
/* GET /v1/queue: live jobs (admitted, best-effort, not ended) as an
 * efplan-jobs file; a user's own, an operator's all. */
void svc_queue(svc *s, const store_ident *who, svc_reply *r);
/* GET /healthz: {"status": "ok", "version", "plan_version", "jobs" (in
 * the plan), "epoch" (the plan's start), "time" ('now')} */
void svc_health(svc *s, int64_t now, svc_reply *r);
/* GET /metrics: Prometheus text. */
void svc_metrics(svc *s, svc_reply *r);
/* Record the latency of one submission (seconds) for /metrics. */
void svc_observe_submit(svc *s, double seconds);

#endif
