/* place.c: buddy placement with stickiness (see place.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "planner/place.h"

#include <string.h>

#include "common/err.h"
#include "common/util.h"

void place_set_free(place_set *s)
{
    free(s->gpu);
    s->gpu = NULL;
    s->g = 0;
}

int place_is_buddy(const cluster *c, const place_set *s)
{
    int G = c->gpus_per_node;
    if (s->g <= 0 || !ef_is_pow2(s->g))
        return 0;
    for (int i = 1; i < s->g; i++)
        if (s->gpu[i] <= s->gpu[i - 1])
            return 0;
    if (s->gpu[0] < 0 || s->gpu[s->g - 1] >= c->total_gpus)
        return 0;
    if (s->g <= G) {
        /* one aligned block inside one node */
        return s->gpu[0] % s->g == 0 && s->gpu[s->g - 1] == s->gpu[0] + s->g - 1;
    }
    /* whole nodes */
    if (s->g % G)
        return 0;
    for (int i = 0; i < s->g; i += G) {
        if (s->gpu[i] % G)
            return 0;
        for (int k = 1; k < G; k++)
            if (s->gpu[i + k] != s->gpu[i] + k)
                return 0;
    }
    return 1;
}

typedef struct ord {
    int i;
    int want;
    int kept; /* same size as before: placed first among equals */
    int fixed; /* takes exactly its old GPUs before anyone is placed */
} ord;

static int cmp_ord(const void *a, const void *b, void *ctx)
{
    const char *const *ids = ctx;
    const ord *x = a, *y = b;
    if (x->want != y->want)
        return y->want - x->want;
    if (x->kept != y->kept)
        return y->kept - x->kept;
    return strcmp(ids[x->i], ids[y->i]);
}

static int block_free(const int *owner, int start, int g)
{
    for (int k = 0; k < g; k++)
        if (owner[start + k] >= 0)
            return 0;
    return 1;
}

/* 1 if no GPU of the block was held in the previous slot by a job other
 * than 'job' (taking such a block would make that job move). */
static int block_unclaimed(const int *claim, int start, int g, int job)
{
    for (int k = 0; k < g; k++)
        if (claim[start + k] >= 0 && claim[start + k] != job)
            return 0;
    return 1;
}

static void take(int *owner, int *nodefree, int G, place_set *o, int job,
                 int start, int g, int at)
{
    nodefree[start / G] -= g;
    for (int k = 0; k < g; k++) {
        owner[start + k] = job;
        o->gpu[at + k] = start + k;
    }
}

/* Which jobs a placement attempt fixes on the GPUs they hold. */
enum { FIX_NONE, FIX_KEEP, FIX_ALL, FIX_SOME };

/* One placement attempt. Each job whose size is unchanged and that
 * 'fix' names (FIX_ALL: every such job; FIX_KEEP: those with keep[i];
 * FIX_SOME: those with held[i])
 * first takes exactly the GPUs it held; then the others are placed
 * largest first, each preferring its old GPUs. With nothing fixed this
 * never fails while the total fits; fixed blocks may leave no aligned
 * room for a job (EF_ERR). */
