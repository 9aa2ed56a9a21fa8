/*
 * exec.h: the executor: apply a plan file (format efplan-plan v1) on a
 * cluster, slot by slot, and report back what happened.
 *
 *   exec_plan_*     read a plan file and the job queue it was made from
 *   exec_diff       what to do at a slot boundary: start / keep / resize /
 *                   migrate / stop, given what runs and what the slot says
 *   exec_journal_*  the append-only journal (one JSON object per line,
 *                   fsynced) and its replay after a crash
 *   exec_nodes_*    the node table: plan node k -> the cluster's name for
 *                   it (--nodes FILE or sinfo), one for every backend
 *   exec_backend    how jobs are launched, signalled, polled and stopped:
 *                   local processes, Slurm, or a dry run that prints what
 *                   it would do
 *   exec_apply      the loop that ties them together
 *   exec_state_*    the state file: a job queue that `efplan plan --jobs`
 *                   reads (iterations done, current placement, failures)
 *
 * The library never prints: progress lines go to a callback the caller
 * gives (exec_opts.say), the dry run's lines to another (exec_opts.out).
 * Errors come back as ef_err.
 */
#ifndef EF_EXEC_H
#define EF_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/htime.h"
#include "common/util.h"
#include "model/jobs.h"
#include "planner/planio.h"

/* ---- the plan as apply reads it ---------------------------------------- */

/* Where and how an attempt runs: the plan file's placement (planio.h): n
 * (node, gpu) pairs sorted by node then GPU, GPU indices local to the
 * node (n == 0: nowhere, not running), and 'batch', the batch size of an
 * elastic-batch allocation (0: the job's own batch_size). */
typedef placement exec_place;

typedef struct exec_alloc {
    int job;          /* index into exec_plan.jobs */
    exec_place place; /* with the allocation's batch size */
} exec_alloc;

typedef struct exec_slot {
    int64_t start, end;
    int nalloc;
    exec_alloc *a;
} exec_slot;

typedef struct exec_job {
    char *id;
    int64_t iterations;       /* total */
    int64_t iterations_done;  /* at the plan's start */
    int64_t planned_end;      /* -1 if never */
    int64_t deadline;         /* -1: none (best-effort) */
    plan_decision decision;   /* admitted, rejected or best_effort */
    long batch_size;          /* its batch size (elastic jobs: the one its
                                 iterations count at) */
    const job *in;            /* the job in the queue file (command etc.) */
    int port;                 /* MASTER_PORT, unique within the plan */
    char safe[96];            /* id made safe for file and Slurm names:
                                 [A-Za-z0-9_.-], unique in the plan */
} exec_job;

typedef struct exec_plan {
    char *path;
    char hash[17];            /* FNV-1a 64 of the plan file, hex */
    int nodes, gpus_per_node;
    int64_t now, end;
    int slot_seconds;
    char *jobs_file;          /* as recorded in the plan */
    int njobs;
    exec_job *jobs;           /* sorted by id */
    int nslots;
    exec_slot *slots;         /* consecutive from now */
    job_queue q;              /* the jobs file (exec_plan_attach_jobs) */
} exec_plan;

/* Parse plan JSON from a buffer ('path' names it in messages) with the
 * plan file's reader (plan_doc_parse: every member and what the file
 * promises as a whole: known jobs, consecutive slots, placements inside
 * the cluster, no GPU given twice in a slot), and gives each job its file
 * and Slurm name (exec_job.safe). Errors are EF_E_INPUT with the JSON
 * path, or naming two jobs whose names would be the same. On success *p
 * owns everything; free with exec_plan_free. */
int exec_plan_parse(exec_plan *p, const char *path, const char *buf,
                    size_t len, ef_err *e);

/* Load the jobs file that gives each job its command: 'jobs_path' if not
 * NULL, else the plan's jobs_file (plan_jobs_file_find: relative to the
 * plan file's directory, then to the current directory). Every plan job must be in it
 * (same id, same iterations). EF_E_INPUT on a missing file or mismatch. */
int exec_plan_attach_jobs(exec_plan *p, const char *jobs_path, ef_err *e);

/* exec_plan_parse on a file, then exec_plan_attach_jobs. */
int exec_plan_load(exec_plan *p, const char *path, const char *jobs_path,
                   ef_err *e);

/* An exec_plan without slots for the jobs of queue 'q' (taken: *q is
 * empty after; every job's 'in' points into p->q), on a cluster of
 * 'nodes' x 'gpus_per_node' with 'slot' second slots: what efplan serve's
 * loop hands the backends (names, ports and commands as a plan file's
 * jobs get them). 'path' names it in messages. Errors: two jobs whose
 * file names would be the same (EF_E_INPUT; *p empty). */
int exec_plan_of_queue(exec_plan *p, const char *path, job_queue *q,
                       int nodes, int gpus_per_node, int slot, ef_err *e);

void exec_plan_free(exec_plan *p);

/* Index of the job with id 'id', or -1. */
int exec_plan_find(const exec_plan *p, const char *id);

/* The plan hash apply records (exec_plan.hash, the journal's "hash"): FNV-1a
 * 64 of the file's bytes buf[0..len-1], 16 hex digits and a NUL into
 * out. */
void exec_plan_hash(const char *buf, size_t len, char out[17]);

/*
 * exec_expected: the iterations job j of plan p is expected to have done
 * by plan time t if it runs as the plan says. The plan file holds no
 * speed per slot, so the work it plans (iterations - iterations_done at
 * the plan's now) is spread over the GPU-seconds the slots give the job
 * up to its planned_end: by t the job is expected to have done
 *   iterations_done + floor(work * G(t) / G(planned_end))
 * where G(u) is the sum over its allocations of GPUs x seconds of the
 * slot before min(u, planned_end). So a slot on 4 GPUs counts twice a
 * slot on 2 (near-linear scaling; a curve that scales worse makes the
 * expectation early in a job's big slots a little high); at and after
 * planned_end it is 'iterations'. A job without planned_end (best-effort
 * or rejected: the plan promises nothing) is expected to have done its
 * iterations_done only.
 */
int64_t exec_expected(const exec_plan *p, int j, int64_t t);

/* Index of the slot containing plan time t ([start, end)), or -1 when t is
 * before the first slot or at/after the last one's end. */
int exec_plan_slot_at(const exec_plan *p, int64_t t);

/* 1 if a and b hold the same (node, gpu) pairs and batch size. */
static inline int exec_place_equal(const exec_place *a, const exec_place *b)
{
    return placement_equal(a, b);
}
/* Deep copy into *dst (freeing what dst held). */
static inline void exec_place_copy(exec_place *dst, const exec_place *src)
{
    placement_copy(dst, src);
}
static inline void exec_place_free(exec_place *pl)
{
    placement_free(pl);
}
/* 1 if a and b run on the same nodes with the same number of GPUs on
 * each, at the same batch size: the GPU indices inside a node may
 * differ (what a cluster that chooses them itself, Slurm, can be held
 * to; exec_backend.placed). */
