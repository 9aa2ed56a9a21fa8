/* remote.c: what the commands that ask efplan serve share (cli.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "service/client.h"

int cli_remote_open(const char *cmd, const char *server_arg,
                    const char *token_file, cl_conn *c, char *tok,
                    size_t cap)
{
    ef_err e = {0};
    memset(c, 0, sizeof *c);
    if (cl_server_resolve(server_arg, &c->server, &e) != EF_OK ||
        cl_token_resolve(token_file, tok, cap, &e) != EF_OK) {
        if (e.kind == EF_E_USAGE)
            return cli_usage_error(cmd, "%s", e.msg);
        return cli_fail(&e);
    }
    c->token = tok;
    /* a private CA (a self-signed --tls-cert of efplan serve) */
    const char *ca = getenv("EFPLAN_CACERT");
    if (ca && ca[0])
        c->cacert = ca;
    if (cl_init(&e) != EF_OK)
        return cli_fail(&e);
    return 0;
}

void cli_remote_close(void)
{
    cl_cleanup();
}

int cli_remote_call(const cl_conn *c, const char *method, const char *path,
                    const char *body, size_t len, cl_resp *r)
{
    ef_err e = {0};
    if (cl_request(c, method, path, body, len, r, &e) != EF_OK)
        return cli_fail(&e);
    if (r->status >= 200 && r->status < 300)
        return 0;
    long st = r->status;
    cl_status_error(c->server, r, &e);
    cl_resp_free(r);
    fprintf(stderr, "efplan: error: %s\n", e.msg);
    if (st == 401 || st == 403)
        return EXIT_AUTH;
    if (st == 429)
        return EXIT_LIMIT;
    if (st >= 400 && st < 500)
        return EXIT_INPUT;
    return EXIT_INTERNAL;
}

int cli_remote_raw(const cl_resp *r)
{
    ef_err e = {0};
    if (cli_write_out("-", r->body, r->len, &e) != EF_OK)
        return cli_fail(&e);
    return 0;
}
