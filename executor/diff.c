/* diff.c: what to do at a slot boundary (see exec.h). */
#include "executor/exec.h"

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
