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
#include "common/lat.h"
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

/* Upper bounds of the submission latency histogram (seconds). */
static const double lat_le[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                0.1,   0.25,  0.5,   1,    2.5,  5,   10};
#define NLAT ((int)(sizeof lat_le / sizeof lat_le[0]))
#define LAT_WINDOW 4096

/* The job states, in name order (store_jobs_count's order too). */
static const char *const states[] = {"cancelled", "done",     "failed",
                                     "queued",    "rejected", "running"};
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
    /* the current plan: its text, version and parsed value */
    char *plan_text;
    size_t plan_len;
    int64_t version;
    plan_doc doc;
    plan_submit_res *cur; /* the submission whose plan doc is (doc borrows
                             its strings); NULL when doc was read from text */
    int *byid;        /* doc.jobs indices sorted by id */
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
    /* what the loop last reported (svc_loop_replan), for the operators'
     * re-plan; nobs < 0: no loop */
    int nobs;
    svc_obs *obs;
    /* loop counters, for /metrics */
    int64_t loop_replans, loop_restarts, loop_failed, loop_lag;
    int64_t margin;   /* the loop's deadline margin (svc_set_margin) */
    /* metrics since start */
    int64_t sub_by_dec[3]; /* admitted, best_effort, rejected */
    int64_t sub_retries, sub_errors;
    int64_t lat_count, lat_bucket[NLAT];
    double lat_sum;
    ef_lat lat_recent;    /* the last LAT_WINDOW submissions' answer times,
                             seconds: their p50, p99 and max */
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

/* A JSON reply of 'v' (taken): keys sorted, one line. */
static void reply_json(svc_reply *r, int status, json_t *v)
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
    reply_json(r, status, v);
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

/* Make doc 'd' (taken), whose file text is text[0..len) (heap, taken),
 * the current plan of version 'version'; 'res' (taken, may be NULL) the
 * submission whose plan d borrows from. */
static void use_plan(svc *s, plan_doc *d, plan_submit_res *res, char *text,
                     size_t len, int64_t version)
{
    plan_doc_free(&s->doc);
    if (s->cur) {
        plan_submit_free(s->cur);
        free(s->cur);
    }
    free(s->plan_text);
    free(s->byid);
    s->doc = *d;
    s->cur = res;
    s->plan_text = text;
    s->plan_len = len;
    s->version = version;
    s->byid = ef_malloc(((size_t)d->njobs + 1) * sizeof *s->byid);
    for (int i = 0; i < d->njobs; i++)
        s->byid[i] = i;
    qsort_r(s->byid, (size_t)d->njobs, sizeof *s->byid, byid_cmp, &s->doc);
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
    use_plan(s, &d, NULL, text, len, version);
    return EF_OK;
}

