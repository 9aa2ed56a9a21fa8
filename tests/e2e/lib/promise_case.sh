#!/bin/sh
# tests/e2e/lib/promise_case.sh DIR CASE...: run one case of the promise
# property test (tests/e2e/promise.sh, benchmarks/promise_sweep.sh).
# CASE is one line of promise_gen.awk, as separate words. Generates the
# trace, simulates it with --policy ef and checks the jobs CSV:
#   - every admitted deadline job (state not "rejected", a deadline) met
#     its deadline (met = 1; an unfinished one counts as missed);
#   - when the jobs CSV has an at_risk column (a reason; empty: not
#     flagged): no reason is blank (spaces only), only admitted deadline
#     jobs are flagged, and the result's "at_risk" count, when it has one,
#     equals the flagged rows; a result with the count needs the column.
# Writes DIR/ID.res, one line:
#   id overhead eb_sim jobs deadline_jobs admitted missed unfinished
#   worst_lateness_s flagged deadline_ratio failed flagged_missed plan
# (missed: admitted deadline jobs that missed, unfinished ones included;
# unfinished: those of them not done; worst lateness: end - deadline over
# the finished misses, 0 if none; flagged: -1 without an at_risk column;
# failed: 0 or 1; flagged_missed: the missed jobs among the flagged;
# plan: the PROMISE_PLAN verdict below, -1 when not run), and,
# when the case failed, DIR/ID.fail: the failure report, with the exact
# commands that reproduce it. Scratch files live in DIR/ID/, removed
# afterwards. Env: EFPLAN (the binary), VALGRIND (an optional command
# prefix). Exits 0 unless DIR cannot be written.
set -u
dir=$1; shift
id=$1 n=$2 gpn=$3 nodes=$4 ia=$6 dlo=$7 dhi=$8 be=$9
shift 9
ebt=$1 ebs=$2 slot=$3 ovh=$4 ds=$5
V=${VALGRIND:-}
w=$dir/$id
mkdir -p "$w" || exit 1
eb_gen=""
case $ebt in 0|0.000) ;; *) eb_gen=" --elastic-batch $ebt" ;; esac
eb_sim=""
[ "$ebs" = 1 ] && eb_sim=" --elastic-batch"
gen="gen-trace --jobs $n --mean-interarrival $ia --deadline-factor $dlo $dhi\
 --seed $id --best-effort $be --duration-scale $ds$eb_gen --out trace.csv"
simc="simulate --trace trace.csv --cluster n${nodes}g$gpn --curves A100\
 --policy ef --slot $slot --overhead $ovh$eb_sim --jobs-out jobs.csv\
 --out result.json"
repro() {
    echo "  reproduce (in an empty directory):"
    echo "    $EFPLAN $gen"
    echo "    $EFPLAN $simc"
}
eb_word=off
[ "$ebs" = 1 ] && eb_word=on
what="case $id ($n jobs, n${nodes}g$gpn, overhead $ovh, elastic batch $eb_word)"

# shellcheck disable=SC2086 # the commands are split on purpose
if ! (cd "$w" && $V "$EFPLAN" $gen >gen.out 2>&1); then
    { echo "FAIL $what: gen-trace failed"; sed 's/^/    /' "$w/gen.out"
      repro; } >"$dir/$id.fail"
    echo "$id $ovh $ebs $n 0 0 0 0 0 -1 0 1 0" >"$dir/$id.res"
    rm -rf "$w"; exit 0
fi
# shellcheck disable=SC2086
if ! (cd "$w" && $V "$EFPLAN" $simc >sim.out 2>&1); then
    { echo "FAIL $what: simulate failed"; tail -5 "$w/sim.out" |
      sed 's/^/    /'; repro; } >"$dir/$id.fail"
    echo "$id $ovh $ebs $n 0 0 0 0 0 -1 0 1 0" >"$dir/$id.res"
    rm -rf "$w"; exit 0
fi
# PROMISE_PLAN=1: also plan the trace with the same options and check the
# plan file with validate --plan (the promise check): pv is 0 when both
# pass, 1 when plan fails (its own check: exit 5), 2 when validate finds
# an admitted job ending after its deadline (exit 9), 3 another failure
pv=-1
if [ "${PROMISE_PLAN:-0}" = 1 ]; then
    planc="plan --jobs trace.csv --cluster n${nodes}g$gpn --curves A100\
 --slot $slot --overhead $ovh$eb_sim --out plan.json"
    prc=0
    # shellcheck disable=SC2086
    (cd "$w" && $V "$EFPLAN" $planc >plan.out 2>&1) || prc=$?
    vrc=0
    [ "$prc" = 0 ] && { (cd "$w" && $V "$EFPLAN" validate --plan plan.json \
        >val.out 2>&1) || vrc=$?; }
    if [ "$prc" = 0 ] && [ "$vrc" = 0 ]; then pv=0
    elif [ "$prc" = 5 ]; then pv=1
    elif [ "$vrc" = 9 ]; then pv=2
    else pv=3; fi
    if [ "$pv" != 0 ]; then
        { echo "FAIL $what: plan (exit $prc) / validate --plan (exit $vrc)"
          tail -3 "$w/plan.out" "$w/val.out" 2>/dev/null | sed 's/^/    /'
          echo "    $EFPLAN $planc"; } >>"$dir/$id.planfail"
    fi
