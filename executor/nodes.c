/* nodes.c: the node table: plan node k -> the cluster's name for it, read
 * once from --nodes FILE (or sinfo's listing) and used by every backend
 * (see exec.h). */
#include "executor/exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"

void exec_nodes_free(exec_nodes *t)
{
    for (int k = 0; k < t->n; k++)
        free(t->name[k]);
    free(t->name);
    free(t->src);
    memset(t, 0, sizeof *t);
}

#define HOSTLIST_MAX 65536

/* Expand one item (no ',' outside brackets) of n bytes at s, the text
 * before it 'pre' (heap buffer), into (*names, *n). */
static int host_item(const char *s, size_t len, ef_buf *pre, char ***names,
                     int *n, const char **why)
{
    const char *lb = memchr(s, '[', len);
    if (!lb) {
        size_t at = pre->n;
        ef_buf_printf(pre, "%.*s", (int)len, s);
        if (*n >= HOSTLIST_MAX) {
            *why = "over 65536 names";
            return EF_ERR;
        }
        *names = ef_realloc(*names, (size_t)(*n + 1) * sizeof **names);
        (*names)[(*n)++] = ef_strdup(pre->s);
        pre->n = at;
        pre->s[at] = '\0';
        return EF_OK;
    }
    if (memchr(s, ']', (size_t)(lb - s))) {
        *why = "a ']' without its '['";
        return EF_ERR;
    }
    const char *rb = memchr(lb, ']', len - (size_t)(lb - s));
    if (!rb || memchr(lb + 1, '[', (size_t)(rb - lb - 1))) {
        *why = "a '[' without its ']' (or brackets inside brackets)";
        return EF_ERR;
    }
    size_t at = pre->n;
    ef_buf_printf(pre, "%.*s", (int)(lb - s), s);
    size_t at2 = pre->n;
    for (const char *r = lb + 1; r < rb;) {
        const char *c = memchr(r, ',', (size_t)(rb - r));
        const char *re = c ? c : rb;
        const char *dash = memchr(r, '-', (size_t)(re - r));
        const char *he = dash ? dash : re;
        unsigned long lo = 0, hi;
        int width = (int)(he - r);
        for (const char *d = r; d < re; d++)
            if ((*d < '0' || *d > '9') && d != dash) {
                *why = "a range holds something other than digits";
                return EF_ERR;
            }
        if (width == 0 || width > 9 || (dash && (re - dash - 1 == 0 ||
                                                 re - dash - 1 > 9))) {
            *why = "a range needs numbers of 1 to 9 digits (\"01-04\")";
            return EF_ERR;
        }
        lo = strtoul(r, NULL, 10);
        hi = dash ? strtoul(dash + 1, NULL, 10) : lo;
        if (hi < lo) {
            *why = "a range whose first number is above its last";
            return EF_ERR;
        }
        for (unsigned long v = lo; v <= hi; v++) {
            ef_buf_printf(pre, "%0*lu", width, v);
            if (host_item(rb + 1, len - (size_t)(rb + 1 - s), pre, names, n,
                          why) != EF_OK)
                return EF_ERR;
            pre->n = at2;
            pre->s[at2] = '\0';
        }
        r = c ? c + 1 : rb;
    }
    pre->n = at;
    pre->s[at] = '\0';
    return EF_OK;
}

