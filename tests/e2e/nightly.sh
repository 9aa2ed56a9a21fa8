#!/bin/sh
# End-to-end: efplan nightly, night after night, on the local backend with
# a fast clock (--now 0 --time-scale: a plan hour lasts 3 s), the jobs the
# stand-in tests/data/dummy_train.sh (it logs its starts and ends, counts
# its progress in its progress file, checkpoints on its signal). The
# commands are docs/nightly.md's recipe, word for word (checked at the
# end). Checks:
# - night 1 plans the queue, applies it to --until: a job is done, the
#   others are stopped unfinished, and DIR/queue.json remembers them with
#   their progress, promised;
# - night 2 resumes them from that progress (its jobs file), admitted;
#   a job submitted with `submit --plan DIR/tonight.json` while night 2
#   applies is admitted and launched in night 2;
# - night 2 killed with -9 and run again resumes its night: no attempt
#   is launched twice;
# - night 3 finds the queue edited by hand (a job added, a job removed):
#   it plans the added one, not the removed one, and keeps the submitted
#   one;
# - night 4 finds the queue file broken: the error names file:line:col,
#   the promised jobs run on, exit 3;
# - a night that finds the previous night still applying takes over
#   without restarting a job whose allocation stays the same;
# - every night's plan, jobs file and chart are kept under DIR/plans;
# - a dry run prints the next night's actions and leaves DIR as it was
#   (no plan, no tonight.json link, no queue.json change) and nothing in
#   TMPDIR;
# - a remembered job that cannot be planned is named as the state
#   folder's (DIR/queue.json), exit 3.
# No assertion depends on timing: waits are bounded polls of files.
. "$(dirname "$0")/lib/common.sh"
: "${EFPLAN_ROOT:?}"
cleanup() {
    kill_attempts "$T"/nightly/apply/run
    rm -rf "$T"
}
trap cleanup EXIT
DUMMY=$EFPLAN_ROOT/tests/data/dummy_train.sh
cd "$T"
EV=$T/events
: > "$EV"
# the queue: jobs run dummy_train.sh EVENTS FINISH (done at its
# FINISH-th start)
job() { # id finish [deadline]
    printf ' {"id": "%s", "model": "resnet50", "batch_size": 64,
  "iterations": 200000, "submit_time": 0, "deadline": %s,
  "grace_seconds": 5, "command": ["sh", "%s", "%s", "%s"]}' \
        "$1" "${3:-600000}" "$DUMMY" "$EV" "$2"
}
{ echo '{"jobs": ['; job a 1; echo ,; job b 99; echo ']}'; } > queue.json
export PATH="$(dirname "$EFPLAN"):$PATH"
# once: is a job's attempt started at most once (events)?
once() { [ -z "$(grep '^start ' "$EV" | awk '{print $2, $3}' | sort | uniq -d)" ]; }
# wait (bounded) until file $1 has a line matching $2
wait_for() {
    for _ in $(seq 1 600); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    fail "never found \"$2\" in $1"
}
RAN=$T/commands
night() { # name, then nightly's own options
    n=$1; shift
    echo "efplan nightly --queue queue.json --state nightly --cluster n1g8 --curves A100${*:+ $*}" >> "$RAN"
    set +e
    $V efplan nightly --queue queue.json --state nightly --cluster n1g8 \
        --curves A100 "$@" >"$n.out" 2>"$n.err"
    echo $? > "$n.rc"
    set -e
}

# ---- night 1 ----------------------------------------------------------
night n1 --now 0 --time-scale 1200 --until now+1h
[ "$(cat n1.rc)" = 0 ] || { cat n1.out n1.err; fail "night 1: exit $(cat n1.rc)"; }
grep -q '^nightly: plan .*/plans/1970-01-01.json: 2 job(s) .* admitted 2' n1.out ||
    { cat n1.out; fail "night 1: the plan"; }
grep -q '"finished": \[' nightly/queue.json || fail "night 1: no memory"
python3 - nightly/queue.json <<'PY' || fail "night 1: queue.json"
import json, sys
d = json.load(open(sys.argv[1]))
jobs = {j["id"]: j for j in d["jobs"]}
assert d["apply"]["finished"] == ["a"], d["apply"]["finished"]
assert list(jobs) == ["b"], list(jobs)
assert jobs["b"].get("promised") == 1, jobs["b"]
assert jobs["b"].get("iterations_done", 0) > 0, jobs["b"]
assert d["apply"]["nightly"]["night"]["done"] is True
PY
[ -f nightly/plans/1970-01-01.svg ] || fail "night 1: no chart"

