/* nodes.c: the node table: plan node k -> the cluster's name for it, read
 * once from --nodes FILE (or sinfo's listing) and used by every backend
 * (see exec.h). */
#include "executor/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void exec_nodes_free(exec_nodes *t)
{
    for (int k = 0; k < t->n; k++)
        free(t->name[k]);
    free(t->name);
    free(t->src);
    memset(t, 0, sizeof *t);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
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
        size_t bad = strcspn(c, " \t\r,[]");
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
