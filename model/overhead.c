/* overhead.c: reconfiguration overheads (see overhead.h). */
#include "model/overhead.h"

#include <math.h>
#include <string.h>

#include "common/err.h"
#include "common/fsum.h"

/* Fig. 12(b) of the ElasticFlow paper, seconds:
 * 1->2, 2->1, 8->16, 16->8, migrate 8 GPUs. */
static const struct {
    const char *model;
    double up_small, down_small, up_big, down_big, migrate;
} fig12[] = {
    {"bert", 3.904, 2.611, 4.239, 4.222, 3.191},
    {"deepspeech2", 3.904, 2.611, 4.239, 4.222, 3.191},
    {"gpt2", 2.344, 3.101, 3.203, 3.198, 2.119},
    {"inception3", 1.819, 1.099, 1.738, 1.733, 0.69},
    {"resnet50", 1.884, 1.659, 1.666, 1.787, 0.887},
    {"vgg16", 1.82, 1.629, 2.407, 2.354, 3.209},
};
/* the figure's "ef" row, used for every other model */
static const double generic[5] = {1.573, 1.131, 1.757, 1.636, 2.429};

int ovh_parse(const char *s)
{
    if (strcmp(s, "fig12") == 0)
        return OVH_FIG12;
    if (strcmp(s, "reference") == 0)
        return OVH_REFERENCE;
    if (strcmp(s, "none") == 0)
        return OVH_NONE;
    if (strcmp(s, "restart") == 0)
        return OVH_RESTART;
    return -1;
}

const char *ovh_name(ovh_mode m)
{
    return m == OVH_FIG12       ? "fig12"
           : m == OVH_REFERENCE ? "reference"
           : m == OVH_RESTART   ? "restart"
                                : "none";
}

/* the figure's rows, then 'generic' */
#define OVH_NROWS ((int)(sizeof fig12 / sizeof fig12[0]))

ovh_id ovh_lookup(const char *model)
{
    for (int i = 0; i < OVH_NROWS; i++)
        if (strcmp(fig12[i].model, model) == 0)
            return i;
    return OVH_NROWS;
}

static const double *row_of(ovh_id id)
{
    return id >= 0 && id < OVH_NROWS ? &fig12[id].up_small : generic;
}

static double log2i(int g)
{
    return g > 1 ? (double)(31 - __builtin_clz((unsigned)g)) : 0;
}

double ovh_change(const char *model, int g0, int g1, int moved)
{
    return ovh_change_id(ovh_lookup(model), g0, g1, moved);
}

/* ovh_change_id on the row itself (inline: ovh_charge_id is on the
 * promise checks' hot path) */
static inline double change_row(const double *r, int g0, int g1, int moved)
{
    if (g1 <= 0)
        return 0; /* stopping or preempted: the job is not running */
    if (g0 == g1 && !moved)
        return 0;
    if (g0 == g1)
        return r[4];
    int big = g0 > g1 ? g0 : g1;
    /* 2 GPUs -> the small value, 16 -> the big one, log2-linear between */
    double f = (log2i(big) - 1) / 3;
    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    if (g1 > g0)
        return r[0] + f * (r[2] - r[0]);
    return r[1] + f * (r[3] - r[1]);
}

double ovh_change_id(ovh_id id, int g0, int g1, int moved)
{
    return change_row(row_of(id), g0, g1, moved);
}

/* ovh_expect_id, inline */
static inline double expect(ovh_mode m, ovh_id id, int g0, int g1, int moved)
{
    if (m == OVH_FIG12)
        return change_row(row_of(id), g0, g1, moved);
    if (m == OVH_RESTART)
        return g1 > 0 && (g0 != g1 || moved) ? OVH_RESTART_SECONDS : 0;
    return 0;
}

double ovh_max(const char *model)
{
    const double *r = row_of(ovh_lookup(model));
    double m = 0;
    for (int i = 0; i < 5; i++)
        if (r[i] > m)
            m = r[i];
    return m;
}

/* The reference's utils.estimate_overhead(g, restart, cache), rule for
 * rule (../shared/reference/algorithms.md §4.4): base 2 s (7 s when the
 * cluster has N >= 256 GPUs); a cached GPU set pays the base only, even
 * on a restart round (§8.5: "the restart penalty is skipped for cached
 * jobs"); a restart round adds 27 s (20 s more when N >= 256); then
 * 2 * (log2 g + 1) s. */
double ovh_reference(int g, int cached, int restart, int total_gpus)
{
    int large = total_gpus >= 256;
    double base = large ? 7 : 2;
    if (cached)
        return base;
    if (restart)
        base += large ? 47 : 27;
    return base + 2 * (log2i(g) + 1);
}

/* Append 'count' slots of 'kind' to runs[*n] (merged with the last). */
static void ref_push(ovh_ref_run *runs, int *n, ovh_ref_kind kind,
                     int64_t count)
{
    if (count <= 0)
        return;
    if (*n > 0 && runs[*n - 1].kind == kind) {
        runs[*n - 1].count += count;
        return;
    }
    runs[*n].kind = kind;
    runs[*n].count = count;
    (*n)++;
}