int exec_place_same_shape(const exec_place *a, const exec_place *b);

/*
 * exec_place_follow: where efplan counts n attempts as running, given
 * what the cluster says. model[i] is where efplan's records put attempt
 * i (the plan's GPUs at its launch), real[i] where the cluster says it
 * runs (n == 0: not known), live[i] whether it holds GPUs now, on a
 * cluster of 'nodes' x 'gpus_per_node'. The planner takes only buddy
 * placements (one aligned block inside a node, or whole nodes) that no
 * two jobs share, and a cluster that picks the indices itself (Slurm:
 * the lowest free ones) need not give one. So a node is followed as a
 * whole: when every live attempt holding GPUs on it has a known real
 * placement, each of them a buddy placement, the model of each such
 * attempt becomes its real placement (its batch kept); otherwise the
 * node's models stay as they are. Real placements never overlap (the
 * cluster gives a GPU to one job), so a followed node stays valid.
 * Returns how many models changed (changed[i] = 1 for each; may be
 * NULL). Models are deep copies (exec_place_copy).
 */
int exec_place_follow(int n, exec_place *model, const exec_place *real,
                      const char *live, int nodes, int gpus_per_node,
                      char *changed);

/* 1 if pl follows the buddy rule on a cluster of 'nodes' x
 * 'gpus_per_node' (planner/place.h: a power of two, one aligned block
 * inside a node, or whole nodes). */
int exec_place_is_buddy(const exec_place *pl, int nodes, int gpus_per_node);

/* The distinct nodes of pl, ascending, into nodes[] (room for pl->n);
 * returns their count. */
int exec_place_nodes(const exec_place *pl, int *nodes);
/* "node 0 GPUs 0,1" / "nodes 0,1 GPUs 0-7 each" style text into dst. */
const char *exec_place_str(const exec_place *pl, char *dst, size_t len);
/* The GPU indices on 'node', comma separated ("0,1,2,3"), into dst. */
const char *exec_place_gpus(const exec_place *pl, int node, char *dst,
                            size_t len);

/* ---- the slot diff ------------------------------------------------------- */

typedef enum exec_act {
    EXEC_KEEP = 0,  /* runs, and the slot keeps it where it is */
    EXEC_START,     /* not running; the slot gives it GPUs */
    EXEC_RESIZE,    /* runs; the slot gives it another GPU count or
                       batch size */
    EXEC_MIGRATE,   /* runs; same count, other GPUs */
    EXEC_STOP       /* runs; the slot gives it nothing */
} exec_act;

typedef struct exec_action {
    exec_act act;
    int job;
} exec_action;

/* Name of an action ("start", ...). */
const char *exec_act_name(exec_act a);

/*
 * exec_diff: compare what runs (cur[j], n == 0: not running) with what the
 * slot wants (want[j], n == 0: nothing) for the njobs jobs, and fill
 * out[] (room for njobs) with one action per job that runs or is wanted,
 * ordered for execution: every STOP, RESIZE and MIGRATE first (their
 * stop halves free GPUs), then START, then KEEP; within one kind by job
 * index (the plan sorts jobs by id). Returns the number of actions. A
 * RESIZE or MIGRATE is carried out as a checkpoint-stop then a start.
 */
int exec_diff(const exec_place *cur, const exec_place *want, int njobs,
              exec_action *out);

/* ---- journal ------------------------------------------------------------- */

typedef enum exec_jstatus {
    EXEC_J_PENDING = 0,  /* not done, not failed */
    EXEC_J_DONE,         /* its work is done (exit 0, or progress reached) */
    EXEC_J_FAILED        /* its command failed: not relaunched */
} exec_jstatus;

/* What the journal says about one job. */
typedef struct exec_jjob {
    exec_jstatus status;
    int attempt;          /* highest attempt number intended (0: none) */
    int running;          /* attempt 'attempt' was launched and not ended */
    int start_in_doubt;   /* a launch intended, its outcome not recorded */
    int stop_in_doubt;    /* a stop intended, its outcome not recorded */
    exec_place place;     /* where attempt 'attempt' runs / was meant to */
    char handle[128];     /* backend handle of the running attempt */
    int64_t progress;     /* last iterations done read (-1 unknown) */
    int exit_code;        /* failed: the exit status text's number */
    char why[160];        /* failed: "exit 3" / "signal 9" / "lost" */
    int had_place;        /* was running when the last apply ended */
    exec_place real;      /* where attempt 'attempt' really runs, as the
                             cluster said ("placed"; n == 0: not known) */
    double start_at;      /* wall clock of the last launch intent */
    int retries;          /* attempts ended "retry" (port in use) */
    int warned;           /* the attempt a "warning" record was written
                             for (0: none) */
} exec_jjob;

typedef struct exec_replay {
    int begun, ended;
    char hash[17];        /* the plan it follows: the begin record's, or
                             the last "plan" record's */
    int plans;            /* "plan" records read */
    long unknown_line;    /* a record (its number) about a job this plan
                             lacks, with no "plan" record after it yet;
                             0: none */
    char unknown[256];    /* that job's id */
    char backend[16];
    double anchor_wall;   /* wall-clock seconds at plan time anchor_plan */
    int64_t anchor_plan;
    double scale;         /* plan seconds per wall second */
    int follow;           /* the clock follows the jobs (exec_opts.follow) */
    int64_t last_slot;    /* start of the last slot applied, -1 none */
    int njobs;
    exec_jjob *jobs;      /* per plan job */
    int records;          /* well-formed records read */
    int torn;             /* 1 if a torn last line was dropped */
} exec_replay;

/* The slowest and the fastest plan clock, plan seconds per wall second
 * (--time-scale of apply, nightly and serve, and a journal's begin
 * record): a plan span (< 2e15 s) over the scale stays a wall time an
 * integer holds (Slurm's --time). */
#define EXEC_MIN_SCALE 1e-3
#define EXEC_MAX_SCALE 1e6

/* The journal's records: one JSON object per line, "ev" naming its type.
 * Each type has its own members (the record table in journal.c, used to
 * write them and to replay them):
 *   begin        plan, hash, backend, anchor_wall (wall seconds, 0 to
 *                EF_MAX_I64), anchor_plan, scale (EXEC_MIN_SCALE
 *                to EXEC_MAX_SCALE), follow (true when the clock follows the
 *                jobs; absent otherwise)
 *   resume       time
 *   start        job, attempt, place (the plan's placement shape), batch
 *                (an elastic-batch allocation's batch size), slot, at
 *   started      job, attempt, handle, adopted (found after a restart)
 *   start_failed job, attempt, why
 *   stop         job, attempt, why
 *   stopped      job, attempt, why, how, progress
 *   exit         job, attempt, code, why, result, log, progress
 *   done         job, progress
 *   placed       job, attempt, place (where the cluster says the attempt
 *                runs: Slurm picks the GPU indices inside a node), differs
 *                (true when they are not the GPUs of its start)
 *   slot         start, running
 *   error        msg
 *   end          time
 *   warning      job, attempt, msg (the attempt runs another world size
 *                than its allocation; informational)
 *   plan         plan, hash: from here on the apply follows this plan
 *                (a new version of its plan file, written by efplan
 *                submit, or the next night's plan, efplan nightly);
 *                every job the earlier plan had that the new one lacks
 *                was stopped before it, so a record about such a job
 *                may only come before a "plan" record */
