/* http.c: the service's HTTP front on libmicrohttpd (see http.h). */
#include "service/http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "common/jsonw.h"
#include "common/util.h"
#include "model/jobs.h"
#include "service/store.h"

/* Where a connection is: waiting for a request's head (not yet
 * authenticated: counted against max_pending, closed at the header
 * deadline), reading an authenticated request's body (closed at the body
 * deadline + SRV_BODY_GRACE when nothing more comes), being answered, or
 * shut down by us (evicted or late; libmicrohttpd closes it). */
typedef enum conn_phase { C_WAIT, C_BODY, C_ANSWER, C_SHUT } conn_phase;

typedef struct conn {
    struct conn *prev, *next;
    int fd;
    conn_phase ph;
    double since;       /* monotonic seconds: when this phase began */
} conn;

/* A token's requests under way. */
typedef struct tok_use {
    char id[32];
    int n;
} tok_use;

/* Seconds a body that stopped arriving is kept past its deadline before
 * its connection is closed (bytes that come in that time get the 408). */
#define SRV_BODY_GRACE 10.0
/* The request line and head the handler accepts (larger: 414, 431). */
#define SRV_URL_MAX 8192
#define SRV_HEAD_MAX (64 * 1024)
#define SRV_HEADERS_MAX 100
/* What libmicrohttpd may hold per connection: enough to read a head far
 * over the limits above, so that it reaches the handler and gets a JSON
 * answer (pages are touched only as they are used) */
#define SRV_CONN_MEMORY ((size_t)3 << 19)
/* Threads that answer the requests which may wait for planning */
#define SRV_WORKERS 4
/* libmicrohttpd's own cap on connections (within 1024 descriptors) */
#define SRV_CONN_LIMIT 768u
/* Seconds a stopping server waits for the answers being sent (a client
 * that reads slowly cannot hold it longer) */
#define SRV_DRAIN_MAX 10.0

struct srv {
    struct MHD_Daemon *d;
    svc *sv;
    srv_config cfg;
    int port;
    char *cert, *key;   /* TLS: PEM texts (the key wiped at the end) */
    size_t keylen;
    pthread_mutex_t mu; /* guards what follows */
    pthread_cond_t cv;
    pthread_t reaper;
    int reaper_on, stopping;
    conn *conns;        /* every open connection, newest first */
    int npending;       /* of them in C_WAIT */
    tok_use *tu;
    int ntu;
    long evicted, head_late, body_late; /* not yet logged */
    double noted;       /* when they were last logged */
    /* requests that may wait for the planning lock are answered by
     * workers while their connection is suspended, so that a polling
     * thread never waits and /healthz never queues behind a submission
     * (park): a FIFO of parked requests, under mu */
    struct req *work, *work_tail;
    pthread_cond_t wcv;
    pthread_t worker[SRV_WORKERS];
    int nworkers;
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
    free(s->tu);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->wcv);
    free(s);
}

/* What a request is, once routed. */
typedef enum route_id {
    R_HEALTH, R_METRICS, R_JOBS_POST, R_JOBS_GET, R_JOB_GET, R_JOB_DELETE,
    R_PLAN, R_REPLAN, R_QUEUE, R_NODES, R_DRAIN, R_UNDRAIN, R_JOB_EXPLAIN,
    R_ME, R_COUNT
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
    [R_ME] = {"GET", "/v1/me", "user"},
};

const srv_route *srv_routes(int *n)
{
    *n = R_COUNT;
    return routes;
}

/* One request being read. */
typedef struct req {
    ef_buf body;
    /* parked (a worker answers it): 1 queued or being answered, 2 its
     * answer is ready in 'done' */
    int parked;
    struct req *next;   /* in srv.work */
    struct MHD_Connection *c;
    char id[512], node[128];
    int has_id;
    svc_reply done;
    int64_t done_pv;
    int too_large;      /* the body passed SVC_BODY_MAX: 413 */
    int answered;       /* a response is queued: what else comes is
                           dropped */
    double t0;          /* monotonic seconds when its headers arrived */
    int rt;             /* its route (route_id) once its head is checked */
    store_ident who;    /* who sent it (authenticated routes) */
    int holds;          /* 1: it counts in who's requests under way */
    int late;           /* its body was not whole by the deadline: 408 */
    int nul;            /* its URI as sent holds %00 (on_uri): 400 */
    int close;          /* its answer closes the connection */
} req;

/* What on_uri hands on_request for a URI that holds %00 (no req yet). */
static char uri_nul_mark;

