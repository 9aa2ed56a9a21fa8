/* http.c: the service's HTTP front on libmicrohttpd (see http.h). */
#include "service/http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "common/util.h"
#include "model/jobs.h"
#include "service/store.h"

struct srv {
    struct MHD_Daemon *d;
    svc *sv;
    srv_config cfg;
    int port;
    char *cert, *key;   /* TLS: PEM texts (the key wiped at the end) */
    size_t keylen;
};

/* Free s and what it holds, wiping the TLS key. */
static void srv_free(srv *s)
{
    if (s->key) {
        volatile char *k = s->key;
        for (size_t i = 0; i < s->keylen; i++)
            k[i] = 0;
    }
    free(s->key);
    free(s->cert);
    free(s);
}

/* What a request is, once routed. */
typedef enum route_id {
    R_HEALTH, R_METRICS, R_JOBS_POST, R_JOBS_GET, R_JOB_GET, R_JOB_DELETE,
    R_PLAN, R_REPLAN, R_QUEUE, R_NODES, R_DRAIN, R_UNDRAIN, R_JOB_EXPLAIN,
    R_COUNT
} route_id;

static const srv_route routes[R_COUNT] = {
    [R_HEALTH] = {"GET", "/healthz", "none"},
    [R_METRICS] = {"GET", "/metrics", "none"},
    [R_JOBS_POST] = {"POST", "/v1/jobs", "user"},
    [R_JOBS_GET] = {"GET", "/v1/jobs", "user"},
    [R_JOB_GET] = {"GET", "/v1/jobs/{id}", "user"},
    [R_JOB_DELETE] = {"DELETE", "/v1/jobs/{id}", "user"},
    [R_PLAN] = {"GET", "/v1/plan", "user"},
    [R_REPLAN] = {"POST", "/v1/replan", "operator"},
    [R_QUEUE] = {"GET", "/v1/queue", "user"},
    [R_NODES] = {"GET", "/v1/nodes", "user"},
    [R_DRAIN] = {"POST", "/v1/nodes/{node}/drain", "operator"},
    [R_UNDRAIN] = {"POST", "/v1/nodes/{node}/undrain", "operator"},
    [R_JOB_EXPLAIN] = {"GET", "/v1/jobs/{id}/explain", "user"},
};

const srv_route *srv_routes(int *n)
{
    *n = R_COUNT;
    return routes;
}

/* One request being read. */
typedef struct req {
    ef_buf body;
    int too_large;      /* the body passed SVC_BODY_MAX: 413 */
    int answered;       /* a response is queued: what else comes is
                           dropped */
    double t0;          /* monotonic seconds when its headers arrived */
} req;

