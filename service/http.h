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
 * the request timeout, 409 conflicts, 413 a body over the limit, 415 a
 * body that is not JSON, 500 internal errors.
 *
 * Slow clients: the daemon polls every connection from a pool of threads,
 * so a client that sends a byte a second holds one connection, not a
 * thread; its request must arrive whole within 'request_timeout' seconds
 * (else 408 and the connection closes) and an idle connection closes after
 * 'idle_timeout'. Connections are limited in all and per client address.
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
/* Stop: finish the requests under way, close every connection. */
void srv_stop(srv *s);

#endif
