#!/bin/sh
# benchmarks/loop_waves.sh: the closed loop's own scenario, run "before"
# (efplan serve --moves any --learn off: the paper's moves, every job at
# its curve) and "after" (the defaults), side by side. Not part of make
# test. Run from the repository root after `make`:
#
#   sh benchmarks/loop_waves.sh [OUT.md]
#
# efplan serve --backend local --single-user on n2g8, curves
# tests/data/loop_curves (dummy: 1 iteration/s per GPU; sublinear: 1,
# 1.9, 3.6, 6.4 on 1, 2, 4, 8 GPUs), slots of 60 s, overhead fig12,
# --time-scale 100 (as loop_vs_blind.sh). The jobs are
# tests/data/loop_job.py at 0.7 of the curve (dummy) or 0.6 (sublinear),
# grace_seconds 5; three waves, waves 2 and 3 of wave 1's models:
#   wave 1 at start:      w1a dummy 6000 it, deadline +3000
#                         w1b sublinear 3000 it, deadline +2400, crashes
#                             once at 40%
#                         w1c sublinear 2000 it, deadline +2100
#                         w1d dummy 4000 it, best-effort
#   wave 2 at start+900:  w2a dummy 2400 it, deadline its submission+1500
#                         w2b sublinear 1800 it, deadline +1500
#   kill -9 of the service at start+1200, restarted at once (same store)
#   wave 3 at start+1800: w3a dummy 2000 it, deadline +1200
#                         w3b sublinear 2000 it, deadline +1500
# No drain. Then a bounded wait (1500 x 0.2 s) until every job ended.
# Measured from the service's records (GET /v1/jobs/ID: attempts,
# history; the serve log's "running -> stopping" lines for the stops'
# reasons) and the jobs' own events file ("double" lines: an attempt that
# found another attempt of its job holding the job's lock): attempts per
# job (median, max), stops by the loop and their reasons,
# admitted/met/missed, each miss's first at-risk flag (at least a slot
# ahead?), later-wave admitted misses, overlapping attempts of one job.
# The table goes into OUT.md (default benchmarks/results/loop.md) between
# "<!-- loop_waves -->" markers, and to standard output. KEEP=DIR keeps
# every file. Every wait is bounded; every process it started is killed
# at the end.
set -eu
OUTMD=benchmarks/results/loop.md
[ $# -le 1 ] || { echo "usage: $0 [OUT.md]" >&2; exit 2; }
[ $# -eq 0 ] || OUTMD=$1
[ -f tests/data/loop_job.py ] || { echo "$0: run from the repository root" >&2; exit 2; }
ROOT=$PWD
E=${EFPLAN:-build/efplan}
case $E in /*) ;; *) E=$ROOT/$E ;; esac
[ -x "$E" ] || { echo "$0: $E: not built (make)" >&2; exit 2; }
case $OUTMD in /*) ;; *) OUTMD=$ROOT/$OUTMD ;; esac
JOB=$ROOT/tests/data/loop_job.py
CURVES=$ROOT/tests/data/loop_curves
SCALE=100
SLOT=60
CL=n2g8
T=$(mktemp -d)
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
SRV=
. "$ROOT/benchmarks/loop_lib.sh"
cleanup() {
    stop_pid "$SRV"; SRV=
    for m in before after; do kill_groups "$T/$m/run/run"; done
    if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP" && cp -R "$T/." "$KEEP/" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "loop_waves: $*" >&2; }

SUB=1,1.9,3.6,6.4
# id wave model iterations deadline-offset|null speed crash-at submit-offset
scenario() {
    cat <<'S'
w1a 1 dummy 6000 3000 0.7 -1 0
w1b 1 sublinear 3000 2400 0.6 0.4 0
w1c 1 sublinear 2000 2100 0.6 -1 0
w1d 1 dummy 4000 null 0.7 -1 0
w2a 2 dummy 2400 1500 0.7 -1 900
w2b 2 sublinear 1800 1500 0.6 -1 900
w3a 3 dummy 2000 1200 0.7 -1 1800
w3b 3 sublinear 2000 1500 0.6 -1 1800
S
}
IDS=$(scenario | awk '{ print $1 }')

submit_wave() { # dir wave base
    scenario | while read -r id w m it off sp cr sub; do
        [ "$w" = "$2" ] || continue
        t=$(now)
        if [ "$off" = null ]; then dl=null; else dl=$((t + off)); fi
        tp=; [ "$m" = dummy ] || tp="1:1,2:1.9,4:3.6,8:6.4"
        "$E" submit --server "$URL" --token-file "$TOK" \
            --job "$(job_json "$id" "$m" "$it" "$dl" "$sp" "$cr" \
                "$1/events" null "$tp")" >>"$1/submits.out" 2>&1 || true
    done
}

run_one() { # mode: before | after
    d=$T/$1
    mkdir -p "$d"
    if [ "$1" = before ]; then set -- --moves any --learn off; else set --; fi
    SARGS="--cluster $CL --curves $CURVES $*"
    # shellcheck disable=SC2086
    serve_start "$d" "$d/serve.log" $SARGS
    START=$(now)
    echo "$START" >"$d/start"
    submit_wave "$d" 1
    wait_clock $((START + 900))
    submit_wave "$d" 2
    wait_clock $((START + 1200))
    kill -9 "$SRV"; wait "$SRV" 2>/dev/null || true
    echo "$(date +%s)" >"$d/killed"
    # shellcheck disable=SC2086
    serve_start "$d" "$d/serve.log" $SARGS
    echo "$(now)" >"$d/restarted"
    wait_clock $((START + 1800))
    submit_wave "$d" 3
    i=0
    ENDED=yes
    while ! jobs_ended $IDS; do
        i=$((i + 1))
        [ $i -le 1500 ] || { ENDED=no; break; }
        sleep 0.2
    done
    echo "$ENDED $(now)" >"$d/ended"
    for j in $IDS; do api GET "/v1/jobs/$j" >"$d/$j.json"; done
    stop_pid "$SRV"; SRV=
    kill_groups "$d/run/run"
}

# per mode, one row per job and one summary line
report() { # mode
    d=$T/$1
    S=$(cat "$d/start")
    : >"$d/att.txt"
    for j in $IDS; do
        f=$d/$j.json
        w=$(scenario | awk -v j="$j" '$1 == j { print $2 }')
        jq -r --arg j "$j" --arg w "$w" --argjson s "$S" --argjson slot "$SLOT" '
          def rel(x): if x == null then "-" else "\(x - $s)" end;
          (.attempts // []) as $a
          | ([.history[]? | select(.kind == "done") | .at] | first) as $fin
          | ([.history[]? | select(.kind == "at_risk") | .at] | first) as $risk
          | (.decision // "-") as $dec
          | (if $dec == "admitted" and .deadline != null then
               (if $fin != null and $fin <= .deadline then "met" else "missed" end)
             else "-" end) as $met
          | ([range(1; $a | length) as $k | ($a | sort_by(.started)) as $b
              | select($b[$k].started < ($b[$k - 1].ended // 1e18))] | length) as $ovl
          | [$j, $w, $dec, rel(.deadline), rel($fin), $met,
             (if $risk == null then "-" else
                "start+\($risk - $s)" + (if .deadline == null then "" else
                  " (\(.deadline - $risk) s ahead)" end) end),
             ($a | length), ([$a[] | select(.result == "stopped")] | length),
             ([.history[]? | select(.kind == "restart")] | length), $ovl,
             (if $risk != null and .deadline != null and .deadline - $risk >= $slot then 1 else 0 end)]
          | @tsv' "$f" >>"$d/att.txt"
    done
    # the loop's stops and their reasons (the serve log)
    stop_reasons "$d/serve.log" >"$d/why.txt"
    grep -c '^double ' "$d/events" >"$d/double.txt" 2>/dev/null || echo 0 >"$d/double.txt"
}

for m in before after; do
    say "$m: efplan serve --backend local on $CL$( [ $m = before ] && echo ' --moves any --learn off')"
    run_one $m
    report $m
    say "$m: ended $(cut -d' ' -f1 "$T/$m/ended")"
done

summary() { # mode
    d=$T/$1
    # attempts per job that ran: median and max
    mm=$(awk -F'\t' '$8 > 0 { print $8 }' "$d/att.txt" | median_max)
    awk -F'\t' -v m="$1" -v dbl="$(cat "$d/double.txt")" -v why="$(cat "$d/why.txt")" \
        -v med="${mm% *}" -v mx="${mm#* }" '
        { st += $9
          if ($3 == "admitted" && $6 != "-") { adm++; if ($6 == "met") met++
              else { miss++; if ($12 == 1) ahead++; if ($2 > 1) late++ } }
          if ($3 == "rejected") rej++; ovl += $11 }
        END { printf "| %s | %s | %d | %d (%s) | %d of %d | %d | %d | %d of %d | %d | %d overlapping attempts, %d double |\n",
                  m, med, mx, st, why, met, adm, rej, miss, ahead, miss, late, ovl, dbl }' "$d/att.txt"
}
rows() { # mode
    awk -F'\t' -v m="$1" '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
        $1, m, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$T/$1/att.txt"
}

cat >"$T/waves.md" <<EOF
# The loop's own scenario: waves, a crash, a kill -9

Generated by \`sh benchmarks/loop_waves.sh\` ($(nproc) cores, load average $LOAD0 at the start, $(date -u +%Y-%m-%d),
efplan at commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- . ':!benchmarks/results' 2>/dev/null || echo " with uncommitted changes")); do not edit by hand. One run of
each, wall-clock driven (100 plan seconds per wall second): a rerun gives
figures a few plan seconds apart.

\`efplan serve --backend local --single-user --time-scale 100\` on $CL,
curves \`tests/data/loop_curves\`, slots of 60 s, overhead fig12, a fresh
store per run; the jobs are \`tests/data/loop_job.py\` at 0.7 (model
\`dummy\`) or 0.6 (\`sublinear\`) of their curve, grace_seconds 5:

| job | wave (submitted at) | model | iterations | deadline | other |
|---|---|---|---:|---|---|
$(scenario | awk '{ printf "| %s | %s (start+%s) | %s | %s | %s | %s |\n", $1, $2, $8, $3, $4,
    ($5 == "null" ? "none (best-effort)" : "its submission+" $5), ($7 > 0 ? "crashes once at " $7 * 100 "%" : "") }')

A \`kill -9\` of the service at start+1200 and a restart at once on the
same store; no drain. **before**: \`--moves any --learn off\` (the paper's
rule: every re-plan re-derives each allocation; every job planned at its
curve and the overhead model, measured speeds kept but not used);
**after**: the defaults (\`--moves net --learn on\`).

| run | attempts per job that ran: median | max | stops by the loop (reasons) | deadlines met of admitted | rejected | admitted misses | misses flagged at risk a slot ahead | later-wave admitted misses | no job twice at once |
|---|---:|---:|---|---:|---:|---:|---:|---:|---|
$(summary before)
$(summary after)

| job | run | wave | decision | deadline | finished at | met | first at-risk flag | attempts | stopped by the loop | relaunches after a crash | overlapping attempts |
|---|---|---|---|---:|---:|---|---|---:|---:|---:|---:|
$(rows before)
$(rows after)

What \`efplan submit\` told the submitters (after; before, every job was
planned at its curve):

\`\`\`text
$(sed "s|$T/||g" "$T/after/submits.out")
\`\`\`

Times are plan seconds after the run's start (its first submission).
Stops are the serve log's "running -> stopping" lines (the loop's own
reason for each); "overlapping attempts": an attempt of a job that
started before the job's previous attempt ended (the store's attempt
rows); "double": an attempt that found another attempt of its job
holding the job's lock (the stand-in job's events file). Targets
(issue 31): median <= 2 and max <= 4 attempts per job, no later-wave
admitted miss, every miss flagged a slot ahead, no job twice at once.

To reproduce: \`make && sh benchmarks/loop_waves.sh\` (KEEP=DIR keeps
the stores, the service's logs and the events files).
EOF
cat "$T/waves.md"
md_section "$OUTMD" loop_waves "$T/waves.md"