# ---- night 2: resumes b; a job submitted during it; killed, rerun --------
: > n2.err
set +e
echo "efplan nightly --queue queue.json --state nightly --cluster n1g8 --curves A100 --until now+2h" >> "$RAN"
$V efplan nightly --queue queue.json --state nightly --cluster n1g8 \
    --curves A100 --until now+2h >n2.out 2>>n2.err &
pid=$!
set -e
wait_for nightly/apply/journal.jsonl '"ev":"plan","hash"'
wait_for "$EV" '^start b 2 '
python3 - nightly/plans/1970-01-01.2.jobs.json <<'PY' || fail "night 2: b's progress"
import json, sys
b = [j for j in json.load(open(sys.argv[1]))["jobs"] if j["id"] == "b"][0]
assert b.get("iterations_done", 0) > 0 and b.get("promised") == 1, b
PY
grep -q '"id": "b",' nightly/plans/1970-01-01.2.json || fail "night 2: no b"
# a deadline within reach of the night: its reservation needs GPUs now,
# which b holds as surplus (a running job keeps its GPUs until a promise
# needs them)
job s 99 40000 | sed 's/ "submit_time": 0,//' > s.json
echo 'efplan submit --plan nightly/tonight.json --job "$(cat s.json)"' >> "$RAN"
$V efplan submit --plan nightly/tonight.json --job "$(cat s.json)" \
    >sub.out 2>&1 || { cat sub.out; fail "submit during night 2 failed"; }
grep -q '^admitted: s' sub.out || { cat sub.out; fail "submit: not admitted"; }
grep -q 'efplan apply is applying this plan' sub.out || { cat sub.out; fail "submit: the apply"; }
wait_for "$EV" '^start s 1 '
grep -q 'following the new version of' n2.err || { cat n2.err; fail "night 2 did not follow"; }
kill -9 $pid
wait $pid 2>/dev/null || true
night n2b
grep -q '^nightly: resuming the night of .*1970-01-01.2.json' n2b.out ||
    { cat n2b.out n2b.err; fail "night 2 rerun: no resume"; }
[ "$(cat n2b.rc)" = 0 ] || { cat n2b.out n2b.err; fail "night 2 rerun: exit $(cat n2b.rc)"; }
once || fail "an attempt was launched twice: $(grep '^start ' "$EV")"
python3 - nightly/queue.json <<'PY' || fail "after night 2: queue.json"
import json, sys
d = json.load(open(sys.argv[1]))
jobs = {j["id"]: j for j in d["jobs"]}
assert sorted(jobs) == ["b", "s"], list(jobs)
assert jobs["s"].get("promised") == 1, jobs["s"]
PY

# ---- night 3: the queue edited by hand ---------------------------------
{ echo '{"jobs": ['; job a 1; echo ,; job c 99; echo ']}'; } > queue.json
night n3 --until now+1h
[ "$(cat n3.rc)" = 0 ] || { cat n3.out n3.err; fail "night 3: exit $(cat n3.rc)"; }
grep -q 'queue queue.json: 2 job(s): 1 new, 1 carried over; 1 removed (b), 1 finished or failed before (a)' n3.out ||
    { cat n3.out; fail "night 3: the merge"; }
P3=nightly/plans/1970-01-01.3.json
grep -q '"id": "c",' $P3 && grep -q '"id": "s",' $P3 || fail "night 3: c or s not planned"
grep -q '"id": "b",' $P3 && fail "night 3: the removed b planned"
grep -q '^start c 1 ' "$EV" || fail "night 3: c not launched"

# ---- night 4: the queue file broken --------------------------------------
head -c 60 queue.json > q.tmp && mv q.tmp queue.json
night n4 --until now+1h
[ "$(cat n4.rc)" = 3 ] || { cat n4.out n4.err; fail "night 4: exit $(cat n4.rc), expected 3"; }
grep -q '^efplan: error: queue.json:[0-9]*:[0-9]*: ' n4.err || { cat n4.err; fail "night 4: no file:line:col"; }
grep -q '^start c 2 ' "$EV" || fail "night 4: the promised c did not run"
grep -q '"queue_error": "queue.json:' nightly/queue.json || fail "night 4: error not remembered"

