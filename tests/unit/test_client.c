/* test_client.c: the CLI's side of efplan serve (service/client.h), what
 * can be tested without a server: URLs, job ids as path segments, the
 * token rule, errors and answers as text, an unreachable server. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "service/client.h"

static char g_dir[256];

static int setup(void **state)
{
    ef_err e = {0};
    tu_tmpdir(g_dir, sizeof g_dir);
    unsetenv("EFPLAN_SERVER");
    unsetenv("EFPLAN_TOKEN");
    return cl_init(&e) == EF_OK ? 0 : -1;
}

static int teardown(void **state)
{
    tu_rmtree(g_dir);
    cl_cleanup();
    return 0;
}

/* ---- URLs --------------------------------------------------------------- */

static void test_url_accepted(void **state)
{
    static const char *const ok[] = {
        "http://127.0.0.1:8080", "https://planner.example.org",
        "HTTP://host/", "http://host:1/efplan", "http://[::1]:8080"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ef_err e = {0};
        assert_ok(cl_check_url(ok[i], "--server", &e), e);
    }
}

static void test_url_refused(void **state)
{
    static const char *const bad[] = {
        "ftp://host", "127.0.0.1:8080", "http://", "http:///x",
        "http://:80", "http://h/?q=1", "http://h/#f", "http://h x",
        "http://h\n", "", "file:///etc/passwd", "httpx://h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ef_err e = {0};
        int rc = cl_check_url(bad[i], "--server", &e);
        assert_err_kind(rc, e, EF_E_USAGE, "--server: \"", NULL);
    }
    ef_err e = {0};
    assert_err_kind(cl_check_url("ftp://h", "--server", &e), e, EF_E_USAGE,
                    "--server: \"ftp://h\"", "http:// or https://");
}

static void test_server_resolve(void **state)
{
    ef_err e = {0};
    const char *u = NULL;
    assert_err_kind(cl_server_resolve(NULL, &u, &e), e, EF_E_USAGE,
                    "no server", "--server URL or set EFPLAN_SERVER");
    setenv("EFPLAN_SERVER", "", 1);
    assert_err_kind(cl_server_resolve(NULL, &u, &e), e, EF_E_USAGE,
                    "no server", NULL);
    setenv("EFPLAN_SERVER", "http://env:1", 1);
    assert_ok(cl_server_resolve(NULL, &u, &e), e);
    assert_string_equal(u, "http://env:1");
    assert_ok(cl_server_resolve("https://arg:2", &u, &e), e);
    assert_string_equal(u, "https://arg:2"); /* the option wins */
    setenv("EFPLAN_SERVER", "env:1", 1);
    assert_err_kind(cl_server_resolve(NULL, &u, &e), e, EF_E_USAGE,
                    "EFPLAN_SERVER: \"env:1\"", NULL);
    assert_err_kind(cl_server_resolve("x", &u, &e), e, EF_E_USAGE,
                    "--server: \"x\"", NULL);
    unsetenv("EFPLAN_SERVER");
}

/* ---- job ids in paths --------------------------------------------------- */

static void test_escape_round_trip(void **state)
{
    static const char *const ids[] = {
        "a1", "a b", "x/y", "100%", "%2F", "caf\xc3\xa9 \xe2\x82\xac",
        "?#&=+;", "..", ".", "a\tb\nc", "~-._", "\"'<>\\", "a%20b"};
    CURL *h = curl_easy_init();
    assert_non_null(h);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *x = cl_escape(ids[i]);
        for (const char *p = x; *p; p++) {
            int unreserved = (*p >= 'A' && *p <= 'Z') ||
                             (*p >= 'a' && *p <= 'z') ||
                             (*p >= '0' && *p <= '9') || *p == '-' ||
                             *p == '.' || *p == '_' || *p == '~' ||
                             *p == '%';
            assert_true(unreserved);
            if (*p == '%')
                assert_true(p[1] && p[2]);
        }
        int n = 0;
        char *back = curl_easy_unescape(h, x, 0, &n);
        assert_non_null(back);
        assert_int_equal(n, (int)strlen(ids[i]));
        assert_memory_equal(back, ids[i], (size_t)n);
        curl_free(back);
        free(x);
    }
    curl_easy_cleanup(h);

    ef_err e = {0};
    char *p = cl_job_path("a b/c", &e);
    assert_non_null(p);
    assert_string_equal(p, "/v1/jobs/a%20b%2Fc");
    free(p);
    assert_null(cl_job_path("", &e));
    assert_int_equal(e.kind, EF_E_USAGE);
}

