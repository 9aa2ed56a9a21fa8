/* cmd_token.c: "efplan token": add, list and revoke the service's bearer
 * tokens in its store. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "executor/exec.h"
#include "service/limits.h"
#include "service/store.h"
#include "service/token.h"

static void help_add(void)
{
    printf(
        "Usage: efplan token add NAME [--operator] [--unix-user USER]\n"
        "                        [--max-queued N] [--max-submit-rate N] "
        "--db FILE\n"
        "\n"
        "Make a bearer token for the user NAME and store it in FILE (created\n"
        "if absent, mode 0600). The token is printed once, alone on standard\n"
        "output; only its public id and a salted hash are stored.\n"
        "\n"
        "  NAME          %s\n"
        "  --operator    the token may act on every user's jobs and replan\n"
        "  --unix-user USER  NAME's jobs run as this Unix account of this\n"
        "                host (efplan serve as root; without it they run as\n"
        "                serve's --job-user, default nobody). Every live\n"
        "                token of NAME has the same account; never root\n"
        "  --db FILE     the service's store (efplan serve --db)\n"
        "\n"
        "Exit codes: 0 made, 2 usage error, 3 invalid store, 5 internal "
        "error.\n", TOKEN_NAME_RULE);
    cli_help_shared(0);
}

static void help_list(void)
{
    printf(
        "Usage: efplan token list --db FILE [--json]\n"
        "\n"
        "List every token in FILE, live and revoked, by creation: id, name,\n"
        "role (user or operator), the Unix account its jobs run as (\"-\":\n"
        "serve's job user), its limits (max_queued, max_submit_rate; \"-\":\n"
        "serve's), created and revoked times (ISO-8601 UTC).\n"
        "Secrets are never shown: the store does not have them.\n"
        "\n"
        "  --db FILE     the service's store (must exist)\n"
        "  --json        {\"tokens\": [...]} instead of a table\n"
        "\n"
        "Exit codes: 0 listed, 2 usage error, 3 invalid store, 5 internal "
        "error.\n");
    cli_help_shared(0);
}

static void help_limits(void)
{
    printf(
        "Usage: efplan token limits ID|NAME [--max-queued N|none|default]\n"
        "                           [--max-submit-rate N|none|default] --db "
        "FILE\n"
        "\n"
        "Change the per-user limits of the live token with public id ID, or,\n"
        "when no token has that id, of every live token of the user NAME:\n"
        "jobs queued or running at once, and submissions per minute (N or\n"
        "N/min). none: no limit; default: efplan serve's --max-queued or\n"
        "--max-submit-rate. A limit not given is left as it is. A running\n"
        "server applies them from the token's next request.\n"
        "\n"
        "  --db FILE     the service's store (must exist)\n"
        "\n"
        "Exit codes: 0 changed, 2 usage error, 3 invalid store or no live\n"
        "token matched, 5 internal error.\n");
    cli_help_shared(0);
}

static void help_revoke(void)
{
    printf(
        "Usage: efplan token revoke ID|NAME --db FILE\n"
        "\n"
        "Revoke the token with public id ID, or, when no token has that id,\n"
        "every live token of the user NAME. A revoked token is refused at\n"
        "once, also by a server already running on FILE; its row stays.\n"
        "\n"
        "  --db FILE     the service's store (must exist)\n"
        "\n"
        "Exit codes: 0 revoked, 2 usage error, 3 invalid store or no live\n"
        "token matched, 5 internal error.\n");
    cli_help_shared(0);
}

void help_token(void)
{
    printf(
        "Usage: efplan token add NAME [--operator] [--unix-user USER] --db "
        "FILE\n"
        "       efplan token list --db FILE [--json]\n"
        "       efplan token limits ID|NAME [--max-queued N] "
        "[--max-submit-rate N] --db FILE\n"
        "       efplan token revoke ID|NAME --db FILE\n"
        "\n"
        "Manage the bearer tokens of efplan serve, kept in its store (a\n"
        "SQLite file). A token reads efp_ID_SECRET: ID (10 characters) is\n"
        "public and names the token in lists and revocations; the secret is\n"
        "shown once, when the token is made, and stored only as a salted\n"
        "hash. A user's token acts on that user's jobs; an operator's on\n"
        "all. 'efplan token COMMAND --help' for each.\n"
        "\n"
        "Exit codes: 0 done, 2 usage error, 3 invalid input (a store that\n"
        "is not one, no token matched), 5 internal error.\n");
    cli_help_shared(0);
}

/* Unix seconds as ISO-8601 UTC. */
static const char *iso(int64_t t, char *dst, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) ||
        strftime(dst, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(dst, len, "%" PRId64, t);
    return dst;
}

