/* test_planio.c: the plan file (planner/planio.h): read -> write -> read
 * gives the same value and the same bytes, over generated plans that use
 * every member (elastic batch, multi-node placements, reasons, rejected
 * and best-effort jobs, both surplus modes), and over real plans, in both
 * file versions (a version 2 file reads back as the version 1 file of the
 * same plan); the version 2 reader's checks; the sorted-key writer
 * (common/jsonw.h). */
#include "testutil.h"

#include <math.h>

#include "common/jsonw.h"
#include "planner/planio.h"
#include "testplanio.h"

/* ---- the writer -------------------------------------------------------------- */

static void test_writer_sorts(void **state)
{
    (void)state;
    jw w;
    jw_init(&w, 0);
    jw_obj(&w, NULL, &jw_inline_obj);
    jw_int(&w, "zeta", 1);
    jw_arr(&w, "alpha", &jw_inline_arr);
    jw_obj(&w, NULL, &jw_inline_obj);
    jw_str(&w, "y", "q\"\n");
    jw_null(&w, "x");
    jw_end(&w);
    jw_obj(&w, NULL, &jw_inline_obj);
    jw_end(&w);
    jw_end(&w);
    jw_fixed(&w, "mid", 2.5, 3);
    jw_bool(&w, "b", 0);
    jw_end(&w);
    char *s = jw_take(&w, NULL);
    assert_string_equal(s, "{\"alpha\": [{\"x\": null, \"y\": \"q\\\"\\u000a\"},"
                           " {}], \"b\": false, \"mid\": 2.500, \"zeta\": 1}");
    free(s);
    /* compact, and a list spliced into an array */
    jw part;
    jw_init(&part, 1);
    jw_list(&part, &jw_inline_arr);
    jw_int(&part, NULL, 2);
    jw_int(&part, NULL, 3);
    jw_end(&part);
    jw_init(&w, 1);
    jw_obj(&w, NULL, &jw_inline_obj);
    jw_arr(&w, "k", &jw_inline_arr);
    jw_int(&w, NULL, 1);
    jw_elems(&w, part.b.s, part.b.n, 2);
    jw_end(&w);
    jw_num(&w, "a", "%.17g", 0.1);
    jw_end(&w);
    s = jw_take(&w, NULL);
    assert_string_equal(s, "{\"a\":0.10000000000000001,\"k\":[1,2,3]}");
    free(s);
    jw_free(&part);
}

/* ---- generated plan files ---------------------------------------------------- */

/* ids by the id rule (job_id_check): quotes, UTF-8, a backslash */
static const char *const names[] = {"a", "job-2", "\"quoted\" id",
                                    "\xc3\xa9t\xc3\xa9", "x/y",
                                    "back\\slash, \xe2\x82\xac", "z9",
                                    "long-name-0123456789"};
static const char *const reasons[] = {"deadline too tight even alone",
                                      "GPUs before the deadline are promised",
                                      "demoted: \"late\"\n(second line)"};

static uint32_t rn(uint32_t n)
{
    return tp_rnd() % n;
}

/* A plan file value using every member, valid as a whole: njobs jobs, on
 * a cluster of N nodes of G GPUs, consecutive slots with buddy-free but
 * distinct placements (the file does not require buddy placement). */