/* ---- the token rule ----------------------------------------------------- */

#define TOK "efp_ab12cd34ef_0123456789abcdefghijABCDEFGHIJ-_0123456789ab"

static const char *token_file(const char *name, const char *text,
                              mode_t mode, char *path, size_t len)
{
    tu_write(g_dir, name, text, path, len);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void test_token_file_private(void **state)
{
    char path[512], tok[128];
    ef_err e = {0};
    token_file("t600", "  " TOK " \r\nsecond line\n", 0600, path,
               sizeof path);
    assert_ok(cl_token_resolve(path, tok, sizeof tok, &e), e);
    assert_string_equal(tok, TOK);
    token_file("t400", TOK, 0400, path, sizeof path); /* no newline */
    assert_ok(cl_token_resolve(path, tok, sizeof tok, &e), e);
    assert_string_equal(tok, TOK);
    /* the file wins over the environment */
    setenv("EFPLAN_TOKEN", "efp_other", 1);
    assert_ok(cl_token_resolve(path, tok, sizeof tok, &e), e);
    assert_string_equal(tok, TOK);
    unsetenv("EFPLAN_TOKEN");
}

static void test_token_file_too_open(void **state)
{
    static const mode_t modes[] = {0644, 0640, 0604, 0660, 0606, 0610,
                                   0601, 0666};
    char path[512], tok[128], pre[600];
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        ef_err e = {0};
        char mode[16];
        token_file("open", TOK "\n", modes[i], path, sizeof path);
        snprintf(mode, sizeof mode, "mode %04o", (unsigned)modes[i]);
        snprintf(pre, sizeof pre, "token file %s: ", path);
        int rc = cl_token_resolve(path, tok, sizeof tok, &e);
        assert_err(rc, e, pre, mode);
        assert_contains(e.msg, "chmod 600");
        assert_not_contains(e.msg, TOK);
    }
}

static void test_token_file_refused(void **state)
{
    char path[512], tok[128], pre[600];
    ef_err e = {0};
    /* a directory */
    tu_join(path, sizeof path, g_dir, "dir");
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "is a directory (expected a regular file)");
    /* a FIFO: refused, not waited on */
    tu_join(path, sizeof path, g_dir, "fifo");
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "is a FIFO");
    /* missing */
    tu_join(path, sizeof path, g_dir, "missing");
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "No such file");
    /* empty, and a blank first line */
    token_file("empty", "", 0600, path, sizeof path);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "is empty");
    token_file("blank", " \r\n" TOK "\n", 0600, path, sizeof path);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "the first line is empty");
    /* not a token: a space inside, a control character, too long */
    token_file("space", "efp_a b_secretsecret\n", 0600, path, sizeof path);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "not a token");
    assert_not_contains(e.msg, "secretsecret");
    token_file("ctl", "efp_a\x01secret\n", 0600, path, sizeof path);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "not a token");
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    token_file("big", big, 0600, path, sizeof path);
    snprintf(pre, sizeof pre, "token file %s: ", path);
    assert_err(cl_token_resolve(path, tok, sizeof tok, &e), e, pre,
               "not a token");
}

static void test_token_env(void **state)
{
    char tok[128];
    ef_err e = {0};
    unsetenv("EFPLAN_TOKEN");
    assert_err_kind(cl_token_resolve(NULL, tok, sizeof tok, &e), e,
                    EF_E_USAGE, "no token",
                    "--token-file FILE (the token on its first line, mode "
                    "0600) or set EFPLAN_TOKEN");
    setenv("EFPLAN_TOKEN", "", 1);
    assert_err_kind(cl_token_resolve(NULL, tok, sizeof tok, &e), e,
                    EF_E_USAGE, "no token", NULL);
    setenv("EFPLAN_TOKEN", " " TOK "\r", 1);
    assert_ok(cl_token_resolve(NULL, tok, sizeof tok, &e), e);
    assert_string_equal(tok, TOK);
    setenv("EFPLAN_TOKEN", "   ", 1);
    assert_err_kind(cl_token_resolve(NULL, tok, sizeof tok, &e), e,
                    EF_E_USAGE, "EFPLAN_TOKEN is blank", NULL);
    setenv("EFPLAN_TOKEN", "efp_x y_hushhush", 1);
    assert_err_kind(cl_token_resolve(NULL, tok, sizeof tok, &e), e,
                    EF_E_USAGE, "EFPLAN_TOKEN is not a token", NULL);
    assert_not_contains(e.msg, "hushhush");
    unsetenv("EFPLAN_TOKEN");
}

