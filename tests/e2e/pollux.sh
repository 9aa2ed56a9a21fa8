#!/bin/sh
# End-to-end: the pollux policy on the Fig. 8(a) trace (64 T4 GPUs) with
# the bundled goodput measurements.
# - result JSON with every key, byte-identical (wall time aside) for
#   OMP_NUM_THREADS=1 and 4; every job finishes; some but not all meet
#   their deadline; the printed ratio is the JSON's;
# - --overhead restart charges more overhead than fig12 (30 s per change);
# - compare shows the published Pollux number (.523) beside ours;
# - bad input (exit 3, naming the file): a missing --pollux-data
#   directory, a model without measurements, a corrupt number, a
#   per-GPU batch size that is not a whole number of samples.
. "$(dirname "$0")/lib/common.sh"
TR=$D/traces/artifact/elasticVpollux_e.csv
jsonval() { sed -n "s/^  \"$1\": \\([0-9.]*\\),\$/\\1/p" "$2"; }

OMP_NUM_THREADS=1 $V "$EFPLAN" simulate --trace "$TR" --cluster n16g4 \
    --curves T4 --policy pollux --out "$T/p1.json" --jobs-out "$T/p.csv" \
    >"$T/p.out" || fail "simulate pollux"
OMP_NUM_THREADS=4 "$EFPLAN" simulate --trace "$TR" --cluster n16g4 \
    --curves T4 --policy pollux --out "$T/p4.json" >/dev/null ||
    fail "simulate pollux (4 threads)"
grep -v 'wall_seconds\|point_us' "$T/p1.json" >"$T/a"
grep -v 'wall_seconds\|point_us' "$T/p4.json" >"$T/b"
cmp -s "$T/a" "$T/b" || fail "pollux differs between 1 and 4 threads"
for k in '"format": "efplan-sim"' '"policy": "pollux"' '"jobs": 195' \
         '"admitted": 195' '"rejected": 0' '"timeline": ['; do
    grep -qF "$k" "$T/p1.json" || fail "result lacks $k"
done
met=$(jsonval met "$T/p1.json")
[ "$met" -gt 0 ] && [ "$met" -lt 195 ] || fail "met $met of 195"
[ "$(jsonval unfinished "$T/p1.json")" -eq 0 ] || fail "jobs unfinished"
ratio=$(jsonval deadline_ratio "$T/p1.json" | cut -c1-6)
grep -q "deadline ratio (met / deadline jobs) $ratio" "$T/p.out" ||
    fail "printed ratio is not the JSON's ($ratio)"
[ "$(wc -l <"$T/p.csv")" -eq 196 ] || fail "jobs CSV rows"
# every job ends after it starts, and starts at or after its submit time
awk -F, 'NR > 1 && ($5 < $4 || $6 <= $5) { bad++ } END { exit bad > 0 }' \
    "$T/p.csv" || fail "a job ends before it starts"

"$EFPLAN" simulate --trace "$TR" --cluster n16g4 --curves T4 --policy pollux \
    --overhead restart --out "$T/r.json" >/dev/null || fail "--overhead restart"
grep -q '"overhead": "restart"' "$T/r.json" || fail "overhead not recorded"
awk -v a="$(jsonval overhead_gpu_hours "$T/r.json")" \
    -v b="$(jsonval overhead_gpu_hours "$T/p1.json")" \
    'BEGIN { exit !(a > 2 * b) }' || fail "restart overhead not above fig12"

"$EFPLAN" compare --traces "$TR" --cluster n16g4 --curves T4 \
    --policies pollux,ef >"$T/c.out" || fail "compare"
grep -q '^| elasticVpollux_e | n16g4 (64 GPUs) | 0\.[0-9]* (0\.523) | 0\.[0-9]* (0\.728) |$' \
    "$T/c.out" || fail "compare row lacks the published numbers"

rc=0; "$EFPLAN" simulate --trace "$TR" --cluster n16g4 --curves T4 \
    --policy pollux --pollux-data "$T/none" 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 3 ] || fail "missing --pollux-data: exit $rc"
grep -q "none/.*placements.csv" "$T/err" || fail "message: $(cat "$T/err")"
rc=0; "$EFPLAN" simulate --trace "$D/traces/itp/cluster10.csv" --cluster n32g8 \
    --curves A100 --policy pollux 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 3 ] || fail "model without measurements: exit $rc"
grep -q "policy pollux: job .* (model " "$T/err" || fail "message: $(cat "$T/err")"
cp -r "$D/pollux" "$T/px"
sed -i '3s/^1,45,[0-9.]*,/1,45,abc,/' "$T/px/cifar10/placements.csv"
rc=0; "$EFPLAN" simulate --trace "$TR" --cluster n16g4 --curves T4 \
    --policy pollux --pollux-data "$T/px" 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 3 ] || fail "corrupt measurements: exit $rc"
grep -q 'cifar10/placements.csv:3:6: step_time: expected a finite, positive number, got "abc"' \
    "$T/err" || fail "message: $(cat "$T/err")"
# a per-GPU batch size that is not a whole number of samples (1e-20 made
# the largest batch over it overflow an int: UBSan float-cast-overflow in
# pol_pollux.c, and the run went on)
cp "$D/pollux/cifar10/placements.csv" "$T/px/cifar10/placements.csv"
sed -i '3s/^1,45,/1,1e-20,/' "$T/px/cifar10/placements.csv"
rc=0; "$EFPLAN" simulate --trace "$TR" --cluster n16g4 --curves T4 \
    --policy pollux --pollux-data "$T/px" 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 3 ] || fail "local_bsz 1e-20: exit $rc"
grep -q 'cifar10/placements.csv:3:3: local_bsz: expected a whole number of samples from 1 to 16777216, got "1e-20"' \
    "$T/err" || fail "message: $(cat "$T/err")"
echo ok
