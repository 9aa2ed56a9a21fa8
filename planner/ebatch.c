/* ebatch.c: elastic batch size helpers (see ebatch.h). */
#include "planner/ebatch.h"

#include <string.h>

int eb_rows(const job *j, int on, const curve_row *const **rows)
{
    if (on && job_elastic(j)) {
        *rows = j->rows;
        return j->nbatch;
    }
    *rows = &j->curve;
    return 1;
}

const curve_row *eb_min_config(const job *j, int on, int max_gpus, int *g)
{
    const curve_row *const *rows;
    int n = eb_rows(j, on, &rows), best_g = 0;
    int samples = on && job_elastic(j);
    const curve_row *best = NULL;
    for (int k = 0; k < n; k++) {
        int lv[CURVE_MAX_LEVELS];
        if (curve_usable(rows[k], max_gpus, lv, NULL) == 0)
            continue;
        if (!best || lv[0] < best_g ||
            (lv[0] == best_g && eb_tput(rows[k], lv[0], samples) >
                                    eb_tput(best, best_g, samples))) {
            best = rows[k];
            best_g = lv[0];
        }
    }
    *g = best_g;
    return best;
}

double eb_gpu_seconds(const resv *r)
{
    double s = 0;
    for (int i = 0; i < r->n; i++)
        s += (double)r->s[i].gpus * (double)(r->s[i].end - r->s[i].start);
    return s;
}

const curve_row *eb_mss(const job *j, int on, int max_gpus, double work,
                        int64_t now, int64_t deadline, int slot,
                        const avail *F, resv *out, resv *tmp)
{
    if (!(on && job_elastic(j)))
        return mss_plan(j->curve, max_gpus, work, now, deadline, slot, F, out)
                   ? j->curve : NULL;
    const curve_row *best = NULL;
    double best_gs = 0;
    resv_clear(out);
    for (int k = 0; k < j->nbatch; k++) {
        const curve_row *row = j->rows[k];
        if (!mss_plan(row, max_gpus, work / (double)row->batch, now, deadline,
                      slot, F, tmp))
            continue;
        double gs = eb_gpu_seconds(tmp);
        if (!best || gs < best_gs) {
            best = row;
            best_gs = gs;
            resv_copy(out, tmp);
        }
    }
    return best;
}

int64_t eb_fastest(const job *j, int on, int max_gpus, double work,
                   int64_t now, int slot, const avail *F, resv *out,
                   resv *tmp, const curve_row **row)
{
    if (!(on && job_elastic(j))) {
        *row = j->curve;
        return mss_fastest(j->curve, max_gpus, work, now, slot, F, out);
    }
    int64_t best = -1;
    *row = NULL;
    if (out)
        resv_clear(out);
    for (int k = 0; k < j->nbatch; k++) {
        const curve_row *r = j->rows[k];
        int64_t end = mss_fastest(r, max_gpus, work / (double)r->batch, now,
                                  slot, F, out ? tmp : NULL);
        if (end >= 0 && (best < 0 || end < best)) {
            best = end;
            *row = r;
            if (out)
                resv_copy(out, tmp);
        }
    }
    return best;
}
