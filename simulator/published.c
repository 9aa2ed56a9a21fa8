/* published.c: published deadline ratios (see published.h). */
#include "simulator/published.h"

#include <string.h>

typedef struct pub_row {
    const char *figure, *trace, *cluster;
    int gpus;
    /* edf, gandiva, tiresias, themis, chronus, pollux, ef, ef-noac, edf-ac */
    double v[9];
} pub_row;

#define NA -1
static const char *const cols[9] = {"edf", "gandiva", "tiresias", "themis",
                                    "chronus", "pollux", "ef", "ef-noac",
                                    "edf-ac"};

static const pub_row rows[] = {
    {"Fig. 8(b)", "cluster01", "n64g8", 512, {.182, .246, .478, .464, .474, NA, .788, NA, NA}},
    {"Fig. 8(b)", "cluster02", "n64g8", 512, {.228, .286, .470, .431, .445, NA, .822, NA, NA}},
    {"Fig. 8(b)", "cluster03", "n64g8", 512, {.095, .314, .401, .389, .426, NA, .455, NA, NA}},
    {"Fig. 8(b)", "cluster04", "n128g8", 1024, {.007, .228, .120, .432, .450, NA, .631, NA, NA}},
    {"Fig. 8(b)", "cluster05", "n64g8", 512, {.375, .228, .420, .430, .453, NA, .832, NA, NA}},
    {"Fig. 8(b)", "cluster06", "n64g8", 512, {.105, .381, .466, .425, .432, NA, .607, NA, NA}},
    {"Fig. 8(b)", "cluster07", "n128g8", 1024, {.046, .351, .346, .437, .460, NA, .665, NA, NA}},
    {"Fig. 8(b)", "cluster08", "n128g8", 1024, {.252, .325, .373, .423, .447, NA, .896, NA, NA}},
    {"Fig. 8(b)", "cluster09", "n128g8", 1024, {.800, .329, .468, .456, .466, NA, .938, NA, NA}},
    {"Fig. 8(b)", "cluster10", "n32g8", 256, {.769, .354, .473, .431, .454, NA, .981, NA, NA}},
    {"Fig. 8(b)", "philly_103959", "n32g8", 256, {.01, .15, .32, .33, .324, NA, .87, NA, NA}},
    {"Fig. 8(a)", "elasticVpollux_e", "n16g4", 64, {.118, .09, .287, .312, .262, .523, .728, NA, NA}},
    {"Fig. 9", "fig9_1000job_1500lam", "n8g8", 64, {.026, NA, NA, NA, NA, NA, .926, .452, .203}},
    {"Fig. 9", "fig9_1000job_1500lam", "n16g8", 128, {.118, NA, NA, NA, NA, NA, .949, .835, .326}},
    {"Fig. 9", "fig9_1000job_1500lam", "n32g8", 256, {.118, NA, NA, NA, NA, NA, .944, .939, .658}},
};

double pub_ratio(const char *trace, int gpus, const char *policy,
                 const char **figure)
{
    int c = -1;
    for (int k = 0; k < 9; k++)
        if (strcmp(cols[k], policy) == 0)
            c = k;
    if (c < 0)
        return NA;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].trace, trace) == 0 && rows[i].gpus == gpus) {
            if (figure)
                *figure = rows[i].figure;
            return rows[i].v[c];
        }
    return NA;
}

const char *pub_cluster(const char *trace)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].trace, trace) == 0 &&
            strcmp(rows[i].figure, "Fig. 9") != 0)
            return rows[i].cluster;
    return NULL;
}