static void gen_doc(plan_doc *d)
{
    jf_arena *A = &d->arena;
    memset(d, 0, sizeof *d);
    d->cluster.gpus_per_node = 1 << rn(4);
    d->cluster.nodes = 1 + (int)rn(4);
    d->curves = rn(2) ? "A100" : "";
    d->elastic_batch = (int)rn(2);
    d->jobs_file = rn(2) ? "inputs/jobs/sample.json" : "";
    d->now = (int64_t)rn(100000);
    d->slot_seconds = 1 + (int)rn(600);
    d->surplus = (int)rn(2);
    d->njobs = (int)rn(8);
    d->jobs = jf_alloc(A, (size_t)(d->njobs + 1) * sizeof *d->jobs);
    for (int i = 0; i < d->njobs; i++) {
        plan_doc_job *j = &d->jobs[i];
        j->id = names[i];
        j->model = rn(2) ? "resnet50" : "bert";
        j->batch_size = 16 << rn(4);
        j->eb = d->elastic_batch && rn(2);
        if (j->eb) {
            j->nbatch = 2 + (int)rn(2);
            j->batch_sizes = jf_alloc(A, (size_t)j->nbatch * sizeof(long));
            for (int k = 0; k < j->nbatch; k++)
                j->batch_sizes[k] = j->batch_size << k;
            j->samples = (double)(1 + rn(1000000)) * 64;
            j->samples_done = (double)rn(1000);
            j->samples_left = j->samples - j->samples_done;
        }
        j->decision = 1 + (int)rn(3);
        j->deadline = rn(3) ? (int64_t)rn(1000000) : -1;
        j->earliest_feasible_deadline = j->decision == PLAN_REJECTED
                                            ? (int64_t)rn(2000000) : -1;
        j->gpu_seconds = (double)rn(100000);
        j->iterations = 1 + rn(100000);
        j->iterations_done = rn((uint32_t)j->iterations);
        j->iterations_left = (double)(j->iterations - j->iterations_done);
        j->migrations = (int)rn(5);
        j->resizes = (int)rn(5);
        j->planned_end = rn(4) ? (int64_t)rn(1000000) : -1;
        j->start = j->planned_end >= 0 ? (int64_t)rn(1000) : -1;
        j->reason = j->decision == PLAN_REJECTED || rn(4) == 0
                        ? reasons[rn(3)] : NULL;
        j->slack = j->deadline >= 0 && j->planned_end >= 0
                       ? j->deadline - j->planned_end : PLAN_NO_SLACK;
        j->submit_time = (int64_t)rn(5000);
        /* "reserved": absent (unknown), empty, or a few segments */
        j->has_reserved = j->decision == PLAN_ADMITTED && rn(3) != 0;
        j->nreserved = j->has_reserved ? (int)rn(4) : 0;
        j->reserved = jf_alloc(A, (size_t)(j->nreserved + 1) *
                                      sizeof *j->reserved);
        int64_t rt = d->now;   /* where the next segment may start */
        for (int k = 0; k < j->nreserved; k++) {
            rt += (int64_t)rn(2) * d->slot_seconds;
            j->reserved[k] = (seg){rt, rt + d->slot_seconds *
                                           (1 + (int64_t)rn(3)),
                                   1 + (int)rn(8)};
            rt = j->reserved[k].end;
        }
    }
    d->nslots = d->njobs ? (int)rn(5) : 0;
    d->slots = jf_alloc(A, (size_t)(d->nslots + 1) * sizeof *d->slots);
    int N = d->cluster.nodes, G = d->cluster.gpus_per_node;
    int64_t t = d->now;
    for (int s = 0; s < d->nslots; s++) {
        plan_doc_slot *sl = &d->slots[s];
        sl->start = t;
        sl->end = t = t + d->slot_seconds * (1 + (int)rn(3));
        /* sometimes the previous slot's allocations again: runs over
         * several slots in version 2 */
        if (s > 0 && rn(3) == 0) {
            sl->nalloc = d->slots[s - 1].nalloc;
            sl->a = d->slots[s - 1].a;
            continue;
        }
        /* each job at most once, on GPUs taken in order: distinct */
        int next = 0;
        sl->a = jf_alloc(A, (size_t)d->njobs * sizeof *sl->a);
        for (int j = 0; j < d->njobs && next < N * G; j++) {
            if (rn(3) == 0)
                continue;
            plan_doc_alloc *a = &sl->a[sl->nalloc++];
            int g = 1 + (int)rn((uint32_t)(N * G - next < 2 * G
                                           ? N * G - next : 2 * G));
            a->gpus = g;
            a->job = d->jobs[j].id;
            a->jobi = j;
            a->place.n = g;
            a->place.node = jf_alloc(A, (size_t)g * sizeof(int));
            a->place.gpu = jf_alloc(A, (size_t)g * sizeof(int));
            for (int k = 0; k < g; k++, next++) {
                a->place.node[k] = next / G;
                a->place.gpu[k] = next % G;
            }
            if (d->jobs[j].eb)
                a->place.batch = d->jobs[j].batch_sizes[rn(
                    (uint32_t)d->jobs[j].nbatch)];
        }
    }
    plan_doc_summary *m = &d->summary;
    m->admitted = (int)rn(10);
    m->best_effort = (int)rn(10);
    m->end = t;
    m->migrations = (int)rn(10);
    m->promised_gpu_hours = rn(100000) / 1000.0;
    m->rejected = (int)rn(10);
    m->replan_fallbacks = (int)rn(3);
    m->resizes = (int)rn(10);
    m->scheduling_points = (int)rn(100);
    m->used_gpu_hours = rn(100000) / 1000.0;
    m->utilisation = rn(1000000) / 1e6;
}

