/* ilp_report.c: the oracle's answer: its verdict and its JSON document,
 * format efplan-oracle (see ilp.h). */
#include "solver/ilp.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"

/* Member 'key': the ids of the jobs with flag[j] (or, flag NULL, those
 * plan p admits), in queue order. */
static void json_ids(jw *w, const char *key, const job_queue *q,
                     const int *flag, const plan *p)
{
    jw_arr(w, key, &jw_inline_arr);
    for (int j = 0; j < q->n; j++)
        if (flag ? flag[j] : p->jobs[j].decision == PLAN_ADMITTED)
            jw_str(w, NULL, q->jobs[j].id);
    jw_end(w);
}

/* Member 'key': v, or null when 'have' is 0. */
static void int_or_null(jw *w, const char *key, int have, int64_t v)
{
    if (have)
        jw_int(w, key, v);
    else
        jw_null(w, key);
}

/* Member 'key': v with no decimals, or null when 'have' is 0. */
static void whole_or_null(jw *w, const char *key, int have, double v)
{
    if (have)
        jw_fixed(w, key, v, 0);
    else
        jw_null(w, key);
}

/* Member 'key': the relaxation's answer, or null. */
static void json_relaxed(jw *w, const ilp_relaxed *x)
{
    if (!x) {
        jw_null(w, "relaxed");
        return;
    }
    int ok = x->status == ILP_OPTIMAL;
    jw_obj(w, "relaxed", &jw_inline_obj);
    int_or_null(w, "bound", x->status != ILP_INFEASIBLE, x->bound);
    jw_int(w, "cols", x->cols);
    if (ok && x->cfg_value >= 0) { /* the configuration LP (ilp_config.h) */
        jw_obj(w, "config_lp", &jw_inline_obj);
        jw_bool(w, "finished", x->cfg_done);
        jw_int(w, "rounds", x->cfg_rounds);
        jw_fixed(w, "value", x->cfg_value, 6);
        jw_end(w);
    } else {
        jw_null(w, "config_lp");
    }
    jw_int(w, "deadline_jobs", x->deadline_jobs);
    jw_int(w, "exact_binaries", x->exact_binaries);
    whole_or_null(w, "gpu_seconds_bound", x->gpu_seconds_bound >= 0,
                  x->gpu_seconds_bound);
    if (x->gpu_seconds_bound >= 0)
        jw_str(w, "gpu_method", x->gpu_lp ? "lp" : "job_floors");
    else
        jw_null(w, "gpu_method");
    int_or_null(w, "gpu_seconds_for", x->gpu_seconds_bound >= 0, x->gpu_for);
    int_or_null(w, "first_pass_bound", x->first_bound >= 0, x->first_bound);
    jw_int(w, "hopeless", x->hopeless);
    jw_str(w, "limit", x->limit_hit & 1 ? "time"
                       : x->limit_hit & 2 ? "iterations" : "none");
    jw_int(w, "lp_iterations", x->lp_iters);
    jw_str(w, "lp_method", x->ipt ? "interior_point" : "simplex");
    if (ok)
        jw_fixed(w, "lp_value", x->lp_value, 6);
    else
        jw_null(w, "lp_value");
    jw_int(w, "rows", x->rows);
    jw_fixed(w, "seconds", x->seconds, 3);
    jw_str(w, "status", ilp_status_name(x->status));
    jw_int(w, "windows", x->windows);
    jw_end(w);
}

/* 1 if plan p admits every job of 'must' (NULL: none required). */
static int admits_must(const plan *p, const int *must)
{
    for (int j = 0; must && j < p->njobs; j++)
        if (must[j] && p->jobs[j].decision != PLAN_ADMITTED)
            return 0;
    return 1;
}