/* ---- transport ---------------------------------------------------------- */

/* A loopback port nothing listens on: bound, read, closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t n = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_unreachable(void **state)
{
    char url[64], want[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    cl_conn c = {.server = url, .token = TOK};
    cl_resp r;
    ef_err e = {0};
    int rc = cl_request(&c, "GET", "/v1/jobs", NULL, 0, &r, &e);
    snprintf(want, sizeof want, "the server is not reachable at %s", url);
    assert_err_kind(rc, e, EF_E_INTERNAL, want, "GET ");
    assert_contains(e.msg, "/v1/jobs");
    assert_not_contains(e.msg, TOK);
    assert_null(r.body);
    /* a body and another method say the same */
    rc = cl_request(&c, "POST", "/v1/jobs", "{}", 2, &r, &e);
    assert_err_kind(rc, e, EF_E_INTERNAL, want, "POST ");
    rc = cl_request(&c, "DELETE", "/v1/jobs/a%20b", NULL, 0, &r, &e);
    assert_err_kind(rc, e, EF_E_INTERNAL, want, "/v1/jobs/a%20b");
    /* a server URL that is refused before anything is sent */
    cl_conn bad = {.server = "gopher://127.0.0.1:70", .token = TOK};
    rc = cl_request(&bad, "GET", "/v1/jobs", NULL, 0, &r, &e);
    assert_err_kind(rc, e, EF_E_USAGE, "server: \"gopher://", NULL);
}

/* ---- answers ------------------------------------------------------------ */

static void status_err(long status, const char *body, ef_err *e)
{
    cl_resp r = {status, (char *)body, body ? strlen(body) : 0};
    assert_int_equal(cl_status_error("http://s:1", &r, e), EF_ERR);
}

static void test_status_error(void **state)
{
    ef_err e = {0};
    status_err(403, "{\"error\": {\"status\": 403, \"message\": \"job b1 "
               "belongs to bob\"}}", &e);
    assert_int_equal(e.kind, EF_E_INPUT);
    assert_string_equal(e.msg, "http://s:1: HTTP 403: job b1 belongs to bob");
    status_err(400, "{\"error\": {\"status\": 400, \"message\": \"expected "
               "a positive integer\", \"path\": \"jobs[0].iterations\"}}",
               &e);
    assert_string_equal(e.msg, "http://s:1: HTTP 400: jobs[0].iterations: "
                        "expected a positive integer");
    status_err(400, "{\"error\": {\"message\": \"jobs[0].x: unknown key\", "
               "\"path\": \"jobs[0].x\"}}", &e);
    assert_string_equal(e.msg, "http://s:1: HTTP 400: jobs[0].x: unknown "
                        "key"); /* the path once */
    status_err(502, "<html>Bad Gateway</html>\nmore", &e);
    assert_int_equal(e.kind, EF_E_INTERNAL);
    assert_string_equal(e.msg, "http://s:1: HTTP 502: "
                        "\"<html>Bad Gateway</html>\"");
    status_err(500, "", &e);
    assert_string_equal(e.msg, "http://s:1: HTTP 500: (no message)");
    status_err(409, "{\"error\": {\"message\": \"a\\u001b[31mb\"}}", &e);
    assert_string_equal(e.msg, "http://s:1: HTTP 409: a\\x1B[31mb");
}

