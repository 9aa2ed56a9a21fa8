/* cluster.c: cluster specs (see cluster.h). */
#include "model/cluster.h"

#include <ctype.h>
#include <string.h>
#include <sys/stat.h>

#include "common/csv.h"
#include "common/jsonin.h"
#include "common/util.h"

int cluster_init(cluster *c, int switches, long nodes, long gpus_per_node,
                 const char *where, ef_err *e)
{
    memset(c, 0, sizeof *c);
    if (nodes < 1)
        return ef_fail(e, EF_E_INPUT, "%s: cluster has %ld nodes (expected at "
                       "least 1)", where, nodes);
    if (gpus_per_node < 1 || gpus_per_node > 64 || !ef_is_pow2(gpus_per_node))
        return ef_fail(e, EF_E_INPUT, "%s: %ld GPUs per node (expected a power "
                       "of two from 1 to 64)", where, gpus_per_node);
    if (nodes > CLUSTER_MAX_GPUS / gpus_per_node)
        return ef_fail(e, EF_E_INPUT, "%s: %ld nodes x %ld GPUs is too large "
                       "(at most %d GPUs)", where, nodes, gpus_per_node,
                       CLUSTER_MAX_GPUS);
    c->switches = switches;
    c->nodes = (int)nodes;
    c->gpus_per_node = (int)gpus_per_node;
    c->total_gpus = (int)(nodes * gpus_per_node);
    snprintf(c->name, sizeof c->name, "n%dg%d", c->nodes, c->gpus_per_node);
    return EF_OK;
}

/* "n16g8" -> 16, 8. Returns 1 if 's' has that shape. */
static int shorthand(const char *s, long *n, long *g)
{
    const char *p = s;
    if (*p != 'n' || !isdigit((unsigned char)p[1]))
        return 0;
    char *end;
    *n = strtol(p + 1, &end, 10);
    if (*end != 'g' || !isdigit((unsigned char)end[1]))
        return 0;
    *g = strtol(end + 1, &end, 10);
    return *end == '\0' && end - s < 20;
}

int cluster_from_arg(cluster *c, const char *arg, ef_err *e)
{
    long n, g;
    struct stat st;
    if (shorthand(arg, &n, &g) && stat(arg, &st) != 0)
        return cluster_init(c, 1, n, g, arg, e);
    size_t l = strlen(arg);
    char *buf;
    size_t len;
    if (ef_read_file(arg, &buf, &len, e) != EF_OK) {
        int has_ext = (l > 4 && strcmp(arg + l - 4, ".csv") == 0) ||
                      (l > 5 && strcmp(arg + l - 5, ".json") == 0);
        if (!has_ext && stat(arg, &st) != 0)
            ef_fail(e, EF_E_INPUT, "%s: no such file, and not a shorthand "
                    "like n16g8 (nodes x GPUs per node)", arg);
        return EF_ERR;
    }
    int js = (l > 5 && strcmp(arg + l - 5, ".json") == 0);
    if (!js && !(l > 4 && strcmp(arg + l - 4, ".csv") == 0)) {
        size_t i = 0;
        while (i < len && isspace((unsigned char)buf[i]))
            i++;
        js = i < len && buf[i] == '{';
    }
    int rc = js ? cluster_parse_json(c, arg, buf, len, e)
                : cluster_parse_csv(c, arg, buf, len, e);
    free(buf);
    return rc;
}

