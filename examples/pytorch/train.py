#!/usr/bin/env python3
"""train.py: a PyTorch DDP training job that honours efplan's launch
contract (README, "Applying a plan": the job's command), for the local
and Slurm backends and efplan serve's loop.

It trains a small MLP on a synthetic regression task. What matters is
how it behaves when efplan resizes it:

- the samples of global step s are drawn from a generator seeded with s
  alone, and every step uses the same global batch whatever the world
  size (each rank takes its slice), so the run computes the same steps
  however it was split over restarts and world sizes;
- on the checkpoint signal (SIGTERM, efplan's default, or SIGUSR1) the
  ranks agree on the step to stop at (an all_reduce of a stop flag after
  every step), rank 0 writes the checkpoint atomically and every rank
  exits with STOP_EXIT; an attempt resumes from it at any world size;
- rank 0 writes the iterations done to $EFPLAN_PROGRESS_FILE after every
  step ("N world=W attempt=A").

Exit codes: 0 its iterations are done; 2 a usage or configuration error
(nothing trained); 75 (STOP_EXIT) stopped by the checkpoint signal after
its checkpoint was written; anything else is a failure.
"""
import signal

# Installed before anything slow (importing torch takes a second or
# more): a checkpoint signal that comes early is noted, never fatal.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)
_stop = []


def _on_stop(signum, frame):
    _stop.append(signal.Signals(signum).name)


for _s in STOP_SIGNALS:
    signal.signal(_s, _on_stop)

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

# Stopped by the checkpoint signal, checkpoint written. Not 0: efplan
# takes an exit 0 outside a stop for "done", and a signal that did not
# come from efplan (an operator's kill, a node going down) must not make
# an unfinished run look finished. 75 is EX_TEMPFAIL of sysexits.h
# ("try again later"), below 128 so no shell mistakes it for a death by
# signal.
STOP_EXIT = 75
USAGE_EXIT = 2
CKPT_FORMAT = "efplan-example-checkpoint"
CKPT_NAME = "checkpoint.pt"


def die(msg):
    sys.stderr.write("train.py: error: %s\n" % msg)
    sys.exit(USAGE_EXIT)


def env_int(name):
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        die("%s=%r is not an integer" % (name, v))


def parse_args():
    ap = argparse.ArgumentParser(
        description="PyTorch DDP example for efplan (see README.md beside "
        "it)")
    ap.add_argument("--iterations", type=int, default=env_int(
        "EFPLAN_ITERATIONS"), help="steps to train in all (default "
        "$EFPLAN_ITERATIONS)")
    ap.add_argument("--global-batch", type=int, default=env_int(
        "EFPLAN_BATCH_SIZE"), help="samples per step over all ranks "
        "(default $EFPLAN_BATCH_SIZE, else 64)")
    ap.add_argument("--checkpoint-dir", default=None, help="default "
                    "$EFPLAN_CHECKPOINT_DIR, else PROGRESS_FILE.ckpt beside "
                    "$EFPLAN_PROGRESS_FILE, else ./checkpoint")
    ap.add_argument("--checkpoint-every", type=int, default=100,
                    help="also checkpoint every K steps (0: only on the "
                    "stop signal and at the end)")
    ap.add_argument("--step-seconds", type=float, default=0.0,
                    help="sleep this long in every step (tests: slow "
                    "enough to be resized mid-run)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--backend", choices=("auto", "gloo", "nccl"),
                    default="auto", help="auto: nccl when CUDA is "
                    "available, else gloo")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds a collective may wait for the other "
                    "ranks before failing")
    a = ap.parse_args()
    if a.iterations is None:
        die("no iteration count: pass --iterations or set "
            "EFPLAN_ITERATIONS")
    if a.iterations < 0:
        die("--iterations %d is negative" % a.iterations)
    if a.global_batch is None:
        a.global_batch = 64
    if a.global_batch < 1:
        die("the global batch size %d is not positive" % a.global_batch)
    if a.checkpoint_every < 0:
        die("--checkpoint-every %d is negative" % a.checkpoint_every)
    if a.step_seconds < 0:
        die("--step-seconds %g is negative" % a.step_seconds)
    return a


def checkpoint_dir(a):
    if a.checkpoint_dir:
        return a.checkpoint_dir
    if os.environ.get("EFPLAN_CHECKPOINT_DIR"):
        return os.environ["EFPLAN_CHECKPOINT_DIR"]
    if os.environ.get("EFPLAN_PROGRESS_FILE"):
        return os.environ["EFPLAN_PROGRESS_FILE"] + ".ckpt"
    return "checkpoint"


