#!/bin/sh
# benchmarks/oracle_study.sh [N] [WINDOWS]: how far is the greedy planner
# from the optimum? Runs `efplan oracle` (greedy plan + exact ILP) on N
# (default 200) seeded synthetic instances and WINDOWS (default 60) windows
# of 12 consecutive jobs cut from the ITP traces, then prints the
# distribution of the greedy's gap (ILP bound - greedy admitted) and of
# the solve times, and the instances where greedy loses most.
# Run from the repository root after `make`. Per-instance rows and the
# instances themselves stay in $OUT (default build/oracle-study).
#
# Synthetic instances (efplan gen-trace, the artifact's distributions):
#   seed k = 1..N; jobs n = 6 + k mod 7 (6..12); cluster n1g8, n2g8, n4g8
#   (8, 16, 32 GPUs) by k mod 3; mean inter-arrival 300 s; tight deadline
#   factor U(0.4, 1.0) (deadline = submit + f * the requested run time);
#   no best-effort jobs. The artifact's duration tail (20% of jobs run
#   5.3-167 h) would stretch the horizon of a 24-slot model so far that
#   every short job falls inside one slot, so the study keeps the body of
#   the distribution: from a 40-job trace, the first n jobs with a
#   requested duration <= 5.3 h (19000 s).
# ITP windows: jobs i..i+11 of cluster01/05/06/08/09/10.csv, i spread over
#   each trace; cluster cycling over n1g8, n2g8, n4g8; deadlines as in the
#   trace (factor U(0.5, 1.5)).
# Grid: slot = (latest deadline - earliest submit) / 24, rounded up to a
#   whole minute, so every instance has at most 24 slots. Scaling every
#   time and iteration count by one factor is the same instance on another
#   slot, so this is the "scale durations to fit 24 slots" of the issue.
# Solver: --node-limit $NODES (default 3000) and no time limit, so every
#   number but the solve time is reproducible. The gap counts only when
#   the ILP's bound is known; "greedy optimal" means ILP bound == greedy.
# Issue 22 (same run, --method both): the offline admission
#   (plan --admission offline, default budget of 200 plans, with its exact
#   step; and the search alone, --offline-exact 0, by efplan plan) and the
#   relaxed bound (the time-aggregated LP, default passes) beside greedy
#   and the ILP: how much of greedy's gap to the proven optimum the offline
#   mode closes, and whether the relaxed bound is ever below the ILP's
#   solution (it must not be) and how often it is tight.
set -eu
N=${1:-200}
W=${2:-60}
E=${EFPLAN:-build/efplan}
NODES=${NODES:-3000}
OUT=${OUT:-build/oracle-study}
mkdir -p "$OUT/inst"
R=$OUT/results.tsv
printf 'family\tinstance\tcluster\tslot\tslots\tjobs\thopeless\tgreedy\tilp\tbound\tlp_bound\tstatus\tgpu_status\tnodes\tseconds\tgreedy_jobs\tilp_jobs\toffline\trelaxed\trelaxed_seconds\toffline_search\texact\n' >"$R"

