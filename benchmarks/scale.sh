#!/bin/sh
# benchmarks/scale.sh: how plan and simulate --policy ef grow with jobs and
# GPUs (issue 20). For each (jobs, cluster) of the grid it makes a queue
# with efplan gen-trace (seed 1, deadline factor 1.2..3, the arrival rate
# scaled with the cluster: mean gap 30720 / GPUs seconds, so load per GPU
# stays comparable) and prints one markdown row: user CPU seconds and peak
# RSS of `efplan plan` (plan file written) and of `efplan simulate
# --policy ef`, and the plan file's size. Run from the repository root
# after `make`:
#   sh benchmarks/scale.sh [GRID]
# GRID is "JOBS:CLUSTER ..." (default: the quick grid below; the issue's
# large points, e.g. 100000:n2048g8, take minutes to an hour each).
# Needs GNU time (/usr/bin/time, Debian package time).
set -eu
E=${EFPLAN:-build/efplan}
GRID=${1:-"1000:n64g8 1000:n2048g8 10000:n64g8 10000:n256g8"}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x /usr/bin/time ] || { echo "scale.sh: needs /usr/bin/time (apt-get install time)"; exit 1; }
echo "| jobs | GPUs | plan user s | plan peak RSS | plan file | simulate user s | simulate peak RSS |"
echo "|---|---|---|---|---|---|---|"
for cell in $GRID; do
    n=${cell%%:*}
    cl=${cell#*:}
    nodes=${cl#n}; nodes=${nodes%%g*}; per=${cl##*g}
    gpus=$((nodes * per))
    gap=$(awk -v g="$gpus" 'BEGIN { printf "%.3f", 30720 / g }')
    "$E" gen-trace --jobs "$n" --mean-interarrival "$gap" \
        --deadline-factor 1.2 3 --seed 1 --out "$T/q.csv"
    /usr/bin/time -f "%U %M" -o "$T/tp" "$E" plan --jobs "$T/q.csv" \
        --cluster "$cl" --curves A100 --out "$T/p.json" >/dev/null
    /usr/bin/time -f "%U %M" -o "$T/ts" "$E" simulate --trace "$T/q.csv" \
        --cluster "$cl" --curves A100 --policy ef --out "$T/s.json" >/dev/null
    size=$(wc -c <"$T/p.json")
    read -r pu pm <"$T/tp"
    read -r su sm <"$T/ts"
    awk -v n="$n" -v g="$gpus" -v pu="$pu" -v pm="$pm" -v sz="$size" \
        -v su="$su" -v sm="$sm" 'BEGIN {
        printf "| %d | %d | %.2f | %.0f MB | %.1f MB | %.2f | %.0f MB |\n",
            n, g, pu, pm / 1024, sz / 1e6, su, sm / 1024 }'
    rm -f "$T/p.json" "$T/s.json"
done
