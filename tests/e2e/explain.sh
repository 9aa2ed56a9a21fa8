#!/bin/sh
# End-to-end: efplan explain on a plan of the bundled sample queue
# (n4g8, A100):
# - an admitted job that got surplus: its reservation, reserved + surplus
#   per interval, slack; the intervals of --json add up to the plan's
#   gpu_seconds and never reserve more than the allocation;
# - a best-effort job: all surplus;
# - a job rejected by contention: the admitted jobs promised GPUs between
#   its submit time and deadline, with the GPU-seconds recomputed here
#   from the plan file's "reserved" members, by amount then id; what it
#   needs alone; the earliest deadline;
# - --json parses, the same bytes for OMP_NUM_THREADS=1 and 4;
# - a plan file without "reserved" (earlier efplan) still explains, and
#   says the split is unknown;
# - an unknown id: exit 3 with the closest id; bad options: exit 2.
. "$(dirname "$0")/lib/common.sh"

run() { # expected exit code, output file, efplan arguments...
    want=$1 out=$2; shift 2
    rc=0
    $V "$EFPLAN" "$@" >"$out" 2>&1 || rc=$?
    [ "$rc" -eq "$want" ] ||
        { cat "$out"; fail "efplan $* exited $rc, expected $want"; }
}

P=$T/p.json
# (--earliest exact: the file's earliest deadlines are explain's, below)
run 0 "$T/plan.out" plan --jobs "$D/jobs/sample.json" --cluster n4g8 \
    --curves A100 --earliest exact --out "$P"

# the sample's jobs of each kind (fixed by the plan; checked below)
ADM=j05 BE=j07 REJ=j27 TIGHT=j06
python3 - "$P" "$ADM" "$BE" "$REJ" <<'PY' || fail "the sample's plan changed"
import json, sys
d = json.load(open(sys.argv[1]))
j = {x["id"]: x for x in d["jobs"]}
assert j[sys.argv[2]]["decision"] == "admitted"
assert j[sys.argv[3]]["decision"] == "best_effort"
assert j[sys.argv[4]]["decision"] == "rejected"
assert "promised" in j[sys.argv[4]]["reason"]
PY

run 0 "$T/adm.txt" explain $ADM --plan "$P"
grep -q "^$ADM is admitted: its deadline +4h 59m 58s is guaranteed; it is planned to end at +[0-9hms ]* (slack " "$T/adm.txt" ||
    { cat "$T/adm.txt"; fail "admitted: first line"; }
grep -q '^Reserved for it (its minimum satisfactory share' "$T/adm.txt" ||
    fail "admitted: no reservation line"
grep -q ' GPUs = [0-9]* reserved + [1-9][0-9]* surplus; other jobs: ' "$T/adm.txt" ||
    fail "admitted: no interval with surplus"
grep -q '^What to do: nothing' "$T/adm.txt" || fail "admitted: what to do"

run 0 "$T/be.txt" explain $BE --plan "$P"
grep -q "^$BE is best-effort: it has no deadline. Nothing is reserved for it" "$T/be.txt" ||
    { cat "$T/be.txt"; fail "best-effort: first line"; }
grep -q '^All of the .* GPU-h it holds are surplus.$' "$T/be.txt" ||
    fail "best-effort: not all surplus"

run 0 "$T/rej.txt" explain $REJ --plan "$P"
grep -q "^$REJ is rejected: GPUs before the deadline are promised to admitted jobs.$" "$T/rej.txt" ||
    { cat "$T/rej.txt"; fail "rejected: first line"; }
grep -q "^Between its submit time and its deadline (+2h 59m 14s to +11h 37m 14s, 8h 38m), [0-9]*% of the cluster's GPU-time (.* GPU-h of 276 GPU-h) is promised to [0-9]* admitted jobs: j" "$T/rej.txt" ||
    fail "rejected: no holders line"
grep -q '^Alone on the cluster its minimum satisfactory share would be ' "$T/rej.txt" ||
    fail "rejected: no need alone"
# the one rule (plan_earliest_doc; efplan submit names the same second,
# tests/e2e/earliest.sh): the planner's bound at its decision said 49341
grep -q '^The earliest deadline efplan can guarantee is +15h 30m 55s' "$T/rej.txt" ||
    fail "rejected: earliest deadline"
grep -q '^What to do: resubmit with a deadline of +15h 30m 55s or later' "$T/rej.txt" ||
    fail "rejected: what to do"

run 0 "$T/tight.txt" explain $TIGHT --plan "$P"
grep -q '^Even alone on the cluster it cannot end by its deadline: its fastest finish is +2h 58m 50s.$' "$T/tight.txt" ||
    { cat "$T/tight.txt"; fail "rejected alone: fastest finish"; }
if grep -q 'promised to' "$T/tight.txt"; then
    fail "a job too slow even alone names holders"
