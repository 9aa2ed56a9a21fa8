/* journal.c: the append-only journal and its replay (see exec.h). */
#include "executor/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/jfield.h"
#include "common/util.h"

void exec_replay_free(exec_replay *r)
{
    for (int j = 0; j < r->njobs; j++) {
        exec_place_free(&r->jobs[j].place);
        exec_place_free(&r->jobs[j].real);
    }
    free(r->jobs);
    memset(r, 0, sizeof *r);
}

void exec_replay_init(exec_replay *r, const exec_plan *p)
{
    memset(r, 0, sizeof *r);
    r->njobs = p->njobs;
    r->jobs = ef_calloc((size_t)(p->njobs ? p->njobs : 1), sizeof *r->jobs);
    for (int j = 0; j < p->njobs; j++)
        r->jobs[j].progress = -1;
    r->last_slot = -1;
    r->scale = 1;
}

/* ---- the record table --------------------------------------------------- */

#define R(k, kd, fl, m) JF_F(k, kd, JF_REQ | (fl), exec_rec, m)
#define EV(name) {.key = "ev", .kind = JF_CONST, .sval = (name)}
#define F_ANCHOR_PLAN {R("anchor_plan", JF_I64, 0, anchor_plan), \
                       .min = 0, .max = EF_MAX_I64}
#define F_ANCHOR_WALL {R("anchor_wall", JF_G17, 0, anchor_wall)}
#define F_AT          {R("at", JF_G17, 0, at)}
#define F_ATTEMPT     {R("attempt", JF_INT, 0, attempt), .min = 0, \
                       .max = INT32_MAX}
#define F_BACKEND     {R("backend", JF_STR, JF_NONEMPTY, backend), \
                       .maxlen = 15}
#define F_BATCH       {JF_F("batch", JF_LONG, JF_OPT, exec_rec, place.batch), \
                       .min = 1, .max = INT32_MAX}
#define F_CODE        {R("code", JF_INT, 0, code), .min = -1, .max = 1024}
#define F_HANDLE      {R("handle", JF_STR, 0, handle), .maxlen = 127}
#define F_HASH        {R("hash", JF_STR, JF_NONEMPTY, hash), .maxlen = 16}
#define F_HOW         {R("how", JF_STR, 0, how)}
#define F_JOB         {R("job", JF_STR, JF_NONEMPTY, job), .maxlen = 255}
#define F_LOG         {R("log", JF_STR, 0, log)}
#define F_MSG         {R("msg", JF_STR, 0, msg)}
#define F_PLACE       {R("place", JF_CUSTOM, 0, place), \
                       .custom = &placement_kind}
#define F_PLAN        {R("plan", JF_STR, 0, plan)}
#define F_PROGRESS    {R("progress", JF_I64, 0, progress), .min = -1, \
                       .max = EF_MAX_I64}
#define F_RESULT      {R("result", JF_ENUM, 0, result), \
                       .names = result_names, .nnames = 3}
#define F_RUNNING     {R("running", JF_INT, 0, running), .min = 0, \
                       .max = INT32_MAX}
#define F_SCALE       {R("scale", JF_G17, 0, scale)}
#define F_SLOT        {R("slot", JF_I64, 0, slot), .min = 0, \
                       .max = EF_MAX_I64}
#define F_START       {R("start", JF_I64, 0, start), .min = 0, \
                       .max = EF_MAX_I64}
#define F_TIME        {R("time", JF_I64, 0, time), .min = -EF_MAX_I64, \
                       .max = EF_MAX_I64}
#define F_WHY         {R("why", JF_STR, 0, why)}
#define F_ADOPTED     {JF_F("adopted", JF_FLAG, 0, exec_rec, adopted)}
#define F_DIFFERS     {JF_F("differs", JF_FLAG, 0, exec_rec, differs)}
#define F_FOLLOW      {JF_F("follow", JF_FLAG, 0, exec_rec, follow)}

static const char *const result_names[] = {"done", "failed", "retry"};

static const jf_field r_begin[] = {F_ANCHOR_PLAN, F_ANCHOR_WALL, F_BACKEND,
                                   EV("begin"), F_FOLLOW, F_HASH, F_PLAN,
                                   F_SCALE};
static const jf_field r_resume[] = {EV("resume"), F_TIME};
static const jf_field r_start[] = {F_AT, F_ATTEMPT, F_BATCH, EV("start"),
                                   F_JOB, F_PLACE, F_SLOT};
