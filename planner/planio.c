/* planio.c: plan file (JSON) and checker (see plan.h). */
#include "plan.h"

#include <math.h>
#include <string.h>

#include "ebatch.h"
#include "util.h"

static void sb_time(ef_buf *b, int64_t t)
{
    if (t < 0)
        ef_buf_put(b, "null");
    else
        ef_buf_printf(b, "%lld", (long long)t);
}

static const char *decision_name(plan_decision d)
{
    switch (d) {
    case PLAN_ADMITTED: return "admitted";
    case PLAN_REJECTED: return "rejected";
    case PLAN_BEST_EFFORT: return "best_effort";
    default: return "pending";
    }
}

#define SLOT_CHUNK 512

/* One entry of "slots", with its leading separator. */
static void slot_json(ef_buf *b, const plan *p, int s)
{
    int G = p->cl.gpus_per_node;
    const plan_slot *sl = &p->slots[s];
    ef_buf_put(b, s ? ",\n    " : "\n    ");
    ef_buf_put(b, "{\"allocations\": [");
    for (int a = 0; a < sl->nalloc; a++) {
        const plan_alloc *al = &sl->a[a];
        ef_buf_put(b, a ? ", {" : "{");
        if (al->batch)
            ef_buf_printf(b, "\"batch_size\": %ld, ", al->batch);
        ef_buf_printf(b, "\"gpus\": %d, \"job\": ", al->gpus);
        ef_buf_json_str(b, p->jobs[al->job].in->id);
        ef_buf_put(b, ", \"placement\": [");
        for (int k = 0; k < al->gpus;) {
            int node = al->gpu[k] / G;
            ef_buf_printf(b, "%s{\"gpus\": [", k ? ", " : "");
            int first = 1;
            while (k < al->gpus && al->gpu[k] / G == node) {
                ef_buf_printf(b, "%s%d", first ? "" : ", ", al->gpu[k] % G);
                first = 0;
                k++;
            }
            ef_buf_printf(b, "], \"node\": %d}", node);
        }
        ef_buf_put(b, "]}");
    }
    ef_buf_printf(b, "], \"end\": %lld, \"start\": %lld}", (long long)sl->end,
              (long long)sl->start);
}

