/* explain.c: why a job of a plan got what it got (see explain.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "planner/explain.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonin.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "planner/submit.h"

/* ---- the format (efplan-explain): one table per object ------------------ */

#define TIME_MAX EF_MAX_I64
#define XT(k, kd, fl, m) JF_F(k, kd, fl, xpl, m)
#define NULLTIME(k, m) \
    {XT(k, JF_I64, JF_REQ | JF_NULLABLE, m), .nul = -1, .min = 0, \
     .max = TIME_MAX}

static const jf_field iv_fields[] = {
    {JF_F("end", JF_I64, JF_REQ, xpl_iv, end), .min = 0, .max = TIME_MAX},
    {JF_F("gpus", JF_INT, JF_REQ, xpl_iv, gpus), .min = 1, .max = 1 << 20},
    {JF_F("others_held", JF_INT, JF_REQ, xpl_iv, others_held), .min = 0,
     .max = 1 << 20},
    {JF_F("others_reserved", JF_INT, JF_REQ | JF_NULLABLE, xpl_iv,
          others_reserved), .nul = -1, .min = 0, .max = 1 << 20},
    {JF_F("reserved", JF_INT, JF_REQ | JF_NULLABLE, xpl_iv, reserved),
     .nul = -1, .min = 0, .max = 1 << 20},
    {JF_F("start", JF_I64, JF_REQ, xpl_iv, start), .min = 0,
     .max = TIME_MAX},
};
static const jf_table iv_table = JF_TABLE(xpl_iv, &jw_inline_obj, iv_fields);

static const jf_field seg_fields[] = {
    {JF_F("end", JF_I64, JF_REQ, seg, end), .min = 0, .max = TIME_MAX},
    {JF_F("gpus", JF_INT, JF_REQ, seg, gpus), .min = 1, .max = 1 << 20},
    {JF_F("start", JF_I64, JF_REQ, seg, start), .min = 0, .max = TIME_MAX},
};
static const jf_table seg_table = JF_TABLE(seg, &jw_inline_obj, seg_fields);

static const jf_field holder_fields[] = {
    {JF_F("deadline", JF_I64, JF_REQ, xpl_holder, deadline), .min = 0,
     .max = TIME_MAX},
    {JF_F("gpu_seconds", JF_G10, JF_REQ, xpl_holder, gpu_seconds)},
    {JF_F("id", JF_STR, JF_REQ | JF_NONEMPTY, xpl_holder, id),
     .maxlen = 255},
    {JF_F("reserved_gpu_seconds", JF_G10, JF_REQ, xpl_holder,
          reserved_gpu_seconds)},
};
static const jf_table holder_table = JF_TABLE(xpl_holder, &jw_inline_obj,
                                              holder_fields);

static const jf_field top_fields[] = {
    {XT("alone_ok", JF_FLAG, 0, alone_ok)},
    {XT("at_risk", JF_FLAG, 0, at_risk)},
    {XT("cluster_gpus", JF_INT, JF_REQ, cluster_gpus), .min = 1,
     .max = 1 << 20},
    NULLTIME("deadline", deadline),
    {XT("decision", JF_ENUM, JF_REQ, decision), .names = plan_decision_names,
     .nnames = 4},
    NULLTIME("earliest_feasible_deadline", earliest_feasible_deadline),
    {XT("explanation", JF_STR, 0, explanation)},
    {XT("fastest_alone", JF_I64, JF_NULLABLE, fastest_alone), .nul = -1,
     .cond = offsetof(xpl, has_alone) + 1, .min = 0, .max = TIME_MAX},
    {.key = "format", .kind = JF_CONST, .sval = "efplan-explain",
     .hint = "what efplan explain --json or GET /v1/jobs/ID/explain gives"},
    {XT("gpu_seconds", JF_G10, JF_REQ, gpu_seconds)},
    {XT("holders", JF_ARR, JF_REQ, holders), .sub = &holder_table,
     .cnt = offsetof(xpl, nholders), .style = &jw_block_arr},
    {XT("id", JF_STR, JF_REQ | JF_NONEMPTY, id), .maxlen = 255},
    {XT("intervals", JF_ARR, JF_REQ, iv), .sub = &iv_table,
     .cnt = offsetof(xpl, niv), .style = &jw_block_arr},
    {XT("model", JF_STR, JF_REQ, model)},
    {XT("need", JF_ARR, 0, need), .sub = &seg_table,
     .cnt = offsetof(xpl, nneed), .cond = offsetof(xpl, has_alone) + 1,
     .style = &jw_inline_arr},
    {XT("need_gpu_seconds", JF_G10, 0, need_gpu_seconds),
     .cond = offsetof(xpl, has_alone) + 1},
    {XT("now", JF_I64, JF_REQ, now), .min = 0, .max = TIME_MAX},
    NULLTIME("planned_end", planned_end),
    {XT("reason", JF_STR, JF_OPT, reason)},
    {XT("reservation", JF_ARR, JF_REQ, resv), .sub = &seg_table,
     .cnt = offsetof(xpl, nresv), .style = &jw_inline_arr},
    {XT("reserved_gpu_seconds", JF_G10, JF_REQ, reserved_gpu_seconds)},
    {XT("slack", JF_I64, JF_REQ | JF_NULLABLE, slack), .nul = PLAN_NO_SLACK,
     .min = -TIME_MAX, .max = TIME_MAX},
    {XT("slot_seconds", JF_INT, JF_REQ, slot_seconds), .min = 1,
     .max = 86400},
    NULLTIME("start", start),
    {XT("submit_time", JF_I64, JF_REQ, submit_time), .min = 0,
     .max = TIME_MAX},
    {.key = "version", .kind = JF_CONST, .min = 1},
    {XT("window_end", JF_I64, JF_REQ | JF_NULLABLE, window_end), .nul = -1,
     .min = 0, .max = TIME_MAX},
    {XT("window_gpu_seconds", JF_G10, JF_REQ, window_gpu_seconds)},
    {XT("window_promised", JF_G10, JF_REQ, window_promised)},
    {XT("window_start", JF_I64, JF_REQ | JF_NULLABLE, window_start),
     .nul = -1, .min = 0, .max = TIME_MAX},
};
static const jf_table top_table = JF_TABLE(xpl, &jw_block_obj, top_fields);