typedef enum exec_rtype {
    EXEC_R_BEGIN, EXEC_R_RESUME, EXEC_R_START, EXEC_R_STARTED,
    EXEC_R_START_FAILED, EXEC_R_STOP, EXEC_R_STOPPED, EXEC_R_EXIT,
    EXEC_R_DONE, EXEC_R_SLOT, EXEC_R_ERROR, EXEC_R_END, EXEC_R_WARNING,
    EXEC_R_PLACED, EXEC_R_PLAN,
    EXEC_R_COUNT
} exec_rtype;

typedef enum exec_result {
    EXEC_RESULT_DONE = 0,   /* "done" */
    EXEC_RESULT_FAILED,     /* "failed" */
    EXEC_RESULT_RETRY       /* "retry": it failed to bind its rendezvous
                               port (exec_log_addr_in_use); the job stays
                               pending and is launched again */
} exec_result;

/* One record; only the members of its type are written and read. */
typedef struct exec_rec {
    exec_rtype ev;
    const char *job;          /* job id */
    int attempt;
    exec_place place;         /* start: where, and at which batch size;
                                 placed: where the cluster put it */
    int differs;              /* placed: not the GPUs of its start */
    int64_t slot;             /* start: the start of the slot */
    double at;                /* start: wall clock of the intent */
    const char *handle;       /* started: the backend's handle */
    int adopted;              /* started: found after a restart */
    const char *why, *how;    /* why it started / stopped / failed */
    int64_t progress;         /* iterations done read; -1 unknown */
    int code;                 /* exit: exit code, -1 for none */
    exec_result result;       /* exit */
    const char *log;          /* exit: the attempt's log */
    const char *plan, *hash, *backend; /* begin; plan: plan, hash */
    double anchor_wall, scale;         /* begin */
    int64_t anchor_plan;               /* begin */
    int follow;                        /* begin: exec_opts.follow */
    int64_t start;            /* slot: its start */
    int running;              /* slot: attempts running */
    int64_t time;             /* resume, end: plan time */
    const char *msg;          /* error */
} exec_rec;

/* The record as one journal line (heap, no newline): compact JSON, keys
 * sorted, the members of its type only. */
char *exec_rec_json(const exec_rec *rec);

/* Read one journal line into *rec, checking it against its type's members
 * (unknown type, missing or unknown member, wrong type: EF_E_INPUT,
 * "start: missing required key ..."). Strings and the placement live in
 * arena 'a'. */
int exec_rec_parse(const char *line, exec_rec *rec, jf_arena *a, ef_err *e);

/* 1 if a and b are records of one type with the same members. */
int exec_rec_equal(const exec_rec *a, const exec_rec *b);

/*
 * exec_journal_replay: read the journal at 'path' (a missing file is an
 * empty journal) against plan p and rebuild *r. A last line without its
 * newline (the writer was killed mid-write) is dropped; any other
 * malformed line, or a job id the plan lacks in a record that no "plan"
 * record follows (one before it is about an earlier plan's job, stopped
 * before the switch), is EF_E_INPUT naming path:line. Free r with
 * exec_replay_free.
 */
int exec_journal_replay(const char *path, const exec_plan *p,
                        exec_replay *r, ef_err *e);
void exec_replay_free(exec_replay *r);

/* An empty replay for plan p (no record yet): what exec_journal_replay
 * gives for a missing journal. Free with exec_replay_free. */
void exec_replay_init(exec_replay *r, const exec_plan *p);

/* Apply one journal record (a JSON object as text, exec_rec_parse) to *r,
 * as replay does; used by exec_journal_append to keep the in-memory state
 * in step, and by the dry run, whose journal is only in memory. A record
 * about a job p lacks is noted in r->unknown_line (the record's number,
 * r->records + 1) and r->unknown, for the caller to judge (replay: an
 * error unless a "plan" record follows); appending one is an error. */
int exec_replay_record(exec_replay *r, const exec_plan *p, const char *line,
                       ef_err *e);

typedef struct exec_journal {
    int fd;
    char *path;
} exec_journal;

/* Open (create) the journal for appending; a torn last line is cut off
 * first so that new records start on a line of their own. */
int exec_journal_open(exec_journal *j, const char *path, ef_err *e);

/* Append one record (a JSON object text without newline), write it in one
 * write(2) and fsync. Also applies it to *r (when r is not NULL). */
int exec_journal_append(exec_journal *j, exec_replay *r, const exec_plan *p,
                        const char *record, ef_err *e);
/* exec_rec_json of 'rec', then exec_journal_append: how apply writes. */
int exec_journal_put(exec_journal *j, exec_replay *r, const exec_plan *p,
                     const exec_rec *rec, ef_err *e);
void exec_journal_close(exec_journal *j);

/* ---- the node table ------------------------------------------------------ */

/* Plan node k -> the name the cluster knows it by: the Slurm node of
 * --nodelist, and the MASTER_ADDR of a job whose first node it is (the
 * dry run's; the Slurm backend uses the node's NodeAddr). */
typedef struct exec_nodes {
    int n;
    char **name;      /* n names, distinct */
    char *src;        /* where they came from: the file, or "sinfo" */
    int lines;        /* lines read */
} exec_nodes;

/*
 * exec_hostlist: the names of a Slurm host list 's' ("gpu[01-04]",
 * "gpu[01-02,07],cpu3", "r[1-2]-g[1-2]"): items separated by ','
 * outside brackets, each a name with bracketed ranges "LO-HI" or numbers
 * separated by ','; a range keeps LO's zero padding ("01-10": 01..10).
 * Appends the names in order to (*names, *n) (heap, each heap). Returns
 * EF_OK, or EF_ERR with 'why' (a static string: what is wrong) when 's'
 * is empty or not a host list (unbalanced or nested brackets, a range
 * whose LO > HI, a blank or '#'), or would give over 65,536 names.
 */
int exec_hostlist(const char *s, char ***names, int *n, const char **why);

/*
 * exec_nodes_parse: node names from 'text' (NUL-terminated; modified), one
 * a line: spaces, tabs and a CR around a name are trimmed; empty lines and
 * lines that start with '#' are skipped. 'src' names the text in messages.
 * listing 0 (a --nodes file): a line may also be a Slurm host list
 * (exec_hostlist: "gpu[01-04]", "gpu01,gpu02"), its names in order; the
 * k-th name is plan node k-1, and a name given twice is an error;
 * listing 1 (sinfo's output, a node once per partition): one name a
 * line, repeats dropped and the names sorted. A name holding a space,
 * tab or CR, or (listing 1) ',', '[' or ']', is an error. Errors:
 * EF_E_INPUT "SRC:LINE: ...". On success *t owns its names (free with
 * exec_nodes_free); on error *t is empty.
 */
