/* manpage.c: efplan(1) and the bash completion, generated from the
 * command table and each command's help text (cli.h: cli_generate), so
 * neither is maintained by hand. The build runs `efplan --man` and
 * `efplan --bash-completion`; `make install` copies what they wrote. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/path.h"
#include "common/util.h"
#include "simulator/sim.h"

/* The text help() prints on standard output (heap, NUL-terminated), or
 * NULL when standard output cannot be taken over. */
static char *capture(void (*help)(void))
{
    FILE *t = tmpfile();
    if (!t)
        return NULL;
    fflush(stdout);
    int saved = dup(1); /* the real standard output, while help writes */
    if (saved < 0 || dup2(fileno(t), 1) < 0) {
        if (saved >= 0)
            close(saved);
        fclose(t);
        return NULL;
    }
    help();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    long n = ftell(t) >= 0 ? lseek(fileno(t), 0, SEEK_END) : -1;
    char *s = NULL;
    if (n >= 0 && fseek(t, 0, SEEK_SET) == 0) {
        s = ef_malloc((size_t)n + 1);
        s[fread(s, 1, (size_t)n, t)] = '\0';
    }
    fclose(t);
    return s;
}

/* One line (n bytes) of text for roff: backslashes and hyphens
 * escaped, a leading '.' or '\'' made text, a UTF-8 character other than
 * ASCII written \[uXXXX] (so the page is ASCII whatever the help text
 * holds; a byte that is not UTF-8 becomes '?'). */
static void roff_line(ef_buf *b, const char *s, size_t n)
{
    if (n > 0 && (s[0] == '.' || s[0] == '\''))
        ef_buf_put(b, "\\&");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        int k;
        if (c == '\\')
            ef_buf_put(b, "\\e");
        else if (c == '-')
            ef_buf_put(b, "\\-");
        else if (c < 0x80)
            ef_buf_printf(b, "%c", c);
        else if ((k = ef_utf8_char(s + i, n - i, &cp)) > 0) {
            ef_buf_printf(b, "\\[u%04X]", (unsigned)cp);
            i += (size_t)k - 1;
        } else
            ef_buf_put(b, "?");
    }
    ef_buf_put(b, "\n");
}

/* Text for roff in filled mode (one line, no leading dot). */
static void roff_text(ef_buf *b, const char *s)
{
    roff_line(b, s, strlen(s));
}

static const struct {
    int code;
    const char *what;
} exit_codes[] = {
    {EXIT_OK_, "success (a plan may still reject jobs: see its summary)"},
    {EXIT_USAGE, "usage error: unknown command or option, a missing or "
                 "bad value"},
    {EXIT_INPUT, "invalid input: a file is missing, unreadable or wrong "
                 "(the message names the file and line:column, or the "
                 "JSON path)"},
    {EXIT_INFEASIBLE, "infeasible: submit could not admit the job, the "
                      "oracle's model has no answer; apply: some job "
                      "failed"},
    {EXIT_INTERNAL, "internal error: out of memory, an output cannot be "
                    "written, a failed self-check; apply and serve: the "
                    "cluster failed or cannot be reached"},
    {EXIT_NO_CUDA, "profile: efplan was built without CUDA/NCCL"},
    {EXIT_NO_GPU, "profile: no CUDA driver or no GPU on this machine"},
    {EXIT_AUTH, "the server refused the token (HTTP 401 or 403)"},
    {EXIT_MISSED, "apply, nightly: an admitted job is not done by its "
     "deadline"},
    {EXIT_LIMIT, "the server refused for a per-user limit (HTTP 429): "
                 "retry after the time its message gives"},
};