static const jf_field r_started[] = {F_ADOPTED, F_ATTEMPT, EV("started"),
                                     F_HANDLE, F_JOB};
static const jf_field r_start_failed[] = {F_ATTEMPT, EV("start_failed"),
                                          F_JOB, F_WHY};
static const jf_field r_stop[] = {F_ATTEMPT, EV("stop"), F_JOB, F_WHY};
static const jf_field r_stopped[] = {F_ATTEMPT, EV("stopped"), F_HOW, F_JOB,
                                     F_PROGRESS, F_WHY};
static const jf_field r_exit[] = {F_ATTEMPT, F_CODE, EV("exit"), F_JOB,
                                  F_LOG, F_PROGRESS, F_RESULT, F_WHY};
static const jf_field r_done[] = {EV("done"), F_JOB, F_PROGRESS};
static const jf_field r_slot[] = {EV("slot"), F_RUNNING, F_START};
static const jf_field r_error[] = {EV("error"), F_MSG};
static const jf_field r_end[] = {EV("end"), F_TIME};
static const jf_field r_warning[] = {F_ATTEMPT, EV("warning"), F_JOB, F_MSG};
static const jf_field r_plan[] = {F_HASH, EV("plan"), F_PLAN};
static const jf_field r_placed[] = {F_ATTEMPT, F_DIFFERS, EV("placed"), F_JOB,
                                    F_PLACE};

/* Every record type: its "ev" name and its members, by exec_rtype. */
static const struct rtype {
    const char *name;
    jf_table t;
} rtypes[EXEC_R_COUNT] = {
    [EXEC_R_BEGIN] = {"begin", JF_TABLE(exec_rec, &jw_inline_obj, r_begin)},
    [EXEC_R_RESUME] = {"resume", JF_TABLE(exec_rec, &jw_inline_obj,
                                          r_resume)},
    [EXEC_R_START] = {"start", JF_TABLE(exec_rec, &jw_inline_obj, r_start)},
    [EXEC_R_STARTED] = {"started", JF_TABLE(exec_rec, &jw_inline_obj,
                                            r_started)},
    [EXEC_R_START_FAILED] = {"start_failed", JF_TABLE(exec_rec,
                             &jw_inline_obj, r_start_failed)},
    [EXEC_R_STOP] = {"stop", JF_TABLE(exec_rec, &jw_inline_obj, r_stop)},
    [EXEC_R_STOPPED] = {"stopped", JF_TABLE(exec_rec, &jw_inline_obj,
                                            r_stopped)},
    [EXEC_R_EXIT] = {"exit", JF_TABLE(exec_rec, &jw_inline_obj, r_exit)},
    [EXEC_R_DONE] = {"done", JF_TABLE(exec_rec, &jw_inline_obj, r_done)},
    [EXEC_R_SLOT] = {"slot", JF_TABLE(exec_rec, &jw_inline_obj, r_slot)},
    [EXEC_R_ERROR] = {"error", JF_TABLE(exec_rec, &jw_inline_obj, r_error)},
    [EXEC_R_END] = {"end", JF_TABLE(exec_rec, &jw_inline_obj, r_end)},
    [EXEC_R_WARNING] = {"warning", JF_TABLE(exec_rec, &jw_inline_obj,
                                            r_warning)},
    [EXEC_R_PLACED] = {"placed", JF_TABLE(exec_rec, &jw_inline_obj,
                                          r_placed)},
    [EXEC_R_PLAN] = {"plan", JF_TABLE(exec_rec, &jw_inline_obj, r_plan)},
};

char *exec_rec_json(const exec_rec *rec)
{
    ef_assert(rec->ev >= 0 && rec->ev < EXEC_R_COUNT);
    jw w;
    jw_init(&w, 1);
    jf_write(&w, NULL, &rtypes[rec->ev].t, rec, 0);
    return jw_take(&w, NULL);
}

