#!/bin/sh
# End-to-end: the conventions every command shares (README "Conventions",
# issue 21):
# - --json prints the summary as one JSON object (plan, validate,
#   simulate, compare, oracle, submit --plan) that python3 parses, and
#   carries the numbers the human summary shows;
# - '-' reads a queue from standard input and writes the plan to standard
#   output (the summary then goes to standard error);
# - relative times: with --now fixed, a deadline "now+8h" is --now +
#   28800 s; a deadline already past at --now says so;
# - --time-zone utc|local|epoch (TZ set here) in plan's and submit's
#   human output;
# - a mistyped option gets a suggestion; an option given twice is a
#   usage error naming both values; -q drops the notes; no progress line
#   when standard error is not a terminal.
. "$(dirname "$0")/lib/common.sh"
cd "$T"
json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

cat > q.json <<'JSON'
{"jobs": [
 {"id": "a-job-id-longer-than-twenty-characters", "model": "resnet50",
  "batch_size": 64, "iterations": 2000, "submit_time": "now",
  "deadline": "now+8h"},
 {"id": "late", "model": "resnet50", "batch_size": 64, "iterations": 100,
  "submit_time": "now-3h", "deadline": "now-1h"}]}
JSON
NOW=2025-06-03T00:00:00Z   # 1748908800
P="--cluster n1g8 --curves A100 --now $NOW"

# plan --json: one object, relative deadline resolved against --now
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P --json >plan.json || fail "plan --json failed"
[ "$(json 'd["jobs"][0]["deadline"]' <plan.json)" = 1748937600 ] ||
    { cat plan.json; fail "now+8h is not --now + 28800"; }
[ "$(json 'd["now"]' <plan.json)" = 1748908800 ] || fail "plan --json: now"
[ "$(json 'd["jobs"][1]["decision"]' <plan.json)" = rejected ] ||
    fail "a past deadline is not rejected"
json 'd["jobs"][1]["reason"]' <plan.json | grep -q "already past" ||
    { cat plan.json; fail "a past deadline's reason"; }

# the human table: full ids, GPUs and reason columns, UTC times
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P >plan.txt || fail "plan failed"
grep -q "^  job  *model .* GPUs decision .* reason$" plan.txt ||
    { cat plan.txt; fail "plan's table header"; }
grep -q "^  a-job-id-longer-than-twenty-characters resnet50 .* admitted  *2025-06-03T08:00:00Z " plan.txt ||
    { cat plan.txt; fail "plan's row: full id, UTC deadline"; }
grep -q "^  late .* rejected .*the deadline is already past" plan.txt ||
    { cat plan.txt; fail "plan's row: past deadline"; }
grep -q "slots of 60 s from 2025-06-03T00:00:00Z" plan.txt ||
    fail "plan's now in UTC"
# --time-zone local with a fixed TZ (POSIX form: no zone database needed)
# shellcheck disable=SC2086
TZ=XST-2 $V "$EFPLAN" plan --jobs q.json $P --time-zone local >local.txt ||
    fail "plan --time-zone local failed"
grep -q "slots of 60 s from 2025-06-03T02:00:00+02:00" local.txt ||
    { cat local.txt; fail "plan --time-zone local: now"; }
grep -q " 2025-06-03T10:00:00+02:00 " local.txt ||
    { cat local.txt; fail "plan --time-zone local: deadline"; }
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P --time-zone epoch >epoch.txt ||
    fail "plan --time-zone epoch failed"
grep -q "slots of 60 s from 1748908800," epoch.txt && grep -q " 1748937600 " epoch.txt ||
    { cat epoch.txt; fail "plan --time-zone epoch"; }

# '-': the queue from standard input, the plan file to standard output
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs - $P --out - <q.json >p.json 2>sum.txt ||
    fail "plan --jobs - --out - failed"
json 'd["format"]' <p.json | grep -qx efplan-plan || fail "--out -: not a plan"
grep -q "^plan     2 jobs" sum.txt || fail "--out -: the summary is not on stderr"
[ ! -e ./- ] || fail "--out - wrote a file named -"
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P --out p.json >/dev/null || fail "plan --out failed"

# validate --json, and '-' read once
$V "$EFPLAN" validate --jobs - --cluster n1g8 --json <q.json >v.json ||
    fail "validate --json failed"
[ "$(json 'd["jobs"]["jobs"], d["cluster"]["gpus"], d["ok"]' <v.json)" = "(2, 8, True)" ] ||
    { cat v.json; fail "validate --json content"; }