static int64_t now_s(void)
{
    time_t t = time(NULL);
    return t < 0 ? 0 : (int64_t)t;
}

/* A store that must exist already (list, revoke: never create one by a
 * typo). */
static int open_existing(const char *path, store **s, ef_err *e)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return ef_fail(e, EF_E_INPUT, "%s: no such store (efplan token add "
                       "creates one)", path);
    return store_open(s, path, e);
}

typedef struct tok_opts {
    const char *db;
    const char *unix_user;
    int op, json;
    int64_t max_queued, max_rate; /* STORE_LIMIT_KEEP: not given */
} tok_opts;

/* The options of the subcommands: --db (required), --help, and
 * --operator or --json where allowed. Returns -1 when parsed (positional
 * arguments from argv[*first]), else the exit code (0 after --help). */
static int parse(const char *cmd, void (*help)(void), int allow_op,
                 int allow_json, int argc, char **argv, tok_opts *to,
                 int *first)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"operator", no_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'},
        {"unix-user", required_argument, NULL, 'U'},
        {"max-queued", required_argument, NULL, 'Q'},
        {"max-submit-rate", required_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int o;
    opterr = 0;
    optind = 1;
    to->max_queued = to->max_rate = STORE_LIMIT_KEEP;
    int lims = strcmp(cmd, "token add") == 0 ||
               strcmp(cmd, "token limits") == 0;
    while ((o = cli_getopt(cmd, argc, argv, opts, 0, NULL)) != -1) {
        switch (o) {
        case 'd': to->db = optarg; break;
        case 'Q':
        case 'R': {
            const char *opt = o == 'Q' ? "--max-queued" : "--max-submit-rate";
            int64_t v;
            if (!lims)
                return cli_usage_error(cmd, "%s is an option of 'token add' "
                                       "and 'token limits' only", opt);
            if (lim_parse(optarg, o == 'R', &v) != 0)
                return cli_usage_error(cmd, "%s: \"%s\" (expected 1 to "
                                       "1000000000%s, none or default)", opt,
                                       optarg, o == 'R' ? " a minute" : "");
            *(o == 'Q' ? &to->max_queued : &to->max_rate) = v;
            break;
        }
        case 'o':
            if (!allow_op)
                return cli_usage_error(cmd, "--operator is an option of "
                                       "'token add' only");
            to->op = 1;
            break;
        case 'U':
            if (!allow_op)
                return cli_usage_error(cmd, "--unix-user is an option of "
                                       "'token add' only");
            to->unix_user = optarg;
            break;
        case 'j':
            if (!allow_json)
                return cli_usage_error(cmd, "--json is an option of 'token "
                                       "list' only");
            to->json = 1;
            break;
        case 'h': help(); return 0;
        default:
            return cli_option_error(cmd, o, argv[optind - 1]);
        }
    }
    if (!to->db)
        return cli_usage_error(cmd, "--db FILE is required (the service's "
                               "store)");
    if (!to->db[0])
        return cli_usage_error(cmd, "--db: the path is empty");
    *first = optind;
    return -1;
}

/* --unix-user USER: a well-formed name of an account of this host that
 * is not root. -1 when it is, else the exit code. */
static int check_unix_user(const char *cmd, const char *user)
{
    const char *why = token_unix_user_check(user);
    char q[160];
    if (why)
        return cli_usage_error(cmd, "--unix-user \"%s\": %s (%s)",
                               ef_quote(user, q, sizeof q), why,
                               TOKEN_UNIX_RULE);
    exec_user u;
    ef_err e = {0};
    if (exec_user_lookup(user, &u, &e) != EF_OK)
        return cli_usage_error(cmd, "--unix-user: %s (the jobs run as an "
                               "account of the service's host: create it "
                               "first)", e.msg);
    if (u.uid == 0)
        return cli_usage_error(cmd, "--unix-user %s is uid 0: the jobs would "
                               "run as root (name an unprivileged account)",
                               user);
    return -1;
}

