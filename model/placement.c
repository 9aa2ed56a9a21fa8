/* placement.c: where a job runs, and its JSON (see placement.h). */
#include "model/placement.h"

#include <stddef.h>
#include <string.h>

#include "common/util.h"

/* One entry of a placement: a node and its GPUs. */
typedef struct place_entry {
    int ngpus;
    long *gpus;
    int node;
} place_entry;

static const jf_field place_entry_fields[] = {
    {JF_F("gpus", JF_LONGS, JF_REQ | JF_NONEMPTY, place_entry, gpus),
     .cnt = offsetof(place_entry, ngpus), .min = 0, .max = 63,
     .style = &jw_inline_arr},
    {JF_F("node", JF_INT, JF_REQ, place_entry, node), .min = 0,
     .max = (1 << 20) - 1},
};
static const jf_table place_entry_table =
    JF_TABLE(place_entry, &jw_inline_obj, place_entry_fields);

static int place_read(const json_t *v, void *val, const jf_ctx *c,
                      const char *path)
{
    placement *pl = val;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return ef_fail(c->e, EF_E_INPUT, "%s: %s: expected a non-empty array "
                       "of {\"gpus\": [...], \"node\": n}", c->file, path);
    size_t n = json_array_size(v), total = 0;
    place_entry *pe = jf_alloc(c->arena, n * sizeof *pe);
    for (size_t k = 0; k < n; k++) {
        char w[512];
        if (jf_read(&place_entry_table, json_array_get(v, k), &pe[k], c,
                    jf_index(w, sizeof w, path, k)) != EF_OK)
            return EF_ERR;
        total += (size_t)pe[k].ngpus;
    }
    pl->node = jf_alloc(c->arena, total * sizeof *pl->node);
    pl->gpu = jf_alloc(c->arena, total * sizeof *pl->gpu);
    pl->n = 0;
    for (size_t k = 0; k < n; k++)
        for (int m = 0; m < pe[k].ngpus; m++) {
            int nd = pe[k].node, g = (int)pe[k].gpus[m];
            /* insertion into (node, gpu) order; duplicates rejected */
            int i = pl->n;
            while (i > 0 && (pl->node[i - 1] > nd ||
                             (pl->node[i - 1] == nd && pl->gpu[i - 1] > g))) {
                pl->node[i] = pl->node[i - 1];
                pl->gpu[i] = pl->gpu[i - 1];
                i--;
            }
            if (i > 0 && pl->node[i - 1] == nd && pl->gpu[i - 1] == g)
                return ef_fail(c->e, EF_E_INPUT, "%s: %s[%zu].gpus: node %d "
                               "GPU %d twice", c->file, path, k, nd, g);
            pl->node[i] = nd;
            pl->gpu[i] = g;
            pl->n++;
        }
    return EF_OK;
}

static void place_write(jw *w, const char *key, const void *val)
{
    const placement *pl = val;
    long gpus[64];
    jw_arr(w, key, &jw_inline_arr);
    for (int k = 0; k < pl->n;) {
        place_entry pe = {0, gpus, pl->node[k]};
        while (k < pl->n && pl->node[k] == pe.node && pe.ngpus < 64)
            gpus[pe.ngpus++] = pl->gpu[k++];
        jf_write(w, NULL, &place_entry_table, &pe, 0);
    }
    jw_end(w);
}

static int pairs_equal(const void *va, const void *vb)
{
    const placement *a = va, *b = vb;
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->node[i] != b->node[i] || a->gpu[i] != b->gpu[i])
            return 0;
    return 1;
}

static int place_empty(const void *val)
{
    return ((const placement *)val)->n == 0;
}

const jf_custom placement_kind = {place_read, place_write, pairs_equal,
                                   place_empty};

int placement_equal(const placement *a, const placement *b)
{
    return pairs_equal(a, b) && a->batch == b->batch;
}

void placement_free(placement *pl)
{
    free(pl->node);
    free(pl->gpu);
    memset(pl, 0, sizeof *pl);
}

void placement_copy(placement *dst, const placement *src)
{
    placement_free(dst);
    dst->n = src->n;
    dst->batch = src->batch;
    if (src->n) {
        dst->node = ef_malloc((size_t)src->n * sizeof *dst->node);
        dst->gpu = ef_malloc((size_t)src->n * sizeof *dst->gpu);
        memcpy(dst->node, src->node, (size_t)src->n * sizeof *dst->node);
        memcpy(dst->gpu, src->gpu, (size_t)src->n * sizeof *dst->gpu);
    }
}

int placement_read_json(const json_t *v, placement *pl, const char *file,
                        const char *path, ef_err *e)
{
    jf_arena a = {0};
    jf_ctx c = {file, &a, e};
    placement in = {0};
    memset(pl, 0, sizeof *pl);
    int rc = place_read(v, &in, &c, path);
    if (rc == EF_OK)
        placement_copy(pl, &in);
    jf_arena_free(&a);
    return rc;
}

char *placement_json(const placement *pl)
{
    jw w;
    jw_init(&w, 1);
    place_write(&w, NULL, pl);
    return jw_take(&w, NULL);
}