/* The 503 of a request that comes while the server stops. */
static const char stopping_msg[] =
    "the service is stopping (SIGTERM or SIGINT): nothing of this request "
    "was done; send it again once it is back";

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
                                  const char *allow, int64_t plan_version,
                                  int close)
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
    if (close || r->status == 408 || r->status == 413 || r->status == 431 ||
        r->status == 414)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (r->status == 429 || r->status == 503) {
        char ra[32];
        snprintf(ra, sizeof ra, "%d", r->retry_after > 0 ? r->retry_after : 1);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
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

/* Check the query's parameters against those the route takes: the
 * first one that is not one of them, has no value ("?all") or comes
 * twice (the handler would read the first and ignore the other). */
#define QCHECK_MAX 4
typedef struct qcheck {
    const char *const *ok;
    int nok;
    int seen[QCHECK_MAX];
    char bad[128];
    const char *why;    /* what is wrong with 'bad' (NULL: unknown) */
} qcheck;

static enum MHD_Result query_key(void *cls, enum MHD_ValueKind kind,
                                 const char *key, const char *value)
{
    (void)kind;
    qcheck *q = cls;
    if (q->bad[0])
        return MHD_YES;
    for (int i = 0; i < q->nok; i++)
        if (strcmp(q->ok[i], key) == 0) {
            if (!value)
                q->why = "without a value";
            else if (q->seen[i]++)
                q->why = "given twice (it takes one value)";
            else
                return MHD_YES;
            break;
        }
    snprintf(q->bad, sizeof q->bad, "%.100s", key);
    return MHD_YES;
}

/* ---- connections: limits in number and in time ---------------------------- */

/* Move connection k to phase ph (under s->mu), keeping s->npending. */
static void conn_set(srv *s, conn *k, conn_phase ph)
{
    if (k->ph == C_WAIT)
        s->npending--;
    if (ph == C_WAIT)
        s->npending++;
    k->ph = ph;
    k->since = ef_mono_seconds();
}

/* Shut connection k down (under s->mu): libmicrohttpd sees the socket
 * end and closes it; until then its fd is still its own, so this is safe
 * while k is listed. */
static void conn_shut(srv *s, conn *k)
{
    if (k->fd >= 0)
        shutdown(k->fd, SHUT_RDWR);
    conn_set(s, k, C_SHUT);
}

/* Log (at most every 10 s) how many connections were shut and why.
 * Under s->mu. */
static void conn_note(srv *s, double now, int force)
{
    if (!(s->evicted || s->head_late || s->body_late) ||
        (!force && now - s->noted < 10))
        return;
    ef_buf b = {0};
    ef_buf_put(&b, "http: closed");
    const char *sep = " ";
    if (s->evicted) {
        ef_buf_printf(&b, "%s%ld connection%s waiting for a request over "
                      "the limit of %d (--max-waiting)", sep, s->evicted,
                      s->evicted == 1 ? "" : "s", s->cfg.max_pending);
        sep = "; ";
    }
    if (s->head_late) {
        ef_buf_printf(&b, "%s%ld without a whole request head within %d s "
                      "(--header-timeout)", sep, s->head_late,
                      s->cfg.header_timeout);
        sep = "; ";
    }
    if (s->body_late)
        ef_buf_printf(&b, "%s%ld whose body stopped %.0f s past its %d s "
                      "(--request-timeout)", sep, s->body_late,
                      SRV_BODY_GRACE, s->cfg.request_timeout);
    s->evicted = s->head_late = s->body_late = 0;
    s->noted = now;
    if (s->cfg.log)
        s->cfg.log(s->cfg.log_arg, b.s);
    free(b.s);
}

/* libmicrohttpd's connection notices: a new connection waits for its
 * request head; over max_pending such connections, the one that has
 * waited longest is shut (so one local process holding many idle
 * connections cannot keep others out). */
static void on_connection(void *cls, struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    srv *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn *k = ef_calloc(1, sizeof *k);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        k->fd = ci ? ci->connect_fd : -1;
        k->ph = C_ANSWER;
        pthread_mutex_lock(&s->mu);
        k->next = s->conns;
        if (s->conns)
            s->conns->prev = k;
        s->conns = k;
        conn_set(s, k, C_WAIT);
        while (s->npending > s->cfg.max_pending) {
            conn *old = NULL;
            for (conn *p = s->conns; p; p = p->next)
                if (p != k && p->ph == C_WAIT &&
                    (!old || p->since <= old->since))
                    old = p;
            if (!old)
                break;
            conn_shut(s, old);
            s->evicted++;
        }
        conn_note(s, ef_mono_seconds(), 0);
        pthread_mutex_unlock(&s->mu);
        *socket_context = k;
        return;
    }
    conn *k = *socket_context;
    if (!k)
        return;
    pthread_mutex_lock(&s->mu);
    if (k->ph == C_WAIT)
        s->npending--;
    if (s->stopping)
        pthread_cond_broadcast(&s->cv);
    if (k->prev)
        k->prev->next = k->next;
    else
        s->conns = k->next;
    if (k->next)
        k->next->prev = k->prev;
    pthread_mutex_unlock(&s->mu);
    free(k);
    *socket_context = NULL;
}

