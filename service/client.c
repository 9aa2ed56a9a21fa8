/* client.c: the CLI's side of efplan serve over libcurl (client.h). */
#include "service/client.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "common/jsonin.h"
#include "common/htime.h"
#include "common/util.h"
#include "service/token.h"

static int g_curl_up;

int cl_init(ef_err *e)
{
    if (g_curl_up)
        return EF_OK;
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK)
        return ef_fail(e, EF_E_INTERNAL, "libcurl cannot start: %s",
                       curl_easy_strerror(rc));
    g_curl_up = 1;
    return EF_OK;
}

void cl_cleanup(void)
{
    if (!g_curl_up)
        return;
    curl_global_cleanup();
    g_curl_up = 0;
}

/* ---- where and who ------------------------------------------------------ */

int cl_check_url(const char *url, const char *what, ef_err *e)
{
    char q[128];
    size_t skip = 0;
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    if (!skip)
        return ef_fail(e, EF_E_USAGE, "%s: \"%s\" is not an http:// or "
                       "https:// URL (e.g. http://127.0.0.1:8080)", what,
                       ef_quote(url, q, sizeof q));
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#')
            return ef_fail(e, EF_E_USAGE, "%s: \"%s\": a server URL has no "
                           "space, control character, query or fragment",
                           what, ef_quote(url, q, sizeof q));
    const char *host = url + skip;
    if (*host == '\0' || *host == '/' || *host == ':')
        return ef_fail(e, EF_E_USAGE, "%s: \"%s\" names no host", what,
                       ef_quote(url, q, sizeof q));
    return EF_OK;
}

int cl_server_resolve(const char *arg, const char **url, ef_err *e)
{
    const char *what = "--server";
    const char *u = arg;
    if (!u) {
        u = getenv("EFPLAN_SERVER");
        what = "EFPLAN_SERVER";
        if (!u || !u[0])
            return ef_fail(e, EF_E_USAGE, "no server: give --server URL or "
                           "set EFPLAN_SERVER (e.g. http://127.0.0.1:8080)");
    }
    if (cl_check_url(u, what, e) != EF_OK)
        return EF_ERR;
    *url = u;
    return EF_OK;
}

/* The token in s[0..n), trimmed, into tok: 0, or -1 when it is empty or
 * too long or holds a byte that is not printable ASCII. 'empty' is set
 * when it was only blanks. */
static int take_token(const char *s, size_t n, char *tok, size_t cap,
                      int *empty)
{
    while (n && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    *empty = n == 0;
    if (n == 0 || n > TOKEN_TEXT_MAX || n >= cap)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
            return -1;
    memcpy(tok, s, n);
    tok[n] = '\0';
    return 0;
}

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    return "not a regular file";
}

static int token_from_file(const char *path, char *tok, size_t cap,
                           ef_err *e)
{
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return ef_fail(e, EF_E_INPUT, "token file %s: %s", path,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return ef_fail(e, EF_E_INPUT, "token file %s: %s", path,
                       strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ef_fail(e, EF_E_INPUT, "token file %s: is %s (expected a "
                       "regular file)", path, file_kind(st.st_mode));
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return ef_fail(e, EF_E_INPUT, "token file %s: belongs to uid %ld, "
                       "not to you (uid %ld): a token file must be your own "
                       "(copy the token into a file of yours, chmod 600)",
                       path, (long)st.st_uid, (long)geteuid());
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        return ef_fail(e, EF_E_INPUT, "token file %s: mode %04o is too "
                       "open: group or others may use it (a token file "
                       "must be private: chmod 600 %s)", path,
                       (unsigned)(st.st_mode & 07777), path);
    }
    char buf[4 * TOKEN_TEXT_MAX];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, buf + n, sizeof buf - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int err = errno;
            close(fd);
            return ef_fail(e, EF_E_INPUT, "token file %s: %s", path,
                           strerror(err));
        }
        if (k == 0)
            break;
        n += (size_t)k;
        if (memchr(buf, '\n', n) || n == sizeof buf)
            break;
    }
    close(fd);
    const char *nl = memchr(buf, '\n', n);
    size_t line = nl ? (size_t)(nl - buf) : n;
    int empty;
    if (take_token(buf, line, tok, cap, &empty) != 0) {
        if (empty)
            return ef_fail(e, EF_E_INPUT, "token file %s: %s (expected the "
                           "token on its first line)", path,
                           n == 0 ? "is empty" : "the first line is empty");
        return ef_fail(e, EF_E_INPUT, "token file %s: the first line is "
                       "not a token (expected efp_..., as 'efplan token "
                       "add' prints it)", path);
    }
    return EF_OK;
}

