/* limits.c: per-user limits of efplan serve (limits.h). */
#include "service/limits.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/util.h"

/* One user's submissions of the last minute: times, oldest first. */
typedef struct lim_user {
    char *name;
    int64_t *t;
    int n, cap;
} lim_user;

struct lim {
    int64_t max_queued, max_rate;
    pthread_mutex_t mu;
    lim_user *u;   /* sorted by name */
    int nu, cap;
};

#define LIM_WINDOW 60

lim *lim_new(int64_t max_queued, int64_t max_rate)
{
    lim *L = ef_calloc(1, sizeof *L);
    L->max_queued = max_queued > 0 ? max_queued : 0;
    L->max_rate = max_rate > 0 ? max_rate : 0;
    pthread_mutex_init(&L->mu, NULL);
    return L;
}

void lim_free(lim *L)
{
    if (!L)
        return;
    for (int k = 0; k < L->nu; k++) {
        free(L->u[k].name);
        free(L->u[k].t);
    }
    free(L->u);
    pthread_mutex_destroy(&L->mu);
    free(L);
}

/* A token's value over the service's: 0 none. */
static int64_t pick(int64_t own, int64_t service)
{
    if (own == STORE_LIMIT_SERVICE)
        return service;
    return own > 0 ? own : 0;
}

void lim_of(const lim *L, const store_ident *who, int64_t *queued,
            int64_t *rate, int *own)
{
    *queued = pick(who->max_queued, L->max_queued);
    *rate = pick(who->max_rate, L->max_rate);
    if (own)
        *own = (who->max_queued != STORE_LIMIT_SERVICE) |
               (who->max_rate != STORE_LIMIT_SERVICE) << 1;
}

/* The entry of user 'name' (made when 'make'), or NULL; under L->mu. */
static lim_user *user_of(lim *L, const char *name, int make)
{
    int lo = 0, hi = L->nu;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(L->u[mid].name, name);
        if (c == 0)
            return &L->u[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!make)
        return NULL;
    if (L->nu == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 16;
        L->u = ef_realloc(L->u, (size_t)L->cap * sizeof *L->u);
    }
    memmove(&L->u[lo + 1], &L->u[lo], (size_t)(L->nu - lo) * sizeof *L->u);
    memset(&L->u[lo], 0, sizeof *L->u);
    L->u[lo].name = ef_strdup(name);
    L->nu++;
    return &L->u[lo];
}

/* Drop what is older than the minute before 'now'. */
static void trim(lim_user *u, int64_t now)
{
    int k = 0;
    while (k < u->n && u->t[k] <= now - LIM_WINDOW)
        k++;
    if (k > 0) {
        memmove(u->t, u->t + k, (size_t)(u->n - k) * sizeof *u->t);
        u->n -= k;
    }
}

void lim_note(lim *L, const char *name, int64_t now)
{
    pthread_mutex_lock(&L->mu);
    lim_user *u = user_of(L, name, 1);
    trim(u, now);
    if (u->n == u->cap) {
        u->cap = u->cap ? 2 * u->cap : 8;
        u->t = ef_realloc(u->t, (size_t)u->cap * sizeof *u->t);
    }
    /* times only grow on one clock; a later note never goes before */
    u->t[u->n] = u->n > 0 && u->t[u->n - 1] > now ? u->t[u->n - 1] : now;
    u->n++;
    pthread_mutex_unlock(&L->mu);
}

/* Plan seconds as wall seconds for Retry-After: at least 1. */
static int64_t wall_secs(int64_t plan_s, double scale)
{
    double w = ceil((double)plan_s / (scale > 0 ? scale : 1));
    return w < 1 ? 1 : w > 86400 ? 86400 : (int64_t)w;
}

/* Fill the 429 answer. */
static void refuse(svc_reply *r, const char *limit, int64_t value,
                   int64_t retry, const char *msg)
{
    json_t *er = json_object();
    json_object_set_new(er, "limit", json_string(limit));
    json_object_set_new(er, "message", json_string(msg));
    json_object_set_new(er, "retry_after", json_integer(retry));
    json_object_set_new(er, "status", json_integer(429));
    json_object_set_new(er, "value", json_integer(value));
    json_t *v = json_object();
    json_object_set_new(v, "error", er);
    svc_reply_json(r, 429, v);
    r->retry_after = (int)retry;
}

int lim_check(lim *L, store *st, const store_ident *who, int64_t now,
              double scale, int slot, svc_reply *r)
{
    int64_t mq, mr;
    int own;
    lim_of(L, who, &mq, &mr, &own);
    char m[EF_ERR_LEN + 64];
    if (mr > 0) {
        pthread_mutex_lock(&L->mu);
        lim_user *u = user_of(L, who->name, 0);
        if (u)
            trim(u, now);
        int64_t n = u ? u->n : 0;
        int64_t oldest = n > 0 ? u->t[0] : now;
        pthread_mutex_unlock(&L->mu);
        if (n >= mr) {
            int64_t retry = wall_secs(oldest + LIM_WINDOW - now, scale);
            snprintf(m, sizeof m, "user %s made %" PRId64 " submissions in "
                     "the last minute: the limit is %" PRId64 " a minute "
                     "(max_submit_rate, %s); retry in %" PRId64 " s",
                     who->name, n, mr, own & 2 ? "this token's" :
                     "the service's", retry);
            refuse(r, "max_submit_rate", mr, retry, m);
            return 1;
        }
    }
    if (mq > 0) {
        int64_t n = 0;
        ef_err e = {0};
        if (store_user_live(st, who->name, &n, &e) != EF_OK) {
            snprintf(m, sizeof m, "internal error: %s", e.msg);
            svc_reply_error(r, 500, NULL, m);
            return 1;
        }
        if (n >= mq) {
            int64_t retry = wall_secs(slot > 0 ? slot : 60, scale);
            snprintf(m, sizeof m, "user %s has %" PRId64 " jobs queued or "
                     "running: the limit is %" PRId64 " (max_queued, %s); "
                     "retry once one of them ends or is cancelled (in %"
                     PRId64 " s, a slot of the plan, at the earliest)",
                     who->name, n, mq, own & 1 ? "this token's" :
                     "the service's", retry);
            refuse(r, "max_queued", mq, retry, m);
            return 1;
        }
    }
    return 0;
}

int lim_parse(const char *arg, int rate, int64_t *v)
{
    if (strcmp(arg, "none") == 0) {
        *v = STORE_LIMIT_NONE;
        return 0;
    }
    if (strcmp(arg, "default") == 0) {
        *v = STORE_LIMIT_SERVICE;
        return 0;
    }
    char num[32];
    size_t n = strlen(arg);
    if (rate && n > 4 && strcmp(arg + n - 4, "/min") == 0)
        n -= 4;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, arg, n);
    num[n] = '\0';
    return ef_parse_i64(num, 1, 1000000000, v) == EF_NUM_OK ? 0 : -1;
}

const char *lim_text(int64_t v, int rate, char *dst, size_t n)
{
    if (v == STORE_LIMIT_SERVICE)
        snprintf(dst, n, "-");
    else if (v < 0)
        snprintf(dst, n, "none");
    else
        snprintf(dst, n, "%" PRId64 "%s", v, rate ? "/min" : "");
    return dst;
}