void ilp_verdict_of(const ilp_report *rp, ilp_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->lower = v->upper = -1;
    v->best = "none";
    const ilp_result *r = rp->ilp;
    const ilp_relaxed *x = rp->relaxed;
    if ((r && r->status == ILP_INFEASIBLE) ||
        (x && x->status == ILP_INFEASIBLE)) {
        v->infeasible = 1;
        return;
    }
    /* the least bound from a solved LP (the ILP's count bound is at most
     * its LP's, so it holds once that LP was solved) */
    if (x && x->status == ILP_OPTIMAL)
        v->upper = x->bound;
    if (r && r->lp_bound >= 0 && (v->upper < 0 || r->bound < v->upper))
        v->upper = r->bound;
    /* the most any plan found admits: greedy, offline, LP-guided, then
     * the ILP's schedule; the first to reach the most is named */
    const plan *pl[3] = {rp->greedy, rp->offline, rp->guided};
    static const char *const name[3] = {"greedy", "offline", "guided"};
    for (int i = 0; i < 3; i++)
        if (pl[i] && admits_must(pl[i], rp->must) &&
            pl[i]->admitted > v->lower) {
            v->lower = pl[i]->admitted;
            v->best = name[i];
            v->best_plan = pl[i];
        }
    if (r && r->admit && r->admitted > v->lower) {
        v->lower = r->admitted;
        v->best = "ilp";
        v->best_plan = NULL;
    }
    v->answer = v->upper >= 0 && v->lower >= 0;
    v->proven = v->answer && v->lower >= v->upper;
}

int ilp_verdict_admits(const ilp_report *rp, const ilp_verdict *v, int j)
{
    if (v->best_plan)
        return v->best_plan->jobs[j].decision == PLAN_ADMITTED;
    return rp->ilp && rp->ilp->admit && rp->ilp->admit[j];
}

/* Member "verdict": the range of the optimum, the best plan, and the
 * jobs it admits that greedy rejects (and the other way round). */
static void json_verdict(jw *w, const ilp_report *rp, const ilp_verdict *v)
{
    const job_queue *q = rp->q;
    const plan *g = rp->greedy;
    jw_obj(w, "verdict", &jw_inline_obj);
    jw_str(w, "answer", v->infeasible ? "infeasible"
                        : v->answer ? (v->proven ? "proven" : "range")
                                    : "no_bound");
    jw_str(w, "best", v->best);
    int more = v->lower >= 0; /* the best plan's differences */
    int *f = ef_calloc((size_t)q->n + 1, sizeof *f);
    for (int j = 0; more && j < q->n; j++)
        f[j] = ilp_verdict_admits(rp, v, j) &&
               g->jobs[j].decision != PLAN_ADMITTED;
    if (more)
        json_ids(w, "gained_jobs", q, f, NULL);
    else
        jw_null(w, "gained_jobs");
    for (int j = 0; more && j < q->n; j++)
        f[j] = !ilp_verdict_admits(rp, v, j) &&
               g->jobs[j].decision == PLAN_ADMITTED;
    if (more)
        json_ids(w, "given_up_jobs", q, f, NULL);
    else
        jw_null(w, "given_up_jobs");
    free(f);
    int_or_null(w, "gap_jobs", v->answer, v->upper - v->lower);
    int_or_null(w, "greedy_within", v->answer, v->upper - g->admitted);
    int_or_null(w, "lower", v->lower >= 0, v->lower);
    int_or_null(w, "upper", v->upper >= 0, v->upper);
    jw_end(w);
}

/* Member 'key': an admission plan and its search, or null. */
static void json_search(jw *w, const char *key, const plan *p,
                        const off_stats *os, const job_queue *q,
                        int have_bound, int bound)
{
    if (!p) {
        jw_null(w, key);
        return;
    }
    jw_obj(w, key, &jw_inline_obj);
    jw_int(w, "admitted", p->admitted);
    json_ids(w, "admitted_jobs", q, NULL, p);
    jw_str(w, "exact", !os || os->exact < 0     ? "not_run"
                       : os->exact == 1          ? "used"
                       : os->exact_status < 0    ? "not_needed"
                                                 : "no_gain");
    int_or_null(w, "gap_jobs", have_bound, bound - p->admitted);
    jw_fixed(w, "gpu_seconds", p->promised_gpu_seconds, 0);
    jw_int(w, "plans", os ? os->plans : 0);
    jw_int(w, "withheld", os ? os->withheld : 0);
    jw_end(w);
}