# one instance: family name csv cluster
solve() {
    slot=$(awk -F, 'NR == 2 { lo = $2; hi = $5 }
        NR > 1 { if ($2 < lo) lo = $2; if ($5 > hi) hi = $5 }
        END { s = int((hi - lo + 23) / 24); s = int((s + 59) / 60) * 60;
              if (s < 60) s = 60; print s }' "$3")
    rc=0
    "$E" oracle --jobs "$3" --cluster "$4" --curves A100 --slot "$slot" \
        --node-limit "$NODES" --time-limit 0 --method both --out "$OUT/r.json" \
        >/dev/null 2>"$OUT/err" || rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 4 ]; then
        echo "$1 $2: oracle exit $rc: $(cat "$OUT/err")" >&2
        return
    fi
    # the result file's lines are stable: pick fields with sed
    g=$(sed -n 's/.*"greedy": {"admitted": \([0-9]*\).*/\1/p' "$OUT/r.json")
    gj=$(sed -n 's/.*"greedy": {[^[]*\[\([^]]*\)\].*/\1/p' "$OUT/r.json" | tr -d '" ')
    il=$(sed -n 's/.*"ilp": {\(.*\)},$/\1/p' "$OUT/r.json")
    f() { echo "$il" | sed -n "s/.*\"$1\": \([^,]*\).*/\1/p" | tr -d '"'; }
    ij=$(echo "$il" | sed -n 's/.*"admitted_jobs": \[\([^]]*\)\].*/\1/p' | tr -d '" ')
    off=$(sed -n 's/.*"offline": {"admitted": \([0-9]*\).*/\1/p' "$OUT/r.json")
    rl=$(sed -n 's/.*"relaxed": {\(.*\)},$/\1/p' "$OUT/r.json")
    rb=$(echo "$rl" | sed -n 's/.*"bound": \([^,]*\).*/\1/p')
    rs=$(echo "$rl" | sed -n 's/.*"seconds": \([^,]*\).*/\1/p')
    ex=$(sed -n 's/.*"offline": {.*"exact": "\([a-z_]*\)".*/\1/p' "$OUT/r.json")
    # the offline search alone (no exact step), as the oracle plans it
    os=$("$E" plan --jobs "$3" --cluster "$4" --curves A100 --slot "$slot" \
        --overhead none --admission offline --offline-exact 0 |
        sed -n 's/^  admitted \([0-9]*\),.*/\1/p')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$1" "$2" "$4" "$slot" \
        "$(sed -n 's/.*"slots": \([0-9]*\).*/\1/p' "$OUT/r.json")" \
        "$(f deadline_jobs)" "$(f hopeless)" "$g" "$(f admitted)" \
        "$(f bound)" "$(f lp_bound)" "$(f status)" "$(f gpu_status)" \
        "$(f nodes)" "$(f seconds)" "${gj:--}" "${ij:--}" "$off" "$rb" \
        "$rs" "$os" "$ex" >>"$R"
}

clusters="n1g8 n2g8 n4g8"
pick() { echo "$clusters" | cut -d' ' -f$(( $1 % 3 + 1 )); }

k=1
while [ $k -le "$N" ]; do
    n=$((6 + k % 7))
    f=$OUT/inst/syn$k.csv
    "$E" gen-trace --jobs 40 --mean-interarrival 300 --deadline-factor 0.4 1.0 \
        --seed "$k" | awk -F, -v n="$n" 'NR == 1 { print; next }
        $8 <= 19000 && c < n { print; c++ }' >"$f"
    solve synthetic "syn$k" "$f" "$(pick $k)"
    k=$((k + 1))
done

i=0
for t in cluster01 cluster05 cluster06 cluster08 cluster09 cluster10; do
    tr=inputs/traces/itp/$t.csv
    rows=$(($(wc -l <"$tr") - 1))
    per=$((W / 6))
    w=0
    while [ $w -lt $per ]; do
        first=$((2 + w * (rows - 12) / per))
        f=$OUT/inst/$t-$first.csv
        sed -n "1p;${first},$((first + 11))p" "$tr" >"$f"
        solve itp "$t-$first" "$f" "$(pick $i)"
        w=$((w + 1))
        i=$((i + 1))
    done
done