/* text -> doc -> text: the same bytes; and doc -> text -> doc: the same
 * value. 'd' (when not NULL) is the value 'text' was written from: it
 * reads back equal (a plan's own values are rounded when written, so a
 * real plan is not compared). */
static void roundtrip(const plan_doc *d, const char *text)
{
    plan_doc back, again;
    ef_err e = {0};
    assert_ok(plan_doc_parse(&back, "p.json", text, strlen(text), &e), e);
    assert_true(!d || plan_doc_equal(d, &back));
    assert_int_equal(back.version, strstr(text, "\"version\": 2") ? PLAN_V2
                                                                   : PLAN_V1);
    char *t2 = plan_doc_json(&back, NULL);
    assert_string_equal(text, t2);
    assert_ok(plan_doc_parse(&again, "p.json", t2, strlen(t2), &e), e);
    assert_true(plan_doc_equal(&back, &again));
    for (int s = 0; d && s < back.nslots; s++)
        for (int a = 0; a < back.slots[s].nalloc; a++)
            assert_int_equal(back.slots[s].a[a].jobi,
                             d->slots[s].a[a].jobi);
    free(t2);
    plan_doc_free(&back);
    plan_doc_free(&again);
}

static void test_generated_roundtrip(void **state)
{
    (void)state;
    /* every member of every object appears in some generated file */
    static const char *const seen_keys[] = {
        "\"batch_size\": ", "\"batch_sizes\": [", "\"deadline\": null",
        "\"decision\": \"rejected\"", "\"decision\": \"best_effort\"",
        "\"decision\": \"admitted\"", "\"earliest_feasible_deadline\": 1",
        "\"elastic_batch\": true", "\"reason\": \"demoted: \\\"late\\\"\\u000a",
        "\"samples\": ", "\"samples_done\": ", "\"samples_left\": ",
        "\"slack\": -", "\"slack\": null", "\"start\": null",
        "\"surplus\": \"reference\"", "\"surplus\": \"gain\"",
        "{\"batch_size\": ", "\"node\": 1}", "\"jobs\": [\n  ]",
        "\"slots\": [\n  ]", "\"curves\": \"\"", "\"planned_end\": null",
        "\"runs\": [\n  ]", "\"slot_ends\": []", "\"version\": 1",
        "\"version\": 2", "\"reserved\": []", "\"reserved\": [{\"end\": "};
    int seen[sizeof seen_keys / sizeof *seen_keys] = {0};
    int longer = 0;            /* version 2 files with fewer runs than
                                  allocations */
    tp_seed(14);
    for (int it = 0; it < 600; it++) {
        plan_doc d;
        gen_doc(&d);
        for (int v = PLAN_V1; v <= PLAN_V2; v++) {
            d.version = v;
            char *text = plan_doc_json(&d, NULL);
            roundtrip(&d, text);
            for (size_t k = 0; k < sizeof seen_keys / sizeof *seen_keys; k++)
                seen[k] += strstr(text, seen_keys[k]) != NULL;
            if (v == PLAN_V2) {
                plan_doc b2;
                ef_err e = {0};
                assert_ok(plan_doc_parse(&b2, "p.json", text, strlen(text),
                                         &e), e);
                int allocs = 0;
                for (int s = 0; s < b2.nslots; s++)
                    allocs += b2.slots[s].nalloc;
                assert_int_equal(b2.nslot_ends, d.nslots);
                assert_true(b2.nruns <= allocs);
                longer += b2.nruns < allocs;
                plan_doc_free(&b2);
            }
            free(text);
        }
        plan_doc_free(&d);
    }
    assert_true(longer > 0);
    for (size_t k = 0; k < sizeof seen_keys / sizeof *seen_keys; k++) {
        if (!seen[k])
            print_error("    never generated: %s\n", seen_keys[k]);
        assert_true(seen[k] > 0);
    }
}

