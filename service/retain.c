/* retain.c: retention of efplan serve (retain.h). */
#define _GNU_SOURCE 1
#include "service/retain.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/htime.h"
#include "common/util.h"

struct ret {
    svc *s;
    ret_opts o;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

const char *ret_keep_text(int64_t secs, char *dst, size_t n)
{
    if (secs <= 0)
        snprintf(dst, n, "forever");
    else if (secs % 86400 == 0)
        snprintf(dst, n, "%" PRId64 "d", secs / 86400);
    else if (secs % 3600 == 0)
        snprintf(dst, n, "%" PRId64 "h", secs / 3600);
    else if (secs % 60 == 0)
        snprintf(dst, n, "%" PRId64 "m", secs / 60);
    else
        snprintf(dst, n, "%" PRId64 "s", secs);
    return dst;
}

int ret_keep_parse(const char *arg, int64_t *secs)
{
    if (strcmp(arg, "forever") == 0 || strcmp(arg, "0") == 0) {
        *secs = 0;
        return 0;
    }
    if (!arg[0] || arg[0] == '+' || arg[0] == '-')
        return -1;
    int64_t v;
    if (ef_parse_i64(arg, 1, 100LL * 366 * 86400, &v) == EF_NUM_OK) {
        *secs = v;
        return 0;
    }
    /* the relative times every option takes: "now+30d" is 30 days */
    char buf[96];
    if (strlen(arg) > 64)
        return -1;
    snprintf(buf, sizeof buf, "now+%s", arg);
    const char *why = NULL;
    if (ef_ht_parse(buf, 0, &v, &why) != 0 || v <= 0 ||
        v > 100LL * 366 * 86400)
        return -1;
    *secs = v;
    return 0;
}

/* A snapshot file's name "plan-STAMP-vN.json": 1 with its stamp and N. */
typedef struct snapfile {
    char *name;
    char stamp[32];
    int64_t version;
} snapfile;

static int snap_parse(const char *name, snapfile *f)
{
    size_t n = strlen(name);
    if (n < 16 || strncmp(name, "plan-", 5) != 0 ||
        strcmp(name + n - 5, ".json") != 0)
        return 0;
    const char *v = strstr(name + 5, "-v");
    if (!v || (size_t)(v - name - 5) >= sizeof f->stamp)
        return 0;
    char num[32];
    size_t k = (size_t)(name + n - 5 - (v + 2));
    if (k == 0 || k >= sizeof num)
        return 0;
    memcpy(num, v + 2, k);
    num[k] = '\0';
    if (ef_parse_i64(num, 0, EF_MAX_I64, &f->version) != EF_NUM_OK)
        return 0;
    snprintf(f->stamp, sizeof f->stamp, "%.*s", (int)(v - name - 5),
             name + 5);
    return 1;
}

static int snap_cmp(const void *a, const void *b)
{
    const snapfile *x = a, *y = b;
    int c = strcmp(x->stamp, y->stamp);
    if (c)
        return c;
    return x->version < y->version ? -1 : x->version > y->version;
}

/* Delete the snapshot files beyond the newest 'keep': how many, or -1
 * (the directory cannot be read; absent: 0). */
static int prune_files(const char *dir, int keep, ef_err *e)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        ef_fail(e, EF_E_INTERNAL, "%s: cannot read: %s", dir, strerror(errno));
        return -1;
    }
    snapfile *f = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        snapfile x;
        if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
            continue;
        if (!snap_parse(de->d_name, &x))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            f = ef_realloc(f, (size_t)cap * sizeof *f);
        }
        x.name = ef_strdup(de->d_name);
        f[n++] = x;
    }
    closedir(d);
    int gone = 0;
    if (n > keep) {
        qsort(f, (size_t)n, sizeof *f, snap_cmp);
        for (int k = 0; k < n - keep; k++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, f[k].name);
            if (unlink(path) == 0)
                gone++;
        }
    }
    for (int k = 0; k < n; k++)
        free(f[k].name);
    free(f);
    return gone;
}