int exec_nodes_parse(exec_nodes *t, const char *src, char *text, int listing,
                     ef_err *e);

/* exec_nodes_parse (listing 0) of the file at 'path' (--nodes FILE); a
 * 'path' that names no file, holds no '/' but a '[' or ',' and reads as
 * a host list (exec_hostlist: --nodes 'gpu[01-04]') is that list (src
 * "--nodes LIST"). A file that cannot be read is EF_E_INPUT too. */
int exec_nodes_load(exec_nodes *t, const char *path, ef_err *e);

/* EF_OK if t names every node of plan p's cluster (t->n >= p->nodes),
 * else EF_E_INPUT naming t->src, how many names it has in how many lines,
 * and the first plan node without a name. */
int exec_nodes_check(const exec_nodes *t, const exec_plan *p, ef_err *e);

/* The name of plan node 'node': t's (t checked with exec_nodes_check), or
 * "node<N>" written into tmp where t has none (an empty table: the dry run
 * without --nodes). */
const char *exec_nodes_name(const exec_nodes *t, int node, char *tmp,
                            size_t len);

/* Free the names; *t is empty again (an empty table is {0}). */
void exec_nodes_free(exec_nodes *t);

/* ---- Slurm settings ------------------------------------------------------ */

/* What efplan apply and serve pass to sbatch for a shared cluster
 * (--partition, --account, --qos, --sbatch-arg): borrowed strings, NULL
 * or 0 when not given. */
typedef struct exec_slurm_opts {
    const char *partition;   /* --partition=P; with no --nodes file the
                                node table is this partition's nodes */
    const char *account;     /* --account=A */
    const char *qos;         /* --qos=Q */
    int nargs;
    const char *const *args; /* more sbatch words, in order, each one argv
                                word (exec_slurm_check_arg) */
} exec_slurm_opts;

/* 1 when any member of o is given (the options go with --backend slurm
 * only). */
int exec_slurm_opts_any(const exec_slurm_opts *o);

/*
 * exec_slurm_check_arg: EF_OK if 'word' may go to sbatch as an
 * --sbatch-arg: one option word ("--name", "--name=value" or "-Xvalue";
 * a value as a word of its own cannot be told from a script, so
 * "--mem 4G" -- an option, a blank and its value in one word -- is
 * refused with the word to write instead: --mem=4G). --gres=VALUE whose
 * resources are none of GPUs ("nvme:1,license") is allowed: the Slurm
 * backend adds them to its own --gres=gpu:N. EF_E_USAGE naming the word
 * when it sets what efplan owns: --job-name/-J, --nodes/-N,
 * --nodelist/-w, --ntasks/-n and --ntasks-per-*, --gres with a GPU
 * resource (gpu or gpu:...), --gpus/-G and
 * --gpus-per-*, --time/-t, --output/-o, --error/-e, --open-mode,
 * --parsable, --partition/-p, --account/-A and --qos/-q (options of
 * their own), or what would keep sbatch from submitting one batch job
 * and printing its id: --array/-a, --wrap, --test-only, --wait/-W,
 * --help/-h, --usage, --version/-V. A long name is refused when it is
 * a prefix of one of those (sbatch takes unambiguous prefixes).
 */
int exec_slurm_check_arg(const char *word, ef_err *e);

/* ---- backends ------------------------------------------------------------ */

typedef struct exec_ctx exec_ctx;

/* Who an attempt runs as (efplan serve): a Unix account, as the password
 * database gives it. */
#define EXEC_USER_GROUPS 64
typedef struct exec_user {
    char name[64];
    uid_t uid;
    gid_t gid;
    char home[512], shell[256];
    int ngroups;                    /* its groups (the first 64) */
    gid_t groups[EXEC_USER_GROUPS];
} exec_user;

/* The account 'name' (getpwnam_r): EF_E_INPUT naming it when this host
 * has none. */
int exec_user_lookup(const char *name, exec_user *u, ef_err *e);
/* The executor's own account (its effective uid; one without a passwd
 * entry gets its uid as name, / as home). */
int exec_user_self(exec_user *u, ef_err *e);
/* A job's whole environment as account u: PATH (/usr/local/bin:/usr/bin:
 * /bin), HOME, USER, LOGNAME and SHELL of u unless 'add' sets them, then
 * 'add' ("KEY=VALUE", NULL-terminated, may be NULL): nothing of the
 * executor's own environment. Heap; free with exec_strv_free. */
char **exec_user_env(const exec_user *u, char *const *add);
/* In a child about to exec: become u for good (setgroups, setgid,
 * setuid; a no-op when u is who we are already) and check that there is
 * no way back: 0, or -1 (errno) when any step failed. */
int exec_user_become(const exec_user *u);

/* One attempt of one job, as a backend sees it. */
typedef struct exec_run {
    int job;             /* plan job index */
    int attempt;         /* 1, 2, ... */
    const exec_user *user; /* NULL: as the executor, in its environment
                            (efplan apply, serve --single-user); else as
                            this account (efplan serve: the job's owner's
                            or the job user), in exec_user_env's
                            environment, its working directory its job's
                            directory unless it names one; under Slurm
                            sbatch --uid/--gid when the account is not
                            the executor's (root only) */
    const exec_place *place;
    double wall_limit;   /* seconds it may run (Slurm --time), > 0 */
    int port;            /* the rendezvous port (MASTER_PORT) of this
                            attempt; 0: the job's (exec_job.port). The
                            local backend's launch picks a free one
                            (exec_pick_port) */
    char handle[128];    /* filled by launch / find */
} exec_run;

typedef enum exec_pstate {
    EXEC_P_RUNNING = 0,
    EXEC_P_EXITED,       /* exit status known: code / sig */
    EXEC_P_GONE          /* no process and no exit status (killed) */
} exec_pstate;

typedef struct exec_pstatus {
    exec_pstate state;
    int code;            /* EXITED: exit code, or 128 + signal */
    int sig;             /* EXITED by a signal: its number, else 0 */
} exec_pstatus;

/*
 * A backend: every function returns EF_OK or EF_ERR (EF_E_INPUT for a
 * problem with the plan or configuration, EF_E_INTERNAL when the cluster
 * cannot be reached or refuses). 'find' looks for an attempt that a
 * previous, killed executor may have launched: 1 found (handle filled),
 * 0 not launched. 'release' frees what 'prepare' made; it is called once
 * at the end, also when 'prepare' was not (or failed).
 */