/* The plan reader applies the id rule (job_id_check) to every job's id,
 * and quotes an allocation's unknown job in its message. */
static void test_bad_ids(void **state)
{
    (void)state;
    static const struct {
        const char *id, *why;
    } bad[] = {{"a\\u001b[31m", "contains a control character"},
               {"a\\u0007", "contains a control character"},
               {"a\\u007f", "contains a control character"},
               {"\\u009b31m", "contains a control character"}};
    tp_seed(3);
    plan_doc d;
    int allocs = 0;
    for (int it = 0; it < 40; it++) {
        gen_doc(&d);
        d.version = it % 2 ? PLAN_V2 : PLAN_V1;
        char *text = plan_doc_json(&d, NULL);
        plan_doc_free(&d);
        const char *at = strstr(text, "\"id\": \"a\"");
        const char *al = strstr(text, "\"job\": \"a\"");
        for (size_t k = 0; at && k < sizeof bad / sizeof *bad; k++) {
            ef_buf b = {0};
            ef_buf_printf(&b, "%.*s\"id\": \"%s\"%s", (int)(at - text), text,
                          bad[k].id, at + 9);
            ef_err e = {0};
            char want[256];
            snprintf(want, sizeof want, "p.json: jobs[0].id: %s (expected "
                     "%s)", bad[k].why, JOB_ID_RULE);
            assert_err(plan_doc_parse(&d, "p.json", b.s, b.n, &e), e, want,
                       NULL);
            free(b.s);
        }
        if (al) {
            ef_buf b = {0};
            ef_buf_printf(&b, "%.*s\"job\": \"\\u001b[2J\"%s",
                          (int)(al - text), text, al + 10);
            ef_err e = {0};
            assert_err(plan_doc_parse(&d, "p.json", b.s, b.n, &e), e,
                       it % 2 ? "p.json: runs[" : "p.json: slots[",
                       ".job: \"\\x1b[2J\" is not in jobs");
            assert_null(strchr(e.msg, '\x1b'));
            free(b.s);
            allocs++;
        }
        free(text);
    }
    assert_true(allocs > 0);
}

/* ---- real plans ----------------------------------------------------------------- */

static const char *const models[] = {"resnet50", "bert", "vgg16", "gpt2",
                                     "inception3", "deepspeech2"};
static const long batches[][3] = {{64, 128, 256}, {64, 128, 0},
                                  {64, 128, 256}, {128, 256, 0},
                                  {64, 128, 0}, {32, 64, 0}};

/* A generated queue: elastic and fixed jobs, tight and loose deadlines,
 * best-effort jobs, progress made. (Progress in samples is at least one
 * iteration: a plan without elastic batch counts such a job in whole
 * iterations, and plan.c demotes a late job with samples_done > 0 even
 * when that is 0 iterations, which the plan file cannot say.) */
static char *gen_queue(int n)
{
    ef_buf b = {0};
    ef_buf_put(&b, "{\"jobs\": [");
    for (int i = 0; i < n; i++) {
        int m = (int)rn(6);
        int nb = batches[m][2] ? 3 : 2;
        ef_buf_printf(&b, "%s{\"id\": \"j%d\", \"model\": \"%s\", ",
                      i ? ", " : "", i, models[m]);
        if (rn(2)) {
            ef_buf_printf(&b, "\"batch_sizes\": [%ld, %ld%s", batches[m][0],
                          batches[m][1], nb == 3 ? ", " : "]");
            if (nb == 3)
                ef_buf_printf(&b, "%ld]", batches[m][2]);
            ef_buf_printf(&b, ", \"samples\": %u, \"samples_done\": %u",
                          (1 + rn(200)) * 20000, rn(3) ? 0 : 256 + rn(5000));
        } else {
            ef_buf_printf(&b, "\"batch_size\": %ld, \"iterations\": %u, "
                          "\"iterations_done\": %u", batches[m][0],
                          1000 + rn(30000), rn(3) ? 0 : rn(500));
        }
        uint32_t sub = rn(4000);
        ef_buf_printf(&b, ", \"submit_time\": %u", sub);
        if (rn(5) == 0)
            ef_buf_put(&b, ", \"deadline\": null}");
        else
            ef_buf_printf(&b, ", \"deadline\": %u}", sub + 300 + rn(8000));
    }
    ef_buf_put(&b, "]}");
    return b.s;
}