/* The plan's entry of job 'id', or NULL. */
static const plan_doc_job *plan_find(const svc *s, const char *id)
{
    int lo = 0, hi = s->doc.njobs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(s->doc.jobs[s->byid[mid]].id, id);
        if (c == 0)
            return &s->doc.jobs[s->byid[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* The plan file of plan p as the service writes it: *d (borrowing p and
 * the node map) and its text (heap; *len). */
static char *plan_text(svc *s, const plan *p, plan_doc *d, size_t *len)
{
    plan_doc_from_plan(d, p, "", s->curves_arg);
    d->nnode_map = s->nmap;
    d->node_map = s->map;
    return plan_doc_json(d, len);
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

/* ---- open and close ------------------------------------------------------ */

int svc_open(svc **out, const svc_config *cfg, int64_t now, ef_err *e)
{
    *out = NULL;
    svc *s = ef_calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->turn, NULL);
    ef_lat_init(&s->lat_recent, LAT_WINDOW);
    s->db = ef_strdup(cfg->db);
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
        store_open(&s->st, cfg->db, e) != EF_OK)
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
        int mapped = s->doc.nnode_map > 0;
        for (int k = 0; k < s->doc.nnode_map; k++)
            mapped = mapped && s->doc.node_map[k] < s->c.nodes;
        if (mapped) {
            s->nmap = s->doc.nnode_map;
            s->map = ef_malloc((size_t)s->nmap * sizeof *s->map);
            memcpy(s->map, s->doc.node_map, (size_t)s->nmap * sizeof *s->map);
        }
        if ((mapped ? 0 : s->doc.cluster.nodes != s->c.nodes) ||
            s->doc.cluster.gpus_per_node != s->c.gpus_per_node) {
            ef_fail(e, EF_E_USAGE, "%s: its queue is planned on %d nodes of "
                    "%d GPUs, and --cluster %s has %d of %d (start it with "
                    "the cluster it was planned on)", cfg->db,
                    s->doc.cluster.nodes, s->doc.cluster.gpus_per_node,
                    cfg->cluster, s->c.nodes, s->c.gpus_per_node);
            goto fail;
        }
        if (strcmp(s->doc.curves ? s->doc.curves : "", cfg->curves) != 0) {
            ef_fail(e, EF_E_USAGE, "%s: its queue is planned with curves "
                    "\"%s\", and --curves is \"%s\" (start it with the "
                    "curves it was planned with)", cfg->db,
                    s->doc.curves ? s->doc.curves : "", cfg->curves);
            goto fail;
        }
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
    plan p;
    if (plan_build(&p, &q, &s->c, &po, e) != EF_OK)
        goto fail;
    size_t len = 0;
    char *pt = NULL;
    plan_doc d0;
    pt = plan_text(s, &p, &d0, &len);
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
    if (s->st)
        store_close(s->st);
    plan_doc_free(&s->doc);
    ef_lat_free(&s->lat_recent);
    if (s->cur) {
        plan_submit_free(s->cur);
        free(s->cur);
    }
    curve_set_free(&s->cs);
    free(s->plan_text);
    free(s->byid);
    free(s->db);
    free(s->cluster_arg);
    free(s->curves_arg);
    free(s->snapdir);
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
    free(s);
}

store *svc_store(svc *s) { return s->st; }
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

/* Job j's view (svc.h's JOB, a new reference): what it asked for from
 * its body, its answer from the plan while the plan holds it live (else
 * from its first answer), its GPUs now; with its history when
 * 'history'. NULL on a store error (e filled). */
static json_t *job_view(svc *s, const store_job *j, int64_t now,
                        int history, ef_err *e)
{
    json_t *body = json_loads(j->body, 0, NULL);
    json_t *ans = json_loads(j->answer, 0, NULL);
    const plan_doc_job *pj = live_state(j->state) ? plan_find(s, j->id)
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
    }
    /* the GPUs it holds now, as the plan has it */
    int si = pj ? slot_at(&s->doc, now) : -1;
    const plan_doc_alloc *al = NULL;
    if (si >= 0)
        for (int a = 0; a < s->doc.slots[si].nalloc; a++)
            if (strcmp(s->doc.slots[si].a[a].job, j->id) == 0)
                al = &s->doc.slots[si].a[a];
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
            json_object_set_new(o, "node", json_integer(real_node(s, node)));
            json_array_append_new(pl, o);
        }
    json_object_set_new(v, "placement", pl);
    json_object_set_new(v, "id", json_string(j->id));
    json_object_set_new(v, "iterations_done", json_integer(j->progress));
    json_object_set_new(v, "owner", json_string(j->owner));
    json_object_set_new(v, "state", json_string(j->state));
    json_object_set_new(v, "submitted", json_integer(j->submitted));
    json_decref(body);
    json_decref(ans);
    if (history) {
        store_event *ev = NULL;
        int nev = 0;
        if (store_events(s->st, j->id, &ev, &nev, e) != EF_OK) {
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
        if (store_attempts_list(s->st, j->id, 0, &at, &nat, e) != EF_OK) {
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

/* The admission answer of plan_submit's result (a new reference). */
static json_t *answer_of(const plan_submit_res *r, const char *id,
                         int64_t version)
{
    const plan_job *nw = &r->p.jobs[r->p.njobs - 1];
    json_t *a = json_object();
    json_object_set_new(a, "broken", r->broken ? jstr(r->broken)
                                               : json_null());
    json_object_set_new(a, "decision",
                        json_string(plan_decision_name(r->decision)));
    json_object_set_new(a, "earliest_feasible_deadline",
                        jtime(r->decision == PLAN_REJECTED ? r->earliest
                                                           : -1));
    json_object_set_new(a, "id", jstr(id));
    json_object_set_new(a, "planned_end",
                        jtime(r->decision == PLAN_REJECTED ? -1
                                                           : nw->planned_end));
    json_object_set_new(a, "plan_version", json_integer(version));
    const char *why = NULL;
    char buf[400];
    if (r->decision == PLAN_REJECTED) {
        if (r->broken) {
            snprintf(buf, sizeof buf, "admitting it would break the promise "
                     "made to job \"%s\"", r->broken);
            why = buf;
        } else {
            why = r->reason && r->reason[0] ? r->reason : "its deadline "
                  "cannot be guaranteed";
        }
    }
    json_object_set_new(a, "reason", why ? jstr(why) : json_null());
    json_object_set_new(a, "submit_time", json_integer(r->submit_time));
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

/* Commit an accepted or rejected submission: the job row, its events,
 * the changed decisions of others and (accepted) the new plan. */
static int commit_submit(svc *s, store_job *j, const plan_submit_res *res,
                         const char *plan_text, int64_t now, int replace,
                         ef_err *e)
{
    int accepted = res->decision != PLAN_REJECTED;
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
    for (int i = 0; rc == EF_OK && accepted && i < res->nchanges; i++) {
        json_t *d = json_object();
        json_object_set_new(d, "by", jstr(j->id));
        json_object_set_new(d, "from", json_string(plan_decision_name(
                                           res->changes[i].from)));
        json_object_set_new(d, "to", json_string(plan_decision_name(
                                         res->changes[i].to)));
        char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(d);
        rc = store_event_add(s->st, res->changes[i].id, now, "decision", dt,
                             e);
        free(dt);
    }
    if (rc == EF_OK && accepted) {
        char why[300];
        snprintf(why, sizeof why, "submit %s", j->id);
        rc = store_plan_put(s->st, s->version + 1, now, why,
                            res->p.admitted, plan_text, e);
    }
    if (rc == EF_OK)
        rc = store_commit(s->st, e);
    if (rc != EF_OK) {
        store_rollback(s->st);
        return EF_ERR;
    }
    return EF_OK;
}

void svc_submit(svc *s, const store_ident *who, const char *body,
                size_t len, int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    const char *id = NULL;
    json_t *req = check_request(body, len, &id, r);
    if (!req) {
        svc_lock(s);
        s->sub_errors++;
        svc_unlock(s);
        return;
    }
    char *canon = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
    ef_err e = {0};
    svc_lock(s);
    store_job old;
    memset(&old, 0, sizeof old);
    int have = store_job_get(s->st, id, &old, &e);
    int replace = 0;
    if (have < 0) {
        reply_internal(r, &e);
        goto out;
    }
    if (have && strcmp(old.owner, who->name) != 0) {
        char m[400];
        snprintf(m, sizeof m, "job id \"%s\" is taken by another user "
                 "(choose another id)", id);
        svc_reply_error(r, 409, "id", m);
        s->sub_errors++;
        goto out;
    }
    if (have && strcmp(old.request, canon) == 0) {
        /* a retry: the first answer, unchanged */
        ef_buf b = {0};
        ef_buf_put(&b, old.answer);
        ef_buf_put(&b, "\n");
        reply_take(r, 200, b.s, "application/json");
        s->sub_retries++;
        goto out;
    }
    if (have && strcmp(old.state, "rejected") != 0) {
        char m[400];
        snprintf(m, sizeof m, "job \"%s\" was already submitted with "
                 "another body (state %s): a job id is submitted once "
                 "(cancel it, or use another id)", id, old.state);
        svc_reply_error(r, 409, "id", m);
        s->sub_errors++;
        goto out;
    }
    replace = have;
    plan_submit_clock clk = {.now = -1, .wall = now};
    /* res: heap, as it becomes the current plan's owner when accepted */
    plan_submit_res *res = ef_calloc(1, sizeof *res);
    if (plan_submit_doc("the service's plan", &s->doc, body, &s->cs, &clk,
                        res, &e) != EF_OK) {
        /* the plan is the service's own: an input error is the job's */
        if (e.kind == EF_E_INPUT)
            reply_job_error(r, &e);
        else
            reply_internal(r, &e);
        s->sub_errors++;
        plan_submit_free(res);
        free(res);
        goto out;
    }
    int accepted = res->decision != PLAN_REJECTED;
    int64_t version = accepted ? s->version + 1 : s->version;
    json_t *ans = answer_of(res, id, version);
    char *ans_text = json_dumps(ans, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *jb = job_to_json(&res->q.jobs[res->q.n - 1]);
    char *body_text = json_dumps(jb, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(jb);
    char *pt = NULL;
    size_t pl = 0;
    plan_doc nd;
    memset(&nd, 0, sizeof nd);
    if (accepted)
        pt = plan_text(s, &res->p, &nd, &pl);
    store_job j = {
        .id = (char *)id, .owner = (char *)who->name, .body = body_text,
        .request = canon,
        .decision = (char *)plan_decision_name(res->decision),
        .answer = ans_text, .state = accepted ? "queued" : "rejected",
        .progress = 0, .submitted = now, .updated = now};
    if (commit_submit(s, &j, res, pt, now, replace, &e) != EF_OK) {
        reply_internal(r, &e);
        s->sub_errors++;
        free(pt);
    } else {
        s->sub_by_dec[res->decision == PLAN_ADMITTED      ? 0
                      : res->decision == PLAN_BEST_EFFORT ? 1
                                                          : 2]++;
        reply_json(r, 201, json_incref(ans));
        if (accepted) {
            /* the new plan, as its text reads back (planio's round trip),
             * without reading the text again */
            use_plan(s, &nd, res, pt, pl, version);
            memset(&nd, 0, sizeof nd);
            res = NULL;
            if (s->notify)
                s->notify(s->notify_arg, "a submission");
        }
    }
    plan_doc_free(&nd);
    json_decref(ans);
    free(ans_text);
    free(body_text);
    if (res) {
        plan_submit_free(res);
        free(res);
    }
out:
    svc_unlock(s);
    if (have > 0)
        store_job_free(&old);
    free(canon);
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
    svc_lock(s);
    if (store_jobs_list(s->st, all ? NULL : who->name, state, &rows, &n,
                        &e) != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, job_view(s, &rows[i], now, 0, &e));
    svc_unlock(s);
    store_jobs_free(rows, n);
    json_t *v = json_object();
    json_object_set_new(v, "jobs", arr);
    reply_json(r, 200, v);
}

/* The job 'id' for 'who': 1 (*j filled), or 0 with *r the error (404,
 * 403, 500). Under the lock. */
static int own_job(svc *s, const store_ident *who, const char *id,
                   store_job *j, svc_reply *r)
{
    ef_err e = {0};
    int have = store_job_get(s->st, id, j, &e);
    if (have < 0) {
        reply_internal(r, &e);
        return 0;
    }
    char m[400];
    if (!have) {
        snprintf(m, sizeof m, "no job \"%.300s\"", id);
        svc_reply_error(r, 404, NULL, m);
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
    svc_lock(s);
    if (!own_job(s, who, id, &j, r)) {
        svc_unlock(s);
        return;
    }
    json_t *v = job_view(s, &j, now, 1, &e);
    svc_unlock(s);
    store_job_free(&j);
    if (!v)
        reply_internal(r, &e);
    else
        reply_json(r, 200, v);
}

void svc_explain(svc *s, const store_ident *who, const char *id,
                 svc_reply *r)
{
    memset(r, 0, sizeof *r);
    store_job j;
    ef_err e = {0};
    svc_lock(s);
    if (!own_job(s, who, id, &j, r)) {
        svc_unlock(s);
        return;
    }
    /* the current plan's text, copied: explained outside the lock (the
     * curves never change while the service runs) */
    size_t len = s->plan_len;
    char *t = ef_malloc(len + 1);
    memcpy(t, s->plan_text, len);
    t[len] = '\0';
    svc_unlock(s);
    plan_doc d;
    xpl x;
    int in = 0;                /* the plan holds the job */
    int rc = plan_doc_parse(&d, "the service's plan", t, len, &e);
    for (int i = 0; rc == EF_OK && i < d.njobs && !in; i++)
        in = strcmp(d.jobs[i].id, id) == 0;
    if (rc == EF_OK && in) {
        rc = xpl_build(&x, &d, "the service's plan", id, &s->cs, NULL, &e);
    } else if (rc == EF_OK && strcmp(j.decision, "rejected") == 0) {
        /* rejected jobs stay out of the plan: the answer says why */
        json_t *a = json_loads(j.answer, 0, NULL);
        const json_t *why = json_object_get(a, "reason");
        const json_t *ef = json_object_get(a, "earliest_feasible_deadline");
        rc = xpl_build_rejected(&x, &d, "the service's plan", j.body,
                                json_is_string(why) ? json_string_value(why)
                                                    : NULL,
                                json_is_integer(ef) ? json_integer_value(ef)
                                                    : -1, &s->cs, &e);
        json_decref(a);
    } else if (rc == EF_OK) {
        rc = ef_fail(&e, EF_E_INPUT, "job \"%.300s\" is not in the current "
                     "plan (it is %s): nothing to explain", id, j.state);
    }
    plan_doc_free(&d);
    store_job_free(&j);
    free(t);
    if (rc != EF_OK) {
        if (e.kind == EF_E_INPUT)
            svc_reply_error(r, 404, NULL, e.msg);
        else
            reply_internal(r, &e);
        return;
    }
    size_t n;
    char *body = xpl_json(&x, &n);
    xpl_free(&x);
    reply_take(r, 200, body, "application/json");
}

/* ---- re-planning the queue -------------------------------------------------- */

/* Re-plan the current plan's queue without the jobs whose store state is
 * "cancelled" and without 'drop' (NULL: none). 1 when every job the
 * current plan admits that stays in the queue is admitted by the new
 * plan: *text (heap) and *admitted are the new plan's; 0 when a promise
 * would break (*broken: the first such id, borrowed from the plan);
 * EF_ERR on an error. Under the lock. */
/* Plan the queue 'qv' ({"jobs": [...]}, taken) with 'po' on cluster
 * 'c' and check the plan: *q and *p (freed on error; empty then). */
static int plan_queue(svc *s, json_t *qv, const plan_opts *po,
                      const cluster *c, job_queue *q, plan *p, ef_err *e)
{
    char *nq = json_dumps(qv, JSON_COMPACT);
    json_decref(qv);
    memset(p, 0, sizeof *p);
    int rc = queue_parse_json(q, "the service's queue", nq, strlen(nq), e);
    free(nq);
    if (rc == EF_OK)
        rc = queue_resolve(q, &s->cs, e);
    if (rc == EF_OK)
        rc = plan_build(p, q, c, po, e);
    if (rc == EF_OK && plan_check(p, e) != EF_OK) {
        ef_prefix(e, "the service's plan fails its check: ");
        rc = EF_ERR;
    }
    if (rc != EF_OK) {
        plan_free(p);
        queue_free(q);
    }
    return rc;
}

static int replan_queue(svc *s, const char *drop, char **text, size_t *len,
                        int *admitted, const char **broken, ef_err *e)
{
    *text = NULL;
    *broken = NULL;
    store_job *cx = NULL;
    int ncx = 0;
    if (store_jobs_list(s->st, NULL, "cancelled", &cx, &ncx, e) != EF_OK)
        return EF_ERR;
    const plan_doc *d = &s->doc;
    char *qt = plan_doc_queue_json(d, NULL);
    json_t *qv = json_loads(qt, 0, NULL);
    free(qt);
    json_t *arr = json_object_get(qv, "jobs");
    /* keep[i]: doc job i stays in the queue */
    char *keep = ef_calloc((size_t)d->njobs + 1, 1);
    json_t *kept = json_array();
    for (int i = 0; i < d->njobs; i++) {
        int out = drop && strcmp(d->jobs[i].id, drop) == 0;
        for (int k = 0; k < ncx && !out; k++)
            out = strcmp(cx[k].id, d->jobs[i].id) == 0;
        keep[i] = (char)!out;
        if (!out)
            json_array_append(kept, json_array_get(arr, (size_t)i));
    }
    store_jobs_free(cx, ncx);
    json_object_set_new(qv, "jobs", kept);
    job_queue q;
    plan p;
    plan_opts po;
    plan_doc_opts(d, &po);
    /* the plan's own cluster: the nodes it runs on (node_map) */
    cluster dc;
    int rc = cluster_init(&dc, 1, d->cluster.nodes, d->cluster.gpus_per_node,
                          "the service's cluster", e);
    if (rc == EF_OK)
        rc = plan_queue(s, qv, &po, &dc, &q, &p, e);
    else
        json_decref(qv);
    if (rc != EF_OK) {
        free(keep);
        return EF_ERR;
    }
    int ok = 1, k = 0;
    for (int i = 0; i < d->njobs; i++) {
        if (!keep[i])
            continue;
        if (ok && d->jobs[i].decision == PLAN_ADMITTED &&
            p.jobs[k].decision != PLAN_ADMITTED) {
            ok = 0;
            *broken = d->jobs[i].id;
        }
        k++;
    }
    free(keep);
    if (ok) {
        *admitted = p.admitted;
        plan_doc nd;
        *text = plan_text(s, &p, &nd, len);
        plan_doc_free(&nd);
    }
    plan_free(&p);
    queue_free(&q);
    return ok;
}

/* ---- cancel ------------------------------------------------------------------ */

void svc_cancel(svc *s, const store_ident *who, const char *id, int64_t now,
                svc_reply *r)
{
    memset(r, 0, sizeof *r);
    store_job j;
    ef_err e = {0};
    svc_lock(s);
    if (!own_job(s, who, id, &j, r)) {
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
    char *pt = NULL;
    size_t pl = 0;
    int adm = 0;
    const char *broken = NULL;
    int freed = 0;
    if (plan_find(s, id)) {
        freed = replan_queue(s, id, &pt, &pl, &adm, &broken, &e);
        if (freed < 0) {
            reply_internal(r, &e);
            goto out;
        }
    }
    int64_t version = freed ? s->version + 1 : s->version;
    json_t *d = json_object();
    json_object_set_new(d, "by", json_string(who->name));
    json_object_set_new(d, "reservation_freed", json_boolean(freed));
    char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    char why[300];
    snprintf(why, sizeof why, "cancel %s", id);
    int rc = store_begin(s->st, &e);
    if (rc == EF_OK) {
        int got = store_job_update(s->st, id, "cancelled", j.progress, now,
                                   &e);
        rc = got < 0 ? EF_ERR : EF_OK;
    }
    if (rc == EF_OK)
        rc = store_event_add(s->st, id, now, "cancelled", dt, &e);
    if (rc == EF_OK && freed)
        rc = store_plan_put(s->st, version, now, why, adm, pt, &e);
    if (rc == EF_OK)
        rc = store_commit(s->st, &e);
    free(dt);
    if (rc != EF_OK) {
        store_rollback(s->st);
        free(pt);
        reply_internal(r, &e);
        goto out;
    }
    if (freed && set_plan(s, pt, pl, version, &e) != EF_OK) {
        reply_internal(r, &e);
        goto out;
    }
    if (s->notify)
        s->notify(s->notify_arg, "a cancel");
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(id));
    json_object_set_new(v, "plan_version", json_integer(s->version));
    json_object_set_new(v, "reservation_freed", json_boolean(freed));
    if (!freed && broken) {
        char m[400];
        snprintf(m, sizeof m, "its reservation is kept until a re-plan can "
                 "free it: planning the queue without it would break the "
                 "promise made to job \"%s\"", broken);
        json_object_set_new(v, "reason", jstr(m));
    }
    json_object_set_new(v, "state", json_string("cancelled"));
    reply_json(r, 200, v);
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
                          const char *why, placement *want, svc_loop_res *res,
                          ef_err *e);

void svc_replan(svc *s, const store_ident *who, int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    if (who && !who->op) {
        svc_reply_error(r, 403, NULL, "re-planning the queue is for "
                        "operators");
        return;
    }
    ef_err e = {0};
    char *pt = NULL;
    size_t pl = 0;
    int adm = 0;
    const char *broken = NULL;
    svc_lock(s);
    if (s->nobs >= 0) {
        /* the loop runs: re-plan from what it last saw */
        svc_loop_res lr;
        char snap[4096];
        int rc = reality_replan(s, s->obs, s->nobs, now,
                                who ? "replan" : "daily replan", NULL, &lr,
                                &e);
        if (rc == EF_OK)
            rc = write_snapshot(s, s->plan_text, s->plan_len, now,
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
            s->notify(s->notify_arg, "an operator's re-plan");
        json_t *v = json_object();
        json_object_set_new(v, "admitted",
                            json_integer(s->doc.summary.admitted));
        json_object_set_new(v, "at_risk", json_integer(lr.at_risk));
        json_object_set_new(v, "changed", json_true());
        json_object_set_new(v, "plan_version", json_integer(s->version));
        json_object_set_new(v, "reason", json_null());
        json_object_set_new(v, "snapshot", jstr(snap));
        svc_unlock(s);
        reply_json(r, 200, v);
        return;
    }
    int ok = replan_queue(s, NULL, &pt, &pl, &adm, &broken, &e);
    if (ok < 0) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    int changed = ok && (pl != s->plan_len ||
                         memcmp(pt, s->plan_text, pl) != 0);
    int64_t version = changed ? s->version + 1 : s->version;
    char snap[4096];
    json_t *d = json_object();
    json_object_set_new(d, "by", json_string(who ? who->name : "daily"));
    json_object_set_new(d, "changed", json_boolean(changed));
    json_object_set_new(d, "plan_version", json_integer(version));
    char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    int rc = write_snapshot(s, changed ? pt : s->plan_text,
                            changed ? pl : s->plan_len, now, version, snap,
                            sizeof snap, &e);
    if (rc == EF_OK)
        rc = store_begin(s->st, &e);
    if (rc == EF_OK && changed)
        rc = store_plan_put(s->st, version, now, "replan", adm, pt, &e);
    if (rc == EF_OK)
        rc = store_event_add(s->st, NULL, now, "replanned", dt, &e);
    if (rc == EF_OK)
        rc = store_commit(s->st, &e);
    free(dt);
    if (rc != EF_OK) {
        store_rollback(s->st);
        free(pt);
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    if (changed) {
        if (set_plan(s, pt, pl, version, &e) != EF_OK) {
            svc_unlock(s);
            reply_internal(r, &e);
            return;
        }
        if (s->notify)
            s->notify(s->notify_arg, "an operator's re-plan");
    } else {
        free(pt);
    }
    json_t *v = json_object();
    json_object_set_new(v, "admitted", json_integer(s->doc.summary.admitted));
    json_object_set_new(v, "changed", json_boolean(changed));
    json_object_set_new(v, "plan_version", json_integer(s->version));
    char m[400];
    if (!ok) {
        snprintf(m, sizeof m, "the current plan is kept: planning the queue "
                 "afresh would break the promise made to job \"%s\"",
                 broken);
        json_object_set_new(v, "reason", jstr(m));
    } else {
        json_object_set_new(v, "reason", json_null());
    }
    json_object_set_new(v, "snapshot", jstr(snap));
    svc_unlock(s);
    reply_json(r, 200, v);
}

/* ---- plan, queue, health, metrics ------------------------------------------ */

void svc_plan(svc *s, svc_reply *r, int64_t *version)
{
    memset(r, 0, sizeof *r);
    svc_lock(s);
    char *t = ef_malloc(s->plan_len + 1);
    memcpy(t, s->plan_text, s->plan_len);
    t[s->plan_len] = '\0';
    *version = s->version;
    svc_unlock(s);
    reply_take(r, 200, t, "application/json");
}

void svc_queue(svc *s, const store_ident *who, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    ef_err e = {0};
    store_job *rows = NULL;
    int n = 0;
    svc_lock(s);
    if (store_jobs_list(s->st, who->op ? NULL : who->name, NULL, &rows, &n,
                        &e) != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
    ef_buf b = {0};
    ef_buf_put(&b, "{\"jobs\": [");
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!live_state(rows[i].state))
            continue;
        ef_buf_printf(&b, "%s%s", m++ ? ", " : "", rows[i].body);
    }
    ef_buf_put(&b, "]}");
    svc_unlock(s);
    store_jobs_free(rows, n);
    job_queue q;
    if (queue_parse_json(&q, "the service's queue", b.s, b.n, &e) != EF_OK) {
        free(b.s);
        queue_free(&q);
        reply_internal(r, &e);
        return;
    }
    free(b.s);
    char *t = queue_write_json(q.jobs, q.n, NULL);
    queue_free(&q);
    reply_take(r, 200, t, "application/json");
}

void svc_health(svc *s, int64_t now, svc_reply *r)
{
    memset(r, 0, sizeof *r);
    svc_lock(s);
    json_t *v = json_object();
    json_object_set_new(v, "epoch", json_integer(s->doc.now));
    json_object_set_new(v, "jobs", json_integer(s->doc.njobs));
    json_object_set_new(v, "time", json_integer(now));
    json_object_set_new(v, "version", json_string(EFPLAN_VERSION));
    json_object_set_new(v, "plan_version", json_integer(s->version));
    json_object_set_new(v, "status", json_string("ok"));
    svc_unlock(s);
    reply_json(r, 200, v);
}

void svc_observe_submit(svc *s, double seconds)
{
    svc_lock(s);
    s->lat_count++;
    s->lat_sum += seconds;
    for (int i = 0; i < NLAT; i++)
        if (seconds <= lat_le[i])
            s->lat_bucket[i]++;
    ef_lat_add(&s->lat_recent, seconds);
    svc_unlock(s);
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
    svc_lock(s);
    if (store_jobs_count(s->st, count_state, per, &e) != EF_OK) {
        svc_unlock(s);
        reply_internal(r, &e);
        return;
    }
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
                  "efplan_submission_errors_total %" PRId64 "\n",
                  s->sub_retries, s->sub_errors);
    ef_buf_put(&b, "# HELP efplan_jobs Jobs in the store, by state.\n"
               "# TYPE efplan_jobs gauge\n");
    for (int i = 0; i < NSTATES; i++)
        ef_buf_printf(&b, "efplan_jobs{state=\"%s\"} %" PRId64 "\n",
                      states[i], per[i]);
    ef_buf_printf(&b, "# HELP efplan_promised_gpu_hours GPU-hours the "
                  "current plan reserves for admitted jobs.\n"
                  "# TYPE efplan_promised_gpu_hours gauge\n"
                  "efplan_promised_gpu_hours %.3f\n"
                  "# HELP efplan_plan_version Version of the current plan.\n"
                  "# TYPE efplan_plan_version gauge\n"
                  "efplan_plan_version %" PRId64 "\n",
                  s->doc.summary.promised_gpu_hours, s->version);
    ef_buf_printf(&b, "# HELP efplan_jobs_at_risk Admitted jobs the current "
                  "plan cannot bring in by their deadline any more.\n"
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
                  s->doc.summary.at_risk, s->loop_replans, s->loop_restarts,
                  s->loop_failed, s->loop_lag);
    ef_buf_put(&b, "# HELP efplan_submit_latency_seconds Time to answer a "
               "submission.\n"
               "# TYPE efplan_submit_latency_seconds histogram\n");
    for (int i = 0; i < NLAT; i++)
        ef_buf_printf(&b, "efplan_submit_latency_seconds_bucket{le=\"%g\"} "
                      "%" PRId64 "\n", lat_le[i], s->lat_bucket[i]);
    ef_buf_printf(&b, "efplan_submit_latency_seconds_bucket{le=\"+Inf\"} "
                  "%" PRId64 "\n"
                  "efplan_submit_latency_seconds_sum %.6f\n"
                  "efplan_submit_latency_seconds_count %" PRId64 "\n",
                  s->lat_count, s->lat_sum, s->lat_count);
    ef_lat_summary ls;
    ef_lat_summarise(&s->lat_recent, &ls);
    ef_buf_printf(&b, "# HELP efplan_submit_latency_recent_seconds Time to "
                  "answer a submission over the last %d submissions "
                  "(quantile 1: the longest).\n"
                  "# TYPE efplan_submit_latency_recent_seconds gauge\n"
                  "efplan_submit_latency_recent_seconds{quantile=\"0.5\"} "
                  "%.6f\n"
                  "efplan_submit_latency_recent_seconds{quantile=\"0.99\"} "
                  "%.6f\n"
                  "efplan_submit_latency_recent_seconds{quantile=\"1\"} "
                  "%.6f\n", LAT_WINDOW, ls.p50, ls.p99,
                  ls.top);
    svc_unlock(s);
    reply_take(r, 200, b.s, "text/plain; version=0.0.4");
}

/* ---- the closed loop ----------------------------------------------------------- */

void svc_set_notify(svc *s, void (*fn)(void *arg, const char *why),
                    void *arg)
{
    s->notify = fn;
    s->notify_arg = arg;
}

void svc_set_margin(svc *s, int64_t seconds)
{
    s->margin = seconds > 0 ? seconds : 0;
}

int64_t svc_version(svc *s)
{
    return s->version;
}

const cluster *svc_cluster(const svc *s) { return &s->c; }
const curve_set *svc_curves(const svc *s) { return &s->cs; }
int svc_slot(const svc *s) { return s->doc.slot_seconds; }
int svc_overhead(const svc *s)
{
    return s->doc.overhead ? ovh_parse(s->doc.overhead) : OVH_NONE;
}

int svc_loop_jobs(svc *s, const char *const *extra, int nextra,
                  job_queue *q, int **adm, ef_err *e)
{
    memset(q, 0, sizeof *q);
    *adm = NULL;
    store_job *rows = NULL;
    int n = 0;
    if (store_jobs_list(s->st, NULL, NULL, &rows, &n, e) != EF_OK)
        return EF_ERR;
    ef_buf b = {0};
    ef_buf_put(&b, "{\"jobs\": [");
    int m = 0;
    int *a = ef_malloc(((size_t)n + 1) * sizeof *a);
    for (int i = 0; i < n; i++) {
        int take = live_state(rows[i].state);
        for (int k = 0; k < nextra && !take; k++)
            take = strcmp(extra[k], rows[i].id) == 0;
        if (!take)
            continue;
        a[m] = strcmp(rows[i].decision, "admitted") == 0;
        /* its progress as the store has it */
        json_t *bj = json_loads(rows[i].body, 0, NULL);
        json_t *it = json_object_get(bj, "iterations");
        if (json_is_integer(it) && rows[i].progress > 0 &&
            !json_object_get(bj, "samples"))
            json_object_set_new(bj, "iterations_done", json_integer(
                rows[i].progress < json_integer_value(it)
                    ? rows[i].progress : json_integer_value(it) - 1));
        char *bt = json_dumps(bj, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(bj);
        ef_buf_printf(&b, "%s%s", m++ ? ", " : "", bt ? bt : rows[i].body);
        free(bt);
    }
    ef_buf_put(&b, "]}");
    store_jobs_free(rows, n);
    int rc = queue_parse_json(q, "the service's queue", b.s, b.n, e);
    free(b.s);
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

/* The JSON placement of 'pl' (cluster node numbers) in plan node numbers
 * through rmap (cluster node -> plan node, -1: not usable), or NULL when
 * it touches a node that is not usable or does not follow the buddy rule
 * on cluster pc (the job is then moved). */
static json_t *plan_place(const placement *pl, const int *rmap,
                          int rmax, const cluster *pc)
{
    if (pl->n == 0)
        return NULL;
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
    json_t *v = NULL;
    if (ok) {
        char *t = placement_json(&m);
        v = json_loads(t, 0, NULL);
        free(t);
    }
    free(ps.gpu);
    placement_free(&m);
    return v;
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
        const plan_doc_job *dj = plan_find(s, ob->id);
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
    res->next = now + s->doc.slot_seconds;
    return EF_OK;
}

/* The re-plan from reality (svc.h: svc_loop_replan), for the loop and for
 * the operators' re-plan. */
static int reality_replan(svc *s, const svc_obs *obs, int nobs, int64_t now,
                          const char *why, placement *want, svc_loop_res *res,
                          ef_err *e)
{
    /* map, nmap: the usable nodes; rmap: cluster node -> plan node */
    long *map = NULL;
    int nmap = 0, rc = EF_OK;
    int G = s->c.gpus_per_node;
    for (int k = 0; want && k < nobs; k++)
        memset(&want[k], 0, sizeof want[k]);
    if (usable_nodes(s, &map, &nmap, e) != EF_OK)
        return EF_ERR;
    if (nmap == 0) {
        free(map);
        return no_node(s, obs, nobs, now, res, e);
    }
    int *rmap = ef_malloc((size_t)s->c.nodes * sizeof *rmap);
    for (int k = 0; k < s->c.nodes; k++)
        rmap[k] = -1;
    for (int k = 0; k < nmap; k++)
        rmap[map[k]] = k;
    cluster pc;
    if (cluster_init(&pc, 1, nmap, G, "the service's cluster", e) != EF_OK) {
        free(map);
        free(rmap);
        return EF_ERR;
    }
    /* cx: cancelled jobs, which leave the queue */
    store_job *cx = NULL;
    int ncx = 0;
    if (store_jobs_list(s->st, NULL, "cancelled", &cx, &ncx, e) != EF_OK) {
        free(map);
        free(rmap);
        return EF_ERR;
    }
    const plan_doc *d = &s->doc;
    char *qt = plan_doc_queue_json(d, NULL);
    json_t *qv = json_loads(qt, 0, NULL);
    free(qt);
    json_t *arr = json_object_get(qv, "jobs");
    json_t *kept = json_array();
    for (int i = 0; i < d->njobs; i++) {
        const plan_doc_job *dj = &d->jobs[i];
        int out = 0;
        for (int k = 0; k < ncx && !out; k++)
            out = strcmp(cx[k].id, dj->id) == 0;
        const svc_obs *ob = obs_find(obs, nobs, dj->id);
        if (out || (ob && (ob->state == SVC_OBS_DONE ||
                           ob->state == SVC_OBS_FAILED)))
            continue;
        json_t *jo = json_deep_copy(json_array_get(arr, (size_t)i));
        json_object_del(jo, "placement");
        if (ob && dj->eb) {
            double sd = (double)ob->progress * (double)dj->batch_size;
            if (sd > dj->samples - 1)
                sd = dj->samples - 1;
            if (sd > dj->samples_done)
                json_object_set_new(jo, "samples_done",
                                    json_integer((json_int_t)sd));
        } else if (ob) {
            /* iters: the job's own iterations (the store's), not the
             * scaled ones of the plan before */
            int64_t iters = ob->iterations > 0 ? ob->iterations
                                               : dj->iterations;
            int64_t p = ob->progress < iters ? ob->progress : iters - 1;
            if (p < 0)
                p = 0;
            int64_t left = iters - p;
            if (ob->speed > 0 && ob->speed < 1) {
                double sc = ceil((double)left / ob->speed);
                left = sc < 1e15 ? (int64_t)sc : (int64_t)1e15;
            }
            json_object_set_new(jo, "iterations", json_integer(p + left));
            json_object_set_new(jo, "iterations_done", json_integer(p));
        }
        json_t *pv = ob && ob->state == SVC_OBS_RUNNING
                         ? plan_place(&ob->place, rmap, s->c.nodes, &pc)
                         : NULL;
        if (pv) {
            json_object_set_new(jo, "placement", pv);
            if (ob->owed >= 1)
                json_object_set_new(jo, "overhead_owed", json_integer(
                    ob->owed < 86400 ? (json_int_t)ceil(ob->owed) : 86400));
        }
        if (dj->decision == PLAN_ADMITTED)
            json_object_set_new(jo, "promised", json_integer(1));
        json_array_append_new(kept, jo);
    }
    json_object_set_new(qv, "jobs", kept);
    job_queue q;
    plan p;
    plan_opts po;
    plan_doc_opts(d, &po);
    po.now = now;
    po.deadline_margin = s->margin;
    rc = plan_queue(s, qv, &po, &pc, &q, &p, e);
    if (rc != EF_OK) {
        store_jobs_free(cx, ncx);
        free(map);
        free(rmap);
        return EF_ERR;
    }
    /* the new plan's text, with its node map */
    long *old_map = s->map;
    int old_nmap = s->nmap;
    s->map = nmap < s->c.nodes ? map : NULL;
    s->nmap = nmap < s->c.nodes ? nmap : 0;
    if (!s->map)
        free(map);
    plan_doc nd;
    size_t len = 0;
    char *text = plan_text(s, &p, &nd, &len);
    int64_t version = s->version + 1;
    int newly = 0;
    /* commit: the jobs as seen, their risks, the plan */
    rc = store_begin(s->st, e);
    for (int k = 0; rc == EF_OK && k < nobs; k++) {
        const svc_obs *ob = &obs[k];
        int cancelled = 0;
        for (int c = 0; c < ncx && !cancelled; c++)
            cancelled = strcmp(cx[c].id, ob->id) == 0;
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
            s->loop_failed++;
        }
        if (rc == EF_OK && (ob->state == SVC_OBS_DONE ||
                            ob->state == SVC_OBS_FAILED || cancelled) &&
            store_job_set_risk(s->st, ob->id, NULL, now, e) < 0)
            rc = EF_ERR;
    }
    /* risky: live jobs the store has a risk for (a re-plan before, or
     * no usable node) */
    store_job *rq = NULL, *rr = NULL;
    int nrq = 0, nrr = 0;
    if (rc == EF_OK &&
        (store_jobs_list(s->st, NULL, "queued", &rq, &nrq, e) != EF_OK ||
         store_jobs_list(s->st, NULL, "running", &rr, &nrr, e) != EF_OK))
        rc = EF_ERR;
    res->at_risk = 0;
    res->newly[0] = '\0';
    for (int i = 0; rc == EF_OK && i < p.njobs; i++) {
        const plan_job *j = &p.jobs[i];
        const plan_doc_job *old = plan_find(s, j->in->id);
        int was = old && old->at_risk;
        for (int k = 0; k < nrq && !was; k++)
            was = rq[k].risk && strcmp(rq[k].id, j->in->id) == 0;
        for (int k = 0; k < nrr && !was; k++)
            was = rr[k].risk && strcmp(rr[k].id, j->in->id) == 0;
        int is = j->decision == PLAN_ADMITTED && j->at_risk;
        res->at_risk += is;
        if (is) {
            char rt[400];
            risk_text(j, obs_find(obs, nobs, j->in->id), s->margin, rt,
                      sizeof rt);
            if (store_job_set_risk(s->st, j->in->id, rt, now, e) < 0)
                rc = EF_ERR;
            if (rc == EF_OK && !was) {
                newly++;
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
        } else if (was) {
            if (store_job_set_risk(s->st, j->in->id, NULL, now, e) < 0)
                rc = EF_ERR;
            if (rc == EF_OK)
                rc = store_event_add(s->st, j->in->id, now, "on_time", NULL,
                                     e);
        }
    }
    store_jobs_free(rq, nrq);
    store_jobs_free(rr, nrr);
    if (rc == EF_OK)
        rc = store_plan_put(s->st, version, now, why, p.admitted, text, e);
    if (rc == EF_OK)
        rc = store_commit(s->st, e);
    store_jobs_free(cx, ncx);
    free(rmap);
    if (rc != EF_OK) {
        store_rollback(s->st);
        free(text);
        plan_doc_free(&nd);
        free(s->map);
        s->map = old_map;
        s->nmap = old_nmap;
        plan_free(&p);
        queue_free(&q);
        return EF_ERR;
    }
    /* the new plan is the current one; it borrows p and q, which are
     * read back from its text to own them */
    plan_doc_free(&nd);
    if (set_plan(s, text, len, version, e) != EF_OK) {
        free(old_map);
        plan_free(&p);
        queue_free(&q);
        return EF_ERR;
    }
    free(old_map);
    s->loop_replans++;
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
        w->n = al->gpus;
        w->node = ef_malloc((size_t)al->gpus * sizeof(int));
        w->gpu = ef_malloc((size_t)al->gpus * sizeof(int));
        w->batch = al->batch;
        for (int k = 0; k < al->gpus; k++) {
            w->node[k] = real_node(s, al->gpu[k] / G);
            w->gpu[k] = al->gpu[k] % G;
        }
    }
    plan_free(&p);
    queue_free(&q);
    return EF_OK;
}

int svc_loop_replan(svc *s, const svc_obs *obs, int nobs, int64_t now,
                    const char *why, placement *want, svc_loop_res *res,
                    ef_err *e)
{
    if (reality_replan(s, obs, nobs, now, why, want, res, e) != EF_OK)
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
    s->loop_restarts += strcmp(kind, "restart") == 0;
    s->loop_lag += strcmp(kind, "lag") == 0;
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
 * into dst, "" for none; 0, or -1 with msg (a 400's). */
static int drain_reason(const char *body, size_t len, char *dst, size_t n,
                        char *msg, size_t mlen)
{
    dst[0] = '\0';
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
            snprintf(msg, mlen, "request body: unknown key %s (expected "
                     "\"reason\")", ef_quote(k, q, sizeof q));
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
        if (rc)
            break;
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
    reply_json(r, 200, v);
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
    char reason[256], rm[300];
    if (drain_reason(body ? body : "", body ? len : 0, reason, sizeof reason,
                     rm, sizeof rm) != 0) {
        svc_reply_error(r, 400, "reason", rm);
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
    reply_json(r, 200, v);
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
