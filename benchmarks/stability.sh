#!/bin/sh
# benchmarks/stability.sh: how often efplan moves running jobs, before and
# after the stability rule (issue 31), with simulate --policy ef; and the
# promise under physics that differs from the model, with and without
# --learn. Deterministic (no wall time in the figures): the same binary
# gives the same tables. Not part of make test. From the repository root
# after `make`:
#
#   sh benchmarks/stability.sh [OUT.md]
#
# (OUT.md, e.g. benchmarks/results/stability.md: the tables with a
# header; they go to standard output too.)
#
# Table 1, default settings (fig12, slots of 60 s): --moves any (the
# paper's rule: every point re-derives each allocation) against --moves
# net (the default): admitted jobs, deadline ratio, reconfigurations
# (rescales + migrations) in all and per job that ran, preemptions,
# restarts per job that ran (mean, p99, max), overhead GPU-hours; on the
# bundled traces at their artifact sizes (cluster01 on n64g8, cluster10 on
# n32g8, 195job on n16g8) and on generated overloaded queues (gen-trace
# seeds 1-6: 400 jobs, mean gap 80-180 s, deadline factor 1-3, 10%
# best-effort; on n4g8 and n8g8), with their sums.
# Table 2, physics that differs from the model: each model at 0.6-1.0 of
# its curve (--speed-factor 0.6,1.0, --physics-seed = the trace's seed),
# restarts twice the model's (--restart-cost 2); default settings without
# and with --learn: admitted, met, missed among the admitted.
# Table 3, restarts that cost what the loop measures: every
# reconfiguration really costs 10 times the model's (--restart-cost 10,
# the loop's stand-in jobs measure 11-36 times fig12) and the planner
# learns it (--learn); speeds as the curve; --moves any against net on
# the cases of table 1: admitted, deadline ratio, reconfigurations in all
# and per job that ran, with the generated queues' sums.
# Table 4, a flat restart of 30 s for every change, planned and charged
# alike (--overhead restart: the model's prior where a real job's
# checkpoint, exit, start-up and rendezvous take half a minute): --moves
# any against net, as table 3.
set -eu
E=${EFPLAN:-build/efplan}
[ -x "$E" ] || { echo "$0: $E: not built (make)" >&2; exit 2; }
exec python3 - "$E" "${1:-}" <<'PY'
import json, os, subprocess, sys, tempfile
E, out = sys.argv[1], sys.argv[2]
T = tempfile.mkdtemp()
def sh(*a):
    subprocess.run(list(a), check=True, capture_output=True)
def sim(trace, cl, *extra):
    r = os.path.join(T, 'r.json')
    sh(E, 'simulate', '--trace', trace, '--cluster', cl, '--curves', 'A100',
       '--policy', 'ef', '--out', r, *extra)
    return json.load(open(r))
gens = []
for s in range(1, 7):
    f = os.path.join(T, 'g%d.csv' % s)
    sh(E, 'gen-trace', '--jobs', '400', '--mean-interarrival', str(60 + 20 * s),
       '--deadline-factor', '1', '3', '--best-effort', '0.1', '--seed', str(s),
       '--out', f)
    gens.append((s, f))
cases = [('cluster01', 'n64g8', 'inputs/traces/itp/cluster01.csv', 0),
         ('cluster10', 'n32g8', 'inputs/traces/itp/cluster10.csv', 0),
         ('195job', 'n16g8', 'inputs/traces/itp/195job.csv', 0)]
for s, f in gens:
    for c in ('n4g8', 'n8g8'):
        cases.append(('gen-%d' % s, c, f, s))
L = []
L.append('| queue | cluster | moves | admitted | deadline ratio | '
         'reconfigurations | per job that ran | preemptions | restarts per '
         'job: mean / p99 / max | overhead GPU-h |')