static void srv_log(srv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void srv_log(srv *s, const char *fmt, ...)
{
    if (!s->cfg.log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    s->cfg.log(s->cfg.log_arg, line);
}

/* Match the decoded path to a route: the path's routes (bit per
 * route_id) into *any, the id of "{id}" routes into *id; for
 * /v1/jobs/{id}/explain, that id into xid[0..xlen): such a path is that
 * route only (a job whose own id ends in "/explain" is listed by GET
 * /v1/jobs but cannot be named in a path). */
static unsigned match_path(const char *url, const char **id, char *node,
                           size_t nlen, char *xid, size_t xlen)
{
    unsigned m = 0;
    *id = NULL;
    node[0] = '\0';
    static const char jobs[] = "/v1/jobs/", nodes[] = "/v1/nodes/";
    for (int r = 0; r < R_COUNT; r++)
        if (!strchr(routes[r].path, '{') && strcmp(url, routes[r].path) == 0)
            m |= 1u << r;
    if (strncmp(url, jobs, sizeof jobs - 1) == 0 && url[sizeof jobs - 1]) {
        *id = url + sizeof jobs - 1;
        m |= 1u << R_JOB_GET | 1u << R_JOB_DELETE;
        static const char ex[] = "/explain";
        size_t L = strlen(*id), X = sizeof ex - 1;
        if (L > X && L - X < xlen && strcmp(*id + L - X, ex) == 0) {
            snprintf(xid, xlen, "%.*s", (int)(L - X), *id);
            m = 1u << R_JOB_EXPLAIN;
        }
    }
    if (strncmp(url, nodes, sizeof nodes - 1) == 0) {
        /* /v1/nodes/{node}/drain and /undrain */
        const char *n0 = url + sizeof nodes - 1, *sl = strchr(n0, '/');
        if (sl && sl > n0 && (size_t)(sl - n0) < nlen &&
            (strcmp(sl, "/drain") == 0 || strcmp(sl, "/undrain") == 0)) {
            snprintf(node, nlen, "%.*s", (int)(sl - n0), n0);
            m |= 1u << (strcmp(sl, "/drain") == 0 ? R_DRAIN : R_UNDRAIN);
        }
    }
    return m;
}

/* Queue reply r (its body handed to the response) with the headers its
 * route adds. */
static enum MHD_Result send_reply(struct MHD_Connection *c, svc_reply *r,
                                  const char *allow, int64_t plan_version)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        r->len, r->body, MHD_RESPMEM_MUST_FREE);
    r->body = NULL;
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->ctype ? r->ctype : "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    if (r->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"efplan\"");
    if (plan_version > 0) {
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)plan_version);
        MHD_add_response_header(resp, "X-Efplan-Plan-Version", v);
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* The methods the path's routes allow, "GET, DELETE". */
static void allow_of(unsigned m, char *out, size_t cap)
{
    out[0] = '\0';
    for (int r = 0; r < R_COUNT; r++)
        if (m & 1u << r) {
            if (strstr(out, routes[r].method))
                continue;
            size_t n = strlen(out);
            snprintf(out + n, cap - n, "%s%s", n ? ", " : "",
                     routes[r].method);
        }
}

/* Check the query's parameters against those the route takes. */
typedef struct qcheck {
    const char *const *ok;
    int nok;
    char bad[128];
} qcheck;

static enum MHD_Result query_key(void *cls, enum MHD_ValueKind kind,
                                 const char *key, const char *value)
{
    (void)kind;
    (void)value;
    qcheck *q = cls;
    for (int i = 0; i < q->nok; i++)
        if (strcmp(q->ok[i], key) == 0)
            return MHD_YES;
    if (!q->bad[0])
        snprintf(q->bad, sizeof q->bad, "%.100s", key);
    return MHD_YES;
}

/* Authenticate: 1 with *who filled, or 0 with *r the 401. */
static int authenticate(srv *s, struct MHD_Connection *c, store_ident *who,
                        svc_reply *r)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h) {
        svc_reply_error(r, 401, NULL, "no token: send Authorization: "
                        "Bearer TOKEN (efplan token add makes one)");
        return 0;
    }
    if (strncasecmp(h, "Bearer ", 7) != 0) {
        svc_reply_error(r, 401, NULL, "Authorization: expected \"Bearer "
                        "TOKEN\"");
        return 0;
    }
    ef_err e = {0};
    svc_lock(s->sv);
    int ok = store_token_check(svc_store(s->sv), h + 7, who, &e);
    svc_unlock(s->sv);
    if (ok < 0) {
        char m[EF_ERR_LEN + 32];
        snprintf(m, sizeof m, "internal error: %s", e.msg);
        svc_reply_error(r, 500, NULL, m);
        return 0;
    }
    if (!ok) {
        svc_reply_error(r, 401, NULL, "the token is not valid (unknown or "
                        "revoked)");
        return 0;
    }
    return 1;
}

