/*
 * gen.h: the synthetic trace generator (gen_*), with the distributions of
 * the ElasticFlow artifact's generator:
 *   - requested GPUs: 1 (p .83), 2 (.03), 4 (.03), 8 (.10), 16 (.01);
 *   - template: uniform over 14 (model, batch) pairs: resnet50 64/128/256,
 *     vgg16 64/128/256, inception3 64/128, gpt2 128/256, bert 64/128,
 *     deepspeech2 32/64;
 *   - duration: with p .2, 60 * 10^U(2.5, 4) s, else 60 * 10^U(1, 2.5) s;
 *   - iterations = floor(duration * throughput(model, batch, GPUs));
 *   - arrivals: job 0 at 0, then exponential gaps of mean 'mean_gap';
 *   - deadline = submit + floor(U(lo, hi) * duration);
 *   - best-effort with probability 'best_effort';
 *   - with probability 'elastic_batch' (when > 0) the job accepts every
 *     batch size of its model's templates within 2x of the drawn one
 *     (written as a "batch_sizes" column, sizes joined by ';'; the column
 *     appears only when elastic_batch > 0, so other traces keep their
 *     bytes; its iterations stay counted at the drawn batch size).
 * Each quantity has its own random stream derived from the seed, so the
 * same seed always gives the same trace (and, e.g., changing the deadline
 * factor leaves arrivals and durations unchanged).
 */
#ifndef EF_GEN_H
#define EF_GEN_H

#include <stdint.h>

#include "common/err.h"
#include "common/util.h"
#include "model/curve.h"

typedef struct gen_opts {
    int jobs;            /* > 0 */
    double mean_gap;     /* mean inter-arrival time, seconds, > 0 */
    double ddl_lo, ddl_hi; /* deadline factor range, 0 < lo <= hi */
    double best_effort;  /* share of best-effort jobs, [0, 1] */
    uint64_t seed;
    double duration_scale; /* multiply durations (1 = artifact's) */
    double elastic_batch;  /* share of jobs with a batch-size range, [0, 1] */
} gen_opts;

void gen_opts_default(gen_opts *o);

/* A small deterministic generator (splitmix64) for every seeded draw in
 * efplan: gen_rng_init, then gen_uniform in [0, 1). */
typedef struct gen_rng {
    uint64_t s;
} gen_rng;
void gen_rng_init(gen_rng *r, uint64_t seed, uint64_t stream);
uint64_t gen_next(gen_rng *r);
double gen_uniform(gen_rng *r);

/*
 * gen_trace: append a trace CSV (header job_id, submit_time, iteration,
 * model_name, ddl, batch_size, num_gpu, duration, best_effort) for 'o'
 * to 'out', using throughputs from 'cs' (the A100 set has every
 * template). Errors: a template model or batch missing from 'cs', or a
 * cell that is not runnable (EF_E_INPUT).
 */
int gen_trace(const gen_opts *o, const curve_set *cs, ef_buf *out, ef_err *e);

#endif
