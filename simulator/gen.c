/* gen.c: the synthetic trace generator (see gen.h). */
#include "simulator/gen.h"

#include <math.h>
#include <string.h>

void gen_opts_default(gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 100;
    o->mean_gap = 1500;
    o->ddl_lo = 0.5;
    o->ddl_hi = 1.5;
    o->best_effort = 0;
    o->seed = 0;
    o->duration_scale = 1;
}

void gen_rng_init(gen_rng *r, uint64_t seed, uint64_t stream)
{
    r->s = seed * 0x9E3779B97F4A7C15ULL + stream * 0xD1B54A32D192ED03ULL +
           0x243F6A8885A308D3ULL;
    for (int i = 0; i < 4; i++)
        (void)gen_next(r);
}

uint64_t gen_next(gen_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double gen_uniform(gen_rng *r)
{
    return (double)(gen_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static const struct {
    const char *model;
    long batch;
} templates[] = {
    {"resnet50", 64}, {"resnet50", 128}, {"resnet50", 256},
    {"vgg16", 64}, {"vgg16", 128}, {"vgg16", 256},
    {"inception3", 64}, {"inception3", 128},
    {"gpt2", 128}, {"gpt2", 256},
    {"bert", 128}, {"bert", 64},
    {"deepspeech2", 64}, {"deepspeech2", 32},
};
#define NTEMPLATES ((int)(sizeof templates / sizeof templates[0]))

enum { S_TEMPLATE, S_GAP, S_DURATION, S_SCALE, S_DEADLINE, S_BEST, S_EBATCH,
       S_NSTREAMS };

static int scale_factor(double u)
{
    if (u >= 0.83 && u <= 0.86)
        return 2;
    if (u > 0.86 && u <= 0.89)
        return 4;
    if (u > 0.89 && u <= 0.99)
        return 8;
    if (u > 0.99)
        return 16;
    return 1;
}

static int level_of(int g)
{
    int l = 0;
    while ((1 << l) < g)
        l++;
    return l;
}

int gen_trace(const gen_opts *o, const curve_set *cs, ef_buf *out, ef_err *e)
{
    const curve_row *rows[NTEMPLATES];
    for (int k = 0; k < NTEMPLATES; k++) {
        const curve_model *m = curve_find_model(cs, templates[k].model);
        rows[k] = m ? curve_find_row(m, templates[k].batch) : NULL;
        if (!rows[k])
            return ef_fail(e, EF_E_INPUT, "%s: no curve for %s batch %ld (the "
                           "generator's templates need the A100 models)",
                           cs->dir, templates[k].model, templates[k].batch);
    }
    gen_rng r[S_NSTREAMS];
    for (int s = 0; s < S_NSTREAMS; s++)
        gen_rng_init(&r[s], o->seed, (uint64_t)s);
    ef_buf_put(out, "job_id,submit_time,iteration,model_name,ddl,batch_size,"
                    "num_gpu,duration,best_effort");
    ef_buf_put(out, o->elastic_batch > 0 ? ",batch_sizes\n" : "\n");
    double arrival = 0;
    for (int i = 0; i < o->jobs; i++) {
        int g = scale_factor(gen_uniform(&r[S_SCALE]));
        int k = (int)(gen_uniform(&r[S_TEMPLATE]) * NTEMPLATES);
        if (k >= NTEMPLATES)
            k = NTEMPLATES - 1;
        double ud = gen_uniform(&r[S_DURATION]);
        double ue = gen_uniform(&r[S_DURATION]);
        double dur = ud < 0.2 ? 60 * pow(10, 2.5 + 1.5 * ue)
                              : 60 * pow(10, 1 + 1.5 * ue);
        dur *= o->duration_scale;
        int64_t duration = (int64_t)dur;
        if (duration < 1)
            duration = 1;
        double tput = rows[k]->cell[level_of(g)];
        if (!(tput > 0))
            return ef_fail(e, EF_E_INPUT, "%s: %s batch %ld has no throughput "
                           "at %d GPUs", cs->dir, templates[k].model,
                           templates[k].batch, g);
        int64_t iters = (int64_t)((double)duration * tput);
        if (iters < 1)
            iters = 1;
        if (i > 0)
            arrival += -log(1 - gen_uniform(&r[S_GAP])) * o->mean_gap;
        int64_t submit = (int64_t)arrival;
        double f = o->ddl_lo + (o->ddl_hi - o->ddl_lo) *
                                   gen_uniform(&r[S_DEADLINE]);
        int64_t ddl = submit + (int64_t)(f * (double)duration);
        int best = gen_uniform(&r[S_BEST]) < o->best_effort;
        ef_buf_printf(out, "%d,%lld,%lld,%s,%lld,%ld,%d,%lld,%d", i,
                      (long long)submit, (long long)iters, templates[k].model,
                      (long long)ddl, templates[k].batch, g,
                      (long long)duration, best);
        if (o->elastic_batch > 0) {
            /* the model's template batch sizes within 2x of the drawn one,
             * ascending; a single size is written as none */
            int eb = gen_uniform(&r[S_EBATCH]) < o->elastic_batch, n = 0;
            long bs[NTEMPLATES];
            for (int t = 0; eb && t < NTEMPLATES; t++) {
                long b = templates[t].batch, d = templates[k].batch;
                if (strcmp(templates[t].model, templates[k].model) == 0 &&
                    b * 2 >= d && b <= d * 2)
                    bs[n++] = b;
            }
            for (int a = 1; a < n; a++) /* insertion sort, n <= 3 */
                for (int c = a; c > 0 && bs[c - 1] > bs[c]; c--) {
                    long tmp = bs[c];
                    bs[c] = bs[c - 1];
                    bs[c - 1] = tmp;
                }
            ef_buf_put(out, ",");
            for (int a = 0; n > 1 && a < n; a++)
                ef_buf_printf(out, "%s%ld", a ? ";" : "", bs[a]);
        }
        ef_buf_put(out, "\n");
    }
    return EF_OK;
}