class Ranks:
    """Who this process is, from the standard environment."""

    def __init__(self):
        self.world = env_int("WORLD_SIZE")
        self.rank = env_int("RANK")
        self.local_rank = env_int("LOCAL_RANK")
        if self.rank is None:
            if self.world not in (None, 1):
                die("WORLD_SIZE=%d but RANK is not set: one process cannot "
                    "be %d ranks; run this under torchrun, or as a job with "
                    '"processes": "per_gpu"' % (self.world, self.world))
            self.world, self.rank = 1, 0
        if self.world is None:
            die("RANK is set but WORLD_SIZE is not")
        if not 0 <= self.rank < self.world:
            die("RANK=%d is outside WORLD_SIZE=%d" % (self.rank, self.world))
        if self.local_rank is None:
            self.local_rank = self.rank if self.world == 1 else 0


def init_group(a, rk):
    use_cuda = torch.cuda.is_available() and a.backend != "gloo"
    backend = a.backend
    if backend == "auto":
        backend = "nccl" if use_cuda else "gloo"
    if backend == "nccl" and not torch.cuda.is_available():
        die("--backend nccl needs CUDA, and torch sees no GPU")
    if backend == "nccl":
        torch.cuda.set_device(rk.local_rank)
        device = torch.device("cuda", rk.local_rank)
    else:
        device = torch.device("cpu")
    timeout = datetime.timedelta(seconds=a.timeout)
    if rk.world == 1 and not (os.environ.get("MASTER_ADDR") and
                              os.environ.get("MASTER_PORT")):
        # one process started by hand: no rendezvous to find
        fd, path = tempfile.mkstemp(prefix="train-store.")
        os.close(fd)
        store = dist.FileStore(path, 1)
        dist.init_process_group(backend, store=store, rank=0, world_size=1,
                                timeout=timeout)
        os.unlink(path)
    else:
        dist.init_process_group(backend, init_method="env://",
                                rank=rk.rank, world_size=rk.world,
                                timeout=timeout)
    return backend, device


def build_model(a):
    return torch.nn.Sequential(
        torch.nn.Linear(a.features, a.hidden), torch.nn.Tanh(),
        torch.nn.Linear(a.hidden, a.hidden), torch.nn.Tanh(),
        torch.nn.Linear(a.hidden, 1))


def teacher(a):
    """The function to learn: fixed by the seed."""
    g = torch.Generator().manual_seed(a.seed * 7919 + 17)
    w1 = torch.randn(a.features, 16, generator=g) / a.features ** 0.5
    w2 = torch.randn(16, 1, generator=g) / 4.0
    return w1, w2


def batch_of_step(a, tw, step, lo, hi):
    """Samples lo..hi-1 of the global batch of step 'step' (1-based): a
    function of the seed and the step alone."""
    g = torch.Generator().manual_seed((a.seed * 1000003 + step) % (2 ** 63))
    x = torch.randn(a.global_batch, a.features, generator=g)
    noise = torch.randn(a.global_batch, 1, generator=g)
    w1, w2 = tw
    y = torch.tanh(x @ w1) @ w2 + 0.01 * noise
    return x[lo:hi], y[lo:hi]


def opt_steps(opt):
    """Optimizer steps as the optimizer itself counts them (Adam's
    per-parameter 'step'); 0 before the first one."""
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p)
            if st and "step" in st:
                return int(st["step"])
    return 0


def write_atomic(path, data):
    d = os.path.dirname(path) or "."
    tmp = os.path.join(d, ".%s.tmp.%d" % (os.path.basename(path),
                                          os.getpid()))
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_progress(step, world):
    """"N world=W attempt=A": efplan reads N, and warns when W is not the
    world of the attempt A ($EFPLAN_ATTEMPT) it gave."""
    pf = os.environ.get("EFPLAN_PROGRESS_FILE")
    if not pf:
        return
    line = "%d world=%d" % (step, world)
    if os.environ.get("EFPLAN_ATTEMPT"):
        line += " attempt=%s" % os.environ["EFPLAN_ATTEMPT"]
    write_atomic(pf, (line + "\n").encode())


def save_checkpoint(path, a, step, model, opt, world, reason):
    state = {
        "format": CKPT_FORMAT, "version": 1, "step": step,
        "model": model.state_dict(), "optimizer": opt.state_dict(),
        "rng": {"torch": torch.get_rng_state(), "python": random.getstate(),
                "cuda": torch.cuda.get_rng_state()
                if torch.cuda.is_available() else None},
        "config": {"features": a.features, "hidden": a.hidden,
                   "seed": a.seed},
        "global_batch": a.global_batch, "world_size": world,
    }
    d = os.path.dirname(path)
    tmp = os.path.join(d, ".%s.tmp.%d" % (CKPT_NAME, os.getpid()))
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    print("checkpoint step %d reason %s" % (step, reason), flush=True)