# submit --plan --json: the verdict, times relative to --now
$V "$EFPLAN" submit --plan p.json --now "$NOW" --json --job \
    '{"id":"big","model":"resnet50","batch_size":64,"iterations":900000,"deadline":"now+1h"}' \
    >s.json && fail "an infeasible submit exited 0"
[ "$(json 'd["decision"], d["deadline"], d["earliest_feasible_deadline"] > d["deadline"], d["plan_rewritten"]' <s.json)" = \
  "('rejected', 1748912400, True, False)" ] || { cat s.json; fail "submit --json verdict"; }
rc=0
$V "$EFPLAN" submit --plan p.json --now "$NOW" --job \
    '{"id":"big","model":"resnet50","batch_size":64,"iterations":900000,"deadline":"now+1h"}' \
    >s.txt || rc=$?
[ $rc -eq 4 ] || fail "infeasible submit: exit $rc"
grep -q "^earliest deadline that can be guaranteed: 2025-06-03T[0-9:]*Z (.* after the deadline asked)$" s.txt ||
    { cat s.txt; fail "submit: the earliest deadline in UTC"; }

# simulate, compare and oracle --json
$V "$EFPLAN" simulate --trace "$D/jobs/sample.json" --cluster n2g2 --curves A100 \
    --policy ef --json >sim.json 2>sim.err || fail "simulate --json failed"
[ "$(json 'd["jobs"], d["policy"]' <sim.json)" = "(32, 'ef')" ] || fail "simulate --json"
[ ! -s sim.err ] || fail "simulate --json wrote to stderr"
$V "$EFPLAN" simulate --trace "$D/jobs/sample.json" --cluster n2g2 --curves A100 \
    --policy ef >sim.txt || fail "simulate failed"
grep -q "mean cluster efficiency .*speed-ups over 1 GPU" sim.txt ||
    fail "simulate: efficiency unexplained"
$V "$EFPLAN" compare --traces "$D/jobs/sample.json" --policies ef,gandiva,tiresias \
    --cluster n8g8 >cmp.txt 2>cmp.err || fail "compare failed"
grep -q "^Note: gandiva and tiresias give identical results" cmp.txt ||
    { cat cmp.txt; fail "compare: no note on identical policies"; }
[ ! -s cmp.err ] || fail "compare: progress on a standard error that is no terminal"
$V "$EFPLAN" compare --traces "$D/jobs/sample.json" --policies ef,gandiva \
    --cluster n8g8 --json >cmp.json || fail "compare --json failed"
[ "$(json 'len(d["cells"]), d["cells"][1]["same_results_as"]' <cmp.json)" = "(2, 'gandiva')" ] ||
    fail "compare --json"
$V "$EFPLAN" oracle --jobs "$D/jobs/oracle10.json" --cluster n1g8 --curves A100 \
    --slot 300 --time-limit 0 --node-limit 100000 --json >o.json || fail "oracle --json failed"
[ "$(json 'd["ilp"]["status"], d["greedy"]["admitted"] <= d["ilp"]["admitted"]' <o.json)" = "('optimal', True)" ] ||
    { cat o.json; fail "oracle --json"; }

# -q: no notes ("wrote ...")
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P --out p2.json -q >q.txt || fail "plan -q failed"
grep -q "^wrote" q.txt && fail "plan -q printed a note"
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P --out p2.json >q.txt || fail "plan failed"
grep -q "^wrote p2.json" q.txt || fail "plan without -q: no 'wrote' note"

# usage errors: a typo, an option given twice, --json with --out -
rc=0
$V "$EFPLAN" plan --jobs q.json --outt x 2>err.txt || rc=$?
[ $rc -eq 2 ] || fail "--outt: exit $rc"
grep -q "^efplan: error: unknown option --outt; did you mean --out?$" err.txt ||
    { cat err.txt; fail "--outt: no suggestion"; }
rc=0
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json --jobs other.json $P 2>err.txt || rc=$?
[ $rc -eq 2 ] || fail "--jobs twice: exit $rc"
grep -q '^efplan: error: --jobs given twice ("q.json" and "other.json")' err.txt ||
    { cat err.txt; fail "--jobs twice: message"; }
rc=0
# shellcheck disable=SC2086
$V "$EFPLAN" plan --jobs q.json $P --json --out - >/dev/null 2>err.txt || rc=$?
[ $rc -eq 2 ] || fail "--json --out -: exit $rc"
echo "conventions: ok"