int cl_token_resolve(const char *token_file, char *tok, size_t cap,
                     ef_err *e)
{
    if (token_file)
        return token_from_file(token_file, tok, cap, e);
    const char *env = getenv("EFPLAN_TOKEN");
    if (!env || !env[0])
        return ef_fail(e, EF_E_USAGE, "no token: give --token-file FILE (the "
                       "token on its first line, mode 0600) or set "
                       "EFPLAN_TOKEN");
    int empty;
    if (take_token(env, strlen(env), tok, cap, &empty) != 0)
        return ef_fail(e, EF_E_USAGE, "EFPLAN_TOKEN is %s (expected "
                       "efp_..., as 'efplan token add' prints it)",
                       empty ? "blank" : "not a token");
    return EF_OK;
}

/* ---- requests ----------------------------------------------------------- */

typedef struct sink {
    ef_buf b;
    int over;
} sink;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    sink *s = arg;
    size_t k = size * n;
    if (s->b.n + k > (size_t)CL_BODY_MAX) {
        s->over = 1;
        return 0; /* curl stops: CURLE_WRITE_ERROR */
    }
    ef_buf_grow(&s->b, k);
    memcpy(s->b.s + s->b.n, p, k);
    s->b.n += k;
    s->b.s[s->b.n] = '\0';
    return k;
}

/* server + path, one '/' between them. Heap. */
static char *join_url(const char *server, const char *path)
{
    size_t ls = strlen(server);
    while (ls > 0 && server[ls - 1] == '/')
        ls--;
    size_t lp = strlen(path);
    char *u = ef_malloc(ls + lp + 2);
    memcpy(u, server, ls);
    size_t o = ls;
    if (path[0] != '/')
        u[o++] = '/';
    memcpy(u + o, path, lp + 1);
    return u;
}

static int transport_error(const char *method, const char *server,
                           const char *url, CURLcode rc, const char *why,
                           const sink *s, ef_err *e)
{
    const char *words = why[0] ? why : curl_easy_strerror(rc);
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return ef_fail(e, EF_E_INTERNAL, "the server is not reachable at %s "
                       "(%s %s: %s)", server, method, url, words);
    case CURLE_OPERATION_TIMEDOUT:
        return ef_fail(e, EF_E_INTERNAL, "%s %s: no answer within the time "
                       "allowed (%s)", method, url, words);
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        return ef_fail(e, EF_E_USAGE, "%s %s: the URL is refused (%s)",
                       method, url, words);
    case CURLE_WRITE_ERROR:
        if (s->over)
            return ef_fail(e, EF_E_INTERNAL, "%s %s: the answer is larger "
                           "than %ld MiB", method, url, CL_BODY_MAX >> 20);
        break;
    default:
        break;
    }
    return ef_fail(e, EF_E_INTERNAL, "%s %s: %s", method, url, words);
}

int cl_request(const cl_conn *c, const char *method, const char *path,
               const char *body, size_t len, cl_resp *r, ef_err *e)
{
    memset(r, 0, sizeof *r);
    if (cl_check_url(c->server, "server", e) != EF_OK)
        return EF_ERR;
    if (!g_curl_up && cl_init(e) != EF_OK)
        return EF_ERR;
    CURL *h = curl_easy_init();
    if (!h)
        return ef_fail(e, EF_E_INTERNAL, "libcurl: cannot make a handle");
    char *url = join_url(c->server, path);
    long ct = c->connect_timeout_s > 0 ? c->connect_timeout_s
                                       : CL_CONNECT_TIMEOUT_S;
    long tt = c->timeout_s > 0 ? c->timeout_s : CL_TIMEOUT_S;
    struct curl_slist *hdr = NULL;
    char *auth = NULL;
    if (c->token) {
        size_t n = strlen(c->token) + 32;
        auth = ef_malloc(n);
        snprintf(auth, n, "Authorization: Bearer %s", c->token);
        hdr = curl_slist_append(hdr, auth);
    }
    hdr = curl_slist_append(hdr, "Accept: application/json");
    if (body) {
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        hdr = curl_slist_append(hdr, "Expect:");
    }
    sink s = {{0}, 0};
    char why[CURL_ERROR_SIZE];
    why[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    if (c->cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, ct);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, tt);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, why);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "efplan/" EFPLAN_VERSION);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    CURLcode rc = curl_easy_perform(h);
    int ret = EF_OK;
    if (rc != CURLE_OK) {
        ret = transport_error(method, c->server, url, rc, why, &s, e);
        free(s.b.s);
    } else {
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        r->status = status;
        if (!s.b.s) {
            s.b.s = ef_malloc(1);
            s.b.s[0] = '\0';
        }
        r->body = s.b.s;
        r->len = s.b.n;
    }
    curl_slist_free_all(hdr);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    curl_easy_cleanup(h);
    free(url);
    return ret;
}