L.append('|---|---|---|---:|---:|---:|---:|---:|---|---:|')
tot = {m: [0, 0, 0, 0] for m in ('any', 'net')}  # admitted, reconf, ran, preempt
for name, cl, f, _ in cases:
    for m in ('any', 'net'):
        d = sim(f, cl, '--moves', m)
        rc = d['rescales'] + d['migrations']
        ran = d['admitted'] + d['best_effort_jobs']
        L.append('| %s | %s | %s | %d | %.4f | %d | %.2f | %d | %.2f / %d / %d '
                 '| %.1f |' % (name, cl, m, d['admitted'], d['deadline_ratio'],
                               rc, rc / max(1, ran), d['preemptions'],
                               d.get('restarts_mean', 0),
                               d.get('restarts_p99', 0),
                               d.get('restarts_max', 0),
                               d['overhead_gpu_hours']))
        if name.startswith('gen'):
            t = tot[m]
            t[0] += d['admitted']; t[1] += rc; t[2] += ran
            t[3] += d['preemptions']
for m in ('any', 'net'):
    t = tot[m]
    L.append('| generated, sum of 12 | | %s | %d | | %d | %.2f | %d | | |'
             % (m, t[0], t[1], t[1] / max(1, t[2]), t[3]))
L.append('')
L.append('| queue | cluster | --learn | admitted | met | missed (admitted) | '
         'deadline ratio |')
L.append('|---|---|---|---:|---:|---:|---:|')
sums = {0: [0, 0, 0], 1: [0, 0, 0]}
for name, cl, f, s in cases:
    if not s:
        continue
    for learn in (0, 1):
        d = sim(f, cl, '--speed-factor', '0.6,1.0', '--restart-cost', '2',
                '--physics-seed', str(s), *(['--learn'] if learn else []))
        L.append('| %s | %s | %s | %d | %d | %d | %.4f |'
                 % (name, cl, 'yes' if learn else 'no', d['admitted'],
                    d['met'], d['missed'], d['deadline_ratio']))
        sums[learn][0] += d['admitted']; sums[learn][1] += d['met']
        sums[learn][2] += d['missed']
for learn in (0, 1):
    a, m, x = sums[learn]
    L.append('| generated, sum of 12 | | %s | %d | %d | %d | |'
             % ('yes' if learn else 'no', a, m, x))
L.append('')
def moves_table(label, *extra):
    """--moves any against net on the cases of table 1 under 'extra'."""
    L.append('| queue | cluster | moves (%s) | admitted | deadline ratio | '
             'reconfigurations | per job that ran |' % label)
    L.append('|---|---|---|---:|---:|---:|---:|')
    tot = {m: [0, 0, 0] for m in ('any', 'net')}  # admitted, reconf, ran
    for name, cl, f, _ in cases:
        for m in ('any', 'net'):
            d = sim(f, cl, '--moves', m, *extra)
            rc = d['rescales'] + d['migrations']
            ran = d['admitted'] + d['best_effort_jobs']
            L.append('| %s | %s | %s | %d | %.4f | %d | %.2f |'
                     % (name, cl, m, d['admitted'], d['deadline_ratio'], rc,
                        rc / max(1, ran)))
            if name.startswith('gen'):
                t = tot[m]
                t[0] += d['admitted']; t[1] += rc; t[2] += ran
    for m in ('any', 'net'):
        t = tot[m]
        L.append('| generated, sum of 12 | | %s | %d | | %d | %.2f |'
                 % (m, t[0], t[1], t[1] / max(1, t[2])))
    L.append('')
moves_table('restarts 10x, learned', '--restart-cost', '10', '--learn')
moves_table('a flat 30 s restart', '--overhead', 'restart')
text = '\n'.join(L[:-1]) + '\n'
if out:
    rev = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                         capture_output=True, text=True).stdout.strip()
    head = ('# How often running jobs move: --moves any against net, and '
            '--learn\n\nGenerated by `sh benchmarks/stability.sh %s` '
            '(efplan at commit %s); do not edit by hand. Deterministic: '
            'the same binary gives the same tables. What each table is: '
            'the script\'s header.\n\n' % (out, rev or '?'))
    open(out, 'w').write(head + text)
sys.stdout.write(text)
PY