typedef struct exec_backend {
    const char *name;
    /* 1: runs nothing (the dry run). exec_apply then keeps the journal in
     * memory, creates, locks, reads and writes nothing in the state
     * directory, lets jobs without a command through, prints no progress
     * lines (say), and runs a plan clock of its own that goes from slot
     * boundary to slot boundary without waiting; the backend tells what
     * it would do through exec_ctx.out. */
    int dry;
    int (*prepare)(exec_ctx *x, ef_err *e);
    int (*launch)(exec_ctx *x, exec_run *r, ef_err *e);
    int (*signal)(exec_ctx *x, const exec_run *r, int sig, ef_err *e);
    int (*poll)(exec_ctx *x, const exec_run *r, exec_pstatus *st, ef_err *e);
    int (*stop)(exec_ctx *x, const exec_run *r, ef_err *e);
    int (*find)(exec_ctx *x, exec_run *r, ef_err *e);
    /* Optional (NULL: not told). What the loop is about to do at plan time
     * x->now, before it does it: slot s's n actions as exec_diff ordered
     * them (KEEP included; called at every tick of the slot), or, with
     * s == -1, the end of the window: one EXEC_STOP for each job that
     * still runs (n may be 0). */
    void (*announce)(exec_ctx *x, int s, const exec_action *act, int n);
    /* Optional (NULL: the backend cannot tell). Which nodes of the node
     * table the cluster reports unusable now: down[k] = 1 for node k
     * (room for x->nodes.n), with the cluster's word for it in
     * why[k] (16 bytes each, e.g. "drain"). */
    int (*nodes_down)(exec_ctx *x, char *down, char (*why)[16], ef_err *e);
    /* Optional (NULL: every attempt runs on exactly the GPUs of its
     * placement, as the local backend runs it). A backend whose cluster
     * picks the GPU indices inside each node itself (Slurm: --gres asks
     * for a count) tells where running attempt r really is: into *real
     * (heap arrays, its batch r->place->batch; the caller frees it with
     * exec_place_free) the same nodes and GPU counts as r->place, the
     * indices the cluster gave. Returns 1 when known, 0 when not (yet:
     * not running, or an answer that names no indices; a backend may
     * ask its cluster at most every few seconds per attempt and answer
     * 0 in between), EF_ERR when the cluster cannot be asked. With this
     * hook the apply loop and the service's loop compare placements by
     * nodes and counts per node (exec_place_same_shape): a change of
     * indices inside a node is the cluster's, never a restart. */
    int (*placed)(exec_ctx *x, const exec_run *r, exec_place *real,
                  ef_err *e);
    void (*release)(exec_ctx *x);
} exec_backend;

extern const exec_backend exec_backend_local;
extern const exec_backend exec_backend_slurm;
extern const exec_backend exec_backend_dryrun;

/* The backend called 'name' ("local", "slurm", "dry-run"), or NULL. */
const exec_backend *exec_backend_find(const char *name);

/* Shared by the backends and the apply loop. */
struct exec_ctx {
    const exec_plan *p;
    const exec_backend *b;
    char *state;           /* absolute state directory (the dry run: as
                            * a real run would name it; it need not
                            * exist) */
    double scale;
    exec_nodes nodes;      /* --nodes FILE (read and checked by
                            * exec_apply), else sinfo's (the Slurm
                            * backend's prepare), else empty */
    const char *nodes_file;/* --nodes FILE, or NULL */
    exec_slurm_opts slurm; /* the Slurm backend's settings (borrowed) */
    int64_t now;           /* plan time of the loop's current tick */
    int64_t end;           /* plan time the window ends at */
    /* where a backend that prints (the dry run) writes its lines, without
     * newline (exec_opts.out and .arg); out may be NULL */
    void (*out)(void *arg, const char *line);
    void *arg;
    void *priv;            /* backend's own data */
};

/* Paths under the state directory for job j, attempt a, into dst:
 *   STATE/run/JOB.A.EXT        the executor's own files (0700 directory)
 *   STATE/jobs/JOB/            the job's own directory (its user's, 0700)
 *   STATE/jobs/JOB/A.log       the attempt's output
 *   STATE/jobs/JOB/progress    EFPLAN_PROGRESS_FILE
 *   STATE/jobs/JOB/checkpoints EFPLAN_CHECKPOINT_DIR
 * (JOB: exec_job.safe). */
const char *exec_path_job(const exec_ctx *x, int j, char *dst, size_t len);
const char *exec_path_log(const exec_ctx *x, int j, int a, char *dst,
                          size_t len);
const char *exec_path_progress(const exec_ctx *x, int j, char *dst,
                               size_t len);
const char *exec_path_run(const exec_ctx *x, int j, int a, const char *ext,
                          char *dst, size_t len);
/* STATE/jobs/JOB/checkpoints: the job's own directory for its
 * checkpoints (EFPLAN_CHECKPOINT_DIR), kept across its attempts. */
const char *exec_path_checkpoints(const exec_ctx *x, int j, char *dst,
                                  size_t len);

/* mkdir 'path' (exec_make_dir: 0755) unless it is a directory already
 * (a link is not one); one of ours gets exactly 'mode'. EF_E_INPUT naming
 * it when it cannot be created or is not a directory. */
int exec_make_dir(const char *path, ef_err *e);
int exec_make_dir_mode(const char *path, mode_t mode, ef_err *e);
/* Create state directory 'dir' (0711: passed through, not listed) and
 * its run/ (0700) and jobs/ (0711); its absolute path into
 * real[PATH_MAX]. */
int exec_state_dirs(const char *dir, char *real, ef_err *e);
/* Create job j's directory and its checkpoints/ (a backend's launch,
 * before the command runs), 0700, owned by account u (NULL: the
 * executor). As another account (root only): a new directory is made and
 * given to u; one that exists must be u's already (else EF_E_INPUT: it
 * is never taken from its owner), and what is inside is left to u.
 * exec_make_checkpoints is exec_make_job_dir with u NULL. */
int exec_make_job_dir(const exec_ctx *x, int j, const exec_user *u,
                      ef_err *e);
int exec_make_checkpoints(const exec_ctx *x, int j, ef_err *e);

/* ---- rendezvous ---------------------------------------------------------- */

/* 1 if TCP port 'port' can be bound on every address of this host (IPv6
 * dual-stack, else IPv4; no SO_REUSEADDR, so a port in TIME_WAIT counts
 * as taken): nobody listens there now. */
int exec_port_free(int port);

/* The rendezvous port for attempt r on this host: the first free port
 * (exec_port_free) from the job's port + (attempt - 1), within
 * 29500..30499 + jobs (wrapping), so that each attempt of a job starts
 * somewhere new and a relaunch after "address in use" tries another. The
 * job's port when none of 512 is free. */
int exec_pick_port(const exec_ctx *x, const exec_run *r);

/* 1 if the last 64 KiB of attempt a's log say it could not bind an
 * address ("Address already in use", EADDRINUSE, errno 98): the
 * rendezvous port was taken between the pick and the bind, and the job
 * is launched again (another port) without counting as a failure. */
int exec_log_addr_in_use(const exec_ctx *x, int j, int a);

/* ---- world size ---------------------------------------------------------- */