void cl_resp_free(cl_resp *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

char *cl_escape(const char *s)
{
    CURL *h = curl_easy_init();
    if (!h)
        ef_panic("libcurl: cannot make a handle");
    char *x = curl_easy_escape(h, s, (int)strlen(s));
    if (!x)
        ef_panic("libcurl: out of memory");
    char *out = ef_strdup(x);
    curl_free(x);
    curl_easy_cleanup(h);
    return out;
}

char *cl_job_path(const char *id, ef_err *e)
{
    if (!id[0]) {
        ef_fail(e, EF_E_USAGE, "a job id is not empty");
        return NULL;
    }
    char *x = cl_escape(id);
    size_t n = strlen(x) + 16;
    char *p = ef_malloc(n);
    snprintf(p, n, "/v1/jobs/%s", x);
    free(x);
    return p;
}

/* ---- reading answers ---------------------------------------------------- */

/* Append 's' (text from the server: a message, an id) with control
 * characters and bytes that are not UTF-8 as \xNN, so that it prints as
 * one line and cannot drive the terminal; quotes stay as they are (they
 * are part of the server's prose). Returns the characters written
 * (display width for the table). */
static size_t put_safe(ef_buf *b, const char *s)
{
    size_t w = 0, n = strlen(s);
    while (n) {
        uint32_t cp;
        int k = ef_utf8_char(s, n, &cp);
        if (k == 0 || ef_is_control(cp)) {
            ef_buf_printf(b, "\\x%02X", (unsigned char)s[0]);
            w += 4;
            s++, n--;
            continue;
        }
        ef_buf_grow(b, (size_t)k);
        memcpy(b->s + b->n, s, (size_t)k);
        b->n += (size_t)k;
        b->s[b->n] = '\0';
        w++;
        s += k, n -= (size_t)k;
    }
    return w;
}

static json_t *parse_answer(const char *server, const char *body, size_t len,
                            ef_err *e)
{
    json_error_t je;
    json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        ef_fail(e, EF_E_INTERNAL, "%s: the answer is not JSON (line %d: "
                "%s)", server, je.line, je.text);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        ef_fail(e, EF_E_INTERNAL, "%s: the answer is not a JSON object",
                server);
        return NULL;
    }
    return v;
}

/* Member 'key' of 'o' as text ("" when absent or not a string). */
static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Member 'key' as an integer, 'dflt' when absent, null or not one. */
static int64_t int_of(const json_t *o, const char *key, int64_t dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

int cl_status_error(const char *server, const cl_resp *r, ef_err *e)
{
    ef_errkind kind = r->status >= 400 && r->status < 500 ? EF_E_INPUT
                                                          : EF_E_INTERNAL;
    json_t *v = r->body ? json_loadb(r->body, r->len, 0, NULL) : NULL;
    const json_t *err = json_object_get(v, "error");
    const char *msg = json_string_value(json_object_get(err, "message"));
    const char *path = json_string_value(json_object_get(err, "path"));
    ef_buf b = {0};
    if (msg && msg[0]) {
        if (path && path[0] && !strstr(msg, path)) {
            put_safe(&b, path);
            ef_buf_put(&b, ": ");
        }
        put_safe(&b, msg);
    } else if (r->body && r->len) {
        size_t n = strcspn(r->body, "\r\n");
        char *line = ef_strndup(r->body, n);
        char q[128];
        ef_buf_printf(&b, "\"%s\"", ef_quote(line, q, sizeof q));
        free(line);
    } else {
        ef_buf_put(&b, "(no message)");
    }
    ef_fail(e, kind, "%s: HTTP %ld: %s", server, r->status, b.s);
    free(b.s);
    json_decref(v);
    return EF_ERR;
}

/* cl_set_zone's zone. */
static ef_ht_zone fmt_zone = EF_HT_UTC;

void cl_set_zone(ef_ht_zone z)
{
    fmt_zone = z;
}

const char *cl_fmt_time(int64_t t, char *dst, size_t len)
{
    if (t < 0) {
        snprintf(dst, len, "-");
        return dst;
    }
    return ef_ht_fmt(t, fmt_zone, dst, len);
}

/* 1 when member 'k' of an event's detail is a time (Unix seconds): the
 * names the service writes for times. */
static int time_key(const char *k)
{
    static const char *const suffix[] = {"_end", "_time", "deadline", "at",
                                         "since", "started", "ended",
                                         "finish"};
    size_t n = strlen(k);
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        size_t m = strlen(suffix[i]);
        if (n >= m && strcmp(k + n - m, suffix[i]) == 0 &&
            (n == m || k[n - m - 1] == '_' || suffix[i][0] == '_'))
            return 1;
    }
    return 0;
}