# ---- summary ------------------------------------------------------------------
summary() { # family (or "all")
    awk -F'\t' -v fam="$1" 'NR > 1 && (fam == "all" || $1 == fam) {
        n++
        if ($12 == "optimal") opt++
        if ($10 != "null" && $10 != "") {
            known++; gap = $10 - $8; gaps[known] = gap; sum += gap
            if (gap == 0) zero++
            if (gap > mx) mx = gap
            if ($9 != "null" && $10 == $9) { proven++; psum += $9 - $8 }
        }
        secs[n] = $15; ssum += $15
        hop += $7; jobs += $6; slots += $5
    }
    function sort(a, m,   i, j, t) {
        for (i = 2; i <= m; i++)
            for (j = i; j > 1 && a[j] < a[j - 1]; j--) {
                t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    }
    function pct(a, m, p,   k) { k = int(p * m + 0.999999); if (k < 1) k = 1; return a[k] }
    END {
        if (n == 0) { print fam ": no instances"; exit }
        sort(gaps, known); sort(secs, n)
        printf "%-9s instances %d (mean %.1f deadline jobs, %.1f of them hopeless; mean %.1f slots)\n", fam, n, jobs / n, hop / n, slots / n
        printf "          ILP status optimal %d, admitted count proven %d, bound known %d\n", opt, proven, known
        printf "          gap (bound - greedy admitted): mean %.3f, p95 %d, max %d; greedy optimal in %d of %d (%.1f%%)\n", sum / known, pct(gaps, known, 0.95), mx, zero, known, 100 * zero / known
        if (proven)
            printf "          where the ILP proved its count: ILP - greedy mean %.3f over %d\n", psum / proven, proven
        printf "          solve seconds: mean %.3f, median %.3f, p95 %.3f, max %.3f\n", ssum / n, pct(secs, n, 0.5), pct(secs, n, 0.95), secs[n]
    }' "$R"
}
echo "greedy vs ILP, node budget $NODES per instance"
summary synthetic
summary itp
summary all
echo
echo "gap histogram (bound - greedy admitted), all instances:"
awk -F'\t' 'NR > 1 && $10 != "null" { h[$10 - $8]++ }
    END { for (g = 0; g <= 12; g++) if (h[g]) printf "  %2d: %d\n", g, h[g] }' "$R"
echo
echo "largest gaps (family instance cluster slot greedy ilp bound status; greedy's and ILP's admitted jobs):"
awk -F'\t' 'NR > 1 && $10 != "null" { printf "%d\t%s\n", $10 - $8, $0 }' "$R" |
    sort -t"$(printf '\t')" -k1,1nr -k3,3 | head -8 |
    awk -F'\t' '{ printf "  gap %d: %s %s %s slot %s: greedy %s, ilp %s, bound %s, %s\n      greedy [%s]\n      ilp    [%s]\n", $1, $2, $3, $4, $5, $9, $10, $11, $13, $17, $18 }' |
    sed 's/\([0-9a-f]\{8\}\)-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}/\1/g'

# ---- issue 22: the offline admission and the relaxed bound --------------------
offline_summary() { # family (or "all")
    awk -F'\t' -v fam="$1" 'NR > 1 && (fam == "all" || $1 == fam) {
        n++
        if ($18 > $8) better++
        if ($18 < $8) worse++
        if ($19 != "null" && $19 != "" && $9 != "null" && $19 < $9) below++
        if ($10 != "null" && $9 != "null" && $10 == $9) {
            proven++; gap += $9 - $8; closed += $18 - $8; sclosed += $21 - $8
            if ($9 > $8) { behind++; if ($18 == $9) reached++; if ($21 == $9) sreached++ }
            if ($19 == $9) tight++
            ex += $19 - $9
        }
        rs += $20; if ($20 > rmax) rmax = $20
        if ($21 < $8) sworse++
        if ($22 == "used") used++
    }
    END {
        if (n == 0) exit
        printf "%-9s offline > greedy on %d of %d, offline < greedy on %d (the search alone: %d); exact step used on %d\n", fam, better, n, worse + 0, sworse + 0, used + 0
        if (proven) {
            printf "          where the ILP proved its count (%d): greedy behind on %d, total gap %d jobs; offline closes %d (%.1f%%), reaches the optimum on %d of %d\n", proven, behind, gap, closed, gap ? 100 * closed / gap : 100, reached, behind
            printf "          the search alone (--offline-exact 0) closes %d (%.1f%%), reaches the optimum on %d of %d\n", sclosed, gap ? 100 * sclosed / gap : 100, sreached, behind
            printf "          relaxed bound = optimum on %d of %d (mean excess %.3f jobs)\n", tight, proven, ex / proven
        }
        printf "          relaxed bound below the ILP solution: %d (must be 0); relaxed seconds mean %.3f, max %.3f\n", below + 0, rs / n, rmax
    }' "$R"
}
echo
echo "offline admission and relaxed bound (issue 22):"
offline_summary synthetic
offline_summary itp
offline_summary all

