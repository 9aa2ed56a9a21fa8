/* hold.c: the loop's hold rule (see hold.h). */
#include "service/hold.h"

int hold_wants(const placement *want, const placement *place)
{
    for (int x = 0; x < want->n; x++)
        for (int y = 0; y < place->n; y++)
            if (want->node[x] == place->node[y] &&
                want->gpu[x] == place->gpu[y])
                return 1;
    return 0;
}

int hold_taker(const hold_job *jobs, int n, const char *hold, int j)
{
    const hold_job *J = &jobs[j];
    int any = -1;
    for (int k = 0; k < n; k++) {
        const hold_job *K = &jobs[k];
        if (k == j || hold[k] || !K->live || !hold_wants(K->want, J->place))
            continue;
        if (K->need > 0 && !J->ends_soon)
            return k;
        if (any < 0 && J->run_seen && !J->admitted)
            any = k;
    }
    return any;
}

/* A running job whose plan changes it. */
static int changed(const hold_job *J)
{
    return J->running && !placement_equal(J->place, J->want);
}

void hold_rule(const hold_job *jobs, int n, char *hold)
{
    /* every change that need not be made is held ... */
    for (int j = 0; j < n; j++)
        hold[j] = changed(&jobs[j]) && !jobs[j].must_change;
    /* ... but where another job takes its GPUs (fewer holds each pass) */
    for (int again = 1; again;) {
        again = 0;
        for (int j = 0; j < n; j++)
            if (hold[j] && hold_taker(jobs, n, hold, j) >= 0) {
                hold[j] = 0;
                again = 1;
            }
    }
    /* then a job none takes from stays, as does one whose new GPUs
     * include a job's that stays (it could not start there); more holds
     * each pass, and a taker only ever fewer */
    for (int again = 1; again;) {
        again = 0;
        for (int j = 0; j < n; j++) {
            const hold_job *J = &jobs[j];
            if (hold[j] || !changed(J) || J->must ||
                hold_taker(jobs, n, hold, j) >= 0)
                continue;
            int blocked = !J->must_change;
            for (int k = 0; k < n && !blocked; k++)
                blocked = hold[k] && hold_wants(J->want, jobs[k].place);
            if (blocked) {
                hold[j] = 1;
                again = 1;
            }
        }
    }
}
