#!/bin/sh
# End-to-end: an empty job queue is a normal night, not an error.
# For an empty JSON queue ({"jobs": []}) and an empty trace CSV (a header
# line only), with the real binary:
# - plan exits 0, says 0 jobs, writes an efplan-plan v1 file with no jobs
#   and no slots and a valid chart;
# - apply of that plan (dry-run and local) is a no-op that exits 0 and
#   says so; local writes a state.json that is an empty queue, which plan
#   accepts again (the nightly loop goes on);
# - submit admits a job that fits into the empty plan (and rejects one
#   that does not, exit 4, plan untouched); apply --backend dry-run of the
#   result starts that job;
# - validate, simulate, compare and oracle exit 0 with zero results and
#   finite JSON (deadline ratio of no deadline jobs is 0, never NaN).
# Malformed queues stay errors (exit 3, nothing written).
. "$(dirname "$0")/lib/common.sh"
cd "$T"

printf '{"jobs": []}\n' > q.json
printf 'job_id,submit_time,iteration,model_name,ddl,batch_size\n' > q.csv
# the job submit adds, with a command so that apply can launch it
NEW='{"id":"new","model":"resnet50","batch_size":64,"iterations":1000,"deadline":3600}'
cat > new.json <<'JSON'
{"jobs": [{"id": "new", "model": "resnet50", "batch_size": 64,
  "iterations": 1000, "submit_time": 0, "deadline": 3600,
  "command": ["true"]}]}
JSON

no_nan() { # file
    ! grep -Eiq '(^|[^a-z_])(nan|inf|infinity)([^a-z_]|$)' "$1" ||
        fail "$1 holds a non-finite number"
}