static const struct {
    const char *name, *what;
} environment[] = {
    {"EFPLAN_DATA", "the directory of bundled inputs (curves/, clusters/, "
                    "traces/, jobs/, pollux/), instead of the one found "
                    "beside the executable (FILES)"},
    {"EFPLAN_SERVER", "the URL of efplan serve for jobs, show, cancel, "
                      "node, replan, explain and submit when --server is "
                      "not given"},
    {"EFPLAN_TOKEN", "the bearer token for efplan serve when --token-file "
                     "is not given"},
    {"EFPLAN_CACERT", "a CA certificate file the client trusts for an "
                      "https server"},
    {"OMP_NUM_THREADS", "threads of the parallel parts; outputs are the "
                        "same bytes whatever it is"},
};

/* EXAMPLES of efplan(1): what each does, then the command (run from
 * the source tree, or anywhere with the bundled inputs installed). */
static const struct {
    const char *what, *cmd;
} examples[] = {
    {"Plan a copy of the bundled sample queue (submit below adds to it) "
     "on 4 nodes of 8 GPUs with the A100 curves, writing the plan file "
     "and its chart:",
     "cp inputs/jobs/sample.json jobs.json\n"
     "efplan plan --jobs jobs.json --cluster n4g8 --curves A100 "
     "--out plan.json --svg plan.svg"},
    {"Why a job of that plan got the GPUs it got:",
     "efplan explain j07 --plan plan.json"},
    {"Run the plan slot by slot on this host (local processes), or show "
     "what it would do on Slurm:",
     "efplan apply plan.json --backend local\n"
     "efplan apply plan.json --backend dry-run"},
    {"Add one job to the plan, admitted only if its deadline (and every "
     "admitted job's) still holds:",
     "efplan submit --plan plan.json --job '{\"id\": \"ft\", \"model\": "
     "\"resnet50\", \"batch_size\": 64, \"iterations\": 20000, "
     "\"deadline\": \"now+8h\"}'"},
    {"Replay a trace through the ElasticFlow policy and EDF:",
     "efplan compare --traces inputs/traces/itp/195job.csv "
     "--cluster n4g8 --policies ef,edf"},
    {"How far greedy admission is from the optimum:",
     "efplan oracle --jobs inputs/jobs/sample.json --cluster n4g8 "
     "--curves A100"},
    {"Serve a queue on a cluster of named nodes, make a user's token, "
     "submit and follow a job:",
     "efplan token add alice --db efplan.db > alice.token\n"
     "efplan serve --db efplan.db --cluster n4g8 --curves A100 "
     "--backend slurm --nodes 'gpu[01-04]'\n"
     "efplan submit --server http://127.0.0.1:8470 --token-file "
     "alice.token job.json\n"
     "efplan show JOB --server http://127.0.0.1:8470 --token-file "
     "alice.token"},
    {"Drain a node for maintenance (an operator's token), then give it "
     "back:",
     "efplan node drain gpu03 --reason 'DIMM errors'\n"
     "efplan node undrain gpu03\n"
     "efplan replan"},
};