int exec_hostlist(const char *s, char ***names, int *n, const char **why)
{
    if (!s[0] || strpbrk(s, " \t\r\n#")) {
        *why = s[0] ? "a blank or '#' in a host list" : "an empty host list";
        return EF_ERR;
    }
    ef_buf pre = {0};
    ef_buf_put(&pre, "");
    int rc = EF_OK, depth = 0;
    const char *item = s;
    for (const char *c = s;; c++) {
        if (*c == '[')
            depth++;
        else if (*c == ']')
            depth--;
        if ((*c == ',' && depth == 0) || *c == '\0') {
            if (c == item) {
                *why = "an empty name in a host list (two commas, or one at "
                       "an end)";
                rc = EF_ERR;
            } else {
                rc = host_item(item, (size_t)(c - item), &pre, names, n, why);
            }
            if (rc != EF_OK || *c == '\0')
                break;
            item = c + 1;
        }
    }
    free(pre.s);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add a name of line 'lineno' (its line in (*at)[k]): EF_ERR naming the
 * line where it is given twice. */
static int add_name(exec_nodes *t, const char *src, int lineno,
                    const char *name, int **at, ef_err *e)
{
    for (int k = 0; k < t->n; k++)
        if (strcmp(t->name[k], name) == 0) {
            char q[64];
            return ef_fail(e, EF_E_INPUT, "%s:%d: node \"%s\" is already "
                           "plan node %d (line %d); each name is another "
                           "node", src, lineno, ef_quote(name, q, sizeof q),
                           k, (*at)[k]);
        }
    t->name = ef_realloc(t->name, (size_t)(t->n + 1) * sizeof *t->name);
    *at = ef_realloc(*at, (size_t)(t->n + 1) * sizeof **at);
    t->name[t->n] = ef_strdup(name);
    (*at)[t->n++] = lineno;
    return EF_OK;
}

/* The names of the host list 'c' on line 'lineno', in order. */
static int add_list(exec_nodes *t, const char *src, int lineno,
                    const char *c, int **at, ef_err *e)
{
    char **names = NULL;
    int n = 0, rc = EF_OK;
    const char *why = NULL;
    char q[64];
    if (exec_hostlist(c, &names, &n, &why) != EF_OK)
        rc = ef_fail(e, EF_E_INPUT, "%s:%d: \"%s\" is not a host list: %s "
                     "(expected one name a line, or a Slurm host list such "
                     "as gpu[01-04])", src, lineno, ef_quote(c, q, sizeof q),
                     why);
    for (int i = 0; i < n && rc == EF_OK; i++)
        rc = add_name(t, src, lineno, names[i], at, e);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int exec_nodes_parse(exec_nodes *t, const char *src, char *text, int listing,
                     ef_err *e)
{
    memset(t, 0, sizeof *t);
    t->src = ef_strdup(src);
    int lineno = 0, *at = NULL; /* at[k]: the line of name k */
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *c = line;
        while (*c == ' ' || *c == '\t')
            c++;
        size_t l = strlen(c);
        while (l && (c[l - 1] == ' ' || c[l - 1] == '\t' || c[l - 1] == '\r'))
            c[--l] = '\0';
        if (l == 0 || c[0] == '#')
            continue;
        char q[64], wq[16];
        size_t bad = strcspn(c, listing ? " \t\r,[]" : " \t\r");
        if (!listing && bad == l && strpbrk(c, ",[]")) {
            if (add_list(t, src, lineno, c, &at, e) != EF_OK) {
                free(at);
                exec_nodes_free(t);
                return EF_ERR;
            }
            continue;
        }
        if (bad < l) {
            char what[2] = {c[bad], 0};
            ef_fail(e, EF_E_INPUT, "%s:%d: node name \"%s\" holds '%s' "
                    "(expected one name per line: no spaces, lists or "
                    "ranges)", src, lineno, ef_quote(c, q, sizeof q),
                    ef_quote(what, wq, sizeof wq));
            free(at);
            exec_nodes_free(t);
            return EF_ERR;
        }
        int dup = -1;
        for (int k = 0; k < t->n && dup < 0; k++)
            if (strcmp(t->name[k], c) == 0)
                dup = k;
        if (dup >= 0 && listing)
            continue; /* sinfo lists a node once per partition */
        if (dup >= 0) {
            ef_fail(e, EF_E_INPUT, "%s:%d: node \"%s\" is already plan node "
                    "%d (line %d); each line names another node", src, lineno,
                    ef_quote(c, q, sizeof q), dup, at[dup]);
            free(at);
            exec_nodes_free(t);
            return EF_ERR;
        }
        t->name = ef_realloc(t->name, (size_t)(t->n + 1) * sizeof *t->name);
        at = ef_realloc(at, (size_t)(t->n + 1) * sizeof *at);
        t->name[t->n] = ef_strdup(c);
        at[t->n++] = lineno;
    }
    free(at);
    t->lines = lineno;
    if (listing && t->n > 1)
        qsort(t->name, (size_t)t->n, sizeof *t->name, cmp_name);
    return EF_OK;
}

int exec_nodes_load(exec_nodes *t, const char *path, ef_err *e)
{
    struct stat st;
    if (!strchr(path, '/') && strpbrk(path, "[,") && stat(path, &st) != 0 &&
        errno == ENOENT) { /* no such file: a host list */
        char *text = ef_strdup(path); /* one line: the list */
        char src[64];
        snprintf(src, sizeof src, "--nodes (no such file: a host list)");
        int rc = exec_nodes_parse(t, src, text, 0, e);
        free(text);
        return rc;
    }
    char *buf = NULL;
    size_t len;
    int rc = ef_read_file(path, &buf, &len, e);
    if (rc == EF_OK)
        rc = exec_nodes_parse(t, path, buf, 0, e);
    else
        memset(t, 0, sizeof *t);
    free(buf);
    return rc;
}

int exec_nodes_check(const exec_nodes *t, const exec_plan *p, ef_err *e)
{
    if (t->n >= p->nodes)
        return EF_OK;
    return ef_fail(e, EF_E_INPUT, "%s: %d node name%s in %d line%s for a plan "
                   "of %d nodes: plan node %d has no name (one name per line, "
                   "the k-th names plan node k-1; empty lines and # comments "
                   "are skipped)", t->src, t->n, t->n == 1 ? "" : "s",
                   t->lines, t->lines == 1 ? "" : "s", p->nodes, t->n);
}

const char *exec_nodes_name(const exec_nodes *t, int node, char *tmp,
                            size_t len)
{
    if (node >= 0 && node < t->n)
        return t->name[node];
    snprintf(tmp, len, "node%d", node);
    return tmp;
}
