# tests/e2e/lib/promise_gen.awk: the cases of the promise property test
# (tests/e2e/promise.sh) and of its sweep (benchmarks/promise_sweep.sh).
#   awk -v first=F -v count=N -f promise_gen.awk
# prints N lines, one per case id F .. F+N-1, each
#   id jobs gpus_per_node nodes load mean_interarrival ddl_lo ddl_hi
#   best_effort eb_trace eb_sim slot overhead duration_scale
# A case depends on its id only: its own Park-Miller generator
# (x = 16807 x mod 2^31-1, exact in awk's doubles, so mawk and gawk
# agree) is seeded from the id and warmed up; nothing else (no srand,
# no clock) is read. The same id always gives the same line.
#   jobs        log-uniform 50 .. 2000 (most cases small)
#   cluster     g8 nodes (p .7) or g4 nodes (p .3); 8 .. 1024 GPUs,
#               log-uniform; the node count is a power of two in 70 % of
#               the cases, any integer in range otherwise
#   load        log-uniform 0.05 .. 3 (idle to 3x overloaded): requested
#               GPU-seconds arriving per second over the cluster's GPUs
#   mean_interarrival = W * duration_scale / (load * GPUs), W = 74664 s
#               the generator's mean requested GPU-seconds per job:
#               E[num_gpu] = .83*1 + .03*2 + .03*4 + .10*8 + .01*16 = 1.97
#               times E[duration] = .8 * 60 (10^2.5 - 10) / (1.5 ln 10)
#               + .2 * 60 (10^4 - 10^2.5) / (1.5 ln 10) = 37901 s
#   duration_scale  log-uniform 0.1 .. 1 (short jobs: overheads weigh more)
#   deadline factor LO U(0.5, 1.5), HI = LO + U(0, 1.5)
#   best_effort 0 in 30 % of the cases, else U(0, 0.5)
#   overhead    fig12, reference, restart, none by id mod 4
#   elastic batch  on for odd floor(id / 4) (gen-trace --elastic-batch P,
#               P U(0.2, 1), and simulate --elastic-batch); off otherwise,
#               a quarter of those with batch ranges in the trace that the
#               simulation does not use (eb_trace P, eb_sim 0)
#   slot        uniform integer 60 .. 600 s
function rnd() {
    x = (16807 * x) % 2147483647
    return x / 2147483647
}
function logu(lo, hi) { return lo * exp(log(hi / lo) * rnd()) }
BEGIN {
    split("fig12 reference restart none", ovh, " ")
    for (id = first; id < first + count; id++) {
        x = (id * 7919 + 104729) % 2147483646 + 1
        for (w = 0; w < 8; w++)
            rnd()
        jobs = int(logu(50, 2000.999))
        gpn = rnd() < 0.7 ? 8 : 4
        lo = 8 / gpn; hi = 1024 / gpn
        if (rnd() < 0.7) {
            k = int(rnd() * (log(hi / lo) / log(2) + 1))
            nodes = lo * 2 ^ k
        } else {
            nodes = int(logu(lo, hi + 0.999))
        }
        load = logu(0.05, 3)
        ds = logu(0.1, 1)
        ia = 74664 * ds / (load * nodes * gpn)
        dlo = 0.5 + rnd()
        dhi = dlo + 1.5 * rnd()
        be = rnd() < 0.3 ? 0 : 0.5 * rnd()
        ebp = 0.2 + 0.8 * rnd()
        off = rnd()
        if (int(id / 4) % 2 == 1) {
            ebt = ebp; ebs = 1
        } else {
            ebt = off < 0.25 ? ebp : 0; ebs = 0
        }
        slot = 60 + int(rnd() * 541)
        printf "%d %d %d %d %.3f %.1f %.3f %.3f %.3f %.3f %d %d %s %.3f\n",
            id, jobs, gpn, nodes, load, ia, dlo, dhi, be, ebt, ebs, slot,
            ovh[id % 4 + 1], ds
    }
}