int exec_rec_parse(const char *line, exec_rec *rec, jf_arena *a, ef_err *e)
{
    json_error_t je;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    json_t *ev = json_object_get(o, "ev");
    memset(rec, 0, sizeof *rec);
    rec->progress = -1;
    if (!json_is_object(o) || !json_is_string(ev)) {
        json_decref(o);
        return ef_fail(e, EF_E_INPUT, "not a journal record");
    }
    int t = 0;
    while (t < EXEC_R_COUNT &&
           strcmp(rtypes[t].name, json_string_value(ev)) != 0)
        t++;
    int rc;
    if (t == EXEC_R_COUNT) {
        rc = ef_fail(e, EF_E_INPUT, "unknown record \"%.40s\"",
                     json_string_value(ev));
    } else {
        jf_ctx c = {rtypes[t].name, a, e};
        rec->ev = (exec_rtype)t;
        rc = jf_read(&rtypes[t].t, o, rec, &c, "");
        /* the clock's numbers: a plan time is computed from them (an
         * int64_t), so out of range they would overflow it */
        if (rc == EF_OK && t == EXEC_R_BEGIN &&
            !(rec->scale >= EXEC_MIN_SCALE && rec->scale <= EXEC_MAX_SCALE))
            rc = ef_fail(e, EF_E_INPUT, "begin: scale: %g is out of range "
                         "(expected plan seconds per wall second, %g to %g, "
                         "as --time-scale)", rec->scale, EXEC_MIN_SCALE,
                         EXEC_MAX_SCALE);
        else if (rc == EF_OK && t == EXEC_R_BEGIN &&
                 !(rec->anchor_wall >= 0 &&
                   rec->anchor_wall <= (double)EF_MAX_I64))
            rc = ef_fail(e, EF_E_INPUT, "begin: anchor_wall: %g is out of "
                         "range (expected wall-clock seconds, 0 to %g)",
                         rec->anchor_wall, (double)EF_MAX_I64);
    }
    json_decref(o);
    return rc;
}

int exec_rec_equal(const exec_rec *a, const exec_rec *b)
{
    return a->ev == b->ev && jf_equal(&rtypes[a->ev].t, a, b);
}

/* ---- replay ----------------------------------------------------------- */

static void copy_str(char *dst, size_t len, const char *s)
{
    snprintf(dst, len, "%s", s ? s : "");
}

/* What record 'rec' says, applied to *r. */
static int apply_rec(exec_replay *r, const exec_plan *p, const exec_rec *rec,
                     ef_err *e)
{
    exec_jjob *jj = NULL;
    if (rec->job) {
        int j = exec_plan_find(p, rec->job);
        if (j < 0) {
            /* an earlier plan's job, when a "plan" record follows */
            if (!r->unknown_line) {
                r->unknown_line = r->records + 1;
                copy_str(r->unknown, sizeof r->unknown, rec->job);
            }
            return EF_OK;
        }
        jj = &r->jobs[j];
        if (rec->progress >= 0)
            jj->progress = rec->progress;
    }
    int same = jj && rec->attempt == jj->attempt;
    switch (rec->ev) {
    case EXEC_R_BEGIN:
        r->begun = 1;
        copy_str(r->hash, sizeof r->hash, rec->hash);
        copy_str(r->backend, sizeof r->backend, rec->backend);
        r->anchor_wall = rec->anchor_wall;
        r->scale = rec->scale;
        r->anchor_plan = rec->anchor_plan;
        r->follow = rec->follow;
        break;
    case EXEC_R_END:
        r->ended = 1;
        break;
    case EXEC_R_PLAN:
        copy_str(r->hash, sizeof r->hash, rec->hash);
        r->ended = 0;
        r->plans++;
        r->unknown_line = 0;
        break;
    case EXEC_R_SLOT:
        r->last_slot = rec->start;
        break;
    case EXEC_R_WARNING:
        if (same)
            jj->warned = rec->attempt;
        break;
    case EXEC_R_RESUME:
    case EXEC_R_ERROR:
        break; /* informational */
    case EXEC_R_START:
        jj->attempt = rec->attempt;
        jj->start_in_doubt = 1;
        jj->running = 0;
        jj->had_place = 0;
        jj->handle[0] = '\0';
        jj->start_at = rec->at;
        exec_place_copy(&jj->place, &rec->place);
        exec_place_free(&jj->real);
        break;
    case EXEC_R_PLACED:
        /* where the cluster put it (the start keeps the plan's) */
        if (same) {
            exec_place_copy(&jj->real, &rec->place);
            jj->real.batch = jj->place.batch;
        }
        break;
    case EXEC_R_STARTED:
        if (same) {
            jj->start_in_doubt = 0;
            jj->running = 1;
            copy_str(jj->handle, sizeof jj->handle, rec->handle);
        }
        break;
    case EXEC_R_START_FAILED:
        if (same) {
            jj->start_in_doubt = 0;
            jj->running = 0;
        }
        break;
    case EXEC_R_STOP:
        if (same && jj->running)
            jj->stop_in_doubt = 1;
        break;
    case EXEC_R_STOPPED:
        if (same) {
            jj->stop_in_doubt = 0;
            jj->running = 0;
            jj->had_place = strcmp(rec->why, "end") == 0;
        }
        break;
    case EXEC_R_EXIT:
        if (same) {
            jj->running = 0;
            jj->start_in_doubt = 0;
            jj->stop_in_doubt = 0;
        }
        if (rec->result == EXEC_RESULT_DONE) {
            jj->status = EXEC_J_DONE;
        } else if (rec->result == EXEC_RESULT_RETRY) {
            jj->retries++; /* pending: launched again with another port */
        } else {
            jj->status = EXEC_J_FAILED;
            jj->exit_code = rec->code;
            copy_str(jj->why, sizeof jj->why, rec->why);
        }
        break;
    case EXEC_R_DONE:
        jj->status = EXEC_J_DONE;
        break;
    case EXEC_R_COUNT:
        break;
    }
    return EF_OK;
}

