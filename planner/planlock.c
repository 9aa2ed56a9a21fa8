/* planlock.c: the plan file's mutex and apply's claim (see planlock.h). */
#define _GNU_SOURCE 1 /* realpath */
#include "planner/planlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/util.h"

/* The lock file "REAL.ext" for the plan at 'plan_path' (heap). */
static char *lock_name(const char *plan_path, const char *ext)
{
    char real[PATH_MAX];
    const char *base = realpath(plan_path, real) ? real : plan_path;
    size_t n = strlen(base) + strlen(ext) + 1;
    char *s = ef_malloc(n);
    snprintf(s, n, "%s%s", base, ext);
    return s;
}

static int denied_errno(int err)
{
    return err == EACCES || err == EPERM || err == EROFS;
}

int plan_lock(const char *plan_path, int *denied, ef_err *e)
{
    char *path = lock_name(plan_path, ".lock");
    if (denied)
        *denied = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        if (denied)
            *denied = denied_errno(err);
        ef_fail(e, EF_E_INTERNAL, "%s: cannot open the lock file: %s", path,
                strerror(err));
        free(path);
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR)
            continue;
        int err = errno;
        close(fd);
        ef_fail(e, EF_E_INTERNAL, "%s: cannot lock: %s", path, strerror(err));
        free(path);
        return -1;
    }
    free(path);
    return fd;
}

void plan_unlock(int fd)
{
    ef_unlock_file(fd);
}

/* The state directory the claim file 'fd' names, into dst ("" none): its
 * first line. */
static void read_claim(int fd, char *dst, size_t len)
{
    dst[0] = '\0';
    if (len == 0)
        return;
    ssize_t n = pread(fd, dst, len - 1, 0);
    if (n <= 0) {
        dst[0] = '\0';
        return;
    }
    dst[n] = '\0';
    char *nl = strchr(dst, '\n');
    if (nl)
        *nl = '\0';
}

int plan_apply_claim(const char *plan_path, const char *state, ef_err *e)
{
    char *path = lock_name(plan_path, ".apply.lock");
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        ef_fail(e, EF_E_INTERNAL, "%s: cannot open the lock file: %s", path,
                strerror(errno));
        free(path);
        return -1;
    }
    int rc;
    while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        int err = errno;
        if (err == EWOULDBLOCK) {
            char other[PATH_MAX];
            read_claim(fd, other, sizeof other);
            ef_fail(e, EF_E_INPUT, "%s: another efplan apply is applying "
                    "this plan (state directory %s); only one apply of a "
                    "plan at a time", plan_path,
                    other[0] ? other : "unknown");
        } else {
            ef_fail(e, EF_E_INTERNAL, "%s: cannot lock: %s", path,
                    strerror(err));
        }
        close(fd);
        free(path);
        return -1;
    }
    size_t n = strlen(state);
    char *line = ef_malloc(n + 2);
    memcpy(line, state, n);
    line[n] = '\n';
    line[n + 1] = '\0';
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, n + 1, 0) != (ssize_t)(n + 1)
        || fsync(fd) != 0) {
        ef_fail(e, EF_E_INTERNAL, "%s: cannot write: %s", path,
                strerror(errno));
        free(line);
        free(path);
        ef_unlock_file(fd);
        return -1;
    }
    free(line);
    free(path);
    return fd;
}

int plan_apply_holder(const char *plan_path, char *state, size_t len,
                      int *live, ef_err *e)
{
    char *path = lock_name(plan_path, ".apply.lock");
    *live = 0;
    if (len)
        state[0] = '\0';
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT) {
            free(path);
            return EF_OK; /* never applied (with this efplan) */
        }
        ef_fail(e, EF_E_INTERNAL, "%s: cannot open: %s", path,
                strerror(err));
        free(path);
        return EF_ERR;
    }
    int rc;
    while ((rc = flock(fd, LOCK_SH | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0 && errno != EWOULDBLOCK) {
        int err = errno;
        close(fd);
        ef_fail(e, EF_E_INTERNAL, "%s: cannot lock: %s", path, strerror(err));
        free(path);
        return EF_ERR;
    }
    *live = rc != 0;
    read_claim(fd, state, len);
    close(fd); /* drops the shared lock, when taken */
    free(path);
    return EF_OK;
}