/* one format: ef_ht_fmt's, UTC by default, the zone cl_set_zone gives */
static void test_fmt_time(void **state)
{
    char t[64];
    assert_string_equal(cl_fmt_time(1796137445, t, sizeof t),
                        "2026-12-01T15:04:05Z");
    assert_string_equal(cl_fmt_time(-1, t, sizeof t), "-");
    cl_set_zone(EF_HT_EPOCH);
    assert_string_equal(cl_fmt_time(1796137445, t, sizeof t), "1796137445");
    cl_set_zone(EF_HT_UTC);
    assert_string_equal(cl_fmt_time(1796137445, t, sizeof t),
                        "2026-12-01T15:04:05Z");
}

static const char *JOBS =
    "{\"jobs\": ["
    "{\"id\": \"a1\", \"owner\": \"alice\", \"state\": \"running\", "
    "\"decision\": \"admitted\", \"gpus\": 8, \"deadline\": 1796141045, "
    "\"planned_end\": 1796137445, \"at_risk\": false},"
    "{\"id\": \"long-id\\u001b\", \"owner\": \"bob\", \"state\": \"queued\","
    " \"decision\": \"best_effort\", \"gpus\": 16, \"deadline\": null, "
    "\"planned_end\": null, \"at_risk\": true}]}";

static void test_fmt_jobs(void **state)
{
    ef_buf b = {0};
    ef_err e = {0};
    assert_ok(cl_fmt_jobs("http://s:1", JOBS, strlen(JOBS), &b, &e), e);
    assert_string_equal(b.s,
        "ID           OWNER  STATE    DECISION     GPUS  DEADLINE"
        "              PLANNED END           RISK\n"
        "a1           alice  running  admitted        8  "
        "2026-12-01T16:04:05Z  2026-12-01T15:04:05Z\n"
        "long-id\\x1B  bob    queued   best_effort    16  -"
        "                     -                     at-risk\n");
    free(b.s);
    b = (ef_buf){0};
    const char *none = "{\"jobs\": []}";
    assert_ok(cl_fmt_jobs("http://s:1", none, strlen(none), &b, &e), e);
    assert_string_equal(b.s, "no jobs\n");
    free(b.s);
    b = (ef_buf){0};
    assert_err_kind(cl_fmt_jobs("http://s:1", "{\"x\": 1}", 8, &b, &e), e,
                    EF_E_INTERNAL, "http://s:1: the answer has no \"jobs\"",
                    NULL);
    assert_err_kind(cl_fmt_jobs("http://s:1", "nope", 4, &b, &e), e,
                    EF_E_INTERNAL, "http://s:1: the answer is not JSON",
                    NULL);
    free(b.s);
}

static const char *JOB =
    "{\"id\": \"a1\", \"owner\": \"alice\", \"model\": \"resnet50\", "
    "\"batch_size\": 256, \"iterations\": 5000, \"iterations_done\": 1200, "
    "\"decision\": \"admitted\", \"state\": \"running\", "
    "\"submit_time\": 1796130000, \"submitted\": 1796130000, "
    "\"deadline\": 1796141045, \"planned_end\": 1796137445, "
    "\"earliest_feasible_deadline\": null, \"gpus\": 6, "
    "\"placement\": [{\"node\": 0, \"gpus\": [0, 1, 2, 3]}, "
    "{\"node\": 1, \"gpus\": [4, 5]}], \"at_risk\": true, "
    "\"reason\": \"node 1 is down\", "
    "\"history\": [{\"at\": 1796130000, \"kind\": \"submitted\", "
    "\"detail\": {}}, {\"at\": 1796130060, \"kind\": \"started\", "
    "\"detail\": {\"gpus\": 6, \"attempt\": 1}}, {\"at\": 1796130120, "
    "\"kind\": \"submitted\", \"detail\": {\"decision\": \"admitted\", "
    "\"planned_end\": 1796137445, \"submit_time\": 1796130000, "
    "\"earliest_feasible_deadline\": null, \"reason\": \"two words\"}}]}";

