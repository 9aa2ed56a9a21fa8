#!/bin/sh
# benchmarks/oracle_scale.sh [WINDOWS] [CONTENDED] [OVERLOADED]: the oracle
# at real size
# (issue 22). Day-long windows of the ITP traces, planned on 256, 512 and
# 1,024 GPUs (n32g8, n64g8, n128g8 in turn) with 60 s slots: greedy
# (arrival order), the offline admission (plan --admission offline,
# default budget of 200 plans; its exact step runs only on models of at
# most 5,000 binaries, so never here) and the relaxed bound (the time-aggregated
# LP of solver/ilp.h, default passes of 60 then 360 windows, default time
# limit 60 s), side by side, with solve times. Then CONTENDED (default 4)
# of the same days on 64 GPUs (n8g8), outside the issue's range, to show
# the bound and the offline mode where the queue does contend. Then
# OVERLOADED (default 8) day windows cut from every bundled ITP trace
# (issue 37): the calendar days with the most requested GPU-time (sum of
# num_gpu x duration of the jobs submitted that day), at most two per
# trace, the busiest first, on 32 and 64 GPUs in turn (n4g8, n8g8; a
# day the contended runs above already planned on 64 GPUs is skipped).
# Every run is `efplan oracle --method relaxed` with its defaults: the
# greedy plan, the offline admission, the LP-guided admission (new plan),
# the relaxed bound's first pass (60 windows: the old bound) and its
# refined pass (the new bound), no clock in any answer; lp_method says
# how the reported pass was solved (simplex, or interior_point: a large
# refined pass, solver/ilp.h ILP_RELAX_IPT_ROWS).
# Run from the repository root after `make`. Rows stay in
# $OUT/results.tsv (default build/oracle-scale).
#
# Windows: the calendar days (24 h from the trace's first submission) of
#   cluster08.csv and cluster09.csv with the most submissions, the busiest
#   first, alternating between the two traces; every job submitted that
#   day, with its deadline as released (factor U(0.5, 1.5)); jobs longer
#   than the day keep their whole duration (the horizon follows them).
# Seconds: "lp" is the relaxation's own (both passes, as the result file
#   says); "total" is the whole command's wall time (greedy plan, offline
#   search, relaxation); "cpu" its processor time (user + system, from
#   the shell's `times`: what the wall time would be on an idle machine,
#   the command being single-threaded). Timing on a shared 2-core
#   machine: not reproducible; every other number is.
set -eu
W=${1:-20}
C=${2:-4}
V=${3:-8}
E=${EFPLAN:-build/efplan}
OUT=${OUT:-build/oracle-scale}
mkdir -p "$OUT/inst"
R=$OUT/results.tsv
printf 'trace\tday\tjobs\tcluster\tgpus\tslots\thopeless\tgreedy\toffline\tplans\twithheld\tbound\tlp_value\twindows\tstatus\tlimit\tgpu_hours_greedy\tgpu_hours_floor\tlp_seconds\ttotal_seconds\texact\tguided\told_bound\tlower\tupper\tbest\tcpu_seconds\tconfig_lp\tload\tlp_method\n' >"$R"

# processor seconds (user + system) of the children, from the shell's
# `times` written to file $1 (run in this shell: a subshell has none)
cpu() {
    sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) {
        split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] }
        printf "%.2f", s }'
}

# the busiest days: trace day count, busiest first, the traces alternating
days() {
    for t in cluster08 cluster09; do
        awk -F, -v t="$t" 'NR == 2 { lo = $2 } NR > 1 { c[int(($2 - lo) / 86400)]++ }
            END { for (d in c) print t, d, c[d] }' "inputs/traces/itp/$t.csv" |
            sort -k3,3nr -k2,2n | awk '{ print NR, $0 }'
    done | sort -k1,1n -k2,2 | cut -d' ' -f2-
}