static int token_add(int argc, char **argv)
{
    const char *cmd = "token add";
    tok_opts to = {0};
    int first, rc = parse(cmd, help_add, 1, 0, argc, argv, &to, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1)
        return cli_usage_error(cmd, argc - first == 0 ? "NAME is required" :
                               "one NAME only (got %d arguments)",
                               argc - first);
    const char *name = argv[first];
    const char *why = token_name_check(name);
    if (why) {
        char q[160];
        return cli_usage_error(cmd, "token name \"%s\": %s (%s)",
                               ef_quote(name, q, sizeof q), why,
                               TOKEN_NAME_RULE);
    }
    ef_err e = {0};
    if (to.unix_user) {
        rc = check_unix_user(cmd, to.unix_user);
        if (rc >= 0)
            return rc;
    }
    store *s;
    if (store_open(&s, to.db, &e) != EF_OK)
        return cli_fail(&e);
    char text[TOKEN_TEXT_MAX + 1];
    store_ident who;
    int lims = to.max_queued != STORE_LIMIT_KEEP ||
              to.max_rate != STORE_LIMIT_KEEP, count = 0;
    /* the token and its limits land together */
    if ((lims && store_begin(s, &e) != EF_OK) ||
        store_token_add_as(s, name, to.op, to.unix_user, now_s(), text,
                           sizeof text, &who, &e) != EF_OK ||
        (lims && (store_token_set_limits(s, who.id, to.max_queued,
                                        to.max_rate, &count, &e) != EF_OK ||
                 store_commit(s, &e) != EF_OK))) {
        store_rollback(s);
        store_close(s);
        token_wipe(text, sizeof text);
        return cli_fail(&e);
    }
    store_close(s);
    rc = 0;
    if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "efplan: error: standard output: the token could "
                "not be written; revoke %s\n", who.id);
        rc = EXIT_INTERNAL;
    } else {
        fprintf(stderr, "efplan: token for %s (%s%s%s) created: efp_%s_... "
                "shown once; store it in a file only you can read\n",
                who.name, who.op ? "operator" : "user",
                who.unix_user[0] ? ", jobs run as " : "", who.unix_user,
                who.id);
    }
    token_wipe(text, sizeof text);
    return rc;
}

/* A limit in token list --json: the number, "none", or null (the
 * service's). */
static void list_limit(jw *w, const char *key, int64_t v)
{
    if (v == STORE_LIMIT_SERVICE)
        jw_null(w, key);
    else if (v < 0)
        jw_str(w, key, "none");
    else
        jw_int(w, key, v);
}

static int token_list(int argc, char **argv)
{
    const char *cmd = "token list";
    tok_opts to = {0};
    int first, rc = parse(cmd, help_list, 0, 1, argc, argv, &to, &first);
    if (rc >= 0)
        return rc;
    if (first < argc)
        return cli_usage_error(cmd, "unexpected argument \"%s\"",
                               argv[first]);
    ef_err e = {0};
    store *s;
    if (open_existing(to.db, &s, &e) != EF_OK)
        return cli_fail(&e);
    store_token_row *r;
    int n;
    rc = store_token_list(s, &r, &n, &e);
    store_close(s);
    if (rc != EF_OK)
        return cli_fail(&e);
    char c[32], v[32];
    if (to.json) {
        jw w;
        jw_init(&w, 0);
        jw_obj(&w, NULL, &jw_block_obj);
        jw_arr(&w, "tokens", &jw_block_arr);
        for (int i = 0; i < n; i++) {
            jw_obj(&w, NULL, &jw_inline_obj);
            jw_str(&w, "id", r[i].who.id);
            jw_str(&w, "name", r[i].who.name);
            jw_str(&w, "role", r[i].who.op ? "operator" : "user");
            if (r[i].who.unix_user[0])
                jw_str(&w, "unix_user", r[i].who.unix_user);
            else
                jw_null(&w, "unix_user");
            jw_str(&w, "created", iso(r[i].created, c, sizeof c));
            list_limit(&w, "max_queued", r[i].who.max_queued);
            list_limit(&w, "max_submit_rate", r[i].who.max_rate);
            if (r[i].revoked >= 0)
                jw_str(&w, "revoked", iso(r[i].revoked, v, sizeof v));
            else
                jw_null(&w, "revoked");
            jw_str(&w, "state", r[i].revoked >= 0 ? "revoked" : "live");
            jw_end(&w);
        }
        jw_end(&w);
        jw_end(&w);
        size_t len;
        char *text = jw_take(&w, &len);
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
    } else {
        int wn = 4, wu = 9;
        for (int i = 0; i < n; i++) {
            if ((int)strlen(r[i].who.name) > wn)
                wn = (int)strlen(r[i].who.name);
            if ((int)strlen(r[i].who.unix_user) > wu)
                wu = (int)strlen(r[i].who.unix_user);
        }
        printf("%-*s  %-*s  %-8s  %-*s  %-10s  %-15s  %-20s  %s\n",
               TOKEN_ID_LEN, "id", wn, "name", "role", wu, "unix_user",
               "max_queued", "max_submit_rate", "created", "state");
        for (int i = 0; i < n; i++) {
            char lq[32], lr[32];
            printf("%-*s  %-*s  %-8s  %-*s  %-10s  %-15s  %-20s  ",
                   TOKEN_ID_LEN, r[i].who.id, wn, r[i].who.name,
                   r[i].who.op ? "operator" : "user", wu,
                   r[i].who.unix_user[0] ? r[i].who.unix_user : "-",
                   lim_text(r[i].who.max_queued, 0, lq, sizeof lq),
                   lim_text(r[i].who.max_rate, 1, lr, sizeof lr),
                   iso(r[i].created, c, sizeof c));
            if (r[i].revoked >= 0)
                printf("revoked %s\n", iso(r[i].revoked, v, sizeof v));
            else
                printf("live\n");
        }
    }
    free(r);
    if (fflush(stdout) != 0) {
        e = (ef_err){0};
        ef_fail(&e, EF_E_INTERNAL, "standard output: write failed");
        return cli_fail(&e);
    }
    return 0;
}

