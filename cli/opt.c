/*
 * opt.c: the option conventions every efplan command shares (cli.h,
 * "Option conventions"): one getopt_long loop wrapper that adds -q/-v,
 * --time-zone and (where the command has one) --json, suggests the
 * closest option for a mistyped one, and refuses a single-valued option
 * given twice; the zone a command prints times in.
 */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/htime.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "executor/exec.h"
#include "model/jobs.h"
#include "service/client.h"

cli_conf cli_cf;

/* The table of the parse under way: the command's entries, then the
 * shared ones the command does not define itself (by name). */
#define MAXOPT 96
static struct option merged[MAXOPT];
static int nmerged;            /* entries in merged, without the end */
static int seen[MAXOPT];       /* times each entry was given */
static const char *first[MAXOPT]; /* each entry's first value */
static char **parse_argv;      /* the argv of the parse under way */
static int parse_done = 1;     /* 1: the next call starts a new parse */

static const struct option shared[] = {
    {"quiet", no_argument, NULL, CLI_O_QUIET},
    {"verbose", no_argument, NULL, CLI_O_VERBOSE},
    {"time-zone", required_argument, NULL, CLI_O_ZONE},
    {"json", no_argument, NULL, CLI_O_JSON},
};
#define NSHARED ((int)(sizeof shared / sizeof shared[0]))

static int has_name(const struct option *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return 1;
    return 0;
}

static int in_list(const char *list, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t m = c ? (size_t)(c - p) : strlen(p);
        if (m == l && strncmp(p, name, l) == 0)
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

static void start(char **argv, const struct option *opts, unsigned flags)
{
    memset(&cli_cf, 0, sizeof cli_cf);
    cli_cf.zone = EF_HT_UTC;
    queue_set_now(cli_wall_now());
    nmerged = 0;
    for (; opts[nmerged].name; nmerged++) {
        ef_assert(nmerged < MAXOPT - NSHARED - 1);
        merged[nmerged] = opts[nmerged];
    }
    int own = nmerged;
    for (int i = 0; i < NSHARED; i++)
        if (!has_name(merged, own, shared[i].name) &&
            (shared[i].val != CLI_O_JSON || (flags & CLI_F_JSON)))
            merged[nmerged++] = shared[i];
    memset(&merged[nmerged], 0, sizeof merged[nmerged]);
    memset(seen, 0, sizeof seen);
    memset(first, 0, sizeof first);
    parse_argv = argv;
    parse_done = 0;
}

/* The entry of code 'o' (the first with that code), or -1. */
static int entry_of(int o)
{
    for (int i = 0; i < nmerged; i++)
        if (!merged[i].flag && merged[i].val == o)
            return i;
    return -1;
}

/* The usage error of an unknown option 'arg', with a suggestion. */
static int unknown_option(const char *cmd, const char *arg)
{
    char q[128], word[64];
    const char *s = arg;
    while (*s == '-')
        s++;
    size_t l = strcspn(s, "=");
    if (l >= sizeof word)
        l = sizeof word - 1;
    memcpy(word, s, l);
    word[l] = 0;
    if (strcmp(word, "json") == 0 && arg[1] == '-')
        return cli_usage_error(cmd, "--json: 'efplan %s' has no summary to "
                               "print as JSON (its output is its data)",
                               cmd);
    const char *names[MAXOPT];
    for (int i = 0; i < nmerged; i++)
        names[i] = merged[i].name;
    const char *best = arg[0] == '-' && arg[1] == '-' && word[0]
                           ? ef_suggest(word, names, nmerged)
                           : NULL;
    ef_quote(arg, q, sizeof q);
    if (best)
        return cli_usage_error(cmd, "unknown option %s; did you mean --%s?",
                               q, best);
    return cli_usage_error(cmd, "unknown option %s", q);
}

int cli_getopt(const char *cmd, int argc, char **argv,
               const struct option *opts, unsigned flags,
               const char *repeatable)
{
    if (parse_done || argv != parse_argv) {
        start(argv, opts, flags);
        opterr = 0;
        optind = 1;
    }
    for (;;) {
        int idx = -1;
        int o = getopt_long(argc, argv, ":hqv", merged, &idx);
        if (o == -1) {
            parse_done = 1;
            return -1;
        }
        if (o == ':' || o == '?') {
            parse_done = 1;
            char sh[3] = {'-', (char)optopt, 0}; /* a short option */
            const char *arg = argv[optind - 1];
            if (optopt > 0 && optopt < 128 && strncmp(arg, "--", 2) != 0)
                arg = sh;
            if (o == ':') {
                char q[128];
                cli_usage_error(cmd, "option %s needs a value",
                                ef_quote(arg, q, sizeof q));
            } else {
                unknown_option(cmd, arg);
            }
            return CLI_O_FAILED;
        }
        if (o == 'q')
            o = CLI_O_QUIET;
        else if (o == 'v')
            o = CLI_O_VERBOSE;
        int ent = idx >= 0 ? idx : entry_of(o);
        if (ent >= 0 && !in_list(repeatable, merged[ent].name)) {
            if (seen[ent]++ > 0) {
                char q1[128], q2[128];
                parse_done = 1;
                if (merged[ent].has_arg == required_argument && first[ent])
                    cli_usage_error(cmd, "--%s given twice (\"%s\" and "
                                    "\"%s\"); it "
                                    "takes one value", merged[ent].name,
                                    ef_quote(first[ent], q1, sizeof q1),
                                    ef_quote(optarg, q2, sizeof q2));
                else
                    cli_usage_error(cmd, "--%s given twice", merged[ent].name);
                return CLI_O_FAILED;
            }
            first[ent] = optarg;
        }
        switch (o) {
        case CLI_O_QUIET: cli_cf.quiet = 1; cli_cf.verbose = 0; continue;
        case CLI_O_VERBOSE: cli_cf.verbose = 1; cli_cf.quiet = 0; continue;
        case CLI_O_JSON: cli_cf.json = 1; continue;
        case CLI_O_ZONE:
            if (ef_ht_zone_parse(optarg, &cli_cf.zone) != 0) {
                char q[128];
                parse_done = 1;
                cli_usage_error(cmd, "--time-zone: \"%s\" (expected utc, "
                                "local or epoch)",
                                ef_quote(optarg, q, sizeof q));
                return CLI_O_FAILED;
            }
            cli_cf.zone_given = 1;
            cl_set_zone(cli_cf.zone); /* jobs, show, node: the client's */
            continue;
        default: return o;
        }
    }
}

int cli_option_error(const char *cmd, int o, const char *arg)
{
    if (o == CLI_O_FAILED)
        return EXIT_USAGE;
    if (o == ':')
        return cli_usage_error(cmd, "option %s needs a value", arg);
    return cli_usage_error(cmd, "unknown option %s", arg);
}

ef_ht_zone cli_zone(int64_t t)
{
    (void)t; /* a synthetic clock's times: ef_ht_fmt's offsets */
    return cli_cf.zone;
}

const char *cli_time(int64_t t, int64_t ref, char *dst, size_t n)
{
    return ef_ht_fmt(t, cli_zone(ref), dst, n);
}

int64_t cli_wall_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec >= 0)
        return (int64_t)ts.tv_sec;
    return 0;
}