/* An event's detail as words: "decision=admitted planned_end=2026-...",
 * members in key order, null ones left out, times by cl_fmt_time. */
static void put_detail(ef_buf *out, const json_t *d)
{
    const char **keys = ef_calloc(json_object_size(d) + 1, sizeof *keys);
    size_t n = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)d, k, v) keys[n++] = k;
    qsort(keys, n, sizeof *keys, ef_cmp_strp);
    for (size_t i = 0; i < n; i++) {
        v = json_object_get(d, keys[i]);
        if (json_is_null(v))
            continue;
        ef_buf_put(out, "  ");
        put_safe(out, keys[i]);
        ef_buf_put(out, "=");
        char t[64];
        if (json_is_integer(v) && time_key(keys[i])) {
            ef_buf_put(out, cl_fmt_time(json_integer_value(v), t, sizeof t));
        } else if (json_is_string(v)) {
            const char *s = json_string_value(v);
            int q = s[0] == '\0' || strpbrk(s, " \t\"") != NULL;
            ef_buf_put(out, q ? "\"" : "");
            put_safe(out, s);
            ef_buf_put(out, q ? "\"" : "");
        } else {
            char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
                                        JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
            put_safe(out, s ? s : "?");
            free(s);
        }
    }
    free(keys);
}

/* Slack of a job planned to end at 'end' with deadline 'dl', as text. */
static void put_slack(ef_buf *b, int64_t end, int64_t dl)
{
    char d[64];
    if (end <= dl)
        ef_buf_printf(b, "slack %s", ef_ht_dur(dl - end, d, sizeof d));
    else
        ef_buf_printf(b, "late by %s",
                      ef_ht_dur(end - dl, d, sizeof d));
}

/* The table of cl_fmt_jobs: every cell's text in one buffer, each
 * ended by its NUL (off[] where it starts), and its width. */
#define NCOL 8
static const char *const col_name[NCOL] = {
    "ID", "OWNER", "STATE", "DECISION", "GPUS", "DEADLINE", "PLANNED END",
    "RISK"};

typedef struct table {
    ef_buf text;
    size_t *off, *wid;
    size_t width[NCOL];
    size_t ncell;
} table;

static void cell(table *t, const char *s)
{
    size_t k = t->ncell++;
    t->off[k] = t->text.n;
    t->wid[k] = put_safe(&t->text, s);
    ef_buf_grow(&t->text, 1);
    t->text.s[t->text.n++] = '\0';
    if (t->wid[k] > t->width[k % NCOL])
        t->width[k % NCOL] = t->wid[k];
}