/* The world size attempt 'attempt' of job j wrote to its progress file:
 * "N world=W attempt=A" (A: its EFPLAN_ATTEMPT), or 0 when the file says
 * none, or says it for another attempt. */
int exec_read_world(const exec_ctx *x, int j, int attempt);

/*
 * exec_world_check: does attempt r run the world its allocation is
 * (r->place->n processes on its nodes)? From what the job said (world >
 * 0: the size it reported, exec_read_world), or, with world 0, from its
 * command: a torchrun (or python -m torch.distributed.run) whose
 * --nproc-per-node / --nproc_per_node or --nnodes is a fixed number
 * other than the attempt's. Returns 1 with the warning in msg (job id,
 * what it runs, what it was given) when they differ, else 0.
 */
int exec_world_check(const exec_ctx *x, const exec_run *r, int world,
                     char *msg, size_t len);

/* Append "efplan: LINE\n" to attempt a's log (best effort). */
void exec_log_note(const exec_ctx *x, int j, int a, const char *line);


/* The first bytes (at most len - 1) of the small file at 'path' into buf,
 * NUL-terminated ("" when nothing was read). Returns how many were read,
 * or -1 when the file cannot be opened or read. Allocates nothing (safe in
 * a forked child). */
int exec_read_small(const char *path, char *buf, size_t len);

/* Iterations done as the job last wrote them to its progress file, or -1
 * (no file, not a number, or a dry backend, which reads nothing). */
int64_t exec_read_progress(const exec_ctx *x, int j);

/* Iterations job j has done, as the state file counts them: the largest
 * of the jobs file's iterations_done (the plan's when no jobs file is
 * attached), the last progress the journal r recorded, and its progress
 * file now (exec_read_progress). */
int64_t exec_job_progress(const exec_ctx *x, const exec_replay *r, int j);

/* An admitted job behind its plan when apply stopped (exec_behind_list). */
typedef struct exec_behind {
    int job;              /* plan job index */
    int64_t done;         /* exec_job_progress */
    int64_t expected;     /* exec_expected at the plan time apply stopped */
    int64_t deadline;     /* the job's deadline (-1: none) */
    int missed;           /* not done, and its deadline is at or before
                             that plan time */
} exec_behind;

/*
 * exec_behind_list: the jobs plan x->p admitted (decision "admitted")
 * that the journal r shows neither done nor failed (a failed job is
 * reported as failed) and whose progress (exec_job_progress) is below
 * exec_expected at plan time t, in plan order (by id), into *out (heap,
 * free with free(); NULL when there is none). Returns their count;
 * *missed (may be NULL) gets how many of them have missed their
 * deadline (deadline <= t). A dry backend (nothing runs, no progress is
 * read): none.
 */
int exec_behind_list(const exec_ctx *x, const exec_replay *r, int64_t t,
                     exec_behind **out, int *missed);

/*
 * exec_read_rc: the exit status a finished attempt left in its rc file
 * (exec_path_run "rc"): "exit N" or "signal S". 'shell': the file was
 * written by a shell as "exit $?", where N > 128 means killed by signal
 * N - 128 (the Slurm batch script); otherwise N is the exit code as is
 * (the local monitor writes "signal S" itself). Returns 1 and fills *st
 * (EXEC_P_EXITED, code, sig; code 128 + S for a signal) when the file
 * holds one of those forms, 0 when there is no file yet or it holds
 * neither (an attempt without an rc file is still running or lost).
 */
int exec_read_rc(const exec_ctx *x, const exec_run *r, int shell,
                 exec_pstatus *st);

/* The job's checkpoint signal (SIGTERM unless its "checkpoint_signal"
 * says otherwise) and grace in seconds (30 unless "grace_seconds"). */
int exec_job_signal(const exec_plan *p, int j);
int exec_job_grace(const exec_plan *p, int j);

/*
 * exec_launch_env: the environment added for one process of a launch
 * (NULL-terminated array of "KEY=VALUE", heap; free with exec_strv_free):
 * the job's own "env", then
 *   NNODES, NODE_RANK, NPROC_PER_NODE (GPUs per node), WORLD_SIZE (GPUs
 *   of the attempt), MASTER_ADDR, MASTER_PORT (r->port, else the job's);
 *   PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR,
 *   PET_MASTER_PORT: the same values, which torchrun takes as its
 *   options' defaults, so that a plain `torchrun train.py` follows the
 *   plan;
 *   RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK: where the process is
 *   one per GPU: local_rank >= 0 (a "per_gpu" job's process local_rank
 *   of node node_rank), or a per-node process on one GPU per node
 *   (local_rank -1, NPROC_PER_NODE 1; RANK is then NODE_RANK);
 *   CUDA_VISIBLE_DEVICES (the plan's GPUs on that node; omitted when cvd
 *   is 0), EFPLAN_JOB_ID, EFPLAN_PROGRESS_FILE, EFPLAN_CHECKPOINT_DIR
 *   (exec_path_checkpoints), EFPLAN_ATTEMPT, EFPLAN_ITERATIONS,
 *   EFPLAN_BATCH_SIZE (the attempt's batch size: r->place->batch in an
 *   elastic-batch allocation, else the job's).
 */
char **exec_launch_env(const exec_ctx *x, const exec_run *r, int node_rank,
                       int local_rank, const char *master_addr, int cvd);
void exec_strv_free(char **v);

/*
 * exec_run_cmd: run argv (no shell), wait, and capture at most outlen-1
 * bytes of its standard output (and error, when 'merge') into out. Returns
 * the exit status (0..255), 128 + signal, or -1 when it could not be run
 * (the reason in out). Without 'merge', its standard error is discarded.
 */
int exec_run_cmd(char *const *argv, char *out, size_t outlen, int merge);

/* exec_run_cmd with all of the output, whatever its size, appended to *out
 * (NUL-terminated; the caller frees out->s; a NUL byte in the output ends
 * the text that string functions see). */
int exec_run_capture(char *const *argv, ef_buf *out, int merge);

/* The sbatch command line of attempt r as the Slurm backend runs it, for
 * the dry run (no cluster needed; node names by exec_nodes_name): the
 * words of x->slurm.args, then --parsable, --job-name, x->slurm's
 * --partition, --account and --qos, --nodes, --nodelist,
 * --ntasks-per-node (1, or the GPUs per node of a "per_gpu" job),
 * --gres, --time, --output, --open-mode and the script; its argv words
 * joined by spaces, each as ef_sh_word writes it, into dst (cut at
 * len - 1 bytes). */
const char *exec_slurm_sbatch_line(exec_ctx *x, const exec_run *r, char *dst,
                                   size_t len);