fi
ratio=$(sed -n 's/^  "deadline_ratio": \([0-9.eE+-]*\),\{0,1\}$/\1/p' \
    "$w/result.json")
risk=$(sed -n 's/^  "at_risk": \([0-9]*\),\{0,1\}$/\1/p' "$w/result.json")
awk -v id="$id" -v ovh="$ovh" -v ebs="$ebs" -v ratio="${ratio:-0}" \
    -v risk="${risk:--1}" -v what="$what" -v fail="$dir/$id.fail" -v pv="$pv" '
# split a CSV line into f[1..n], honouring double quotes
function csv(line, f,    n, i, c, q, cur, L) {
    if (index(line, "\"") == 0)
        return split(line, f, ",")
    n = 0; cur = ""; q = 0; L = length(line)
    for (i = 1; i <= L; i++) {
        c = substr(line, i, 1)
        if (q) {
            if (c == "\"") {
                if (substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
                else q = 0
            } else cur = cur c
        } else if (c == "\"") q = 1
        else if (c == ",") { f[++n] = cur; cur = "" }
        else cur = cur c
    }
    f[++n] = cur
    return n
}
function say(s) { msg = msg s "\n" }
NR == 1 {
    header = $0
    nc = csv($0, h)
    for (i = 1; i <= nc; i++) col[h[i]] = i
    if (!("met" in col) || !("state" in col) || !("deadline" in col) ||
        !("end" in col)) {
        say("FAIL " what ": jobs CSV header lacks met/state/deadline/end: " $0)
        bad = 1
        exit
    }
    ar = ("at_risk" in col) ? col["at_risk"] : 0
    next
}
{
    csv($0, f)
    jobs++
    dl = f[col["deadline"]] != ""
    if (dl) ndl++
    adm = dl && f[col["state"]] != "rejected"
    if (adm) nadm++
    flag = 0
    if (ar && f[ar] != "") {
        flag = 1; nflag++
        r = f[ar]; gsub(/[ \t]/, "", r)
        if (r == "") {
            say("FAIL " what ": at_risk reason is blank: " $0); bad = 1
        }
        if (!adm) {
            say("FAIL " what ": flagged job is not an admitted deadline " \
                "job: " $0)
            bad = 1
        }
    }
    if (adm && f[col["met"]] != "1") {
        miss++
        if (flag) fmiss++
        if (f[col["state"]] != "done" || f[col["end"]] == "") unf++
        else {
            late = f[col["end"]] - f[col["deadline"]]
            if (late > worst) worst = late
        }
        if (miss <= 10)
            rows = rows "    " $0 (flag ? "   (flagged at risk)" : "") "\n"
        bad = 1
    }
}
END {
    if (miss)
        say("FAIL " what ": " miss " of " nadm " admitted deadline jobs " \
            "missed" (unf ? " (" unf " unfinished)" : "") \
            (worst > 0 ? sprintf(", worst lateness %.3f s", worst) : "") \
            "\n  missed jobs" (miss > 10 ? " (first 10)" : "") ":\n    " \
            header "\n" rows)
    if (risk >= 0 && ar && risk != nflag + 0) {
        say("FAIL " what ": result says at_risk " risk ", jobs CSV " \
            "flags " nflag + 0 " rows")
        bad = 1
    }
    if (risk >= 0 && !ar) {
        say("FAIL " what ": result has at_risk, jobs CSV has no at_risk column")
        bad = 1
    }
    printf "%s %s %s %d %d %d %d %d %.3f %d %s %d %d %d\n", id, ovh, ebs, jobs,
        ndl, nadm, miss, unf, worst, ar ? nflag : -1, ratio, bad ? 1 : 0, fmiss,
        pv
    if (bad) printf "%s", msg >fail
}' "$w/jobs.csv" >"$dir/$id.res"
[ -f "$dir/$id.fail" ] && repro >>"$dir/$id.fail"
rm -rf "$w"
exit 0