/* Answer a request read whole. */
static enum MHD_Result answer(srv *s, struct MHD_Connection *c,
                              const char *url, const char *method, req *q)
{
    svc_reply r;
    memset(&r, 0, sizeof r);
    const char *id = NULL;
    char node[128], xid[512];
    unsigned m = match_path(url, &id, node, sizeof node, xid, sizeof xid);
    if (m & 1u << R_JOB_EXPLAIN)
        id = xid;
    /* HEAD is GET without the body (libmicrohttpd drops it) */
    const char *as = strcmp(method, "HEAD") == 0 ? "GET" : method;
    int rt = -1;
    for (int i = 0; i < R_COUNT && rt < 0; i++)
        if ((m & 1u << i) && strcmp(routes[i].method, as) == 0)
            rt = i;
    char allow[64] = "";
    store_ident who;
    memset(&who, 0, sizeof who);
    int64_t pv = 0;
    double t0 = q->t0;
    int64_t now = svc_now(s->sv);
    if (!m) {
        /* the API's paths, from the route table, each once */
        ef_buf msg = {0};
        ef_buf_printf(&msg, "no route %.200s (the API:", url);
        for (int i = 0; i < R_COUNT; i++) {
            int seen = 0;
            for (int k = 0; k < i && !seen; k++)
                seen = strcmp(routes[k].path, routes[i].path) == 0;
            if (!seen)
                ef_buf_printf(&msg, "%s %s", i ? "," : "", routes[i].path);
        }
        ef_buf_put(&msg, ")");
        svc_reply_error(&r, 404, NULL, msg.s);
        free(msg.s);
        goto send;
    }
    if (rt < 0) {
        allow_of(m, allow, sizeof allow);
        char msg[200];
        snprintf(msg, sizeof msg, "method %.20s not allowed here (allowed: "
                 "%s)", method, allow);
        svc_reply_error(&r, 405, NULL, msg);
        goto send;
    }
    if (q->too_large) {
        char msg[128];
        snprintf(msg, sizeof msg, "request body over %d bytes",
                 SVC_BODY_MAX);
        svc_reply_error(&r, 413, NULL, msg);
        goto send;
    }
    /* query parameters: only /v1/jobs takes any */
    static const char *const list_keys[] = {"all", "state"};
    qcheck qc = {list_keys, rt == R_JOBS_GET ? 2 : 0, ""};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_key, &qc);
    if (qc.bad[0]) {
        char msg[300];
        snprintf(msg, sizeof msg, "unknown query parameter \"%s\"%s", qc.bad,
                 rt == R_JOBS_GET ? " (expected all or state)" : "");
        svc_reply_error(&r, 400, qc.bad, msg);
        goto send;
    }
    if (strcmp(routes[rt].auth, "none") != 0 && !authenticate(s, c, &who, &r))
        goto send;
    if (id) {
        const char *why = job_id_check(id, strlen(id));
        if (why) {
            char msg[200];
            snprintf(msg, sizeof msg, "job id in the path: %s (expected "
                     JOB_ID_RULE ")", why);
            svc_reply_error(&r, 400, NULL, msg);
            goto send;
        }
    }
    switch ((route_id)rt) {
    case R_HEALTH: svc_health(s->sv, now, &r); break;
    case R_METRICS: svc_metrics(s->sv, &r); break;
    case R_JOBS_POST: {
        const char *ct = MHD_lookup_connection_value(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (ct && strncasecmp(ct, "application/json", 16) != 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "Content-Type: %.100s: expected "
                     "application/json (with curl: -H 'Content-Type: "
                     "application/json')", ct);
            svc_reply_error(&r, 415, NULL, msg);
            break;
        }
        svc_submit(s->sv, &who, q->body.s ? q->body.s : "", q->body.n, now,
                   &r);
        if (r.status == 200 || r.status == 201)
            svc_observe_submit(s->sv, ef_mono_seconds() - t0);
        break;
    }
    case R_JOBS_GET: {
        const char *all = MHD_lookup_connection_value(
            c, MHD_GET_ARGUMENT_KIND, "all");
        const char *st = MHD_lookup_connection_value(
            c, MHD_GET_ARGUMENT_KIND, "state");
        int a = 0;
        if (all && strcmp(all, "1") != 0 && strcmp(all, "0") != 0) {
            svc_reply_error(&r, 400, "all", "all: expected 1 or 0");
            break;
        }
        a = all && strcmp(all, "1") == 0;
        svc_list(s->sv, &who, a, st, now, &r);
        break;
    }
    case R_JOB_GET: svc_show(s->sv, &who, id, now, &r); break;
    case R_JOB_DELETE: svc_cancel(s->sv, &who, id, now, &r); break;
    case R_JOB_EXPLAIN: svc_explain(s->sv, &who, id, &r); break;
    case R_PLAN: svc_plan(s->sv, &r, &pv); break;
    case R_REPLAN: svc_replan(s->sv, &who, now, &r); break;
    case R_QUEUE: svc_queue(s->sv, &who, &r); break;
    case R_NODES: svc_nodes(s->sv, &r); break;
    case R_DRAIN:
    case R_UNDRAIN:
        svc_node_drain(s->sv, &who, node, rt == R_DRAIN, q->body.s,
                       q->body.n, now, &r);
        break;
    case R_COUNT: break;
    }