static void man(ef_buf *b, const cli_command *cmds, int n, char **help)
{
    ef_buf_put(b, ".\\\" efplan(1), generated by 'efplan --man' from the "
                  "help text of each command: do not edit\n");
    ef_buf_printf(b, ".TH EFPLAN 1 \"\" \"efplan %s\" \"User Commands\"\n",
                  EFPLAN_VERSION);
    ef_buf_put(b, ".SH NAME\nefplan \\- ");
    roff_text(b, CLI_TAGLINE);
    ef_buf_put(b, ".SH SYNOPSIS\n.B efplan\n.I COMMAND\n.RI [ OPTIONS ]\n"
                  ".br\n.B efplan help\n.I COMMAND\n.br\n"
                  ".B efplan \\-\\-help\n.br\n.B efplan \\-\\-version\n");
    ef_buf_put(b, ".SH DESCRIPTION\n");
    ef_buf_put(b, ".B efplan\n");
    roff_text(b, "plans a queue of training jobs with deadlines on a GPU "
                 "cluster: it admits a job only when its deadline can be "
                 "guaranteed, gives each its minimum satisfactory share of "
                 "GPUs, hands spare GPUs to the jobs that gain most, and "
                 "places workers buddy-style; it replays traces through "
                 "policies, applies plans on a cluster (local processes or "
                 "Slurm) and serves a queue over HTTP.");
    ef_buf_put(b, ".PP\nThe commands:\n");
    for (int i = 0; i < n; i++) {
        ef_buf_printf(b, ".TP\n.B %s\n", cmds[i].name);
        roff_text(b, cmds[i].summary);
    }
    ef_buf_put(b, ".PP\nEach is described below with the text\n"
                  ".B efplan help\n.I COMMAND\nprints.\n");
    ef_buf_put(b, ".SH COMMANDS\n");
    for (int i = 0; i < n; i++) {
        ef_buf_printf(b, ".SS \"efplan %s\"\n", cmds[i].name);
        roff_text(b, cmds[i].summary);
        ef_buf_put(b, ".PP\n.nf\n");
        for (const char *s = help[i]; *s;) {
            const char *e = strchr(s, '\n');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            roff_line(b, s, len);
            s += len + (e != NULL);
        }
        ef_buf_put(b, ".fi\n");
    }
    ef_buf_put(b, ".SH EXAMPLES\n");
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        ef_buf_put(b, ".PP\n");
        roff_text(b, examples[i].what);
        ef_buf_put(b, ".PP\n.RS 4\n.nf\n");
        for (const char *s = examples[i].cmd; *s;) {
            const char *e = strchr(s, '\n');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            roff_line(b, s, len);
            s += len + (e != NULL);
        }
        ef_buf_put(b, ".fi\n.RE\n");
    }
    ef_buf_put(b, ".SH \"EXIT STATUS\"\n");
    for (size_t i = 0; i < sizeof exit_codes / sizeof exit_codes[0]; i++) {
        ef_buf_printf(b, ".TP\n.B %d\n", exit_codes[i].code);
        roff_text(b, exit_codes[i].what);
    }
    ef_buf_put(b, ".PP\nEach command's help lists what its codes mean "
                  "there.\n");
    ef_buf_put(b, ".SH ENVIRONMENT\n");
    for (size_t i = 0; i < sizeof environment / sizeof environment[0];
         i++) {
        ef_buf_printf(b, ".TP\n.B %s\n", environment[i].name);
        roff_text(b, environment[i].what);
    }
    ef_buf_put(b, ".SH FILES\nThe bundled inputs (curve sets A100 and T4, "
                  "cluster specs, traces, the sample queue) are looked for "
                  "in this order:\n");
    ef_buf_put(b, ".TP\n.B $EFPLAN_DATA\nwhen set.\n");
    ef_buf_put(b, ".TP\n.I BINDIR/");
    roff_text(b, EF_DATA_BESIDE_INSTALLED);
    ef_buf_put(b, "beside the executable: an installed efplan, "
                  "PREFIX/bin/efplan with PREFIX/share/efplan/inputs "
                  "(a prefix moved elsewhere keeps working).\n");
    ef_buf_put(b, ".TP\n.I BINDIR/");
    roff_text(b, EF_DATA_BESIDE_BUILD);
    ef_buf_put(b, "an efplan run from its build tree (build/efplan).\n");
    ef_buf_put(b, ".TP\nthe directory compiled in\n"
                  "(the source tree's inputs/ unless built with "
                  "BUILTIN_DATA=DIR).\n");
    ef_buf_put(b, ".PP\n.B efplan \\-\\-help\nprints the directory "
                  "found.\n");
    ef_buf_put(b, ".PP\nA plan file records the jobs file it was made from "
                  "relative to the plan file's own directory, so\n"
                  ".BR apply ,\n.B submit\nand\n.B validate \\-\\-plan\n"
                  "find it from any directory.\n");
    ef_buf_put(b, ".SH \"SEE ALSO\"\nThe README.md of the efplan source "
                  "tree.\n");
}

