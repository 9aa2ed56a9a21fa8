#!/bin/sh
# benchmarks/scale_goals.sh: the goals of issues 20 and 33, measured, as the
# markdown table of benchmarks/results/scale.md ("Goals"). Single runs on
# this machine: user CPU seconds, wall seconds and peak RSS from GNU time.
#
# Queues: efplan gen-trace --seed 1 --deadline-factor 1.2 3, mean gap
# GAP / GPUs seconds (GAP = 131072 unless SCALE_GAP says otherwise): about
# 0.6 of the cluster's capacity asked for at the requested sizes. That is
# the load of the issue's own table: with the code of the day the issue
# was filed (2f69279) it gives 3.05 s for 10,000 jobs and 26.3 s for
# 100,000 jobs on 512 GPUs, where the issue measured 2.8 s and 24 s.
# (Rounds 1-3 of results/scale.md used GAP 30720: 2.5 times the capacity.)
#
#   sh benchmarks/scale_goals.sh [PART ...]
# PARTs (default: all, about 15 minutes on 2 cores):
#   plan16k   100,000 jobs on 16,384 GPUs (n2048g8): plan and simulate
#   sim1m     1,000,000 jobs on 512 GPUs (n64g8): simulate --policy ef
#   point     the decision time per point at 1,024 GPUs (n128g8) with
#             about 500 jobs running (4,000 jobs, mean gap 15 s: the
#             load of the goal, not GAP's)
#   policies  15,802 jobs on 1,024 GPUs (n128g8): every policy that runs
#             on A100 curves, user seconds against ef's: edf and chronus
#             at most 2 x ef (issue 33), the others at least as fast as
#             ef ("met" within 10%: single runs here move by that much)
# Run from the repository root after `make`. Needs /usr/bin/time.
set -eu
E=${EFPLAN:-build/efplan}
GAP=${SCALE_GAP:-131072}
PARTS=${*:-"plan16k sim1m point policies"}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x /usr/bin/time ] || { echo "scale_goals.sh: needs /usr/bin/time (apt-get install time)"; exit 1; }

# queue JOBS GPUS FILE [GAP_SECONDS]: a generated queue at GAP's load
queue() {
    g=${4:-$(awk -v n="$GAP" -v g="$2" 'BEGIN { printf "%.3f", n / g }')}
    "$E" gen-trace --jobs "$1" --mean-interarrival "$g" \
        --deadline-factor 1.2 3 --seed 1 --out "$3"
}

# timed OUT CMD...: run CMD with stdout to /dev/null; OUT gets
# "user wall rss_kb sys load", load the 1-minute load average before and
# after the run ("1.2-1.9": on this shared 2-core machine a wall time says
# as much about the others as about efplan; user + sys close to wall means
# the run had a core to itself)
timed() {
    out=$1
    shift
    l0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
    /usr/bin/time -f "%U %e %M %S" -o "$out" "$@" >/dev/null
    l1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
    printf '%s %s-%s\n' "$(cat "$out")" "$l0" "$l1" >"$out"
}

# lat FILE: "p50 / p99 / max" of a result's point_us (ms)
lat() {
    sed -n 's/^  "point_us": {"max": \([0-9.]*\), "mean": [0-9.]*, "p50": \([0-9.]*\), "p99": \([0-9.]*\)},$/\2 \3 \1/p' "$1" |
        awk '{ printf "%.2f / %.2f / %.2f ms", $1 / 1000, $2 / 1000, $3 / 1000 }'
}

# running FILE: mean and max of the timeline's running jobs
running() {
    tr '{' '\n' <"$1" | sed -n 's/.*"running": \([0-9]*\).*/\1/p' |
        awk '{ s += $1; if ($1 > m) m = $1; n++ } END { printf "%.0f mean, %d max", s / n, m }'
}