run() { # trace day cluster
    f=$OUT/inst/$1-day$2.csv
    awk -F, -v d="$2" 'NR == 1 { print; next } NR == 2 { lo = $2 }
        int(($2 - lo) / 86400) == d' "inputs/traces/itp/$1.csv" >"$f"
    ld=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)
    t0=$(date +%s.%N)
    times >"$OUT/times0"
    rc=0
    "$E" oracle --jobs "$f" --cluster "$3" --curves A100 --method relaxed \
        --out "$OUT/r.json" >"$OUT/out.txt" 2>"$OUT/err" || rc=$?
    t1=$(date +%s.%N)
    times >"$OUT/times1"
    if [ $rc -ne 0 ] && [ $rc -ne 4 ]; then
        echo "$1 day $2 $3: oracle exit $rc: $(cat "$OUT/err")" >&2
        return
    fi
    g=$(sed -n 's/.*"greedy": {"admitted": \([0-9]*\).*/\1/p' "$OUT/r.json")
    gh=$(sed -n 's/.*"greedy": {.*"gpu_seconds": \([0-9]*\)}.*/\1/p' "$OUT/r.json")
    ol=$(sed -n 's/.*"offline": {\(.*\)},$/\1/p' "$OUT/r.json")
    gl=$(sed -n 's/.*"guided": {\(.*\)},$/\1/p' "$OUT/r.json")
    vl=$(sed -n 's/.*"verdict": {\(.*\)},$/\1/p' "$OUT/r.json")
    gd=$(echo "$gl" | sed -n 's/^"admitted": \([0-9]*\).*/\1/p')
    v() { echo "$vl" | sed -n "s/.*\"$1\": \([^,]*\).*/\1/p" | tr -d '"'; }
    rl=$(sed -n 's/.*"relaxed": {\(.*\)},$/\1/p' "$OUT/r.json")
    o() { echo "$ol" | sed -n "s/.*\"$1\": \([^,]*\).*/\1/p" | tr -d '"'; }
    x() { echo "$rl" | sed -n "s/.*\"$1\": \([^,]*\).*/\1/p" | tr -d '"'; }
    cv=$(x value | tr -d '}') # the configuration LP's, when it ran
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$1" "$2" "$(($(wc -l <"$f") - 1))" "$3" \
        "$(sed -n 's/.*"cluster": {"gpus": \([0-9]*\).*/\1/p' "$OUT/r.json")" \
        "$(sed -n 's/.*"slots": \([0-9]*\).*/\1/p' "$OUT/r.json")" \
        "$(x hopeless)" "$g" "$(o admitted)" "$(o plans)" "$(o withheld)" \
        "$(x bound)" "$(x lp_value)" "$(x windows)" "$(x status)" "$(x limit)" \
        "$(awk -v s="$gh" 'BEGIN { printf "%.1f", s / 3600 }')" \
        "$(awk -v s="$(x gpu_seconds_bound)" 'BEGIN { printf "%.1f", s / 3600 }')" \
        "$(x seconds)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
        "$(o exact)" "${gd:--}" "$(x first_pass_bound)" "$(v lower)" \
        "$(v upper)" "$(v best)" \
        "$(awk -v a="$(cpu "$OUT/times0")" -v b="$(cpu "$OUT/times1")" \
            'BEGIN { printf "%.2f", b - a }')" "${cv:--}" \
        "$ld" "$(x lp_method)" >>"$R"
}

# the days with the most requested GPU-time, at most two per trace
heavy() {
    for t in cluster01 cluster05 cluster06 cluster08 cluster09 cluster10; do
        awk -F, -v t="$t" 'NR == 2 { lo = $2 }
            NR > 1 { g[int(($2 - lo) / 86400)] += $7 * $8 }
            END { for (d in g) printf "%s %d %.0f\n", t, d, g[d] / 3600 }' \
            "inputs/traces/itp/$t.csv" | sort -k3,3nr -k2,2n | head -2
    done | sort -k3,3nr -k1,1 -k2,2n
}

days >"$OUT/days.txt"
i=0
head -n "$W" "$OUT/days.txt" | while read -r t d n; do
    case $((i % 3)) in 0) cl=n32g8 ;; 1) cl=n64g8 ;; *) cl=n128g8 ;; esac
    run "$t" "$d" "$cl"
    i=$((i + 1))
