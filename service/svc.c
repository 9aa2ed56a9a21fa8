/* svc.c: the queue service without HTTP (see svc.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "service/svc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "common/htime.h"
#include "common/jsonin.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "model/overhead.h"
#include "planner/place.h"
#include "planner/plan.h"
#include "planner/explain.h"
#include "planner/planio.h"
#include "planner/submit.h"
#include "service/limits.h"
#include "service/live.h"
#include "service/retain.h"

/* Upper bounds of the submission latency histogram (seconds). */
static const double lat_le[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                0.1,   0.25,  0.5,   1,    2.5,  5,   10};
#define NLAT ((int)(sizeof lat_le / sizeof lat_le[0]))

/* A latency histogram (seconds) for /metrics. */
typedef struct svc_hist {
    int64_t count, bucket[NLAT];
    double sum;
} svc_hist;

static void hist_add(svc_hist *h, double v)
{
    h->count++;
    h->sum += v;
    for (int i = 0; i < NLAT; i++)
        if (v <= lat_le[i])
            h->bucket[i]++;
}

static void hist_put(ef_buf *b, const char *name, const char *help,
                     const svc_hist *h)
{
    ef_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help,
                  name);
    for (int i = 0; i < NLAT; i++)
        ef_buf_printf(b, "%s_bucket{le=\"%g\"} %" PRId64 "\n", name,
                      lat_le[i], h->bucket[i]);
    ef_buf_printf(b, "%s_bucket{le=\"+Inf\"} %" PRId64 "\n%s_sum %.6f\n"
                  "%s_count %" PRId64 "\n", name, h->count, name, h->sum,
                  name, h->count);
}

/* The job states, in name order (store_jobs_count's order too). */
static const char *const states[] = {"cancelled", "done", "failed",
                                     "planned-done", "queued", "rejected",
                                     "running"};
#define NSTATES ((int)(sizeof states / sizeof states[0]))

/* Members of a submitted job that only the service sets. */
static const char *const server_keys[][2] = {
    {"user", "the owner is the token's user"},
    {"submit_time", "the server sets it to the time it receives the job"},
    {"iterations_done", "progress is reported by the executor"},
    {"samples_done", "progress is reported by the executor"},
    {"placement", "placement is the planner's"},
    {"promised", "the service records its own promises"},
    {"overhead_owed", "the loop reports what a running job still pays"},
};

/* A plan as readers see it: immutable once made, freed with its last
 * reference (view_drop). */
typedef struct view {
    int refs;         /* under svc.vmu */
    int64_t version;  /* the state's version it plans */
    char *text;       /* the plan file's text */
    size_t len;
    plan_doc doc;     /* its parsed value */
    int *byid;        /* doc.jobs indices sorted by id */
} view;

struct svc {
    /* the cluster's names of its nodes (svc_set_node_names) */
    char **node_name;
    int nnode_name;
    /* a ticket lock: operations run one at a time, in the order they
     * asked (a plain mutex lets a late request overtake waiting ones) */
    pthread_mutex_t mu;
    pthread_cond_t turn;
    uint64_t next_ticket, serving;
    store *st;
    char *db, *cluster_arg, *curves_arg, *snapdir;
    cluster c;
    curve_set cs;
    /* the planning state at the newest point (live.h): every decision is
     * made against it; 'version' counts its accepted changes */
    live L;
    int64_t version;
    /* counts changes of the nodes' states (drained, down): with 'version',
     * what a re-plan from reality planned outside the lock must still
     * find (reality_replan) */
    int64_t nodes_gen;
    int64_t subs;     /* submissions accepted into the state */
    /* while the loop's re-plan from reality plans with the lock let go
     * (apart): the ids of the jobs accepted meanwhile, which join its new
     * planning state (live_reset) */
    int apart;
    char **win;
    int nwin, capwin;
    /* the current plan (view.h-like: shared with readers, who hold
     * references; swapped under 'vmu'): the full re-plan of the state at
     * its version, made when a reader needs it */
    view *pv;
    pthread_mutex_t vmu;  /* guards pv's swap and every view's refs */
    pthread_mutex_t bmu;  /* one reader builds a newer plan at a time */
    /* a read-only connection to the store, for readers (tokens, job rows,
     * events), used under 'rmu': they never wait for planning */
    store *rd;
    pthread_mutex_t rmu;
    int slot_s;       /* the plan's slot and overhead (fixed at open) */
    int ovh;
    /* the clock: plan time = plan0 + (wall - wall0) x scale (ms) */
    int64_t wall0_ms, plan0_ms;
    double scale;
    /* the plan's node map (plan node k -> cluster node map[k]; identity
     * when nmap == 0): the cluster's nodes that are not drained or down */
    int nmap;
    long *map;
    /* told after every committed change of the plan (efplan serve's
     * loop) */
    void (*notify)(void *arg, const char *why);
    void *notify_arg;
    /* tests: called while a re-plan from reality plans with the lock let
     * go (svc_set_apart_hook) */
    void (*apart_hook)(void *arg);
    void *apart_arg;
    /* what the loop last reported (svc_loop_replan), for the operators'
     * re-plan; nobs < 0: no loop */
    int nobs;
    svc_obs *obs;
    /* loop counters, for /metrics */
    int64_t loop_replans, loop_restarts, loop_failed, loop_lag;
    int64_t margin;   /* the loop's deadline margin (svc_set_margin) */
    int learn_off;    /* svc_config.learn_off */
    /* the loop's attempts still running whose speed it has measured
     * (svc_note_speed), sorted by job id: the learned speed counts each
     * as a run measured so far (learned_of) until it ends */
    struct run_speed {
        char *id, *model, *owner;
        double speed;
    } *rsp;
    int nrsp;
    /* metrics since start */
    /* what /healthz and /metrics read, under 'smu' only (never the
     * planning lock): counters and the state's figures as of the last
     * change */
    pthread_mutex_t smu;
    int64_t sub_by_dec[3]; /* admitted, best_effort, rejected */
    int64_t sub_retries, sub_errors;
    int64_t sub_limited;   /* refused by a user's limit (429) */
    svc_hist h_submit, h_replan, h_point;
    int64_t m_version, m_epoch;
    int m_jobs, m_at_risk;
    double m_promised_s;  /* GPU-seconds the last full plan promises */
    svc_move_res moved;   /* what svc_open's move did (svc_moved) */
    /* per-user limits (limits.h) and the retention period (seconds, 0:
     * forever: what a 404 says of a job that may have been pruned) */
    lim *lim;
    int64_t keep;
};

/* ---- replies ------------------------------------------------------------- */

void svc_reply_free(svc_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

static void reply_take(svc_reply *r, int status, char *body,
                       const char *ctype)
{
    r->status = status;
    r->body = body;
    r->len = strlen(body);
    r->ctype = ctype;
}

void svc_reply_json(svc_reply *r, int status, json_t *v)
{
    char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(v);
    ef_buf b = {0};
    ef_buf_put(&b, t);
    ef_buf_put(&b, "\n");
    free(t);
    reply_take(r, status, b.s, "application/json");
}

/* A JSON string of s: as it is when it is valid UTF-8, else with each byte
 * that is not (a stray byte, a character cut by a length limit) written
 * as the text \xNN, so that a message keeps what it quotes. */
static json_t *jstr(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    ef_buf b = {0};
    ef_buf_put(&b, "");
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = ef_utf8_char(s + i, n - i, &cp);
        if (k > 0) {
            ef_buf_printf(&b, "%.*s", k, s + i);
            i += (size_t)k;
        } else {
            ef_buf_printf(&b, "\\x%02X", (unsigned char)s[i]);
            i++;
        }
    }
    v = json_string(b.s);
    free(b.s);
    return v ? v : json_string("");
}

void svc_reply_error(svc_reply *r, int status, const char *path,
                     const char *msg)
{
    json_t *er = json_object();
    json_object_set_new(er, "message", jstr(msg));
    if (path)
        json_object_set_new(er, "path", jstr(path));
    json_object_set_new(er, "status", json_integer(status));
    json_t *v = json_object();
    json_object_set_new(v, "error", er);
    svc_reply_json(r, status, v);
}

/* 500 with the error's message (never a token: no caller puts one in). */
static void reply_internal(svc_reply *r, const ef_err *e)
{
    char m[EF_ERR_LEN + 32];
    snprintf(m, sizeof m, "internal error: %s", e->msg);
    svc_reply_error(r, 500, NULL, m);
}

/* ---- the current plan ------------------------------------------------------ */

static int byid_cmp(const void *a, const void *b, void *ctx)
{
    const plan_doc *d = ctx;
    return strcmp(d->jobs[*(const int *)a].id, d->jobs[*(const int *)b].id);
}

static void view_free(view *v)
{
    plan_doc_free(&v->doc);
    free(v->text);
    free(v->byid);
    free(v);
}

/* Drop a reference to v (NULL: nothing). */
static void view_drop(svc *s, view *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&s->vmu);
    int last = --v->refs == 0;
    pthread_mutex_unlock(&s->vmu);
    if (last)
        view_free(v);
}

/* A reference to the current plan, if it plans version 'need' or a later
 * one; else NULL. */
static view *view_take(svc *s, int64_t need)
{
    pthread_mutex_lock(&s->vmu);
    view *v = s->pv && s->pv->version >= need ? s->pv : NULL;
    if (v)
        v->refs++;
    pthread_mutex_unlock(&s->vmu);
    return v;
}

/* A view of doc 'd' (taken), whose file text is text[0..len) (heap,
 * taken), planning version 'version'; one reference. */
static view *view_make(plan_doc *d, char *text, size_t len, int64_t version)
{
    view *v = ef_calloc(1, sizeof *v);
    v->refs = 1;
    v->version = version;
    v->doc = *d;
    v->text = text;
    v->len = len;
    v->byid = ef_malloc(((size_t)d->njobs + 1) * sizeof *v->byid);
    for (int i = 0; i < d->njobs; i++)
        v->byid[i] = i;
    qsort_r(v->byid, (size_t)d->njobs, sizeof *v->byid, byid_cmp, &v->doc);
    return v;
}

/* Make v (its reference taken) the current plan (under the planning
 * lock). */
static void use_view(svc *s, view *v)
{
    if (v->version > s->version)
        s->version = v->version;
    pthread_mutex_lock(&s->vmu);
    view *old = s->pv;
    s->pv = v;
    pthread_mutex_unlock(&s->vmu);
    view_drop(s, old);
}

/* Make text (heap, taken) the current plan of version 'version'. */
static int set_plan(svc *s, char *text, size_t len, int64_t version,
                    ef_err *e)
{
    plan_doc d;
    if (plan_doc_parse(&d, "the service's plan", text, len, e) != EF_OK) {
        free(text);
        return EF_ERR;
    }
    use_view(s, view_make(&d, text, len, version));
    return EF_OK;
}

