/*
 * client.h: the CLI's side of efplan serve (cl_*), over libcurl.
 *
 * What the commands jobs, show, cancel and submit --server share: where
 * the server is and which token to send (cl_server_resolve,
 * cl_token_resolve), one HTTP request (cl_request), the job id as a path
 * segment (cl_job_path), the error an answer carries (cl_status_error),
 * and the answers read from their JSON (service/api.json) and written as
 * text for people (cl_fmt_*). The library never prints: it fills an
 * ef_buf or an ef_err and the CLI prints.
 *
 * Secrets: a token is sent only in the Authorization header; no error
 * message, URL or formatted text ever holds it.
 */
#ifndef EF_CLIENT_H
#define EF_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/htime.h"
#include "common/util.h"
#include "planner/plan.h"

#define CL_CONNECT_TIMEOUT_S 10 /* default connect timeout */
#define CL_TIMEOUT_S 60         /* default timeout of a whole request */
#define CL_BODY_MAX (64L << 20) /* the largest answer body read */
#define CL_JOB_MAX (16L << 20)  /* the largest job body submitted */

/* Start libcurl (curl_global_init) the first time it is called; later
 * calls do nothing. Not thread-safe: call it from main before threads.
 * Returns EF_OK, or EF_ERR with 'e' filled (EF_E_INTERNAL). */
int cl_init(ef_err *e);

/* Stop libcurl (curl_global_cleanup) when cl_init started it. */
void cl_cleanup(void);

/* 'url' as the base URL of a server: "http://" or "https://" (any case)
 * then a host, an optional :port and an optional path; no query or
 * fragment, no space or control character. 'what' names where it came
 * from in the message ("--server", "EFPLAN_SERVER"). Returns EF_OK, or
 * EF_ERR with 'e' filled (EF_E_USAGE, quoting the URL and saying what
 * is accepted). */
int cl_check_url(const char *url, const char *what, ef_err *e);

/* The server's base URL: 'arg' (--server) when not NULL, else the
 * environment's EFPLAN_SERVER when set and not empty; checked with
 * cl_check_url. *url points at 'arg' or into the environment (not to be
 * freed). Returns EF_OK, or EF_ERR with 'e' filled (EF_E_USAGE: neither
 * is given (the message says how to give it), or the URL is refused). */
int cl_server_resolve(const char *arg, const char **url, ef_err *e);

/* The bearer token, into tok[0..cap) (cap > TOKEN_TEXT_MAX is enough):
 *   - 'token_file' (--token-file) when not NULL: it must be a regular
 *     file (symbolic links followed) with no permission bit for group or
 *     others (mode 0600 or 0400, as ssh asks of its keys); the token is
 *     its first line, spaces, tabs and CR trimmed;
 *   - else the environment's EFPLAN_TOKEN when set and not empty
 *     (trimmed the same way).
 * A token is 1 to TOKEN_TEXT_MAX printable ASCII characters without
 * spaces (the server judges the rest). Returns EF_OK, or EF_ERR with
 * 'e' filled, never quoting the token: EF_E_USAGE when neither is given
 * (the message says how) or EFPLAN_TOKEN is not a token; EF_E_INPUT,
 * naming the file, when it is missing or unreadable, not a regular file,
 * open to group or others (its mode, and the chmod that fixes it), empty
 * or its first line is not a token. */
int cl_token_resolve(const char *token_file, char *tok, size_t cap,
                     ef_err *e);

/* Where and how to ask: 'server' a base URL (cl_check_url), 'token'
 * NULL for no Authorization header; timeouts in seconds, 0 for the
 * defaults above. */
typedef struct cl_conn {
    const char *server;
    const char *token;
    const char *cacert;   /* https: a PEM file of the CAs to trust instead
                             of the system's (NULL: the system's) */
    long connect_timeout_s;
    long timeout_s;
} cl_conn;

