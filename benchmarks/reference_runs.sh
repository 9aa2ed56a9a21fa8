#!/bin/sh
# benchmarks/reference_runs.sh: efplan beside the reference simulator's own
# runs. For every run that ../shared/reference/reference-runs.md lists and
# efplan can reproduce (the same trace file, cluster, curves and slot), run
# `efplan simulate` twice, in reference mode (the switches that restore the
# reference's behaviour for that policy, below) and in default mode, and
# write benchmarks/results/reference_runs.md: trace, policy, the reference's
# ratio, efplan's reference-mode ratio, their difference (marked when above
# .03), efplan's default ratio, and user CPU seconds (the reference's and
# both of efplan's runs). Run from the repository root after `make`:
#   sh benchmarks/reference_runs.sh
# Re-runnable: the table is regenerated from scratch each time; between
# runs only the user CPU seconds vary, the ratios do not.
#
#   Runs: headings "#### cNN_SPEC" are inputs/traces/itp/clusterNN.csv on
#   SPEC (A100, 60 s slots, as run_fig8b.sh); fig8a_n16g4 is
#   inputs/traces/artifact/elasticVpollux_e.csv on n16g4 with T4 curves
#   (60 s); fig9_SPEC is inputs/traces/generated/fig9_1000job_1500lam.csv
#   (the exact file of the reference runs) on SPEC, 240 s slots. Skipped:
#   fig10_* (its 100-job trace is not in the shared data and the
#   reference's generator cannot be reproduced), rep_* (repeats of runs
#   above, identical logs) and runs the reference timed out.
#   Policies: ef-accessctrl = ef, ef = ef-noac, dlas-gpu = tiresias, the
#   others by the same name.
#   Reference mode per policy (algorithms.md §4.4 for which overhead each
#   reference policy charges):
#     ef, ef-noac  --overhead reference --surplus reference
#                  --baselines reference (ef: the reference's admission,
#                  planned without overheads, and its metric, the last
#                  plan's overhead-free end; no effect on ef-noac)
#     edf          --cap reference --overhead none (the reference's plain
#                  EDF charges no overhead)
#     edf-ac       --cap reference --baselines reference
#                  --overhead reference
#     gandiva, tiresias
#                  --baselines reference --overhead reference
#     themis       --baselines reference --overhead none (the reference
#                  never applies its overhead to Themis)
#   Each efplan run has a limit of LIMIT seconds (default 600); a run over
#   60 s of user CPU is noted in its row.
# Environment: EFPLAN (default build/efplan), REFRUNS (default
# ../shared/reference/reference-runs.md), LIMIT.
set -eu
E=${EFPLAN:-build/efplan}
R=benchmarks/results
T=inputs/traces
REF=${REFRUNS:-../shared/reference/reference-runs.md}
LIMIT=${LIMIT:-600}
OUT=$R/reference_runs.md
mkdir -p "$R"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -r "$REF" ] || { echo "reference_runs.sh: cannot read $REF" >&2; exit 2; }
[ -x "$E" ] || { echo "reference_runs.sh: no $E (run make)" >&2; exit 2; }
start=$(date +%s)

# The runs of reference-runs.md, one line each: heading policy ratio
# user-CPU-seconds exit (the tables' columns policy, deadline ratio, user
# CPU s and exit).
awk -F'|' '
    /^#### / { h = $0; sub(/^#### */, "", h); next }
    h != "" && /^\|/ {
        p = $2; gsub(/ /, "", p)
        if (p == "policy" || p ~ /^-+$/) next
        r = $4; gsub(/ /, "", r); c = $10; gsub(/ /, "", c)
        x = $12; gsub(/ /, "", x)
        print h, p, r, c, x
    }
    /^## / && !/^## Results/ { h = "" }' "$REF" >"$W/runs"

# efplan's name of a reference policy.
efname() {
    case $1 in
    ef-accessctrl) echo ef ;;
    ef) echo ef-noac ;;
    edf-accessctrl) echo edf-ac ;;
    dlas-gpu) echo tiresias ;;
    *) echo "$1" ;;
    esac
}

# The reference-mode switches of an efplan policy.
refflags() {
    case $1 in
    ef|ef-noac) echo "--overhead reference --surplus reference --baselines reference" ;;
    edf) echo "--cap reference --overhead none" ;;
    edf-ac) echo "--cap reference --baselines reference --overhead reference" ;;
    themis) echo "--baselines reference --overhead none" ;;
    *) echo "--baselines reference --overhead reference" ;;
    esac
}