/* The first q slots of the period that starts at a restart. */
static void ref_period(ovh_ref_run *runs, int *n, int64_t q, int64_t every)
{
    ref_push(runs, n, OVH_REF_RESTART, q < 1 ? q : 1);
    if (every >= 2 && q >= 2)
        ref_push(runs, n, OVH_REF_FRESH, 1);
    if (every >= 3 && q >= 3)
        ref_push(runs, n, OVH_REF_CACHED, q - 2);
}

void ovh_ref_slots(int64_t k0, int64_t n, int64_t every, int prev_restart,
                   ovh_ref_seq *s)
{
    ef_assert(k0 >= 0 && n >= 1 && every >= 1);
    memset(s, 0, sizeof *s);
    /* the first restart at or after k0 */
    int64_t r1 = k0 <= every ? every : (k0 + every - 1) / every * every;
    int64_t h = r1 - k0 < n ? r1 - k0 : n;
    if (h > 0) {
        ref_push(s->head, &s->nhead,
                 prev_restart ? OVH_REF_FRESH : OVH_REF_CACHED, 1);
        ref_push(s->head, &s->nhead, OVH_REF_CACHED, h - 1);
    }
    int64_t m = n - h;
    s->reps = m / every;
    if (s->reps > 0)
        ref_period(s->body, &s->nbody, every, every);
    ref_period(s->tail, &s->ntail, m % every, every);
    int64_t last = k0 + n - 1;
    s->last_restart = last > 0 && last % every == 0;
}

static uint64_t hash_set(const int *gpu, int g)
{
    uint64_t h = 1469598103934665603ULL;
    for (int k = 0; k < g; k++) {
        h ^= (uint64_t)(uint32_t)gpu[k] + 0x9E3779B97F4A7C15ULL;
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

int ovh_cache_seen(ovh_cache *c, const int *gpu, int g)
{
    uint64_t h = hash_set(gpu, g);
    if (c->n * 2 >= c->cap) {
        int ncap = c->cap ? c->cap * 2 : 256;
        uint64_t *nh = ef_calloc((size_t)ncap, sizeof *nh);
        for (int i = 0; i < c->cap; i++) {
            if (!c->h[i])
                continue;
            int k = (int)(c->h[i] & (uint64_t)(ncap - 1));
            while (nh[k])
                k = (k + 1) & (ncap - 1);
            nh[k] = c->h[i];
        }
        free(c->h);
        c->h = nh;
        c->cap = ncap;
    }
    int k = (int)(h & (uint64_t)(c->cap - 1));
    while (c->h[k]) {
        if (c->h[k] == h)
            return 1;
        k = (k + 1) & (c->cap - 1);
    }
    c->h[k] = h;
    c->n++;
    return 0;
}

void ovh_cache_clear(ovh_cache *c)
{
    if (c->h)
        memset(c->h, 0, (size_t)c->cap * sizeof *c->h);
    c->n = 0;
}

void ovh_cache_free(ovh_cache *c)
{
    free(c->h);
    memset(c, 0, sizeof *c);
}

double ovh_expect(ovh_mode m, const char *model, int g0, int g1, int moved)
{
    return ovh_expect_id(m, ovh_lookup(model), g0, g1, moved);
}

double ovh_expect_id(ovh_mode m, ovh_id id, int g0, int g1, int moved)
{
    return expect(m, id, g0, g1, moved);
}

double ovh_expect_max(ovh_mode m, const char *model)
{
    if (m == OVH_FIG12)
        return ovh_max(model);
    return m == OVH_RESTART ? OVH_RESTART_SECONDS : 0;
}

double ovh_charge(ovh_mode m, const char *model, int g0, int g1, int moved,
                  int rebatch)
{
    return ovh_charge_id(m, ovh_lookup(model), g0, g1, moved, rebatch);
}

double ovh_charge_id(ovh_mode m, ovh_id id, int g0, int g1, int moved,
                     int rebatch)
{
    if (g1 <= 0 || (m != OVH_FIG12 && m != OVH_RESTART))
        return 0;
    if (g0 != g1 || moved)
        return expect(m, id, g0, g1, moved);
    if (rebatch && g0 > 0)
        return expect(m, id, g1, g1, 1);
    return 0;
}

void ovh_ref_add(double *x, const ovh_ref_seq *seq, const double *add)
{
    ef_fsum_run r[3];
    for (int k = 0; k < seq->nhead; k++)
        r[k] = (ef_fsum_run){add[seq->head[k].kind], seq->head[k].count};
    *x = ef_fsum_repeat(*x, r, seq->nhead, 1);
    for (int k = 0; k < seq->nbody; k++)
        r[k] = (ef_fsum_run){add[seq->body[k].kind], seq->body[k].count};
    *x = ef_fsum_repeat(*x, r, seq->nbody, seq->reps);
    for (int k = 0; k < seq->ntail; k++)
        r[k] = (ef_fsum_run){add[seq->tail[k].kind], seq->tail[k].count};
    *x = ef_fsum_repeat(*x, r, seq->ntail, 1);
}