/* 1 if the plan text has an allocation (version 1) or a run (version 2)
 * that names its batch size. */
static int batch_allocation(const char *text)
{
    for (const char *x = strstr(text, "\"batch_size\": "); x;
         x = strstr(x + 1, "\"batch_size\": ")) {
        x += 14;
        while (*x >= '0' && *x <= '9')
            x++;
        if (strncmp(x, ", \"gpus\": ", 10) == 0 ||
            strncmp(x, ", \"end\": ", 9) == 0)
            return 1;
    }
    return 0;
}

static void test_real_plans(void **state)
{
    (void)state;
    tp_seed(9);
    int reason = 0, rejected = 0, eb = 0;
    for (int it = 0; it < 24; it++) {
        char *qt = gen_queue(3 + (int)rn(14));
        tp_planned t;
        ef_err e = {0};
        tp_opts(&t);
        t.o.elastic_batch = it % 2;
        t.o.surplus = (it / 2) % 2 ? SURPLUS_REFERENCE : SURPLUS_GAIN;
        t.o.slot = 60 << rn(3);
        assert_ok(tp_plan(&t, qt, 1 + (long)rn(3), &e), e);
        const plan *p = &t.p;
        char *text;
        size_t len;
        plan_to_json(p, "q.json", "A100", &text, &len);
        plan_doc d;
        plan_doc_from_plan(&d, p, "q.json", "A100");
        roundtrip(NULL, text);
        /* version 1 of the same plan reads back as the same value */
        {
            plan_doc d1, b1, b2;
            plan_doc_from_plan(&d1, p, "q.json", "A100");
            d1.version = PLAN_V1;
            char *t1 = plan_doc_json(&d1, NULL);
            roundtrip(NULL, t1);
            assert_ok(plan_doc_parse(&b1, "p.json", t1, strlen(t1), &e), e);
            assert_ok(plan_doc_parse(&b2, "p.json", text, strlen(text), &e),
                      e);
            assert_true(plan_doc_equal(&b1, &b2));
            assert_true(b2.nruns > 0 || b2.nslots == 0 ||
                        b1.slots[0].nalloc == 0);
            free(t1);
            plan_doc_free(&b1);
            plan_doc_free(&b2);
            plan_doc_free(&d1);
        }
        /* every admitted job records its reservation, within its
         * allocation in every slot; no other job does */
        for (int i = 0; i < d.njobs; i++) {
            const plan_doc_job *j = &d.jobs[i];
            assert_int_equal(j->has_reserved, j->decision == PLAN_ADMITTED);
            for (int k = 0; k < j->nreserved; k++)
                for (int s = 0; s < d.nslots; s++) {
                    const plan_doc_slot *sl = &d.slots[s];
                    if (sl->end <= j->reserved[k].start ||
                        sl->start >= j->reserved[k].end)
                        continue;
                    int g = 0;
                    for (int a = 0; a < sl->nalloc; a++)
                        if (sl->a[a].jobi == i)
                            g = sl->a[a].gpus;
                    assert_true(j->reserved[k].gpus <= g);
                }
        }
        reason += strstr(text, "\"reason\"") != NULL;
        rejected += strstr(text, "\"rejected\",") != NULL;
        eb += batch_allocation(text);
        /* the plan's queue as the file holds it is the queue planned: the
         * same plan again */
        char *qt2 = plan_doc_queue_json(&d, NULL);
        tp_planned t2;
        tp_opts(&t2);
        t2.o = t.o;
        assert_ok(tp_plan(&t2, qt2, t.c.nodes, &e), e);
        char *text2;
        plan_to_json(&t2.p, "q.json", "A100", &text2, &len);
        assert_string_equal(text, text2);
        free(text2);
        tp_planned_free(&t2);
        free(qt2);
        plan_doc_free(&d);
        free(text);
        tp_planned_free(&t);
        free(qt);
    }
    if (!(reason > 0 && rejected > 0 && eb > 0))
        print_error("    reason %d rejected %d elastic %d\n", reason,
                    rejected, eb);
    assert_true(reason > 0 && rejected > 0 && eb > 0);
}