/* Plan v's entry of job 'id', or NULL. */
static const plan_doc_job *view_find(const view *v, const char *id)
{
    int lo = 0, hi = v->doc.njobs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(v->doc.jobs[v->byid[mid]].id, id);
        if (c == 0)
            return &v->doc.jobs[v->byid[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* The plan file of plan p as the service writes it, with curves
 * 'curves' and the node map map[0..nmap-1] (plan node -> cluster node;
 * nmap 0: none): *d (borrowing p and the map) and its text (heap;
 * *len). */
static char *plan_text(const char *curves, int nmap, long *map,
                       const plan *p, plan_doc *d, size_t *len)
{
    plan_doc_from_plan(d, p, "", curves);
    d->nnode_map = nmap;
    d->node_map = map;
    return plan_doc_json(d, len);
}

/* Plan queue q on cluster c with po and check the plan (*p; freed on
 * error): the full re-plan every service plan is made by. */
static int plan_checked(plan *p, const job_queue *q, const cluster *c,
                        const plan_opts *po, ef_err *e)
{
    if (plan_build(p, q, c, po, e) != EF_OK)
        return EF_ERR;
    if (plan_check(p, e) != EF_OK) {
        ef_prefix(e, "the service's plan fails its check: ");
        plan_free(p);
        return EF_ERR;
    }
    return EF_OK;
}

/* The cluster node of plan node k. */
static int real_node(const svc *s, int k)
{
    return s->nmap ? (int)s->map[k] : k;
}

/* ---- the clock ------------------------------------------------------------- */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t svc_now(svc *s)
{
    int64_t w = wall_ms();
    double t = (double)s->plan0_ms + (double)(w - s->wall0_ms) * s->scale;
    return (int64_t)(t / 1000.0);
}

/* Load the clock's anchor from the store, or set it (first start, or a
 * new scale: continue from the time the old one reached). */
static int clock_open(svc *s, double scale, ef_err *e)
{
    s->scale = scale > 0 ? scale : 1;
    int64_t w0, p0, sm;
    int a = store_meta_get(s->st, "clock_wall_ms", &w0, e);
    int b = a > 0 ? store_meta_get(s->st, "clock_plan_ms", &p0, e) : 0;
    int c = b > 0 ? store_meta_get(s->st, "clock_scale_milli", &sm, e) : 0;
    if (a < 0 || b < 0 || c < 0)
        return EF_ERR;
    int64_t want = (int64_t)llround(s->scale * 1000);
    int64_t w = wall_ms();
    if (c > 0 && sm == want) {
        s->wall0_ms = w0;
        s->plan0_ms = p0;
        return EF_OK;
    }
    s->plan0_ms = c > 0 ? p0 + (int64_t)((double)(w - w0) * (double)sm /
                                         1000.0)
                        : w;
    s->wall0_ms = w;
    if (store_begin(s->st, e) != EF_OK)
        return EF_ERR;
    if (store_meta_set(s->st, "clock_wall_ms", s->wall0_ms, e) != EF_OK ||
        store_meta_set(s->st, "clock_plan_ms", s->plan0_ms, e) != EF_OK ||
        store_meta_set(s->st, "clock_scale_milli", want, e) != EF_OK ||
        store_commit(s->st, e) != EF_OK) {
        store_rollback(s->st);
        return EF_ERR;
    }
    return EF_OK;
}

/* ---- the planning state ------------------------------------------------ */

/* Copy what /healthz and /metrics show (under the planning lock). */
static void stats_update(svc *s)
{
    int risk = 0;
    for (int k = 0; k < s->L.na; k++)
        risk += s->L.p.jobs[s->L.act[k]].at_risk;
    pthread_mutex_lock(&s->smu);
    s->m_version = s->version;
    s->m_jobs = s->L.na;
    s->m_epoch = s->L.t;
    s->m_at_risk = risk;
    s->m_promised_s = s->pv->doc.summary.promised_gpu_hours * 3600;
    pthread_mutex_unlock(&s->smu);
}

/* The jobs the dry run finished (live_advance's callback). */
typedef struct done_list {
    char **id;
    int64_t *end, *iters;
    int n, cap;
} done_list;

static void on_done(void *arg, const job *j, int64_t end)
{
    done_list *d = arg;
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 8;
        d->id = ef_realloc(d->id, (size_t)d->cap * sizeof *d->id);
        d->end = ef_realloc(d->end, (size_t)d->cap * sizeof *d->end);
        d->iters = ef_realloc(d->iters, (size_t)d->cap * sizeof *d->iters);
    }
    d->id[d->n] = ef_strdup(j->id);
    d->end[d->n] = end;
    d->iters[d->n++] = j->iterations;
}

/* Run the state to point 'to' (on the grid, not before its point). A
 * service that only plans (no loop) records the jobs the plan finished
 * on the way as "planned-done", each with a "planned_done" event. */
static int advance(svc *s, int64_t to, int64_t now, ef_err *e)
{
    if (to <= s->L.t)
        return EF_OK;
    done_list d = {0};
    int64_t p0 = s->L.points;
    double t0 = ef_mono_seconds();
    live_advance(&s->L, to, on_done, &d);
    double dt = ef_mono_seconds() - t0;
    int64_t np = s->L.points - p0;
    if (np > 0) {
        pthread_mutex_lock(&s->smu);
        for (int64_t k = 0; k < np; k++)
            hist_add(&s->h_point, dt / (double)np);
        pthread_mutex_unlock(&s->smu);
    }
    int rc = EF_OK;
    if (d.n > 0 && !s->notify) {
        rc = store_begin(s->st, e);
        for (int k = 0; rc == EF_OK && k < d.n; k++) {
            char dt2[64];
            snprintf(dt2, sizeof dt2, "{\"end\":%" PRId64 "}", d.end[k]);
            int got = store_job_update_live(s->st, d.id[k], "planned-done",
                                            0, now, e);
            if (got < 0)
                rc = EF_ERR;
            else if (got > 0)
                rc = store_event_add(s->st, d.id[k], now, "planned_done",
                                     dt2, e);
        }
        if (rc == EF_OK)
            rc = store_commit(s->st, e);
        else
            store_rollback(s->st);
    }
    for (int k = 0; k < d.n; k++)
        free(d.id[k]);
    free(d.id);
    free(d.end);
    free(d.iters);
    return rc;
}

/* The point at or before 'now' on the state's grid. */
static int64_t point_at(const svc *s, int64_t now)
{
    int64_t S = s->L.p.opts.slot, t0 = s->L.p.now;
    int64_t k = now >= t0 ? (now - t0) / S : -((t0 - now + S - 1) / S);
    return t0 + k * S;
}

/* What a full re-plan of the state starts from, copied under the
 * planning lock (replan_copy) so that the re-plan itself can run outside
 * it (replan_make). */
typedef struct replan_in {
    job_queue q;      /* the jobs in play (live_queue) */
    plan_opts po;     /* the state's options, now = its point */
    cluster cl;
    int64_t version;  /* the state's version */
    int nmap;         /* the plan's node map then */
    long *map;
} replan_in;

/* Copy the state (under the planning lock). */
static void replan_copy(svc *s, replan_in *in)
{
    live_settle(&s->L);
    live_queue(&s->L, &in->q, NULL);
    in->po = s->L.p.opts;
    in->po.now = s->L.t;
    in->cl = s->L.p.cl;
    in->version = s->version;
    in->nmap = s->nmap;
    in->map = NULL;
    if (s->nmap > 0) {
        in->map = ef_malloc((size_t)s->nmap * sizeof *in->map);
        memcpy(in->map, s->map, (size_t)s->nmap * sizeof *in->map);
    }
}

/* The full deadline-order re-plan of a copied state (no lock needed):
 * plan_build of its jobs from its point, checked, rendered and parsed
 * into a view (one reference); *adm the jobs it admits. Frees *in. NULL
 * with e filled on failure. */
static view *replan_make(svc *s, replan_in *in, int *adm, ef_err *e)
{
    plan p;
    view *v = NULL;
    if (plan_checked(&p, &in->q, &in->cl, &in->po, e) == EF_OK) {
        plan_doc nd, d;
        size_t len = 0;
        char *text = plan_text(s->curves_arg, in->nmap, in->map, &p, &nd,
                               &len);
        plan_doc_free(&nd);
        *adm = p.admitted;
        plan_free(&p);
        if (plan_doc_parse(&d, "the service's plan", text, len, e) != EF_OK)
            free(text);
        else
            v = view_make(&d, text, len, in->version);
    }
    queue_free(&in->q);
    free(in->map);
    return v;
}

/* Make v (taken) the current plan unless a newer one is (under the
 * planning lock): stored as the current plan (one history row). */
static int view_install(svc *s, view *v, int adm, int64_t now, ef_err *e)
{
    if (s->pv && s->pv->version >= v->version) {
        view_drop(s, v);
        return EF_OK;
    }
    if (store_plan_put(s->st, v->version, now, "snapshot", adm, v->text,
                       e) != EF_OK) {
        view_drop(s, v);
        return EF_ERR;
    }
    use_view(s, v);
    stats_update(s);
    return EF_OK;
}

/* The time one full re-plan took, for /metrics. */
static void replan_timed(svc *s, double t0)
{
    double dt = ef_mono_seconds() - t0;
    pthread_mutex_lock(&s->smu);
    hist_add(&s->h_replan, dt);
    pthread_mutex_unlock(&s->smu);
}

/* The current plan, made from the state when it is older than the
 * state's last change (under the planning lock): the full deadline-order
 * re-plan, stored as the current plan and parsed for the views. */
static int snapshot(svc *s, int64_t now, ef_err *e)
{
    if (s->pv && s->pv->version == s->version)
        return EF_OK;
    double t0 = ef_mono_seconds();
    replan_in in;
    int adm = 0;
    replan_copy(s, &in);
    view *v = replan_make(s, &in, &adm, e);
    if (!v)
        return EF_ERR;
    replan_timed(s, t0);
    return view_install(s, v, adm, now, e);
}

/* For a reader (no lock held): a reference to a plan at least as new as
 * every change committed before the call (view_drop it), or NULL with e
 * filled. When the current plan is older, one reader at a time copies
 * the state under the planning lock and re-plans it outside the lock;
 * the others wait for that plan, not for the planning. */
static view *view_get(svc *s, int64_t now, ef_err *e)
{
    pthread_mutex_lock(&s->smu);
    int64_t need = s->m_version;
    pthread_mutex_unlock(&s->smu);
    view *v = view_take(s, need);
    if (v)
        return v;
    pthread_mutex_lock(&s->bmu);
    v = view_take(s, need);
    if (!v) {
        double t0 = ef_mono_seconds();
        replan_in in;
        int adm = 0, rc = EF_OK;
        svc_lock(s);
        int fresh = s->pv && s->pv->version == s->version;
        if (!fresh)
            replan_copy(s, &in);
        svc_unlock(s);
        if (!fresh) {
            view *nv = replan_make(s, &in, &adm, e);
            replan_timed(s, t0);
            svc_lock(s);
            rc = nv ? view_install(s, nv, adm, now, e) : EF_ERR;
            svc_unlock(s);
        }
        if (rc == EF_OK)
            v = view_take(s, need);
        if (!v && rc == EF_OK)
            ef_fail(e, EF_E_INTERNAL, "the service's plan is older than its "
                    "state");
    }
    pthread_mutex_unlock(&s->bmu);
    return v;
}

/* A job from its stored body (the service's own JSON, at the store's
 * edge), resolved: *out (moved from a queue of one). */
static int job_from_body(svc *s, const char *body, job *out, ef_err *e)
{
    size_t n = strlen(body);
    char *wrap = ef_malloc(n + 16);
    snprintf(wrap, n + 16, "{\"jobs\": [%s]}", body);
    job_queue one;
    int rc = queue_parse_json(&one, "--job", wrap, strlen(wrap), e);
    free(wrap);
    if (rc == EF_OK)
        rc = queue_resolve(&one, &s->cs, e);
    if (rc == EF_OK) {
        *out = one.jobs[0];
        memset(&one.jobs[0], 0, sizeof one.jobs[0]);
    }
    queue_free(&one);
    return rc;
}

/* One job to take back into the state (live_load). */
typedef struct load_item {
    int64_t submit;
    int seq, promised;
    job jb;
} load_item;

static int load_cmp(const void *a, const void *b)
{
    const load_item *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return x->seq - y->seq;
}

static int row_cmp(const void *a, const void *b)
{
    return strcmp(((const store_job *)a)->id, ((const store_job *)b)->id);
}

/* Take the state back after a start: the current plan's jobs that the
 * store still has queued or running (admitted ones adopted as promised),
 * then the store's live jobs submitted after it, each at its release in
 * submit order, the state run to the point at or before 'now' on the
 * way (the full re-plan of a restart). */
static int live_load(svc *s, int64_t now, ef_err *e)
{
    const plan_doc *d = &s->pv->doc;
    plan_opts po;
    plan_doc_opts(d, &po);
    po.deadline_margin = s->margin;
    cluster dc;
    if (cluster_init(&dc, 1, d->cluster.nodes, d->cluster.gpus_per_node,
                     "the service's cluster", e) != EF_OK)
        return EF_ERR;
    live_free(&s->L);
    if (live_start(&s->L, &dc, &po, d->now, e) != EF_OK)
        return EF_ERR;
    s->L.reality = s->notify != NULL;
    store_job *rq = NULL, *rr = NULL;
    int nrq = 0, nrr = 0;
    if (store_jobs_list(s->st, NULL, "queued", &rq, &nrq, e) != EF_OK)
        return EF_ERR;
    if (store_jobs_list(s->st, NULL, "running", &rr, &nrr, e) != EF_OK) {
        store_jobs_free(rq, nrq);
        return EF_ERR;
    }
    int nrows = nrq + nrr;
    store_job *rows = ef_calloc((size_t)nrows + 1, sizeof *rows);
    if (nrq)
        memcpy(rows, rq, (size_t)nrq * sizeof *rows);
    if (nrr)
        memcpy(rows + nrq, rr, (size_t)nrr * sizeof *rows);
    free(rq);
    free(rr);
    qsort(rows, (size_t)nrows, sizeof *rows, row_cmp);
    char *used = ef_calloc((size_t)nrows + 1, 1);
    load_item *it = ef_calloc((size_t)(d->njobs + nrows) + 1, sizeof *it);
    int ni = 0, rc = EF_OK;
    job_queue dq;
    memset(&dq, 0, sizeof dq);
    char *qt = plan_doc_queue_json(d, NULL);
    rc = queue_parse_json(&dq, "the service's plan", qt, strlen(qt), e);
    free(qt);
    if (rc == EF_OK)
        rc = queue_resolve(&dq, &s->cs, e);
    for (int i = 0; rc == EF_OK && i < dq.n && i < d->njobs; i++) {
        store_job key = {.id = dq.jobs[i].id};
        store_job *r = bsearch(&key, rows, (size_t)nrows, sizeof *rows,
                               row_cmp);
        if (!r || d->jobs[i].decision == PLAN_REJECTED)
            continue;
        used[r - rows] = 1;
        load_item *x = &it[ni++];
        x->submit = dq.jobs[i].submit;
        x->seq = ni;
        x->promised = d->jobs[i].decision == PLAN_ADMITTED;
        x->jb = dq.jobs[i];
        memset(&dq.jobs[i], 0, sizeof dq.jobs[i]);
    }
    for (int k = 0; rc == EF_OK && k < nrows; k++) {
        if (used[k])
            continue;
        load_item *x = &it[ni];
        if (job_from_body(s, rows[k].body, &x->jb, e) != EF_OK) {
            ef_prefix(e, "job \"%s\" in the store: ", rows[k].id);
            rc = EF_ERR;
            break;
        }
        x->submit = rows[k].submitted;
        x->seq = ni + 1;
        x->promised = strcmp(rows[k].decision, "admitted") == 0;
        ni++;
    }
    queue_free(&dq);
    free(used);
    store_jobs_free(rows, nrows);
    qsort(it, (size_t)ni, sizeof *it, load_cmp);
    int *rel = ef_malloc(((size_t)ni + 1) * sizeof *rel);
    for (int a = 0; a < ni;) {
        if (rc != EF_OK) {
            job_queue one = {0};
            one.jobs = ef_malloc(sizeof *one.jobs);
            one.jobs[0] = it[a++].jb;
            one.n = 1;
            queue_free(&one);
            continue;
        }
        int64_t R = ef_align_up(s->L.p.now, it[a].submit, s->L.p.opts.slot);
        if (R > s->L.t)
            rc = advance(s, R, now, e);
        int nrel = 0, b = a;
        while (b < ni && ef_align_up(s->L.p.now, it[b].submit,
                                     s->L.p.opts.slot) <= s->L.t) {
            int i = live_add(&s->L, &it[b].jb, it[b].promised);
            if (!it[b].promised)
                rel[nrel++] = i;
            b++;
        }
        if (b == a) { /* a release before the state's point */
            int i = live_add(&s->L, &it[a].jb, it[a].promised);
            if (!it[a].promised)
                rel[nrel++] = i;
            b = a + 1;
        }
        live_point(&s->L, rel, nrel);
        a = b;
    }
    free(rel);
    free(it);
    if (rc == EF_OK && point_at(s, now) > s->L.t)
        rc = advance(s, point_at(s, now), now, e);
    if (rc == EF_OK && s->L.due)
        live_point(&s->L, NULL, 0);
    stats_update(s);
    return rc;
}

/* ---- open and close ------------------------------------------------------ */

static int move_cluster(svc *s, int64_t now, ef_err *e);

int svc_open(svc **out, const svc_config *cfg, int64_t now, ef_err *e)
{
    *out = NULL;
    svc *s = ef_calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->turn, NULL);
    pthread_mutex_init(&s->smu, NULL);
    pthread_mutex_init(&s->vmu, NULL);
    pthread_mutex_init(&s->bmu, NULL);
    pthread_mutex_init(&s->rmu, NULL);
    s->db = ef_strdup(cfg->db);
    s->learn_off = cfg->learn_off;
    s->lim = lim_new(cfg->max_queued, cfg->max_rate);
    s->keep = cfg->keep > 0 ? cfg->keep : 0;
    s->cluster_arg = ef_strdup(cfg->cluster);
    s->curves_arg = ef_strdup(cfg->curves);
    if (cfg->snapshots) {
        s->snapdir = ef_strdup(cfg->snapshots);
    } else {
        size_t n = strlen(cfg->db) + 8;
        s->snapdir = ef_malloc(n);
        snprintf(s->snapdir, n, "%s.plans", cfg->db);
    }
    if (cluster_from_arg(&s->c, cfg->cluster, e) != EF_OK ||
        curve_set_load_arg(&s->cs, cfg->curves, e) != EF_OK ||
        store_open(&s->st, cfg->db, e) != EF_OK ||
        store_open_reader(&s->rd, cfg->db, e) != EF_OK)
        goto fail;
    int64_t version = 0;
    char *text = NULL;
    int have = store_plan_get(s->st, &version, &text, e);
    if (have < 0)
        goto fail;
    s->nobs = -1;
    if (clock_open(s, cfg->scale, e) != EF_OK)
        goto fail;
    if (have) {
        if (set_plan(s, text, strlen(text), version, e) != EF_OK)
            goto fail;
        const plan_doc *d = &s->pv->doc;
        int mapped = d->nnode_map > 0;
        for (int k = 0; k < d->nnode_map; k++)
            mapped = mapped && d->node_map[k] < s->c.nodes;
        if (mapped) {
            s->nmap = d->nnode_map;
            s->map = ef_malloc((size_t)s->nmap * sizeof *s->map);
            memcpy(s->map, d->node_map, (size_t)s->nmap * sizeof *s->map);
        }
        int other = (mapped ? 0 : d->cluster.nodes != s->c.nodes) ||
                    d->cluster.gpus_per_node != s->c.gpus_per_node;
        if (other && !cfg->move_cluster) {
            ef_fail(e, EF_E_USAGE, "%s: its queue is planned on %d nodes of "
                    "%d GPUs, and --cluster %s has %d of %d (start it with "
                    "the cluster it was planned on, or add --move-cluster "
                    "to move it: its promises are checked again there)",
                    cfg->db, d->cluster.nodes, d->cluster.gpus_per_node,
                    cfg->cluster, s->c.nodes, s->c.gpus_per_node);
            goto fail;
        }
        if (strcmp(d->curves ? d->curves : "", cfg->curves) != 0) {
            ef_fail(e, EF_E_USAGE, "%s: its queue is planned with curves "
                    "\"%s\", and --curves is \"%s\" (start it with the "
                    "curves it was planned with)", cfg->db,
                    d->curves ? d->curves : "", cfg->curves);
            goto fail;
        }
        int64_t mv = 0;
        int got = store_meta_get(s->st, "version", &mv, e);
        if (got < 0)
            goto fail;
        if (got > 0 && mv > s->version)
            s->version = mv;
        s->slot_s = d->slot_seconds;
        s->ovh = d->overhead ? (int)ovh_parse(d->overhead) : OVH_NONE;
        if (live_load(s, now, e) != EF_OK)
            goto fail;
        if (cfg->move_cluster && (other || s->nmap) &&
            move_cluster(s, now, e) != EF_OK)
            goto fail;
        *out = s;
        return EF_OK;
    }
    /* a new store: the empty queue planned from the epoch */
    if (cfg->slot <= 0) {
        ef_fail(e, EF_E_USAGE, "slot: %d (expected 1 to 86400 seconds)",
                cfg->slot);
        goto fail;
    }
    int64_t epoch = now - now % cfg->slot;
    job_queue q;
    memset(&q, 0, sizeof q);
    q.path = "the service's queue";
    plan_opts po;
    plan_opts_default(&po);
    po.slot = cfg->slot;
    po.now = epoch;
    po.overhead = (ovh_mode)cfg->overhead;
    po.moves = cfg->moves == MOVES_ANY ? MOVES_ANY : MOVES_NET;
    plan p;
    if (plan_build(&p, &q, &s->c, &po, e) != EF_OK)
        goto fail;
    size_t len = 0;
    char *pt = NULL;
    plan_doc d0;
    pt = plan_text(s->curves_arg, s->nmap, s->map, &p, &d0, &len);
    plan_doc_free(&d0);
    plan_free(&p);
    if (store_begin(s->st, e) != EF_OK ||
        store_meta_set(s->st, "epoch", epoch, e) != EF_OK ||
        store_plan_put(s->st, 1, now, "start", 0, pt, e) != EF_OK ||
        store_event_add(s->st, NULL, now, "started", NULL, e) != EF_OK ||
        store_commit(s->st, e) != EF_OK) {
        store_rollback(s->st);
        free(pt);
        goto fail;
    }
    if (set_plan(s, pt, len, 1, e) != EF_OK)
        goto fail;
    s->slot_s = s->pv->doc.slot_seconds;
    s->ovh = po.overhead;
    if (live_load(s, now, e) != EF_OK)
        goto fail;
    *out = s;
    return EF_OK;
fail:
    svc_close(s);
    return EF_ERR;
}

void svc_close(svc *s)
{
    if (!s)
        return;
    if (s->st && s->pv && s->pv->version != s->version) {
        /* the current plan, stored for the next start */
        ef_err e = {0};
        (void)snapshot(s, svc_now(s), &e);
    }
    /* the reader first: the writer, closing last, checkpoints the WAL
     * into the store file and removes it (a stopped service leaves one
     * file that holds everything) */
    store_close(s->rd);
    if (s->st)
        store_close(s->st);
    view_drop(s, s->pv);
    live_free(&s->L);
    for (int i = 0; i < s->nwin; i++)
        free(s->win[i]);
    free(s->win);
    for (int i = 0; i < s->nrsp; i++) {
        free(s->rsp[i].id);
        free(s->rsp[i].model);
        free(s->rsp[i].owner);
    }
    free(s->rsp);
    pthread_mutex_destroy(&s->smu);
    curve_set_free(&s->cs);
    free(s->db);
    free(s->cluster_arg);
    free(s->curves_arg);
    free(s->snapdir);
    lim_free(s->lim);
    free(s->map);
    for (int i = 0; i < s->nobs; i++) {
        free((char *)s->obs[i].id);
        free((char *)s->obs[i].why);
        placement_free(&s->obs[i].place);
    }
    free(s->obs);
    for (int k = 0; k < s->nnode_name; k++)
        free(s->node_name[k]);
    free(s->node_name);
    pthread_cond_destroy(&s->turn);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->vmu);
    pthread_mutex_destroy(&s->bmu);
    pthread_mutex_destroy(&s->rmu);
    free(s);
}