/* An answer: its HTTP status and body (heap, NUL-terminated; len bytes
 * before the NUL). Free with cl_resp_free. */
typedef struct cl_resp {
    long status;
    char *body;
    size_t len;
} cl_resp;

/*
 * cl_request: send 'method' ("GET", "POST", "DELETE") to server + 'path'
 * ('path' starts with '/'; a '/' ending the server's URL is not doubled)
 * with the JSON 'body' (NULL: none; else 'len' bytes, sent as
 * Content-Type: application/json) and the token as "Authorization:
 * Bearer TOKEN"; redirects are not followed, only http and https are
 * spoken. cl_init must have been called. Returns EF_OK with *r filled
 * whatever the HTTP status (the caller judges it: cl_status_error), or
 * EF_ERR with 'e' filled and *r empty when no answer came, naming the
 * method and URL and curl's words: the server is not reachable at the
 * URL (connection refused, host not found: EF_E_INTERNAL), it timed out
 * (EF_E_INTERNAL), the answer is over CL_BODY_MAX (EF_E_INTERNAL), the
 * URL is refused (EF_E_USAGE).
 */
int cl_request(const cl_conn *c, const char *method, const char *path,
               const char *body, size_t len, cl_resp *r, ef_err *e);

void cl_resp_free(cl_resp *r);

/* 's' percent-encoded as one URL path segment (curl_easy_escape: every
 * byte but A-Z a-z 0-9 - . _ ~ as %XX). Heap; free with free(). */
char *cl_escape(const char *s);

/* The path of job 'id' (UTF-8 text, any bytes): "/v1/jobs/" and 'id'
 * percent-encoded. Heap, or NULL with 'e' filled (EF_E_USAGE) when 'id'
 * is empty. */
char *cl_job_path(const char *id, ef_err *e);

/* The error an answer with a status outside 200..299 stands for, into
 * 'e': "SERVER: HTTP N: MESSAGE", MESSAGE from the body's {"error":
 * {"message", "path"}} (the path first, "PATH: MESSAGE", when the
 * message does not already hold it), else the body's first line (cut,
 * quoted), else "(no message)". Kind: EF_E_INPUT for 4xx, EF_E_INTERNAL
 * otherwise (the CLI maps 401 and 403 to its own exit code). Always
 * returns EF_ERR. */
int cl_status_error(const char *server, const cl_resp *r, ef_err *e);

/* A time as people read it: ef_ht_fmt in the zone of cl_set_zone (UTC
 * until it is called: "2026-12-01T15:04:05Z"); "-" for t < 0. The one
 * format of every time the cl_fmt_* texts show. Returns dst. */
const char *cl_fmt_time(int64_t t, char *dst, size_t len);

/* How cl_fmt_time, and so the cl_fmt_* texts, show times from now on
 * (--time-zone): one setting per process. */
void cl_set_zone(ef_ht_zone z);

/*
 * The answers as text for people, appended to 'out' (lines ending in
 * '\n'). 'body' is the 2xx answer (len bytes); text from the server (ids,
 * names, reasons) is written with control characters and quotes escaped
 * (\xNN), so it cannot drive the terminal. Each returns EF_OK, or EF_ERR
 * with 'e' filled (EF_E_INTERNAL, naming 'server': the body is not JSON
 * or not the answer's shape).
 *
 * cl_fmt_jobs: GET /v1/jobs: an aligned table, one row per job: id,
 *   owner, state, decision, GPUs, deadline, planned end (cl_fmt_time;
 *   "-" for none) and "at-risk" for a job at risk; "no jobs" when empty.
 * cl_fmt_job: GET /v1/jobs/{id}: a block: model and batch, decision,
 *   state, progress "1200/5000 iterations", GPUs and placement, deadline,
 *   planned end with its slack (or lateness), at-risk and reason, submit
 *   time, then the history, one line per event (time, kind, detail as
 *   key=value words: times by cl_fmt_time, strings quoted only when
 *   they hold a blank, null members left out).
 * cl_fmt_cancel: DELETE /v1/jobs/{id}: one line, "cancelled: job ID"
 *   and whether a reservation was freed.
 */
