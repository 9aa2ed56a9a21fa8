#!/bin/sh
# benchmarks/promise_sweep.sh BIN [OUT.md] [LABEL]: how often does an
# admitted job miss its deadline? Runs the promise property test's cases
# (tests/e2e/lib/promise_gen.awk, checked by tests/e2e/lib/promise_case.sh)
# with the efplan binary BIN, over another id range than the test's:
# PROMISE_SWEEP_CASES cases (default 4000) from id PROMISE_SWEEP_FIRST
# (default 1000000), PROMISE_JOBS at a time (default: nproc). Tabulates per
# overhead model and elastic batch on/off: cases, deadline jobs, admitted,
# admitted missed (unfinished ones included), cases with a miss, worst
# lateness of a finished miss (s), mean deadline ratio.
# Writes OUT.md (default benchmarks/results/promise.md) as a section named
# LABEL (default "before"), keeping the sections of other labels the file
# already holds; when it holds both "before" and "after", it ends with a
# before -> after table. So:
#   sh benchmarks/promise_sweep.sh OLD/build/efplan                  # before
#   sh benchmarks/promise_sweep.sh build/efplan "" after             # after
# PROMISE_SWEEP_ONLY=OVERHEAD:EB (e.g. restart:1) keeps only the cases
# of that overhead model and elastic batch (0 off, 1 on): the first N of
# them from id F on. PROMISE_PLAN=1 also plans every trace with the same
# options and checks the plan with validate --plan (promise_case.sh): the
# section then counts plans failing their own check or the promise check.
# PROMISE_SWEEP_FROM=FILE runs the cases FILE lists instead (lines in
# promise_gen.awk's format; the id is the trace's gen-trace seed), e.g.
# traces shaped like an issue's: PROMISE_SWEEP_CASES/FIRST/ONLY unused.
# PROMISE_SWEEP_NOTE, if set, is a line written under the section's
# heading (what the build is). The section names the commit of BIN's tree
# (git, with "+ uncommitted changes" when tracked files differ from it)
# and the sweep's wall time. Never fails on misses: it measures them.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BIN [OUT.md] [LABEL]" >&2; exit 2; }
BIN=$1
OUT=${2:-}
LABEL=${3:-before}
case $LABEL in
''|*[!A-Za-z0-9_-]*)
    echo "$0: LABEL: letters, digits, - and _ only" >&2; exit 2 ;;
