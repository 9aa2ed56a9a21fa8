/* engine.c: the slot engine (see engine.h). */
#include "planner/engine.h"

#include <string.h>

#include "common/util.h"

void eng_init(eng *x, const cluster *c, int cap)
{
    memset(x, 0, sizeof *x);
    x->cl = *c;
    x->cap = cap > 0 ? cap : 1;
    size_t n = (size_t)x->cap, N = (size_t)c->total_gpus;
    x->want = ef_malloc(n * sizeof *x->want);
    x->prev = ef_calloc(n, sizeof *x->prev);
    x->out = ef_calloc(n, sizeof *x->out);
    x->ids = ef_malloc(n * sizeof *x->ids);
    x->keep = ef_malloc(n);
    x->owner = ef_malloc((N ? N : 1) * sizeof *x->owner);
    x->load = ef_malloc((N ? N : 1) * sizeof *x->load);
}

void eng_free(eng *x)
{
    free(x->want);
    free(x->prev);
    free(x->out);
    free(x->ids);
    free(x->keep);
    free(x->owner);
    free(x->load);
    memset(x, 0, sizeof *x);
}

static double share_of(const eng_alloc *a)
{
    return a->share > 0 ? a->share : 1;
}

/* Take the pins as the placement; check them. */
static int place_pinned(eng *x, const eng_alloc *a, int n, ef_err *e)
{
    int N = x->cl.total_gpus, rc = EF_OK;
    for (int k = 0; k < N; k++)
        x->load[k] = 0;
    for (int k = 0; k < n; k++) {
        place_set *o = &x->out[k];
        o->g = a[k].want;
        o->gpu = NULL;
        if (a[k].want == 0)
            continue;
        double sh = share_of(&a[k]);
        if (!a[k].pin || sh > 1) {
            rc = ef_fail(e, EF_E_INTERNAL, "job %s runs without its GPUs or "
                         "with a share over 1", a[k].id);
            continue;
        }
        o->gpu = ef_malloc((size_t)a[k].want * sizeof(int));
        for (int u = 0; u < a[k].want; u++) {
            int id = a[k].pin[u];
            o->gpu[u] = id;
            if (id < 0 || id >= N || (u > 0 && id <= a[k].pin[u - 1])) {
                rc = ef_fail(e, EF_E_INTERNAL, "job %s: GPU ids out of range "
                             "or not ascending", a[k].id);
                break;
            }
            x->load[id] += sh;
            if (x->load[id] > 1 + 1e-9)
                rc = ef_fail(e, EF_E_INTERNAL, "GPU %d is shared over 100%%",
                             id);
        }
    }
    if (rc != EF_OK)
        for (int k = 0; k < n; k++)
            place_set_free(&x->out[k]);
    return rc;
}

static eng_change classify(const place_set *p, const place_set *o)
{
    if (p->g == 0)
        return o->g > 0 ? ENG_START : ENG_KEEP;
    if (o->g == 0)
        return ENG_STOP;
    if (p->g != o->g)
        return ENG_RESIZE;
    return memcmp(p->gpu, o->gpu, (size_t)o->g * sizeof(int)) ? ENG_MIGRATE
                                                              : ENG_KEEP;
}

int eng_place(eng *x, eng_alloc *a, int n, ef_err *e)
{
    ef_assert(n <= x->cap);
    int N = x->cl.total_gpus, pinned = 0, same = 1;
    long total = 0;
    for (int k = 0; k < n; k++) {
        if (a[k].want < 0)
            return ef_fail(e, EF_E_INTERNAL, "job %s wants %d GPUs", a[k].id,
                           a[k].want);
        x->want[k] = a[k].want;
        x->prev[k] = *a[k].pl;
        x->ids[k] = a[k].id;
        x->keep[k] = (char)(a[k].keep != 0);
        total += a[k].want;
        pinned |= a[k].pin && a[k].want > 0;
        same &= a[k].want == a[k].pl->g;
    }
    /* no size changes: placement's first attempt holds every job on
     * exactly its GPUs (a placement never gives two jobs one GPU), so
     * nothing moves */
    if (same && !pinned && total <= N) {
        for (int k = 0; k < n; k++)
            a[k].change = ENG_KEEP;
        return EF_OK;
    }
    if (pinned) {
        if (place_pinned(x, a, n, e) != EF_OK)
            return EF_ERR;
    } else {
        if (total > N)
            return ef_fail(e, EF_E_INTERNAL, "%ld GPUs given out of %d",
                           total, N);
        if (place_slot_hold(&x->cl, n, x->want, x->prev, x->ids, x->keep,
                            x->least, x->out, x->owner) != EF_OK)
            return ef_fail(e, EF_E_INTERNAL, "placement of %ld GPUs failed",
                           total);
    }
    for (int k = 0; k < n; k++) {
        a[k].change = classify(&x->prev[k], &x->out[k]);
        place_set_free(a[k].pl);
        *a[k].pl = x->out[k];
    }
    return EF_OK;
}

int eng_advance(double *rem, double *ovh_left, double tp, double dt,
                double *ov, double *used)
{
    *ov = *ovh_left < dt ? *ovh_left : dt;
    double prod = dt - *ov;
    if (*rem <= prod * tp) {
        *used = *rem / tp;
        *rem = 0;
        *ovh_left = 0;
        return 1;
    }
    *rem -= prod * tp;
    *ovh_left -= *ov;
    *used = prod;
    return 0;
}