int cl_fmt_jobs(const char *server, const char *body, size_t len,
                ef_buf *out, ef_err *e);
int cl_fmt_job(const char *server, const char *body, size_t len,
               ef_buf *out, ef_err *e);
int cl_fmt_cancel(const char *server, const char *body, size_t len,
                  ef_buf *out, ef_err *e);
/* GET /v1/nodes: a row per node (index, state, since, why), then the
 * usable count. POST /v1/nodes/N/drain|undrain: one line. */
int cl_fmt_nodes(const char *server, const char *body, size_t len,
                 ef_buf *out, ef_err *e);
/* POST /v1/replan: "re-planned: plan vN (changed|unchanged), A admitted
 * [, R at risk]", the reason a plan was kept when there is one, and
 * the snapshot written. */
int cl_fmt_replan(const char *server, const char *body, size_t len,
                  ef_buf *out, ef_err *e);
int cl_fmt_drain(const char *server, const char *body, size_t len,
                 ef_buf *out, ef_err *e);

/* The admission answer of POST /v1/jobs. Strings are heap (free with
 * cl_answer_free), escaped as cl_fmt_* write them (safe to print);
 * times -1 when null. */
typedef struct cl_answer {
    char *id;
    plan_decision decision; /* ADMITTED, REJECTED or BEST_EFFORT */
    int64_t planned_end;
    int64_t earliest;       /* earliest_feasible_deadline */
    int64_t deadline;       /* the submitted job's deadline; -1: none */
    char *reason;           /* NULL when null */
    char *broken;           /* the job whose promise it would break */
    int64_t submit_time;
    int64_t plan_version;
    char *speed_note;       /* "planned at 70% of the curve: ..." (the
                               service's learned speed), NULL: none */
} cl_answer;

/* The JSON text {"KEY": "VALUE"} (heap, free), or NULL with 'e' filled
 * (EF_E_USAGE) when 'value' is not UTF-8. */
char *cl_json_object1(const char *key, const char *value, ef_err *e);

/* The relative times of the job a submit sends, made absolute: where
 * *body (*len bytes, heap) is one JSON object whose "deadline" or
 * "submit_time" is a string starting with "now" ("now+8h", as model/jobs.c reads it), that member
 * becomes Unix seconds by ef_ht_parse against 'now' (the caller's wall
 * clock: when the user submits), and *body / *len are replaced by the
 * object written again (members in their order). Anything else leaves
 * *body as it is (cl_job_deadline judges it). Returns EF_OK, or EF_ERR
 * with 'e' filled (EF_E_INPUT: "name: deadline: the reason"). */
int cl_job_resolve(const char *name, char **body, size_t *len, int64_t now,
                   ef_err *e);

/* The job a submit sends: 'body' (len bytes) must be one JSON object;
 * its "deadline" (Unix seconds, an ISO-8601 string, null or absent: -1)
 * into *deadline. 'name' names the body in messages (a file, "--job",
 * "standard input"). Returns EF_OK, or EF_ERR with 'e' filled
 * (EF_E_INPUT: not JSON (name:line:col), not an object, a deadline that
 * is none of those). */
int cl_job_deadline(const char *name, const char *body, size_t len,
                    int64_t *deadline, ef_err *e);

/* Read the 2xx answer 'body' of a submit into *a (zeroed first), with
 * 'deadline' the submitted job's (cl_job_deadline). Returns EF_OK, or
 * EF_ERR with 'e' filled (EF_E_INTERNAL, naming 'server': not JSON, or
 * no id or decision). */
int cl_answer_read(const char *server, const char *body, size_t len,
                   int64_t deadline, cl_answer *a, ef_err *e);

void cl_answer_free(cl_answer *a);

#endif