# ---- nights 5 and 6: a run that finds the previous one applying ---------
{ echo '{"jobs": ['; job c 99; echo ']}'; } > queue.json
night n5 --until now+24h &
n5=$!
wait_for "$EV" '^start c 3 '
night n6 --until now+1h
wait $n5 || true
grep -q 'another run takes over' n5.err || { cat n5.err; fail "night 5 did not hand over"; }
[ "$(cat n5.rc)" = 0 ] || { cat n5.out n5.err; fail "night 5: exit $(cat n5.rc)"; }
[ "$(cat n6.rc)" = 0 ] || { cat n6.out n6.err; fail "night 6: exit $(cat n6.rc)"; }
grep -q 'taking over from .*: 2 attempt(s) run on, 0 stopped' n6.err ||
    { cat n6.err; fail "night 6: the takeover"; }
grep -q '^start c 4 ' "$EV" && fail "night 6 restarted c (same allocation)"
once || fail "an attempt was launched twice: $(grep '^start ' "$EV")"

# ---- a dry run plans and prints the night, and writes nothing in DIR ------
snap() { (cd nightly && find . -type f -exec md5sum {} + | sort; find . -type l -exec ls -l {} + | sed 's/.* \.\//.\//' | sort); }
snap > dry.before
mkdir -p tmpd
set +e
TMPDIR=$T/tmpd $V efplan nightly --queue queue.json --state nightly \
    --cluster n1g8 --curves A100 --backend dry-run --until now+1h \
    >dry.out 2>dry.err
rc=$?
set -e
[ "$rc" = 0 ] || { cat dry.out dry.err; fail "dry run: exit $rc"; }
grep -q '^nightly: plan .* (dry run: removed at its end): ' dry.out ||
    { cat dry.out; fail "dry run: the plan line"; }
grep -q '^dry-run of ' dry.out || { cat dry.out; fail "dry run: no actions"; }
snap > dry.after
cmp -s dry.before dry.after ||
    { diff dry.before dry.after; fail "the dry run changed DIR"; }
[ -z "$(ls -A tmpd)" ] || fail "the dry run left $(ls -A tmpd) in TMPDIR"

# ---- a memory that cannot be planned (a model gone from the curves) is
# named as the state folder's, exit 3
mkdir -p bad
printf '{"format": "efplan-jobs", "version": 1, "jobs": [{"id": "x", "model": "gone", "batch_size": 64, "iterations": 100, "submit_time": 0, "deadline": null, "promised": 1}]}\n' > bad/queue.json
set +e
$V efplan nightly --queue queue.json --state bad --cluster n1g8 \
    --curves A100 --now 0 --until now+1m >bad.out 2>bad.err
rc=$?
set -e
[ "$rc" = 3 ] || { cat bad.out bad.err; fail "broken memory: exit $rc"; }
grep -q "bad/queue.json (what the state folder remembers) cannot be planned; .*jobs\[0\]\.model: unknown model \"gone\"" bad.err ||
    { cat bad.err; fail "broken memory: the message"; }

# ---- every night's plan and chart kept -----------------------------------
for k in "" .2 .3 .4 .5 .6; do
    for x in json jobs.json svg; do
        [ -f "nightly/plans/1970-01-01$k.$x" ] || fail "no plans/1970-01-01$k.$x"
    done
done
# ---- docs/nightly.md's recipe is these commands, word for word ------------
sort -u "$RAN" | while IFS= read -r c; do
    grep -qxF "$c" "$EFPLAN_ROOT/docs/nightly.md" ||
        fail "docs/nightly.md lacks the command: $c"
done
for c in $(grep -n '^efplan ' "$EFPLAN_ROOT/docs/nightly.md" | cut -d: -f1); do
    line=$(sed -n "${c}p" "$EFPLAN_ROOT/docs/nightly.md")
    grep -qxF "$line" "$RAN" || fail "docs/nightly.md: not a command of this test: $line"
done
echo "nightly: ok"
