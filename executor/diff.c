/* diff.c: what to do at a slot boundary (see exec.h). */
#include "executor/exec.h"

#include <string.h>

#include "planner/place.h"

const char *exec_act_name(exec_act a)
{
    switch (a) {
    case EXEC_KEEP: return "keep";
    case EXEC_START: return "start";
    case EXEC_RESIZE: return "resize";
    case EXEC_MIGRATE: return "migrate";
    case EXEC_STOP: return "stop";
    }
    return "?";
}

static exec_act classify(const exec_place *cur, const exec_place *want)
{
    if (cur->n == 0)
        return EXEC_START;
    if (want->n == 0)
        return EXEC_STOP;
    if (cur->n != want->n || cur->batch != want->batch)
        return EXEC_RESIZE; /* another GPU count or batch size */
    return exec_place_equal(cur, want) ? EXEC_KEEP : EXEC_MIGRATE;
}

int exec_diff(const exec_place *cur, const exec_place *want, int njobs,
              exec_action *out)
{
    /* Three passes give the execution order: stop halves, starts, keeps. */
    static const int pass_of[] = {
        [EXEC_KEEP] = 2, [EXEC_START] = 1, [EXEC_RESIZE] = 0,
        [EXEC_MIGRATE] = 0, [EXEC_STOP] = 0};
    int n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int j = 0; j < njobs; j++) {
            if (cur[j].n == 0 && want[j].n == 0)
                continue;
            exec_act a = classify(&cur[j], &want[j]);
            if (pass_of[a] != pass)
                continue;
            out[n].act = a;
            out[n].job = j;
            n++;
        }
    return n;
}

int exec_place_same_shape(const exec_place *a, const exec_place *b)
{
    if (a->n != b->n || a->batch != b->batch)
        return 0;
    /* both sorted by node: the same node at each position means the
     * same nodes with the same count on each */
    for (int k = 0; k < a->n; k++)
        if (a->node[k] != b->node[k])
            return 0;
    return 1;
}

int exec_place_is_buddy(const exec_place *pl, int nodes, int gpus_per_node)
{
    cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = nodes;
    c.gpus_per_node = gpus_per_node;
    c.total_gpus = nodes * gpus_per_node;
    place_set s = {pl->n, ef_malloc((size_t)(pl->n + 1) * sizeof(int))};
    int ok = 1;
    for (int k = 0; k < pl->n; k++) {
        if (pl->node[k] < 0 || pl->node[k] >= nodes || pl->gpu[k] < 0 ||
            pl->gpu[k] >= gpus_per_node)
            ok = 0;
        s.gpu[k] = pl->node[k] * gpus_per_node + pl->gpu[k];
    }
    ok = ok && place_is_buddy(&c, &s);
    place_set_free(&s);
    return ok;
}

int exec_place_follow(int n, exec_place *model, const exec_place *real,
                      const char *live, int nodes, int gpus_per_node,
                      char *changed)
{
    /* ok[k]: every live attempt on node k has a known buddy placement */
    char *ok = ef_malloc((size_t)nodes + 1);
    memset(ok, 1, (size_t)nodes + 1);
    for (int i = 0; i < n; i++) {
        if (changed)
            changed[i] = 0;
        if (!live[i])
            continue;
        int good = real[i].n > 0 && exec_place_same_shape(&real[i],
                                                          &(exec_place){
                                      model[i].n, model[i].node,
                                      model[i].gpu, real[i].batch}) &&
                   exec_place_is_buddy(&real[i], nodes, gpus_per_node);
        for (int k = 0; k < model[i].n; k++)
            if (model[i].node[k] >= 0 && model[i].node[k] < nodes && !good)
                ok[model[i].node[k]] = 0;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!live[i] || real[i].n == 0 || model[i].n == 0)
            continue;
        int all = 1;
        for (int k = 0; k < model[i].n && all; k++)
            all = model[i].node[k] >= 0 && model[i].node[k] < nodes &&
                  ok[model[i].node[k]];
        exec_place r = {real[i].n, real[i].node, real[i].gpu,
                        model[i].batch};
        if (!all || placement_equal(&model[i], &r))
            continue;
        exec_place_copy(&model[i], &r);
        if (changed)
            changed[i] = 1;
        m++;
    }
    free(ok);
    return m;
}