# Run efplan simulate with the arguments given; print "ratio usercpu" (the
# ratio with 4 decimals; "timeout" or "failed" instead when it did not
# finish).
sim() {
    rm -f "$W/r.json" "$W/t"
    rc=0
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %U -o "$W/t" timeout "$LIMIT" "$E" simulate "$@" \
            --out "$W/r.json" </dev/null >/dev/null 2>"$W/err" || rc=$?
    else
        timeout "$LIMIT" "$E" simulate "$@" --out "$W/r.json" \
            </dev/null >/dev/null 2>"$W/err" || rc=$?
    fi
    u=$(tail -n 1 "$W/t" 2>/dev/null || echo -)
    case $u in [0-9]*) ;; *) u=- ;; esac
    if [ "$rc" -eq 124 ]; then
        echo "timeout $u"
    elif [ "$rc" -ne 0 ] || [ ! -s "$W/r.json" ]; then
        echo "failed $u"
    else
        awk -v u="$u" -F'[:,]' '
            /^  "met":/ { m = $2 + 0 }
            /^  "deadline_jobs":/ { d = $2 + 0 }
            END { printf "%.4f %s\n", (d > 0 ? m / d : 0), u }' "$W/r.json"
    fi
}

# The cause of a row outside .03, written beside it (policy, run heading):
# where it comes from a defect of the reference that algorithms.md §8
# documents and efplan does not copy, the section; the evidence is the
# recount in "Why the bold rows differ" below. Empty: none known.
cause() {
    case $1 in
    ef-noac) case $2 in
        fig8a_*) echo "reference defect §8.1/§8.4 (not copied): its \`ef\` judges a deadline on the slot-aligned end plus overheads, with progress clipped at the planned end; the recount with aligned ends falls short here (.405; the exact-end exception of §4.2 depends on that clipping): partly explained" ;;
        *) echo "reference defect §8.1/§8.4 (not copied): its \`ef\` judges a deadline on the slot-aligned end plus overheads; recounting efplan's jobs that way comes within .02" ;;
        esac ;;
    esac
}

# Add word $2 to the list named $1 (space-separated, no duplicates).
add() {
    eval "cur=\${$1}"
    case " $cur " in *" $2 "*) ;; *) eval "$1=\"\${cur:+\$cur }\$2\"" ;; esac
}

n=0
far=0
defect=0
s_rep="" s_notrace="" s_timeout=""
: >"$W/rows"
while read -r h p ref cpu ex; do
    case $h in
    rep_*) add s_rep "$h/$p"; continue ;;
    fig10_*) add s_notrace "$h"; continue ;;
    esac
    if [ "$ex" != ok ]; then
        add s_timeout "$h/$p:$ex"
        continue
    fi
    spec=${h#*_}
    curves=A100
    slot=60
    case $h in
    c[0-9][0-9]_*) trace=$T/itp/cluster$(echo "$h" | cut -c2-3).csv ;;
    fig8a_*) trace=$T/artifact/elasticVpollux_e.csv; curves=T4 ;;
    fig9_*) trace=$T/generated/fig9_1000job_1500lam.csv; slot=240 ;;
    *) add s_notrace "$h"; continue ;;
    esac
    [ -r "$trace" ] || { add s_notrace "$h"; continue; }
    pol=$(efname "$p")
    fl=$(refflags "$pol")
    base="--trace $trace --cluster $spec --curves $curves --slot $slot --policy $pol"
    # shellcheck disable=SC2086
    set -- $(sim $base $fl)
    rr=$1 ru=$2
    # shellcheck disable=SC2086
    set -- $(sim $base)
    dr=$1 du=$2
    note=""
    for u in "$ru" "$du"; do
        case $u in -) ;; *)
            if awk -v u="$u" 'BEGIN { exit !(u > 60) }'; then
                note="over 60 s of user CPU"
            fi ;;
        esac
    done
    case $rr in
    [0-9]*)
        d=$(awk -v a="$rr" -v b="$ref" 'BEGIN { printf "%+.4f", a - b }')
        if awk -v d="$d" 'BEGIN { exit !(d > 0.03 || d < -0.03) }'; then
            d="**$d**"
            far=$((far + 1))
            why=$(cause "$pol" "$h")
            note="${note:+$note; }${why:-cause not known}"
            case $why in "reference defect"*) defect=$((defect + 1)) ;; esac
        fi ;;
    *) d=- ;;
    esac
    if [ "$rr" = timeout ] || [ "$dr" = timeout ]; then
        note="${note:+$note; }a run hit the ${LIMIT} s limit"
    fi
    n=$((n + 1))
    echo "| $(basename "$trace" .csv) | $spec | $p | $pol | $ref | $rr | $d | $dr | $cpu | $ru | $du | \`$fl\` | $note |" >>"$W/rows"
done <"$W/runs"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD -- . ":(exclude)$OUT" 2>/dev/null; then
    commit="$commit with uncommitted changes"