/* The connection record of c (NULL when libmicrohttpd has none). */
static conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The deadlines, four times a second: a connection that has not sent a
 * whole request head within header_timeout of its start (or of its last
 * answer, kept alive), and a body that stopped arriving past
 * request_timeout + SRV_BODY_GRACE, are shut. */
static void *reaper_main(void *arg)
{
    srv *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        double now = ef_mono_seconds();
        for (conn *k = s->conns; k; k = k->next) {
            if (k->ph == C_WAIT && now - k->since > s->cfg.header_timeout) {
                conn_shut(s, k);
                s->head_late++;
            } else if (k->ph == C_BODY &&
                       now - k->since > s->cfg.request_timeout +
                                            SRV_BODY_GRACE) {
                conn_shut(s, k);
                s->body_late++;
            }
        }
        conn_note(s, now, 0);
        struct timespec ts;
        ef_abstime_in(&ts, 0.25);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    conn_note(s, ef_mono_seconds(), 1);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Count one more request under way for q->who: 0, or -1 (nothing
 * counted) when the token has per_token already. */
static int tok_hold(srv *s, req *q)
{
    pthread_mutex_lock(&s->mu);
    int i = 0;
    while (i < s->ntu && strcmp(s->tu[i].id, q->who.id) != 0)
        i++;
    if (i == s->ntu) {
        s->tu = ef_realloc(s->tu, (size_t)(s->ntu + 1) * sizeof *s->tu);
        memset(&s->tu[i], 0, sizeof s->tu[i]);
        snprintf(s->tu[i].id, sizeof s->tu[i].id, "%s", q->who.id);
        s->ntu++;
    }
    int ok = s->tu[i].n < s->cfg.per_token;
    if (ok) {
        s->tu[i].n++;
        q->holds = 1;
    }
    pthread_mutex_unlock(&s->mu);
    return ok ? 0 : -1;
}

static void tok_release(srv *s, req *q)
{
    if (!q->holds)
        return;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->ntu; i++)
        if (strcmp(s->tu[i].id, q->who.id) == 0) {
            if (--s->tu[i].n == 0)
                s->tu[i] = s->tu[--s->ntu];
            break;
        }
    pthread_mutex_unlock(&s->mu);
    q->holds = 0;
}

/* ---- requests -------------------------------------------------------------- */

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
    int ok = svc_token_check(s->sv, h + 7, who, &e);
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

/* The message of a 404: the path and the API's paths, from the route
 * table, each once. */
static void no_route(const char *url, svc_reply *r)
{
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
    svc_reply_error(r, 404, NULL, msg.s);
    free(msg.s);
}

/* The request head's size (its headers' count and bytes) and how it
 * says its body is framed: its Content-Length and Transfer-Encoding
 * headers (libmicrohttpd reads the first of each and ignores the rest). */
typedef struct headsize {
    int n;
    size_t bytes;
    int ncl, cl_differ; /* Content-Length headers; 1: two values */
    const char *cl;     /* the first one's value */
    int nte;            /* Transfer-Encoding headers */
    int nauth;          /* Authorization headers */
    const char *te;     /* the first one that is not "chunked" */
} headsize;

static enum MHD_Result head_count(void *cls, enum MHD_ValueKind kind,
                                  const char *key, const char *value)
{
    (void)kind;
    headsize *h = cls;
    h->n++;
    h->bytes += strlen(key) + (value ? strlen(value) : 0) + 4;
    const char *v = value ? value : "";
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (h->ncl++ == 0)
            h->cl = v;
        else if (strcmp(h->cl, v) != 0)
            h->cl_differ = 1;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0) {
        h->nauth++;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        h->nte++;
        /* what libmicrohttpd decodes: "chunked", in any case, alone */
        if (strcasecmp(v, "chunked") != 0 && !h->te)
            h->te = v;
    }
    return MHD_YES;
}