/* The log line of one step that deleted something. */
static void say_pruned(const ret_opts *o, const store_pruned *p, int files,
                       int64_t before)
{
    if (!o->say || (p->jobs == 0 && p->events == 0 && p->plans == 0 &&
                    files == 0))
        return;
    char line[600], keep[32], at[64];
    ef_buf b = {0};
    ef_ht_at(before, o->zone, at, sizeof at);
    if (p->jobs == 0 && p->events > 0)
        ef_buf_printf(&b, "retention: pruned %" PRId64 " event%s of the "
                      "service from before %s (kept %s)", p->events,
                      p->events == 1 ? "" : "s", at,
                      ret_keep_text(o->keep, keep, sizeof keep));
    if (p->jobs > 0) {
        ef_buf_printf(&b, "retention: pruned %" PRId64 " job%s that ended "
                      "before %s (kept %s), with %" PRId64 " event%s and %"
                      PRId64 " attempt%s", p->jobs, p->jobs == 1 ? "" : "s",
                      at, ret_keep_text(o->keep, keep, sizeof keep),
                      p->events, p->events == 1 ? "" : "s", p->attempts,
                      p->attempts == 1 ? "" : "s");
    }
    if (p->plans > 0 || files > 0)
        ef_buf_printf(&b, "%s%" PRId64 " plan version%s and %d snapshot "
                      "file%s beyond the newest %d", b.n ? "; " :
                      "retention: pruned ", p->plans, p->plans == 1 ? "" :
                      "s", files, files == 1 ? "" : "s", o->keep_plans);
    snprintf(line, sizeof line, "%s", b.s);
    free(b.s);
    o->say(o->arg, line);
}

int ret_step(svc *s, const ret_opts *o, int64_t now, store_pruned *out,
             ef_err *e)
{
    store_pruned p = {0};
    int batch = o->batch > 0 ? o->batch : RET_BATCH_DEFAULT;
    int rc = EF_OK, files = 0;
    int64_t before = now - o->keep;
    for (int got = 1; rc == EF_OK && o->keep > 0 && got > 0;) {
        svc_lock(s);
        got = store_prune_jobs(svc_store(s), before, batch, &p, e);
        svc_unlock(s);
        if (got < 0)
            rc = EF_ERR;
        else if (got < batch)
            break;
    }
    for (int got = 1; rc == EF_OK && o->keep_plans > 0 && got > 0;) {
        svc_lock(s);
        got = store_prune_plans(svc_store(s), o->keep_plans, batch, &p, e);
        svc_unlock(s);
        if (got < 0)
            rc = EF_ERR;
        else if (got < batch)
            break;
    }
    if (rc == EF_OK && o->keep_plans > 0) {
        files = prune_files(svc_snapdir(s), o->keep_plans, e);
        if (files < 0) {
            rc = EF_ERR;
            files = 0;
        }
    }
    say_pruned(o, &p, files, before);
    if (out) {
        *out = p;
        out->plans += files;
    }
    return rc;
}

static void *ret_main(void *arg)
{
    ret *R = arg;
    double period = R->o.period > 0 ? R->o.period : 1;
    pthread_mutex_lock(&R->mu);
    while (!R->stop) {
        pthread_mutex_unlock(&R->mu);
        ef_err e = {0};
        if (ret_step(R->s, &R->o, svc_now(R->s), NULL, &e) != EF_OK &&
            R->o.say) {
            char line[EF_ERR_LEN + 64];
            snprintf(line, sizeof line, "retention: %s (tried again in "
                     "%.0f s)", e.msg, period);
            R->o.say(R->o.arg, line);
        }
        pthread_mutex_lock(&R->mu);
        if (R->stop)
            break;
        struct timespec ts;
        ef_abstime_in(&ts, period);
        while (!R->stop &&
               pthread_cond_timedwait(&R->cv, &R->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&R->mu);
    return NULL;
}

int ret_start(ret **out, svc *s, const ret_opts *o, ef_err *e)
{
    *out = NULL;
    if (o->keep <= 0 && o->keep_plans <= 0)
        return EF_OK;
    ret *R = ef_calloc(1, sizeof *R);
    R->s = s;
    R->o = *o;
    pthread_mutex_init(&R->mu, NULL);
    pthread_cond_init(&R->cv, NULL);
    if (pthread_create(&R->th, NULL, ret_main, R) != 0) {
        pthread_cond_destroy(&R->cv);
        pthread_mutex_destroy(&R->mu);
        free(R);
        return ef_fail(e, EF_E_INTERNAL, "retention: cannot start its "
                       "thread");
    }
    *out = R;
    return EF_OK;
}

void ret_stop(ret *R)
{
    if (!R)
        return;
    pthread_mutex_lock(&R->mu);
    R->stop = 1;
    pthread_cond_signal(&R->cv);
    pthread_mutex_unlock(&R->mu);
    pthread_join(R->th, NULL);
    pthread_cond_destroy(&R->cv);
    pthread_mutex_destroy(&R->mu);
    free(R);
}