/* The usage error of a command that takes one token ID or NAME and was
 * given n arguments (n != 1). */
static int key_usage(const char *cmd, int n)
{
    return cli_usage_error(cmd, n == 0 ? "ID or NAME is required"
                                       : "one ID or NAME only (got %d "
                                         "arguments)", n);
}

static int token_revoke(int argc, char **argv)
{
    const char *cmd = "token revoke";
    tok_opts to = {0};
    int first, rc = parse(cmd, help_revoke, 0, 0, argc, argv, &to, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1)
        return key_usage(cmd, argc - first);
    const char *key = argv[first];
    ef_err e = {0};
    store *s;
    if (open_existing(to.db, &s, &e) != EF_OK)
        return cli_fail(&e);
    int count = 0;
    rc = store_token_revoke(s, key, now_s(), &count, &e);
    store_close(s);
    if (rc != EF_OK)
        return cli_fail(&e);
    char q[160];
    if (count == 0) {
        ef_fail(&e, EF_E_INPUT, "%s: no live token has the id or name \"%s\""
                " (efplan token list --db %s)", to.db,
                ef_quote(key, q, sizeof q), to.db);
        return cli_fail(&e);
    }
    printf("revoked %d token%s: \"%s\"\n", count, count == 1 ? "" : "s",
           ef_quote(key, q, sizeof q));
    return 0;
}

static int token_limits(int argc, char **argv)
{
    const char *cmd = "token limits";
    tok_opts to = {0};
    int first, rc = parse(cmd, help_limits, 0, 0, argc, argv, &to, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1)
        return key_usage(cmd, argc - first);
    if (to.max_queued == STORE_LIMIT_KEEP && to.max_rate == STORE_LIMIT_KEEP)
        return cli_usage_error(cmd, "nothing to change: give --max-queued "
                               "or --max-submit-rate");
    const char *key = argv[first];
    ef_err e = {0};
    store *s;
    if (open_existing(to.db, &s, &e) != EF_OK)
        return cli_fail(&e);
    int count = 0;
    rc = store_token_set_limits(s, key, to.max_queued, to.max_rate, &count,
                                &e);
    store_close(s);
    if (rc != EF_OK)
        return cli_fail(&e);
    char q[160];
    if (count == 0) {
        ef_fail(&e, EF_E_INPUT, "%s: no live token has the id or name \"%s\""
                " (efplan token list --db %s)", to.db,
                ef_quote(key, q, sizeof q), to.db);
        return cli_fail(&e);
    }
    printf("limits of %d token%s changed: \"%s\"\n", count,
           count == 1 ? "" : "s", ef_quote(key, q, sizeof q));
    return 0;
}

int cmd_token(int argc, char **argv)
{
    static const char *const subs[] = {"add", "limits", "list", "revoke"};
    if (argc < 2)
        return cli_usage_error("token", "a command is required: add, "
                               "limits, list or revoke");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 ||
        strcmp(sub, "help") == 0) {
        help_token();
        return 0;
    }
    if (strcmp(sub, "add") == 0)
        return token_add(argc - 1, argv + 1);
    if (strcmp(sub, "list") == 0)
        return token_list(argc - 1, argv + 1);
    if (strcmp(sub, "revoke") == 0)
        return token_revoke(argc - 1, argv + 1);
    if (strcmp(sub, "limits") == 0)
        return token_limits(argc - 1, argv + 1);
    char q[128];
    const char *s = ef_suggest(sub, subs, 4);
    if (s)
        return cli_usage_error("token", "unknown command \"%s\" (did you mean "
                               "\"%s\"?)", ef_quote(sub, q, sizeof q), s);
    return cli_usage_error("token", "unknown command \"%s\" (add, limits, "
                           "list or revoke)", ef_quote(sub, q, sizeof q));
}