int cluster_parse_csv(cluster *c, const char *path, const char *buf,
                      size_t len, ef_err *e)
{
    static const char *const cols[] = {"num_switch", "num_node_p_switch",
                                       "num_gpu_p_node", "num_cpu_p_node",
                                       "mem_p_node"};
    csv_reader r;
    csv_row row = {0};
    char q[128];
    int rc;
    int64_t v[5] = {0};
    int idx[5] = {-1, -1, -1, -1, -1};
    csv_open(&r, path, buf, len);
    rc = csv_next(&r, &row, e);
    if (rc == 0) {
        rc = ef_fail(e, EF_E_INPUT, "%s: empty file (expected a header "
                     "\"num_switch,num_node_p_switch,num_gpu_p_node,...\")",
                     path);
        goto out;
    }
    if (rc < 0)
        goto out;
    for (int i = 0; i < row.nf; i++) {
        int k = -1;
        for (int j = 0; j < 5; j++)
            if (strcmp(row.f[i], cols[j]) == 0)
                k = j;
        if (k < 0) {
            const char *s = ef_suggest(row.f[i], cols, 5);
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: unknown column \"%s\"%s%s%s",
                         path, row.line, row.col[i],
                         ef_quote(row.f[i], q, sizeof q),
                         s ? " (did you mean \"" : "", s ? s : "",
                         s ? "\"?)" : "");
            goto out;
        }
        if (idx[k] >= 0) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: duplicated column \"%s\"",
                         path, row.line, row.col[i], cols[k]);
            goto out;
        }
        idx[k] = i;
    }
    for (int j = 1; j < 3; j++)
        if (idx[j] < 0) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:1: missing column \"%s\"", path,
                         row.line, cols[j]);
            goto out;
        }
    int nf = row.nf;
    long hline = row.line;
    rc = csv_next(&r, &row, e);
    if (rc == 0) {
        rc = ef_fail(e, EF_E_INPUT, "%s:%ld:1: no cluster row (expected one "
                     "row after the header on line %ld)", path, r.line, hline);
        goto out;
    }
    if (rc < 0)
        goto out;
    if (row.nf != nf) {
        rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %d fields (expected %d, as in "
                     "the header)", path, row.line,
                     row.col[row.nf > nf ? nf : row.nf - 1], row.nf, nf);
        goto out;
    }
    for (int j = 0; j < 5; j++) {
        if (idx[j] < 0)
            continue;
        const char *s = row.f[idx[j]];
        ef_numerr ne = ef_parse_i64(s, 0, INT32_MAX, &v[j]);
        if (ne != EF_NUM_OK) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: \"%s\" is %s (expected "
                         "a non-negative integer)", path, row.line,
                         row.col[idx[j]], cols[j], ef_quote(s, q, sizeof q),
                         ne != EF_NUM_RANGE ? "not an integer"
                         : s[0] == '-' ? "negative" : "out of range");
            goto out;
        }
    }
    if (idx[0] < 0)
        v[0] = 1;
    if (v[0] < 1) {
        rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: num_switch is 0 (expected at "
                     "least 1)", path, row.line, row.col[idx[0]]);
        goto out;
    }
    rc = csv_next(&r, &row, e);
    if (rc != 0) {
        if (rc > 0)
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:1: more than one cluster row "
                         "(expected exactly one)", path, row.line);
        goto out;
    }
    {
        long line = row.line;
        if (v[1] < 1) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: num_node_p_switch is 0: "
                         "the cluster has no nodes (expected at least 1)",
                         path, line, row.col[idx[1]]);
            goto out;
        }
        if (v[2] < 1 || v[2] > 64 || !ef_is_pow2(v[2])) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: num_gpu_p_node is %lld "
                         "(expected a power of two from 1 to 64)", path, line,
                         row.col[idx[2]], (long long)v[2]);
            goto out;
        }
        rc = cluster_init(c, (int)v[0], (long)(v[0] * v[1]), (long)v[2], path, e);
        if (rc == EF_OK) {
            c->cpus_per_node = (int)v[3];
            c->mem_per_node = (long)v[4];
        }
    }
out:
    csv_row_free(&row);
    return rc < 0 ? EF_ERR : EF_OK;
}

int cluster_parse_json(cluster *c, const char *path, const char *buf,
                       size_t len, ef_err *e)
{
    static const char *const keys[] = {"nodes", "gpus_per_node", "switches",
                                       "cpus_per_node", "mem_per_node"};
    json_t *root = jsonin_parse(path, buf, len, e);
    if (!root)
        return EF_ERR;
    int rc = EF_ERR;
    int64_t n = 0, g = 0, s = 1, cpu = 0, mem = 0;
    if (!json_is_object(root)) {
        ef_fail(e, EF_E_INPUT, "%s: expected an object {\"nodes\": N, "
                "\"gpus_per_node\": G}, got %s", path, jsonin_type(root));
        goto out;
    }
    if (jsonin_check_keys(root, keys, 5, path, "", e) != EF_OK ||
        jsonin_int(root, "nodes", 1, 0, INT32_MAX, &n, path, "", e) < 0 ||
        jsonin_int(root, "gpus_per_node", 1, 0, INT32_MAX, &g, path, "", e) < 0 ||
        jsonin_int(root, "switches", 0, 1, INT32_MAX, &s, path, "", e) < 0 ||
        jsonin_int(root, "cpus_per_node", 0, 0, INT32_MAX, &cpu, path, "", e) < 0 ||
        jsonin_int(root, "mem_per_node", 0, 0, INT32_MAX, &mem, path, "", e) < 0)
        goto out;
    if (n < 1) {
        ef_fail(e, EF_E_INPUT, "%s: nodes: %lld (expected at least 1)", path,
                (long long)n);
        goto out;
    }
    if (g < 1 || g > 64 || !ef_is_pow2(g)) {
        ef_fail(e, EF_E_INPUT, "%s: gpus_per_node: %lld (expected a power of "
                "two from 1 to 64)", path, (long long)g);
        goto out;
    }
    rc = cluster_init(c, (int)s, (long)n, (long)g, path, e);
    if (rc == EF_OK) {
        c->cpus_per_node = (int)cpu;
        c->mem_per_node = (long)mem;
    }
out:
    json_decref(root);
    return rc;
}