for q in q.json q.csv; do
    n=${q%%.*}-${q##*.}
    # plan
    $V "$EFPLAN" plan --jobs $q --cluster n1g8 --curves A100 \
        --out $n.plan.json --svg $n.svg >$n.plan.out ||
        fail "$q: plan of an empty queue failed"
    grep -q '^plan     0 jobs on n1g8' $n.plan.out || fail "$q: no '0 jobs' summary"
    grep -q '^  admitted 0, rejected 0, best-effort 0$' $n.plan.out ||
        fail "$q: summary counts"
    for k in '"format": "efplan-plan"' '"version": 2' '"jobs": [' \
             '"runs": [' '"slot_ends": []' '"summary": {"admitted": 0'; do
        grep -qF "$k" $n.plan.json || fail "$q: plan lacks $k"
    done
    # no jobs and no slots: each array closes on the next line
    [ "$(grep -A1 -F '"jobs": [' $n.plan.json | tail -1)" = '  ],' ] ||
        fail "$q: the plan's jobs array is not empty"
    [ "$(grep -A1 -F '"runs": [' $n.plan.json | tail -1)" = '  ],' ] ||
        fail "$q: the plan's runs array is not empty"
    head -1 $n.svg | grep -q '^<svg ' || fail "$q: chart does not start with <svg"
    [ "$(tail -1 $n.svg)" = '</svg>' ] || fail "$q: chart not closed"
    grep -q '>no jobs (empty queue)<' $n.svg || fail "$q: chart does not say empty"
    grep -q 'text-anchor="middle">60s</text>' $n.svg || fail "$q: chart axis (one slot, 0s to 60s)"

    # apply: a no-op that says so
    $V "$EFPLAN" apply $n.plan.json --backend dry-run --state $n.dry >$n.dry.out ||
        fail "$q: dry-run apply of the empty plan failed"
    grep -q 'the plan has no jobs (empty queue): nothing to run' $n.dry.out ||
        fail "$q: dry-run does not say the plan is empty"
    [ ! -e $n.dry ] || fail "$q: dry-run wrote a state directory"
    $V "$EFPLAN" apply $n.plan.json --backend local --state $n.st >$n.loc.out ||
        fail "$q: local apply of the empty plan failed"
    grep -q 'nothing to run' $n.loc.out || fail "$q: local apply does not say so"
    grep -q '0 launch(es); jobs: 0 done, 0 failed, 0 not done' $n.loc.out ||
        fail "$q: local apply counts"
    grep -q '"jobs": \[\]' $n.st/state.json || fail "$q: state.json is not an empty queue"
    $V "$EFPLAN" apply $n.plan.json --backend local --state $n.st >$n.again.out ||
        fail "$q: second apply failed"
    grep -q 'already applied' $n.again.out || fail "$q: second apply not a no-op"
    $V "$EFPLAN" plan --jobs $n.st/state.json --cluster n1g8 --curves A100 \
        >$n.next.out || fail "$q: the empty state.json does not plan"
    grep -q '^plan     0 jobs' $n.next.out || fail "$q: next night's plan"

    # submit into the empty plan
    cp $n.plan.json $n.sub.json
    cp $q $q.orig
    $V "$EFPLAN" submit --plan $n.sub.json --job "$NEW" >$n.sub.out ||
        fail "$q: submit into the empty plan failed"
    # the JSON jobs file the plan names gets the job; a CSV one is kept
    if [ $q = q.json ]; then
        grep -q '"id": "new"' $q || fail "$q: submit did not add the job"
    else
        cmp -s $q $q.orig || fail "$q: submit changed a CSV jobs file"
        grep -q 'is a CSV trace' $n.sub.out || fail "$q: no CSV note"
    fi
    mv $q.orig $q
    grep -q '^admitted: new' $n.sub.out || fail "$q: submit: expected admitted"
    grep -q '"id": "new"' $n.sub.json || fail "$q: submit did not rewrite the plan"
    cp $n.plan.json $n.rej.json
    set +e
    $V "$EFPLAN" submit --plan $n.rej.json --job \
        '{"id":"huge","model":"vgg16","batch_size":256,"iterations":200000,"deadline":5000}' \
        >$n.rej.out
    rc=$?
    set -e
    [ $rc -eq 4 ] || fail "$q: infeasible submit into the empty plan: exit $rc, expected 4"
    cmp -s $n.rej.json $n.plan.json || fail "$q: rejected submit changed the plan"
    $V "$EFPLAN" apply $n.sub.json --backend dry-run --jobs new.json \
        >$n.sub.dry || fail "$q: dry-run of the submitted plan failed"
    grep -q '^  start new attempt 1 on node 0' $n.sub.dry ||
        fail "$q: the submitted job is not started"

    # validate, simulate, oracle
    $V "$EFPLAN" validate --jobs $q --cluster n1g8 --curves A100 >$n.val.out ||
        fail "$q: validate of an empty queue failed"
    grep -q ': 0 jobs (0 with a deadline, 0 best-effort)' $n.val.out ||
        fail "$q: validate does not report 0 jobs"
    for pol in ef edf gandiva chronus pollux; do
        $V "$EFPLAN" simulate --trace $q --cluster n1g8 --curves A100 \
            --policy $pol --out $n.$pol.json --jobs-out $n.$pol.csv \
            --svg $n.$pol.svg >$n.$pol.out ||
            fail "$q: simulate --policy $pol of an empty trace failed"
        grep -q '"deadline_ratio": 0,' $n.$pol.json || fail "$q: $pol: deadline ratio"
        grep -q '"jobs": 0,' $n.$pol.json || fail "$q: $pol: job count"
        no_nan $n.$pol.json
        no_nan $n.$pol.out
    done
    $V "$EFPLAN" oracle --jobs $q --cluster n1g8 --curves A100 \
        --out $n.or.json --plan-out $n.orp.json >$n.or.out ||
        fail "$q: oracle of an empty queue failed"
    grep -q 'answer: optimum 0 (a plan admits 0, no plan admits more); greedy 0 is within 0' $n.or.out ||
        fail "$q: oracle answer"
    no_nan $n.or.json
    $V "$EFPLAN" apply $n.orp.json --backend dry-run >/dev/null ||
        fail "$q: the oracle's empty plan does not apply"
done

$V "$EFPLAN" compare --traces q.json,q.csv --policies ef,edf --cluster n1g8 \
    --out cmp.json --markdown cmp.md >cmp.out || fail "compare of empty traces failed"
grep -q '| 0.000 | 0.000 |' cmp.md || fail "compare: expected 0.000 ratios"
no_nan cmp.json

# malformed queues stay errors, and nothing is written
printf '{"jobs": 5}\n' > bad1.json
printf '{"format": "efplan-jobs", "version": 1}\n' > bad2.json
: > bad3.csv
printf '1,0,100,resnet50,200,64\n' > bad4.csv
for b in bad1.json bad2.json bad3.csv bad4.csv; do
    set +e
    $V "$EFPLAN" plan --jobs $b --cluster n1g8 --curves A100 --out $b.plan \
        >$b.out 2>$b.err
    rc=$?
    set -e
    [ $rc -eq 3 ] || fail "$b: plan exit $rc, expected 3"
    [ ! -e $b.plan ] || fail "$b: a plan was written"
    grep -q '^efplan: error: ' $b.err || fail "$b: no error message"
done
echo "empty e2e ok"