int cli_parse_now(const char *cmd, const char *arg, int64_t *now)
{
    const char *why = NULL;
    int64_t v;
    if (ef_ht_parse(arg, cli_wall_now(), &v, &why) != 0) {
        char q[128];
        return cli_usage_error(cmd, "--now: \"%s\" is not a time: %s",
                               ef_quote(arg, q, sizeof q), why);
    }
    *now = v;
    queue_set_now(v);
    return 0;
}

int cli_progress_on(void)
{
    static int tty = -1; /* isatty(2), asked once */
    if (tty < 0)
        tty = isatty(2);
    return !cli_cf.quiet && tty;
}

/* The progress line: when the run began (first call), when the line
 * was last drawn, and whether one is shown. */
static struct timespec progress_t0, progress_last;
static int progress_started, progress_shown;

/* Nanoseconds from a to b. */
static long long ns_between(const struct timespec *a, const struct timespec *b)
{
    return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL +
           (b->tv_nsec - a->tv_nsec);
}

void cli_progress(const char *what, long done, long total)
{
    if (!cli_progress_on())
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (!progress_started) {
        progress_started = 1;
        progress_t0 = ts;
    }
    /* nothing for the first second: short runs stay silent */
    if (ns_between(&progress_t0, &ts) < 1000000000LL)
        return;
    if (done < total && progress_shown &&
        ns_between(&progress_last, &ts) < 250000000LL)
        return;
    progress_last = ts;
    progress_shown = 1;
    fprintf(stderr, "\r%s %ld/%ld\033[K", what, done, total);
    fflush(stderr);
}

void cli_progress_end(void)
{
    progress_started = 0;
    if (!progress_shown)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    progress_shown = 0;
}

int cli_json_print(jw *w)
{
    size_t n;
    char *text = jw_take(w, &n);
    ef_err e = {0};
    int rc = 0;
    if (cli_write_out("-", text, n, &e) != EF_OK ||
        cli_write_out("-", "\n", 1, &e) != EF_OK)
        rc = cli_fail(&e);
    free(text);
    return rc;
}

void cli_help_shared(unsigned flags)
{
    printf("\n"
           "Shared options (every command; README \"Conventions\"):\n"
           "  -q, --quiet         results and errors only: no notes, no "
           "progress\n"
           "  -v, --verbose       more detail where the command has it\n"
           "  --time-zone Z       times of a plan on the wall clock in utc\n"
           "                      (default), local (TZ) or epoch (Unix "
           "seconds)\n");
    if (flags & CLI_F_JSON)
        printf("  --json              the summary as one JSON object on "
               "standard output\n");
    printf("  Times read accept Unix seconds, ISO-8601 or now+8h; a file "
           "name '-'\n"
           "  reads standard input, an output '-' writes standard output; an "
           "option\n"
           "  given twice is an error unless its help says repeatable.\n");
}

void cli_say_err(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "%s\n", line);
}

void cli_say_out(void *arg, const char *line)
{
    (void)arg;
    printf("%s\n", line);
}

void cli_say_wrote(FILE *say, const char *path)
{
    if (path && strcmp(path, "-") != 0 && !cli_cf.quiet)
        fprintf(say, "wrote %s\n", path);
}

int cli_scale_option(const char *cmd, const char *arg, double *out)
{
    double d;
    if (ef_parse_double(arg, &d) != EF_NUM_OK ||
        !(d >= EXEC_MIN_SCALE && d <= EXEC_MAX_SCALE))
        return cli_usage_error(cmd, "--time-scale: \"%s\" (expected 0.001 "
                               "to 1000000)", arg);
    *out = d;
    return 0;
}

int cli_backend_option(const char *cmd, const char *arg)
{
    if (exec_backend_find(arg))
        return 0;
    return cli_usage_error(cmd, "--backend: \"%s\" (expected local, slurm "
                           "or dry-run)", arg);
}