store *svc_store(svc *s) { return s->st; }

int svc_token_check(svc *s, const char *text, store_ident *who, ef_err *e)
{
    pthread_mutex_lock(&s->rmu);
    int ok = store_token_check(s->rd, text, who, e);
    pthread_mutex_unlock(&s->rmu);
    return ok;
}

const char *svc_snapdir(const svc *s) { return s->snapdir; }
void svc_limits_of(const svc *s, const store_ident *who, int64_t *queued,
                   int64_t *rate, int *own)
{
    lim_of(s->lim, who, queued, rate, own);
}
void svc_lock(svc *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t mine = s->next_ticket++;
    while (mine != s->serving)
        pthread_cond_wait(&s->turn, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

void svc_unlock(svc *s)
{
    pthread_mutex_lock(&s->mu);
    s->serving++;
    pthread_cond_broadcast(&s->turn);
    pthread_mutex_unlock(&s->mu);
}

/* ---- job views ------------------------------------------------------------- */

/* json_string of s, with bytes that are not valid UTF-8 replaced by '?'
 * (messages may quote input). */
/* A time member: the integer, or null when v < 0. */
static json_t *jtime(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

/* The slot of the plan that holds 'now', or -1. */
static int slot_at(const plan_doc *d, int64_t now)
{
    for (int i = 0; i < d->nslots; i++)
        if (d->slots[i].start <= now && now < d->slots[i].end)
            return i;
    return -1;
}

/* 1 for the states of a job not yet ended. */
static int live_state(const char *st)
{
    return strcmp(st, "queued") == 0 || strcmp(st, "running") == 0;
}

/* The state job j is shown in: the store's, or, in a service that only
 * plans (no loop runs anything), what the plan says happens now: a
 * queued job holding GPUs in the plan now is "planned-running", one the
 * plan has ended by now "planned-done", one not ended past its deadline
 * "planned-late" (the store keeps "planned-done" once the planning
 * state has run past its end). */
static const char *shown_state(const svc *s, const store_job *j,
                               const plan_doc_job *pj,
                               const plan_doc_alloc *al, const json_t *dl,
                               int64_t now)
{
    if (s->notify || strcmp(j->state, "queued") != 0)
        return j->state;
    if (pj && pj->planned_end >= 0 && pj->planned_end <= now)
        return "planned-done";
    if (json_is_integer(dl) && json_integer_value(dl) < now)
        return "planned-late";
    if (al)
        return "planned-running";
    return j->state;
}

/* When the plan ended job 'id' (its "planned_done" event in store db),
 * or -1. */
static int64_t planned_done_at(store *db, const char *id)
{
    store_event *ev = NULL;
    int nev = 0;
    ef_err e = {0};
    int64_t end = -1;
    if (store_events(db, id, &ev, &nev, &e) != EF_OK)
        return -1;
    for (int i = 0; i < nev; i++)
        if (strcmp(ev[i].kind, "planned_done") == 0) {
            json_t *d = json_loads(ev[i].detail, 0, NULL);
            const json_t *x = json_object_get(d, "end");
            if (json_is_integer(x))
                end = json_integer_value(x);
            json_decref(d);
        }
    store_events_free(ev, nev);
    return end;
}

/* Job j's view (svc.h's JOB, a new reference): what it asked for from
 * its body, its answer from plan vw while the plan holds it live (else
 * from its first answer), its GPUs now; with its history (read from
 * store db) when 'history'. NULL on a store error (e filled). */
static json_t *job_view(svc *s, const view *vw, store *db,
                        const store_job *j, int64_t now, int history,
                        ef_err *e)
{
    json_t *body = json_loads(j->body, 0, NULL);
    json_t *ans = json_loads(j->answer, 0, NULL);
    const plan_doc_job *pj = live_state(j->state) ? view_find(vw, j->id)
                                                  : NULL;
    json_t *v = json_object();
    json_object_set_new(v, "at_risk", json_boolean(
        (pj && pj->decision == PLAN_ADMITTED && pj->reason) ||
        (j->risk && live_state(j->state))));
    json_object_set_new(v, "risk", j->risk && live_state(j->state)
                                       ? jstr(j->risk) : json_null());
    static const char *const from_body[] = {"batch_size", "batch_sizes",
                                            "iterations", "model",
                                            "samples", "submit_time"};
    for (size_t k = 0; k < sizeof from_body / sizeof *from_body; k++) {
        json_t *x = json_object_get(body, from_body[k]);
        if (x)
            json_object_set(v, from_body[k], x);
    }
    json_t *dl = json_object_get(body, "deadline");
    json_object_set(v, "deadline", dl ? dl : json_null());
    if (pj) {
        json_object_set_new(v, "decision", json_string(plan_decision_name(
                                               (plan_decision)pj->decision)));
        json_object_set_new(v, "earliest_feasible_deadline",
                            jtime(pj->earliest_feasible_deadline));
        json_object_set_new(v, "planned_end", jtime(pj->planned_end));
        json_object_set_new(v, "reason", pj->reason
                                             ? json_string(pj->reason)
                                             : json_null());
    } else {
        json_object_set_new(v, "decision", json_string(j->decision));
        static const char *const from_ans[] = {
            "earliest_feasible_deadline", "planned_end", "reason"};
        for (size_t k = 0; k < sizeof from_ans / sizeof *from_ans; k++) {
            json_t *x = json_object_get(ans, from_ans[k]);
            json_object_set(v, from_ans[k], x ? x : json_null());
        }
        /* ended by the plan: when, as its event says */
        int64_t end = strcmp(j->state, "planned-done") == 0
                          ? planned_done_at(db, j->id) : -1;
        if (end >= 0)
            json_object_set_new(v, "planned_end", json_integer(end));
    }
    /* the GPUs it holds now, as the plan has it */
    const plan_doc *pd = &vw->doc;
    int si = pj ? slot_at(pd, now) : -1;
    const plan_doc_alloc *al = NULL;
    if (si >= 0)
        for (int a = 0; a < pd->slots[si].nalloc; a++)
            if (strcmp(pd->slots[si].a[a].job, j->id) == 0)
                al = &pd->slots[si].a[a];
    /* ended by the plan within this slot: its GPUs are idle now */
    if (!s->notify && pj && pj->planned_end >= 0 && pj->planned_end <= now)
        al = NULL;
    json_object_set_new(v, "gpus", json_integer(al ? al->gpus : 0));
    json_t *pl = json_array();
    if (al)
        for (int k = 0; k < al->place.n;) {
            int node = al->place.node[k];
            json_t *g = json_array();
            while (k < al->place.n && al->place.node[k] == node)
                json_array_append_new(g, json_integer(al->place.gpu[k++]));
            json_t *o = json_object();
            json_object_set_new(o, "gpus", g);
            json_object_set_new(o, "node", json_integer(
                                               pd->nnode_map > 0
                                                   ? (int)pd->node_map[node]
                                                   : node));
            json_array_append_new(pl, o);
        }
    json_object_set_new(v, "placement", pl);
    json_object_set_new(v, "id", json_string(j->id));
    json_object_set_new(v, "iterations_done", json_integer(j->progress));
    json_object_set_new(v, "owner", json_string(j->owner));
    json_object_set_new(v, "state", json_string(shown_state(s, j, pj, al,
                                                            dl, now)));
    json_object_set_new(v, "submitted", json_integer(j->submitted));
    json_decref(body);
    json_decref(ans);
    if (history) {
        store_event *ev = NULL;
        int nev = 0;
        if (store_events(db, j->id, &ev, &nev, e) != EF_OK) {
            json_decref(v);
            return NULL;
        }
        json_t *h = json_array();
        for (int i = 0; i < nev; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "at", json_integer(ev[i].at));
            json_t *d = json_loads(ev[i].detail, 0, NULL);
            json_object_set_new(o, "detail", d ? d : json_object());
            json_object_set_new(o, "kind", json_string(ev[i].kind));
            json_array_append_new(h, o);
        }
        json_object_set_new(v, "history", h);
        store_events_free(ev, nev);
        /* the loop's attempts: where each ran, how it ended */
        store_attempt *at = NULL;
        int nat = 0;
        if (store_attempts_list(db, j->id, 0, &at, &nat, e) != EF_OK) {
            json_decref(v);
            return NULL;
        }
        json_t *aa = json_array();
        for (int i = 0; i < nat; i++) {
            static const char *const an[] = {"intended", "running",
                                             "stopping", "ended"};
            json_t *o = json_object();
            json_t *pv = json_loads(at[i].place, 0, NULL);
            json_object_set_new(o, "attempt", json_integer(at[i].attempt));
            json_object_set_new(o, "ended", jtime(at[i].ended));
            json_object_set_new(o, "placement",
                                json_incref(json_object_get(pv, "placement")
                                                ? json_object_get(pv,
                                                                  "placement")
                                                : json_array()));
            json_decref(pv);
            json_object_set_new(o, "result", at[i].result
                                                 ? jstr(at[i].result)
                                                 : json_null());
            json_object_set_new(o, "started", json_integer(at[i].started));
            json_object_set_new(o, "state", json_string(an[at[i].state]));
            json_object_set_new(o, "why", jstr(at[i].why));
            json_array_append_new(aa, o);
        }
        store_attempts_free(at, nat);
        json_object_set_new(v, "attempts", aa);
    }
    return v;
}

/* ---- submit ---------------------------------------------------------------- */


/* A 400 from an error the planner's readers gave about the job, which
 * they name "--job" and "jobs[0]": the request body and the JSON path. */
static void reply_job_error(svc_reply *r, const ef_err *e)
{
    const char *m = e->msg;
    char path[256] = "", msg[EF_ERR_LEN + 32];
    /* "--job: jobs[0]..." (the job alone) or "LABEL: jobs[N]..." (the job
     * in the queue, the last one) */
    const char *jp = strstr(m, ": jobs[");
    if (jp && jp[7] >= '0' && jp[7] <= '9' && strchr(jp, ']')) {
        const char *p = strchr(jp, ']') + 1;
        if (*p == '.' || *p == '[') {
            p += *p == '.';
            size_t n = strcspn(p, ":");
            snprintf(path, sizeof path, "%.*s", (int)n, p);
        } else {
            p += strspn(p, ": ");
        }
        snprintf(msg, sizeof msg, "request body: %s", p);
        /* "unknown key \"x\"": the path is the key */
        const char *uk = strstr(p, "unknown key \"");
        if (!path[0] && uk) {
            uk += 13;
            size_t n = strcspn(uk, "\"");
            snprintf(path, sizeof path, "%.*s", (int)n, uk);
        }
    } else if (strncmp(m, "--job", 5) == 0) {
        snprintf(msg, sizeof msg, "request body%s", m + 5);
    } else {
        snprintf(msg, sizeof msg, "request body: %s", m);
    }
    svc_reply_error(r, 400, path[0] ? path : NULL, msg);
}

/* The admission answer of job j, just decided (a new reference):
 * planned_end is the end its reservation guarantees (admitted; the
 * surplus may bring it earlier: the plan says by how much), null for a
 * best-effort job (promised nothing). */
static json_t *answer_of(const plan_job *j, const char *id, int64_t version,
                         int64_t submit)
{
    json_t *a = json_object();
    int rej = j->decision != PLAN_ADMITTED &&
              j->decision != PLAN_BEST_EFFORT;
    json_object_set_new(a, "broken", json_null());
    json_object_set_new(a, "decision", json_string(plan_decision_name(
                                           rej ? PLAN_REJECTED
                                               : j->decision)));
    json_object_set_new(a, "earliest_feasible_deadline",
                        jtime(rej ? j->earliest_feasible_deadline : -1));
    json_object_set_new(a, "id", jstr(id));
    json_object_set_new(a, "planned_end",
                        jtime(j->decision == PLAN_ADMITTED && j->r.n > 0
                                  ? j->r.real_end : -1));
    json_object_set_new(a, "plan_version", json_integer(version));
    json_object_set_new(a, "reason",
                        rej ? jstr(j->reason[0] ? j->reason
                                                : "its deadline cannot be "
                                                  "guaranteed")
                            : json_null());
    json_object_set_new(a, "submit_time", json_integer(submit));
    return a;
}

/* Check the request body: one JSON object with a valid "id" and none of
 * the members only the server sets. Returns the parsed value (a new
 * reference) and its id, or NULL with *r filled (400). */
static json_t *check_request(const char *body, size_t len, const char **id,
                             svc_reply *r)
{
    ef_err e = {0};
    json_t *v = jsonin_parse("request body", body, len, &e);
    if (!v) {
        svc_reply_error(r, 400, NULL, e.msg);
        return NULL;
    }
    if (!json_is_object(v)) {
        char m[128];
        snprintf(m, sizeof m, "request body: expected a job object, got %s",
                 jsonin_type(v));
        svc_reply_error(r, 400, NULL, m);
        json_decref(v);
        return NULL;
    }
    for (size_t k = 0; k < sizeof server_keys / sizeof *server_keys; k++)
        if (json_object_get(v, server_keys[k][0])) {
            char m[256];
            snprintf(m, sizeof m, "request body: %s: not accepted from a "
                     "client (%s)", server_keys[k][0], server_keys[k][1]);
            svc_reply_error(r, 400, server_keys[k][0], m);
            json_decref(v);
            return NULL;
        }
    const json_t *jid = json_object_get(v, "id");
    if (!json_is_string(jid)) {
        svc_reply_error(r, 400, "id", jid ? "request body: id: expected a "
                        "string" : "request body: id: missing (every job "
                        "needs an id)");
        json_decref(v);
        return NULL;
    }
    const char *why = job_id_check(json_string_value(jid),
                                   json_string_length(jid));
    if (why) {
        char m[256];
        snprintf(m, sizeof m, "request body: id: %s (expected "
                 JOB_ID_RULE ")", why);
        svc_reply_error(r, 400, "id", m);
        json_decref(v);
        return NULL;
    }
    *id = json_string_value(jid);
    return v;
}

/* Commit a decided submission: the job row, its event and the state's
 * version. */
static int commit_submit(svc *s, store_job *j, int64_t version, int64_t now,
                         int replace, ef_err *e)
{
    if (store_begin(s->st, e) != EF_OK)
        return EF_ERR;
    int rc;
    if (replace) {
        int got = store_job_replace(s->st, j, e);
        rc = got > 0 ? EF_OK
             : got == 0 ? ef_fail(e, EF_E_INTERNAL, "job \"%s\" vanished "
                                  "from the store", j->id)
                        : EF_ERR;
    } else {
        rc = store_job_insert(s->st, j, e);
    }
    if (rc == EF_OK)
        rc = store_event_add(s->st, j->id, now, "submitted", j->answer, e);
    if (rc == EF_OK && version != s->version)
        rc = store_meta_set(s->st, "version", version, e);
    if (rc == EF_OK)
        rc = store_commit(s->st, e);
    if (rc != EF_OK) {
        store_rollback(s->st);
        return EF_ERR;
    }
    return EF_OK;
}

/* The job of request 'req' submitted at 'now', resolved, into *jb and
 * its stored body (heap) into *body; 0, or 400 with *r filled. */
static int request_job(svc *s, json_t *req, int64_t now, job *jb,
                       char **body, svc_reply *r)
{
    ef_err e = {0};
    json_t *v = json_deep_copy(req);
    json_object_set_new(v, "submit_time", json_integer(now));
    json_t *w = json_object();
    json_t *arr = json_array();
    json_array_append_new(arr, v);
    json_object_set_new(w, "jobs", arr);
    job_queue one;
    int rc = queue_from_json(&one, "--job", w, &e);
    json_decref(w);
    if (rc == EF_OK)
        rc = queue_resolve(&one, &s->cs, &e);
    if (rc != EF_OK) {
        queue_free(&one);
        reply_job_error(r, &e);
        return 400;
    }
    json_t *jb2 = job_to_json(&one.jobs[0]);
    *body = json_dumps(jb2, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(jb2);
    *jb = one.jobs[0];
    memset(&one.jobs[0], 0, sizeof one.jobs[0]);
    queue_free(&one);
    return 0;
}


/* One more run measured x in l's speed, one still running. */
static void fold_running(store_learnt *l, double x)
{
    l->speed = store_smooth(l->speed, l->speed_runs, x);
    l->speed_runs++;
    l->speed_live++;
}

/* What the loop measured of 'model' for 'owner' (may be NULL): the
 * store's ended runs (store_learned's rows) with the attempts still
 * running folded in as runs measured so far, in job id order (what the
 * store will say once they end as measured now), the owner's own where
 * it has enough (store_learnt_pick); none under svc_config.learn_off. */
static int learned_of(svc *s, const char *model, const char *owner,
                      store_learnt *lr, ef_err *e)
{
    if (s->learn_off) {
        *lr = STORE_LEARNT_NONE;
        return EF_OK;
    }
    store_learnt all, own;
    if (store_learned_rows(s->st, model, owner, &all, &own, e) != EF_OK)
        return EF_ERR;
    for (int k = 0; k < s->nrsp; k++) {
        const struct run_speed *r = &s->rsp[k];
        if (strcmp(r->model, model) != 0)
            continue;
        fold_running(&all, r->speed);
        if (owner && owner[0] && strcmp(r->owner, owner) == 0)
            fold_running(&own, r->speed);
    }
    store_learnt_pick(&all, &own, lr);
    return EF_OK;
}

void svc_note_speed(svc *s, const char *id, const char *model,
                    const char *owner, double speed)
{
    int k = 0;
    while (k < s->nrsp && strcmp(s->rsp[k].id, id) < 0)
        k++;
    int have = k < s->nrsp && strcmp(s->rsp[k].id, id) == 0;
    int keep = model && speed > 0 && speed <= 1e6;
    if (have) {
        free(s->rsp[k].id);
        free(s->rsp[k].model);
        free(s->rsp[k].owner);
        if (!keep) {
            memmove(&s->rsp[k], &s->rsp[k + 1],
                    (size_t)(s->nrsp - k - 1) * sizeof *s->rsp);
            s->nrsp--;
            return;
        }
    } else {
        if (!keep)
            return;
        s->rsp = ef_realloc(s->rsp, (size_t)(s->nrsp + 1) * sizeof *s->rsp);
        memmove(&s->rsp[k + 1], &s->rsp[k],
                (size_t)(s->nrsp - k) * sizeof *s->rsp);
        s->nrsp++;
    }
    s->rsp[k] = (struct run_speed){ef_strdup(id), ef_strdup(model),
                                   ef_strdup(owner ? owner : ""), speed};
}

/* A new job jb planned at what the loop measured of its model (lr):
 * its work left scaled up by its speed below the curve's (iterations; an
 * elastic-batch job's samples too), and the note its answer carries. */
static void learned_job(job *jb, const store_learnt *lr, char *note,
                        size_t len)
{
    if (lr->speed_runs == 0 || !(lr->speed < 1.0) || !(lr->speed > 0))
        return;
    double left = (double)(jb->iterations - jb->iterations_done);
    double scaled = ceil(left / lr->speed);
    if (scaled > 1e15)
        scaled = 1e15;
    jb->iterations = jb->iterations_done + (int64_t)scaled;
    if (jb->samples > 0)
        jb->samples = jb->samples_done +
                      (int64_t)ceil((double)(jb->samples - jb->samples_done) /
                                    lr->speed);
    char running[48] = "";
    if (lr->speed_live > 0)
        snprintf(running, sizeof running, " (%d of them still running)",
                 lr->speed_live);
    snprintf(note, len, "planned at %.0f%% of the curve: measured on %d "
             "earlier run%s of %s%s%s", lr->speed * 100, lr->speed_runs,
             lr->speed_runs == 1 ? "" : "s", jb->model,
             lr->speed_own ? " by this user" : "", running);
}

void svc_submit(svc *s, const store_ident *who, const char *body,
                size_t len, int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    const char *id = NULL;
    json_t *req = check_request(body, len, &id, r);
    job jb;
    char *body_text = NULL;
    if (req && request_job(s, req, now, &jb, &body_text, r) != 0) {
        json_decref(req);
        req = NULL;
    }
    if (!req) {
        pthread_mutex_lock(&s->smu);
        s->sub_errors++;
        pthread_mutex_unlock(&s->smu);
        return;
    }
    char *canon = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
    int err = 0, retry = 0, limited = 0, dec = -1;
    ef_err e = {0};
    svc_lock(s);
    store_job old;
    memset(&old, 0, sizeof old);
    int have = store_job_get(s->st, id, &old, &e);
    if (have < 0) {
        reply_internal(r, &e);
        goto out;
    }
    if (have && strcmp(old.owner, who->name) != 0) {
        char m[400];
        snprintf(m, sizeof m, "job id \"%s\" is taken by another user "
                 "(choose another id)", id);
        svc_reply_error(r, 409, "id", m);
        err = 1;
        goto out;
    }
    if (have && strcmp(old.request, canon) == 0) {
        /* a retry: the first answer, unchanged */
        ef_buf b = {0};
        ef_buf_put(&b, old.answer);
        ef_buf_put(&b, "\n");
        reply_take(r, 200, b.s, "application/json");
        retry = 1;
        goto out;
    }
    if (have && strcmp(old.state, "rejected") != 0) {
        char m[400];
        snprintf(m, sizeof m, "job \"%s\" was already submitted with "
                 "another body (state %s): a job id is submitted once "
                 "(cancel it, or use another id)", id, old.state);
        svc_reply_error(r, 409, "id", m);
        err = 1;
        goto out;
    }
    /* the user's limits (limits.h): 429, nothing stored */
    if (lim_check(s->lim, s->st, who, now, s->scale, s->L.p.opts.slot, r)) {
        limited = 1;
        goto out;
    }
    /* decided at its release against the state there */
    int64_t rel = ef_align_up(s->L.p.now, now, s->L.p.opts.slot);
    if (advance(s, rel, now, &e) != EF_OK) {
        reply_internal(r, &e);
        err = 1;
        goto out;
    }
    /* what the loop measured of this model (the user's own runs first):
     * planned at that speed and charged that restart cost */
    store_learnt lr;
    if (learned_of(s, jb.model, who->name, &lr, &e) != EF_OK) {
        reply_internal(r, &e);
        err = 1;
        goto out;
    }
    char note[300] = "";
    learned_job(&jb, &lr, note, sizeof note);
    int i = live_add(&s->L, &jb, 0);
    if (lr.restart_runs > 0)
        plan_set_restart_scale(&s->L.p, i, lr.restart);
    live_point(&s->L, &i, 1);
    const plan_job *pj = &s->L.p.jobs[i];
    int accepted = pj->decision == PLAN_ADMITTED ||
                   pj->decision == PLAN_BEST_EFFORT;
    int64_t version = accepted ? s->version + 1 : s->version;
    json_t *ans = answer_of(pj, id, version, now);
    if (note[0])
        json_object_set_new(ans, "speed_note", json_string(note));
    if (lr.speed_runs > 0)
        json_object_set_new(ans, "planned_speed", json_real(lr.speed));
    char *ans_text = json_dumps(ans, JSON_COMPACT | JSON_SORT_KEYS);
    store_job j = {
        .id = (char *)id, .owner = (char *)who->name, .body = body_text,
        .request = canon,
        .decision = (char *)plan_decision_name(accepted ? pj->decision
                                                        : PLAN_REJECTED),
        .answer = ans_text, .state = accepted ? "queued" : "rejected",
        .progress = 0, .submitted = now, .updated = now};
    dec = pj->decision == PLAN_ADMITTED ? 0 : accepted ? 1 : 2;
    if (commit_submit(s, &j, version, now, have, &e) != EF_OK) {
        /* nothing changed: the job leaves the state again */
        if (accepted)
            live_remove(&s->L, i);
        reply_internal(r, &e);
        err = 1;
        dec = -1;
    } else {
        s->version = version;
        s->subs += accepted;
        if (accepted && s->apart) {
            if (s->nwin == s->capwin) {
                s->capwin = s->capwin ? 2 * s->capwin : 16;
                s->win = ef_realloc(s->win,
                                    (size_t)s->capwin * sizeof *s->win);
            }
            s->win[s->nwin++] = ef_strdup(id);
        }
        lim_note(s->lim, who->name, now);
        svc_reply_json(r, 201, json_incref(ans));
        if (accepted && s->notify)
            s->notify(s->notify_arg, "a submission");
    }
    json_decref(ans);
    free(ans_text);
out:
    if (dec >= 0)
        stats_update(s);
    svc_unlock(s);
    if (jb.id)
        job_free(&jb);
    pthread_mutex_lock(&s->smu);
    s->sub_errors += err;
    s->sub_retries += retry;
    s->sub_limited += limited;
    if (dec >= 0)
        s->sub_by_dec[dec]++;
    pthread_mutex_unlock(&s->smu);
    if (have > 0)
        store_job_free(&old);
    free(canon);
    free(body_text);
    json_decref(req);
}

/* ---- list and show --------------------------------------------------------- */

static int known_state(const char *st)
{
    for (int i = 0; i < NSTATES; i++)
        if (strcmp(states[i], st) == 0)
            return 1;
    return 0;
}

void svc_list(svc *s, const store_ident *who, int all, const char *state,
              int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    if (all && !who->op) {
        svc_reply_error(r, 403, NULL, "all=1 lists every user's jobs: "
                        "operators only");
        return;
    }
    if (state && !known_state(state)) {
        char m[300];
        snprintf(m, sizeof m, "state: \"%.100s\" (expected queued, running, "
                 "done, failed, cancelled or rejected)", state);
        svc_reply_error(r, 400, "state", m);
        return;
    }
    ef_err e = {0};
    store_job *rows = NULL;
    int n = 0;
    /* the rows, then a plan at least as new (never the planning lock) */
    pthread_mutex_lock(&s->rmu);
    int rc = store_jobs_list(s->rd, all ? NULL : who->name, state, &rows, &n,
                             &e);
    pthread_mutex_unlock(&s->rmu);
    view *pv = rc == EF_OK ? view_get(s, now, &e) : NULL;
    if (!pv) {
        store_jobs_free(rows, n);
        reply_internal(r, &e);
        return;
    }
    json_t *arr = json_array();
    pthread_mutex_lock(&s->rmu);
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, job_view(s, pv, s->rd, &rows[i], now, 0,
                                            &e));
    pthread_mutex_unlock(&s->rmu);
    view_drop(s, pv);
    store_jobs_free(rows, n);
    json_t *v = json_object();
    json_object_set_new(v, "jobs", arr);
    svc_reply_json(r, 200, v);
}

/* 404 for job 'id': with retention, it may have ended and been pruned
 * (the store cannot tell a pruned id from one never submitted). */
static void not_found(svc *s, store *db, const char *id, svc_reply *r)
{
    char m[600], keep[64];
    int64_t pruned = 0;
    ef_err e = {0};
    if (s->keep > 0 && store_meta_get(db, "pruned_jobs", &pruned, &e) > 0 &&
        pruned > 0) {
        ret_keep_text(s->keep, keep, sizeof keep);
        snprintf(m, sizeof m, "no job \"%.300s\": unknown, or it ended more "
                 "than %s ago and was pruned (efplan serve --keep %s)", id,
                 keep, keep);
    } else {
        snprintf(m, sizeof m, "no job \"%.300s\"", id);
    }
    svc_reply_error(r, 404, NULL, m);
}

/* The job 'id' for 'who' read from store db (the reader's, under
 * rmu; or the writer's, under the planning lock): 1 (*j filled), or 0
 * with *r the error (404, 403, 500). */
static int own_job(svc *s, store *db, const store_ident *who,
                   const char *id,
                   store_job *j, svc_reply *r)
{
    ef_err e = {0};
    int have = store_job_get(db, id, j, &e);
    if (have < 0) {
        reply_internal(r, &e);
        return 0;
    }
    char m[400];
    if (!have) {
        not_found(s, db, id, r);
        return 0;
    }
    if (!who->op && strcmp(j->owner, who->name) != 0) {
        snprintf(m, sizeof m, "job \"%.300s\" is not yours (only its owner "
                 "or an operator may see or change it)", id);
        svc_reply_error(r, 403, NULL, m);
        store_job_free(j);
        return 0;
    }
    return 1;
}

void svc_show(svc *s, const store_ident *who, const char *id, int64_t now,
              svc_reply *r)
{
    memset(r, 0, sizeof *r);
    store_job j;
    ef_err e = {0};
    pthread_mutex_lock(&s->rmu);
    int have = own_job(s, s->rd, who, id, &j, r);
    pthread_mutex_unlock(&s->rmu);
    if (!have)
        return;
    view *pv = view_get(s, now, &e);
    if (!pv) {
        store_job_free(&j);
        reply_internal(r, &e);
        return;
    }
    pthread_mutex_lock(&s->rmu);
    json_t *v = job_view(s, pv, s->rd, &j, now, 1, &e);
    pthread_mutex_unlock(&s->rmu);
    view_drop(s, pv);
    store_job_free(&j);
    if (!v)
        reply_internal(r, &e);
    else
        svc_reply_json(r, 200, v);
}

void svc_explain(svc *s, const store_ident *who, const char *id,
                 svc_reply *r)
{
    memset(r, 0, sizeof *r);
    store_job j;
    ef_err e = {0};
    pthread_mutex_lock(&s->rmu);
    int have = own_job(s, s->rd, who, id, &j, r);
    pthread_mutex_unlock(&s->rmu);
    if (!have)
        return;
    /* explained from the current plan (the curves never change while the
     * service runs) */
    view *pv = view_get(s, svc_now(s), &e);
    if (!pv) {
        store_job_free(&j);
        reply_internal(r, &e);
        return;
    }
    const plan_doc *d = &pv->doc;
    xpl x;
    int rc = EF_OK;
    if (view_find(pv, id)) {
        rc = xpl_build(&x, d, "the service's plan", id, &s->cs, NULL, &e);
    } else if (rc == EF_OK && strcmp(j.decision, "rejected") == 0) {
        /* rejected jobs stay out of the plan: the answer says why */
        json_t *a = json_loads(j.answer, 0, NULL);
        const json_t *why = json_object_get(a, "reason");
        const json_t *ef = json_object_get(a, "earliest_feasible_deadline");
        rc = xpl_build_rejected(&x, d, "the service's plan", j.body,
                                json_is_string(why) ? json_string_value(why)
                                                    : NULL,
                                json_is_integer(ef) ? json_integer_value(ef)
                                                    : -1, &s->cs, &e);
        json_decref(a);
    } else if (rc == EF_OK) {
        rc = ef_fail(&e, EF_E_INPUT, "job \"%.300s\" is not in the current "
                     "plan (it is %s): nothing to explain", id, j.state);
    }
    store_job_free(&j);
    if (rc != EF_OK) {
        view_drop(s, pv);
        if (e.kind == EF_E_INPUT)
            svc_reply_error(r, 404, NULL, e.msg);
        else
            reply_internal(r, &e);
        return;
    }
    size_t n;
    char *body = xpl_json(&x, &n);
    xpl_free(&x);
    view_drop(s, pv);
    reply_take(r, 200, body, "application/json");
}

/* ---- re-planning the queue -------------------------------------------------- */

/* ---- cancel ------------------------------------------------------------------ */

void svc_cancel(svc *s, const store_ident *who, const char *id, int64_t now,
                svc_reply *r)
{
    memset(r, 0, sizeof *r);
    store_job j;
    ef_err e = {0};
    svc_lock(s);
    if (!own_job(s, s->st, who, id, &j, r)) {
        svc_unlock(s);
        return;
    }
    if (!live_state(j.state)) {
        char m[400];
        snprintf(m, sizeof m, "job \"%.300s\" is %s: only a queued or "
                 "running job can be cancelled", id, j.state);
        svc_reply_error(r, 409, NULL, m);
        goto out;
    }
    int li = live_find(&s->L, id);
    int freed = li >= 0;
    int64_t version = freed ? s->version + 1 : s->version;
    json_t *d = json_object();
    json_object_set_new(d, "by", json_string(who->name));
    json_object_set_new(d, "reservation_freed", json_boolean(freed));
    char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    int rc = store_begin(s->st, &e);
    if (rc == EF_OK) {
        int got = store_job_update(s->st, id, "cancelled", j.progress, now,
                                   &e);
        rc = got < 0 ? EF_ERR : EF_OK;
    }
    if (rc == EF_OK)
        rc = store_event_add(s->st, id, now, "cancelled", dt, &e);
    if (rc == EF_OK && freed)
        rc = store_meta_set(s->st, "version", version, &e);
    if (rc == EF_OK)
        rc = store_commit(s->st, &e);
    free(dt);
    if (rc != EF_OK) {
        store_rollback(s->st);
        reply_internal(r, &e);
        goto out;
    }
    if (freed) {
        live_remove(&s->L, li);
        s->version = version;
        stats_update(s);
    }
    if (s->notify)
        s->notify(s->notify_arg, "a cancel");
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(id));
    json_object_set_new(v, "plan_version", json_integer(s->version));
    json_object_set_new(v, "reservation_freed", json_boolean(freed));
    json_object_set_new(v, "state", json_string("cancelled"));
    svc_reply_json(r, 200, v);
out:
    svc_unlock(s);
    store_job_free(&j);
}

/* ---- re-plan --------------------------------------------------------------- */

/* Write the plan text as a dated snapshot into s->snapdir: its path into
 * path[cap]. */
static int write_snapshot(svc *s, const char *text, size_t len, int64_t now,
                          int64_t version, char *path, size_t cap, ef_err *e)
{
    if (mkdir(s->snapdir, 0700) != 0 && errno != EEXIST)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot create: %s", s->snapdir,
                       strerror(errno));
    time_t t = (time_t)now;
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(path, cap, "%s/plan-%s-v%" PRId64 ".json", s->snapdir, stamp,
             version);
    return ef_write_file_atomic(path, text, len, e);
}

