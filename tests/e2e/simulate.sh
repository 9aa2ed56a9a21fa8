#!/bin/sh
# End-to-end: efplan simulate and efplan compare on real traces.
# - every policy simulates cluster10 (256 GPUs) and writes the result JSON
#   (required keys), per-job CSV and SVG; results are byte-identical
#   (wall time aside) for OMP_NUM_THREADS=1 and 4;
# - ef without overheads misses no deadline it admitted (guarantee);
# - compare prints the grid with published numbers and its JSON does not
#   depend on the thread count;
# - bad input: unknown policy (2, with a suggestion), missing trace (3),
#   unwritable output (5), physics options out of range (2).
. "$(dirname "$0")/lib/common.sh"
TR=$D/traces/itp/cluster10.csv

for p in ef ef-noac edf edf-ac; do
    OMP_NUM_THREADS=1 $V "$EFPLAN" simulate --trace "$TR" --cluster n32g8 \
        --curves A100 --policy $p --out "$T/$p.1.json" \
        --jobs-out "$T/$p.csv" --svg "$T/$p.svg" >"$T/$p.out" ||
        fail "$p: simulate failed"
    OMP_NUM_THREADS=4 $V "$EFPLAN" simulate --trace "$TR" --cluster n32g8 \
        --curves A100 --policy $p --out "$T/$p.4.json" >/dev/null ||
        fail "$p: simulate failed (4 threads)"
    grep -v 'wall_seconds\|point_us' "$T/$p.1.json" >"$T/a"; grep -v 'wall_seconds\|point_us' "$T/$p.4.json" >"$T/b"
    cmp -s "$T/a" "$T/b" || fail "$p: result differs between 1 and 4 threads"
    for k in '"format": "efplan-sim"' '"version": 1' "\"policy\": \"$p\"" \
             '"slot_seconds": 60' '"cluster": {"gpus_per_node": 8, "nodes": 32' \
             '"jobs": 260' '"deadline_jobs": 260' '"best_effort_jobs": 0' \
             '"admitted":' '"rejected":' '"met":' '"missed":' '"deadline_ratio":' \
             '"gpu_hours":' '"best_effort_mean_jct": null' '"rescales":' \
             '"migrations":' '"wall_seconds":' '"timeline": [' '"efficiency":'; do
        grep -qF "$k" "$T/$p.1.json" || fail "$p: result lacks $k"
    done
    [ "$(wc -l <"$T/$p.csv")" -eq 261 ] || fail "$p: jobs CSV should have 260 rows"
    head -1 "$T/$p.csv" | grep -q '^id,model,batch_size,submit,start,end,deadline,met,' ||
        fail "$p: jobs CSV header"
    grep -q '</svg>' "$T/$p.svg" || fail "$p: SVG incomplete"
    grep -q 'deadline ratio' "$T/$p.out" || fail "$p: no table"
    # the ratio in the JSON is met / deadline jobs
    met=$(sed -n 's/^  "met": \([0-9]*\),$/\1/p' "$T/$p.1.json")
    r=$(sed -n 's/^  "deadline_ratio": \([0-9.]*\),$/\1/p' "$T/$p.1.json")
    awk -v m="$met" -v r="$r" 'BEGIN { d = m / 260 - r; exit !(d < 1e-9 && d > -1e-9) }' ||
        fail "$p: ratio $r is not $met/260"
done
# the per-job rows agree with the summary
mrows=$(awk -F, 'NR > 1 && $8 == 1' "$T/ef.csv" | wc -l)
met=$(sed -n 's/^  "met": \([0-9]*\),$/\1/p' "$T/ef.1.json")
[ "$mrows" -eq "$met" ] || fail "jobs CSV has $mrows met rows, summary $met"

$V "$EFPLAN" simulate --trace "$TR" --cluster n32g8 --curves A100 --policy ef \
    --overhead none --out "$T/none.json" >/dev/null || fail "overhead none"
rej=$(sed -n 's/^  "rejected": \([0-9]*\),$/\1/p' "$T/none.json")
mis=$(sed -n 's/^  "missed": \([0-9]*\),$/\1/p' "$T/none.json")
[ "$mis" -eq 0 ] || fail "ef without overheads missed $mis admitted deadlines"
grep -q '"overhead_gpu_hours": 0,' "$T/none.json" || fail "overhead none charged overheads"
echo "guarantee: $rej rejected, 0 admitted jobs late"

TRS=$TR,$D/traces/artifact/philly_103959.csv
OMP_NUM_THREADS=1 $V "$EFPLAN" compare --traces "$TRS" --policies ef,edf \
    --out "$T/c1.json" --markdown "$T/c.md" >"$T/c.out" || fail "compare failed"
OMP_NUM_THREADS=4 $V "$EFPLAN" compare --traces "$TRS" --policies ef,edf \
    --out "$T/c4.json" >/dev/null || fail "compare failed (4 threads)"
sed 's/"wall_seconds": [0-9.]*//' "$T/c1.json" >"$T/a"
sed 's/"wall_seconds": [0-9.]*//' "$T/c4.json" >"$T/b"
cmp -s "$T/a" "$T/b" || fail "compare differs between 1 and 4 threads"
# (columns padded to their widest cell)
grep -q '^| cluster10  *| n32g8 (256 GPUs)  *| 0\.[0-9]* (0\.981)  *| 0\.[0-9]* (0\.769)  *|$' \
    "$T/c.out" || fail "compare row for cluster10 lacks published numbers"
cmp -s "$T/c.out" "$T/c.md" || fail "--markdown differs from the printed table"

rc=0; "$EFPLAN" simulate --trace "$TR" --cluster n32g8 --curves A100 \
    --policy edff 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] || fail "unknown policy: exit $rc"
grep -q 'did you mean "edf"' "$T/err" || fail "no suggestion for edff"
rc=0; "$EFPLAN" simulate --trace "$T/nope.csv" --cluster n32g8 --curves A100 \
    --policy ef 2>"$T/err" || rc=$?
[ "$rc" -eq 3 ] || fail "missing trace: exit $rc"
grep -q 'nope.csv' "$T/err" || fail "missing trace: file not named"
rc=0; "$EFPLAN" simulate --trace "$TR" --cluster n32g8 --curves A100 \
    --policy ef --out "$T/no/dir/r.json" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 5 ] || fail "unwritable output: exit $rc"
[ ! -e "$T/no/dir/r.json" ] || fail "half-written output"
# physics options out of range: a usage error (2) before anything runs
# (a factor of 1e-300 ran the simulation away after a million points)
for x in "--speed-factor 1e-300,1e-300" "--speed-factor 0.005" \
         "--speed-factor 1,0.5" "--speed-factor 0.6,11" "--restart-cost 0" \
         "--restart-cost nan" "--physics-seed -1"; do
    rc=0; "$EFPLAN" simulate --trace "$TR" --cluster n32g8 --curves A100 \
        --policy ef $x --out "$T/phys.json" >/dev/null 2>"$T/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "$x: exit $rc"
    grep -q "expected" "$T/err" || fail "$x: no message: $(cat "$T/err")"
    [ ! -e "$T/phys.json" ] || fail "$x: wrote a result"
done

rc=0; "$EFPLAN" compare --traces "$TR" --policies ef --cluster artifact \
    --cluster-for cluster10 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "bad --cluster-for: exit $rc"
echo ok
