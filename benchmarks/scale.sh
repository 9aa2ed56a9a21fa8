#!/bin/sh
# benchmarks/scale.sh: how plan and simulate --policy ef grow with jobs and
# GPUs (issue 20). For each (jobs, cluster) of the grid it makes a queue
# with efplan gen-trace (seed 1, deadline factor 1.2..3, the arrival rate
# scaled with the cluster: mean gap GAP / GPUs seconds, so load per GPU
# stays comparable; GAP is 131072 unless SCALE_GAP says otherwise, about
# 0.6 of the capacity asked for, the load of the table: see
# scale_goals.sh; rounds 1-3 of results/scale.md used 30720, 2.5 times
# the capacity) and prints one markdown row: user CPU seconds and peak
# RSS of `efplan plan` (plan file written, version 2), the plan file's
# size in version 2 and in version 1 (efplan validate --plan-version 1),
# user seconds and peak RSS of `efplan simulate --policy ef`, and its
# decision time per scheduling point (p50 / p99 / max, microseconds).
# Then the growth exponents: for two rows with the same GPUs, log(time
# ratio) / log(jobs ratio); with the same jobs, the same over GPUs.
# Run from the repository root after `make`:
#   sh benchmarks/scale.sh [GRID]
# GRID is "JOBS:CLUSTER ..." (default: the grid below, about a minute on
# 2 cores; 100000:n2048g8 takes about 3 minutes and its version 1 file
# would be several GB: SCALE_V1=0 skips the version 1 column).
# Needs GNU time (/usr/bin/time, Debian package time).
set -eu
E=${EFPLAN:-build/efplan}
GRID=${1:-"1000:n64g8 4000:n64g8 16000:n64g8 4000:n256g8 16000:n256g8 4000:n1024g8 16000:n1024g8"}
V1=${SCALE_V1:-1}
GAP=${SCALE_GAP:-131072}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x /usr/bin/time ] || { echo "scale.sh: needs /usr/bin/time (apt-get install time)"; exit 1; }
echo "| jobs | GPUs | plan user s | plan peak RSS | plan file v2 | v1 | simulate user s | simulate peak RSS | decision time per point p50 / p99 / max (us) |"
echo "|---|---|---|---|---|---|---|---|---|"
: >"$T/rows"
for cell in $GRID; do
    n=${cell%%:*}
    cl=${cell#*:}
    nodes=${cl#n}; nodes=${nodes%%g*}; per=${cl##*g}
    gpus=$((nodes * per))
    gap=$(awk -v n="$GAP" -v g="$gpus" 'BEGIN { printf "%.3f", n / g }')
    "$E" gen-trace --jobs "$n" --mean-interarrival "$gap" \
        --deadline-factor 1.2 3 --seed 1 --out "$T/q.csv"
    /usr/bin/time -f "%U %M" -o "$T/tp" "$E" plan --jobs "$T/q.csv" \
        --cluster "$cl" --curves A100 --out "$T/p.json" >/dev/null
    /usr/bin/time -f "%U %M" -o "$T/ts" "$E" simulate --trace "$T/q.csv" \
        --cluster "$cl" --curves A100 --policy ef --out "$T/s.json" >/dev/null
    size=$(wc -c <"$T/p.json")
    size1=0
    if [ "$V1" = 1 ]; then
        "$E" validate --plan "$T/p.json" --plan-version 1 --out "$T/p1.json" >/dev/null
        size1=$(wc -c <"$T/p1.json")
    fi
    lat=$(sed -n 's/^  "point_us": {"max": \([0-9.]*\), "mean": [0-9.]*, "p50": \([0-9.]*\), "p99": \([0-9.]*\)},$/\2 \/ \3 \/ \1/p' "$T/s.json")
    read -r pu pm <"$T/tp"
    read -r su sm <"$T/ts"
    echo "$n $gpus $pu $su" >>"$T/rows"
    awk -v n="$n" -v g="$gpus" -v pu="$pu" -v pm="$pm" -v sz="$size" \
        -v sz1="$size1" -v su="$su" -v sm="$sm" -v lat="$lat" 'BEGIN {
        v1 = sz1 > 0 ? sprintf("%.1f MB", sz1 / 1e6) : "-"
        printf "| %d | %d | %.2f | %.0f MB | %.1f MB | %s | %.2f | %.0f MB | %s |\n",
            n, g, pu, pm / 1024, sz / 1e6, v1, su, sm / 1024, lat }'
    rm -f "$T/p.json" "$T/p1.json" "$T/s.json"
done
echo
echo "Growth exponents (time ~ x^k between two rows that differ in x only):"
echo
awk '{ n[NR] = $1; g[NR] = $2; p[NR] = $3; s[NR] = $4 }
END {
    for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
        if (p[i] <= 0.05 || p[j] <= 0.05 || s[i] <= 0.05 || s[j] <= 0.05) continue
        if (g[i] == g[j] && n[i] != n[j])
            printf "- jobs %d -> %d on %d GPUs: plan k = %.2f, simulate k = %.2f\n",
                n[i], n[j], g[i], log(p[j] / p[i]) / log(n[j] / n[i]),
                log(s[j] / s[i]) / log(n[j] / n[i])
        if (n[i] == n[j] && g[i] != g[j])
            printf "- GPUs %d -> %d with %d jobs: plan k = %.2f, simulate k = %.2f\n",
                g[i], g[j], n[i], log(p[j] / p[i]) / log(g[j] / g[i]),
                log(s[j] / s[i]) / log(g[j] / g[i])
    }
}' "$T/rows"
