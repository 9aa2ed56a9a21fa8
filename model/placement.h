/*
 * placement.h: where a job runs on the cluster (placement_*), as every
 * file holds it: the jobs file ("placement" of a running job), the plan
 * file (each allocation) and the executor's journal (each launch). In
 * memory: n (node, gpu) pairs sorted by node then GPU, GPU indices local
 * to the node, and the batch size it runs at (an elastic-batch
 * allocation's "batch_size"; 0: the job's own). In JSON:
 * [{"gpus": [i, ...], "node": n}, ...], one entry per node, GPU indices
 * 0..63, no pair twice. The planner's buddy rule works on global GPU ids
 * instead (planner/place.h: place_set).
 */
#ifndef EF_PLACEMENT_H
#define EF_PLACEMENT_H

#include <jansson.h>

#include "common/err.h"
#include "common/jfield.h"

typedef struct placement {
    int n;
    int *node;
    int *gpu;
    long batch;
} placement;

/* The placement value kind for field tables (common/jfield.h): reads and
 * writes the JSON above ("batch" is not part of it); reads allocate from
 * the reading context's arena. */
extern const jf_custom placement_kind;

/*
 * placement_read_json: read JSON value 'v' (the member at JSON path
 * 'path' of 'file') into *pl with heap arrays (free with placement_free).
 * Errors (EF_E_INPUT, "file: path...: what is wrong"): not a non-empty
 * array of {"gpus": [...], "node": n}, an index out of range, a pair
 * given twice. On error *pl is empty.
 */
int placement_read_json(const json_t *v, placement *pl, const char *file,
                        const char *path, ef_err *e);

/* 1 if a and b hold the same pairs and batch size. */
int placement_equal(const placement *a, const placement *b);

/* Deep copy into *dst (heap arrays; free with placement_free), freeing
 * what dst held. Not for placements that live in an arena. */
void placement_copy(placement *dst, const placement *src);
void placement_free(placement *pl);

/* The JSON text of pl (heap; compact, "[]" when empty): what the files
 * hold, without "batch". */
char *placement_json(const placement *pl);

#endif