int plan_to_json(const plan *p, const char *jobs_path, const char *curves,
                 char **out, size_t *len)
{
    ef_buf b = {0};
    int G = p->cl.gpus_per_node;
    ef_buf_printf(&b, "{\n  \"cluster\": {\"gpus_per_node\": %d, \"nodes\": %d},\n",
              G, p->cl.nodes);
    ef_buf_put(&b, "  \"curves\": ");
    ef_buf_json_str(&b, curves ? curves : "");
    if (p->opts.elastic_batch)
        ef_buf_put(&b, ",\n  \"elastic_batch\": true");
    ef_buf_put(&b, ",\n  \"format\": \"efplan-plan\",\n  \"jobs\": [");
    for (int i = 0; i < p->njobs; i++) {
        const plan_job *j = &p->jobs[i];
        ef_buf_put(&b, i ? ",\n    " : "\n    ");
        ef_buf_printf(&b, "{\"batch_size\": %ld, ", j->in->batch);
        if (j->eb) {
            ef_buf_put(&b, "\"batch_sizes\": [");
            for (int k = 0; k < j->in->nbatch; k++)
                ef_buf_printf(&b, "%s%ld", k ? ", " : "", j->in->batches[k]);
            ef_buf_put(&b, "], ");
        }
        ef_buf_put(&b, "\"deadline\": ");
        sb_time(&b, j->in->has_deadline ? j->in->deadline : -1);
        ef_buf_printf(&b, ", \"decision\": \"%s\", \"earliest_feasible_deadline\": ",
                  decision_name(j->decision));
        sb_time(&b, j->earliest_feasible_deadline);
        ef_buf_printf(&b, ", \"gpu_seconds\": %.0f, \"id\": ", j->gpu_seconds);
        ef_buf_json_str(&b, j->in->id);
        /* an elastic-batch job counts samples; its iterations are at
         * batch_size */
        double il = j->eb ? ceil(j->iterations_left / (double)j->in->batch)
                          : j->iterations_left;
        ef_buf_printf(&b, ", \"iterations\": %lld, \"iterations_done\": %lld, "
                  "\"iterations_left\": %.0f, \"migrations\": %d, "
                  "\"model\": ",
                  (long long)j->in->iterations,
                  (long long)j->in->iterations_done, il,
                  j->migrations);
        ef_buf_json_str(&b, j->in->model);
        ef_buf_put(&b, ", \"planned_end\": ");
        sb_time(&b, j->planned_end);
        if (j->reason[0]) {
            ef_buf_put(&b, ", \"reason\": ");
            ef_buf_json_str(&b, j->reason);
        }
        ef_buf_printf(&b, ", \"resizes\": %d, ", j->resizes);
        if (j->eb)
            ef_buf_printf(&b, "\"samples\": %.0f, \"samples_done\": %.0f, "
                          "\"samples_left\": %.0f, ",
                          j->in->in_samples ? (double)j->in->samples
                              : (double)j->in->iterations * j->in->batch,
                          j->in->in_samples ? (double)j->in->samples_done
                              : (double)j->in->iterations_done * j->in->batch,
                          j->iterations_left);
        ef_buf_put(&b, "\"slack\": ");
        if (j->in->has_deadline && j->planned_end >= 0)
            ef_buf_printf(&b, "%lld", (long long)(j->in->deadline - j->planned_end));
        else
            ef_buf_put(&b, "null");
        ef_buf_put(&b, ", \"start\": ");
        sb_time(&b, j->start);
        ef_buf_printf(&b, ", \"submit_time\": %lld}", (long long)j->in->submit);
    }
    ef_buf_put(&b, "\n  ],\n  \"jobs_file\": ");
    ef_buf_json_str(&b, jobs_path ? jobs_path : "");
    ef_buf_printf(&b, ",\n  \"now\": %lld,\n  \"slot_seconds\": %d,\n  \"slots\": [",
              (long long)p->now, p->opts.slot);
    /* The slots are most of the file on a long trace: render chunks of
     * them in parallel, each into its own buffer, and join the buffers in
     * slot order, so the bytes do not depend on the thread count. */
    int nchunk = (p->nslots + SLOT_CHUNK - 1) / SLOT_CHUNK;
    ef_buf *part = ef_calloc((size_t)(nchunk ? nchunk : 1), sizeof *part);
    #pragma omp parallel for schedule(static)
    for (int c = 0; c < nchunk; c++) {
        int hi = (c + 1) * SLOT_CHUNK < p->nslots ? (c + 1) * SLOT_CHUNK
                                                  : p->nslots;
        for (int s = c * SLOT_CHUNK; s < hi; s++)
            slot_json(&part[c], p, s);
    }
    for (int c = 0; c < nchunk; c++) {
        if (part[c].n) {
            ef_buf_grow(&b, part[c].n);
            memcpy(b.s + b.n, part[c].s, part[c].n + 1);
            b.n += part[c].n;
        }
        free(part[c].s);
    }
    free(part);
    double span = (double)(p->end - p->now) * p->cl.total_gpus;
    ef_buf_printf(&b,
              "\n  ],\n  \"summary\": {\"admitted\": %d, \"best_effort\": %d, "
              "\"end\": %lld, \"migrations\": %d, \"promised_gpu_hours\": %.3f, "
              "\"rejected\": %d, \"replan_fallbacks\": %d, \"resizes\": %d, "
              "\"scheduling_points\": %d, \"used_gpu_hours\": %.3f, "
              "\"utilisation\": %.6f},\n",
              p->admitted, p->best_effort, (long long)p->end, p->migrations,
              p->promised_gpu_seconds / 3600.0, p->rejected,
              p->replan_fallbacks, p->resizes, p->points,
              p->used_gpu_seconds / 3600.0,
              span > 0 ? p->used_gpu_seconds / span : 0.0);
    ef_buf_printf(&b, "  \"surplus\": \"%s\",\n  \"version\": 1\n}\n",
              p->opts.surplus == SURPLUS_GAIN ? "gain" : "reference");
    *out = b.s;
    *len = b.n;
    return EF_OK;
}

int plan_write_json(const plan *p, const char *path, const char *jobs_path,
                    const char *curves, ef_err *e)
{
    char *s;
    size_t n;
    plan_to_json(p, jobs_path, curves, &s, &n);
    int rc = ef_write_file_atomic(path, s, n, e);
    free(s);
    return rc;
}

/* ---- checker --------------------------------------------------------------- */