void ilp_report_json(const ilp_report *rp, ef_buf *b)
{
    const ilp_result *r = rp->ilp;
    const ilp_relaxed *rx = rp->relaxed;
    const plan *greedy = rp->greedy;
    const job_queue *q = rp->q;
    ef_assert(r || rx);
    ilp_verdict v;
    ilp_verdict_of(rp, &v);
    int inc = r && r->admit != NULL;
    /* the best bound known: the least of the methods' (each is valid) */
    int have_bound = 0, bound = 0;
    if (r && r->status != ILP_INFEASIBLE) {
        have_bound = 1;
        bound = r->bound;
    }
    if (rx && rx->status != ILP_INFEASIBLE && (!r || r->status !=
                                               ILP_INFEASIBLE)) {
        if (!have_bound || rx->bound < bound)
            bound = rx->bound;
        have_bound = 1;
    }
    jw w;
    jw_init(&w, 0);
    jw_obj(&w, NULL, &jw_block_obj);
    jw_str(&w, "format", "efplan-oracle");
    jw_int(&w, "version", 3);
    jw_str(&w, "jobs_file", rp->jobs_path);
    jw_str(&w, "method", r && rx ? "both" : r ? "exact" : "relaxed");
    jw_int(&w, "now", r ? r->now : rx->now);
    jw_int(&w, "slot_seconds", r ? r->slot : rx->slot);
    jw_int(&w, "slots", r ? r->nslots : rx->nslots);
    jw_obj(&w, "cluster", &jw_inline_obj);
    jw_int(&w, "gpus", greedy->cl.total_gpus);
    jw_int(&w, "gpus_per_node", greedy->cl.gpus_per_node);
    jw_int(&w, "nodes", greedy->cl.nodes);
    jw_end(&w);
    int_or_null(&w, "bound", have_bound, bound);
    int_or_null(&w, "gap_jobs", have_bound, bound - greedy->admitted);

    jw_obj(&w, "greedy", &jw_inline_obj);
    jw_int(&w, "admitted", greedy->admitted);
    json_ids(&w, "admitted_jobs", q, NULL, greedy);
    jw_fixed(&w, "gpu_seconds", greedy->promised_gpu_seconds, 0);
    jw_end(&w);

    json_search(&w, "guided", rp->guided, rp->gs, q, have_bound, bound);
    json_search(&w, "offline", rp->offline, rp->os, q, have_bound, bound);
    json_relaxed(&w, rx);
    json_verdict(&w, rp, &v);

    if (!r) {
        jw_null(&w, "ilp");
        goto done;
    }
    int feasible = r->status != ILP_INFEASIBLE;
    jw_obj(&w, "ilp", &jw_inline_obj);
    jw_str(&w, "status", ilp_status_name(r->status));
    int_or_null(&w, "admitted", inc, r->admitted);
    if (inc)
        json_ids(&w, "admitted_jobs", q, r->admit, NULL);
    else
        jw_null(&w, "admitted_jobs");
    int_or_null(&w, "bound", feasible, r->bound);
    int_or_null(&w, "gap_jobs", inc, r->bound - r->admitted);
    int_or_null(&w, "lp_bound", r->lp_bound >= 0, r->lp_bound);
    jw_int(&w, "deadline_jobs", r->deadline_jobs);
    jw_int(&w, "hopeless", r->hopeless);
    whole_or_null(&w, "gpu_seconds", inc, r->gpu_seconds);
    whole_or_null(&w, "gpu_seconds_bound", r->gpu_seconds_bound >= 0,
                  r->gpu_seconds_bound);
    jw_str(&w, "gpu_status", r->gpu_status == ILP_OPTIMAL ? "optimal"
           : r->gpu_status == ILP_FEASIBLE ? "feasible" : "not_run");
    jw_str(&w, "limit", r->limit_hit == 1 ? "time"
           : r->limit_hit == 2 ? "nodes" : "none");
    jw_str(&w, "warm_start", r->warm_start > 0 ? "accepted"
           : r->warm_start < 0 ? "rejected" : "none");
    jw_int(&w, "nodes", r->nodes);
    jw_int(&w, "binaries", r->binaries);
    jw_int(&w, "rows", r->rows);
    jw_fixed(&w, "seconds", r->seconds, 3);
    jw_end(&w);
done:
    jw_end(&w);
    ef_buf_put(&w.b, "\n");
    char *s = jw_take(&w, NULL);
    ef_buf_put(b, s);
    free(s);
}
