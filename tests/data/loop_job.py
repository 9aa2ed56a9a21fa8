#!/usr/bin/env python3
# loop_job.py EVENTS [--speed F] [--scale S] [--per-gpu R | --tput G:T,...]
#             [--crash-at F] [--fail-at F]
#
# A stand-in training job that honours the executor's contract, for the
# closed-loop tests of efplan serve: it resumes from the iterations in
# $EFPLAN_PROGRESS_FILE, makes progress at F x its curve's speed on
# $WORLD_SIZE GPUs (R x GPUs iterations per plan second, linear; or T
# on G GPUs as --tput gives it), S plan seconds per wall second (the
# service's --time-scale), writes its progress file as it goes, checkpoints and exits 0 on SIGTERM
# (or SIGUSR1), and exits 0 when it reaches $EFPLAN_ITERATIONS.
# --crash-at F: the first time its progress passes F x iterations, it
# exits 3 (once per job: a marker file next to EVENTS remembers it).
# --fail-at F: every attempt exits 3 once its progress passes F x
# iterations (a job that never gets through).
# --bind-fail 1: its first start fails at once as torch does when its
# rendezvous port is taken ("Address already in use", exit 1; once per
# job, a marker file next to EVENTS).
# --world-off K: it reports its world size as WORLD_SIZE + K in its
# progress file ("N world=W attempt=A"), as a job that ignores its
# allocation would.
#
# It appends to EVENTS one line per start and end:
#   start JOB ATTEMPT GPUS WALL
#   end JOB ATTEMPT HOW PROGRESS WALL
# and "double JOB ATTEMPT" if another attempt of the same job holds the
# job's lock (two attempts at once: the loop's promise broken).
import fcntl
import os
import signal
import sys
import time

args = sys.argv[1:]
ev = args.pop(0)
opt = {"--speed": 1.0, "--scale": 1.0, "--per-gpu": 1.0, "--crash-at": -1.0,
       "--fail-at": -1.0, "--bind-fail": 0.0, "--world-off": 0.0}
tput = {}
while args:
    k = args.pop(0)
    if k == "--tput":  # G:T,G:T,... its curve, iterations/s on G GPUs
        for cell in args.pop(0).split(","):
            g, t = cell.split(":")
            tput[int(g)] = float(t)
        continue
    opt[k] = float(args.pop(0))

job = os.environ["EFPLAN_JOB_ID"]
att = os.environ.get("EFPLAN_ATTEMPT", "?")
pf = os.environ["EFPLAN_PROGRESS_FILE"]
total = int(os.environ["EFPLAN_ITERATIONS"])
gpus = int(os.environ.get("WORLD_SIZE", "1"))
curve = tput.get(gpus, opt["--per-gpu"] * gpus)
rate = opt["--speed"] * curve * opt["--scale"]


def log(line):
    with open(ev, "a") as f:
        f.write(line + "\n")


lock = open(ev + ".lock." + job, "w")
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    log("double %s %s" % (job, att))
    sys.exit(7)

try:
    with open(pf) as f:
        done = float((f.read().split() or ["0"])[0])
except (OSError, ValueError):
    done = 0.0


def save(p):
    tmp = "%s.tmp.%d" % (pf, os.getpid())
    with open(tmp, "w") as f:
        if opt["--world-off"]:
            f.write("%d world=%d attempt=%s\n"
                    % (int(p), gpus + int(opt["--world-off"]), att))
        else:
            f.write("%d\n" % int(p))
    os.replace(tmp, pf)


def stop(sig, frame):
    save(done)
    log("end %s %s checkpoint %d %.3f" % (job, att, done, time.time()))
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGUSR1, stop)
log("start %s %s %d %.3f" % (job, att, gpus, time.time()))
bind_marker = ev + ".bindfail." + job
if opt["--bind-fail"] and not os.path.exists(bind_marker):
    open(bind_marker, "w").close()
    log("end %s %s bindfail %d %.3f" % (job, att, done, time.time()))
    sys.stderr.write("RuntimeError: The server socket has failed to bind to "
                     "[::]:%s (errno: 98 - Address already in use).\n"
                     % os.environ.get("MASTER_PORT", "?"))
    sys.exit(1)
marker = ev + ".crashed." + job
crash = opt["--crash-at"] * total if opt["--crash-at"] >= 0 else -1
last = time.time()
while True:
    time.sleep(0.02)
    now = time.time()
    done += rate * (now - last)
    last = now
    if opt["--fail-at"] >= 0 and done >= opt["--fail-at"] * total:
        log("end %s %s crash %d %.3f" % (job, att, done, now))
        sys.stderr.write("loop_job: failing on purpose at %d\n" % done)
        sys.exit(3)
    if crash >= 0 and done >= crash and not os.path.exists(marker):
        open(marker, "w").close()
        save(done)
        log("end %s %s crash %d %.3f" % (job, att, done, now))
        sys.exit(3)
    if done >= total:
        save(total)
        log("end %s %s done %d %.3f" % (job, att, total, now))
        sys.exit(0)
    save(done)