fi
{
echo "# efplan beside the reference simulator's own runs"
echo
echo "Generated by \`sh benchmarks/reference_runs.sh\` (efplan of the working tree at commit $commit, $(nproc) cores); do not"
echo "edit by hand. For every run of \`../shared/reference/reference-runs.md\` that efplan can reproduce, the script"
echo "runs \`efplan simulate\` on the same trace file, cluster, curves and slot as the reference run (cNN_SPEC: the"
echo "ITP trace clusterNN.csv on SPEC, A100, 60 s slots; fig8a_n16g4: elasticVpollux_e.csv on n16g4, T4 curves,"
echo "60 s; fig9_SPEC: fig9_1000job_1500lam.csv on SPEC, A100, 240 s slots), once with the reference-mode switches"
echo "of the row (the \`flags\` column: the switches that restore the reference's behaviour for that policy, including"
echo "the overhead it charges: none for EDF and Themis, its formula for the others, algorithms.md §4.4) and once"
echo "with efplan's defaults (Fig. 12 overheads, usable sizes, surplus by gain, the reference's defects fixed)."
echo "Ratio = met / jobs with a deadline (the reference's \`ddl_satis_ratio\`). Difference = efplan reference mode -"
echo "reference run; **bold** where it exceeds .03 in either direction ($far of $n rows; the note names the cause, $defect of them"
echo "a defect of the reference that algorithms.md §8 documents and efplan does not copy). CPU columns are user CPU"
echo "seconds (the reference's from reference-runs.md; efplan's from \`/usr/bin/time\`, one process per run,"
echo "limit ${LIMIT} s each; a run over 60 s is noted). Policy names: reference / efplan."
echo
echo "Not run (reference names): ${s_timeout:-none} (the reference did not finish); ${s_notrace:-none} (its trace is"
echo "not in the shared data: the generator's streams cannot be reproduced); repeats of runs above: ${s_rep:-none}."
echo
echo "| trace | cluster | reference policy | efplan policy | reference ratio | efplan reference mode | difference | efplan default | reference user CPU s | efplan ref. mode user CPU s | efplan default user CPU s | flags | note |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
cat "$W/rows"
cat <<'TXT'

## Why the bold rows differ (evidence, not switches)

Reference mode restores, rule by rule, what algorithms.md specifies of each policy (the audit, rule by
rule with its section and code: `benchmarks/results/reference_mode.md`). The rows still outside .03:
- ef-noac (the reference's `ef`): the reference counts a job met iff its end *aligned to the slot
  plus overheads* is by its deadline, except that a job finishing early keeps its exact end (§4.1,
  §4.2, §4.5); §8.1 and §8.4 document both as defects and efplan does not copy them (its ef-noac
  counts a job met iff its exact completion is by its deadline). Recounting efplan's met jobs with
  slot-aligned ends gives .239 / .702 / .878 on fig9 n8g8 / n16g8 / n32g8 (the reference: .258 /
  .697 / .891); on fig8a the same recount falls short (.405 against .667) because of the exact-end
  exception, which depends on the reference's progress clipping (§4.2, §8.1).

Themis on fig8a, outside .03 before (.2462 against .3128), is within it since its reference mode takes
the x an interior-point solver gives where the program's optimum is not unique (the reference's ECOS;
bl_themis_centre) instead of the smallest: `benchmarks/results/reference_mode.md`, "Themis's solver".

## Reference mode's overhead: the constants and where they come from

`--overhead reference` charges the reference's generic formula (model/overhead.c ovh_reference,
algorithms.md §4.4): 2 s per charge (7 s on clusters of 256 GPUs or more); if the job's GPU set was
not seen before, plus 2 x (log2 g + 1) s; on a restart round, for a job not cached, plus 27 s (47 s
on 256+ GPUs); a restart round every `slot`-th round (the slot reused as a count, §4.4, §8.5); the
cache of GPU sets shared by all jobs and emptied after a restart round's look-ups (§4.4). No other
constant enters the charge, and none was fitted. Which jobs pay at which rounds follows the
reference's policy (§4.4; `--baselines reference`): ef, ef-noac and edf-ac every running job at
every round, cached; gandiva every running job at its arrival rounds while arrivals remain,
uncached (§6.3); tiresias a job that starts or resumes, and every running job on a restart round
(§6.4); edf and themis none (§6.1, §6.5: the rows' `--overhead none`). Where the emulation is not
the reference's, by choice: (1) a job's progress is exact and it completes when its work is done,
while the reference clips progress at the planned end and ends a job when its end event fires
(§4.2; the defect §8.1, not copied): so in efplan an overhead delays the job's completion and its
later plans, where in the reference the unfinished work is dropped at the end event; this is the
mechanism by which the charge moves ef's ratio through admission (§2.7: a late job vetoes every
newcomer), and the likely reason (inferred, not measured: that trace is not in the shared data)
why a trace outside the shared ones put efplan's ef .07 below the reference with the charge and
within .02 without it; (2) the cache key is the GPU set of efplan's placement, which keeps a job
on its GPUs, while the reference rebuilds its placement from scratch every round (§5.1), which
can only find fewer cached sets (a higher charge there); (3) ef's rounds are efplan's points on
the slot grid, the reference's are its events batched a slot apart (§4.3). Without the charge
(`--overhead none`) full reference mode gives .967 on cluster01 against the reference's .848
(.827 with it): on the shared runs the charge is needed.
TXT
} >"$OUT"
end=$(date +%s)
echo "wrote $OUT: $n runs, $far over .03, in $((end - start)) s"