int exec_replay_record(exec_replay *r, const exec_plan *p, const char *line,
                       ef_err *e)
{
    exec_rec rec;
    jf_arena a = {0};
    int rc = exec_rec_parse(line, &rec, &a, e);
    if (rc == EF_OK)
        rc = apply_rec(r, p, &rec, e);
    jf_arena_free(&a);
    if (rc == EF_OK)
        r->records++;
    return rc;
}

int exec_journal_replay(const char *path, const exec_plan *p,
                        exec_replay *r, ef_err *e)
{
    exec_replay_init(r, p);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return EF_OK;
    char *buf;
    size_t len;
    if (ef_read_file(path, &buf, &len, e) != EF_OK) {
        exec_replay_free(r);
        return EF_ERR;
    }
    long line = 0;
    size_t i = 0;
    while (i < len) {
        char *nl = memchr(buf + i, '\n', len - i);
        line++;
        if (!nl) {
            r->torn = 1; /* killed mid-write: the record never happened */
            break;
        }
        *nl = '\0';
        long before = r->unknown_line;
        if (buf[i] && exec_replay_record(r, p, buf + i, e) != EF_OK) {
            ef_prefix(e, "%s:%ld: ", path, line);
            free(buf);
            exec_replay_free(r);
            return EF_ERR;
        }
        if (!before && r->unknown_line)
            r->unknown_line = line; /* its line, for the message */
        i = (size_t)(nl - buf) + 1;
    }
    free(buf);
    if (r->unknown_line) {
        ef_fail(e, EF_E_INPUT, "%s:%ld: job \"%.200s\" is not in the plan "
                "(a journal of another plan?)", path, r->unknown_line,
                r->unknown);
        exec_replay_free(r);
        return EF_ERR;
    }
    return EF_OK;
}

int exec_journal_open(exec_journal *j, const char *path, ef_err *e)
{
    memset(j, 0, sizeof *j);
    j->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (j->fd < 0)
        return ef_fail(e, EF_E_INPUT, "%s: cannot open the journal: %s", path,
                       strerror(errno));
    /* Cut a torn last line (no newline) so the next record starts clean. */
    off_t end = lseek(j->fd, 0, SEEK_END), keep = end;
    char c;
    while (keep > 0 && pread(j->fd, &c, 1, keep - 1) == 1 && c != '\n')
        keep--;
    if (keep != end && ftruncate(j->fd, keep) != 0) {
        int err = errno;
        close(j->fd);
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot cut a torn record: %s",
                       path, strerror(err));
    }
    j->path = ef_strdup(path);
    return EF_OK;
}

int exec_journal_append(exec_journal *j, exec_replay *r, const exec_plan *p,
                        const char *record, ef_err *e)
{
    long before = r ? r->unknown_line : 0;
    if (r && exec_replay_record(r, p, record, e) != EF_OK)
        return ef_prefix(e, "internal: journal record: ");
    if (r && r->unknown_line && !before)
        return ef_fail(e, EF_E_INTERNAL, "internal: journal record of job "
                       "\"%.200s\", which the plan lacks", r->unknown);
    size_t n = strlen(record);
    char *line = ef_malloc(n + 2);
    memcpy(line, record, n);
    line[n] = '\n';
    line[n + 1] = '\0';
    ssize_t w = write(j->fd, line, n + 1);
    free(line);
    if (w != (ssize_t)(n + 1) || fsync(j->fd) != 0)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot append to the journal: %s",
                       j->path, w < 0 ? strerror(errno) : "short write");
    return EF_OK;
}