int cl_fmt_jobs(const char *server, const char *body, size_t len,
                ef_buf *out, ef_err *e)
{
    json_t *v = parse_answer(server, body, len, e);
    if (!v)
        return EF_ERR;
    const json_t *jobs = json_object_get(v, "jobs");
    if (!json_is_array(jobs)) {
        json_decref(v);
        return ef_fail(e, EF_E_INTERNAL, "%s: the answer has no \"jobs\" "
                       "array", server);
    }
    size_t n = json_array_size(jobs);
    if (n == 0) {
        ef_buf_put(out, "no jobs\n");
        json_decref(v);
        return EF_OK;
    }
    table t = {{0}, NULL, NULL, {0}, 0};
    t.off = ef_calloc((n + 1) * NCOL, sizeof *t.off);
    t.wid = ef_calloc((n + 1) * NCOL, sizeof *t.wid);
    for (int k = 0; k < NCOL; k++)
        cell(&t, col_name[k]);
    for (size_t i = 0; i < n; i++) {
        const json_t *j = json_array_get(jobs, i);
        char tm[64];
        cell(&t, str_of(j, "id"));
        cell(&t, str_of(j, "owner"));
        cell(&t, str_of(j, "state"));
        cell(&t, str_of(j, "decision"));
        snprintf(tm, sizeof tm, "%" PRId64, int_of(j, "gpus", 0));
        cell(&t, tm);
        cell(&t, cl_fmt_time(int_of(j, "deadline", -1), tm, sizeof tm));
        cell(&t, cl_fmt_time(int_of(j, "planned_end", -1), tm,
                            sizeof tm));
        cell(&t, json_is_true(json_object_get(j, "at_risk")) ? "at-risk"
                                                             : "");
    }
    for (size_t i = 0; i < t.ncell; i++) {
        int k = (int)(i % NCOL);
        const char *c = t.text.s + t.off[i];
        int pad = (int)(t.width[k] - t.wid[i]);
        if (k == 0)
            ef_buf_put(out, "");
        if (k == 4) /* numbers to the right */
            ef_buf_printf(out, "%*s%s", pad, "", c);
        else if (k + 1 < NCOL)
            ef_buf_printf(out, "%s%*s", c, pad, "");
        else
            ef_buf_put(out, c);
        if (k + 1 < NCOL) {
            ef_buf_put(out, "  ");
            continue;
        }
        while (out->n > 0 && out->s[out->n - 1] == ' ')
            out->n--; /* no blanks at the end of a line */
        out->s[out->n] = '\0';
        ef_buf_put(out, "\n");
    }
    free(t.text.s);
    free(t.off);
    free(t.wid);
    json_decref(v);
    return EF_OK;
}

/* "node 0: 0,1,2,3; node 1: 0,1" for a placement array. */
static void put_placement(ef_buf *b, const json_t *pl)
{
    size_t i;
    const json_t *g;
    for (i = 0; i < json_array_size(pl); i++) {
        const json_t *p = json_array_get(pl, i);
        const json_t *node = json_object_get(p, "node");
        if (i)
            ef_buf_put(b, "; ");
        ef_buf_put(b, "node ");
        if (json_is_integer(node))
            ef_buf_printf(b, "%" PRId64, (int64_t)json_integer_value(node));
        else
            put_safe(b, json_is_string(node) ? json_string_value(node)
                                             : "?");
        ef_buf_put(b, ": ");
        size_t k;
        json_array_foreach(json_object_get(p, "gpus"), k, g)
            ef_buf_printf(b, "%s%" PRId64, k ? "," : "",
                          (int64_t)json_integer_value(g));
    }
}