done
# CONTENDED_RUN (default CONTENDED): how many of them to run here (0:
# none, e.g. to rerun the overloaded windows alone; they are still skipped
# below)
head -n "${CONTENDED_RUN:-$C}" "$OUT/days.txt" | while read -r t d n; do
    run "$t" "$d" n8g8
done

# a day the contended runs already planned on 64 GPUs is skipped there
heavy >"$OUT/heavy.txt"
head -n "$C" "$OUT/days.txt" | awk '{ print $1, $2, "n8g8" }' >"$OUT/done.txt"
awk 'NR == FNR { done[$1 " " $2 " " $3] = 1; next }
    { cl = k % 2 ? "n8g8" : "n4g8"
      if (done[$1 " " $2 " " cl]) next
      print $1, $2, cl; k++ }' "$OUT/done.txt" "$OUT/heavy.txt" |
    head -n "$V" | while read -r t d cl; do
    run "$t" "$d" "$cl"
done

# ---- summary ------------------------------------------------------------------
echo "greedy, offline admission and relaxed bound, day-long ITP windows, 60 s slots"
echo
awk -F'\t' 'NR == 1 { next }
    { printf "%-9s day %2s  %3d jobs  %4d GPUs  %4d slots  hopeless %d  greedy %3d  offline %3d (%3d plans, %d out, exact step %s)  bound %3d (LP %.2f, %d windows, %s%s)  gap %d/%d  lp %6.2f s  total %6.2f s\n",
        $1, $2, $3, $5, $6, $7, $8, $9, $10, $11, $21, $12, $13, $14, $15,
        $16 == "time" ? ", time limit" : "", $12 - $8, $12 - $9, $19, $20 }' "$R"
echo
awk -F'\t' 'NR == 1 { next }
    { k = $5 >= 256 ? "256-1024" : "32-64"; n[k]++; jobs[k] += $3
      gap[k] += $12 - $8; ogap[k] += $12 - $9; gain[k] += $9 - $8
      if ($12 == $8) opt[k]++
      if ($15 != "optimal") nob[k]++
      if ($19 > lpmax[k]) lpmax[k] = $19; lps[k] += $19
      if ($20 > tmax[k]) tmax[k] = $20; ts[k] += $20 }
    END { for (k in n) printf "%s GPUs: %d windows (mean %.0f jobs): greedy proven optimal (bound = greedy) in %d; mean gap bound - greedy %.2f jobs, bound - offline %.2f; offline admits %d more than greedy in all; LP not solved in %d; lp seconds mean %.1f max %.1f; total seconds mean %.1f max %.1f\n",
        k, n[k], jobs[k] / n[k], opt[k], gap[k] / n[k], ogap[k] / n[k], gain[k], nob[k], lps[k] / n[k], lpmax[k], ts[k] / n[k], tmax[k] }' "$R" | sort

echo
echo "contended days (64 GPUs and the overloaded windows): greedy, offline, new plan (LP-guided), first-pass bound (60 windows), bound (refined), best plan's distance to the bound, wall and processor seconds"
echo
awk -F'\t' 'NR == 1 || $5 >= 256 { next }
    { up = $25
      printf "%-9s day %2s  %3d jobs  %2d GPUs  greedy %3d  offline %3d  new plan %3s  first pass %3s  bound %3s (LP %s, %s, configuration LP %s)  gap %3d (%4.1f%%)  %-7s  %6.1f s (cpu %6.1f s, load %s)\n",
        $1, $2, $3, $5, $8, $9, $22, $23, $12, $13, $30, $28, up - $24, (up > 0 ? 100 * (up - $24) / up : 0), $26, $20, $27, $29
      n++; if (up > 0 && (up - $24) <= 0.10 * up) ok++; if ($20 <= 90) fast++; if ($27 <= 90) cfast++ }
    END { printf "\n%d days: best plan within 10%% of the bound on %d, at most 90 s on %d (at most 90 s of processor time on %d)\n", n, ok, fast, cfast }' "$R"