int exec_journal_put(exec_journal *j, exec_replay *r, const exec_plan *p,
                     const exec_rec *rec, ef_err *e)
{
    char *s = exec_rec_json(rec);
    int rc = exec_journal_append(j, r, p, s, e);
    free(s);
    return rc;
}

void exec_journal_close(exec_journal *j)
{
    if (j->fd > 0)
        close(j->fd);
    free(j->path);
    memset(j, 0, sizeof *j);
}

/* ---- a state directory on its own terms ---------------------------------- */

/* The begin and end records of the journal text buf (modified), into *l;
 * its complete lines only (a torn last one never happened). */
static int look_records(const char *path, char *buf, size_t len,
                        exec_look *l, ef_err *e)
{
    long line = 0;
    size_t i = 0;
    int rc = EF_OK;
    while (i < len && rc == EF_OK) {
        char *nl = memchr(buf + i, '\n', len - i);
        line++;
        if (!nl)
            break;
        *nl = '\0';
        if (buf[i]) {
            exec_rec rec;
            jf_arena a = {0};
            if (exec_rec_parse(buf + i, &rec, &a, e) != EF_OK) {
                ef_prefix(e, "%s:%ld: ", path, line);
                rc = EF_ERR;
            } else if (rec.ev == EXEC_R_BEGIN && !l->begun) {
                l->begun = 1;
                copy_str(l->hash, sizeof l->hash, rec.hash);
                copy_str(l->plan, sizeof l->plan, rec.plan);
                copy_str(l->backend, sizeof l->backend, rec.backend);
                l->anchor_wall = rec.anchor_wall;
                l->anchor_plan = rec.anchor_plan;
                l->scale = rec.scale;
            } else if (rec.ev == EXEC_R_PLAN && l->begun) {
                copy_str(l->hash, sizeof l->hash, rec.hash);
                copy_str(l->plan, sizeof l->plan, rec.plan);
                l->ended = 0;
            } else if (rec.ev == EXEC_R_END) {
                l->ended = 1;
            }
            jf_arena_free(&a);
        }
        i = (size_t)(nl - buf) + 1;
    }
    return rc;
}

int exec_state_look(const char *dir, exec_look *l, ef_err *e)
{
    memset(l, 0, sizeof *l);
    char jpath[4200];
    snprintf(jpath, sizeof jpath, "%s/journal.jsonl", dir);
    snprintf(l->copy, sizeof l->copy, "%s/plan.json", dir);
    struct stat st;
    if (stat(jpath, &st) != 0 && errno == ENOENT)
        return EF_OK;
    char *buf;
    size_t len;
    if (ef_read_file(jpath, &buf, &len, e) != EF_OK)
        return EF_ERR;
    int rc = look_records(jpath, buf, len, l, e);
    free(buf);
    if (rc != EF_OK || !l->begun)
        return rc;
    /* the plan it was begun with, as apply copied it; a copy that is
     * missing, another plan's or unreadable leaves what runs unknown */
    ef_err ce = {0};
    if (ef_read_file(l->copy, &buf, &len, &ce) != EF_OK)
        return EF_OK;
    char hash[17];
    exec_plan_hash(buf, len, hash);
    exec_plan cp;
    if (strcmp(hash, l->hash) != 0) {
        free(buf);
        return EF_OK;
    }
    rc = exec_plan_parse(&cp, l->copy, buf, len, &ce);
    free(buf);
    if (rc != EF_OK)
        return EF_OK;
    exec_replay r;
    if (exec_journal_replay(jpath, &cp, &r, &ce) != EF_OK) {
        exec_plan_free(&cp);
        return EF_OK;
    }
    l->known = 1;
    for (int j = 0; j < cp.njobs; j++) {
        const exec_jjob *jj = &r.jobs[j];
        if (!jj->running && !jj->start_in_doubt && !jj->stop_in_doubt)
            continue;
        if (l->running++ == 0)
            copy_str(l->first, sizeof l->first, cp.jobs[j].id);
    }
    exec_replay_free(&r);
    exec_plan_free(&cp);
    return EF_OK;
}