void xpl_free(xpl *x)
{
    jf_arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

/* ---- building ----------------------------------------------------------- */

/* A change of the other admitted jobs' reserved GPUs: by d at t. */
typedef struct xpl_ev {
    int64_t t;
    int d;
} xpl_ev;

static int cmp_ev(const void *a, const void *b)
{
    const xpl_ev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* Append [a, b) with v's numbers to x->iv (room *cap), merged with the
 * last interval when it goes on with the same numbers. */
static void iv_push(xpl *x, int *cap, int64_t a, int64_t b, xpl_iv v)
{
    v.start = a;
    v.end = b;
    xpl_iv *l = x->niv ? &x->iv[x->niv - 1] : NULL;
    if (l && l->end == a && l->gpus == v.gpus && l->reserved == v.reserved &&
        l->others_reserved == v.others_reserved &&
        l->others_held == v.others_held) {
        l->end = b;
        return;
    }
    if (x->niv == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        x->iv = ef_realloc(x->iv, (size_t)*cap * sizeof *x->iv);
    }
    x->iv[x->niv++] = v;
}

/* GPU-seconds of the segments of j inside [a, b). */
static double resv_in(const plan_doc_job *j, int64_t a, int64_t b)
{
    double s = 0;
    for (int k = 0; k < j->nreserved; k++) {
        int64_t lo = j->reserved[k].start > a ? j->reserved[k].start : a;
        int64_t hi = j->reserved[k].end < b ? j->reserved[k].end : b;
        if (hi > lo)
            s += (double)(hi - lo) * j->reserved[k].gpus;
    }
    return s;
}

/* The amount a holder is ranked by: reserved when known, else held. */
static double promised(const xpl_holder *h)
{
    return isnan(h->reserved_gpu_seconds) ? h->gpu_seconds
                                          : h->reserved_gpu_seconds;
}

static int cmp_holder(const void *a, const void *b)
{
    const xpl_holder *x = a, *y = b;
    double px = promised(x), py = promised(y);
    if (px != py)
        return px > py ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The job's intervals, its reservation and its GPU-seconds. 'known':
 * every admitted job of d records "reserved". A slot of the file is cut
 * where the job's reservation or the others' change inside it (a change
 * of reservation that leaves every allocation as it was is no new
 * slot). */
static void intervals(xpl *x, const plan_doc *d, int ji, int known)
{
    const plan_doc_job *me = &d->jobs[ji];
    int mine = me->decision != PLAN_ADMITTED ? 0 /* nothing reserved */
               : me->has_reserved ? 1 : -1;
    /* the others' reservations as a sweep of changes, in time order */
    size_t ne = 0;             /* changes */
    for (int k = 0; known && k < d->njobs; k++)
        if (k != ji && d->jobs[k].decision == PLAN_ADMITTED)
            ne += 2 * (size_t)d->jobs[k].nreserved;
    xpl_ev *ev = ef_malloc((ne ? ne : 1) * sizeof *ev);
    ne = 0;
    for (int k = 0; known && k < d->njobs; k++) {
        const plan_doc_job *o = &d->jobs[k];
        if (k == ji || o->decision != PLAN_ADMITTED)
            continue;
        for (int m = 0; m < o->nreserved; m++) {
            ev[ne++] = (xpl_ev){o->reserved[m].start, o->reserved[m].gpus};
            ev[ne++] = (xpl_ev){o->reserved[m].end, -o->reserved[m].gpus};
        }
    }
    qsort(ev, ne, sizeof *ev, cmp_ev);
    size_t ei = 0;             /* changes applied */
    int oth = 0;               /* their sum: the others' reserved GPUs */
    int mc = 0;                /* the job's own segment at or after now */
    int cap = 0;               /* room in x->iv */
    double rsum = 0;           /* reserved GPU-seconds */
    for (int s = 0; s < d->nslots; s++) {
        const plan_doc_slot *sl = &d->slots[s];
        int g = 0, held = 0;   /* the job's GPUs; everyone else's */
        for (int a = 0; a < sl->nalloc; a++) {
            if (sl->a[a].jobi == ji)
                g = sl->a[a].gpus;
            else
                held += sl->a[a].gpus;
        }
        if (g == 0)
            continue;
        for (int64_t a = sl->start, b; a < sl->end; a = b) {
            while (ei < ne && ev[ei].t <= a)
                oth += ev[ei++].d;
            b = sl->end;
            if (ei < ne && ev[ei].t < b)
                b = ev[ei].t;
            xpl_iv v = {0, 0, g, mine < 0 ? -1 : 0, known ? oth : -1, held};
            if (mine == 1) {
                const seg *r = me->reserved;
                while (mc < me->nreserved && r[mc].end <= a)
                    mc++;
                if (mc < me->nreserved && r[mc].start <= a) {
                    v.reserved = r[mc].gpus < g ? r[mc].gpus : g;
                    if (r[mc].end < b)
                        b = r[mc].end;
                } else if (mc < me->nreserved && r[mc].start < b) {
                    b = r[mc].start;
                }
            }
            x->gpu_seconds += (double)(b - a) * g;
            if (v.reserved > 0)
                rsum += (double)(b - a) * v.reserved;
            iv_push(x, &cap, a, b, v);
        }
    }
    free(ev);
    x->reserved_gpu_seconds = mine < 0 ? NAN : rsum;
    /* into the arena, as everything of an xpl */
    xpl_iv *iv = jf_alloc(&x->arena, (size_t)(x->niv ? x->niv : 1) *
                                         sizeof *iv);
    if (x->niv)
        memcpy(iv, x->iv, (size_t)x->niv * sizeof *iv);
    free(x->iv);
    x->iv = iv;
    if (mine == 1) {
        x->nresv = me->nreserved;
        x->resv = jf_alloc(&x->arena, (size_t)(me->nreserved ? me->nreserved
                                                             : 1) *
                                          sizeof *x->resv);
        if (me->nreserved)
            memcpy(x->resv, me->reserved,
                   (size_t)me->nreserved * sizeof *x->resv);
    }
}

/* A rejected job's window (x->submit_time to x->deadline) and the
 * admitted jobs of d promised GPUs in it; job ji of d (-1: none) is the
 * job itself. */
static void holders(xpl *x, const plan_doc *d, int ji)
{
    int N = d->cluster.nodes * d->cluster.gpus_per_node;
    if (x->deadline < 0)
        return;
    int64_t a = x->submit_time > d->now ? x->submit_time : d->now;
    int64_t b = x->deadline;
    if (b < a)
        b = a;
    x->window_start = a;
    x->window_end = b;
    x->window_gpu_seconds = (double)(b - a) * N;
    double *held = ef_calloc((size_t)d->njobs + 1, sizeof *held);
    for (int s = 0; s < d->nslots; s++) {
        const plan_doc_slot *sl = &d->slots[s];
        int64_t lo = sl->start > a ? sl->start : a;
        int64_t hi = sl->end < b ? sl->end : b;
        if (hi <= lo)
            continue;
        for (int k = 0; k < sl->nalloc; k++)
            held[sl->a[k].jobi] += (double)(hi - lo) * sl->a[k].gpus;
    }
    int m = 0;
    for (int k = 0; k < d->njobs; k++)
        m += k != ji && d->jobs[k].decision == PLAN_ADMITTED;
    x->holders = jf_alloc(&x->arena, (size_t)(m ? m : 1) *
                                         sizeof *x->holders);
    for (int k = 0; k < d->njobs; k++) {
        const plan_doc_job *o = &d->jobs[k];
        if (k == ji || o->decision != PLAN_ADMITTED)
            continue;
        double r = o->has_reserved ? resv_in(o, a, b) : NAN;
        /* a holder was promised GPUs there (or, unknown, held some) */
        if (o->has_reserved ? !(r > 0) : held[k] <= 0)
            continue;
        xpl_holder *h = &x->holders[x->nholders++];
        h->id = jf_strdup(&x->arena, o->id);
        h->deadline = o->deadline;
        h->gpu_seconds = held[k];
        h->reserved_gpu_seconds = r;
        x->window_promised += promised(h);
    }
    free(held);
    qsort(x->holders, (size_t)x->nholders, sizeof *x->holders, cmp_holder);
}

/* What rejected job ji of d's queue needs alone (plan_alone); with
 * 'extra' (a job object's text), the job is that one, appended to d's
 * queue, and x's id, model, submit time and deadline are set from it. */
static int alone(xpl *x, const plan_doc *d, int ji, const char *extra,
                 const char *label, const curve_set *cs, const char *curves,
                 ef_err *e)
{
    curve_set own = {0};       /* the curves loaded here */
    job_queue q;
    cluster c;
    plan_opts po;
    char *qt = plan_doc_queue_json(d, extra);
    int rc = queue_parse_json(&q, label, qt, strlen(qt), e);
    free(qt);
    if (rc != EF_OK) {
        queue_free(&q);
        return EF_ERR;
    }
    if (extra) {
        const job *jb = &q.jobs[q.n - 1];
        ji = q.n - 1;
        x->id = jf_strdup(&x->arena, jb->id);
        x->model = jf_strdup(&x->arena, jb->model);
        x->submit_time = jb->submit;
        x->deadline = jb->has_deadline ? jb->deadline : -1;
    }
    if (!cs) {
        const char *name = curves ? curves : d->curves;
        if (curve_set_load_arg(&own, name, e) != EF_OK) {
            if (!curves)
                ef_prefix(e, "%s: curves: ", label);
            queue_free(&q);
            curve_set_free(&own);
            return EF_ERR;
        }
        cs = &own;
    }
    rc = queue_resolve(&q, cs, e);
    if (rc == EF_OK)
        rc = cluster_init(&c, 1, d->cluster.nodes, d->cluster.gpus_per_node,
                          label, e);
    if (rc == EF_OK) {
        resv need = {0};
        plan_doc_opts(d, &po);
        int ok = plan_alone(&q, ji, &c, &po, &need, &x->fastest_alone, e);
        if (ok < 0) {
            rc = EF_ERR;
        } else {
            x->has_alone = 1;
            x->alone_ok = ok;
            x->nneed = need.n;
            x->need = jf_alloc(&x->arena, (size_t)(need.n ? need.n : 1) *
                                              sizeof *x->need);
            for (int k = 0; k < need.n; k++) {
                x->need[k] = need.s[k];
                x->need_gpu_seconds += (double)(need.s[k].end -
                                                need.s[k].start) *
                                       need.s[k].gpus;
            }
        }
        resv_free(&need);
    }
    if (rc == EF_OK && !extra && d->jobs[ji].decision == PLAN_REJECTED) {
        /* the earliest deadline by the one rule (submit.h), not the
         * planner's bound at the job's decision */
        char why[256];
        rc = plan_earliest_doc(label, d, ji, cs,
                               &x->earliest_feasible_deadline, why,
                               sizeof why, e);
        if (rc == EF_OK && x->earliest_feasible_deadline < 0 && why[0])
            x->reason = jf_strdup(&x->arena, why);
    }
    queue_free(&q);
    curve_set_free(&own);
    return rc;
}

int xpl_build(xpl *x, const plan_doc *d, const char *label, const char *id,
              const curve_set *cs, const char *curves, ef_err *e)
{
    memset(x, 0, sizeof *x);
    int ji = -1;               /* the job's index in d */
    for (int i = 0; i < d->njobs && ji < 0; i++)
        if (strcmp(d->jobs[i].id, id) == 0)
            ji = i;
    if (ji < 0) {
        char q[128], list[160] = "";
        const char **ids = ef_malloc((size_t)(d->njobs + 1) * sizeof *ids);
        for (int i = 0; i < d->njobs; i++)
            ids[i] = d->jobs[i].id;
        const char *s = ef_suggest(id, ids, d->njobs);
        free(ids);
        if (s)
            snprintf(list, sizeof list, "did you mean \"%s\"?", s);
        else if (d->njobs == 0)
            snprintf(list, sizeof list, "the plan has no jobs");
        else
            snprintf(list, sizeof list, "its %d job%s: \"%s\"%s%s%s",
                     d->njobs, d->njobs == 1 ? "" : "s", d->jobs[0].id,
                     d->njobs > 1 ? ", \"" : "",
                     d->njobs > 1 ? d->jobs[1].id : "",
                     d->njobs > 2 ? "\", ..." : d->njobs > 1 ? "\"" : "");
        return ef_fail(e, EF_E_INPUT, "%s: no job \"%s\" in this plan (%s)",
                       label, ef_quote(id, q, sizeof q), list);
    }
    const plan_doc_job *j = &d->jobs[ji];
    int known = 1;             /* every admitted job records "reserved" */
    for (int i = 0; i < d->njobs; i++)
        if (d->jobs[i].decision == PLAN_ADMITTED && !d->jobs[i].has_reserved)
            known = 0;
    x->id = jf_strdup(&x->arena, j->id);
    x->model = jf_strdup(&x->arena, j->model);
    x->decision = j->decision;
    x->at_risk = j->at_risk;
    x->reason = j->reason ? jf_strdup(&x->arena, j->reason) : NULL;
    x->now = d->now;
    x->cluster_gpus = d->cluster.nodes * d->cluster.gpus_per_node;
    x->slot_seconds = d->slot_seconds;
    x->submit_time = j->submit_time;
    x->deadline = j->deadline;
    x->start = j->start;
    x->planned_end = j->planned_end;
    x->slack = j->slack;
    x->earliest_feasible_deadline = j->earliest_feasible_deadline;
    x->window_start = x->window_end = -1;
    x->fastest_alone = -1;
    intervals(x, d, ji, known);
    if (j->decision == PLAN_REJECTED) {
        holders(x, d, ji);
        if (alone(x, d, ji, NULL, label, cs, curves, e) != EF_OK) {
            xpl_free(x);
            return EF_ERR;
        }
    }
    if (!x->holders)
        x->holders = jf_alloc(&x->arena, sizeof *x->holders);
    return EF_OK;
}

int xpl_build_rejected(xpl *x, const plan_doc *d, const char *label,
                       const char *job_json, const char *reason,
                       int64_t earliest, const curve_set *cs, ef_err *e)
{
    memset(x, 0, sizeof *x);
    x->decision = PLAN_REJECTED;
    x->reason = reason ? jf_strdup(&x->arena, reason) : NULL;
    x->now = d->now;
    x->cluster_gpus = d->cluster.nodes * d->cluster.gpus_per_node;
    x->slot_seconds = d->slot_seconds;
    x->start = x->planned_end = -1;
    x->slack = PLAN_NO_SLACK;
    x->earliest_feasible_deadline = earliest >= 0 ? earliest : -1;
    x->window_start = x->window_end = -1;
    x->fastest_alone = -1;
    x->iv = jf_alloc(&x->arena, sizeof *x->iv);
    if (alone(x, d, -1, job_json, label, cs, NULL, e) != EF_OK) {
        xpl_free(x);
        return EF_ERR;
    }
    holders(x, d, -1);
    if (!x->holders)
        x->holders = jf_alloc(&x->arena, sizeof *x->holders);
    return EF_OK;
}

/* ---- the text ------------------------------------------------------------ */

/* GPU-seconds as GPU-hours, "1,920 GPU-h" or "0.25 GPU-h". */
static const char *gpuh(double gs, char *dst, size_t n)
{
    double h = gs / 3600.0;
    if (h < 10) {
        snprintf(dst, n, "%.2f GPU-h", h);
        return dst;
    }
    char digits[24], out[40];
    snprintf(digits, sizeof digits, "%.0f", h);
    size_t L = strlen(digits), k = 0;
    for (size_t i = 0; i < L && k + 2 < sizeof out; i++) {
        if (i > 0 && (L - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = digits[i];
    }
    out[k] = '\0';
    snprintf(dst, n, "%s GPU-h", out);
    return dst;
}

/* Segments r[0..n-1] as "4 GPUs from A to B, then 8 GPUs to C". */
static void segs(ef_buf *b, const seg *r, int n, ef_ht_zone z)
{
    char t1[64], t2[64];
    for (int k = 0; k < n && k < 6; k++) {
        int cont = k > 0 && r[k - 1].end == r[k].start;
        if (k == 0)
            ef_buf_printf(b, "%d GPU%s from %s to %s", r[k].gpus,
                          r[k].gpus == 1 ? "" : "s",
                          ef_ht_at(r[k].start, z, t1, sizeof t1),
                          ef_ht_at(r[k].end, z, t2, sizeof t2));
        else if (cont)
            ef_buf_printf(b, ", then %d to %s", r[k].gpus,
                          ef_ht_at(r[k].end, z, t2, sizeof t2));
        else
            ef_buf_printf(b, ", %d from %s to %s", r[k].gpus,
                          ef_ht_at(r[k].start, z, t1, sizeof t1),
                          ef_ht_at(r[k].end, z, t2, sizeof t2));
    }
    if (n > 6)
        ef_buf_printf(b, ", and %d more change%s", n - 6,
                      n - 6 == 1 ? "" : "s");
}

static void iv_lines(ef_buf *b, const xpl *x, ef_ht_zone z, int max_iv)
{
    char t1[64], t2[64], du[32];
    if (x->niv == 0)
        return;
    ef_buf_put(b, "GPUs it holds over time (the cluster has ");
    ef_buf_printf(b, "%d):\n", x->cluster_gpus);
    int n = max_iv > 0 && x->niv > max_iv ? max_iv : x->niv;
    for (int k = 0; k < n; k++) {
        const xpl_iv *v = &x->iv[k];
        ef_buf_printf(b, "  %s to %s (%s): %d GPU%s", ef_ht_at(v->start, z, t1,
                      sizeof t1), ef_ht_at(v->end, z, t2, sizeof t2),
                      ef_ht_dur(v->end - v->start, du, sizeof du), v->gpus,
                      v->gpus == 1 ? "" : "s");
        if (v->reserved >= 0)
            ef_buf_printf(b, " = %d reserved + %d surplus", v->reserved,
                          v->gpus - v->reserved);
        int idle = x->cluster_gpus - v->gpus - v->others_held;
        if (v->others_reserved >= 0)
            ef_buf_printf(b, "; other jobs: %d reserved, %d held",
                          v->others_reserved, v->others_held);
        else
            ef_buf_printf(b, "; other jobs hold %d", v->others_held);
        ef_buf_printf(b, "; %d idle\n", idle > 0 ? idle : 0);
    }
    if (n < x->niv)
        ef_buf_printf(b, "  ... %d more interval%s (--json lists every "
                      "one)\n", x->niv - n, x->niv - n == 1 ? "" : "s");
}

/* The share of its GPU-time that was reserved and surplus. */
static void split(ef_buf *b, const xpl *x)
{
    char h1[64], h2[64], h3[64];
    if (x->gpu_seconds <= 0)
        return;
    if (isnan(x->reserved_gpu_seconds)) {
        ef_buf_printf(b, "It holds %s in all; this plan file does not say "
                      "how much of it was reserved (write it again with "
                      "this efplan to know).\n",
                      gpuh(x->gpu_seconds, h1, sizeof h1));
        return;
    }
    if (x->reserved_gpu_seconds == 0) {
        ef_buf_printf(b, "All of the %s it holds are surplus.\n",
                      gpuh(x->gpu_seconds, h1, sizeof h1));
        return;
    }
    ef_buf_printf(b, "Of the %s it holds, %s are reserved and %s surplus.\n",
                  gpuh(x->gpu_seconds, h1, sizeof h1),
                  gpuh(x->reserved_gpu_seconds, h2, sizeof h2),
                  gpuh(x->gpu_seconds - x->reserved_gpu_seconds, h3,
                       sizeof h3));
}

static const char surplus_rule[] =
    "Surplus GPUs are those no admitted job reserved: at each scheduling "
    "point they go one usable size at a time to the job that gains the most "
    "throughput per added GPU, and they can be taken back at the next "
    "point.\n";

static void admitted_text(ef_buf *b, const xpl *x, ef_ht_zone z)
{
    char t1[64], t2[64], du[32];
    if (x->at_risk) {
        ef_buf_printf(b, "%s is admitted but at risk: %s.\n", x->id,
                      x->reason ? x->reason : "it fell behind its "
                      "reservation");
    } else {
        ef_buf_printf(b, "%s is admitted: its deadline %s is guaranteed", x->id,
                      ef_ht_at(x->deadline, z, t1, sizeof t1));
        if (x->planned_end >= 0 && x->slack != PLAN_NO_SLACK)
            ef_buf_printf(b, "; it is planned to end at %s (slack %s)",
                          ef_ht_at(x->planned_end, z, t2, sizeof t2),
                          ef_ht_dur(x->slack, du, sizeof du));
        ef_buf_put(b, ".\n");
    }
    if (x->at_risk && x->planned_end >= 0 && x->deadline >= 0) {
        int64_t late = x->planned_end - x->deadline;
        ef_buf_printf(b, "It is planned to end at %s, %s %s its deadline "
                      "%s.\n", ef_ht_at(x->planned_end, z, t1, sizeof t1),
                      ef_ht_dur(late > 0 ? late : -late, du, sizeof du),
                      late > 0 ? "after" : "before",
                      ef_ht_at(x->deadline, z, t2, sizeof t2));
    }
    if (x->nresv > 0) {
        ef_buf_put(b, "Reserved for it (its minimum satisfactory share, what "
                   "the guarantee rests on): ");
        segs(b, x->resv, x->nresv, z);
        ef_buf_put(b, ".\n");
    } else if (!isnan(x->reserved_gpu_seconds) && x->niv > 0) {
        ef_buf_put(b, "Nothing reserved for it was used: a reservation is "
                   "placed as late as the deadline allows, and it ran on "
                   "surplus GPUs and ended before its reservation began.\n");
    }
    split(b, x);
    if (!isnan(x->reserved_gpu_seconds) &&
        x->gpu_seconds > x->reserved_gpu_seconds)
        ef_buf_put(b, surplus_rule);
    if (x->at_risk)
        ef_buf_put(b, "What to do: it is planned apart from the other jobs "
                   "with the GPUs they leave; give it a later deadline or "
                   "less work, or free GPUs (cancel or drain other work) so "
                   "it can catch up.\n");
    else
        ef_buf_put(b, "What to do: nothing; a surplus GPU it loses never "
                   "costs it its deadline.\n");
}

static void best_effort_text(ef_buf *b, const xpl *x, ef_ht_zone z)
{
    char t1[64], t2[64];
    ef_buf_printf(b, "%s is best-effort: ", x->id);
    if (x->reason)
        ef_buf_printf(b, "%s. ", x->reason);
    else
        ef_buf_put(b, "it has no deadline. ");
    ef_buf_put(b, "Nothing is reserved for it: it runs only on GPUs that no "
               "admitted job reserved (surplus), after every admitted job's "
               "reservation.\n");
    if (x->start >= 0 && x->planned_end >= 0)
        ef_buf_printf(b, "It runs from %s and is planned to end at %s.\n",
                      ef_ht_at(x->start, z, t1, sizeof t1),
                      ef_ht_at(x->planned_end, z, t2, sizeof t2));
    else if (x->start >= 0)
        ef_buf_printf(b, "It runs from %s; it does not end within the plan's "
                      "horizon.\n", ef_ht_at(x->start, z, t1, sizeof t1));
    else
        ef_buf_put(b, "It gets no GPUs in this plan.\n");
    split(b, x);
    ef_buf_put(b, surplus_rule);
    ef_buf_put(b, "What to do: for a guarantee, submit it with a deadline; "
               "it is admitted when its minimum share fits what the admitted "
               "jobs leave.\n");
}

/* 1 if x's reason says no deadline can be guaranteed for it
 * (plan_earliest_doc found none for a job that can run). */
static int no_deadline(const xpl *x)
{
    static const char say[] = "no deadline can be guaranteed";
    return x->reason && strncmp(x->reason, say, sizeof say - 1) == 0;
}

static void rejected_text(ef_buf *b, const xpl *x, ef_ht_zone z)
{
    char t1[64], t2[64], du[32], h1[64], h2[64];
    ef_buf_printf(b, "%s is rejected: %s.\n", x->id,
                  x->reason ? x->reason : "its deadline cannot be "
                  "guaranteed");
    /* who holds the cluster matters when it could fit alone */
    int contention = !x->has_alone || x->alone_ok;
    if (x->window_end > x->window_start && x->nholders > 0 && contention) {
        int reserved = !isnan(x->holders[0].reserved_gpu_seconds);
        double pct = x->window_gpu_seconds > 0
                         ? 100.0 * x->window_promised / x->window_gpu_seconds
                         : 0;
        ef_buf_printf(b, "Between its submit time and its deadline (%s to "
                      "%s, %s), %.0f%% of the cluster's GPU-time (%s of %s) "
                      "is %s %d admitted job%s: ",
                      ef_ht_at(x->window_start, z, t1, sizeof t1),
                      ef_ht_at(x->window_end, z, t2, sizeof t2),
                      ef_ht_dur(x->window_end - x->window_start, du,
                                sizeof du), pct,
                      gpuh(x->window_promised, h1, sizeof h1),
                      gpuh(x->window_gpu_seconds, h2, sizeof h2),
                      reserved ? "promised to" : "held by", x->nholders,
                      x->nholders == 1 ? "" : "s");
        for (int k = 0; k < x->nholders && k < 5; k++) {
            const xpl_holder *h = &x->holders[k];
            ef_buf_printf(b, "%s%s (%s, deadline %s)", k ? ", " : "", h->id,
                          gpuh(promised(h), h1, sizeof h1),
                          ef_ht_at(h->deadline, z, t1, sizeof t1));
        }
        if (x->nholders > 5)
            ef_buf_printf(b, ", and %d more", x->nholders - 5);
        ef_buf_put(b, ".\n");
    } else if (x->window_end > x->window_start && contention) {
        ef_buf_put(b, "No admitted job holds GPUs between its submit time "
                   "and its deadline.\n");
    }
    if (x->has_alone) {
        if (x->alone_ok) {
            ef_buf_put(b, "Alone on the cluster its minimum satisfactory "
                       "share would be ");
            segs(b, x->need, x->nneed, z);
            ef_buf_printf(b, " (%s).\n", gpuh(x->need_gpu_seconds, h1,
                                              sizeof h1));
        } else if (x->fastest_alone >= 0) {
            /* with no deadline to offer, a finish alone is no promise */
            ef_buf_printf(b, "Even alone on the cluster it cannot end by its "
                          "deadline: its fastest finish is %s%s.\n",
                          ef_ht_at(x->fastest_alone, z, t1, sizeof t1),
                          no_deadline(x) ? " (alone: with the jobs "
                          "already promised, no deadline can be)" : "");
        } else {
            ef_buf_put(b, "It cannot run on this cluster at all.\n");
        }
    }
    if (x->earliest_feasible_deadline >= 0 && x->deadline >= 0 &&
        x->earliest_feasible_deadline <= x->deadline) {
        /* plan_earliest_doc: submitted again as it is, it is admitted */
        ef_buf_printf(b, "Submitted again as it is, with its deadline %s, "
                      "it would be admitted now: what the plan holds leaves "
                      "room for it.\n",
                      ef_ht_at(x->deadline, z, t1, sizeof t1));
        ef_buf_put(b, "What to do: resubmit it (efplan submit of the job "
                   "with the same id).\n");
    } else if (x->earliest_feasible_deadline >= 0) {
        ef_buf_printf(b, "The earliest deadline efplan can guarantee is %s",
                      ef_ht_at(x->earliest_feasible_deadline, z, t1, sizeof t1));
        if (x->deadline >= 0 && x->earliest_feasible_deadline > x->deadline)
            ef_buf_printf(b, " (%s later)",
                          ef_ht_dur(x->earliest_feasible_deadline -
                                    x->deadline, du, sizeof du));
        ef_buf_put(b, ".\n");
        ef_buf_printf(b, "What to do: resubmit with a deadline of %s or "
                      "later (efplan submit of the job with that deadline "
                      "admits it), or with fewer iterations, or without a "
                      "deadline to run best-effort.\n",
                      ef_ht_at(x->earliest_feasible_deadline, z, t1, sizeof t1));
    } else if (x->has_alone && x->fastest_alone < 0) {
        ef_buf_put(b, "What to do: run it on a cluster where one of its "
                   "usable GPU counts fits, or give it measured curves for "
                   "smaller counts.\n");
    } else if (no_deadline(x)) {
        /* a later deadline would not do (plan_earliest_doc) */
        ef_buf_put(b, "What to do: resubmit without a deadline to run "
                   "best-effort, or with fewer iterations.\n");
    } else {
        ef_buf_put(b, "What to do: resubmit with a later deadline or fewer "
                   "iterations, or without a deadline to run best-effort.\n");
    }
}

char *xpl_text(const xpl *x, ef_ht_zone z, int max_iv, size_t *len)
{
    ef_buf b = {0};
    ef_buf_put(&b, "");
    switch (x->decision) {
    case PLAN_ADMITTED: admitted_text(&b, x, z); break;
    case PLAN_BEST_EFFORT: best_effort_text(&b, x, z); break;
    case PLAN_REJECTED: rejected_text(&b, x, z); break;
    default:
        ef_buf_printf(&b, "%s is not decided in this plan.\n", x->id);
        break;
    }
    iv_lines(&b, x, z, max_iv);
    if (len)
        *len = b.n;
    return b.s;
}

/* ---- JSON ---------------------------------------------------------------- */

char *xpl_json(const xpl *x, size_t *len)
{
    xpl t = *x;                /* x with its explanation */
    char *text = xpl_text(x, EF_HT_UTC, 0, NULL);
    t.explanation = text;
    jw w;
    jw_init(&w, 0);
    jf_write(&w, NULL, &top_table, &t, 0);
    ef_buf_put(&w.b, "\n");
    free(text);
    return jw_take(&w, len);
}

int xpl_parse(xpl *x, const char *path, const char *buf, size_t len,
              ef_err *e)
{
    memset(x, 0, sizeof *x);
    int rc = jf_parse(&top_table, x, "an explanation (format "
                      "efplan-explain)", path, buf, len, &x->arena, e);
    if (rc != EF_OK)
        xpl_free(x);
    return rc;
}