esac
[ -x "$BIN" ] || { echo "$0: $BIN: not an executable" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$OUT" ] || OUT=$ROOT/benchmarks/results/promise.md
L=$ROOT/tests/e2e/lib
N=${PROMISE_SWEEP_CASES:-4000}
F=${PROMISE_SWEEP_FIRST:-1000000}
P=${PROMISE_JOBS:-$(nproc 2>/dev/null || echo 2)}
ONLY=${PROMISE_SWEEP_ONLY:-}
FROM=${PROMISE_SWEEP_FROM:-}
[ -z "$FROM" ] || [ -r "$FROM" ] ||
    { echo "$0: PROMISE_SWEEP_FROM: $FROM: cannot read" >&2; exit 2; }
case $ONLY in
''|fig12:[01]|reference:[01]|restart:[01]|none:[01]) ;;
*) echo "$0: PROMISE_SWEEP_ONLY: OVERHEAD:0|1 (e.g. restart:1)" >&2; exit 2 ;;
esac
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
bindir=$(cd "$(dirname "$BIN")" && pwd)
commit=$(git -C "$bindir" rev-parse --short=12 HEAD 2>/dev/null ||
    echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git -C "$bindir" status --porcelain \
        --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit + uncommitted changes"
fi

start=$(date +%s)
mkdir "$W/res"
if [ -n "$FROM" ]; then
    grep -v '^[[:space:]]*\(#\|$\)' "$FROM" >"$W/cases" || true
    N=$(wc -l <"$W/cases" | tr -d ' ')
    [ "$N" -gt 0 ] || { echo "$0: $FROM: no cases" >&2; exit 2; }
elif [ -n "$ONLY" ]; then
    # the first N cases of one overhead model x elastic batch from id F on
    # (one id in 8 has each pair: promise_gen.awk)
    awk -v first="$F" -v count=$((8 * N)) -f "$L/promise_gen.awk" |
        awk -v o="${ONLY%:*}" -v e="${ONLY#*:}" -v n="$N" \
            '$13 == o && $11 == e && k++ < n' >"$W/cases"
else
    awk -v first="$F" -v count="$N" -f "$L/promise_gen.awk" >"$W/cases"
fi
EFPLAN=$BIN VALGRIND="" xargs -P "$P" -L 1 sh "$L/promise_case.sh" "$W/res" \
    <"$W/cases"
while read -r id rest; do
    if [ -s "$W/res/$id.res" ]; then cat "$W/res/$id.res"
    else echo "$id - - 0 0 0 0 0 0 -1 0 1 0 -1"; fi
done <"$W/cases" >"$W/all"
end=$(date +%s)

# the section of this run
{
echo "<!-- section $LABEL -->"
echo "## $LABEL: commit $commit"
echo
[ -n "${PROMISE_SWEEP_NOTE:-}" ] && echo "$PROMISE_SWEEP_NOTE" && echo
if [ -n "$FROM" ]; then
    echo "<!-- cases from $(basename "$FROM") $N -->"
    echo "\`PROMISE_SWEEP_FROM=$FROM sh benchmarks/promise_sweep.sh BIN OUT $LABEL\`: the $N cases listed there,"
else
    echo "<!-- cases $F $N -->"
    echo "\`sh benchmarks/promise_sweep.sh BIN OUT $LABEL\`: $N cases (ids $F .. $((F + N - 1))),"
fi
echo "$P at a time on $(nproc 2>/dev/null || echo '?') cores, wall time $((end - start)) s."
echo
echo "| overhead | elastic batch | cases | deadline jobs | admitted | admitted missed | of them unfinished | cases with a miss | worst lateness (s) | deadline ratio (mean) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
awk -v from="$FROM" '
{ k = $2 " " $3; c[k]++; dl[k] += $5; ad[k] += $6; mi[k] += $7; un[k] += $8
  if ($7 > 0) mc[k]++
  if ($9 > wl[k]) wl[k] = $9
  ra[k] += $11
  if ($2 == "-") err++
  else if ($12 && $7 == 0) other++
  if ($14 >= 0) { planned++; if ($14 > 0) { pbad++
      if (n_pids < 20) pids = pids (n_pids++ ? ", " : "") $1 "(" $14 ")" } }
  if ($7 > 0 && n_ids < 20) ids = ids (n_ids++ ? ", " : "") $1 }
END {
    n = split("fig12 reference restart none", om, " ")
    for (i = 1; i <= n; i++)
        for (e = 0; e <= 1; e++) {
            k = om[i] " " e
            if (!(k in c)) continue
            printf "| %s | %s | %d | %d | %d | %d | %d | %d | %.3f | %.4f |\n",
                om[i], e ? "on" : "off", c[k], dl[k], ad[k], mi[k], un[k],
                mc[k] + 0, wl[k] + 0, ra[k] / c[k]
            T["c"] += c[k]; T["dl"] += dl[k]; T["ad"] += ad[k]
            T["mi"] += mi[k]; T["un"] += un[k]; T["mc"] += mc[k]
            T["ra"] += ra[k]; if (wl[k] > T["wl"]) T["wl"] = wl[k]
        }
    printf "| all | | %d | %d | %d | %d | %d | %d | %.3f | %.4f |\n",
        T["c"], T["dl"], T["ad"], T["mi"], T["un"], T["mc"], T["wl"],
        T["c"] ? T["ra"] / T["c"] : 0
    print ""
    if (err) printf "%d cases could not be run (gen-trace or simulate failed; not in the table).\n\n", err
    if (other) printf "%d cases failed another check (at_risk flags).\n\n", other
    if (planned)
        printf "Plans (PROMISE_PLAN=1: `plan` with the same options, then `validate --plan`): %d made, %d failing a check%s.\n\n", planned, pbad + 0, pbad ? " (case(verdict): 1 plan exit 5, 2 validate exit 9, 3 other): " pids : ""
    if (ids != "" && from != "")
        print "First cases with a miss (rerun one with `EFPLAN=BIN sh tests/e2e/lib/promise_case.sh DIR LINE`, LINE its line of " from "): " ids "."
    else if (ids != "")
        print "First cases with a miss (rerun one with `PROMISE_FIRST=ID PROMISE_CASES=1 sh tests/e2e/promise.sh`, EFPLAN and EFPLAN_DATA set): " ids "."
    else
        print "No admitted job missed its deadline."
    print ""
}' "$W/all"
echo "<!-- end $LABEL -->"
} >"$W/section"

# keep the other labels' sections of an existing file
sect() { # label file: the section of that label, markers included
    awk -v l="$1" '$0 == "<!-- section " l " -->" { on = 1 }
        on { print } $0 == "<!-- end " l " -->" { on = 0 }' "$2"
}
: >"$W/old"
[ -f "$OUT" ] && cp "$OUT" "$W/old"
labels=$(sed -n 's/^<!-- section \(.*\) -->$/\1/p' "$W/old" |
    grep -v '^before-after$' || true)
seen="" order=""
for l in before after $LABEL $labels; do
    case " $seen " in *" $l "*) continue ;; esac
    seen="$seen $l"
    if [ "$l" = "$LABEL" ]; then cp "$W/section" "$W/s.$l"
    else sect "$l" "$W/old" >"$W/s.$l"; fi
    [ -s "$W/s.$l" ] && order="$order $l"
