/* policy.c: the simulator's policy registry (see sim.h). To add a policy,
 * write pol_NAME.c exporting a sim_policy and list it here. */
#include <string.h>

#include "simulator/sim.h"

extern const sim_policy sim_policy_ef, sim_policy_ef_noac, sim_policy_edf,
    sim_policy_edf_ac;
extern const sim_policy sim_policy_saxena, sim_policy_gandiva,
    sim_policy_tiresias, sim_policy_themis, sim_policy_chronus,
    sim_policy_pollux;

static const sim_policy *const policies[] = {
    &sim_policy_ef, &sim_policy_ef_noac, &sim_policy_edf, &sim_policy_edf_ac,
    &sim_policy_saxena, &sim_policy_gandiva, &sim_policy_tiresias,
    &sim_policy_themis, &sim_policy_chronus, &sim_policy_pollux,
};
#define NPOL ((int)(sizeof policies / sizeof policies[0]))

const sim_policy *sim_policy_find(const char *name)
{
    for (int i = 0; i < NPOL; i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    return NULL;
}

int sim_policy_count(void) { return NPOL; }

const sim_policy *sim_policy_at(int i)
{
    return i >= 0 && i < NPOL ? policies[i] : NULL;
}

int sim_policy_elastic_batch(const sim_policy *p)
{
    return p == &sim_policy_ef || p == &sim_policy_ef_noac ||
           p == &sim_policy_saxena;
}