/* The long options of one help text: the --names of its Usage lines
 * (from "Usage:" to the first empty line) and of the lines that list
 * an option ("  --name ..." or "  -x, --name ..."), each once, in the
 * order met, into b (space-separated). */
static void options_of(ef_buf *b, const char *help)
{
    int usage = 0; /* inside the Usage lines */
    ef_buf seen = {0};
    ef_buf_put(&seen, " ");
    for (const char *s = help; *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (strncmp(s, "Usage:", 6) == 0)
            usage = 1;
        else if (len == 0)
            usage = 0;
        int list = len > 4 && s[0] == ' ' && s[1] == ' ' &&
                   (strncmp(s + 2, "--", 2) == 0 ||
                    (s[2] == '-' && s[3] != '-' && s[4] == ','));
        for (size_t i = 0; (usage || list) && i + 2 < len; i++) {
            if (s[i] != '-' || s[i + 1] != '-' ||
                (i > 0 && s[i - 1] != ' ' && s[i - 1] != '[' &&
                 s[i - 1] != '|'))
                continue;
            size_t k = i + 2;
            while (k < len && ((s[k] >= 'a' && s[k] <= 'z') ||
                               (s[k] >= '0' && s[k] <= '9') || s[k] == '-'))
                k++;
            char name[64];
            if (k == i + 2 || k - i >= sizeof name - 2)
                continue;
            snprintf(name, sizeof name, " %.*s ", (int)(k - i), s + i);
            if (!strstr(seen.s, name)) {
                ef_buf_put(&seen, name + 1);
                ef_buf_printf(b, "%s%.*s", b->n ? " " : "", (int)(k - i),
                              s + i);
            }
            if (!list)
                i = k;
            else
                break; /* an option line names one option first */
        }
        s += len + (e != NULL);
    }
    free(seen.s);
}

/* The values the help text lists for an option, "--name a|b|c" (a Usage
 * line or an option line; the words of [a-z0-9-]), as bash case arms of
 * command 'cmd' into b: `    "cmd --name") v='a b c' ;;`, each option
 * once. */
static void values_of(ef_buf *b, const char *cmd, const char *help)
{
    ef_buf seen = {0};
    ef_buf_put(&seen, " ");
    for (const char *s = strstr(help, "--"); s; s = strstr(s + 2, "--")) {
        if (s > help && s[-1] != ' ' && s[-1] != '[')
            continue;
        size_t k = 2;
        while ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= '0' && s[k] <= '9')
               || s[k] == '-')
            k++;
        if (s[k] != ' ')
            continue;
        const char *v = s + k + 1;
        size_t m = 0, bars = 0;
        while ((v[m] >= 'a' && v[m] <= 'z') || (v[m] >= '0' && v[m] <= '9')
               || v[m] == '-' || (v[m] == '|' && m > 0 && v[m - 1] != '|')) {
            bars += v[m] == '|';
            m++;
        }
        if (bars == 0 || v[m - 1] == '|')
            continue;
        char name[80];
        snprintf(name, sizeof name, " %.*s ", (int)(k < 70 ? k : 70), s);
        if (strstr(seen.s, name))
            continue;
        ef_buf_put(&seen, name + 1);
        ef_buf_printf(b, "    \"%s %.*s\") v='", cmd, (int)k, s);
        for (size_t i = 0; i < m; i++)
            ef_buf_printf(b, "%c", v[i] == '|' ? ' ' : v[i]);
        ef_buf_put(b, "' ;;\n");
    }
    free(seen.s);
}

