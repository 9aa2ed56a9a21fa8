#!/bin/sh
# End-to-end: efplan gen-trace.
# - the same seed gives the same bytes (stdout and --out), another seed
#   another trace; changing only the deadline factor keeps arrivals;
# - the trace reads back with validate, and a planner run accepts it;
# - on 20000 jobs the distributions are the artifact's: GPU shares, mean
#   inter-arrival, deadline factor range, duration split, best-effort share;
# - bad options exit 2 with a message.
. "$(dirname "$0")/lib/common.sh"

G="$V $EFPLAN gen-trace"
$G --jobs 50 --mean-interarrival 600 --deadline-factor 0.5 1.5 --seed 7 \
    >"$T/a.csv" || fail "gen-trace failed"
$G --jobs 50 --mean-interarrival 600 --deadline-factor 0.5 1.5 --seed 7 \
    --out "$T/b.csv" || fail "gen-trace --out failed"
cmp -s "$T/a.csv" "$T/b.csv" || fail "same seed, different bytes"
$G --jobs 50 --mean-interarrival 600 --deadline-factor 0.5 1.5 --seed 8 \
    >"$T/c.csv"
cmp -s "$T/a.csv" "$T/c.csv" && fail "another seed gave the same trace"
$G --jobs 50 --mean-interarrival 600 --deadline-factor 1.5 1.5 --seed 7 \
    >"$T/d.csv"
cut -d, -f1-4,6-8 "$T/a.csv" >"$T/a.cut"; cut -d, -f1-4,6-8 "$T/d.csv" >"$T/d.cut"
cmp -s "$T/a.cut" "$T/d.cut" || fail "deadline factor changed other columns"
[ "$(wc -l <"$T/a.csv")" -eq 51 ] || fail "expected header + 50 rows"
$V "$EFPLAN" validate --jobs "$T/a.csv" --curves A100 >"$T/v.out" ||
    fail "validate rejects the generated trace"
grep -q '50 jobs' "$T/v.out" || fail "validate did not see 50 jobs"
$V "$EFPLAN" plan --jobs "$T/a.csv" --cluster n8g8 --curves A100 >/dev/null ||
    fail "plan rejects the generated trace"

$EFPLAN gen-trace --jobs 20000 --mean-interarrival 1500 \
    --deadline-factor 0.5 1.5 --seed 3 --best-effort 0.25 >"$T/big.csv"
awk -F, 'NR > 1 {
    n++; g[$7]++; gap_sum = $2; f = ($5 - $2) / $8;
    if (f < 0.49 || f > 1.5) bad++;
    if ($8 >= 60 * 10^2.5) long_jobs++;
    be += $9
} END {
    e = 0
    if (g[1]/n < 0.81 || g[1]/n > 0.85) { print "P(1 GPU) " g[1]/n; e = 1 }
    if (g[8]/n < 0.09 || g[8]/n > 0.11) { print "P(8 GPUs) " g[8]/n; e = 1 }
    if (g[2]/n < 0.02 || g[2]/n > 0.04) { print "P(2 GPUs) " g[2]/n; e = 1 }
    m = gap_sum / (n - 1)
    if (m < 1450 || m > 1550) { print "mean gap " m; e = 1 }
    if (bad > 0) { print bad " deadline factors outside [0.5, 1.5]"; e = 1 }
    if (long_jobs/n < 0.18 || long_jobs/n > 0.22) { print "long share " long_jobs/n; e = 1 }
    if (be/n < 0.23 || be/n > 0.27) { print "best-effort share " be/n; e = 1 }
    exit e
}' "$T/big.csv" || fail "distributions off"

for bad in "--jobs 0 --mean-interarrival 1 --deadline-factor 1 1 --seed 1" \
           "--jobs 5 --mean-interarrival 1 --deadline-factor 2 1 --seed 1" \
           "--jobs 5 --mean-interarrival 1 --deadline-factor 1 1" \
           "--jobs 5 --mean-interarrival x --deadline-factor 1 1 --seed 1" \
           "--jobs 5 --mean-interarrival 1 --deadline-factor 1 1 --seed 1 --best-effort 2"; do
    rc=0
    # shellcheck disable=SC2086
    $EFPLAN gen-trace $bad >/dev/null 2>"$T/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "gen-trace $bad: exit $rc, expected 2"
    grep -q '^efplan: error: ' "$T/err" || fail "gen-trace $bad: no error line"
done
echo ok
