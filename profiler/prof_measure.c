/* prof_measure.c: the measurement loop over GPU counts and batch sizes
 * (see prof_measure.h). */
#include "profiler/prof_measure.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void prof_stats(double *v, int n, prof_spread *s, double *median)
{
    double med = prof_median(v, n); /* sorts v */
    s->repeats = n;
    s->min = v[0];
    s->max = v[n - 1];
    s->rel_spread = med > 0 ? (s->max - s->min) / med : 0.0;
    *median = med;
}

void prof_measured_free(prof_measured *m)
{
    free(m->obs);
    free(m->spread);
    memset(m, 0, sizeof *m);
}

static void add(prof_measured *out, long batch, int k, double tput,
                const prof_spread *sp)
{
    out->obs = ef_realloc(out->obs, (size_t)(out->n + 1) * sizeof *out->obs);
    out->spread = ef_realloc(out->spread,
                             (size_t)(out->n + 1) * sizeof *out->spread);
    out->obs[out->n] = (prof_obs){batch, k, tput};
    out->spread[out->n] = *sp;
    out->n++;
}

prof_gpu_status prof_measure(const prof_measure_opts *o, prof_measured *out,
                             ef_err *e)
{
    memset(out, 0, sizeof *out);
    ef_assert(o->repeats >= 1 && o->steps >= 1 && o->warmup >= 0);
    prof_gpu_status st = prof_gpu_probe(&out->env, e);
    if (st != PROF_GPU_OK)
        return st;
    int kmax = 1;
    while (kmax * 2 <= o->max_gpus && kmax * 2 <= out->env.ndevices &&
           kmax * 2 <= 64)
        kmax *= 2;
    double *v = ef_malloc((size_t)o->repeats * sizeof *v);
    for (int k = 1; k <= kmax && st == PROF_GPU_OK; k *= 2) {
        prof_gpu_ctx *ctx = NULL;
        st = prof_gpu_open(&ctx, k, (size_t)o->grad_bytes, e);
        if (st != PROF_GPU_OK)
            break;
        /* the all-reduce alone, for its bus bandwidth */
        double busbw = 0, sec;
        if (k > 1) {
            st = prof_gpu_time(ctx, PROF_GPU_ALLREDUCE, 0, o->warmup + 1,
                               &sec, e);
            for (int r = 0; r < o->repeats && st == PROF_GPU_OK; r++) {
                st = prof_gpu_time(ctx, PROF_GPU_ALLREDUCE, 0, o->steps,
                                   &sec, e);
                v[r] = sec / o->steps;
            }
            if (st == PROF_GPU_OK) {
                prof_spread tmp;
                double t;
                prof_stats(v, o->repeats, &tmp, &t);
                busbw = t > 0 ? 2.0 * (k - 1) / k * o->grad_bytes / t * 8 /
                                    1e9
                              : 0;
            }
        }
        for (int b = 0; b < o->nbatch && st == PROF_GPU_OK; b++) {
            long batch = o->batch[b];
            if (batch < k)
                continue;
            double flops = 3.0 * o->flops_per_sample * (double)batch / k;
            st = prof_gpu_time(ctx, PROF_GPU_STEP, flops, o->warmup, &sec, e);
            for (int r = 0; r < o->repeats && st == PROF_GPU_OK; r++) {
                st = prof_gpu_time(ctx, PROF_GPU_STEP, flops, o->steps, &sec,
                                   e);
                v[r] = sec > 0 ? o->steps / sec : 0;
            }
            if (st != PROF_GPU_OK)
                break;
            prof_spread sp;
            double med;
            prof_stats(v, o->repeats, &sp, &med);
            sp.busbw_gbps = busbw;
            add(out, batch, k, med, &sp);
            out->max_gpus = k;
            if (o->progress)
                o->progress(o->arg, batch, k, med, sp.rel_spread);
        }
        prof_gpu_close(ctx);
    }
    free(v);
    return st;
}