static void completion(ef_buf *b, const cli_command *cmds, int n,
                       char **help)
{
    ef_buf names = {0};
    for (int i = 0; i < n; i++)
        ef_buf_printf(&names, "%s%s", i ? " " : "", cmds[i].name);
    ef_buf_put(b,
        "# bash completion for efplan, generated by 'efplan "
        "--bash-completion' from\n"
        "# the command table and each command's help text: do not edit.\n"
        "_efplan()\n"
        "{\n"
        "    local cur=${COMP_WORDS[COMP_CWORD]} opts=\n"
        "    COMPREPLY=()\n"
        "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n");
    ef_buf_printf(b,
        "        COMPREPLY=($(compgen -W '%s help --help --version' -- "
        "\"$cur\"))\n"
        "        return 0\n"
        "    fi\n"
        "    case ${COMP_WORDS[1]} in\n"
        "    help)\n"
        "        [ \"$COMP_CWORD\" -eq 2 ] &&\n"
        "            COMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n"
        "        return 0 ;;\n", names.s, names.s);
    for (int i = 0; i < n; i++) {
        ef_buf o = {0};
        ef_buf_put(&o, "");
        options_of(&o, help[i]);
        char padded[8192]; /* the options between blanks, to find --help */
        snprintf(padded, sizeof padded, " %s ", o.s);
        ef_buf_printf(b, "    %s) opts='%s%s' ;;\n", cmds[i].name, o.s,
                      strstr(padded, " --help ") ? ""
                      : o.n                      ? " --help"
                                                 : "--help");
        free(o.s);
    }
    ef_buf_put(b,
        "    *) return 0 ;;\n"
        "    esac\n"
        "    local v= prev=${COMP_WORDS[COMP_CWORD-1]}\n"
        "    case \"${COMP_WORDS[1]} $prev\" in\n");
    for (int i = 0; i < n; i++)
        values_of(b, cmds[i].name, help[i]);
    ef_buf_put(b, "    *\" --time-zone\") v='utc local epoch' ;;\n"
                  "    *\" --policy\") v='");
    for (int i = 0; i < sim_policy_count(); i++)
        ef_buf_printf(b, "%s%s", i ? " " : "", sim_policy_at(i)->name);
    ef_buf_put(b, "' ;;\n"
                  "    esac\n"
                  "    if [ -n \"$v\" ]; then\n"
                  "        COMPREPLY=($(compgen -W \"$v\" -- \"$cur\"))\n"
                  "        return 0\n"
                  "    fi\n"
                  "    if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
                  "        case ${COMP_WORDS[1]} in\n");
    for (int i = 0; i < n; i++)
        if (cmds[i].verbs)
            ef_buf_printf(b, "        %s) v='%s' ;;\n", cmds[i].name,
                          cmds[i].verbs);
    ef_buf_put(b,
        "        esac\n"
        "        case $cur in\n"
        "        -*) ;;\n"
        "        *) if [ -n \"$v\" ]; then\n"
        "               COMPREPLY=($(compgen -W \"$v\" -- \"$cur\"))\n"
        "               return 0\n"
        "           fi ;;\n"
        "        esac\n"
        "    fi\n"
        "    case $cur in\n"
        "    -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
        "    esac\n"
        "    return 0\n"
        "}\n"
        "complete -o default -F _efplan efplan\n");
    free(names.s);
}

int cli_generate(const char *what)
{
    int n;
    const cli_command *cmds = cli_commands(&n);
    char **help = ef_calloc((size_t)n, sizeof *help); /* each command's */
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (!(help[i] = capture(cmds[i].help))) {
            fprintf(stderr, "efplan: error: cannot capture the help of %s\n",
                    cmds[i].name);
            rc = EXIT_INTERNAL;
        }
    ef_buf b = {0};
    if (rc == 0) {
        if (strcmp(what, "man") == 0)
            man(&b, cmds, n, help);
        else
            completion(&b, cmds, n, help);
        ef_err e = {0};
        if (cli_write_out("-", b.s, b.n, &e) != EF_OK)
            rc = cli_fail(&e);
    }
    for (int i = 0; i < n; i++)
        free(help[i]);
    free(help);
    free(b.s);
    return rc;
}