int cl_fmt_job(const char *server, const char *body, size_t len,
               ef_buf *out, ef_err *e)
{
    json_t *j = parse_answer(server, body, len, e);
    if (!j)
        return EF_ERR;
    if (!json_is_string(json_object_get(j, "id"))) {
        json_decref(j);
        return ef_fail(e, EF_E_INTERNAL, "%s: the answer has no job id",
                       server);
    }
    char t[64];
    ef_buf_put(out, "job ");
    put_safe(out, str_of(j, "id"));
    ef_buf_put(out, " (owner ");
    put_safe(out, str_of(j, "owner"));
    ef_buf_put(out, ")\n  model        ");
    put_safe(out, str_of(j, "model"));
    ef_buf_printf(out, ", batch size %" PRId64 "\n",
                  int_of(j, "batch_size", 0));
    ef_buf_put(out, "  decision     ");
    put_safe(out, str_of(j, "decision"));
    ef_buf_put(out, "\n  state        ");
    put_safe(out, str_of(j, "state"));
    int64_t done = int_of(j, "iterations_done", 0);
    int64_t iters = int_of(j, "iterations", 0);
    ef_buf_printf(out, "\n  progress     %" PRId64 "/%" PRId64
                  " iterations", done, iters);
    if (iters > 0)
        ef_buf_printf(out, " (%d%%)",
                      (int)(done >= iters ? 100 : done * 100 / iters));
    ef_buf_printf(out, "\n  gpus         %" PRId64, int_of(j, "gpus", 0));
    const json_t *pl = json_object_get(j, "placement");
    if (json_array_size(pl) > 0) {
        ef_buf_put(out, " (");
        put_placement(out, pl);
        ef_buf_put(out, ")");
    }
    int64_t dl = int_of(j, "deadline", -1);
    int64_t end = int_of(j, "planned_end", -1);
    ef_buf_printf(out, "\n  deadline     %s", dl < 0 ? "none (best-effort)"
                  : cl_fmt_time(dl, t, sizeof t));
    ef_buf_printf(out, "\n  planned end  %s", end < 0 ? "not planned"
                  : cl_fmt_time(end, t, sizeof t));
    if (dl >= 0 && end >= 0) {
        ef_buf_put(out, " (");
        put_slack(out, end, dl);
        ef_buf_put(out, ")");
    }
    int64_t efd = int_of(j, "earliest_feasible_deadline", -1);
    if (efd >= 0)
        ef_buf_printf(out, "\n  earliest deadline we can guarantee: %s",
                      cl_fmt_time(efd, t, sizeof t));
    const char *reason = json_string_value(json_object_get(j, "reason"));
    const char *risk = json_string_value(json_object_get(j, "risk"));
    if (risk && risk[0])
        reason = risk;
    if (json_is_true(json_object_get(j, "at_risk"))) {
        ef_buf_put(out, "\n  at risk      yes");
        if (reason && reason[0]) {
            ef_buf_put(out, ": ");
            put_safe(out, reason);
        }
    } else if (reason && reason[0]) {
        ef_buf_put(out, "\n  reason       ");
        put_safe(out, reason);
    }
    int64_t sub = int_of(j, "submitted", int_of(j, "submit_time", -1));
    ef_buf_printf(out, "\n  submitted    %s\n", cl_fmt_time(sub, t,
                                                           sizeof t));
    const json_t *hist = json_object_get(j, "history");
    if (json_array_size(hist) > 0) {
        ef_buf_put(out, "  history\n");
        size_t i;
        const json_t *h;
        json_array_foreach(hist, i, h) {
            ef_buf_printf(out, "    %s  ",
                          cl_fmt_time(int_of(h, "at", -1), t, sizeof t));
            put_safe(out, str_of(h, "kind"));
            const json_t *d = json_object_get(h, "detail");
            if (json_object_size(d) > 0)
                put_detail(out, d);
            ef_buf_put(out, "\n");
        }
    }
    /* the closed loop's attempts: when, where, how each ended */
    const json_t *att = json_object_get(j, "attempts");
    if (json_array_size(att) > 0) {
        ef_buf_put(out, "  attempts\n");
        size_t i;
        const json_t *a;
        json_array_foreach(att, i, a) {
            ef_buf_printf(out, "    %-3" PRId64 " %s", int_of(a, "attempt", 0),
                          cl_fmt_time(int_of(a, "started", -1), t,
                                     sizeof t));
            int64_t ended = int_of(a, "ended", -1);
            ef_buf_printf(out, " - %-20s  ", ended < 0 ? "(runs)"
                          : cl_fmt_time(ended, t, sizeof t));
            const json_t *apl = json_object_get(a, "placement");
            if (json_array_size(apl) > 0)
                put_placement(out, apl);
            else
                ef_buf_put(out, "(nowhere)");
            const char *why = str_of(a, "why");
            const char *res = str_of(a, "result");
            ef_buf_put(out, "  ");
            put_safe(out, why[0] ? why : res[0] ? res : str_of(a, "state"));
            ef_buf_put(out, "\n");
        }
    }
    json_decref(j);
    return EF_OK;
}

int cl_fmt_cancel(const char *server, const char *body, size_t len,
                  ef_buf *out, ef_err *e)
{
    json_t *j = parse_answer(server, body, len, e);
    if (!j)
        return EF_ERR;
    ef_buf_put(out, "cancelled: job ");
    put_safe(out, str_of(j, "id"));
    if (json_is_true(json_object_get(j, "reservation_freed")))
        ef_buf_put(out, "; its reservation is freed");
    else
        ef_buf_put(out, "; it held no reservation");
    int64_t pv = int_of(j, "plan_version", -1);
    if (pv >= 0)
        ef_buf_printf(out, " (plan version %" PRId64 ")", pv);
    ef_buf_put(out, "\n");
    json_decref(j);
    return EF_OK;
}