int plan_check(const plan *p, ef_err *e)
{
    int N = p->cl.total_gpus, S = p->opts.slot;
    int *owner = ef_malloc((size_t)N * sizeof *owner);
    double *rem = ef_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof *rem);
    int64_t *end = ef_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof *end);
    int rc = EF_OK;
    for (int i = 0; i < p->njobs; i++) {
        rem[i] = p->jobs[i].iterations_left;
        end[i] = -1;
    }
    int64_t t = p->now;
    for (int s = 0; s < p->nslots && rc == EF_OK; s++) {
        const plan_slot *sl = &p->slots[s];
        if (sl->start != t || sl->end <= sl->start ||
            (sl->start - p->now) % S) {
            rc = ef_fail(e, EF_E_INTERNAL, "slot %d: [%lld, %lld) is not the "
                         "next run of slots after %lld", s,
                         (long long)sl->start, (long long)sl->end, (long long)t);
            break;
        }
        t = sl->end;
        int used = 0;
        for (int k = 0; k < N; k++)
            owner[k] = -1;
        for (int a = 0; a < sl->nalloc && rc == EF_OK; a++) {
            const plan_alloc *al = &sl->a[a];
            const plan_job *j = &p->jobs[al->job];
            used += al->gpus;
            place_set ps = {al->gpus, al->gpu};
            /* the batch the allocation runs at (elastic batch) */
            const curve_row *row = j->in->curve;
            for (int b = 0; al->batch && b < j->in->nbatch; b++)
                if (j->in->batches[b] == al->batch)
                    row = j->in->rows[b];
            if (al->batch && (!j->eb || row->batch != al->batch))
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s runs at batch "
                             "size %ld, not one it accepts", s, j->in->id,
                             al->batch);
            else if (curve_tput(row, al->gpus) <= 0)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s gets %d GPUs, "
                             "not a usable size", s, j->in->id, al->gpus);
            else if (!place_is_buddy(&p->cl, &ps))
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s placement "
                             "breaks the buddy rule", s, j->in->id);
            else if (j->decision == PLAN_REJECTED)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: rejected job %s runs",
                             s, j->in->id);
            else if (sl->start < j->release)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s runs before its "
                             "release %lld", s, j->in->id,
                             (long long)j->release);
            else if (end[al->job] >= 0)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s runs after it "
                             "completed", s, j->in->id);
            for (int k = 0; k < al->gpus && rc == EF_OK; k++) {
                if (owner[al->gpu[k]] >= 0)
                    rc = ef_fail(e, EF_E_INTERNAL, "slot %d: GPU %d given to "
                                 "two jobs", s, al->gpu[k]);
                owner[al->gpu[k]] = al->job;
            }
            if (rc != EF_OK)
                break;
            /* progress, slot by slot, as the planner counts it */
            double tp = al->batch ? eb_tput(row, al->gpus, 1)
                                  : curve_tput(j->in->curve, al->gpus);
            for (int64_t x = sl->start; x < sl->end; x += S) {
                if (rem[al->job] <= tp * S) {
                    end[al->job] = x + (int64_t)ceil(rem[al->job] / tp);
                    rem[al->job] = 0;
                    if (x + S < sl->end)
                        rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s holds "
                                     "GPUs past the slot it completes in", s,
                                     j->in->id);
                    break;
                }
                rem[al->job] -= tp * S;
            }
        }
        if (rc == EF_OK && used > N)
            rc = ef_fail(e, EF_E_INTERNAL, "slot %d: %d GPUs used of %d", s,
                         used, N);
    }
    int truncated = p->opts.horizon > 0;
    for (int i = 0; i < p->njobs && rc == EF_OK; i++) {
        const plan_job *j = &p->jobs[i];
        if (j->decision == PLAN_REJECTED)
            continue;
        if (truncated && end[i] < 0)
            continue;
        if (end[i] != j->planned_end)
            rc = ef_fail(e, EF_E_INTERNAL, "job %s: slots complete it at %lld, "
                         "planned_end says %lld", j->in->id, (long long)end[i],
                         (long long)j->planned_end);
        else if (j->decision == PLAN_ADMITTED && end[i] > j->in->deadline)
            rc = ef_fail(e, EF_E_INTERNAL, "job %s: admitted but completes at "
                         "%lld after its deadline %lld", j->in->id,
                         (long long)end[i], (long long)j->in->deadline);
    }
    free(owner);
    free(rem);
    free(end);
    return rc;
}