static int reality_replan(svc *s, const svc_obs *obs, int nobs, int64_t now,
                          const char *why, int apart, placement *want,
                          int *need, svc_loop_res *res, ef_err *e);

void svc_replan(svc *s, const store_ident *who, int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    if (who && !who->op) {
        svc_reply_error(r, 403, NULL, "re-planning the queue is for "
                        "operators");
        return;
    }
    ef_err e = {0};
    svc_lock(s);
    if (s->nobs >= 0) {
        /* the loop runs: re-plan from what it last saw */
        svc_loop_res lr;
        char snap[4096];
        int rc = reality_replan(s, s->obs, s->nobs, now,
                                who ? "replan" : "daily replan", 0, NULL,
                                NULL, &lr, &e);
        if (rc == EF_OK)
            rc = write_snapshot(s, s->pv->text, s->pv->len, now,
                                s->version, snap, sizeof snap, &e);
        json_t *d = json_object();
        json_object_set_new(d, "by", json_string(who ? who->name : "daily"));
        json_object_set_new(d, "changed", json_true());
        json_object_set_new(d, "plan_version", json_integer(s->version));
        char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(d);
        if (rc == EF_OK)
            rc = store_event_add(s->st, NULL, now, "replanned", dt, &e);
        free(dt);
        if (rc != EF_OK) {
            svc_unlock(s);
            reply_internal(r, &e);
            return;
        }
        if (s->notify)
            s->notify(s->notify_arg, SVC_WHY_OPERATOR);
        json_t *v = json_object();
        json_object_set_new(v, "admitted",
                            json_integer(s->pv->doc.summary.admitted));
        json_object_set_new(v, "at_risk", json_integer(lr.at_risk));
        json_object_set_new(v, "changed", json_true());
        json_object_set_new(v, "plan_version", json_integer(s->version));
        json_object_set_new(v, "reason", json_null());
        json_object_set_new(v, "snapshot", jstr(snap));
        svc_unlock(s);
        svc_reply_json(r, 200, v);
        return;
    }
    /* no loop: the full deadline-order re-plan of the state, written as
     * a dated snapshot; the state and its decisions stay as they are */
    int64_t v0 = s->pv->version;
    int rc = snapshot(s, now, &e);
    char snap[4096];
    int changed = s->pv->version != v0;
    if (rc == EF_OK)
        rc = write_snapshot(s, s->pv->text, s->pv->len, now, s->version,
                            snap, sizeof snap, &e);
    json_t *d = json_object();
    json_object_set_new(d, "by", json_string(who ? who->name : "daily"));
    json_object_set_new(d, "changed", json_boolean(changed));
    json_object_set_new(d, "plan_version", json_integer(s->version));
    char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    if (rc == EF_OK)
        rc = store_event_add(s->st, NULL, now, "replanned", dt, &e);
    free(dt);
    if (rc != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    json_t *v = json_object();
    json_object_set_new(v, "admitted",
                        json_integer(s->pv->doc.summary.admitted));
    json_object_set_new(v, "changed", json_boolean(changed));
    json_object_set_new(v, "plan_version", json_integer(s->version));
    json_object_set_new(v, "reason", json_null());
    json_object_set_new(v, "snapshot", jstr(snap));
    svc_unlock(s);
    svc_reply_json(r, 200, v);
}

/* Move the store to cluster s->c (svc.h: svc_moved): the plan of the
 * state at its point on the cluster it was planned on, then the re-plan
 * from reality on s->c with nothing observed, every admitted job kept
 * promised; at risk named in s->moved and a "cluster_moved" event. */
static int move_cluster(svc *s, int64_t now, ef_err *e)
{
    svc_move_res *m = &s->moved;
    memset(m, 0, sizeof *m);
    m->from_nodes = s->pv->doc.cluster.nodes;
    m->from_gpus = s->pv->doc.cluster.gpus_per_node;
    m->to_nodes = s->c.nodes;
    m->to_gpus = s->c.gpus_per_node;
    /* the state's jobs at its point, as a plan of the old cluster */
    s->version++;
    if (snapshot(s, now, e) != EF_OK)
        return EF_ERR;
    for (int i = 0; i < s->pv->doc.njobs; i++) {
        plan_decision d = s->pv->doc.jobs[i].decision;
        m->kept += d == PLAN_ADMITTED || d == PLAN_BEST_EFFORT;
        m->admitted += d == PLAN_ADMITTED;
    }
    svc_obs none;
    memset(&none, 0, sizeof none);
    svc_loop_res lr;
    if (reality_replan(s, &none, 0, now, "cluster moved", 0, NULL, NULL, &lr,
                       e) != EF_OK)
        return EF_ERR;
    m->version = lr.version;
    ef_buf ids = {0};
    for (int i = 0; i < s->pv->doc.njobs; i++) {
        const plan_doc_job *j = &s->pv->doc.jobs[s->pv->byid[i]];
        if (j->decision != PLAN_ADMITTED || !j->at_risk)
            continue;
        m->at_risk++;
        if (ids.n + strlen(j->id) + 8 < sizeof m->at_risk_ids)
            ef_buf_printf(&ids, "%s%s", ids.n ? ", " : "", j->id);
        else if (!strstr(ids.s ? ids.s : "", ", ..."))
            ef_buf_put(&ids, ", ...");
    }
    snprintf(m->at_risk_ids, sizeof m->at_risk_ids, "%s",
             ids.s ? ids.s : "");
    json_t *dv = json_object(), *ar = json_array();
    for (int i = 0; i < s->pv->doc.njobs; i++) {
        const plan_doc_job *j = &s->pv->doc.jobs[s->pv->byid[i]];
        if (j->decision == PLAN_ADMITTED && j->at_risk)
            json_array_append_new(ar, jstr(j->id));
    }
    json_t *from = json_object(), *to = json_object();
    json_object_set_new(from, "nodes", json_integer(m->from_nodes));
    json_object_set_new(from, "gpus_per_node", json_integer(m->from_gpus));
    json_object_set_new(to, "nodes", json_integer(m->to_nodes));
    json_object_set_new(to, "gpus_per_node", json_integer(m->to_gpus));
    json_object_set_new(dv, "from", from);
    json_object_set_new(dv, "to", to);
    json_object_set_new(dv, "cluster", jstr(s->cluster_arg));
    json_object_set_new(dv, "kept", json_integer(m->kept));
    json_object_set_new(dv, "admitted", json_integer(m->admitted));
    json_object_set_new(dv, "at_risk", ar);
    json_object_set_new(dv, "plan_version", json_integer(m->version));
    char *dt = json_dumps(dv, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(dv);
    int rc = store_event_add(s->st, NULL, now, "cluster_moved", dt, e);
    free(dt);
    free(ids.s);
    if (rc == EF_OK)
        m->moved = 1;
    return rc;
}

void svc_moved(const svc *s, svc_move_res *m) { *m = s->moved; }

/* ---- plan, queue, health, metrics ------------------------------------------ */

void svc_plan(svc *s, svc_reply *r, int64_t *version)
{
    memset(r, 0, sizeof *r);
    ef_err e = {0};
    view *v = view_get(s, svc_now(s), &e);
    if (!v) {
        reply_internal(r, &e);
        return;
    }
    char *t = ef_malloc(v->len + 1);
    memcpy(t, v->text, v->len);
    t[v->len] = '\0';
    *version = v->version;
    view_drop(s, v);
    reply_take(r, 200, t, "application/json");
}

void svc_queue(svc *s, const store_ident *who, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    ef_err e = {0};
    store_job *rows = NULL;
    int n = 0;
    job_queue q;
    svc_lock(s);
    /* a user's own: the ids the store gives them */
    if (!who->op && store_jobs_list(s->st, who->name, NULL, &rows, &n,
                                    &e) != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    live_settle(&s->L);
    live_queue(&s->L, &q, NULL);
    svc_unlock(s);
    if (!who->op) {
        qsort(rows, (size_t)n, sizeof *rows, row_cmp);
        int m = 0;
        for (int i = 0; i < q.n; i++) {
            store_job key = {.id = q.jobs[i].id};
            if (bsearch(&key, rows, (size_t)n, sizeof *rows, row_cmp)) {
                job t = q.jobs[m];
                q.jobs[m++] = q.jobs[i];
                q.jobs[i] = t;
            }
        }
        job_queue rest = q;
        rest.jobs = q.jobs + m;
        rest.n = q.n - m;
        for (int i = 0; i < rest.n; i++)
            job_free(&rest.jobs[i]);
        q.n = m;
        store_jobs_free(rows, n);
    }
    char *t = queue_write_json(q.jobs, q.n, NULL);
    queue_free(&q);
    reply_take(r, 200, t, "application/json");
}

void svc_health(svc *s, int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_lock(&s->smu);
    int64_t epoch = s->m_epoch, version = s->m_version;
    int jobs = s->m_jobs;
    pthread_mutex_unlock(&s->smu);
    json_t *v = json_object();
    json_object_set_new(v, "epoch", json_integer(epoch));
    json_object_set_new(v, "jobs", json_integer(jobs));
    json_object_set_new(v, "time", json_integer(now));
    json_object_set_new(v, "version", json_string(EFPLAN_VERSION));
    json_object_set_new(v, "plan_version", json_integer(version));
    json_object_set_new(v, "status", json_string("ok"));
    svc_reply_json(r, 200, v);
}

void svc_observe_submit(svc *s, double seconds)
{
    pthread_mutex_lock(&s->smu);
    hist_add(&s->h_submit, seconds);
    pthread_mutex_unlock(&s->smu);
}

static void count_state(const char *state, int64_t n, void *arg)
{
    int64_t *per = arg;
    for (int i = 0; i < NSTATES; i++)
        if (strcmp(states[i], state) == 0)
            per[i] = n;
}

void svc_metrics(svc *s, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    ef_err e = {0};
    int64_t per[NSTATES] = {0};
    ef_buf b = {0};
    /* the job counts from the store (its own statement; the store
     * serialises its connection), the rest from the figures the planning
     * side copies after each change: the planning lock is never taken */
    if (store_jobs_count(s->st, count_state, per, &e) != EF_OK) {
        reply_internal(r, &e);
        return;
    }
    pthread_mutex_lock(&s->smu);
    static const char *const decs[] = {"admitted", "best_effort", "rejected"};
    ef_buf_put(&b, "# HELP efplan_submissions_total Submissions decided "
               "since the service started, by decision.\n"
               "# TYPE efplan_submissions_total counter\n");
    for (int i = 0; i < 3; i++)
        ef_buf_printf(&b, "efplan_submissions_total{decision=\"%s\"} %" PRId64
                      "\n", decs[i], s->sub_by_dec[i]);
    ef_buf_printf(&b, "# HELP efplan_submission_retries_total Retried "
                  "submissions answered with their first answer.\n"
                  "# TYPE efplan_submission_retries_total counter\n"
                  "efplan_submission_retries_total %" PRId64 "\n"
                  "# HELP efplan_submission_errors_total Submissions "
                  "refused (bad input, conflicts, failures).\n"
                  "# TYPE efplan_submission_errors_total counter\n"
                  "efplan_submission_errors_total %" PRId64 "\n"
                  "# HELP efplan_submissions_limited_total Submissions "
                  "refused by a user's limit (429).\n"
                  "# TYPE efplan_submissions_limited_total counter\n"
                  "efplan_submissions_limited_total %" PRId64 "\n",
                  s->sub_retries, s->sub_errors, s->sub_limited);
    ef_buf_put(&b, "# HELP efplan_jobs Jobs in the store, by state.\n"
               "# TYPE efplan_jobs gauge\n");
    for (int i = 0; i < NSTATES; i++)
        ef_buf_printf(&b, "efplan_jobs{state=\"%s\"} %" PRId64 "\n",
                      states[i], per[i]);
    ef_buf_printf(&b, "# HELP efplan_jobs_planned Jobs in play in the "
                  "planning state (admitted or best-effort, not ended).\n"
                  "# TYPE efplan_jobs_planned gauge\n"
                  "efplan_jobs_planned %d\n"
                  "# HELP efplan_promised_gpu_seconds GPU-seconds the last "
                  "full plan reserves for admitted jobs.\n"
                  "# TYPE efplan_promised_gpu_seconds gauge\n"
                  "efplan_promised_gpu_seconds %.0f\n"
                  "# HELP efplan_plan_version Version of the planning "
                  "state (one per accepted change).\n"
                  "# TYPE efplan_plan_version gauge\n"
                  "efplan_plan_version %" PRId64 "\n",
                  s->m_jobs, s->m_promised_s, s->m_version);
    ef_buf_printf(&b, "# HELP efplan_jobs_at_risk Admitted jobs the plan "
                  "cannot bring in by their deadline any more.\n"
                  "# TYPE efplan_jobs_at_risk gauge\n"
                  "efplan_jobs_at_risk %d\n"
                  "# HELP efplan_loop_replans_total Re-plans from reality "
                  "by the loop since the service started.\n"
                  "# TYPE efplan_loop_replans_total counter\n"
                  "efplan_loop_replans_total %" PRId64 "\n"
                  "# HELP efplan_loop_restarts_total Jobs relaunched after "
                  "a failed attempt.\n"
                  "# TYPE efplan_loop_restarts_total counter\n"
                  "efplan_loop_restarts_total %" PRId64 "\n"
                  "# HELP efplan_loop_failed_total Jobs failed past their "
                  "restart budget.\n"
                  "# TYPE efplan_loop_failed_total counter\n"
                  "efplan_loop_failed_total %" PRId64 "\n"
                  "# HELP efplan_loop_lag_total Re-plans because a job "
                  "fell behind its plan.\n"
                  "# TYPE efplan_loop_lag_total counter\n"
                  "efplan_loop_lag_total %" PRId64 "\n",
                  s->m_at_risk, s->loop_replans, s->loop_restarts,
                  s->loop_failed, s->loop_lag);
    hist_put(&b, "efplan_submit_latency_seconds", "Time to answer a "
             "submission, as the HTTP layer measures it.", &s->h_submit);
    hist_put(&b, "efplan_replan_seconds", "Time of a full deadline-order "
             "re-plan of the planning state (the plan the views and GET "
             "/v1/plan read).", &s->h_replan);
    hist_put(&b, "efplan_point_seconds", "Time of one scheduling point "
             "of the planning state run between arrivals.", &s->h_point);
    pthread_mutex_unlock(&s->smu);
    reply_take(r, 200, b.s, "text/plain; version=0.0.4");
}

/* ---- the closed loop ----------------------------------------------------------- */

void svc_set_notify(svc *s, void (*fn)(void *arg, const char *why),
                    void *arg)
{
    s->notify = fn;
    s->notify_arg = arg;
    s->L.reality = fn != NULL; /* completions come from the loop */
}

void svc_set_apart_hook(svc *s, void (*fn)(void *arg), void *arg)
{
    s->apart_hook = fn;
    s->apart_arg = arg;
}

void svc_set_margin(svc *s, int64_t seconds)
{
    s->margin = seconds > 0 ? seconds : 0;
}

int64_t svc_version(svc *s)
{
    return s->version;
}

int64_t svc_release_at(const svc *s, int64_t now)
{
    return ef_align_up(s->L.p.now, now, s->L.p.opts.slot);
}

const cluster *svc_cluster(const svc *s) { return &s->c; }
const curve_set *svc_curves(const svc *s) { return &s->cs; }
int svc_slot(const svc *s) { return s->slot_s; }
int svc_overhead(const svc *s)
{
    return s->ovh;
}
int svc_holds_still(const svc *s) { return plan_holds_still(&s->L.p.opts); }

/* seq order */
static int seq_cmp(const void *a, const void *b)
{
    int64_t x = ((const store_job *)a)->seq, y = ((const store_job *)b)->seq;
    return x < y ? -1 : x > y;
}

/* The rows of svc_loop_jobs, by seq: the queued and running jobs (the
 * store's state index: the live jobs, never the history), then each of
 * extra[] not among them. */
static int loop_rows(svc *s, const char *const *extra, int nextra,
                     store_job **rows, int *n, ef_err *e)
{
    store_job *rq = NULL, *rr = NULL;
    int nq = 0, nr = 0;
    if (store_jobs_list(s->st, NULL, "queued", &rq, &nq, e) != EF_OK)
        return EF_ERR;
    if (store_jobs_list(s->st, NULL, "running", &rr, &nr, e) != EF_OK) {
        store_jobs_free(rq, nq);
        return EF_ERR;
    }
    int m = nq + nr;
    store_job *all = ef_calloc((size_t)(m + nextra) + 1, sizeof *all);
    if (nq)
        memcpy(all, rq, (size_t)nq * sizeof *all);
    if (nr)
        memcpy(all + nq, rr, (size_t)nr * sizeof *all);
    free(rq);
    free(rr);
    for (int k = 0; k < nextra; k++) {
        int have = 0;
        for (int i = 0; i < m && !have; i++)
            have = strcmp(all[i].id, extra[k]) == 0;
        if (have)
            continue;
        int got = store_job_get(s->st, extra[k], &all[m], e);
        if (got < 0) {
            store_jobs_free(all, m);
            return EF_ERR;
        }
        m += got;
    }
    qsort(all, (size_t)m, sizeof *all, seq_cmp);
    *rows = all;
    *n = m;
    return EF_OK;
}

int svc_loop_jobs(svc *s, const char *const *extra, int nextra,
                  job_queue *q, int **adm, ef_err *e)
{
    memset(q, 0, sizeof *q);
    *adm = NULL;
    store_job *rows = NULL;
    int n = 0;
    if (loop_rows(s, extra, nextra, &rows, &n, e) != EF_OK)
        return EF_ERR;
    json_t *arr = json_array();
    int m = 0;
    int *a = ef_malloc(((size_t)n + 1) * sizeof *a);
    for (int i = 0; i < n; i++) {
        a[m] = strcmp(rows[i].decision, "admitted") == 0;
        /* its progress as the store has it */
        json_t *bj = json_loads(rows[i].body, 0, NULL);
        json_t *it = json_object_get(bj, "iterations");
        if (json_is_integer(it) && rows[i].progress > 0 &&
            !json_object_get(bj, "samples"))
            json_object_set_new(bj, "iterations_done", json_integer(
                rows[i].progress < json_integer_value(it)
                    ? rows[i].progress : json_integer_value(it) - 1));
        json_array_append_new(arr, bj ? bj : json_null());
        m++;
    }
    store_jobs_free(rows, n);
    json_t *qv = json_object();
    json_object_set_new(qv, "jobs", arr);
    int rc = queue_from_json(q, "the service's queue", qv, e);
    json_decref(qv);
    if (rc != EF_OK) {
        free(a);
        queue_free(q);
        return EF_ERR;
    }
    *adm = a;
    return EF_OK;
}

static int cmp_int_asc(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int obs_cmp(const void *k, const void *v)
{
    return strcmp(k, ((const svc_obs *)v)->id);
}

/* obs[] entry of job 'id' (obs sorted by id), or NULL. */
static const svc_obs *obs_find(const svc_obs *obs, int nobs, const char *id)
{
    return nobs > 0 ? bsearch(id, obs, (size_t)nobs, sizeof *obs, obs_cmp)
                    : NULL;
}

/* The usable nodes (not drained, not down): *map (heap, ascending) of
 * *nmap; *nmap == c.nodes when every node is. */
static int usable_nodes(svc *s, long **map, int *nmap, ef_err *e)
{
    store_node *nd = NULL;
    int nn = 0;
    if (store_nodes_list(s->st, &nd, &nn, e) != EF_OK)
        return EF_ERR;
    char *off = ef_calloc((size_t)s->c.nodes + 1, 1);
    for (int i = 0; i < nn; i++)
        if (nd[i].node < s->c.nodes)
            off[nd[i].node] = 1;
    store_nodes_free(nd, nn);
    *map = ef_malloc(((size_t)s->c.nodes + 1) * sizeof **map);
    *nmap = 0;
    for (int k = 0; k < s->c.nodes; k++)
        if (!off[k])
            (*map)[(*nmap)++] = k;
    free(off);
    return EF_OK;
}

/* Placement pl (cluster nodes) on the plan's nodes (rmap: cluster node
 * -> plan node, rmax entries) of cluster pc, into *out: 1, or 0 (nothing
 * written) when a GPU is on a node the plan does not use or the set does
 * not follow the buddy rule. */
static int plan_place(const placement *pl, const int *rmap, int rmax,
                      const cluster *pc, placement *out)
{
    if (pl->n == 0)
        return 0;
    placement m = {pl->n, ef_malloc((size_t)pl->n * sizeof(int)),
                   ef_malloc((size_t)pl->n * sizeof(int)), 0};
    place_set ps = {pl->n, ef_malloc((size_t)pl->n * sizeof(int))};
    int ok = 1;
    for (int k = 0; k < pl->n && ok; k++) {
        ok = pl->node[k] < rmax && rmap[pl->node[k]] >= 0 &&
             pl->gpu[k] < pc->gpus_per_node;
        if (ok) {
            m.node[k] = rmap[pl->node[k]];
            m.gpu[k] = pl->gpu[k];
            ps.gpu[k] = m.node[k] * pc->gpus_per_node + m.gpu[k];
        }
    }
    if (ok) {
        qsort(ps.gpu, (size_t)ps.g, sizeof(int), cmp_int_asc);
        ok = place_is_buddy(pc, &ps);
    }
    free(ps.gpu);
    if (ok)
        *out = m;
    else
        placement_free(&m);
    return ok;
}

/* A job's at-risk text for the store and the log, in the job's own
 * terms (the plan may count its work scaled by its measured speed): what
 * it cannot make, its work left, its speed, and the earliest finish the
 * plan can still give. 'ob' may be NULL (a job the loop has not seen). */
static void risk_text(const plan_job *j, const svc_obs *ob, int64_t margin,
                      char *dst, size_t len)
{
    char m[64] = "", sp[64] = "", fin[96], dl[48], t[48];
    if (margin > 0)
        snprintf(m, sizeof m, " less a %" PRId64 " s margin", margin);
    if (ob && ob->speed > 0 && ob->speed < 1)
        snprintf(sp, sizeof sp, " at %.0f%% of its curve's speed",
                 ob->speed * 100);
    if (j->planned_end >= 0)
        snprintf(fin, sizeof fin, "earliest finish %s",
                 ef_ht_at(j->planned_end, EF_HT_UTC, t, sizeof t));
    else
        snprintf(fin, sizeof fin, "no finish can be planned");
    int64_t iters = ob && ob->iterations > 0 ? ob->iterations
                                             : j->in->iterations;
    int64_t left = iters - (ob ? ob->progress : j->in->iterations_done);
    snprintf(dst, len, "cannot end by its deadline %s%s: %" PRId64
             " of %" PRId64 " iterations left%s; %s",
             ef_ht_at(j->in->deadline, EF_HT_UTC, dl, sizeof dl), m,
             left > 0 ? left : 0, iters, sp, fin);
}

/* The event detail {"k": v} with one string member (heap). */
static char *detail1(const char *k, const char *v)
{
    json_t *d = json_object();
    json_object_set_new(d, k, jstr(v));
    char *t = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    return t;
}

/* reality_replan when no node is usable (all drained or down): nothing
 * can run; every admitted job still live is at risk (said once, with an
 * event), the jobs' states and progress are kept, the plan stays as it
 * was for when a node comes back; the loop gives nobody GPUs. */
static int no_node(svc *s, const svc_obs *obs, int nobs, int64_t now,
                   svc_loop_res *res, ef_err *e)
{
    static const char why[] = "at risk: every node of the cluster is "
                              "drained or down, nothing can run";
    int rc = store_begin(s->st, e);
    res->at_risk = res->newly_at_risk = 0;
    res->newly[0] = '\0';
    for (int k = 0; rc == EF_OK && k < nobs; k++) {
        const svc_obs *ob = &obs[k];
        const plan_doc_job *dj = view_find(s->pv, ob->id);
        const char *st = ob->state == SVC_OBS_DONE ? "done"
                         : ob->state == SVC_OBS_FAILED ? "failed" : "queued";
        if (store_job_update_live(s->st, ob->id, st, ob->progress, now, e) <
            0) {
            rc = EF_ERR;
            break;
        }
        if (!dj || dj->decision != PLAN_ADMITTED ||
            ob->state == SVC_OBS_DONE || ob->state == SVC_OBS_FAILED)
            continue;
        res->at_risk++;
        store_job sj;
        int have = store_job_get(s->st, ob->id, &sj, e);
        if (have < 0) {
            rc = EF_ERR;
            break;
        }
        int fresh = have && (!sj.risk || strcmp(sj.risk, why) != 0);
        if (have)
            store_job_free(&sj);
        if (!fresh)
            continue;
        res->newly_at_risk++;
        size_t nl = strlen(res->newly);
        if (nl + strlen(ob->id) + 3 < sizeof res->newly)
            snprintf(res->newly + nl, sizeof res->newly - nl, "%s%s",
                     nl ? ", " : "", ob->id);
        if (store_job_set_risk(s->st, ob->id, why, now, e) < 0)
            rc = EF_ERR;
        char *dt = detail1("reason", why);
        if (rc == EF_OK)
            rc = store_event_add(s->st, ob->id, now, "at_risk", dt, e);
        free(dt);
    }
    if (rc == EF_OK)
        rc = store_commit(s->st, e);
    if (rc != EF_OK) {
        store_rollback(s->st);
        return EF_ERR;
    }
    res->version = s->version;
    res->next = now + s->slot_s;
    return EF_OK;
}

/* The state after a re-plan from reality: plan p's jobs in play (the
 * admitted ones adopted as promised), evaluated at the point 'now'. */
/* Forget the ids of the jobs accepted during a re-plan (s->win). */
static void win_clear(svc *s)
{
    for (int i = 0; i < s->nwin; i++)
        free(s->win[i]);
    s->nwin = 0;
}

/* Job pj of a planning state into state nl as it was decided there
 * (admitted: promised), its restarts' scale kept; *rel gets it when it
 * is to be released at nl's point (not promised). */
static void live_carry(live *nl, const plan_job *pj, int *rel, int *nrel)
{
    job c;
    job_copy(&c, pj->in);
    int k = live_add(nl, &c, pj->decision == PLAN_ADMITTED);
    plan_set_restart_scale(&nl->p, k, pj->oscale);
    if (pj->decision != PLAN_ADMITTED)
        rel[(*nrel)++] = k;
}

/* The planning state made anew from plan p at 'now' (its admitted jobs
 * promised); with 'adopt', also every job in play in the old state that
 * was accepted while p was planned outside the lock, as it was
 * decided (their ids in s->win). Returns how many were adopted. */
static int live_reset(svc *s, const plan *p, int64_t now, int adopt)
{
    live nl;
    ef_err e = {0};
    if (live_start(&nl, &p->cl, &p->opts, now, &e) != EF_OK)
        ef_panic("live_start: %s", e.msg); /* the options p was made with */
    int cap = p->njobs + (adopt ? s->nwin : 0) + 1;
    int *rel = ef_malloc((size_t)cap * sizeof *rel);
    int nrel = 0, nadopt = 0;
    for (int i = 0; i < p->njobs; i++) {
        plan_decision d = p->jobs[i].decision;
        if (d == PLAN_ADMITTED || d == PLAN_BEST_EFFORT)
            live_carry(&nl, &p->jobs[i], rel, &nrel);
    }
    if (adopt) {
        /* the jobs accepted while p was planned (s->win), as the old
         * state decided them, if still in play there */
        qsort(s->win, (size_t)s->nwin, sizeof *s->win, ef_cmp_strp);
        for (int k = 0; k < s->L.na; k++) {
            const plan_job *pj = &s->L.p.jobs[s->L.act[k]];
            const char *id = pj->in->id;
            if ((pj->decision == PLAN_ADMITTED ||
                 pj->decision == PLAN_BEST_EFFORT) &&
                bsearch(&id, s->win, (size_t)s->nwin, sizeof *s->win,
                        ef_cmp_strp)) {
                live_carry(&nl, pj, rel, &nrel);
                nadopt++;
            }
        }
    }
    nl.reality = s->notify != NULL; /* completions come from the loop */
    live_point(&nl, rel, nrel);
    free(rel);
    live_free(&s->L);
    s->L = nl;
    stats_update(s);
    return nadopt;
}

void svc_learned(svc *s, const char *id, const char *model, store_learnt *lr)
{
    ef_err e = {0};
    store_job row;
    const char *owner = NULL;
    int have = store_job_get(s->st, id, &row, &e);
    if (have == 1)
        owner = row.owner;
    if (learned_of(s, model, owner, lr, &e) != EF_OK)
        *lr = STORE_LEARNT_NONE; /* as if none */
    if (have == 1)
        store_job_free(&row);
}

/* What job 'id' (of 'model') pays for a restart against the overhead
 * model's charge, as the loop measured it; 1 when nothing was. */
static double learned_restart(svc *s, const char *id, const char *model)
{
    store_learnt lr;
    svc_learned(s, id, model, &lr);
    return lr.restart_runs > 0 ? lr.restart : 1.0;
}

/* The re-plan from reality (svc.h: svc_loop_replan), for the loop and for
 * the operators' re-plan. */
/* 1 if job 'id' is among the cancelled rows cx[0..ncx-1]. */
static int cancelled_in(const store_job *cx, int ncx, const char *id)
{
    for (int k = 0; k < ncx; k++)
        if (strcmp(cx[k].id, id) == 0)
            return 1;
    return 0;
}

/* Job d of a re-plan from reality as the loop saw it (ob, may be NULL):
 * its progress (scaled by its measured speed below the curve), where it
 * runs (on the plan's nodes: rmap, pc) and what its restart still costs,
 * promised when the state admitted it. */
static void reality_job(job *d, const svc_obs *ob, int admitted, int eb,
                        const int *rmap, int rmax, const cluster *pc)
{
    placement_free(&d->cur);
    d->owed = 0;
    d->promised = admitted;
    if (ob && eb && d->in_samples) {
        int64_t sd = ob->progress * d->batch;
        if (sd > d->samples - 1)
            sd = d->samples - 1;
        if (sd > d->samples_done)
            d->samples_done = sd;
    } else if (ob) {
        /* iters: the job's own iterations (the store's), not the scaled
         * ones of the state */
        int64_t iters = ob->iterations > 0 ? ob->iterations : d->iterations;
        int64_t p = ob->progress < iters ? ob->progress : iters - 1;
        if (p < 0)
            p = 0;
        int64_t left = iters - p;
        if (ob->speed > 0 && ob->speed < 1) {
            double sc = ceil((double)left / ob->speed);
            left = sc < 1e15 ? (int64_t)sc : (int64_t)1e15;
        }
        d->iterations = p + left;
        d->iterations_done = p;
    }
    if (ob && ob->state == SVC_OBS_RUNNING &&
        plan_place(&ob->place, rmap, rmax, pc, &d->cur) && ob->owed >= 1)
        d->owed = ob->owed < 86400 ? (int64_t)ceil(ob->owed) : 86400;
}

/* The queue a re-plan from reality plans (*q, resolved): the planning
 * state's jobs in play (typed: live_queue), less those the loop saw end
 * and those cancelled (cx), each as the loop saw it (reality_job); *osc
 * (heap) each job's measured restart cost against the model's, *was
 * (heap) 1 for a job the state had at risk. */
static void reality_queue(svc *s, const svc_obs *obs, int nobs,
                          const store_job *cx, int ncx, const int *rmap,
                          const cluster *pc, job_queue *q, double **osc,
                          char **was)
{
    int *adm = NULL;
    live_settle(&s->L);
    live_queue(&s->L, q, &adm);
    *osc = ef_calloc((size_t)q->n + 1, sizeof **osc);
    *was = ef_calloc((size_t)q->n + 1, 1);
    int m = 0;
    for (int i = 0; i < q->n; i++) {
        job *d = &q->jobs[i];
        const svc_obs *ob = obs_find(obs, nobs, d->id);
        if (cancelled_in(cx, ncx, d->id) ||
            (ob && (ob->state == SVC_OBS_DONE ||
                    ob->state == SVC_OBS_FAILED))) {
            job_free(d);
            continue;
        }
        /* (live_queue's job i is the state's act[i]) */
        (*was)[m] = (char)s->L.p.jobs[s->L.act[i]].at_risk;
        reality_job(d, ob, adm[i],
                    s->L.p.opts.elastic_batch && job_elastic(d), rmap,
                    s->c.nodes, pc);
        (*osc)[m] = learned_restart(s, d->id, d->model);
        if (m != i)
            q->jobs[m] = *d;
        q->jobs[m].index = m;
        m++;
    }
    q->n = m;
    free(adm);
}

/* What the loop saw, into the store (inside the re-plan's transaction):
 * each observed job's state and progress, a "done" or "failed" event
 * for one that ended, its risk cleared once it ended or was cancelled
 * (cx). */
static int commit_observed(svc *s, const svc_obs *obs, int nobs,
                           const store_job *cx, int ncx, int64_t now,
                           ef_err *e)
{
    int rc = EF_OK;
    for (int k = 0; rc == EF_OK && k < nobs; k++) {
        const svc_obs *ob = &obs[k];
        int cancelled = cancelled_in(cx, ncx, ob->id);
        const char *st = cancelled ? "cancelled"
                         : ob->state == SVC_OBS_DONE ? "done"
                         : ob->state == SVC_OBS_FAILED ? "failed"
                         : ob->state == SVC_OBS_RUNNING ? "running"
                                                        : "queued";
        if (store_job_update(s->st, ob->id, st, ob->progress, now, e) < 0)
            rc = EF_ERR;
        if (rc == EF_OK && !cancelled && ob->state == SVC_OBS_DONE) {
            char dt[64];
            snprintf(dt, sizeof dt, "{\"progress\":%" PRId64 "}",
                     ob->progress);
            rc = store_event_add(s->st, ob->id, now, "done", dt, e);
        }
        if (rc == EF_OK && !cancelled && ob->state == SVC_OBS_FAILED) {
            char *dt = detail1("why", ob->why ? ob->why : "failed");
            rc = store_event_add(s->st, ob->id, now, "failed", dt, e);
            free(dt);
            pthread_mutex_lock(&s->smu);
            s->loop_failed++;
            pthread_mutex_unlock(&s->smu);
        }
        if (rc == EF_OK && (ob->state == SVC_OBS_DONE ||
                            ob->state == SVC_OBS_FAILED || cancelled) &&
            store_job_set_risk(s->st, ob->id, NULL, now, e) < 0)
            rc = EF_ERR;
    }
    return rc;
}

/* The re-plan's at-risk flags, into the store (inside its transaction):
 * each admitted job of plan p at risk gets its reason (an "at_risk"
 * event when it was not at risk before: was[i], or the store's own
 * risk), each that no longer is an "on_time" event; res->at_risk and
 * res->newly, and *newly, count them. */
static int commit_risks(svc *s, const plan *p, const svc_obs *obs, int nobs,
                        const char *was, int64_t now, svc_loop_res *res,
                        int *newly, ef_err *e)
{
    int rc = EF_OK;
    /* risky: live jobs the store has a risk for (a re-plan before, or
     * no usable node) */
    store_job *rq = NULL, *rr = NULL;
    int nrq = 0, nrr = 0;
    if ((store_jobs_list(s->st, NULL, "queued", &rq, &nrq, e) != EF_OK ||
         store_jobs_list(s->st, NULL, "running", &rr, &nrr, e) != EF_OK))
        rc = EF_ERR;
    res->at_risk = 0;
    res->newly[0] = '\0';
    for (int i = 0; rc == EF_OK && i < p->njobs; i++) {
        const plan_job *j = &p->jobs[i];
        int risky = was[i]; /* at risk in the state before */
        for (int k = 0; k < nrq && !risky; k++)
            risky = rq[k].risk && strcmp(rq[k].id, j->in->id) == 0;
        for (int k = 0; k < nrr && !risky; k++)
            risky = rr[k].risk && strcmp(rr[k].id, j->in->id) == 0;
        int is = j->decision == PLAN_ADMITTED && j->at_risk;
        res->at_risk += is;
        if (is) {
            char rt[400];
            risk_text(j, obs_find(obs, nobs, j->in->id), s->margin, rt,
                      sizeof rt);
            if (store_job_set_risk(s->st, j->in->id, rt, now, e) < 0)
                rc = EF_ERR;
            if (rc == EF_OK && !risky) {
                (*newly)++;
                size_t nl = strlen(res->newly);
                if (nl + strlen(j->in->id) + 3 < sizeof res->newly)
                    snprintf(res->newly + nl, sizeof res->newly - nl,
                             "%s%s", nl ? ", " : "", j->in->id);
                json_t *dv = json_object();
                json_object_set_new(dv, "deadline",
                                    json_integer(j->in->deadline));
                json_object_set_new(dv, "earliest_finish",
                                    jtime(j->planned_end));
                json_object_set_new(dv, "reason", jstr(rt));
                char *dt = json_dumps(dv, JSON_COMPACT | JSON_SORT_KEYS);
                json_decref(dv);
                rc = store_event_add(s->st, j->in->id, now, "at_risk", dt, e);
                free(dt);
            }
        } else if (risky) {
            if (store_job_set_risk(s->st, j->in->id, NULL, now, e) < 0)
                rc = EF_ERR;
            if (rc == EF_OK)
                rc = store_event_add(s->st, j->in->id, now, "on_time", NULL,
                                     e);
        }
    }
    store_jobs_free(rq, nrq);
    store_jobs_free(rr, nrr);
    return rc;
}

/* How many times a re-plan from reality planned outside the planning
 * lock is made again because the state changed meanwhile, before the
 * last try holds the lock throughout. */
#define REALITY_TRIES 2

/* What a re-plan from reality plans (reality_gather, reality_plan). */
typedef struct reality_in {
    long *map;         /* the usable nodes (heap), nmap of them */
    int nmap;
    int *rmap;         /* cluster node -> plan node, -1 if unusable */
    cluster pc;        /* the usable nodes as a cluster */
    store_job *cx;     /* cancelled jobs, which leave the queue */
    int ncx;
    job_queue q;       /* the queue as the loop sees it */
    char *was;         /* per job of q: at risk before */
    double *osc;       /* per job of q: its restarts' measured scale */
    plan_opts po;      /* restart_scale: osc */
} reality_in;

static void reality_in_free(reality_in *in)
{
    free(in->map);
    free(in->rmap);
    store_jobs_free(in->cx, in->ncx);
    queue_free(&in->q);
    free(in->was);
    free(in->osc);
    memset(in, 0, sizeof *in);
}

/* Gather what a re-plan from reality plans from the state (under the
 * planning lock). *none: no node is usable (nothing gathered then). */
static int reality_gather(svc *s, const svc_obs *obs, int nobs, int64_t now,
                          reality_in *in, int *none, ef_err *e)
{
    memset(in, 0, sizeof *in);
    *none = 0;
    int G = s->c.gpus_per_node;
    if (usable_nodes(s, &in->map, &in->nmap, e) != EF_OK)
        return EF_ERR;
    if (in->nmap == 0) {
        free(in->map);
        in->map = NULL;
        *none = 1;
        return EF_OK;
    }
    in->rmap = ef_malloc((size_t)s->c.nodes * sizeof *in->rmap);
    for (int k = 0; k < s->c.nodes; k++)
        in->rmap[k] = -1;
    for (int k = 0; k < in->nmap; k++)
        in->rmap[in->map[k]] = k;
    if (cluster_init(&in->pc, 1, in->nmap, G, "the service's cluster", e) !=
            EF_OK ||
        store_jobs_list(s->st, NULL, "cancelled", &in->cx, &in->ncx, e) !=
            EF_OK) {
        reality_in_free(in);
        return EF_ERR;
    }
    reality_queue(s, obs, nobs, in->cx, in->ncx, in->rmap, &in->pc, &in->q,
                  &in->osc, &in->was);
    in->po = s->L.p.opts;
    in->po.now = now;
    in->po.deadline_margin = s->margin;
    in->po.restart_scale = in->osc;
    return EF_OK;
}

/*
 * The re-plan from reality: gather what it plans under the planning
 * lock, plan it, and commit it (the jobs as seen, their risks, the plan,
 * the planning state). With 'apart' (the loop's own re-plan, whose obs
 * no other thread frees) the planning itself, a full deadline-order
 * re-plan (seconds at tens of thousands of jobs in play), runs with the
 * lock let go, so submissions and reads do not wait for it; if the state
 * changed meanwhile only by submissions, the plan stands and the jobs
 * they brought join the new planning state as they were decided
 * (live_reset: admitted ones promised, re-planned at the next point, at
 * risk if reality leaves them no room); if it changed otherwise (a
 * cancel: the version; a node drained or down), it is gathered and
 * planned again, the last of REALITY_TRIES holding the lock throughout
 * (so a re-plan never holds the lock longer than one planning, as
 * before, and only when a cancel or a node's change came).
 */
static int reality_replan(svc *s, const svc_obs *obs, int nobs, int64_t now,
                          const char *why, int apart, placement *want,
                          int *need, svc_loop_res *res, ef_err *e)
{
    reality_in in;
    plan p;
    char *text = NULL;  /* p's plan file */
    size_t len = 0;
    plan_doc doc;       /* text read back, for the readers' view */
    int rc = EF_OK, none = 0, adopt = 0;
    for (int k = 0; want && k < nobs; k++)
        memset(&want[k], 0, sizeof want[k]);
    for (int k = 0; need && k < nobs; k++)
        need[k] = 0;
    for (int tries = 1;; tries++) {
        if (reality_gather(s, obs, nobs, now, &in, &none, e) != EF_OK)
            return EF_ERR;
        if (none)
            return no_node(s, obs, nobs, now, res, e);
        int out = apart && tries < REALITY_TRIES;
        int64_t v0 = s->version, n0 = s->nodes_gen, s0 = s->subs;
        win_clear(s);
        s->apart = out;
        if (out)
            svc_unlock(s);
        if (out && s->apart_hook)
            s->apart_hook(s->apart_arg);
        rc = plan_checked(&p, &in.q, &in.pc, &in.po, e);
        if (rc == EF_OK) {
            /* its text with its node map, and the readers' view of it
             * (owned: read back from the text), also off the lock */
            int part = in.nmap < s->c.nodes;
            plan_doc nd;
            text = plan_text(s->curves_arg, part ? in.nmap : 0,
                             part ? in.map : NULL, &p, &nd, &len);
            plan_doc_free(&nd);
            rc = plan_doc_parse(&doc, "the service's plan", text, len, e);
            if (rc != EF_OK) {
                free(text);
                plan_free(&p);
            }
        }
        if (out)
            svc_lock(s);
        s->apart = 0;
        if (rc != EF_OK) {
            win_clear(s);
            reality_in_free(&in);
            return EF_ERR;
        }
        if (!out || (s->version == v0 && s->nodes_gen == n0))
            break;
        /* only submissions came: they join the new state as decided */
        adopt = s->nodes_gen == n0 && s->version - v0 == s->subs - s0;
        if (adopt)
            break;
        plan_free(&p); /* the state moved on otherwise: again */
        free(text);
        plan_doc_free(&doc);
        reality_in_free(&in);
    }
    int G = s->c.gpus_per_node;
    long *map = in.map; /* moved to s->map, or freed */
    int nmap = in.nmap;
    in.map = NULL;
    long *old_map = s->map;
    int old_nmap = s->nmap;
    s->map = nmap < s->c.nodes ? map : NULL;
    s->nmap = nmap < s->c.nodes ? nmap : 0;
    if (!s->map)
        free(map);
    int64_t version = s->version + 1;
    int newly = 0;
    /* commit: the jobs as seen, their risks, the plan */
    rc = store_begin(s->st, e);
    if (rc == EF_OK)
        rc = commit_observed(s, obs, nobs, in.cx, in.ncx, now, e);
    if (rc == EF_OK)
        rc = commit_risks(s, &p, obs, nobs, in.was, now, res, &newly, e);
    if (rc == EF_OK)
        rc = store_plan_put(s->st, version, now, why, p.admitted, text, e);
    if (rc == EF_OK)
        rc = store_commit(s->st, e);
    if (rc != EF_OK) {
        store_rollback(s->st);
        free(text);
        plan_doc_free(&doc);
        free(s->map);
        s->map = old_map;
        s->nmap = old_nmap;
        plan_free(&p);
        reality_in_free(&in);
        return EF_ERR;
    }
    /* the new plan is the current one */
    use_view(s, view_make(&doc, text, len, version));
    free(old_map);
    if (live_reset(s, &p, now, adopt) > 0) {
        /* the state holds more than the plan just stored: readers plan
         * it afresh (their view is older than the state's version) */
        s->version++;
        stats_update(s);
    }
    win_clear(s);
    pthread_mutex_lock(&s->smu);
    s->loop_replans++;
    pthread_mutex_unlock(&s->smu);
    res->version = version;
    res->newly_at_risk = newly;
    res->next = now + p.opts.slot;
    /* what each job gets now */
    const plan_slot *sl = p.nslots > 0 && p.slots[0].start == now
                              ? &p.slots[0] : NULL;
    for (int a = 0; want && sl && a < sl->nalloc; a++) {
        const plan_alloc *al = &sl->a[a];
        const char *id = p.jobs[al->job].in->id;
        const svc_obs *ob = obs_find(obs, nobs, id);
        if (!ob)
            continue;
        placement *w = &want[ob - obs];
        if (need && p.jobs[al->job].decision == PLAN_ADMITTED &&
            !p.jobs[al->job].at_risk)
            need[ob - obs] = resv_at(&p.jobs[al->job].reserved, now);
        w->n = al->gpus;
        w->node = ef_malloc((size_t)al->gpus * sizeof(int));
        w->gpu = ef_malloc((size_t)al->gpus * sizeof(int));
        w->batch = al->batch;
        for (int k = 0; k < al->gpus; k++) {
            w->node[k] = real_node(s, al->gpu[k] / G);
            w->gpu[k] = al->gpu[k] % G;
        }
    }
    /* a running job the plan could not take where it runs (a drained or
     * down node) must move, and one it no longer has (cancelled) stop */
    char *kept = need ? ef_calloc((size_t)nobs + 1, 1) : NULL;
    for (int i = 0; need && i < p.njobs; i++) {
        const svc_obs *ob = obs_find(obs, nobs, p.jobs[i].in->id);
        if (ob && p.jobs[i].in->cur.n > 0)
            kept[ob - obs] = 1;
    }
    for (int k = 0; need && k < nobs; k++)
        if (obs[k].state == SVC_OBS_RUNNING && !kept[k])
            need[k] |= SVC_NEED_MOVE;
    free(kept);
    plan_free(&p);
    reality_in_free(&in);
    return EF_OK;
}

int svc_loop_replan(svc *s, const svc_obs *obs, int nobs, int64_t now,
                    const char *why, placement *want, int *need,
                    svc_loop_res *res, ef_err *e)
{
    if (reality_replan(s, obs, nobs, now, why, 1, want, need, res, e) !=
        EF_OK)
        return EF_ERR;
    /* keep what the loop saw (running and waiting jobs) for svc_replan */
    for (int i = 0; i < s->nobs; i++) {
        free((char *)s->obs[i].id);
        free((char *)s->obs[i].why);
        placement_free(&s->obs[i].place);
    }
    free(s->obs);
    s->obs = ef_calloc((size_t)nobs + 1, sizeof *s->obs);
    s->nobs = 0;
    for (int i = 0; i < nobs; i++) {
        if (obs[i].state == SVC_OBS_DONE || obs[i].state == SVC_OBS_FAILED)
            continue;
        svc_obs *o = &s->obs[s->nobs++];
        o->id = ef_strdup(obs[i].id);
        o->state = obs[i].state;
        o->progress = obs[i].progress;
        placement_copy(&o->place, &obs[i].place);
    }
    return EF_OK;
}

int svc_loop_event(svc *s, const char *id, const char *kind,
                   const char *detail, int64_t now, ef_err *e)
{
    pthread_mutex_lock(&s->smu);
    s->loop_restarts += strcmp(kind, "restart") == 0;
    s->loop_lag += strcmp(kind, "lag") == 0;
    pthread_mutex_unlock(&s->smu);
    return store_event_add(s->st, id, now, kind, detail, e);
}

/* ---- nodes ------------------------------------------------------------------ */

void svc_set_node_names(svc *s, char *const *names, int n)
{
    for (int k = 0; k < s->nnode_name; k++)
        free(s->node_name[k]);
    free(s->node_name);
    s->nnode_name = n < s->c.nodes ? n : s->c.nodes;
    s->node_name = ef_calloc((size_t)s->nnode_name + 1, sizeof *s->node_name);
    for (int k = 0; k < s->nnode_name; k++)
        s->node_name[k] = ef_strdup(names[k]);
}

/* Node 'arg' (its number or its name) of the cluster: its number, or -1
 * with 'msg' saying which nodes there are. */
static long node_of(const svc *s, const char *arg, char *msg, size_t len)
{
    char *end = NULL;
    errno = 0;
    long k = arg && *arg ? strtol(arg, &end, 10) : -1;
    if (end && !*end && !errno && k >= 0 && k < s->c.nodes)
        return k;
    for (int i = 0; arg && i < s->nnode_name; i++)
        if (strcmp(s->node_name[i], arg) == 0)
            return i;
    char q[128];
    if (s->nnode_name > 0)
        snprintf(msg, len, "node %s: the cluster has nodes 0 to %d, named "
                 "%.60s to %.60s", ef_quote(arg ? arg : "", q, sizeof q),
                 s->c.nodes - 1, s->node_name[0],
                 s->node_name[s->nnode_name - 1]);
    else
        snprintf(msg, len, "node %s: the cluster has nodes 0 to %d (names "
                 "come with --nodes or Slurm)",
                 ef_quote(arg ? arg : "", q, sizeof q), s->c.nodes - 1);
    return -1;
}

/* The reason of a drain's body ({} or {"reason": "..."}; empty: none)
 * into dst, "" for none; 0, or -1 with msg (a 400's) and path[plen] its
 * JSON path ("" for the body as a whole). */
static int drain_reason(const char *body, size_t len, char *dst, size_t n,
                        char *msg, size_t mlen, char *path, size_t plen)
{
    dst[0] = '\0';
    path[0] = '\0';
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' ||
                       body[i] == '\t'))
        i++;
    if (i == len)
        return 0;
    ef_err e = {0};
    json_t *v = jsonin_parse("request body", body, len, &e);
    if (!v || !json_is_object(v)) {
        snprintf(msg, mlen, "%.250s", v ? "request body: expected an object "
                 "{\"reason\": \"...\"}" : e.msg);
        json_decref(v);
        return -1;
    }
    const char *k;
    json_t *x;
    int rc = 0;
    json_object_foreach(v, k, x) {
        if (strcmp(k, "reason") != 0) {
            char q[64];
            snprintf(msg, mlen, "request body: unknown key \"%s\" (expected "
                     "\"reason\")", ef_quote(k, q, sizeof q));
            snprintf(path, plen, "%.100s", k);
            rc = -1;
        } else if (!json_is_string(x) || json_string_length(x) > 200 ||
                   json_string_length(x) == 0) {
            snprintf(msg, mlen, "request body: reason: expected a string of "
                     "1 to 200 bytes");
            rc = -1;
        } else {
            const char *r = json_string_value(x);
            for (const char *c = r; *c && rc == 0; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                    snprintf(msg, mlen, "request body: reason: a control "
                             "character (expected one line of text)");
                    rc = -1;
                }
            if (rc == 0)
                snprintf(dst, n, "%s", r);
        }
        if (rc) {
            if (!path[0])
                snprintf(path, plen, "reason");
            break;
        }
    }
    json_decref(v);
    return rc;
}

void svc_nodes(svc *s, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    ef_err e = {0};
    store_node *nd = NULL;
    int nn = 0;
    svc_lock(s);
    if (store_nodes_list(s->st, &nd, &nn, &e) != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    json_t *v = json_object();
    json_t *a = json_array();
    int up = 0;
    for (int k = 0; k < s->c.nodes; k++) {
        const store_node *x = NULL;
        for (int i = 0; i < nn && !x; i++)
            if (nd[i].node == k)
                x = &nd[i];
        up += !x;
        json_t *o = json_object();
        json_object_set_new(o, "node", json_integer(k));
        json_object_set_new(o, "name", k < s->nnode_name
                                           ? jstr(s->node_name[k])
                                           : json_null());
        json_object_set_new(o, "state", json_string(x ? x->state : "up"));
        json_object_set_new(o, "why", x ? jstr(x->why) : json_null());
        json_object_set_new(o, "since", x ? json_integer(x->at) : json_null());
        json_array_append_new(a, o);
    }
    json_object_set_new(v, "nodes", a);
    json_object_set_new(v, "plan_nodes", json_integer(up));
    store_nodes_free(nd, nn);
    svc_unlock(s);
    svc_reply_json(r, 200, v);
}

void svc_node_drain(svc *s, const store_ident *who, const char *node,
                    int drain, const char *body, size_t len, int64_t now,
                    svc_reply *r)
{
    memset(r, 0, sizeof *r);
    if (!who->op) {
        svc_reply_error(r, 403, NULL, "draining nodes is for operators");
        return;
    }
    char reason[256], rm[300], rp[128];
    if (drain_reason(body ? body : "", body ? len : 0, reason, sizeof reason,
                     rm, sizeof rm, rp, sizeof rp) != 0) {
        svc_reply_error(r, 400, rp[0] ? rp : NULL, rm);
        return;
    }
    ef_err e = {0};
    svc_lock(s);
    long k = node_of(s, node, rm, sizeof rm);
    if (k < 0) {
        svc_unlock(s);
        svc_reply_error(r, 404, NULL, rm);
        return;
    }
    store_node *nd = NULL;
    int nn = 0;
    if (store_nodes_list(s->st, &nd, &nn, &e) != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    const char *cur = NULL;
    for (int i = 0; i < nn; i++)
        if (nd[i].node == k)
            cur = nd[i].state;
    char m[300];
    int status = 0;
    if (!s->notify) {
        snprintf(m, sizeof m, "this service runs no loop (efplan serve "
                 "without --backend): it only plans, and nothing runs on "
                 "its nodes; drain nodes where the plan is applied, or start "
                 "it with --backend");
        status = 409;
    } else if (drain && !cur && nn + 1 >= s->c.nodes) {
        snprintf(m, sizeof m, "node %ld is the last usable node: draining it "
                 "would leave no GPU for the promises made", k);
        status = 409;
    } else if (!drain && cur && strcmp(cur, "down") == 0) {
        snprintf(m, sizeof m, "node %ld is down as the cluster sees it, not "
                 "drained: it comes back when the cluster says so", k);
        status = 409;
    }
    int changed = 0;
    if (!status && (drain ? !cur || strcmp(cur, "drained") : cur != NULL)) {
        char why[512];
        snprintf(why, sizeof why, "drained by %s%s%s", who->name,
                 reason[0] ? ": " : "", reason);
        s->nodes_gen++;
        int rc = store_begin(s->st, &e);
        if (rc == EF_OK &&
            store_node_set(s->st, (int)k, drain ? "drained" : NULL, why, now,
                           &e) < 0)
            rc = EF_ERR;
        json_t *dv = json_object();
        json_object_set_new(dv, "by", jstr(who->name));
        json_object_set_new(dv, "node", json_integer(k));
        if (k < s->nnode_name)
            json_object_set_new(dv, "name", jstr(s->node_name[k]));
        if (reason[0])
            json_object_set_new(dv, "reason", jstr(reason));
        char *dt = json_dumps(dv, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(dv);
        if (rc == EF_OK)
            rc = store_event_add(s->st, NULL, now, drain ? "node_drained"
                                 : "node_undrained", dt, &e);
        if (rc == EF_OK)
            rc = store_commit(s->st, &e);
        free(dt);
        if (rc != EF_OK) {
            store_rollback(s->st);
            store_nodes_free(nd, nn);
            svc_unlock(s);
            reply_internal(r, &e);
            return;
        }
        changed = 1;
        if (s->notify)
            s->notify(s->notify_arg, drain ? "a drained node" : "an undrained node");
    }
    store_nodes_free(nd, nn);
    svc_unlock(s);
    if (status) {
        svc_reply_error(r, status, NULL, m);
        return;
    }
    json_t *v = json_object();
    json_object_set_new(v, "changed", json_boolean(changed));
    json_object_set_new(v, "node", json_integer(k));
    json_object_set_new(v, "name", k < s->nnode_name
                                       ? jstr(s->node_name[k]) : json_null());
    json_object_set_new(v, "state", json_string(drain ? "drained" : "up"));
    svc_reply_json(r, 200, v);
}

int svc_node_seen(svc *s, int node, int down, const char *why, int64_t now,
                  ef_err *e)
{
    store_node *nd = NULL;
    int nn = 0;
    if (node < 0 || node >= s->c.nodes)
        return 0;
    if (store_nodes_list(s->st, &nd, &nn, e) != EF_OK)
        return EF_ERR;
    const char *cur = NULL;
    for (int i = 0; i < nn; i++)
        if (nd[i].node == node)
            cur = nd[i].state;
    int change = down ? cur == NULL : cur && strcmp(cur, "down") == 0;
    store_nodes_free(nd, nn);
    if (!change)
        return 0;
    char dt[64];
    snprintf(dt, sizeof dt, "{\"node\":%d}", node);
    int rc = store_begin(s->st, e);
    s->nodes_gen++;
    if (rc == EF_OK &&
        store_node_set(s->st, node, down ? "down" : NULL, why, now, e) < 0)
        rc = EF_ERR;
    if (rc == EF_OK)
        rc = store_event_add(s->st, NULL, now, down ? "node_down" : "node_up",
                             dt, e);
    if (rc == EF_OK)
        rc = store_commit(s->st, e);
    if (rc != EF_OK) {
        store_rollback(s->st);
        return EF_ERR;
    }
    return 1;
}