/* The batch script of attempt r as the Slurm backend writes it to
 * run/JOB.A.sbatch (heap text, free with free()): the launch environment
 * (MASTER_ADDR the NodeAddr of the node it runs on, Slurm's first of the
 * job, when the backend's prepare read the addresses; else the first
 * plan node's name), the rendezvous port probed on that node (the first
 * port from r->port, else from the job's port + (attempt - 1) as
 * exec_pick_port counts, with nothing in LISTEN state in /proc/net/tcp
 * and tcp6) exported as MASTER_PORT and PET_MASTER_PORT and logged
 * ("efplan: rendezvous HOST:PORT"), the job's workdir and command (every
 * word quoted with ef_sh_quote; on several nodes or for a "per_gpu" job
 * through srun, each process's NODE_RANK and PET_NODE_RANK, and where a
 * process is one GPU's RANK, LOCAL_RANK, GROUP_RANK, LOCAL_WORLD_SIZE,
 * from Slurm's task variables), the checkpoint signal forwarded to the
 * command (through srun: to its tasks with scancel --signal), and the
 * command's exit status written to the attempt's rc file (exec_read_rc,
 * 'shell' form) and returned as the script's own. Runs under any POSIX
 * sh. The job must have a command. */
char *exec_slurm_script(exec_ctx *x, const exec_run *r);

/* ---- the apply loop ------------------------------------------------------ */

typedef struct exec_opts {
    const char *backend;      /* "local", "slurm" or "dry-run" */
    const char *state;        /* state directory (created; not by dry-run) */
    const char *nodes_file;   /* node names (exec_nodes_load), or NULL */
    exec_slurm_opts slurm;    /* --backend slurm: partition, account, qos,
                                 more sbatch words (zero: none) */
    int64_t until;            /* stop at this plan time; -1 none */
    int slots;                /* stop after this many slot entries; 0 all */
    double scale;             /* plan seconds per wall second (default 1;
                                 EXEC_MIN_SCALE to EXEC_MAX_SCALE) */
    int follow;               /* 1: the plan clock follows the jobs
                                 (--follow-jobs): it runs 'scale' plan
                                 seconds a second but never past the plan
                                 time by which a running job is expected
                                 (exec_expected) to have done more than
                                 its measured progress (exec_job_progress),
                                 nor past the next slot boundary before
                                 that slot is applied; so a slow machine
                                 stretches the clock instead of missing.
                                 Local and dry-run backends only; a
                                 resumed apply keeps its begin record's */
    double poll;              /* wall seconds between polls (default 0.2) */
    ef_ht_zone zone;          /* how progress lines show plan times on
                                 the wall clock (common/htime.h; times
                                 before 2000 stay seconds); EF_HT_UTC */
    int takeover;             /* 1: a state directory whose journal
                                 follows another plan is taken over
                                 (efplan nightly: the next night's plan)
                                 instead of refused: see exec_apply */
    /* Optional (NULL: never). Asked at every tick of a real backend:
     * 1 means another run takes over now (efplan nightly's next
     * night): apply stops applying at once, leaves what runs running,
     * writes the state file and returns (exec_report.handed_over). */
    int (*handover)(void *arg);
    /* progress lines (no newline; real backends); the dry run's lines
     * go to 'out' */
    void (*say)(void *arg, const char *line);
    void (*out)(void *arg, const char *line);
    void *arg;
} exec_opts;

void exec_opts_default(exec_opts *o);

/* What one apply did, for the caller's summary and exit code. */
typedef struct exec_report {
    int already_done;   /* the journal says it was applied: nothing done */
    int handed_over;    /* stopped for another run (exec_opts.handover),
                           what ran left running */
    int followed;       /* new versions of the plan file followed (a
                           submit's) and plans taken over */
    int kept;           /* taken over: attempts of the earlier plan kept
                           running (adopted by job id) */
    int removed;        /* taken over: attempts of jobs the plan lacks,
                           checkpointed and stopped */
    int complete;       /* reached the plan's end */
    int launched;       /* launches by this run */
    int done, failed, pending;  /* jobs, at exit */
    int64_t plan_time;  /* the plan time apply stopped at: the window's
                           end (the plan's end when already_done) */
    int nbehind;        /* admitted jobs behind their plan at plan_time
                           (exec_behind_list; real backends only) */
    int missed;         /* of them, not done by their deadline */
    exec_behind *behind;/* nbehind entries (heap; exec_report_free) */
    int state_written;  /* state_file was written by this run */
    char state_file[4200];
    char journal[4200];
} exec_report;

/* Free what *rep holds (behind) and zero it. exec_apply overwrites the
 * report without freeing it: free a used one before reusing it. */
void exec_report_free(exec_report *rep);

/*
 * exec_apply: apply plan p (loaded with its jobs) with the options given.
 * Reads o->nodes_file first, when given, and checks that it names every
 * node of the plan (exec_nodes_load, exec_nodes_check). Real backends:
 * keep a journal in the state directory, resume from it, run the clock
 * (scaled), act on each slot boundary, and write the state file at the
 * end (also after a backend error, when it can); the journal's "end"
 * record follows the state file, so a state file that cannot be written
 * (EF_E_INTERNAL) leaves the plan open for the rerun. dry-run: the same
 * loop with the dry backend (see exec_backend.dry): prints every slot's
 * actions, the exact launches (environment and command per node; the
 * sbatch line), the stops, and the jobs' planned completions through
 * o->out; runs nothing, writes nothing.
 *
 * A real backend claims the plan file for its whole run (planlock.h:
 * PLAN.lock, then PLAN.apply.lock naming the state directory), so that
 * no second apply runs it; then it checks that the file still holds the
 * bytes p was read from (else EF_E_INPUT: rewritten since, run again),
 * and keeps a copy of them in the state directory (DIR/plan.json). A
 * plan in a directory this user cannot write (the lock file cannot be
 * created: EACCES, EPERM, EROFS) is applied without the claim.
 *
 * Following the plan file: at every tick a real backend looks whether
 * the plan file changed (efplan submit rewrites it under PLAN.lock);
 * when it did, it reads the new version under PLAN.lock with its jobs
 * file and, when it is a successor (the same cluster and slot length,
 * every job of the current version in it), journals a "plan" record,
 * keeps the new copy and applies the new version from that tick on: p
 * is replaced by it (the caller frees what p holds at the end, as
 * always). A version that cannot be read or is no successor is said
 * once and the current one kept.
 *
 * A state directory whose journal follows another plan is taken over
 * when o->takeover is set or that plan is an earlier version of this
 * plan's file (the same real path): the earlier plan is read from the
 * path its journal names (with its jobs file), the attempts of its jobs
 * that this plan lacks are checkpointed and stopped, a "plan" record
 * is journalled, and the other attempts run on as this plan's (by job
 * id: kept where this plan's slot keeps their allocation). An earlier
 * plan that cannot be read while attempts of it may run is EF_E_INPUT.
 * Otherwise such a directory is refused, the message saying what is
 * safe (exec_state_look): resume that plan from its copy while its
 * attempts may still run, else give this plan a state directory of its
 * own.
 *
 * At the end (also when already applied), rep->behind lists the
 * admitted jobs behind their plan at rep->plan_time (exec_behind_list).
 * Errors: EF_E_USAGE (unknown backend), EF_E_INPUT (bad plan, node file
 * or state directory, another apply holds the state directory or the
 * plan, the plan file changed, a journal of another plan),
 * EF_E_INTERNAL (the backend failed; the journal tells what was done;
 * run again to resume). rep is filled in every case (free it with
 * exec_report_free).
 */