/* 1 when Content-Type 'ct' is application/json (any case, parameters
 * such as "; charset=utf-8" after it), else 0. */
static int is_json_ctype(const char *ct)
{
    static const char j[] = "application/json";
    size_t n = sizeof j - 1;
    return strncasecmp(ct, j, n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

/* A limit of /v1/me: the number, or null for none. */
static void me_limit(jw *w, const char *key, int64_t v)
{
    if (v > 0)
        jw_int(w, key, v);
    else
        jw_null(w, key);
}

/* GET /v1/me: who the token is, and the limits it submits under. */
static void reply_me(svc *sv, const store_ident *who, svc_reply *r)
{
    jw w;
    jw_init(&w, 1);
    jw_obj(&w, NULL, &jw_inline_obj);
    int64_t mq, mr;
    int own;
    svc_limits_of(sv, who, &mq, &mr, &own);
    jw_obj(&w, "limits", &jw_inline_obj);
    me_limit(&w, "max_queued", mq);
    jw_str(&w, "max_queued_from", own & 1 ? "token" : "service");
    me_limit(&w, "max_submit_rate", mr);
    jw_str(&w, "max_submit_rate_from", own & 2 ? "token" : "service");
    jw_end(&w);
    jw_str(&w, "name", who->name);
    jw_str(&w, "role", who->op ? "operator" : "user");
    jw_str(&w, "token", who->id);
    if (who->unix_user[0])
        jw_str(&w, "unix_user", who->unix_user);
    else
        jw_null(&w, "unix_user");
    jw_end(&w);
    size_t len;
    char *t = jw_take(&w, &len);
    ef_buf b = {0};
    ef_buf_put(&b, t);
    ef_buf_put(&b, "\n");
    free(t);
    memset(r, 0, sizeof *r);
    r->status = 200;
    r->body = b.s;
    r->len = b.n;
    r->ctype = "application/json";
}

/* Check a request's head, once it has arrived whole: its route and
 * method, its size, its query, its token and the token's requests under
 * way, the job id in its path. 1 when it may go on (q->rt, q->who set),
 * else 0 with the error in *r (and Allow in allow[]). */
static int check_head(srv *s, struct MHD_Connection *c, const char *url,
                      const char *method, req *q, svc_reply *r,
                      char *allow, size_t alen, const char **id,
                      char *node, size_t nlen, char *xid, size_t xlen)
{
    unsigned m = match_path(url, id, node, nlen, xid, xlen);
    if (m & 1u << R_JOB_EXPLAIN)
        *id = xid;
    /* HEAD is GET without the body (libmicrohttpd drops it) */
    const char *as = strcmp(method, "HEAD") == 0 ? "GET" : method;
    int rt = -1;
    for (int i = 0; i < R_COUNT && rt < 0; i++)
        if ((m & 1u << i) && strcmp(routes[i].method, as) == 0)
            rt = i;
    char msg[300];
    pthread_mutex_lock(&s->mu);
    int stopping = s->stopping;
    pthread_mutex_unlock(&s->mu);
    if (stopping) {
        svc_reply_error(r, 503, NULL, stopping_msg);
        q->close = 1;
        return 0;
    }
    size_t ul = strlen(url);
    if (ul > SRV_URL_MAX) {
        snprintf(msg, sizeof msg, "the path is %zu bytes, over the limit of "
                 "%d: %.60s...", ul, SRV_URL_MAX, url);
        svc_reply_error(r, 414, NULL, msg);
        return 0;
    }
    headsize hs;
    memset(&hs, 0, sizeof hs);
    MHD_get_connection_values(c, MHD_HEADER_KIND, head_count, &hs);
    if (hs.n > SRV_HEADERS_MAX || hs.bytes > SRV_HEAD_MAX) {
        snprintf(msg, sizeof msg, "the request has %d headers, %zu bytes "
                 "(the limits: %d headers, %d bytes)", hs.n, hs.bytes,
                 SRV_HEADERS_MAX, SRV_HEAD_MAX);
        svc_reply_error(r, 431, NULL, msg);
        return 0;
    }
    if (q->nul) {
        svc_reply_error(r, 400, NULL, "the path or query holds %00 (a NUL "
                        "byte), which no route, job id or parameter may "
                        "hold");
        return 0;
    }
    /* the body's framing, as the head says it: one reading only (two
     * lengths, or a length and chunks, are read one way here and another
     * way by whatever stands between; a coding libmicrohttpd does not
     * decode would be read until the connection closes) */
    if (hs.nte > 1 || hs.te || (hs.nte && hs.ncl) || hs.cl_differ) {
        if (hs.nte > 1)
            snprintf(msg, sizeof msg, "Transfer-Encoding given %d times "
                     "(expected at most one: chunked)", hs.nte);
        else if (hs.te)
            snprintf(msg, sizeof msg, "Transfer-Encoding: %.60s: not "
                     "supported (expected chunked, or none with a "
                     "Content-Length)", hs.te);
        else if (hs.ncl && hs.nte)
            snprintf(msg, sizeof msg, "Content-Length and "
                     "Transfer-Encoding together (expected one of them)");
        else
            snprintf(msg, sizeof msg, "Content-Length given %d times with "
                     "different values (expected one)", hs.ncl);
        svc_reply_error(r, hs.te && hs.nte == 1 ? 501 : 400, NULL, msg);
        q->close = 1; /* the body cannot be read past */
        return 0;
    }
    /* one identity: with two, this server reads the first and whatever
     * stands between may read the other */
    if (hs.nauth > 1) {
        snprintf(msg, sizeof msg, "Authorization given %d times (expected "
                 "one: Bearer TOKEN)", hs.nauth);
        svc_reply_error(r, 400, NULL, msg);
        return 0;
    }
    if (!m) {
        no_route(url, r);
        return 0;
    }
    if (rt < 0) {
        allow_of(m, allow, alen);
        snprintf(msg, sizeof msg, "method %.20s not allowed here (allowed: "
                 "%s)", method, allow);
        svc_reply_error(r, 405, NULL, msg);
        return 0;
    }
    /* a declared length over the limit is refused before reading: no 100
     * Continue, the body is never read, the connection closes */
    const char *cl = MHD_lookup_connection_value(
        c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (q->too_large || (cl && strtoull(cl, NULL, 10) > SVC_BODY_MAX)) {
        snprintf(msg, sizeof msg, "request body over %d bytes", SVC_BODY_MAX);
        svc_reply_error(r, 413, NULL, msg);
        return 0;
    }
    /* query parameters: only /v1/jobs takes any */
    static const char *const list_keys[] = {"all", "state"};
    _Static_assert(sizeof list_keys / sizeof *list_keys <= QCHECK_MAX,
                   "qcheck.seen");
    qcheck qc;
    memset(&qc, 0, sizeof qc);
    qc.ok = list_keys;
    qc.nok = rt == R_JOBS_GET ? 2 : 0;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_key, &qc);
    if (qc.bad[0] && qc.why) {
        snprintf(msg, sizeof msg, "query parameter \"%s\" %s (expected %s)",
                 qc.bad, qc.why, strcmp(qc.bad, "all") == 0
                                     ? "all=1 or all=0 once"
                                     : "state=STATE once");
        svc_reply_error(r, 400, qc.bad, msg);
        return 0;
    }
    if (qc.bad[0]) {
        snprintf(msg, sizeof msg, "unknown query parameter \"%s\"%s", qc.bad,
                 rt == R_JOBS_GET ? " (expected all or state)" : "");
        svc_reply_error(r, 400, qc.bad, msg);
        return 0;
    }
    if (strcmp(routes[rt].auth, "none") != 0) {
        if (!authenticate(s, c, &q->who, r))
            return 0;
        if (tok_hold(s, q) != 0) {
            snprintf(msg, sizeof msg, "token %s has %d requests under way "
                     "already (the limit per token): wait for their answers",
                     q->who.id, s->cfg.per_token);
            svc_reply_error(r, 429, NULL, msg);
            return 0;
        }
    }
    if (*id) {
        const char *why = job_id_check(*id, strlen(*id));
        if (why) {
            snprintf(msg, sizeof msg, "job id in the path: %s (expected "
                     JOB_ID_RULE ")", why);
            svc_reply_error(r, 400, NULL, msg);
            return 0;
        }
    }
    if (rt == R_JOBS_POST) {
        const char *ct = MHD_lookup_connection_value(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (ct && !is_json_ctype(ct)) {
            snprintf(msg, sizeof msg, "Content-Type: %.100s: expected "
                     "application/json (with curl: -H 'Content-Type: "
                     "application/json')", ct);
            svc_reply_error(r, 415, NULL, msg);
            return 0;
        }
    }
    q->rt = rt;
    return 1;
}

/* Do what route q->rt asks (its head checked, its body read whole). */
static void dispatch(srv *s, struct MHD_Connection *c, req *q,
                     const char *id, const char *node, svc_reply *r,
                     int64_t *pv)
{
    int64_t now = svc_now(s->sv);
    const store_ident *who = &q->who;
    switch ((route_id)q->rt) {
    case R_HEALTH: svc_health(s->sv, now, r); break;
    case R_METRICS: svc_metrics(s->sv, r); break;
    case R_JOBS_POST:
        svc_submit(s->sv, who, q->body.s ? q->body.s : "", q->body.n, now,
                   r);
        if (r->status == 200 || r->status == 201)
            svc_observe_submit(s->sv, ef_mono_seconds() - q->t0);
        break;
    case R_JOBS_GET: {
        const char *all = MHD_lookup_connection_value(
            c, MHD_GET_ARGUMENT_KIND, "all");
        const char *st = MHD_lookup_connection_value(
            c, MHD_GET_ARGUMENT_KIND, "state");
        if (all && strcmp(all, "1") != 0 && strcmp(all, "0") != 0) {
            svc_reply_error(r, 400, "all", "all: expected 1 or 0");
            break;
        }
        svc_list(s->sv, who, all && strcmp(all, "1") == 0, st, now, r);
        break;
    }
    case R_JOB_GET: svc_show(s->sv, who, id, now, r); break;
    case R_JOB_DELETE: svc_cancel(s->sv, who, id, now, r); break;
    case R_JOB_EXPLAIN: svc_explain(s->sv, who, id, r); break;
    case R_PLAN: svc_plan(s->sv, r, pv); break;
    case R_REPLAN: svc_replan(s->sv, who, now, r); break;
    case R_QUEUE: svc_queue(s->sv, who, r); break;
    case R_NODES: svc_nodes(s->sv, r); break;
    case R_DRAIN:
    case R_UNDRAIN:
        svc_node_drain(s->sv, who, node, q->rt == R_DRAIN, q->body.s,
                       q->body.n, now, r);
        break;
    case R_ME: reply_me(s->sv, who, r); break;
    case R_COUNT: break;
    }
}

/* 1 for the routes that may wait for the planning lock (or for a plan
 * being made): answered by a worker. /healthz, /metrics and /v1/me never
 * wait and are answered at once by the polling thread. */
static int parks(int rt)
{
    return rt != R_HEALTH && rt != R_METRICS && rt != R_ME;
}

/* Hand request q of connection c (its route resolved: id, node) to the
 * workers and suspend the connection until its answer is ready (a
 * worker resumes it; on_request then sends it). Returns 1 parked, 0
 * when there are no workers (the caller answers it itself), -1 when the
 * server is stopping (the workers are gone or going: nothing is done,
 * 503). */
static int park(srv *s, struct MHD_Connection *c, req *q, const char *id,
                const char *node)
{
    pthread_mutex_lock(&s->mu);
    if (s->stopping || s->nworkers == 0) {
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->mu);
        return stopping ? -1 : 0;
    }
    q->c = c;
    q->has_id = id != NULL;
    snprintf(q->id, sizeof q->id, "%s", id ? id : "");
    snprintf(q->node, sizeof q->node, "%s", node ? node : "");
    q->parked = 1;
    q->next = NULL;
    /* its body is whole: no body deadline while it waits for its answer */
    conn *k = conn_of(c);
    if (k && k->ph == C_BODY)
        conn_set(s, k, C_ANSWER);
    MHD_suspend_connection(c);
    if (s->work_tail)
        s->work_tail->next = q;
    else
        s->work = q;
    s->work_tail = q;
    pthread_cond_signal(&s->wcv);
    pthread_mutex_unlock(&s->mu);
    return 1;
}

/* A worker: answers parked requests in their order, until the server
 * stops and none is left. */
static void *worker_main(void *arg)
{
    srv *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->work && !s->stopping)
            pthread_cond_wait(&s->wcv, &s->mu);
        req *q = s->work;
        if (!q)
            break; /* stopping, nothing left */
        s->work = q->next;
        if (!s->work)
            s->work_tail = NULL;
        pthread_mutex_unlock(&s->mu);
        memset(&q->done, 0, sizeof q->done);
        q->done_pv = 0;
        dispatch(s, q->c, q, q->has_id ? q->id : NULL, q->node, &q->done,
                 &q->done_pv);
        pthread_mutex_lock(&s->mu);
        q->parked = 2;
        MHD_resume_connection(q->c);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Send answer r (freed) of request q, and log it. */
static enum MHD_Result answered(srv *s, struct MHD_Connection *c,
                                const char *url, const char *method, req *q,
                                svc_reply *r, const char *allow, int64_t pv)
{
    q->answered = 1;
    srv_log(s, "%s %.300s %d %s %.1f ms%s", method, url, r->status,
            q->who.name[0] ? q->who.name : "-",
            (ef_mono_seconds() - q->t0) * 1e3,
            q->late ? " (slow client)" : "");
    enum MHD_Result ok = send_reply(c, r, allow, pv, q->close);
    svc_reply_free(r);
    return ok;
}

/* Answer the request: its head alone ('head': the first call, a route
 * that takes no body, or an error in the head), or with its body read
 * whole. The answer closes the connection when a body is still coming. */
static enum MHD_Result answer(srv *s, struct MHD_Connection *c,
                              const char *url, const char *method, req *q,
                              int head)
{
    svc_reply r;
    memset(&r, 0, sizeof r);
    const char *id = NULL;
    char node[128], xid[512], allow[64] = "";
    int64_t pv = 0;
    if (head && !check_head(s, c, url, method, q, &r, allow, sizeof allow,
                            &id, node, sizeof node, xid, sizeof xid))
        goto send;
    if (!head && (q->late ||
                  ef_mono_seconds() - q->t0 > s->cfg.request_timeout)) {
        char msg[128];
        snprintf(msg, sizeof msg, "the request did not arrive within %d s "
                 "(--request-timeout)", s->cfg.request_timeout);
        svc_reply_error(&r, 408, NULL, msg);
        q->late = 1;
        goto send;
    }
    if (!head && q->too_large) { /* no length declared: found reading */
        char msg[128];
        snprintf(msg, sizeof msg, "request body over %d bytes", SVC_BODY_MAX);
        svc_reply_error(&r, 413, NULL, msg);
        goto send;
    }
    if (!head) {
        match_path(url, &id, node, sizeof node, xid, sizeof xid);
        if (q->rt == R_JOB_EXPLAIN)
            id = xid;
    }
    if (head && (q->rt == R_JOBS_POST || q->rt == R_DRAIN))
        return MHD_YES; /* its body comes next (a drain's: its reason) */
    int parked = parks(q->rt) ? park(s, c, q, id, node) : 0;
    if (parked > 0)
        return MHD_YES; /* a worker answers it */
    if (parked < 0) {
        svc_reply_error(&r, 503, NULL, stopping_msg);
        q->close = 1;
        goto send;
    }
    dispatch(s, c, q, id, node, &r, &pv);
send:
    return answered(s, c, url, method, q, &r, allow[0] ? allow : NULL, pv);
}

/* Take a piece of the body. Past the request deadline the rest is read
 * and dropped, and the request answered 408 once it is whole
 * (libmicrohttpd lets an answer be queued only before the body or after
 * it); a body that stops coming is closed by the reaper. */
static enum MHD_Result take_body(srv *s, req *q, const char *data,
                                 size_t *size)
{
    if (!q->late && ef_mono_seconds() - q->t0 > s->cfg.request_timeout) {
        q->late = 1;
        free(q->body.s);
        memset(&q->body, 0, sizeof q->body);
    }
    if (!q->too_large && !q->late) {
        if (q->body.n + *size > SVC_BODY_MAX) {
            q->too_large = 1;
            free(q->body.s);
            memset(&q->body, 0, sizeof q->body);
        } else {
            ef_buf_grow(&q->body, *size);
            memcpy(q->body.s + q->body.n, data, *size);
            q->body.n += *size;
            q->body.s[q->body.n] = '\0';
        }
    }
    *size = 0;
    return MHD_YES;
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
    int nul = q == (void *)&uri_nul_mark;
    if (nul)
        q = NULL;
    if (!q) {
        /* the head is here: the connection is no longer waiting */
        conn *k = conn_of(c);
        pthread_mutex_lock(&s->mu);
        int shut = k && k->ph == C_SHUT;
        if (k && !shut)
            conn_set(s, k, C_ANSWER);
        pthread_mutex_unlock(&s->mu);
        if (shut)
            return MHD_NO;
        q = ef_calloc(1, sizeof *q);
        q->t0 = ef_mono_seconds();
        q->rt = -1;
        q->nul = nul;
        *con_cls = q;
        enum MHD_Result ok = answer(s, c, url, method, q, 1);
        if (!q->answered && k) {
            pthread_mutex_lock(&s->mu);
            if (k->ph == C_ANSWER)
                conn_set(s, k, C_BODY);
            pthread_mutex_unlock(&s->mu);
        }
        return ok;
    }
    if (q->parked == 2) { /* resumed: a worker's answer */
        q->parked = 0;
        return answered(s, c, url, method, q, &q->done, NULL, q->done_pv);
    }
    if (q->answered || q->parked) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size)
        return take_body(s, q, upload_data, upload_data_size);
    return answer(s, c, url, method, q, 0);
}

/* A request is over (answered, or its connection gone): its token's
 * count goes down, and a connection kept alive waits for the next head
 * (the header deadline again). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    srv *s = cls;
    req *q = *con_cls;
    if (q == (void *)&uri_nul_mark) /* its head never came whole */
        q = NULL;
    if (q) {
        tok_release(s, q);
        if (q->parked == 2)
            svc_reply_free(&q->done);
        free(q->body.s);
        free(q);
    }
    *con_cls = NULL;
    conn *k = conn_of(c);
    if (k) {
        pthread_mutex_lock(&s->mu);
        if (k->ph != C_SHUT)
            conn_set(s, k, C_WAIT);
        if (s->stopping) /* srv_stop waits for the requests under way */
            pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
}

/* libmicrohttpd's first look at a request: its URI as sent, before it is
 * decoded. A %00 there decodes to a NUL, which would end the path or a
 * query value early (GET /v1/jobs/a1%00x would name a1): marked here
 * (the value becomes the request's *con_cls), refused once the head is
 * whole (check_head). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    for (const char *p = uri ? strchr(uri, '%') : NULL; p;
         p = strchr(p + 1, '%'))
        if (p[1] == '0' && p[2] == '0')
            return &uri_nul_mark;
    return NULL;
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
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->wcv, NULL);
    if (s->cfg.header_timeout <= 0)
        s->cfg.header_timeout = 10;
    if (s->cfg.max_pending <= 0)
        s->cfg.max_pending = 128;
    if (s->cfg.per_token <= 0)
        s->cfg.per_token = 8;
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
                     MHD_ALLOW_SUSPEND_RESUME |
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
        /* the limits that matter are max_pending (connections without a
         * request, the oldest shut first) and per_token: these only keep
         * the daemon inside its descriptors */
        MHD_OPTION_CONNECTION_LIMIT, SRV_CONN_LIMIT,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, SRV_CONN_LIMIT,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, SRV_CONN_MEMORY,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
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
    if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
        MHD_stop_daemon(s->d);
        s->d = NULL;
        ef_fail(e, EF_E_INTERNAL, "cannot start the HTTP deadline thread");
        goto fail;
    }
    s->reaper_on = 1;
    for (int k = 0; k < SRV_WORKERS; k++) {
        pthread_mutex_lock(&s->mu);
        int ok = pthread_create(&s->worker[k], NULL, worker_main, s) == 0;
        if (ok)
            s->nworkers++;
        pthread_mutex_unlock(&s->mu);
        if (!ok)
            break; /* fewer workers (none: answered by the polling threads) */
    }
    *out = s;
    return EF_OK;