/* A version 1 file whose slot lists its allocations out of the jobs'
 * order (a hand edit) reads as the version 2 file of the same plan: the
 * reader keeps them in the jobs' order, so both versions written from it
 * read back equal (the fuzzer's plan_json finding: c before b in a slot
 * made the two versions differ). */
static void test_v1_any_order(void **state)
{
    (void)state;
    static const char v1[] =
        "{\"cluster\": {\"gpus_per_node\": 8, \"nodes\": 1}"
        ", \"curves\": \"A100\", \"format\": \"efplan-plan\""
        ", \"jobs\": [{\"batch_size\": 64, \"deadline\": null"
        ", \"decision\": \"best_effort\""
        ", \"earliest_feasible_deadline\": null"
        ", \"gpu_seconds\": 1680, \"id\": \"b\", \"iterations\": 6250"
        ", \"iterations_done\": 0, \"iterations_left\": 6250"
        ", \"migrations\": 0, \"model\": \"resnet50\""
        ", \"planned_end\": 400, \"resizes\": 1, \"slack\": null"
        ", \"start\": 0, \"submit_time\": 0}, {\"batch_size\": 128"
        ", \"deadline\": 9000, \"decision\": \"admitted\""
        ", \"earliest_feasible_deadline\": null"
        ", \"gpu_seconds\": 360, \"id\": \"c\", \"iterations\": 2000"
        ", \"iterations_done\": 0, \"iterations_left\": 2000"
        ", \"migrations\": 0, \"model\": \"gpt2\", \"planned_end\": 290"
        ", \"resizes\": 0, \"slack\": 8710, \"start\": 0"
        ", \"submit_time\": 0}], \"jobs_file\": \"/tmp/q3.json\""
        ", \"now\": 0, \"overhead\": \"fig12\", \"slot_seconds\": 60"
        ", \"slots\": [{\"allocations\": [{\"gpus\": 4, \"job\": \"c\""
        ", \"placement\": [{\"gpus\": [4, 5, 6, 7], \"node\": 0}]}"
        ", {\"gpus\": 4, \"job\": \"b\", \"placement\": [{\"gpus\": [0, 1"
        ", 2, 3], \"node\": 0}]}], \"end\": 60, \"start\": 0}]"
        ", \"summary\": {\"admitted\": 2, \"best_effort\": 1"
        ", \"end\": 420, \"migrations\": 0"
        ", \"promised_gpu_hours\": 0.467, \"rejected\": 0"
        ", \"replan_fallbacks\": 0, \"resizes\": 4"
        ", \"scheduling_points\": 5, \"used_gpu_hours\": 0.933"
        ", \"utilisation\": 1.0}, \"surplus\": \"gain\", \"version\": 1}";
    plan_doc d, back[2];
    ef_err e = {0};
    assert_ok(plan_doc_parse(&d, "p.json", v1, strlen(v1), &e), e);
    assert_int_equal(d.slots[0].nalloc, 2);
    assert_string_equal(d.slots[0].a[0].job, "b");
    assert_string_equal(d.slots[0].a[1].job, "c");
    for (int v = PLAN_V1; v <= PLAN_V2; v++) {
        plan_doc c = d;
        c.version = v;
        char *text = plan_doc_json(&c, NULL);
        assert_ok(plan_doc_parse(&back[v - PLAN_V1], "p.json", text,
                                 strlen(text), &e), e);
        free(text);
    }
    assert_true(plan_doc_equal(&back[0], &back[1]));
    plan_doc_free(&back[0]);
    plan_doc_free(&back[1]);
    plan_doc_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_sorts),
        cmocka_unit_test(test_generated_roundtrip),
        cmocka_unit_test(test_bad_ids),
        cmocka_unit_test(test_real_plans),
        cmocka_unit_test(test_v1_any_order),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