int exec_apply(exec_plan *p, const exec_opts *o, exec_report *rep,
               ef_err *e);

/* ---- the state file ------------------------------------------------------ */

/*
 * exec_state_json: the state file text (heap, keys sorted; written by
 * queue_write_json): the jobs file (format efplan-jobs v1) with every job
 * neither done nor failed, each with every field it had, its progress
 * raised to what the journal and progress files say (job_advance), its
 * placement when it was running at the end of this apply (a job the plan
 * lacks: unchanged), then the jobs added to the jobs file since the plan
 * read it (by hand, or by an efplan submit into another plan of that
 * jobs file), as given; plus "apply": {"behind": [{"deadline" (null:
 * none), "done", "expected", "id", "missed"}] (exec_behind_list at
 * plan_time), "complete", "failed": [{"attempt", "id", "job", "log",
 * "why"}], "finished": [ids], "journal", "plan", "plan_time"}.
 */
char *exec_state_json(const exec_ctx *x, const exec_replay *r, int complete,
                      int64_t plan_time);

/* What a state directory says about the plan it was applied with
 * (exec_state_look). */
typedef struct exec_look {
    int begun;            /* its journal has a begin record */
    char hash[17];        /* the plan it follows (exec_plan_hash): the one
                             it was begun with, or its last "plan"
                             record's */
    char plan[4096];      /* that plan's path, as the record names it */
    char backend[16];     /* with which backend */
    double anchor_wall;   /* its clock (the begin record): plan time */
    int64_t anchor_plan;  /* anchor_plan at wall-clock anchor_wall, */
    double scale;         /* running 'scale' plan seconds a second */
    int ended;            /* applied to its end (an end record after the
                             last "plan" record) */
    int known;            /* the state directory's copy of that plan
                             (DIR/plan.json) is there, with that hash: the
                             members below are known */
    int running;          /* attempts that may still run: running, or a
                             launch or stop whose outcome the journal
                             does not record */
    char first[256];      /* the first of them (plan order), "" none */
    char copy[4200];      /* DIR/plan.json */
} exec_look;

/*
 * exec_state_look: read the journal of state directory 'dir' on its own
 * terms: its begin record (the plan's hash and backend) and whether it
 * ended, and, with the copy of that plan apply keeps there
 * (DIR/plan.json, whose hash must be the journal's), a replay of the
 * journal against it: what may still run. Reads only, takes no lock. A
 * missing journal, or one without a begin record: l->begun 0. A copy that
 * is missing, of other bytes, or that cannot be read, parsed or replayed
 * against: l->known 0. Errors: EF_E_INPUT when the journal cannot be read
 * or a line of it does not parse ("JOURNAL:LINE: ...").
 */
int exec_state_look(const char *dir, exec_look *l, ef_err *e);

/* ---- efplan nightly: what a state folder remembers ------------------------ */

/*
 * What a nightly state folder remembers from night to night, in
 * DIR/queue.json: a job queue (efplan-jobs v1, what `efplan plan --jobs`
 * reads) of the jobs still to run, each with its progress
 * (iterations_done), where it ran (placement) and its promise
 * ("promised": admitted, or flagged at risk, by an earlier night's plan:
 * the planner keeps it admitted), plus, in the file's "apply" object:
 *   finished   ids of every job finished on an earlier night (sorted)
 *   failed     the jobs that failed, as state.json lists them
 *   nightly    {"queue_ids": the ids the users' queue held when last
 *              read (sorted), "night": {"plan", "jobs", "start",
 *              "until", "done", "queue_error"} the last night's plan,
 *              its jobs file, its window and whether it was closed}
 */
typedef struct exec_night {
    job_queue q;           /* the jobs still to run */
    json_t *apply;         /* the "apply" object above (owned) */
} exec_night;

/* Read the memory at 'path' into *m; a missing file is an empty memory
 * (no job, no night). Errors: EF_E_INPUT naming the file (a job queue
 * error, or an "apply" object of another shape). Free with
 * exec_night_free (also after an error). */
int exec_night_load(exec_night *m, const char *path, ef_err *e);
void exec_night_free(exec_night *m);

/* The memory's text (heap; keys sorted, queue_write_json). */
char *exec_night_text(const exec_night *m);

/* The last night as the memory records it (all 0 / "" when none):
 * its plan and jobs file paths, window and whether it was closed. */
typedef struct exec_night_info {
    int has;
    char plan[4096], jobs[4096];
    int64_t start, until;
    int done;
} exec_night_info;
void exec_night_last(const exec_night *m, exec_night_info *out);

/* What a merge did (exec_night_merge). */
typedef struct exec_night_merge_res {
    job *jobs;             /* the night's queue (heap array of shallow
                              copies borrowing from m and f; free() it) */
    int n;
    int added;             /* jobs of f the memory did not hold */
    int carried;           /* jobs of the memory in the night's queue */
    int dropped;           /* jobs of the memory the users removed */
    char dropped_first[256];
    int skipped;           /* jobs of f finished or failed before */
    char skipped_first[256];
} exec_night_merge_res;

/*
 * exec_night_merge: the night's queue from memory m and the users' queue
 * f (NULL: it could not be read; the memory's jobs alone), by id: each
 * job of f, in f's order, as f gives it (command, deadline, ...: a hand
 * edit counts), with the memory's progress when larger (job_advance),
 * its placement and its promise; a job of f the memory lists as
 * finished or failed is left out (skipped); then each job of the memory
 * that f lacks, kept unless the users removed it (f held it when last
 * read: its id is in queue_ids) -- a job submitted into a night's plan
 * (efplan submit) was never in f and is kept until done.
 */
void exec_night_merge(const exec_night *m, const job_queue *f,
                      exec_night_merge_res *r);

/*
 * exec_night_begin: record in m the night that starts: its queue q (the
 * merged jobs, as planned: every job plan p admits becomes promised),
 * the ids of the users' queue f (NULL: not read, kept as they were),
 * the plan and jobs file paths, its window [start, until), not done.
 */
void exec_night_begin(exec_night *m, const job_queue *q,
                      const plan *p, const job_queue *f,
                      const char *plan, const char *jobs, int64_t start,
                      int64_t until, const char *queue_error);

/*
 * exec_night_close: record in m the end of the night: its jobs become
 * the state file apply wrote at 'state' (NULL or unreadable: the jobs m
 * holds stay), with every job plan p (the version applied last)
 * admitted marked promised; the state file's finished and failed jobs
 * are added to the memory's; the night is marked done. Errors:
 * EF_E_INPUT when the state file exists but does not parse (m keeps its
 * jobs, and is marked done all the same).
 */
int exec_night_close(exec_night *m, const char *state, const exec_plan *p,
                     ef_err *e);

#endif
