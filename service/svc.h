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
 * The planning state (live.h): the service keeps the planner's own job
 * queue and plan at the newest scheduling point, driven by plan_point
 * (the simulator's ef engine), holding the jobs in play only. A
 * submission is decided at its release (the first slot boundary at or
 * after 'now') against the reservations held there, by the planner's
 * rule (plan.h); no later operation revokes an admission. The answer's
 * planned_end is the end the job's reservation guarantees.
 *
 * The plan: the full deadline-order re-plan of the state (plan_build of
 * its jobs from its point), made when a reader needs it (GET /v1/plan,
 * show, list, explain, replan) after a change, and stored as the
 * store's current plan; every view reads it. A start rebuilds the state
 * from the stored plan and the jobs submitted after it; the loop's
 * re-plan from reality restarts the state from its plan.
 *
 * Cancel frees the job's reservation in the state at once.
 *
 * Durability: an answer with a 2xx status is given only after its change
 * (job row, events, new plan version) is committed to the store in one
 * transaction. A failed commit changes nothing and answers 500.
 *
 * Serialisation: every operation that plans or reads the plan runs under
 * the svc's one lock, taken in the order asked (a ticket lock), so
 * submissions never interleave, none is lost, and none waits behind later
 * ones. /healthz and /metrics never take it: they read figures copied
 * after each change under a mutex of their own.
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

#include <jansson.h>

#include "common/err.h"
#include "service/store.h"

/* The largest request body the service reads (bytes); a larger one is
 * 413. */
#define SVC_BODY_MAX (256 * 1024)

typedef struct svc svc;

#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "model/placement.h"

typedef struct svc_config {
    const char *db;        /* the store's path */
    const char *cluster;   /* cluster_from_arg */
    const char *curves;    /* curve_set_load_arg: a directory or A100/T4 */
    int slot;              /* seconds */
    int overhead;          /* ovh_mode */
    const char *snapshots; /* directory for re-plan snapshots; NULL: DB.plans
                              next to the store */
    double scale;          /* the service's clock: plan seconds per wall
                              second (0: 1); see svc_now */
    int move_cluster;      /* 1: a store planned on another cluster is
                              moved to this one (svc_open, svc_moved) */
    int moves;             /* plan_moves of a new store's plan (0:
                              MOVES_NET); a store keeps its plan's */
    int learn_off;         /* 1: what the loop measured of a model (store
                              learned) is kept but not planned with: every
                              job at its curve and the overhead model until
                              it is measured running (a comparison
                              setting) */
    /* per-user limits (limits.h): jobs queued or running, submissions
     * per minute (0: none); a token's own limits come first */
    int64_t max_queued, max_rate;
    /* retention (retain.h): ended jobs are kept this long (seconds; 0:
     * forever), which a 404 of a job that may have been pruned says */
    int64_t keep;
} svc_config;

/* What moving a store to another cluster did (svc_open with
 * svc_config.move_cluster; svc_moved). */
typedef struct svc_move_res {
    int moved;             /* 1: this open moved the store */
    int from_nodes, from_gpus; /* the stored plan's cluster (its usable
                                  nodes when some were drained) */
    int to_nodes, to_gpus; /* the cluster given */
    int kept;              /* jobs in play (admitted, best-effort) kept */
    int admitted;          /* promises re-checked */
    int at_risk;           /* of them, at risk on the new cluster */
    char at_risk_ids[512]; /* their ids, ", "-separated (cut with ", ...") */
    int64_t version;       /* the plan version made on the new cluster */
} svc_move_res;

/* One answer. 'body' heap text, 'ctype' its media type (static). */
typedef struct svc_reply {
    int status;
    char *body;
    size_t len;
    const char *ctype;
    int retry_after;  /* 429: wall seconds for Retry-After (0: 1) */
} svc_reply;

void svc_reply_free(svc_reply *r);
/* Fill *r with the JSON error body of 'status', message 'msg' and, when
 * not NULL, the JSON path 'path'. */
void svc_reply_error(svc_reply *r, int status, const char *path,
                     const char *msg);
/* Fill *r with JSON value v (taken) as the body of 'status': keys sorted,
 * one line. */
void svc_reply_json(svc_reply *r, int status, json_t *v);

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

/* With svc_config.move_cluster, a store planned on another cluster (node
 * count or GPUs per node; or a plan kept on some nodes after drains) is
 * moved instead of refused: the planning state is made at 'now' on the
 * cluster it was planned on (its jobs' progress as planned), then
 * re-planned on the given cluster with every admitted job kept promised
 * (svc_loop_replan's re-plan, with nothing observed): the jobs whose
 * promise no longer holds are flagged at risk (the job's risk, an
 * "at_risk" event), the others keep their promise; then one "cluster_moved"
 * event of the service records from, to, kept, admitted, at_risk (ids)
 * and the plan version. A store already on that cluster is not moved.
 * *m: what was done (moved 0 when nothing was). */
void svc_moved(const svc *s, svc_move_res *m);

/* The store (the writer connection: use under svc_lock). */
store *svc_store(svc *s);
/* svc_token_check: store_token_check on the service's reader connection:
 * it never waits for planning (any thread, no lock held). */
int svc_token_check(svc *s, const char *text, store_ident *who, ef_err *e);
/* The directory of the re-plan snapshots (retention prunes it). */
const char *svc_snapdir(const svc *s);
/* The per-user limits that apply to 'who' (limits.h: lim_of). */
void svc_limits_of(const svc *s, const store_ident *who, int64_t *queued,
                   int64_t *rate, int *own);
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
/* GET /v1/jobs/{id}/explain: why the job got what it got in the current
 * plan (planner/explain.h: xpl_json, the service's curves); 404 when the
 * job is unknown or not in the current plan. Yours only, as show. */
void svc_explain(svc *s, const store_ident *who, const char *id,
                 svc_reply *r);
/* DELETE /v1/jobs/{id} */
void svc_cancel(svc *s, const store_ident *who, const char *id, int64_t now,
                svc_reply *r);
/* GET /v1/plan: the plan file's text; *version its version. */
void svc_plan(svc *s, svc_reply *r, int64_t *version);
/* POST /v1/replan (operators; 'who' NULL: the daily re-plan) */
void svc_replan(svc *s, const store_ident *who, int64_t now, svc_reply *r);
/* GET /v1/queue: the jobs in play in the planning state (admitted,
 * best-effort, not ended) as an efplan-jobs file, as the service plans
 * them from its state's point: each with its progress there
 * (iterations_done), "promised" when admitted, the overhead it still
 * owes; `efplan plan` of it from the plan's "now" is the service's plan.
 * A user's own, an operator's all. */
void svc_queue(svc *s, const store_ident *who, svc_reply *r);
/* GET /healthz: {"status": "ok", "version", "plan_version" (the
 * state's), "jobs" (in play in the state), "epoch" (the state's point),
 * "time" ('now')}. Never waits for planning. */
void svc_health(svc *s, int64_t now, svc_reply *r);
/* GET /metrics: Prometheus text (promtool accepts it): counters, job
 * gauges, efplan_promised_gpu_seconds, and histograms of submission,
 * full re-plan and point times. Never waits for planning. */
void svc_metrics(svc *s, svc_reply *r);
/* Record the latency of one submission (seconds) for /metrics. */
void svc_observe_submit(svc *s, double seconds);

/* ---- the clock ------------------------------------------------------------ */

/* The service's time (Unix seconds): the wall clock, or with a scale S
 * (svc_config.scale, efplan serve --time-scale) S plan seconds per wall
 * second from the moment the store first started. The anchor is kept in
 * the store, so a restarted service continues its time (a new scale
 * continues from the time the old one reached). */
int64_t svc_now(svc *s);

/* ---- the closed loop (loop.h drives these) --------------------------------- */

/* svc_learned: what the loop measured of job 'id' of 'model' (its
 * owner's runs where there are enough, else the model's: store_learned);
 * nothing measured (speed and restart 1, no runs) when the store has
 * nothing or fails. Call under the svc lock. */
void svc_learned(svc *s, const char *id, const char *model, store_learnt *lr);

/* svc_note_speed: the loop measured job 'id' (of 'model', by 'owner')
 * running at 'speed' of its curve in an attempt still running; until it
 * ends (speed 0: forget it), what the service has learned of the model
 * (a submission's planned speed, svc_learned) counts it as one more run,
 * measured so far. Call under the svc lock. */
void svc_note_speed(svc *s, const char *id, const char *model,
                    const char *owner, double speed);

/* The 'why' of an operator's re-plan: the loop acts on it at once, not at
 * the next slot boundary. */
#define SVC_WHY_OPERATOR "an operator's re-plan"

/* Call fn(arg, why) after every committed change of the plan or of a
 * node (why: "a submission", "a cancel", SVC_WHY_OPERATOR, "a drained
 * node", ...); fn runs under the svc lock and must only note it
 * (loop_wake). NULL: none. */
void svc_set_notify(svc *s, void (*fn)(void *arg, const char *why),
                    void *arg);

/* Tests: call fn(arg) each time svc_loop_replan's planning runs with the
 * planning lock let go (fn may take it: submit, cancel, drain). NULL:
 * none. */
void svc_set_apart_hook(svc *s, void (*fn)(void *arg), void *arg);

/* Plan every job to finish 'seconds' before its deadline from the next
 * re-plan on (plan_opts.deadline_margin: the loop's reaction allowance;
 * a job that cannot make it is at risk before its deadline, not after).
 * Under svc_lock. */
void svc_set_margin(svc *s, int64_t seconds);

/* The version of the current plan. Under svc_lock. */
int64_t svc_version(svc *s);
/* The slot boundary at or after 'now' on the planning state's grid: where
 * a job submitted at 'now' is released (decided). Under svc_lock. */
int64_t svc_release_at(const svc *s, int64_t now);

/* What the service plans with: its cluster (all nodes), its curves, the
 * plan's slot seconds and overhead model (ovh_mode), and whether its plan
 * holds running jobs still (plan_holds_still: --moves net). */
const cluster *svc_cluster(const svc *s);
const curve_set *svc_curves(const svc *s);
int svc_slot(const svc *s);
int svc_overhead(const svc *s);
int svc_holds_still(const svc *s);

/* Jobs the loop runs: every job whose state is queued or running, plus
 * the jobs 'extra[0..nextra)' (jobs the loop still has attempts of, e.g.
 * one just cancelled), as an efplan-jobs queue (the jobs as planned: their
 * commands, env and so on) into *q (free with queue_free); with each
 * job's admitted flag (1: admitted, a promise) in adm[] (heap, q->n
 * entries; free with free()). Under svc_lock. */
int svc_loop_jobs(svc *s, const char *const *extra, int nextra,
                  job_queue *q, int **adm, ef_err *e);

/* What became of one job, as the loop saw it. */
typedef enum svc_obs_state {
    SVC_OBS_WAITING = 0, /* holds no GPUs (not started, or between
                            attempts) */
    SVC_OBS_RUNNING,     /* an attempt runs on 'place' */
    SVC_OBS_DONE,        /* its work is done */
    SVC_OBS_FAILED       /* failed past its restart budget: 'why' */
} svc_obs_state;

typedef struct svc_obs {
    const char *id;
    svc_obs_state state;
    int64_t progress;    /* iterations done (at its batch size) */
    int64_t iterations;  /* its iterations, as submitted (0: the plan's) */
    placement place;     /* RUNNING: where, in the cluster's node numbers */
    const char *why;     /* FAILED: why, with its log */
    double owed;         /* RUNNING: seconds of its reconfiguration it
                            has still to pay (0: none) */
    double speed;        /* its measured speed as a fraction of its curve's
                            (0 or >= 1: as the curve): the re-plan scales
                            its remaining work by 1 / speed */
} svc_obs;

/* The at-risk and restart counts of one re-plan, for the loop's log. */
typedef struct svc_loop_res {
    int64_t version;     /* the new plan's */
    int64_t next;        /* the next slot boundary of the plan (now + slot) */
    int at_risk;         /* admitted jobs at risk in it */
    int newly_at_risk;   /* of them, not at risk in the plan before */
    char newly[256];     /* their ids, ", "-separated (cut short) */
} svc_loop_res;

/*
 * svc_loop_replan: re-plan from reality at 'now' (the loop's scheduling
 * point; 'why' one line for the plan history). The queue is the current
 * plan's, each job as 'obs' says (obs sorted by id; a job the loop does
 * not know yet is taken as it is): done and failed jobs leave it (their
 * store state becomes done / failed, with an event), a cancelled one
 * too; every other job gets its real progress as iterations_done (and,
 * measured slower than its curve, its remaining work scaled by 1 / speed:
 * the plan's iterations then count iterations at the curve's speed),
 * where it runs as its placement, and, if the plan admitted it, "promised"
 * (plan.h: kept admitted, at risk if it cannot be saved). The cluster is
 * the one the service was started with less its drained and down nodes
 * (store nodes; the plan's node_map numbers the rest). The new plan is
 * planned from 'now' with the plan's slot and overhead model, checked,
 * and committed with the jobs' progress and states, their at-risk reasons
 * (store_job_set_risk; an "at_risk" event when one is first flagged, with
 * its reason and earliest finish; "on_time" when one is no longer) and
 * the plan version, in one transaction. want[k] (room for nobs) is then
 * what obs[k]'s job gets in the slot at 'now', in the cluster's node
 * numbers (n == 0: nothing; heap arrays, placement_free each); need[k]
 * (room for nobs, may be NULL) how many of those GPUs its promise needs
 * there: what an admitted job's reservation holds of its allocation at
 * 'now' (the rest is surplus; 0 for a best-effort job, and for one at
 * risk: its plan is the earliest finish the others leave, not a promise
 * that outranks theirs), so the loop can
 * tell a change a promise needs from one that only gains; with
 * SVC_NEED_MOVE added for a running job the plan could not keep where it
 * runs (a drained or down node, a placement off the buddy rule) or no
 * longer has (cancelled): it must move or stop. Keeps a
 * copy of obs for svc_replan. Under svc_lock, which the planning itself
 * lets go (a full re-plan takes seconds at tens of thousands of jobs in
 * play: submissions and reads go on meanwhile); the jobs accepted
 * meanwhile join the new planning state as they were decided (the
 * state's version is then one past res->version), and where the state
 * changed otherwise (a cancel, a node's state) it is gathered and
 * planned again, holding the lock throughout. obs must be
 * the caller's own (no other thread frees it). Errors: the store, a plan
 * that fails its check (EF_E_INTERNAL); nothing changes then.
 */
#define SVC_NEED_MOVE (1 << 30)
int svc_loop_replan(svc *s, const svc_obs *obs, int nobs, int64_t now,
                    const char *why, placement *want, int *need,
                    svc_loop_res *res, ef_err *e);

/* Record event 'kind' (detail: a JSON object text, NULL "{}") of job 'id'
 * ('id' NULL: of the service) at 'now', and count restarts ("restart"),
 * failures ("failed") and lags ("lag") for /metrics. Under svc_lock. */
int svc_loop_event(svc *s, const char *id, const char *kind,
                   const char *detail, int64_t now, ef_err *e);

/* The cluster's names of its nodes (names[k]: node k; n of them, at most
 * the cluster's nodes): from --nodes or Slurm, set by the loop when it
 * starts (under svc_lock, or before requests are served). Copied. */
void svc_set_node_names(svc *s, char *const *names, int n);

/* POST /v1/nodes/{node}/drain (drain 1) and /undrain (drain 0):
 * operators only. 'node' is the node's number (from 0) or its name
 * (svc_set_node_names). 'body' (len bytes; may be empty) is {} or
 * {"reason": "..."} (at most 200 bytes, no control characters): why, as
 * the operator says it; the node's "why" becomes "drained by NAME: REASON"
 * and the event's detail has "reason". A drained node gets no new work;
 * the loop moves what runs there at its next tick. 404 for a node the
 * cluster lacks (the message lists its numbers and names); 400 for a bad
 * body; draining the last usable node is 409, and so is any drain of a
 * service without the loop (it only plans). */
void svc_node_drain(svc *s, const store_ident *who, const char *node,
                    int drain, const char *body, size_t len, int64_t now,
                    svc_reply *r);
/* GET /v1/nodes: {"nodes": [{"node", "name" (null when the cluster's
 * names are not known), "state" ("up", "drained", "down"), "why",
 * "since"}], "plan_nodes": the usable count}. */
void svc_nodes(svc *s, svc_reply *r);
/* Mark node 'node' down (the backend saw it DOWN or DRAIN: 'why'), or up
 * again (down 0, only a node marked down, not one an operator drained):
 * 1 when it changed. Under svc_lock. */
int svc_node_seen(svc *s, int node, int down, const char *why, int64_t now,
                  ef_err *e);

#endif