send:
    srv_log(s, "%s %.300s %d %s %.1f ms", method, url, r.status,
            who.name[0] ? who.name : "-", (ef_mono_seconds() - t0) * 1e3);
    enum MHD_Result ok = send_reply(c, &r, allow[0] ? allow : NULL, pv);
    svc_reply_free(&r);
    return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version,
                                  const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    srv *s = cls;
    req *q = *con_cls;
    if (!q) {
        q = ef_calloc(1, sizeof *q);
        q->t0 = ef_mono_seconds();
        *con_cls = q;
        /* a declared length over the limit is refused before reading */
        const char *cl = MHD_lookup_connection_value(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > SVC_BODY_MAX) {
            /* answered now: no 100 Continue, the body is never read, and
             * the connection closes after the answer */
            q->too_large = 1;
            q->answered = 1;
            return answer(s, c, url, method, q);
        }
        return MHD_YES;
    }
    if (q->answered) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (ef_mono_seconds() - q->t0 > s->cfg.request_timeout) {
            svc_reply r;
            char msg[128];
            snprintf(msg, sizeof msg, "the request did not arrive within %d "
                     "s", s->cfg.request_timeout);
            svc_reply_error(&r, 408, NULL, msg);
            srv_log(s, "%s %.300s 408 - (slow client)", method, url);
            q->answered = 1;
            enum MHD_Result ok = send_reply(c, &r, NULL, 0);
            svc_reply_free(&r);
            return ok;
        }
        if (!q->too_large) {
            if (q->body.n + *upload_data_size > SVC_BODY_MAX) {
                q->too_large = 1;
                free(q->body.s);
                memset(&q->body, 0, sizeof q->body);
            } else {
                ef_buf_grow(&q->body, *upload_data_size);
                memcpy(q->body.s + q->body.n, upload_data,
                       *upload_data_size);
                q->body.n += *upload_data_size;
                q->body.s[q->body.n] = '\0';
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    return answer(s, c, url, method, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    req *q = *con_cls;
    if (q) {
        free(q->body.s);
        free(q);
    }
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    srv *s = cls;
    if (!s->cfg.log)
        return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    char out[1100];
    snprintf(out, sizeof out, "http: %s", line);
    s->cfg.log(s->cfg.log_arg, out);
}

/* Parse "HOST:PORT" / "[V6]:PORT" into an address. */
static int parse_listen(const char *arg, struct sockaddr_storage *ss,
                        socklen_t *sl, int *loopback, ef_err *e)
{
    char host[256], port[16];
    const char *colon;
    if (arg[0] == '[') {
        const char *close = strchr(arg, ']');
        if (!close || close[1] != ':')
            return ef_fail(e, EF_E_USAGE, "--listen: \"%s\" (expected "
                           "HOST:PORT or [IPV6]:PORT)", arg);
        snprintf(host, sizeof host, "%.*s", (int)(close - arg - 1), arg + 1);
        colon = close + 1;
    } else {
        colon = strrchr(arg, ':');
        if (!colon)
            return ef_fail(e, EF_E_USAGE, "--listen: \"%s\" (expected "
                           "HOST:PORT, e.g. 127.0.0.1:8470)", arg);
        snprintf(host, sizeof host, "%.*s", (int)(colon - arg), arg);
    }
    snprintf(port, sizeof port, "%s", colon + 1);
    char *end;
    long p = strtol(port, &end, 10);
    if (!port[0] || *end || p < 0 || p > 65535)
        return ef_fail(e, EF_E_USAGE, "--listen: port \"%s\" (expected 0 to "
                       "65535)", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res)
        return ef_fail(e, EF_E_USAGE, "--listen: \"%s\": %s", host,
                       gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        *loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        *loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return EF_OK;
}

int srv_start(srv **out, svc *sv, const srv_config *cfg, ef_err *e)
{
    *out = NULL;
    srv *s = ef_calloc(1, sizeof *s);
    s->sv = sv;
    s->cfg = *cfg;
    if (!s->cfg.listen)
        s->cfg.listen = "127.0.0.1:8470";
    if (s->cfg.threads <= 0)
        s->cfg.threads = 4;
    if (s->cfg.request_timeout <= 0)
        s->cfg.request_timeout = 30;
    if (s->cfg.idle_timeout <= 0)
        s->cfg.idle_timeout = 60;
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    int loop = 0;
    if (parse_listen(s->cfg.listen, &ss, &sl, &loop, e) != EF_OK)
        goto fail;
    int tls = cfg->tls_cert || cfg->tls_key;
    if (tls && !(cfg->tls_cert && cfg->tls_key)) {
        ef_fail(e, EF_E_USAGE, "TLS needs both --tls-cert and --tls-key");
        goto fail;
    }
    if (!loop && !tls && !cfg->insecure_listen) {
        ef_fail(e, EF_E_USAGE, "--listen %s is not a loopback address: "
                "serving tokens over plain HTTP there lets anyone on the "
                "network read them (give --tls-cert and --tls-key, or "
                "--insecure-listen to do it anyway)", s->cfg.listen);
        goto fail;
    }
    char *cert = NULL, *key = NULL;
    size_t n = 0;
    if (tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            ef_fail(e, EF_E_USAGE, "this libmicrohttpd has no TLS support");
            goto fail;
        }
        if (ef_read_file(cfg->tls_cert, &cert, &n, e) != EF_OK)
            goto fail;
        if (ef_read_file(cfg->tls_key, &key, &n, e) != EF_OK) {
            free(cert);
            goto fail;
        }
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                     (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
                     (tls ? MHD_USE_TLS : 0);
    struct MHD_OptionItem tls_opts[] = {
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, cert},
        {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, key},
        {MHD_OPTION_END, 0, NULL}};
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->cfg.threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.idle_timeout,
        MHD_OPTION_CONNECTION_LIMIT, 512u,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, 128u,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
        MHD_OPTION_ARRAY, tls_opts,
        MHD_OPTION_END);
    /* the daemon reads them while it runs: kept until srv_stop */
    s->cert = cert;
    s->key = key;
    s->keylen = n;
    if (!s->d) {
        ef_fail(e, EF_E_INTERNAL, "cannot listen on %s (in use, or not an "
                "address of this host)", s->cfg.listen);
        goto fail;
    }
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : 0;
    *out = s;
    return EF_OK;
fail:
    srv_free(s);
    return EF_ERR;
}

int srv_port(const srv *s) { return s->port; }

void srv_stop(srv *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d);
    srv_free(s);
}
