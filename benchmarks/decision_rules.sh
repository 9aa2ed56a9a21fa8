#!/bin/sh
# benchmarks/decision_rules.sh: the rules under which ElasticFlow's
# decisions may change (issue 33), checked against a baseline efplan:
#   (2) on every bundled trace at its artifact size and on the generated
#       benchmark queues, admitted jobs and deadline ratio not lower than
#       the baseline's by more than 0.5% (simulate --policy ef, defaults);
#   (3) --baselines reference and the full reference mode unchanged
#       (every figure of the baseline's result file, wall times removed);
#   (4) the same inputs give byte-identical outputs for 1 and 4 threads
#       (plan and simulate).
# Rule (1), 0 admitted misses, is tests/e2e/promise.sh (make test) and
# benchmarks/promise_sweep.sh. Not part of make test. From the repository
# root after `make`:
#
#   BASE=/path/to/old/efplan sh benchmarks/decision_rules.sh [OUT.md]
#
# Exits 1 when a rule breaks (the table says which row).
set -eu
E=${EFPLAN:-build/efplan}
: "${BASE:?BASE=the baseline efplan binary}"
[ -x "$E" ] && [ -x "$BASE" ] || { echo "$0: EFPLAN and BASE must run" >&2; exit 2; }
exec python3 - "$E" "$BASE" "${1:-}" <<'PY'
import json, os, subprocess, sys, tempfile
E, B, out = sys.argv[1], sys.argv[2], sys.argv[3]
T = tempfile.mkdtemp()
def run(binary, args, env=None):
    r = os.path.join(T, 'r.json')
    subprocess.run([binary] + args + ['--out', r], check=True,
                   capture_output=True, env=env)
    d = json.load(open(r))
    for k in ('wall_seconds', 'point_us'):
        d.pop(k, None)
    return d
D = 'inputs/traces'
traces = [('itp/cluster01', 'n64g8'), ('itp/cluster05', 'n64g8'),
          ('itp/cluster06', 'n64g8'), ('itp/cluster08', 'n128g8'),
          ('itp/cluster09', 'n128g8'), ('itp/cluster10', 'n32g8'),
          ('itp/195job', 'n16g8'), ('artifact/philly_103959', 'n32g8')]
gens = []
for s in range(1, 7):
    f = os.path.join(T, 'g%d.csv' % s)
    subprocess.run([E, 'gen-trace', '--jobs', '400', '--mean-interarrival',
                    str(60 + 20 * s), '--deadline-factor', '1', '3',
                    '--best-effort', '0.1', '--seed', str(s), '--out', f],
                   check=True, capture_output=True)
    gens.append(f)
rows, bad = [], 0
def sim_args(f, c, *x):
    return ['simulate', '--trace', f, '--cluster', c, '--curves', 'A100',
            '--policy', 'ef'] + list(x)
cases = [('%s/%s.csv' % (D, t), c) for t, c in traces] + \
        [(g, c) for g in gens for c in ('n4g8', 'n8g8')]
sa = sb = 0
for f, c in cases:
    a = run(E, sim_args(f, c))
    b = run(B, sim_args(f, c))
    da = a['admitted'] - b['admitted']
    dr = a['deadline_ratio'] - b['deadline_ratio']
    ok = a['admitted'] >= b['admitted'] * 0.995 and \
        a['deadline_ratio'] >= b['deadline_ratio'] * 0.995
    bad += not ok
    sa += a['admitted']; sb += b['admitted']
    rows.append('| (2) | %s on %s | %d -> %d (%+d) | %.4f -> %.4f (%+.4f) | %s |'
                % (os.path.basename(f), c, b['admitted'], a['admitted'], da,
                   b['deadline_ratio'], a['deadline_ratio'], dr,
                   'ok' if ok else '**lower**'))
rows.append('| (2) | all %d runs | %d -> %d admitted | | |' % (len(cases), sb, sa))
# (3) reference modes: the same results, figure for figure
ref = [['--baselines', 'reference'],
       ['--overhead', 'reference', '--surplus', 'reference', '--cap',
        'reference', '--baselines', 'reference']]
for pol in ('ef', 'ef-noac', 'edf', 'gandiva', 'tiresias', 'themis'):
    for x in ref:
        for t, c in (('itp/cluster10', 'n32g8'), ('itp/195job', 'n16g8')):
            args = ['simulate', '--trace', '%s/%s.csv' % (D, t), '--cluster',
                    c, '--curves', 'A100', '--policy', pol] + x
            a, b = run(E, args), run(B, args)
            # (what the new binary adds, restarts per job, is left out)
            ok = {k: a.get(k) for k in b} == b
            bad += not ok
            rows.append('| (3) | %s %s, %s | | | %s |'
                        % (pol, ' '.join(x), os.path.basename(t),
                           'identical' if ok else '**differs**'))
# (4) threads
for args in (['plan', '--jobs', 'inputs/jobs/sample.json', '--cluster', 'n4g8',
              '--curves', 'A100'],
             sim_args('%s/itp/cluster10.csv' % D, 'n32g8')):
    outs = []
    for n in ('1', '4'):
        env = dict(os.environ, OMP_NUM_THREADS=n)
        outs.append(run(E, args, env))
    ok = outs[0] == outs[1]
    bad += not ok
    rows.append('| (4) | %s, OMP_NUM_THREADS 1 and 4 | | | %s |'
                % (args[0], 'identical' if ok else '**differs**'))
text = ('| rule | run | admitted (baseline -> now) | deadline ratio | verdict |\n'
        '|---|---|---|---|---|\n' + '\n'.join(rows) + '\n')
if out:
    open(out, 'w').write(text)
sys.stdout.write(text)
sys.exit(1 if bad else 0)
PY