done

{
cat <<'TXT'
# Promise sweep: admitted jobs that miss their deadline

Generated by `sh benchmarks/promise_sweep.sh BIN [OUT.md] [LABEL]`; do not edit by hand.
efplan's promise is that a job `simulate --policy ef` admits meets its deadline. Each case
generates a trace with `gen-trace` and simulates it; a case is one line of
`tests/e2e/lib/promise_gen.awk` (the generator of the property test `tests/e2e/promise.sh`,
here over other case ids): 50 .. 2000 jobs (log-uniform), 8 .. 1024 GPUs on g8 or g4 nodes,
load 0.05 .. 3 (log-uniform; mean inter-arrival = 74664 s x duration scale / (load x GPUs),
74664 GPU-s being the generator's mean requested GPU-seconds per job), duration scale 0.1 .. 1,
deadline factor LO U(0.5, 1.5) and HI LO + U(0, 1.5), best-effort share 0 or U(0, 0.5), slot
60 .. 600 s, the overhead model by case id (fig12, reference, restart, none in turn) and elastic
batch on or off (on: `gen-trace --elastic-batch P`, P U(0.2, 1), and `simulate --elastic-batch`).
"Admitted missed": admitted deadline jobs (state not rejected) with met = 0, unfinished ones
included; lateness = end - deadline of a finished miss; the deadline ratio is the result's
(met / deadline jobs, rejected jobs counting as not met), averaged over the cases.

TXT
for l in $order; do cat "$W/s.$l"; echo; done
if [ -s "$W/s.before" ] && [ -s "$W/s.after" ]; then
    echo "<!-- section before-after -->"
    echo "## before -> after"
    echo
    if [ "$(grep '^<!-- cases ' "$W/s.before")" != \
         "$(grep '^<!-- cases ' "$W/s.after")" ]; then
        echo "**The two runs are over different cases**: compare with care."
        echo
    fi
    echo "| overhead | elastic batch | cases | admitted | admitted missed | cases with a miss | worst lateness (s) | deadline ratio (mean) |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F'|' 'function t(s) { gsub(/^ +| +$/, "", s); return s }
        FNR == 1 { f++ }
        /^\| [a-z0-9]+ \| (on|off) \| [0-9]/ || /^\| all \| \| [0-9]/ {
            k = $2 "|" $3
            if (f == 1) { if (!(k in B)) ord[++n] = k; B[k] = $0 }
            else A[k] = $0 }
        END {
            for (i = 1; i <= n; i++) {
                k = ord[i]; split(B[k], b, "|")
                if (!(k in A)) continue
                split(A[k], a, "|")
                printf "|%s|%s| %s -> %s | %s -> %s | %s -> %s | %s -> %s | %s -> %s | %s -> %s |\n",
                    b[2], b[3], t(b[4]), t(a[4]), t(b[6]), t(a[6]),
                    t(b[7]), t(a[7]), t(b[9]), t(a[9]), t(b[10]), t(a[10]),
                    t(b[11]), t(a[11])
            }
        }' "$W/s.before" "$W/s.after"
    echo
    echo "<!-- end before-after -->"
fi
} >"$W/new"
mkdir -p "$(dirname "$OUT")"
mv "$W/new" "$OUT"
echo "wrote $OUT ($LABEL: $N cases in $((end - start)) s)"
