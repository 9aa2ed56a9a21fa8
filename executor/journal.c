/* journal.c: the append-only journal and its replay (see exec.h). */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../planner/util.h"

void exec_replay_free(exec_replay *r)
{
    for (int j = 0; j < r->njobs; j++)
        exec_place_free(&r->jobs[j].place);
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

static const char *str_of(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int64_t int_of(json_t *o, const char *k, int64_t dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static void copy_str(char *dst, size_t len, const char *s)
{
    snprintf(dst, len, "%s", s ? s : "");
}

/* "place": [[node, gpu], ...] */
static int read_place(json_t *arr, exec_place *pl)
{
    exec_place_free(pl);
    if (!json_is_array(arr))
        return -1;
    size_t n = json_array_size(arr), i;
    json_t *x;
    if (n == 0)
        return 0;
    pl->node = ef_malloc(n * sizeof *pl->node);
    pl->gpu = ef_malloc(n * sizeof *pl->gpu);
    json_array_foreach(arr, i, x) {
        json_t *a = json_array_get(x, 0), *b = json_array_get(x, 1);
        if (!json_is_integer(a) || !json_is_integer(b))
            return -1;
        pl->node[i] = (int)json_integer_value(a);
        pl->gpu[i] = (int)json_integer_value(b);
        pl->n++;
    }
    return 0;
}

int exec_replay_record(exec_replay *r, const exec_plan *p, const char *line,
                       ef_err *e)
{
    json_error_t je;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    const char *ev = o ? str_of(o, "ev") : NULL;
    int rc = EF_OK;
    if (!ev) {
        json_decref(o);
        return ef_fail(e, EF_E_INPUT, "not a journal record");
    }
    const char *id = str_of(o, "job");
    exec_jjob *jj = NULL;
    if (id) {
        int j = exec_plan_find(p, id);
        if (j < 0) {
            ef_fail(e, EF_E_INPUT, "job \"%.200s\" is not in the plan (a "
                    "journal of another plan?)", id);
            json_decref(o);
            return EF_ERR;
        }
        jj = &r->jobs[j];
    }
    int attempt = (int)int_of(o, "attempt", 0);
    int64_t prog = int_of(o, "progress", -1);
    if (jj && prog >= 0)
        jj->progress = prog;
    if (strcmp(ev, "begin") == 0) {
        r->begun = 1;
        copy_str(r->hash, sizeof r->hash, str_of(o, "hash"));
        copy_str(r->backend, sizeof r->backend, str_of(o, "backend"));
        json_t *w = json_object_get(o, "anchor_wall");
        json_t *s = json_object_get(o, "scale");
        r->anchor_wall = json_is_number(w) ? json_number_value(w) : 0;
        r->scale = json_is_number(s) ? json_number_value(s) : 1;
        r->anchor_plan = int_of(o, "anchor_plan", 0);
    } else if (strcmp(ev, "end") == 0) {
        r->ended = 1;
    } else if (strcmp(ev, "slot") == 0) {
        r->last_slot = int_of(o, "start", -1);
    } else if (strcmp(ev, "error") == 0 || strcmp(ev, "resume") == 0) {
        /* informational */
    } else if (!jj || attempt < 0) {
        rc = ef_fail(e, EF_E_INPUT, "record \"%.40s\" without a job", ev);
    } else if (strcmp(ev, "start") == 0) {
        jj->attempt = attempt;
        jj->start_in_doubt = 1;
        jj->running = 0;
        jj->had_place = 0;
        jj->handle[0] = '\0';
        json_t *at = json_object_get(o, "at");
        jj->start_at = json_is_number(at) ? json_number_value(at) : 0;
        if (read_place(json_object_get(o, "place"), &jj->place) != 0)
            rc = ef_fail(e, EF_E_INPUT, "start: bad \"place\"");
    } else if (strcmp(ev, "started") == 0) {
        if (attempt == jj->attempt) {
            jj->start_in_doubt = 0;
            jj->running = 1;
            copy_str(jj->handle, sizeof jj->handle, str_of(o, "handle"));
        }
    } else if (strcmp(ev, "start_failed") == 0) {
        if (attempt == jj->attempt) {
            jj->start_in_doubt = 0;
            jj->running = 0;
        }
    } else if (strcmp(ev, "stop") == 0) {
        if (attempt == jj->attempt && jj->running)
            jj->stop_in_doubt = 1;
    } else if (strcmp(ev, "stopped") == 0) {
        if (attempt == jj->attempt) {
            const char *why = str_of(o, "why");
            jj->stop_in_doubt = 0;
            jj->running = 0;
            jj->had_place = why && strcmp(why, "end") == 0;
        }
    } else if (strcmp(ev, "exit") == 0) {
        const char *res = str_of(o, "result");
        if (attempt == jj->attempt) {
            jj->running = 0;
            jj->start_in_doubt = 0;
            jj->stop_in_doubt = 0;
        }
        if (res && strcmp(res, "done") == 0)
            jj->status = EXEC_J_DONE;
        else if (res && strcmp(res, "failed") == 0) {
            jj->status = EXEC_J_FAILED;
            jj->exit_code = (int)int_of(o, "code", -1);
            copy_str(jj->why, sizeof jj->why, str_of(o, "why"));
        }
    } else if (strcmp(ev, "done") == 0) {
        jj->status = EXEC_J_DONE;
    } else {
        rc = ef_fail(e, EF_E_INPUT, "unknown record \"%.40s\"", ev);
    }
    json_decref(o);
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
        if (buf[i] && exec_replay_record(r, p, buf + i, e) != EF_OK) {
            ef_prefix(e, "%s:%ld: ", path, line);
            free(buf);
            exec_replay_free(r);
            return EF_ERR;
        }
        i = (size_t)(nl - buf) + 1;
    }
    free(buf);
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
    if (r && exec_replay_record(r, p, record, e) != EF_OK)
        return ef_prefix(e, "internal: journal record: ");
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

void exec_journal_close(exec_journal *j)
{
    if (j->fd > 0)
        close(j->fd);
    free(j->path);
    memset(j, 0, sizeof *j);
}
