/*
 * fuzz_http.c: libFuzzer target for the service's HTTP request path
 * (service/http.c in front of svc: route, query, headers, body).
 *
 * Once per process: a store in a fresh temporary directory (two tokens:
 * alice, a user, and ops, an operator), svc_open on the cluster n1g8 and
 * the curves A100 (the bundled inputs: $EFPLAN_DATA, else the built-in
 * path), and srv_start on 127.0.0.1, port 0, with short deadlines.
 *
 * Each input is one connection's bytes: the text @ALICE@ and @OPS@ in it
 * become those tokens' texts (so that the fuzzer reaches authenticated
 * routes; the seeds in tests/fuzz/corpus/http/ use them). The bytes are
 * sent, the sending side shut, and the answers read until the server
 * closes or the last answer is whole (by its Content-Length). What is
 * checked (a violation is __builtin_trap, which the fuzzer reports):
 *   - every answer starts with "HTTP/1.1 NNN";
 *   - an answer of the handler's (Content-Type: application/json) with a
 *     status of 400 or more has a JSON body {"error": {"status": NNN,
 *     "message": TEXT}} with the same status and a message that is not
 *     empty (error bodies never lose their message);
 *   - the server answers /healthz afterwards (nothing an input does
 *     leaves it unable to serve).
 * The store then holds what inputs submitted: a later input may see it.
 *
 * Build and run: make fuzz-each (the "http" target), or
 * tests/fuzz/run.sh build/fuzz/fuzz_http 60 http.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "common/err.h"
#include "common/util.h"
#include "model/jobs.h"
#include "service/http.h"
#include "service/store.h"
#include "service/svc.h"
#include "service/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond))                                                        \
            __builtin_trap();                                               \
    } while (0)

static svc *sv;
static srv *hs;
static int port;
static char tok_alice[TOKEN_TEXT_MAX + 1], tok_ops[TOKEN_TEXT_MAX + 1];

static void quiet(void *arg, const char *line)
{
    (void)arg;
    (void)line;
}

static void setup(void)
{
    if (hs)
        return;
    char tmpl[] = "/tmp/efplan-fuzz-http-XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir);
    static char db[256];
    snprintf(db, sizeof db, "%s/db.sqlite", dir);
    ef_err e = {0};
    store *st;
    CHECK(store_open(&st, db, &e) == EF_OK);
    CHECK(store_token_add(st, "alice", 0, 1, tok_alice, sizeof tok_alice,
                          NULL, &e) == EF_OK);
    CHECK(store_token_add(st, "ops", 1, 1, tok_ops, sizeof tok_ops, NULL,
                          &e) == EF_OK);
    store_close(st);
    queue_set_now(-1);
    svc_config sc = {.db = db, .cluster = "n1g8", .curves = "A100",
                     .slot = 60, .overhead = 0};
    if (svc_open(&sv, &sc, 1700000000, &e) != EF_OK) {
        fprintf(stderr, "fuzz_http: %s\n", e.msg);
        __builtin_trap();
    }
    srv_config hc = {.listen = "127.0.0.1:0", .log = quiet,
                     .request_timeout = 2, .header_timeout = 2,
                     .idle_timeout = 2};
    if (srv_start(&hs, sv, &hc, &e) != EF_OK) {
        fprintf(stderr, "fuzz_http: %s\n", e.msg);
        __builtin_trap();
    }
    port = srv_port(hs);
}

/* The input with @ALICE@ and @OPS@ replaced. */
static void expand(const uint8_t *data, size_t size, ef_buf *b)
{
    ef_buf_put(b, "");
    for (size_t i = 0; i < size;) {
        if (size - i >= 7 && memcmp(data + i, "@ALICE@", 7) == 0) {
            ef_buf_put(b, tok_alice);
            i += 7;
        } else if (size - i >= 5 && memcmp(data + i, "@OPS@", 5) == 0) {
            ef_buf_put(b, tok_ops);
            i += 5;
        } else {
            ef_buf_grow(b, 1);
            b->s[b->n++] = (char)data[i++];
            b->s[b->n] = '\0';
        }
    }
}

static int connect_srv(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    return fd;
}

/* Check the answers in r[0..n): each whole one as said above; returns
 * how many bytes they took (a last one cut short is left). */
static size_t check_answers(const char *r, size_t n)
{
    size_t at = 0;
    while (at < n) {
        const char *p = r + at;
        const char *end = memmem(p, n - at, "\r\n\r\n", 4);
        if (!end)
            break;
        CHECK(n - at >= 12 && memcmp(p, "HTTP/1.1 ", 9) == 0);
        int status = atoi(p + 9);
        CHECK(status >= 100 && status <= 599);
        size_t hl = (size_t)(end - p) + 4;
        const char *cl = NULL;
        int json = 0;
        for (const char *q = p; q && q < end;) {
            if (strncasecmp(q, "Content-Length:", 15) == 0)
                cl = q + 15;
            if (strncasecmp(q, "Content-Type: application/json", 30) == 0)
                json = 1;
            q = memchr(q, '\n', (size_t)(end - q));
            if (q)
                q++;
        }
        size_t bl = cl ? strtoul(cl, NULL, 10) : 0;
        if (at + hl + bl > n)
            break;
        if (json && status >= 400) {
            json_error_t je;
            json_t *v = json_loadb(p + hl, bl, 0, &je);
            CHECK(v);
            json_t *er = json_object_get(v, "error");
            CHECK(json_is_object(er));
            CHECK(json_integer_value(json_object_get(er, "status")) ==
                  status);
            const char *m = json_string_value(json_object_get(er, "message"));
            CHECK(m && m[0]);
            json_decref(v);
        }
        at += hl + bl;
    }
    return at;
}

/* Send req, shut the sending side, read until closed (or 1 s): the
 * answers. */
static void exchange(const char *req, size_t len, ef_buf *out)
{
    int fd = connect_srv();
    size_t off = 0;
    while (off < len) {
        ssize_t k = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* the server closed: an answer may be there */
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    ef_buf_put(out, "");
    double t0 = ef_mono_seconds();
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        double left = 1 - (ef_mono_seconds() - t0);
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
            break;
        ef_buf_grow(out, 65536);
        ssize_t k = recv(fd, out->s + out->n, 65536, 0);
        if (k <= 0)
            break;
        out->n += (size_t)k;
        out->s[out->n] = '\0';
        /* kept alive: stop once what came is whole answers */
        if (check_answers(out->s, out->n) == out->n)
            break;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    ef_buf req = {0}, ans = {0};
    expand(data, size, &req);
    exchange(req.s, req.n, &ans);
    check_answers(ans.s, ans.n);
    free(req.s);
    free(ans.s);
    /* still serving */
    static const char health[] = "GET /healthz HTTP/1.1\r\nHost: f\r\n"
                                 "Connection: close\r\n\r\n";
    ans = (ef_buf){0};
    exchange(health, sizeof health - 1, &ans);
    CHECK(ans.n >= 12 && memcmp(ans.s, "HTTP/1.1 200", 12) == 0);
    free(ans.s);
    return 0;
}