echo "| goal | run | measured | met |"
echo "|---|---|---|---|"
for part in $PARTS; do
    case $part in
    plan16k)
        queue 100000 16384 "$T/q.csv"
        timed "$T/tp" "$E" plan --jobs "$T/q.csv" --cluster n2048g8 \
            --curves A100 --out "$T/p.json"
        size=$(wc -c <"$T/p.json")
        rm -f "$T/p.json"
        timed "$T/ts" "$E" simulate --trace "$T/q.csv" --cluster n2048g8 \
            --curves A100 --policy ef --out "$T/s.json"
        read -r pu pw pm ps pl <"$T/tp"
        read -r su sw sm ss sl <"$T/ts"
        awk -v pu="$pu" -v pw="$pw" -v pm="$pm" -v sz="$size" -v su="$su" \
            -v sw="$sw" -v sm="$sm" -v ps="$ps" -v ss="$ss" -v pl="$pl" \
            -v sl="$sl" 'BEGIN {
            r = "100,000 jobs, 16,384 GPUs"
            printf "| plan <= 60 s wall | %s | %.1f s wall (%.1f s user, %.1f s sys; load %s) | %s |\n", r, pw, pu, ps, pl, (pw <= 60 ? "yes" : "no")
            printf "| plan <= 2 GB peak RSS | %s | %.0f MB | %s |\n", r, pm / 1024, (pm <= 2 * 1024 * 1024 ? "yes" : "no")
            printf "| plan file <= 200 MB | %s | %.1f MB | %s |\n", r, sz / 1e6, (sz <= 200e6 ? "yes" : "no")
            printf "| simulate --policy ef <= 60 s | %s | %.1f s wall (%.1f s user, %.1f s sys; load %s), %.0f MB | %s |\n", r, sw, su, ss, sl, sm / 1024, (sw <= 60 ? "yes" : "no")
        }'
        rm -f "$T/s.json" "$T/q.csv"
        ;;
    sim1m)
        queue 1000000 512 "$T/q.csv"
        timed "$T/ts" "$E" simulate --trace "$T/q.csv" --cluster n64g8 \
            --curves A100 --policy ef --out "$T/s.json"
        read -r su sw sm ss sl <"$T/ts"
        awk -v su="$su" -v sw="$sw" -v sm="$sm" -v ss="$ss" -v sl="$sl" 'BEGIN {
            printf "| 1,000,000 jobs simulated <= 60 s | 512 GPUs, ef | %.1f s wall (%.1f s user, %.1f s sys; load %s), %.0f MB | %s |\n", sw, su, ss, sl, sm / 1024, (sw <= 60 ? "yes" : "no")
        }'
        rm -f "$T/s.json" "$T/q.csv"
        ;;
    point)
        queue 4000 1024 "$T/q.csv" 15
        "$E" simulate --trace "$T/q.csv" --cluster n128g8 --curves A100 \
            --policy ef --out "$T/s.json" >/dev/null
        l=$(lat "$T/s.json")
        p99=$(echo "$l" | awk '{ print $3 }')
        echo "| one point, p99 <= 5 ms | 1,024 GPUs, $(running "$T/s.json") running | p50 / p99 / max $l | $(awk -v x="$p99" 'BEGIN { print (x <= 5 ? "yes" : "no") }') |"
        ;;
    policies)
        queue 15802 1024 "$T/q.csv"
        ef=
        for pol in ef ef-noac edf edf-ac gandiva tiresias themis chronus; do
            timed "$T/t" "$E" simulate --trace "$T/q.csv" --cluster n128g8 \
                --curves A100 --policy "$pol" --out "$T/s.json"
            read -r u w m rest <"$T/t"
            [ -n "$ef" ] || ef=$u
            if [ "$pol" = ef ]; then
                echo "| (reference) | 15,802 jobs, 1,024 GPUs, ef | $u s user, $(awk -v m="$m" 'BEGIN { printf "%.0f", m / 1024 }') MB | |"
            else
                awk -v p="$pol" -v u="$u" -v ef="$ef" 'BEGIN {
                    # issue 33: edf and chronus at most 2x ef; the others
                    # at least as fast as ef (issue 20), within 10%
                    lim = (p == "edf" || p == "chronus") ? 2 : 1.1
                    goal = lim == 2 ? "at most 2 x ef" : "at least as fast as ef"
                    printf "| %s %s | 15,802 jobs, 1,024 GPUs | %.2f s user (%.2f x ef) | %s |\n", p, goal, u, (ef > 0 ? u / ef : 0), (u <= ef * lim ? "yes" : "no")
                }'
            fi
        done
        rm -f "$T/s.json" "$T/q.csv"
        ;;
    *)
        echo "scale_goals.sh: unknown part '$part' (plan16k, sim1m, point, policies)" >&2
        exit 2
        ;;
    esac
done
