/* cmd_oracle.h: what "efplan oracle" computed, and its text for a
 * person (cli/cmd_oracle_text.c); the command itself is cli/cmd_oracle.c. */
#ifndef EF_CMD_ORACLE_H
#define EF_CMD_ORACLE_H

#include "model/jobs.h"
#include "solver/ilp.h"

/*
 * cmd_oracle_text: the oracle's answer for a person, to standard output:
 * the exact ILP's table (when rp->ilp), the greedy, offline and
 * LP-guided lines, the relaxed bound's (when rp->relaxed), then the
 * verdict (ilp_verdict_of): where the optimum lies, how far each plan is
 * from it, and the jobs the best answer admits that greedy rejects.
 */
void cmd_oracle_text(const ilp_report *rp);

#endif