int cl_fmt_nodes(const char *server, const char *body, size_t len,
                 ef_buf *out, ef_err *e)
{
    json_t *j = parse_answer(server, body, len, e);
    if (!j)
        return EF_ERR;
    char t[64];
    size_t i, w = 4; /* the name column's width */
    const json_t *n;
    json_array_foreach(json_object_get(j, "nodes"), i, n) {
        size_t l = strlen(str_of(n, "name"));
        w = l > w && l <= 40 ? l : w;
    }
    ef_buf_printf(out, "node  %-*s  state    since                 why\n",
                  (int)w, "name");
    json_array_foreach(json_object_get(j, "nodes"), i, n) {
        int64_t since = int_of(n, "since", -1);
        ef_buf_printf(out, "%-5" PRId64 " ", int_of(n, "node", -1));
        size_t at = out->n;
        put_safe(out, str_of(n, "name")[0] ? str_of(n, "name") : "-");
        while (out->n < at + w + 2)
            ef_buf_put(out, " ");
        at = out->n;
        put_safe(out, str_of(n, "state"));
        while (out->n < at + 8)
            ef_buf_put(out, " ");
        ef_buf_printf(out, " %-21s ", since < 0 ? "-"
                      : cl_fmt_time(since, t, sizeof t));
        const char *why = json_string_value(json_object_get(n, "why"));
        put_safe(out, why ? why : "-");
        ef_buf_put(out, "\n");
    }
    ef_buf_printf(out, "%" PRId64 " usable node%s\n", int_of(j, "plan_nodes", 0),
                  int_of(j, "plan_nodes", 0) == 1 ? "" : "s");
    json_decref(j);
    return EF_OK;
}

int cl_fmt_replan(const char *server, const char *body, size_t len,
                  ef_buf *out, ef_err *e)
{
    json_t *j = parse_answer(server, body, len, e);
    if (!j)
        return EF_ERR;
    ef_buf_printf(out, "re-planned: plan v%" PRId64 " (%s), %" PRId64
                  " admitted", int_of(j, "plan_version", 0),
                  json_is_true(json_object_get(j, "changed")) ? "changed"
                                                             : "unchanged",
                  int_of(j, "admitted", 0));
    if (json_is_integer(json_object_get(j, "at_risk")))
        ef_buf_printf(out, ", %" PRId64 " at risk", int_of(j, "at_risk", 0));
    ef_buf_put(out, "\n");
    if (str_of(j, "reason")[0]) {
        put_safe(out, str_of(j, "reason"));
        ef_buf_put(out, "\n");
    }
    if (str_of(j, "snapshot")[0]) {
        ef_buf_put(out, "snapshot ");
        put_safe(out, str_of(j, "snapshot"));
        ef_buf_put(out, "\n");
    }
    json_decref(j);
    return EF_OK;
}

int cl_fmt_drain(const char *server, const char *body, size_t len,
                 ef_buf *out, ef_err *e)
{
    json_t *j = parse_answer(server, body, len, e);
    if (!j)
        return EF_ERR;
    int up = strcmp(str_of(j, "state"), "up") == 0;
    ef_buf_printf(out, "node %" PRId64, int_of(j, "node", -1));
    if (str_of(j, "name")[0]) {
        ef_buf_put(out, " (");
        put_safe(out, str_of(j, "name"));
        ef_buf_put(out, ")");
    }
    ef_buf_printf(out, " %s%s\n",
                  up ? "is up" : "is drained: what runs there moves",
                  json_is_true(json_object_get(j, "changed"))
                      ? "" : " (it already was)");
    json_decref(j);
    return EF_OK;
}

char *cl_json_object1(const char *key, const char *value, ef_err *e)
{
    json_t *s = json_string(value);
    if (!s) {
        ef_fail(e, EF_E_USAGE, "not UTF-8 text");
        return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, key, s);
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!t)
        ef_panic("out of memory writing JSON");
    char *r = ef_strdup(t);
    free(t);
    return r;
}