static void test_fmt_job(void **state)
{
    ef_buf b = {0};
    ef_err e = {0};
    assert_ok(cl_fmt_job("http://s:1", JOB, strlen(JOB), &b, &e), e);
    assert_string_equal(b.s,
        "job a1 (owner alice)\n"
        "  model        resnet50, batch size 256\n"
        "  decision     admitted\n"
        "  state        running\n"
        "  progress     1200/5000 iterations (24%)\n"
        "  gpus         6 (node 0: 0,1,2,3; node 1: 4,5)\n"
        "  deadline     2026-12-01T16:04:05Z\n"
        "  planned end  2026-12-01T15:04:05Z (slack 1h 00m)\n"
        "  at risk      yes: node 1 is down\n"
        "  submitted    2026-12-01T13:00:00Z\n"
        "  history\n"
        "    2026-12-01T13:00:00Z  submitted\n"
        "    2026-12-01T13:01:00Z  started  attempt=1  gpus=6\n"
        "    2026-12-01T13:02:00Z  submitted  decision=admitted  "
        "planned_end=2026-12-01T15:04:05Z  reason=\"two words\"  "
        "submit_time=2026-12-01T13:00:00Z\n");
    free(b.s);
    b = (ef_buf){0};
    const char *late = "{\"id\": \"b\", \"deadline\": 100, \"planned_end\": "
                       "160, \"earliest_feasible_deadline\": 200}";
    assert_ok(cl_fmt_job("http://s:1", late, strlen(late), &b, &e), e);
    assert_contains(b.s, "(late by 1m 00s)");
    assert_contains(b.s, "earliest deadline we can guarantee: +3m 20s\n");
    free(b.s);
    b = (ef_buf){0};
    assert_err_kind(cl_fmt_job("http://s:1", "[]", 2, &b, &e), e,
                    EF_E_INTERNAL, "http://s:1: the answer is not a JSON "
                    "object", NULL);
    free(b.s);
}

static void test_fmt_cancel(void **state)
{
    ef_buf b = {0};
    ef_err e = {0};
    const char *c1 = "{\"id\": \"a 1\", \"state\": \"cancelled\", "
                     "\"reservation_freed\": true, \"plan_version\": 7}";
    assert_ok(cl_fmt_cancel("http://s:1", c1, strlen(c1), &b, &e), e);
    assert_string_equal(b.s, "cancelled: job a 1; its reservation is freed "
                             "(plan version 7)\n");
    free(b.s);
    b = (ef_buf){0};
    const char *c2 = "{\"id\": \"q\", \"state\": \"cancelled\", "
                     "\"reservation_freed\": false, \"plan_version\": 8}";
    assert_ok(cl_fmt_cancel("http://s:1", c2, strlen(c2), &b, &e), e);
    assert_string_equal(b.s, "cancelled: job q; it held no reservation "
                             "(plan version 8)\n");
    free(b.s);
}

static void test_job_deadline(void **state)
{
    int64_t d = 0;
    ef_err e = {0};
    const char *j1 = "{\"id\": \"a\", \"deadline\": 1796141045}";
    assert_ok(cl_job_deadline("j.json", j1, strlen(j1), &d, &e), e);
    assert_int_equal(d, 1796141045);
    const char *j2 = "{\"id\": \"a\", \"deadline\": \"2026-12-01T16:04:05Z\"}";
    assert_ok(cl_job_deadline("j.json", j2, strlen(j2), &d, &e), e);
    assert_int_equal(d, 1796141045);
    const char *j3 = "{\"id\": \"a\", \"deadline\": null}";
    assert_ok(cl_job_deadline("j.json", j3, strlen(j3), &d, &e), e);
    assert_int_equal(d, -1);
    const char *j4 = "{\"id\": \"a\"}";
    assert_ok(cl_job_deadline("j.json", j4, strlen(j4), &d, &e), e);
    assert_int_equal(d, -1);
    const char *b1 = "{\"deadline\": true}";
    assert_err(cl_job_deadline("j.json", b1, strlen(b1), &d, &e), e,
               "j.json: deadline: expected Unix seconds", NULL);
    const char *b2 = "{\"deadline\": \"tomorrow\"}";
    assert_err(cl_job_deadline("--job", b2, strlen(b2), &d, &e), e,
               "--job: deadline: ", NULL);
    const char *b3 = "[1]";
    assert_err(cl_job_deadline("-", b3, strlen(b3), &d, &e), e,
               "-: expected one job, a JSON object (got an array)", NULL);
    const char *b4 = "{\"id\": ";
    assert_err(cl_job_deadline("j.json", b4, strlen(b4), &d, &e), e,
               "j.json:1:", NULL);
}