fi

# --json: parses; intervals and holders against the plan file itself
for id in $ADM $BE $REJ; do
    OMP_NUM_THREADS=1 run 0 "$T/$id.1.json" explain $id --plan "$P" --json
    OMP_NUM_THREADS=4 run 0 "$T/$id.4.json" explain $id --plan "$P" --json
    cmp -s "$T/$id.1.json" "$T/$id.4.json" ||
        fail "$id: --json differs between 1 and 4 threads"
done
python3 - "$P" "$T" "$ADM" "$BE" "$REJ" <<'PY' || fail "--json disagrees with the plan"
import json, sys
d = json.load(open(sys.argv[1]))
T = sys.argv[2]
jobs = {x["id"]: x for x in d["jobs"]}
def x(i):
    return json.load(open("%s/%s.1.json" % (T, i)))
def resv_at(j, t):
    for s in j.get("reserved", []):
        if s["start"] <= t < s["end"]:
            return s["gpus"]
    return 0
for i in sys.argv[3:5]:
    e = x(i)
    assert e["format"] == "efplan-explain" and e["id"] == i
    assert e["decision"] == jobs[i]["decision"]
    total = sum((v["end"] - v["start"]) * v["gpus"] for v in e["intervals"])
    assert total == jobs[i]["gpu_seconds"], (total, jobs[i]["gpu_seconds"])
    for v in e["intervals"]:
        assert 0 <= v["reserved"] <= v["gpus"]
        assert v["reserved"] == resv_at(jobs[i], v["start"])
        # no change of its reservation inside an interval
        for s in jobs[i].get("reserved", []):
            for t in (s["start"], s["end"]):
                assert not v["start"] < t < v["end"], (v, s)
        assert v["gpus"] + v["others_held"] <= 32
    # runs of the job cover the intervals exactly
    held = sum((r["end"] - r["start"]) * r["gpus"] for r in d["runs"]
               if r["job"] == i)
    assert held == total
assert x(sys.argv[4])["reserved_gpu_seconds"] == 0
# the rejected job: holders recomputed from "reserved" in its window
r = jobs[sys.argv[5]]
e = x(sys.argv[5])
a, b = max(r["submit_time"], d["now"]), r["deadline"]
want = []
for j in d["jobs"]:
    if j["decision"] != "admitted" or j["id"] == r["id"]:
        continue
    g = sum(max(0, min(s["end"], b) - max(s["start"], a)) * s["gpus"]
            for s in j.get("reserved", []))
    if g > 0:
        want.append((-g, j["id"], g))
want.sort()
got = [(h["id"], h["reserved_gpu_seconds"]) for h in e["holders"]]
assert got == [(w[1], w[2]) for w in want], (got, want)
assert e["window_start"] == a and e["window_end"] == b
assert e["window_gpu_seconds"] == 32 * (b - a)
assert e["alone_ok"] is True and e["need_gpu_seconds"] > 0
assert e["earliest_feasible_deadline"] == r["earliest_feasible_deadline"]
assert e["explanation"].startswith(r["id"] + " is rejected: ")
PY

# a plan file of an earlier efplan (no "reserved"): the split is unknown
python3 - "$P" "$T/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    j.pop("reserved", None)
json.dump(d, open(sys.argv[2], "w"))
PY
run 0 "$T/old.txt" explain $ADM --plan "$T/old.json"
grep -q 'this plan file does not say how much of it was reserved' "$T/old.txt" ||
    { cat "$T/old.txt"; fail "old file: no unknown split"; }
run 0 "$T/old_rej.txt" explain $REJ --plan "$T/old.json"
grep -q 'is held by [0-9]* admitted jobs: ' "$T/old_rej.txt" ||
    { cat "$T/old_rej.txt"; fail "old file: holders by what they hold"; }

# errors
run 3 "$T/unknown.err" explain j5 --plan "$P"
grep -qF "efplan: error: $P: no job \"j5\" in this plan (did you mean \"j05\"?)" "$T/unknown.err" ||
    { cat "$T/unknown.err"; fail "unknown id: message"; }
run 3 "$T/nofile.err" explain j05 --plan "$T/none.json"
run 2 "$T/tz.err" explain j05 --plan "$P" --time-zone mars
grep -q 'time-zone' "$T/tz.err" || fail "--time-zone: message"
run 2 "$T/noid.err" explain --plan "$P"
(
    unset EFPLAN_SERVER
    run 2 "$T/noplan.err" explain j05
    grep -q 'which plan? give --plan FILE' "$T/noplan.err" ||
        fail "no --plan nor --server: message"
)
run 2 "$T/both.err" explain j05 --plan "$P" --server http://127.0.0.1:1
run 0 "$T/help.out" explain --help
grep -q '^Usage: efplan explain ID --plan FILE' "$T/help.out" || fail "help"
echo "explain: ok"