int cl_job_resolve(const char *name, char **body, size_t *len, int64_t now,
                   ef_err *e)
{
    static const char *const keys[] = {"deadline", "submit_time"};
    ef_err pe = {0}; /* a parse error: cl_job_deadline reports it */
    json_t *j = jsonin_parse(name, *body, *len, &pe);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        return EF_OK;
    }
    int changed = 0, rc = EF_OK;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && rc == EF_OK; k++) {
        const char *s = json_string_value(json_object_get(j, keys[k]));
        int64_t t;         /* the time it stands for */
        const char *why = NULL;
        if (!s || strncmp(s, "now", 3) != 0)
            continue;
        if (ef_ht_parse(s, now, &t, &why) != 0) {
            char q[64];
            rc = ef_fail(e, EF_E_INPUT, "%s: %s: \"%s\": %s", name, keys[k],
                         ef_quote(s, q, sizeof q), why);
            break;
        }
        json_object_set_new(j, keys[k], json_integer((json_int_t)t));
        changed = 1;
    }
    if (rc == EF_OK && changed) {
        char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!text)
            ef_panic("out of memory writing the job");
        free(*body);
        *body = ef_strdup(text);
        *len = strlen(*body);
        free(text);
    }
    json_decref(j);
    return rc;
}

int cl_job_deadline(const char *name, const char *body, size_t len,
                    int64_t *deadline, ef_err *e)
{
    json_t *j = jsonin_parse(name, body, len, e);
    if (!j)
        return EF_ERR;
    int rc = EF_OK;
    const json_t *d = json_object_get(j, "deadline");
    *deadline = -1;
    if (!json_is_object(j)) {
        rc = ef_fail(e, EF_E_INPUT, "%s: expected one job, a JSON object "
                     "(got %s)", name, jsonin_type(j));
    } else if (json_is_integer(d) && json_integer_value(d) >= 0) {
        *deadline = (int64_t)json_integer_value(d);
    } else if (json_is_string(d)) {
        const char *why = NULL;
        if (ef_parse_iso8601(json_string_value(d), deadline, &why) != EF_OK)
            rc = ef_fail(e, EF_E_INPUT, "%s: deadline: %s", name,
                         why ? why : "not an ISO-8601 time");
    } else if (d && !json_is_null(d)) {
        rc = ef_fail(e, EF_E_INPUT, "%s: deadline: expected Unix seconds, an "
                     "ISO-8601 time or null (got %s)", name, jsonin_type(d));
    }
    json_decref(j);
    return rc;
}

/* A string member as text safe to print (put_safe), or NULL. */
static char *dup_or_null(const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s)
        return NULL;
    ef_buf b = {0};
    ef_buf_put(&b, "");
    put_safe(&b, s);
    return b.s;
}

int cl_answer_read(const char *server, const char *body, size_t len,
                   int64_t deadline, cl_answer *a, ef_err *e)
{
    memset(a, 0, sizeof *a);
    json_t *j = parse_answer(server, body, len, e);
    if (!j)
        return EF_ERR;
    const char *dec = str_of(j, "decision");
    if (strcmp(dec, "admitted") == 0)
        a->decision = PLAN_ADMITTED;
    else if (strcmp(dec, "rejected") == 0)
        a->decision = PLAN_REJECTED;
    else if (strcmp(dec, "best_effort") == 0)
        a->decision = PLAN_BEST_EFFORT;
    if (!json_is_string(json_object_get(j, "id")) ||
        a->decision == PLAN_PENDING) {
        json_decref(j);
        return ef_fail(e, EF_E_INTERNAL, "%s: the answer has no id or no "
                       "decision (admitted, rejected or best_effort)",
                       server);
    }
    a->id = dup_or_null(json_object_get(j, "id"));
    a->reason = dup_or_null(json_object_get(j, "reason"));
    a->broken = dup_or_null(json_object_get(j, "broken"));
    a->speed_note = dup_or_null(json_object_get(j, "speed_note"));
    a->planned_end = int_of(j, "planned_end", -1);
    a->earliest = int_of(j, "earliest_feasible_deadline", -1);
    a->submit_time = int_of(j, "submit_time", -1);
    a->plan_version = int_of(j, "plan_version", -1);
    a->deadline = deadline;
    json_decref(j);
    return EF_OK;
}

void cl_answer_free(cl_answer *a)
{
    free(a->id);
    free(a->reason);
    free(a->broken);
    free(a->speed_note);
    memset(a, 0, sizeof *a);
}