static void test_job_resolve(void **state)
{
    ef_err e = {0};
    int64_t d = 0;
    char *b = ef_strdup("{\"id\": \"a\", \"deadline\": \"now+8h\", "
                        "\"iterations\": 5, \"submit_time\": \"now\"}");
    size_t n = strlen(b);
    assert_ok(cl_job_resolve("--job", &b, &n, 1000, &e), e);
    assert_string_equal(b, "{\"id\":\"a\",\"deadline\":29800,"
                        "\"iterations\":5,\"submit_time\":1000}");
    assert_int_equal(n, strlen(b));
    assert_ok(cl_job_deadline("--job", b, n, &d, &e), e);
    assert_int_equal(d, 29800);
    free(b);
    /* nothing relative: the body is kept byte for byte */
    const char *keep = "{ \"id\": \"a\", \"deadline\": \"2026-12-01T16:04:05Z\" }";
    b = ef_strdup(keep);
    n = strlen(b);
    assert_ok(cl_job_resolve("--job", &b, &n, 1000, &e), e);
    assert_string_equal(b, keep);
    free(b);
    /* a bad span names the member and says why */
    b = ef_strdup("{\"deadline\": \"now+8y\"}");
    n = strlen(b);
    assert_err(cl_job_resolve("j.json", &b, &n, 1000, &e), e,
               "j.json: deadline: \"now+8y\": unknown unit", NULL);
    free(b);
    /* not JSON: left for cl_job_deadline to report */
    b = ef_strdup("{\"id\": ");
    n = strlen(b);
    assert_ok(cl_job_resolve("j.json", &b, &n, 1000, &e), e);
    free(b);
}

static void test_answer_read(void **state)
{
    cl_answer a;
    ef_err e = {0};
    const char *ok = "{\"id\": \"a\\u001b1\", \"decision\": \"admitted\", "
                     "\"planned_end\": 1796137445, "
                     "\"earliest_feasible_deadline\": null, \"reason\": "
                     "null, \"broken\": null, \"submit_time\": 1796130000, "
                     "\"plan_version\": 3}";
    assert_ok(cl_answer_read("http://s:1", ok, strlen(ok), 1796141045, &a,
                             &e), e);
    assert_string_equal(a.id, "a\\x1B1");
    assert_int_equal(a.decision, PLAN_ADMITTED);
    assert_int_equal(a.planned_end, 1796137445);
    assert_int_equal(a.earliest, -1);
    assert_int_equal(a.deadline, 1796141045);
    assert_null(a.reason);
    assert_null(a.broken);
    assert_int_equal(a.plan_version, 3);
    cl_answer_free(&a);
    const char *rej = "{\"id\": \"b\", \"decision\": \"rejected\", "
                      "\"planned_end\": null, "
                      "\"earliest_feasible_deadline\": 1796150000, "
                      "\"reason\": \"too tight\", \"broken\": \"a1\"}";
    assert_ok(cl_answer_read("http://s:1", rej, strlen(rej), -1, &a, &e),
              e);
    assert_int_equal(a.decision, PLAN_REJECTED);
    assert_int_equal(a.earliest, 1796150000);
    assert_string_equal(a.reason, "too tight");
    assert_string_equal(a.broken, "a1");
    cl_answer_free(&a);
    const char *bad = "{\"id\": \"b\", \"decision\": \"maybe\"}";
    assert_err_kind(cl_answer_read("http://s:1", bad, strlen(bad), -1, &a,
                                   &e), e, EF_E_INTERNAL,
                    "http://s:1: the answer has no id or no decision", NULL);
    cl_answer_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_accepted),
        cmocka_unit_test(test_url_refused),
        cmocka_unit_test(test_server_resolve),
        cmocka_unit_test(test_escape_round_trip),
        cmocka_unit_test(test_token_file_private),
        cmocka_unit_test(test_token_file_too_open),
        cmocka_unit_test(test_token_file_refused),
        cmocka_unit_test(test_token_env),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_status_error),
        cmocka_unit_test(test_fmt_time),
        cmocka_unit_test(test_fmt_jobs),
        cmocka_unit_test(test_fmt_job),
        cmocka_unit_test(test_fmt_cancel),
        cmocka_unit_test(test_job_deadline),
        cmocka_unit_test(test_job_resolve),
        cmocka_unit_test(test_answer_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