def load_checkpoint(path, a, model, opt):
    """Restore model, optimizer and RNG states; return the step."""
    if not os.path.exists(path):
        return 0
    st = torch.load(path, map_location="cpu")
    if not isinstance(st, dict) or st.get("format") != CKPT_FORMAT:
        die("%s is not a checkpoint of this script" % path)
    want = {"features": a.features, "hidden": a.hidden, "seed": a.seed}
    if st["config"] != want:
        die("%s was made with %s, this run has %s: use another "
            "--checkpoint-dir" % (path, st["config"], want))
    model.load_state_dict(st["model"])
    opt.load_state_dict(st["optimizer"])
    torch.set_rng_state(st["rng"]["torch"])
    random.setstate(st["rng"]["python"])
    if st["rng"]["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(st["rng"]["cuda"])
    return int(st["step"])


def main():
    a = parse_args()
    rk = Ranks()
    if a.global_batch % rk.world:
        die("the global batch size %d is not divisible by the world size "
            "%d: every rank must take the same share" % (a.global_batch,
                                                          rk.world))
    local = a.global_batch // rk.world
    ckdir = checkpoint_dir(a)
    ckpt = os.path.join(ckdir, CKPT_NAME)
    if rk.rank == 0:
        os.makedirs(ckdir, exist_ok=True)

    backend, device = init_group(a, rk)
    torch.manual_seed(a.seed)
    model = build_model(a).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    # every rank reads the checkpoint (the optimizer moves its state to
    # the parameters' device): the same state everywhere, before DDP
    # wraps the module (it broadcasts rank 0's parameters anyway)
    step = load_checkpoint(ckpt, a, model, opt)
    ddp = DDP(model) if device.type == "cpu" else DDP(
        model, device_ids=[device.index])
    tw = teacher(a)
    lo, hi = rk.rank * local, (rk.rank + 1) * local
    if rk.rank == 0:
        print("resume step %d world %d opt_steps %d backend %s batch %d "
              "checkpoint %s" % (step, rk.world, opt_steps(opt), backend,
                                 a.global_batch, ckpt), flush=True)
        write_progress(step, rk.world)
    if step > a.iterations:
        die("the checkpoint is at step %d, past --iterations %d"
            % (step, a.iterations))

    loss_fn = torch.nn.MSELoss()
    while step < a.iterations:
        x, y = batch_of_step(a, tw, step + 1, lo, hi)
        x, y = x.to(device), y.to(device)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()
        opt.step()
        if a.step_seconds:
            time.sleep(a.step_seconds)
        # one collective: the global mean loss and whether any rank was
        # asked to stop; every rank gets the same answer, so all stop
        # after the same step
        t = torch.tensor([loss.item() * local, 1.0 if _stop else 0.0],
                         dtype=torch.float64, device=device)
        dist.all_reduce(t)
        step += 1
        stop = t[1].item() > 0
        if rk.rank == 0:
            print("step %d world %d loss %.9g opt_steps %d"
                  % (step, rk.world, t[0].item() / a.global_batch,
                     opt_steps(opt)), flush=True)
        if step == a.iterations:
            break
        if rk.rank == 0:
            write_progress(step, rk.world)
        if stop:
            if rk.rank == 0:
                save_checkpoint(ckpt, a, step, model, opt, rk.world,
                                _stop[0] if _stop else "peer")
                print("stopped step %d exit %d" % (step, STOP_EXIT),
                      flush=True)
            # no rank exits before the checkpoint is on disk: a launcher
            # that sees one process end non-zero may kill the others
            # (efplan's per_gpu monitor: SIGTERM, SIGKILL after the grace)
            dist.barrier()
            dist.destroy_process_group()
            sys.exit(STOP_EXIT)
        if a.checkpoint_every and step % a.checkpoint_every == 0 and \
                rk.rank == 0:
            save_checkpoint(ckpt, a, step, model, opt, rk.world, "periodic")
    # done: the checkpoint first, then the progress that says so (efplan
    # may end the attempt as soon as the progress file reaches the end);
    # from here a stop signal has nothing left to save: exit 0 all the same
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if rk.rank == 0:
        save_checkpoint(ckpt, a, step, model, opt, rk.world, "done")
        write_progress(step, rk.world)
        print("done step %d" % step, flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
