/*
 * http.h: the service's HTTP front (srv_*): libmicrohttpd in front of svc.
 *
 * srv routes each request by its route table (srv_routes: the API that
 * service/api.json describes, checked by a test), authenticates it
 * (Authorization: Bearer TOKEN, looked up in the store on every request,
 * so a revoked token fails at once), reads its body up to SVC_BODY_MAX
 * bytes, and hands it to svc. Every answer that is not 2xx carries a JSON
 * error body (svc_reply_error): 400 bad input, 401 no or bad token, 403
 * not yours or not an operator, 404 no such route or job, 405 a route
 * without that method (with Allow), 408 a request not read whole within
 * the request timeout, 409 conflicts, 413 a body over the limit, 414 a
 * path too long, 415 a body that is not JSON, 429 a token with too many
 * requests under way, 431 a head too large, 500 internal errors, 501 a
 * Transfer-Encoding other than chunked, 503 a request that comes while
 * the server stops. What the head says of itself is checked before
 * anything is done: a %00 in the URI as sent (it would end a job id or a
 * parameter early), two framings of the body (Content-Length twice with
 * two values, or with Transfer-Encoding) and a query parameter without a
 * value or given twice are 400.
 *
 * Slow clients and exhaustion: the daemon polls every connection from a
 * pool of threads, so a client that sends a byte a second holds one
 * connection, not a thread. A request that may wait for planning (every
 * route but /healthz, /metrics and /v1/me) is answered by one of a few
 * workers while its connection is suspended, so a polling thread never
 * waits. A connection is either waiting for a
 * request's head (unauthenticated), reading an authenticated body, or
 * being answered:
 *   - waiting: at most 'max_pending' such connections; a new one over it
 *     closes the one that has waited longest (so one local process that
 *     holds hundreds of idle connections cannot keep another client out).
 *     The head must arrive whole within 'header_timeout' seconds of the
 *     connection's start (or of its last answer, kept alive), else the
 *     connection is closed. The head is checked as soon as it is whole
 *     (route, size, token): a refused request is answered without its
 *     body being read; only POST /v1/jobs and a drain read a body.
 *   - reading a body: the request must arrive whole within
 *     'request_timeout' seconds of its head: bytes past it get 408 (JSON)
 *     and the connection closes; a body that stops arriving is closed
 *     SRV_BODY_GRACE seconds after the deadline.
 *   - a token has at most 'per_token' requests under way (429 over it).
 * Heads over the limits get JSON too: a path over 8 KiB 414, over 100
 * headers or 64 KiB of them 431 (libmicrohttpd reads up to 1.5 MiB per
 * connection to let them reach the handler; beyond, and for what it
 * refuses to parse at all, such as a bad Content-Length or another HTTP
 * version, it answers itself).
 *
 * Listening: on 'listen' ("HOST:PORT", "[V6]:PORT"; port 0 picks a free
 * one, see srv_port). An address that is not loopback needs TLS
 * (tls_cert and tls_key, PEM files; GnuTLS through libmicrohttpd) unless
 * insecure_listen is set: EF_E_USAGE otherwise.
 *
 * Logging: one line per request through cfg->log (method, path with
 * control characters replaced, status, user name, milliseconds); never a
 * token or a header. The library itself never prints.
 */
#ifndef EF_HTTP_H
#define EF_HTTP_H

#include "common/err.h"
#include "service/svc.h"

typedef struct srv srv;

typedef struct srv_config {
    const char *listen;        /* default "127.0.0.1:8470" */
    const char *tls_cert, *tls_key;
    int insecure_listen;
    int threads;               /* polling threads (default 4) */
    int request_timeout;       /* seconds for a whole request (default 30) */
    int idle_timeout;          /* seconds (default 60) */
    int header_timeout;        /* seconds for a request's head, from the
                                  connection's start or its last answer
                                  (default 10) */
    int max_pending;           /* connections waiting for a request head
                                  (default 128); over it the oldest is
                                  closed */
    int per_token;             /* requests under way per token (default 8);
                                  over it 429 */
    void (*log)(void *arg, const char *line);
    void *log_arg;
} srv_config;

/* One route: what the API offers (service/api.json lists the same). */
typedef struct srv_route {
    const char *method;
    const char *path;          /* "{id}": one job id, the rest of the path */
    const char *auth;          /* "none", "user" or "operator" */
} srv_route;

/* The route table, *n entries. */
const srv_route *srv_routes(int *n);

/* Start serving svc 'sv' (borrowed: it must outlive the srv). */
int srv_start(srv **out, svc *sv, const srv_config *cfg, ef_err *e);
/* The port it listens on. */
int srv_port(const srv *s);
/* Stop: finish the requests under way (their answers are sent, for at
 * most SRV_DRAIN_MAX seconds: 10; a request that comes meanwhile, or a
 * body that comes whole, gets 503 with nothing done), close every
 * connection. Logs "http: stopping: ..." once new requests are refused. */
void srv_stop(srv *s);

#endif
