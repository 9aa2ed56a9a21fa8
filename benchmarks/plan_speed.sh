#!/bin/sh
# benchmarks/plan_speed.sh: time `efplan plan` on whole traces and print
# jobs planned per second, with the ratio against the reference
# simulator's user CPU time for ElasticFlow (ef-accessctrl) on the same
# trace and cluster where one was measured
# (../shared/reference/reference-runs.md). Run from the repository root
# after `make`: sh benchmarks/plan_speed.sh [REPEATS]. Times are wall seconds
# (best of REPEATS, plan file written, default OpenMP threads).
#
# The planner's plan is the fluid, overhead-free schedule; the reference
# number is a full simulation. The ratio says how much faster efplan
# answers the planning question, not that the two compute the same thing.
set -eu
R=${1:-3}
E=${EFPLAN:-build/efplan}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf '%-14s %-7s %7s %9s %12s %12s %10s\n' trace cluster jobs "wall s" "jobs/s" "ref cpu s" "speed-up"
now_ns() { date +%s%N; }
run() { # trace cluster refcpu
    best=""
    i=0
    while [ $i -lt "$R" ]; do
        a=$(now_ns)
        "$E" plan --jobs "inputs/traces/$1" --cluster "$2" --curves A100 \
            --out "$T/p.json" >/dev/null
        b=$(now_ns)
        c=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", (b - a) / 1e9}')
        best=$(awk -v x="$best" -v c="$c" 'BEGIN{print (x == "" || c < x) ? c : x}')
        i=$((i + 1))
    done
    n=$(awk 'END{print NR-1}' "inputs/traces/$1")
    jps=$(awk -v n="$n" -v c="$best" 'BEGIN{printf "%.0f", n / c}')
    if [ "$3" = "-" ]; then ratio="-"; else
        ratio=$(awk -v r="$3" -v c="$best" 'BEGIN{printf "%.0fx", r / c}'); fi
    printf '%-14s %-7s %7d %9s %12s %12s %10s\n' "$(basename "$1" .csv)" "$2" "$n" "$best" "$jps" "$3" "$ratio"
}
run itp/cluster10.csv n16g8 4.9
run itp/cluster01.csv n64g8 1122.4
run itp/cluster09.csv n128g8 -
run itp/cluster08.csv n128g8 -