static int place_try(const cluster *c, int n, const int *want,
                     const place_set *prev, const char *const *ids,
                     const char *keep, place_set *out, int *owner, int fix,
                     const char *held, int *failed)
{
    int G = c->gpus_per_node, N = c->total_gpus;
    long total = 0;
    ord *o = ef_malloc((size_t)(n ? n : 1) * sizeof *o);
    int m = 0;
    for (int i = 0; i < n; i++) {
        out[i].g = 0;
        out[i].gpu = NULL;
        if (want[i] <= 0)
            continue;
        if (!ef_is_pow2(want[i]) || (want[i] > G && want[i] % G)) {
            free(o);
            return EF_ERR;
        }
        total += want[i];
        o[m].i = i;
        o[m].want = want[i];
        o[m].kept = prev && prev[i].g == want[i];
        o[m].fixed = o[m].kept && (fix == FIX_ALL ||
                                   (fix == FIX_KEEP && keep && keep[i]) ||
                                   (fix == FIX_SOME && held[i]));
        m++;
    }
    if (failed)
        *failed = -1;
    if (total > N) {
        free(o);
        return EF_ERR;
    }
    /* the jobs that take their old GPUs are placed in any order (each
     * takes exactly its own, failing on a clash whatever the order): only
     * the others, moved to the front, need the placement order */
    int mo = 0;
    for (int r = 0; r < m; r++)
        if (!o[r].fixed) {
            ord t = o[mo];
            o[mo++] = o[r];
            o[r] = t;
        }
    qsort_r(o, (size_t)mo, sizeof *o, cmp_ord, (void *)ids);
    for (int k = 0; k < N; k++)
        owner[k] = -1;
    int *nodefree = ef_malloc((size_t)c->nodes * sizeof *nodefree);
    for (int k = 0; k < c->nodes; k++)
        nodefree[k] = G;
    /* who held each GPU in the previous slot */
    int *claim = ef_malloc((size_t)N * sizeof *claim);
    for (int k = 0; k < N; k++)
        claim[k] = -1;
    for (int i = 0; prev && i < n; i++)
        for (int k = 0; k < prev[i].g && want[i] > 0; k++)
            claim[prev[i].gpu[k]] = i;
    if (fix != FIX_NONE) {
        for (int r = 0; r < m; r++) {
            int i = o[r].i;
            if (!o[r].fixed)
                continue;
            out[i].g = prev[i].g;
            out[i].gpu = ef_malloc((size_t)prev[i].g * sizeof(int));
            for (int k = 0; k < prev[i].g; k++) {
                int x = prev[i].gpu[k];
                if (owner[x] >= 0)
                    goto fail;
                owner[x] = i;
                nodefree[x / G]--;
                out[i].gpu[k] = x;
            }
        }
    }
    for (int r = 0; r < m; r++) {
        int i = o[r].i, g = o[r].want;
        const place_set *pv = prev && prev[i].g > 0 ? &prev[i] : NULL;
        if (o[r].fixed)
            continue;
        out[i].g = g;
        out[i].gpu = ef_malloc((size_t)g * sizeof(int));
        if (g <= G) {
            int start = -1;
            if (pv) {
                /* the aligned g-block holding the old first GPU: same GPUs
                 * when unchanged, inside or around the old ones else */
                int cand = pv->gpu[0] / g * g;
                if (cand / G == pv->gpu[0] / G && block_free(owner, cand, g))
                    start = cand;
            }
            /* first a block nobody held before, then any free block */
            for (int pass = 0; pass < 2 && start < 0; pass++)
                for (int nd = 0; start < 0 && nd < c->nodes; nd++) {
                    if (nodefree[nd] < g)
                        continue;
                    for (int s = nd * G; start < 0 && s < (nd + 1) * G; s += g)
                        if (block_free(owner, s, g) &&
                            (pass || block_unclaimed(claim, s, g, i)))
                            start = s;
                }
            if (start < 0) {
                if (failed)
                    *failed = i;
                goto fail;
            }
            take(owner, nodefree, G, &out[i], i, start, g, 0);
        } else {
            int nodes = g / G, got = 0;
            if (pv) {
                for (int k = 0; k < pv->g && got < nodes; k += G) {
                    int nd = pv->gpu[k] / G;
                    if (pv->gpu[k] % G == 0 && block_free(owner, nd * G, G))
                        take(owner, nodefree, G, &out[i], i, nd * G, G, got++ * G);
                }
            }
            for (int pass = 0; pass < 2; pass++)
                for (int nd = 0; nd < c->nodes && got < nodes; nd++)
                    if (nodefree[nd] == G &&
                        (pass || block_unclaimed(claim, nd * G, G, i)))
                        take(owner, nodefree, G, &out[i], i, nd * G, G, got++ * G);
            if (got < nodes) {
                if (failed)
                    *failed = i;
                goto fail;
            }
            /* keep GPU ids ascending */
            for (int a = 1; a < nodes; a++)
                for (int b = a; b > 0 && out[i].gpu[b * G] < out[i].gpu[(b - 1) * G]; b--)
                    for (int k = 0; k < G; k++) {
                        int t = out[i].gpu[b * G + k];
                        out[i].gpu[b * G + k] = out[i].gpu[(b - 1) * G + k];
                        out[i].gpu[(b - 1) * G + k] = t;
                    }
        }
    }
    free(o);
    free(nodefree);
    free(claim);
    return EF_OK;
fail:
    for (int i = 0; i < n; i++)
        place_set_free(&out[i]);
    free(o);
    free(nodefree);
    free(claim);
    return EF_ERR;
}