fail:
    srv_free(s);
    return EF_ERR;
}

int srv_port(const srv *s) { return s->port; }

/* The connections with a request under way: its body arriving, or its
 * answer being made or sent. Under s->mu. */
static int conns_busy(const srv *s)
{
    int n = 0;
    for (const conn *k = s->conns; k; k = k->next)
        n += k->ph == C_BODY || k->ph == C_ANSWER;
    return n;
}

void srv_stop(srv *s)
{
    if (!s)
        return;
    /* the workers answer what is parked, then stop (nothing is parked
     * once stopping is set: a new request, or a body that comes whole
     * now, is answered 503 with nothing done) */
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    int busy = conns_busy(s);
    pthread_cond_broadcast(&s->cv);
    pthread_cond_broadcast(&s->wcv);
    pthread_mutex_unlock(&s->mu);
    srv_log(s, "http: stopping: %d request%s under way (answered, for at "
            "most %.0f s), new ones refused (503)", busy,
            busy == 1 ? "" : "s", SRV_DRAIN_MAX);
    for (int k = 0; k < s->nworkers; k++)
        pthread_join(s->worker[k], NULL);
    if (s->reaper_on)
        pthread_join(s->reaper, NULL);
    /* the answers queued are sent before the connections close (a body
     * still arriving may come whole and get its 503); a client that reads
     * slowly holds this at most SRV_DRAIN_MAX */
    pthread_mutex_lock(&s->mu);
    double t0 = ef_mono_seconds();
    while (s->d && conns_busy(s) > 0 &&
           ef_mono_seconds() - t0 < SRV_DRAIN_MAX) {
        struct timespec ts;
        ef_abstime_in(&ts, 0.05);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    if (s->d)
        MHD_stop_daemon(s->d);
    srv_free(s);
}
