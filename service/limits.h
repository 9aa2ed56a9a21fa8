/*
 * limits.h: per-user limits of efplan serve (lim_*): how many jobs a user
 * may have queued or running at once, and how many submissions a user may
 * make per minute. Over either, a submission is refused with HTTP 429, a
 * Retry-After header and a JSON error body that says which limit, its
 * value and when to retry; nothing is stored and nothing is planned.
 *
 * Whose limit: the token's own (efplan token add --max-queued,
 * --max-submit-rate; efplan token limits), else the service's (efplan
 * serve --max-queued, --max-submit-rate). Jobs are counted per user (a
 * token's name, across its tokens); the limit applied is that of the
 * token that submits. Operators are limited as users are (give an
 * operator's token its own limits, or none).
 *
 * Time: the service's clock (svc_now: the wall clock, or --time-scale's),
 * as every other time of the service; Retry-After is in wall seconds (the
 * plan seconds to wait divided by the scale, at least 1).
 *
 * The submission rate is counted in memory (a restart starts it afresh);
 * the queued jobs are the store's (store_user_live). Thread-safe: one
 * mutex of its own.
 */
#ifndef EF_LIMITS_H
#define EF_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "service/store.h"
#include "service/svc.h"

typedef struct lim lim;

/* The service's limits: max_queued jobs queued or running per user,
 * max_rate submissions per minute per user (0: no limit). */
lim *lim_new(int64_t max_queued, int64_t max_rate);
void lim_free(lim *L);

/* The limits that apply to 'who' (its token's, else the service's) into
 * *queued and *rate (0: none); *own (may be NULL): 1 when a limit is the
 * token's own (bit 0: queued, bit 1: rate). */
void lim_of(const lim *L, const store_ident *who, int64_t *queued,
            int64_t *rate, int *own);

/*
 * lim_check: may 'who' submit a new job at service time 'now'? 0 when it
 * may; 1 when a limit refuses it, with *r filled: 429, r->retry_after
 * (wall seconds), the body {"error": {"status": 429, "message", "limit"
 * ("max_queued" or "max_submit_rate"), "value", "retry_after"}}. The
 * queued limit counts the store's jobs of who->name queued or running;
 * its retry is one plan slot ('slot' seconds) away (a job may end by
 * then). The rate limit counts the submissions lim_note saw in the last
 * 60 s; its retry is when the oldest of them leaves the minute. 'scale':
 * plan seconds per wall second. A store failure is 500 (returns 1).
 * Call under the svc lock (the store).
 */
int lim_check(lim *L, store *st, const store_ident *who, int64_t now,
              double scale, int slot, svc_reply *r);

/* A submission of user 'name' decided at service time 'now' (admitted,
 * best-effort or rejected): it counts against the rate for a minute. */
void lim_note(lim *L, const char *name, int64_t now);

/* A limit as a person writes it: N (1 to 1000000000; a rate also
 * "N/min"), "none" (STORE_LIMIT_NONE) or "default" (STORE_LIMIT_SERVICE:
 * the service's). 0 with *v, or -1. */
int lim_parse(const char *arg, int rate, int64_t *v);
/* A limit as token list shows it: "50", "none", or "-" (the service's);
 * a rate as "50/min". Into dst (n bytes; 32 suffice). Returns dst. */
const char *lim_text(int64_t v, int rate, char *dst, size_t n);

#endif
