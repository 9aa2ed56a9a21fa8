/*
 * planlock.h: who may rewrite a plan file while it is being applied.
 *
 * Two lock files (flock) sit next to the plan, named after its real path
 * (realpath: every path to one plan file names the same two files):
 *
 *   PLAN.lock        the plan's mutex, held for moments: by efplan submit
 *                    for its whole read-decide-rewrite of the plan (and
 *                    its jobs file), by efplan apply while it claims the
 *                    plan (plan_apply_claim)
 *   PLAN.apply.lock  held by efplan apply for its whole run; it holds the
 *                    absolute path of that apply's state directory, left
 *                    there when the apply ends (the last apply's)
 *
 * A submit takes PLAN.lock, then asks plan_apply_holder: a live apply
 * means the plan must not be rewritten, and the submit refuses. An apply
 * takes PLAN.lock, then PLAN.apply.lock (another apply holding it is an
 * error), checks that the plan file is still the one it read, writes its
 * state directory into PLAN.apply.lock and lets PLAN.lock go. Both happen
 * under PLAN.lock, so there is no race: an apply that starts while a
 * submit writes waits for the submit (and then finds the plan changed),
 * a submit that starts while an apply claims waits and then refuses.
 *
 * Lock files are never removed (removing one would let two processes lock
 * two different files of one name). A process that dies drops its locks.
 */
#ifndef EF_PLANLOCK_H
#define EF_PLANLOCK_H

#include <stddef.h>

#include "common/err.h"

/*
 * plan_lock: take the plan's mutex, PLAN.lock (waiting for whoever holds
 * it; ef_lock_file), where PLAN is the real path of 'plan_path' (as
 * given when it does not resolve). Returns the descriptor that holds it
 * (release with plan_unlock), or -1 with *e filled (EF_E_INTERNAL, naming
 * the lock file). *denied is set to 1 when the lock file cannot be
 * created for want of permission (EACCES, EPERM, EROFS: a plan in a
 * directory this user cannot write, which no submit of this user can
 * rewrite either), else 0; denied may be NULL.
 */
int plan_lock(const char *plan_path, int *denied, ef_err *e);

/* Release and close a descriptor of plan_lock or plan_apply_claim; -1 is
 * ignored. */
void plan_unlock(int fd);

/*
 * plan_apply_claim: with PLAN.lock held (plan_lock), take PLAN.apply.lock
 * without waiting and write 'state' (the apply's state directory, one
 * line) into it. Returns the descriptor that holds the claim (keep it for
 * the whole apply; plan_unlock), or -1 with *e filled: another apply
 * holds the claim (EF_E_INPUT, "PLAN: another efplan apply is applying
 * this plan (state directory DIR)"), or the file cannot be opened,
 * locked or written (EF_E_INTERNAL).
 */
int plan_apply_claim(const char *plan_path, const char *state, ef_err *e);

/*
 * plan_apply_holder: with PLAN.lock held, whether an apply holds the
 * plan's claim now: *live 1 when one does, else 0; 'state' (len bytes)
 * gets the state directory PLAN.apply.lock names (the live apply's, or
 * the last one's), "" when it names none (no file: never applied with
 * this efplan). Returns EF_OK, or EF_ERR with *e filled (EF_E_INTERNAL:
 * the file exists but cannot be opened or locked).
 */
int plan_apply_holder(const char *plan_path, char *state, size_t len,
                      int *live, ef_err *e);

#endif