/*
 * The jobs to unhold so that job f (want[f] GPUs), which found no room,
 * can be placed: among the jobs still held in place (held[], unchanged
 * size), the fewest GPUs that free an aligned block of want[f] GPUs on
 * one node (a job inside the block, or the one that holds it), or, past
 * one node, one more node (the node whose held jobs hold the fewest GPUs,
 * not free already). Jobs marked keep are never unheld. Ties: the lowest
 * GPU. Clears their held[] and returns how many; 0 when nothing can be
 * unheld.
 */
static int unhold_for(const cluster *c, int n, const int *want,
                      const place_set *prev, const char *keep, char *held,
                      int f)
{
    int G = c->gpus_per_node, N = c->total_gpus, g = want[f];
    int *who = ef_malloc((size_t)N * sizeof *who);
    for (int k = 0; k < N; k++)
        who[k] = -1;
    for (int i = 0; i < n; i++)
        if (held[i] && want[i] > 0 && prev[i].g == want[i])
            for (int k = 0; k < prev[i].g; k++)
                who[prev[i].gpu[k]] = i;
    int span = g <= G ? g : G, best = -1;
    long best_cost = -1;
    for (int s = 0; s + span <= N; s += span) {
        long cost = 0;
        int ok = 1, last = -1;
        for (int k = s; k < s + span && ok; k++) {
            int i = who[k];
            if (i < 0 || i == last)
                continue;
            ok = !(keep && keep[i]);
            cost += want[i];
            last = i;
        }
        if (ok && cost > 0 && (best < 0 || cost < best_cost)) {
            best = s;
            best_cost = cost;
        }
    }
    int cnt = 0;
    for (int k = best; best >= 0 && k < best + span; k++) {
        int i = who[k];
        if (i >= 0 && held[i]) {
            held[i] = 0;
            cnt++;
        }
    }
    free(who);
    return cnt;
}

int place_slot_keep(const cluster *c, int n, const int *want,
                    const place_set *prev, const char *const *ids,
                    const char *keep, place_set *out, int *owner)
{
    return place_slot_hold(c, n, want, prev, ids, keep, 0, out, owner);
}

/* place_slot_hold's attempts; with 'held_only' all but the last (which
 * holds nobody): EF_ERR when those place nothing. */
static int place_attempts(const cluster *c, int n, const int *want,
                          const place_set *prev, const char *const *ids,
                          const char *keep, int least, int held_only,
                          place_set *out, int *owner)
{
    if (prev && place_try(c, n, want, prev, ids, keep, out, owner,
                          FIX_ALL, NULL, NULL) == EF_OK)
        return EF_OK;
    if (prev && least) {
        /* move as few as can be: hold every unchanged job in place, and
         * unhold only those in the way of a job that found no room */
        char *held = ef_malloc((size_t)(n ? n : 1));
        memset(held, 1, (size_t)(n ? n : 1));
        int f, rc = EF_ERR;
        for (int round = 0; round <= n; round++) {
            rc = place_try(c, n, want, prev, ids, keep, out, owner,
                           FIX_SOME, held, &f);
            if (rc == EF_OK || f < 0 ||
                unhold_for(c, n, want, prev, keep, held, f) == 0)
                break;
        }
        free(held);
        if (rc == EF_OK)
            return EF_OK;
    }
    if (prev && keep && place_try(c, n, want, prev, ids, keep, out, owner,
                                  FIX_KEEP, NULL, NULL) == EF_OK)
        return EF_OK;
    if (held_only)
        return EF_ERR;
    return place_try(c, n, want, prev, ids, keep, out, owner, FIX_NONE,
                     NULL, NULL);
}

int place_slot_hold(const cluster *c, int n, const int *want,
                    const place_set *prev, const char *const *ids,
                    const char *keep, int least, place_set *out, int *owner)
{
    return place_attempts(c, n, want, prev, ids, keep, least, 0, out,
                          owner);
}

int place_holds_keep(const cluster *c, int n, const int *want,
                     const place_set *prev, const char *const *ids,
                     const char *keep, int least, int *owner)
{
    place_set *out = ef_calloc((size_t)(n ? n : 1), sizeof *out);
    int ok = place_attempts(c, n, want, prev, ids, keep, least, 1, out,
                            owner) == EF_OK;
    for (int i = 0; ok && i < n; i++)
        place_set_free(&out[i]);
    free(out);
    return ok;
}


int place_slot(const cluster *c, int n, const int *want, const place_set *prev,
               const char *const *ids, place_set *out, int *owner)
{
    return place_slot_keep(c, n, want, prev, ids, NULL, out, owner);
}
