#!/bin/sh
# benchmarks/outputs.sh: byte-level snapshots of what efplan writes, to show
# that a change meant to keep every number (issue 14) keeps every byte.
#
#   sh benchmarks/outputs.sh snapshot EFPLAN OUTDIR   run the commands below
#                                                    with the binary EFPLAN
#   sh benchmarks/outputs.sh compare DIR_A DIR_B      compare two snapshots
#                                                    ($EFPLAN, default
#                                                    build/efplan, decodes
#                                                    plan files)
#
# snapshot stores every file the commands write, and each command's stdout
# (its stderr too, when not empty), under OUTDIR (which must not exist or
# be empty), in four folders:
#   plans/    efplan-plan files (plan --out, each step of the submit
#             sequences, oracle --plan-out) and plan charts (plan --svg)
#   sim/      simulate results: --out JSON, --jobs-out CSV, --svg charts
#   compare/  compare --out JSON, --markdown tables, the printed tables
#   other/    the rest: stdout (.stdout) and stderr (.stderr) of every
#             other command, gen-trace traces, oracle results and LP
#             model, profile --fit-only curves and provenance, the state
#             file of a local apply of an empty plan, and exit-codes.txt
#             ("NAME EXIT" for every command, in the order run)
# compare prints per folder how many files, how many equal, and every
# differing or missing file with the head of a unified diff; it exits 0
# iff both snapshots hold the same files with the same bytes, except that
# two plan files of different versions (planner/planio.h) count as equal
# when they hold the same plan: the same bytes once both are written back
# in version 1 (efplan validate --plan F --plan-version 1 --out ...).
#
# What runs (the efplan invocations of tests/e2e/*.sh and benchmarks/*.sh
# that write plans, results or tables, plus a grid over the options):
#   gen-trace  the seeds and options of gentrace.sh, elastic_batch.sh (both),
#              sim_paper.sh and oracle_study.sh (instances 1-8);
#   validate   every bundled trace (validate_traces.sh's curves and cluster),
#              the two queues in inputs/jobs, every cluster spec, each
#              curve set, generated traces, the empty queues;
#   plan       every bundled jobs file and trace on the cluster the README,
#              tests and benchmarks use (cluster08/09 included), sample and
#              cluster10 with --svg, --all, --surplus reference, --horizon,
#              --elastic-batch, --slot, --now; current placements, a bad
#              placement (exit 3), the apply.sh queue, the empty queues,
#              a generated elastic-batch trace with and without the option;
#   submit     sequences: sample (admit, reject with exit 4, admit at the
#              earliest deadline given), cluster10, into a plan made with
#              --elastic-batch (two jobs), into the empty plans; the plan
#              file after every step;
#   apply      --backend dry-run stdout (sample --slots 4 as `make run`,
#              sample, cluster10, the apply.sh plan with --until and
#              --nodes, the elastic-batch plan, empty and submitted-into-
#              empty plans, the oracle's plan); --backend local of the
#              empty plans (no process is started) and its state.json;
#   simulate   every policy (pollux on the trace with Pollux measurements)
#              x overhead models fig12, reference, restart, none on
#              cluster10, philly_103959, 195job, fig9 (240 s slots) and
#              elasticVpollux_e (T4); ef and ef-noac --elastic-batch x every
#              overhead on those and on generated traces with batch ranges;
#              --surplus, --cap, --baselines reference, --mip-nodes 1,
#              --tick, --slot, --pollux-data; the runs of elastic_batch.sh
#              (ef, ef --elastic-batch, saxena, edf on every ITP trace and
#              the generated ones); empty traces; bad input (exit codes);
#   compare    every grid of sim_paper.sh and sim_baselines.sh and the
#              compares of simulate.sh, baselines.sh, pollux.sh, empty.sh,
#              --cluster-for, --elastic-batch;
#   oracle     oracle.sh's runs on oracle10 (optimal, node limit, spent time
#              limit, infeasible --must-admit, --write-lp, --plan-out), the
#              empty queues, oracle_study.sh's instances syn1-syn8 and two
#              windows each of cluster01 and cluster10 (node limit 3000, no
#              time limit); each takes well under a second;
#   profile    --fit-only as profile.sh and profiler_fit.sh run it (curves,
#              provenance, every model, both bandwidths, ring latency, a
#              refused fill).
#   errors     a few bad inputs and usage errors of plan, simulate, compare,
#              oracle, profile and gen-trace (exit code and message).
# The data-driven error cases of tests/cases/ are not repeated here:
# validate_cases.sh already checks their exact stderr. A failing command
# does not stop the snapshot; its exit code is in other/exit-codes.txt.
# Compare only snapshots made by the same version of this script (the
# command list is part of what is compared).
#
# Files the defects of issue 14 touch (so their fix changes them): the
# submits into the --elastic-batch plan (plans/gen-eb-s1.json, -s2.json:
# batch_sizes dropped today), the dry-run of that plan
# (other/dry-gen-eb.stdout: no slot batch size today), the state files
# (other/local-empty-*.state.json).
#
# Inputs: the bundled inputs of the checkout this script is in (or
# $EFPLAN_DATA), whatever the binary was built with, so that both sides of
# a comparison read the same bytes. The commands run one after the other
# in a fresh temporary directory that holds a link `inputs` to them, with
# relative paths and EFPLAN_DATA=inputs, so paths the outputs record
# ("trace", "jobs_file", "wrote ...", curve directories) do not depend on
# where the binary, the inputs or OUTDIR are. OMP_NUM_THREADS is left as
# it is (results must not depend on it). 610 commands, 1801 files (295 MB);
# about 95 s of CPU, 1.5-3 minutes on 2 shared cores.
#
# Normalised, because they are legitimately not reproducible (every other
# byte is kept as written):
#   - wall-clock time: "wall_seconds" (simulate and compare JSON),
#     "seconds" (oracle JSON: GLPK's solve time) become "<time>";
#     simulate's decision time per point is left out (JSON: the
#     "point_us" line, and the "point_us_max" / "point_us_mean" lines
#     that elastic-batch results had before it; stdout: the "decision
#     time per point" line, and "; policy N us per point (max N us)");
#     in stdout, simulate's "N s wall", the cells of compare's "Wall
#     seconds per run" table (the
#     admitted / rejected counts beside them are kept) and the seconds
#     column of oracle's ilp row (with the spaces that pad it to its
#     width: 10 s or more takes one more column) and the relaxed bound's
#     LP seconds become <time>;
#   - the temporary directory's path (local apply prints and records its
#     state directory as an absolute path) becomes @WORK@.
# The journal of the local apply (wall-clock timestamps) is not kept.
# OUTDIR/SNAPSHOT (binary, inputs, counts, seconds taken) is a note for
# people; compare ignores it.
set -eu
LC_ALL=C
export LC_ALL

usage() {
    echo "usage: sh benchmarks/outputs.sh snapshot EFPLAN OUTDIR" >&2
    echo "       sh benchmarks/outputs.sh compare DIR_A DIR_B" >&2
    exit 2
}
die() { echo "outputs.sh: $*" >&2; exit 1; }

CATEGORIES="plans sim compare other"

# ---- snapshot --------------------------------------------------------------

# ef CAT NAME ARG...: run efplan ARG... in the work directory; stdout goes
# to CAT/NAME.stdout, stderr to CAT/NAME.stderr when not empty, and
# "NAME EXIT" to other/exit-codes.txt. A failing command does not stop the
# snapshot: its exit code and messages are part of it.
ef() {
    _c=$1
    _n=$2
    shift 2
    [ ! -e "$_c/$_n.stdout" ] || die "internal: two commands named $_c/$_n"
    _rc=0
    "$EFPLAN" "$@" >"$_c/$_n.stdout" 2>"$_c/$_n.stderr" || _rc=$?
    [ -s "$_c/$_n.stderr" ] || rm -f "$_c/$_n.stderr"
    echo "$_n $_rc" >>other/exit-codes.txt
    NRUN=$((NRUN + 1))
    [ "$_rc" -eq 0 ] || NFAIL=$((NFAIL + 1))
}

# (The helpers' variables start with _ so that they never clobber a loop
# variable of run_all: POSIX sh has no local variables.)

# plan NAME ARG...: efplan plan ARG... --out plans/NAME.json
plan() {
    _pn=$1
    shift
    ef other "plan-$_pn" plan "$@" --out "plans/$_pn.json"
}

# sim NAME ARG...: efplan simulate ARG... writing sim/NAME.json, .csv, .svg
sim() {
    _sn=$1
    shift
    ef other "sim-$_sn" simulate "$@" --out "sim/$_sn.json" \
        --jobs-out "sim/$_sn.csv" --svg "sim/$_sn.svg"
}

# cmpr NAME ARG...: efplan compare ARG... writing compare/NAME.json, .md;
# the printed table is compare/NAME.stdout
cmpr() {
    _cn=$1
    shift
    ef compare "$_cn" compare "$@" --out "compare/$_cn.json" \
        --markdown "compare/$_cn.md"
}

# submit NAME FROM JOB: copy plans/FROM.json to plans/NAME.json and submit
# JOB into the copy (the copy is the plan after this step)
submit() {
    cp "plans/$2.json" "plans/$1.json"
    ef other "submit-$1" submit --plan "plans/$1.json" --job "$3"
}

# oracle_slot CSV: oracle_study.sh's slot (at most 24 slots, whole minutes)
oracle_slot() {
    awk -F, 'NR == 2 { lo = $2; hi = $5 }
        NR > 1 { if ($2 < lo) lo = $2; if ($5 > hi) hi = $5 }
        END { s = int((hi - lo + 23) / 24); s = int((s + 59) / 60) * 60;
              if (s < 60) s = 60; print s }' "$1"
}

run_all() {
    D=inputs
    T=inputs/traces
    C10=$T/itp/cluster10.csv
    PH=$T/artifact/philly_103959.csv
    EVP=$T/artifact/elasticVpollux_e.csv
    J195=$T/itp/195job.csv
    FIG9=$T/generated/fig9_1000job_1500lam.csv
    SAMPLE=$D/jobs/sample.json
    OR10=$D/jobs/oracle10.json
    F8="$T/itp/cluster01.csv,$T/itp/cluster05.csv,$T/itp/cluster06.csv,$T/itp/cluster08.csv,$T/itp/cluster09.csv,$T/itp/cluster10.csv,$T/artifact/philly_103959.csv"
    A100_POLICIES="ef ef-noac edf edf-ac saxena gandiva tiresias themis chronus"
    BASELINES="gandiva tiresias themis chronus"
    OVERHEADS="fig12 reference restart none"

    # -- scratch inputs (fixed bytes) --
    # submit adds its job to the plan's jobs file: plan from a copy
    cp "$SAMPLE" tmp/sample.json
    SAMPLE=tmp/sample.json
    printf '{"jobs": []}\n' >tmp/q.json
    printf 'job_id,submit_time,iteration,model_name,ddl,batch_size\n' >tmp/q.csv
    cat >tmp/new.json <<'JSON'
{"jobs": [{"id": "new", "model": "resnet50", "batch_size": 64,
  "iterations": 1000, "submit_time": 0, "deadline": 3600,
  "command": ["true"]}]}
JSON
    cat >tmp/cur.json <<'JSON'
{"jobs": [
 {"id": "a", "model": "resnet50", "batch_size": 128, "iterations": 100000,
  "iterations_done": 5000, "submit_time": 0, "deadline": 20000,
  "placement": [{"node": 1, "gpus": [4, 5, 6, 7]}]},
 {"id": "b", "model": "bert", "batch_size": 64, "iterations": 20000,
  "submit_time": 0, "deadline": 9000,
  "placement": [{"node": 0, "gpus": [0, 1]}]}]}
JSON
    sed 's/"gpus": \[0, 1\]/"gpus": [1, 2]/' tmp/cur.json >tmp/bad-placement.json
    # apply.sh's queue; the commands are only printed (dry-run)
    cat >tmp/jobs3.json <<'JSON'
{"jobs": [
 {"id": "a", "model": "bert", "batch_size": 64, "iterations": 4000,
  "submit_time": 0, "deadline": 600, "grace_seconds": 5,
  "command": ["sh", "tests/data/dummy_train.sh", "ev", "3"]},
 {"id": "b", "model": "deepspeech2", "batch_size": 32, "iterations": 8000,
  "submit_time": 120, "deadline": 1320, "grace_seconds": 5,
  "checkpoint_signal": "SIGUSR1", "env": {"DUMMY_NOTE": "b's own"},
  "command": ["sh", "tests/data/dummy_train.sh", "ev", "4"]},
 {"id": "c", "model": "deepspeech2", "batch_size": 32, "iterations": 8000,
  "submit_time": 0, "deadline": 1200, "grace_seconds": 5,
  "command": ["sh", "tests/data/dummy_train.sh", "ev", "3"]}]}
JSON
    printf 'node0\n' >tmp/nodes1.txt
    printf '{"jobs": 5}\n' >tmp/bad1.json
    printf '{"format": "efplan-jobs", "version": 1}\n' >tmp/bad2.json
    : >tmp/bad3.csv
    printf '1,0,100,resnet50,200,64\n' >tmp/bad4.csv
    mkdir tmp/zig
    printf 'global_batch_size,1,2,4,8\n64,10,30,5,40\n' >tmp/zig/zig.csv

    # -- gen-trace --
    ef other gen-s7 gen-trace --jobs 50 --mean-interarrival 600 \
        --deadline-factor 0.5 1.5 --seed 7
    ef other gen-s7-out gen-trace --jobs 50 --mean-interarrival 600 \
        --deadline-factor 0.5 1.5 --seed 7 --out other/gen-s7.csv
    ef other gen-s8 gen-trace --jobs 50 --mean-interarrival 600 \
        --deadline-factor 0.5 1.5 --seed 8
    ef other gen-s7-df15 gen-trace --jobs 50 --mean-interarrival 600 \
        --deadline-factor 1.5 1.5 --seed 7
    ef other gen-big gen-trace --jobs 20000 --mean-interarrival 1500 \
        --deadline-factor 0.5 1.5 --seed 3 --best-effort 0.25
    ef other gen-scaled gen-trace --jobs 200 --mean-interarrival 900 \
        --deadline-factor 0.8 1.2 --seed 11 --duration-scale 0.5 \
        --best-effort 0.1 --out other/gen-scaled.csv
    ef other gen-eb gen-trace --jobs 150 --mean-interarrival 400 \
        --deadline-factor 0.5 1.5 --seed 5 --elastic-batch 0.6 \
        --out other/gen-eb.csv
    ef other gen-eb-stdout gen-trace --jobs 150 --mean-interarrival 400 \
        --deadline-factor 0.5 1.5 --seed 5 --elastic-batch 0.6
    ef other gen-eb-plain gen-trace --jobs 150 --mean-interarrival 400 \
        --deadline-factor 0.5 1.5 --seed 5
    ef other gen-fig9-s0 gen-trace --jobs 1000 --mean-interarrival 1500 \
        --deadline-factor 0.5 1.5 --seed 0 --out other/gen-fig9-s0.csv
    for s in 0 1; do
        for p in 1 0.5; do
            ef other "gen-eb-s$s-p$p" gen-trace --jobs 1000 \
                --mean-interarrival 1500 --deadline-factor 0.5 1.5 \
                --seed "$s" --elastic-batch "$p" --out "other/gen-eb-s$s-p$p.csv"
        done
        ef other "gen-eb-h-s$s" gen-trace --jobs 1000 --mean-interarrival 600 \
            --deadline-factor 0.5 1.5 --seed "$s" --elastic-batch 1 \
            --out "other/gen-eb-h-s$s.csv"
    done
    k=1
    while [ "$k" -le 8 ]; do
        ef other "gen-syn$k" gen-trace --jobs 40 --mean-interarrival 300 \
            --deadline-factor 0.4 1.0 --seed "$k"
        k=$((k + 1))
    done

    # -- validate --
    for f in artifact/philly_103959 generated/fig9_1000job_1500lam \
             itp/195job itp/cluster01 itp/cluster05 itp/cluster06 \
             itp/cluster08 itp/cluster09 itp/cluster10; do
        ef other "validate-$(basename "$f")" validate --jobs "$T/$f.csv" \
            --curves A100 --cluster n128g8
    done
    ef other validate-elasticVpollux_e validate --jobs "$EVP" --curves T4 \
        --cluster n16g4
    ef other validate-sample validate --jobs "$SAMPLE" --curves A100 --cluster n2g8
    ef other validate-oracle10 validate --jobs "$OR10" --curves A100 --cluster n1g8
    for f in "$D"/clusters/*.csv; do
        ef other "validate-cluster-$(basename "$f" .csv)" validate --cluster "$f"
    done
    ef other validate-cluster-n4g8-spec validate --cluster n4g8
    ef other validate-curves-A100 validate --curves A100
    ef other validate-curves-T4 validate --curves T4
    ef other validate-curves-A100-path validate --curves "$D/curves/A100"
    ef other validate-gen-s7 validate --jobs other/gen-s7.csv --curves A100
    ef other validate-gen-eb validate --jobs other/gen-eb.csv --curves A100 \
        --cluster n2g8
    ef other validate-empty-json validate --jobs tmp/q.json --cluster n1g8 --curves A100
    ef other validate-empty-csv validate --jobs tmp/q.csv --cluster n1g8 --curves A100

    # -- plan --
    ef other plan-sample plan --jobs "$SAMPLE" --cluster n4g8 --curves A100 \
        --out plans/sample.json --svg plans/sample.svg
    plan sample-all --jobs "$SAMPLE" --cluster n4g8 --curves A100 --all
    plan sample-n2g8 --jobs "$SAMPLE" --cluster n2g8 --curves A100
    plan sample-surplus-ref --jobs "$SAMPLE" --cluster n4g8 --curves A100 \
        --surplus reference
    plan sample-horizon --jobs "$SAMPLE" --cluster n4g8 --curves A100 --horizon 1h
    plan sample-eb --jobs "$SAMPLE" --cluster n4g8 --curves A100 --elastic-batch
    plan sample-slot300 --jobs "$SAMPLE" --cluster n4g8 --curves A100 --slot 300
    plan sample-now --jobs "$SAMPLE" --cluster n4g8 --curves A100 --now 3600
    plan oracle10 --jobs "$OR10" --cluster n1g8 --curves A100 --slot 300
    ef other plan-cluster10 plan --jobs "$C10" --cluster n32g8 --curves A100 \
        --out plans/cluster10.json --svg plans/cluster10.svg
    plan cluster10-n16g8 --jobs "$C10" --cluster n16g8 --curves A100
    plan cluster10-surplus-ref --jobs "$C10" --cluster n32g8 --curves A100 \
        --surplus reference
    plan cluster10-eb --jobs "$C10" --cluster n32g8 --curves A100 --elastic-batch
    plan cluster10-horizon --jobs "$C10" --cluster n32g8 --curves A100 --horizon 6h
    for t in cluster01:n64g8 cluster05:n64g8 cluster06:n64g8 cluster08:n128g8 \
             cluster09:n128g8; do
        plan "${t%%:*}" --jobs "$T/itp/${t%%:*}.csv" --cluster "${t#*:}" --curves A100
    done
    plan philly --jobs "$PH" --cluster n32g8 --curves A100
    plan 195job --jobs "$J195" --cluster n16g8 --curves A100
    plan elasticVpollux_e --jobs "$EVP" --cluster n16g4 --curves T4
    plan fig9 --jobs "$FIG9" --cluster n16g8 --curves A100 --slot 240
    plan gen-s7 --jobs other/gen-s7.csv --cluster n8g8 --curves A100
    plan gen-eb --jobs other/gen-eb.csv --cluster n2g8 --curves A100 --elastic-batch
    plan gen-eb-fixed --jobs other/gen-eb.csv --cluster n2g8 --curves A100
    plan gen-eb-s0-p1 --jobs other/gen-eb-s0-p1.csv --cluster n8g8 --curves A100 \
        --slot 240 --elastic-batch
    plan placements --jobs tmp/cur.json --cluster n2g8 --curves A100
    plan bad-placement --jobs tmp/bad-placement.json --cluster n2g8 --curves A100
    plan apply3 --jobs tmp/jobs3.json --cluster n1g8 --curves A100
    for q in json csv; do
        ef other "plan-empty-$q" plan --jobs "tmp/q.$q" --cluster n1g8 \
            --curves A100 --out "plans/empty-$q.json" --svg "plans/empty-$q.svg"
    done
    for b in bad1.json bad2.json bad3.csv bad4.csv; do
        plan "malformed-$b" --jobs "tmp/$b" --cluster n1g8 --curves A100
    done

    # -- submit sequences (the plan file after each step is kept) --
    NEW='{"id":"new","model":"resnet50","batch_size":128,"iterations":2000,"deadline":30000}'
    HUGE='{"id":"huge","model":"vgg16","batch_size":256,"iterations":200000,"deadline":5000}'
    submit sample-s1 sample "$NEW"
    submit sample-s2 sample-s1 "$HUGE"
    e=$(sed -n 's/^earliest deadline that can be guaranteed: //p' \
        other/submit-sample-s2.stdout)
    submit sample-s3 sample-s2 \
        "{\"id\":\"huge\",\"model\":\"vgg16\",\"batch_size\":256,\"iterations\":200000,\"deadline\":${e:-0}}"
    submit cluster10-s1 cluster10 \
        '{"id":"late","model":"bert","batch_size":128,"iterations":5000,"submit_time":2300000,"deadline":2400000}'
    submit gen-eb-s1 gen-eb \
        '{"id": "late", "model": "resnet50", "batch_sizes": [64, 128, 256], "samples": 6400000, "submit_time": 0, "deadline": 9999999}'
    submit gen-eb-s2 gen-eb-s1 \
        '{"id":"fixed","model":"vgg16","batch_size":128,"iterations":3000,"submit_time":1000,"deadline":900000}'
    for q in json csv; do
        submit "empty-$q-s1" "empty-$q" \
            '{"id":"new","model":"resnet50","batch_size":64,"iterations":1000,"deadline":3600}'
        submit "empty-$q-rej" "empty-$q" "$HUGE"
    done

    # -- apply --backend dry-run, and local of the empty plans --
    ef other dry-sample-slots4 apply plans/sample.json --backend dry-run --slots 4
    ef other dry-sample apply plans/sample.json --backend dry-run
    ef other dry-cluster10 apply plans/cluster10.json --backend dry-run --slots 20
    ef other dry-apply3 apply plans/apply3.json --backend dry-run
    ef other dry-apply3-until apply plans/apply3.json --backend dry-run --until 400
    ef other dry-apply3-nodes apply plans/apply3.json --backend dry-run \
        --nodes tmp/nodes1.txt
    ef other dry-gen-eb apply plans/gen-eb.json --backend dry-run --slots 10
    for q in json csv; do
        ef other "dry-empty-$q" apply "plans/empty-$q.json" --backend dry-run \
            --state "tmp/empty-$q.dry"
        ef other "dry-empty-$q-s1" apply "plans/empty-$q-s1.json" \
            --backend dry-run --jobs tmp/new.json
        ef other "local-empty-$q" apply "plans/empty-$q.json" --backend local \
            --state "tmp/empty-$q.st"
        ef other "local-empty-$q-again" apply "plans/empty-$q.json" \
            --backend local --state "tmp/empty-$q.st"
        if [ -f "tmp/empty-$q.st/state.json" ]; then
            cp "tmp/empty-$q.st/state.json" "other/local-empty-$q.state.json"
        fi
        plan "state-empty-$q" --jobs "tmp/empty-$q.st/state.json" \
            --cluster n1g8 --curves A100
    done

    # -- simulate: every policy x every overhead model on the small traces --
    for t in "cluster10:$C10:n32g8:60" "philly:$PH:n32g8:60" \
             "195job:$J195:n16g8:60" "fig9:$FIG9:n16g8:240"; do
        n=${t%%:*}; r=${t#*:}; f=${r%%:*}; r=${r#*:}; cl=${r%%:*}; sl=${r#*:}
        for ov in $OVERHEADS; do
            for p in $A100_POLICIES; do
                sim "$n-$p-$ov" --trace "$f" --cluster "$cl" --curves A100 \
                    --slot "$sl" --policy "$p" --overhead "$ov"
            done
            for p in ef ef-noac; do
                sim "$n-$p-eb-$ov" --trace "$f" --cluster "$cl" --curves A100 \
                    --slot "$sl" --policy "$p" --overhead "$ov" --elastic-batch
            done
        done
    done
    for ov in $OVERHEADS; do
        for p in $A100_POLICIES pollux; do
            sim "elasticVpollux_e-$p-$ov" --trace "$EVP" --cluster n16g4 \
                --curves T4 --policy "$p" --overhead "$ov"
        done
        for p in ef ef-noac; do
            sim "elasticVpollux_e-$p-eb-$ov" --trace "$EVP" --cluster n16g4 \
                --curves T4 --policy "$p" --overhead "$ov" --elastic-batch
        done
    done
    # generated traces with batch ranges
    for p in $A100_POLICIES; do
        sim "gen-eb-$p" --trace other/gen-eb.csv --cluster n2g8 --curves A100 \
            --policy "$p"
    done
    for ov in $OVERHEADS; do
        for p in ef ef-noac; do
            sim "gen-eb-$p-eb-$ov" --trace other/gen-eb.csv --cluster n2g8 \
                --curves A100 --policy "$p" --overhead "$ov" --elastic-batch
            sim "gen-eb-s0-p1-$p-eb-$ov" --trace other/gen-eb-s0-p1.csv \
                --cluster n8g8 --curves A100 --slot 240 --policy "$p" \
                --overhead "$ov" --elastic-batch
        done
    done
    sim gen-eb-n1g8-ef-eb-none --trace other/gen-eb.csv --cluster n1g8 \
        --curves A100 --policy ef --elastic-batch --overhead none
    sim gen-eb-s0-p1-saxena --trace other/gen-eb-s0-p1.csv --cluster n8g8 \
        --curves A100 --slot 240 --policy saxena
    # options
    for p in ef ef-noac; do
        sim "cluster10-$p-surplus-ref" --trace "$C10" --cluster n32g8 \
            --curves A100 --policy "$p" --surplus reference
        sim "cluster10-$p-ovh-ref-surplus-ref" --trace "$C10" --cluster n32g8 \
            --curves A100 --policy "$p" --overhead reference --surplus reference
        sim "elasticVpollux_e-$p-surplus-ref" --trace "$EVP" --cluster n16g4 \
            --curves T4 --policy "$p" --surplus reference
    done
    for p in edf edf-ac $BASELINES; do
        sim "cluster10-$p-cap-ref" --trace "$C10" --cluster n32g8 \
            --curves A100 --policy "$p" --cap reference
        sim "philly-n4g8-$p-cap-ref" --trace "$PH" --cluster n4g8 \
            --curves A100 --policy "$p" --cap reference
    done
    for p in $BASELINES; do
        for b in fixed reference; do
            sim "elasticVpollux_e-$p-baselines-$b" --trace "$EVP" \
                --cluster n16g4 --curves T4 --policy "$p" --baselines "$b"
            sim "cluster10-$p-baselines-$b" --trace "$C10" --cluster n32g8 \
                --curves A100 --policy "$p" --baselines "$b"
        done
    done
    sim elasticVpollux_e-chronus-mip1 --trace "$EVP" --cluster n16g4 \
        --curves T4 --policy chronus --mip-nodes 1
    sim cluster10-chronus-mip1 --trace "$C10" --cluster n32g8 \
        --curves A100 --policy chronus --mip-nodes 1
    sim elasticVpollux_e-pollux-data --trace "$EVP" --cluster n16g4 \
        --curves T4 --policy pollux --pollux-data "$D/pollux"
    for p in ef edf saxena; do
        sim "cluster10-$p-tick600" --trace "$C10" --cluster n32g8 \
            --curves A100 --policy "$p" --tick 600
        sim "cluster10-$p-slot240" --trace "$C10" --cluster n32g8 \
            --curves A100 --policy "$p" --slot 240
    done
    sim cluster01-ef --trace "$T/itp/cluster01.csv" --cluster n64g8 \
        --curves A100 --policy ef
    sim cluster01-edf --trace "$T/itp/cluster01.csv" --cluster n64g8 \
        --curves A100 --policy edf
    for q in json csv; do
        for p in ef edf gandiva chronus pollux; do
            sim "empty-$q-$p" --trace "tmp/q.$q" --cluster n1g8 --curves A100 \
                --policy "$p"
        done
    done
    # bad input: exit codes and messages
    ef other sim-err-policy simulate --trace "$C10" --cluster n32g8 \
        --curves A100 --policy edff
    ef other sim-err-missing simulate --trace tmp/nope.csv --cluster n32g8 \
        --curves A100 --policy ef
    ef other sim-err-unwritable simulate --trace "$C10" --cluster n32g8 \
        --curves A100 --policy ef --out tmp/no/dir/r.json
    ef other sim-err-eb-edf simulate --trace other/gen-eb.csv --cluster n2g8 \
        --curves A100 --policy edf --elastic-batch
    ef other sim-err-baselines simulate --trace "$EVP" --cluster n16g4 \
        --curves T4 --policy themis --baselines buggy
    ef other sim-err-pollux-data simulate --trace "$EVP" --cluster n16g4 \
        --curves T4 --policy pollux --pollux-data tmp/none
    ef other sim-err-pollux-model simulate --trace "$C10" --cluster n32g8 \
        --curves A100 --policy pollux

    # -- simulate: the runs of benchmarks/elastic_batch.sh (--out only) --
    for t in cluster01:n64g8 cluster05:n64g8 cluster06:n64g8 cluster08:n128g8 \
             cluster09:n128g8 cluster10:n32g8; do
        ebrow "$T/itp/${t%%:*}.csv" "${t#*:}" 60 "eb-bench-${t%%:*}-${t#*:}"
    done
    ebrow "$PH" n32g8 60 eb-bench-philly_103959-n32g8
    for s in 0 1; do
        for c in n8g8 n16g8; do
            ebrow "other/gen-eb-s$s-p1.csv" "$c" 240 "eb-bench-s$s-p1-$c"
            ebrow "other/gen-eb-s$s-p0.5.csv" "$c" 240 "eb-bench-s$s-p0.5-$c"
        done
        ebrow "other/gen-eb-h-s$s.csv" n8g8 240 "eb-bench-h-s$s-n8g8"
        ebrow "other/gen-eb-h-s$s.csv" n16g8 240 "eb-bench-h-s$s-n16g8"
    done

    # -- compare: benchmarks/sim_paper.sh --
    cmpr paper-1-default --traces "$F8" --policies ef,edf,ef-noac,edf-ac
    cmpr paper-2-cap-ref --traces "$F8" --policies edf,edf-ac --cap reference
    cmpr paper-3-ovh-surplus-ref --traces "$F8" --policies ef,ef-noac \
        --overhead reference --surplus reference
    cmpr paper-4-ovh-none --traces "$F8" --policies ef --overhead none
    for c in n4g8 n8g8 n16g8; do
        cmpr "paper-5-philly-$c" --traces "$PH" --cluster "$c" \
            --policies ef,edf --cap reference
    done
    for c in n8g8 n16g8 n32g8; do
        cmpr "paper-fig9-$c" --traces "$FIG9" --cluster "$c" --slot 240 \
            --policies edf,edf-ac,ef-noac,ef
        cmpr "paper-fig9-cap-ref-$c" --traces "$FIG9" --cluster "$c" --slot 240 \
            --policies edf,edf-ac,ef-noac,ef --cap reference
        cmpr "paper-gen9-$c" --traces other/gen-fig9-s0.csv --cluster "$c" \
            --slot 240 --policies edf,edf-ac,ef-noac,ef --cap reference
    done
    # -- compare: benchmarks/sim_baselines.sh --
    P6=edf,gandiva,tiresias,themis,chronus,ef
    P7=edf,gandiva,tiresias,themis,chronus,pollux,ef
    cmpr baselines-1-default --traces "$F8" --policies "$P6"
    cmpr baselines-2-ref --traces "$F8" --policies gandiva,tiresias,themis,chronus \
        --baselines reference
    cmpr baselines-2-edf-cap-ref --traces "$F8" --policies edf --cap reference
    cmpr baselines-3-philly-n4g8 --traces "$PH" --cluster n4g8 --policies "$P6"
    cmpr baselines-3-philly-n4g8-ref --traces "$PH" --cluster n4g8 \
        --policies "$P6" --baselines reference --cap reference
    cmpr baselines-5-fig8a --traces "$EVP" --curves T4 --policies "$P7,ef-noac,edf-ac"
    cmpr baselines-5-fig8a-ref --traces "$EVP" --curves T4 --policies "$P7" \
        --baselines reference --cap reference
    for ov in $OVERHEADS; do
        cmpr "baselines-5-fig8a-ovh-$ov" --traces "$EVP" --curves T4 \
            --policies "$P7" --overhead "$ov"
    done
    cmpr baselines-5-fig8a-mip1 --traces "$EVP" --curves T4 --policies chronus \
        --mip-nodes 1
    # -- compare: the e2e tests, and two more options --
    cmpr e2e-simulate --traces "$C10,$PH" --policies ef,edf
    cmpr e2e-baselines --traces "$C10" --policies gandiva,tiresias,themis,chronus
    cmpr e2e-pollux --traces "$EVP" --cluster n16g4 --curves T4 --policies pollux,ef
    cmpr e2e-empty --traces tmp/q.json,tmp/q.csv --policies ef,edf --cluster n1g8
    cmpr cluster-for --traces "$C10,$PH" --policies ef,edf \
        --cluster-for philly_103959=n4g8
    cmpr elastic-batch --traces other/gen-eb-s0-p1.csv,other/gen-eb-s1-p0.5.csv \
        --cluster n8g8 --slot 240 --policies ef,ef-noac,saxena --elastic-batch
    ef compare err-cluster-for compare --traces "$C10" --policies ef \
        --cluster artifact --cluster-for cluster10
    ef compare err-mip-nodes compare --traces "$EVP" --cluster n16g4 --curves T4 \
        --policies chronus --mip-nodes 0

    # -- oracle --
    ef other oracle10 oracle --jobs "$OR10" --cluster n1g8 --curves A100 \
        --slot 300 --out other/oracle10.json --plan-out plans/oracle10-ilp.json \
        --write-lp other/oracle10.lp
    ef other oracle10-nodes5 oracle --jobs "$OR10" --cluster n1g8 --curves A100 \
        --slot 300 --node-limit 5 --out other/oracle10-nodes5.json
    ef other oracle10-time oracle --jobs "$OR10" --cluster n1g8 --curves A100 \
        --slot 300 --time-limit 0.000000001 --out other/oracle10-time.json \
        --plan-out plans/oracle10-time-ilp.json
    ef other oracle10-infeasible oracle --jobs "$OR10" --cluster n1g8 \
        --curves A100 --slot 300 --must-admit big,s1,s2,s3,s4,s5,s6,s7,s8 \
        --out other/oracle10-infeasible.json
    for bad in "--node-limit 0" "--time-limit x" "--must-admit nosuch" \
               "--must-admit be" "--bogus"; do
        n=$(echo "$bad" | tr -dc 'a-z0-9-')
        # shellcheck disable=SC2086 # the option and its value, split on purpose
        ef other "oracle10-err$n" oracle --jobs "$OR10" --cluster n1g8 \
            --curves A100 --slot 300 $bad
    done
    ef other oracle-err-missing oracle --jobs tmp/missing.json --cluster n1g8 \
        --curves A100
    for q in json csv; do
        ef other "oracle-empty-$q" oracle --jobs "tmp/q.$q" --cluster n1g8 \
            --curves A100 --out "other/oracle-empty-$q.json" \
            --plan-out "plans/oracle-empty-$q-ilp.json"
    done
    ef other dry-oracle10-ilp apply plans/oracle10-ilp.json --backend dry-run
    # oracle_study.sh's instances: syn1..syn8, two windows of two traces
    clusters="n1g8 n2g8 n4g8"
    k=1
    while [ "$k" -le 8 ]; do
        awk -F, -v n=$((6 + k % 7)) 'NR == 1 { print; next }
            $8 <= 19000 && c < n { print; c++ }' "other/gen-syn$k.stdout" \
            >"tmp/syn$k.csv"
        study "syn$k" "tmp/syn$k.csv" "$(echo "$clusters" | cut -d' ' -f$((k % 3 + 1)))"
        k=$((k + 1))
    done
    i=0
    for t in cluster01 cluster10; do
        rows=$(($(wc -l <"$T/itp/$t.csv") - 1))
        for w in 0 1; do
            first=$((2 + w * (rows - 12) / 10))
            sed -n "1p;${first},$((first + 11))p" "$T/itp/$t.csv" >"tmp/$t-$first.csv"
            study "$t-$first" "tmp/$t-$first.csv" \
                "$(echo "$clusters" | cut -d' ' -f$((i % 3 + 1)))"
            i=$((i + 1))
        done
    done

    # -- profile --fit-only --
    ef other fit-resnet50 profile --fit-only --curves A100 --model resnet50 \
        --fit-gpus 8 --inter-node-gbps 1600 --out other/fit-curves \
        --json other/fit-resnet50.provenance.json
    ef other fit-validate validate --curves other/fit-curves
    mkdir other/fit-cj
    ef other fit-resnet50-json profile --fit-only --curves A100 --model resnet50 \
        --fit-gpus 8 --inter-node-gbps 1600 --out other/fit-cj/resnet50.json \
        --json other/fit-resnet50-again.provenance.json
    ef other fit-validate-json validate --curves other/fit-cj
    for m in bert deepspeech2 gpt2 inception3 resnet50 resnet50_cifar10 vgg16; do
        ef other "fit-all-$m" profile --fit-only --curves A100 --model "$m"
        if [ "$m" = resnet50_cifar10 ]; then
            continue
        fi
        ef other "fit-$m-8-1600" profile --fit-only --curves A100 --model "$m" \
            --fit-gpus 8 --inter-node-gbps 1600
        ef other "fit-$m-8-200" profile --fit-only --curves A100 --model "$m" \
            --fit-gpus 8 --inter-node-gbps 200
        ef other "fit-$m-8-1600-ring" profile --fit-only --curves A100 \
            --model "$m" --fit-gpus 8 --inter-node-gbps 1600 --latency-model ring
    done
    ef other fit-zig profile --fit-only --curves tmp/zig --model zig \
        --params 1e8 --flops-per-sample 1e9 --max-gpus 16 \
        --inter-node-gbps 100 --out other/fit-zig-curves --json other/fit-zig.json
    ef other fit-err-model profile --fit-only --curves A100 --model resnet5
    ef other fit-err-nocurves profile --fit-only --curves tmp/nowhere --model bert
    ef other fit-err-nomodel profile --fit-only --curves A100 --model nomodel \
        --params 1e6 --flops-per-sample 1e9

    # -- gen-trace: bad options --
    ef other gen-err-jobs gen-trace --jobs 0 --mean-interarrival 1 \
        --deadline-factor 1 1 --seed 1
    ef other gen-err-factor gen-trace --jobs 5 --mean-interarrival 1 \
        --deadline-factor 2 1 --seed 1
    ef other gen-err-seed gen-trace --jobs 5 --mean-interarrival 1 \
        --deadline-factor 1 1
    ef other gen-err-be gen-trace --jobs 5 --mean-interarrival 1 \
        --deadline-factor 1 1 --seed 1 --best-effort 2
}

# ebrow TRACE CLUSTER SLOT NAME: one row of benchmarks/elastic_batch.sh
ebrow() {
    ef other "sim-$4-ef" simulate --trace "$1" --cluster "$2" --curves A100 \
        --slot "$3" --policy ef --out "sim/$4-ef.json"
    ef other "sim-$4-ef-eb" simulate --trace "$1" --cluster "$2" --curves A100 \
        --slot "$3" --policy ef --elastic-batch --out "sim/$4-ef-eb.json"
    ef other "sim-$4-saxena" simulate --trace "$1" --cluster "$2" --curves A100 \
        --slot "$3" --policy saxena --out "sim/$4-saxena.json"
    ef other "sim-$4-edf" simulate --trace "$1" --cluster "$2" --curves A100 \
        --slot "$3" --policy edf --out "sim/$4-edf.json"
}

# study NAME CSV CLUSTER: one instance of benchmarks/oracle_study.sh
study() {
    ef other "oracle-$1" oracle --jobs "$2" --cluster "$3" --curves A100 \
        --slot "$(oracle_slot "$2")" --node-limit 3000 --time-limit 0 \
        --out "other/oracle-$1.json" --plan-out "plans/oracle-$1-ilp.json"
}

# Rewrite FILE through a sed script, only if it holds a match of PATTERN.
norm_file() { # pattern sed-script file
    if grep -q -e "$1" "$3"; then
        sed -e "$2" "$3" >"$3.norm"
        mv "$3.norm" "$3"
    fi
}

# Replace every occurrence of the literal string $2 in file $1 by @WORK@.
mask_work() {
    if grep -q -F -e "$2" "$1"; then
        awk -v d="$2" '{
            out = ""; s = $0
            while ((i = index(s, d)) > 0) {
                out = out substr(s, 1, i - 1) "@WORK@"; s = substr(s, i + length(d))
            }
            print out s }' "$1" >"$1.norm"
        mv "$1.norm" "$1"
    fi
}

normalise() {
    # JSON: "wall_seconds", "seconds"; the decision times per point, whose
    # members changed (elastic batch runs' "point_us_max" and
    # "point_us_mean" lines, every run's "point_us" line since), go
    find sim compare other -type f -name '*.json' | sort |
        while IFS= read -r f; do
            for k in wall_seconds seconds; do
                norm_file "\"$k\": " \
                    "s/\"$k\": [-0-9.eE+][-0-9.eE+]*/\"$k\": \"<time>\"/g" "$f"
            done
            norm_file '^  "point_us' '/^  "point_us/d' "$f"
        done
    find sim compare other -type f -name '*.stdout' | sort |
        while IFS= read -r f; do
            # simulate: "...; 0.00 s wall" and the elastic-batch policy time
            norm_file ' s wall$' 's/; [0-9.]* s wall$/; <time> s wall/' "$f"
            norm_file ' us per point' \
                's/; policy [0-9.]* us per point (max [0-9.]* us)$//' "$f"
            norm_file '^  decision time per point ' '/^  decision time per point /d' "$f"
            # oracle: the seconds column of the ilp row, the relaxed
            # bound's LP time
            norm_file '^  ilp ' '/^  ilp /s/ *[0-9.][0-9.]*$/ <time>/' "$f"
            norm_file '^  relaxed bound: ' \
                '/^  relaxed bound: /s/[0-9.][0-9.]* s)$/<time> s)/' "$f"
            norm_file '^  relaxed bound: the LP was stopped' \
                's/stopped by the time limit after [0-9.]* s/stopped by the time limit after <time> s/' "$f"
        done
    # compare: the cells of the "Wall seconds per run" table
    find compare -type f \( -name '*.md' -o -name '*.stdout' \) | sort |
        while IFS= read -r f; do
            norm_file '| [0-9.]* ([0-9]* / [0-9]*)' \
                's/| [0-9.]* (\([0-9]* \/ [0-9]*\))/| <time> (\1)/g' "$f"
        done
    find plans sim compare other -type f | sort | while IFS= read -r f; do
        mask_work "$f" "$W"
    done
}

snapshot() {
    [ $# -eq 2 ] || usage
    EFPLAN=$1
    OUT=$2
    case $EFPLAN in */*) ;; *) EFPLAN=$(command -v "$EFPLAN" || echo "$EFPLAN") ;; esac
    [ -x "$EFPLAN" ] || die "no executable efplan at $EFPLAN"
    EFPLAN=$(cd "$(dirname "$EFPLAN")" && pwd)/$(basename "$EFPLAN")
    ROOT=$(cd "$(dirname "$0")/.." && pwd)
    DATA=${EFPLAN_DATA:-$ROOT/inputs}
    [ -d "$DATA/traces" ] || die "no bundled inputs at $DATA"
    DATA=$(cd "$DATA" && pwd)
    if [ -e "$OUT" ]; then
        if [ ! -d "$OUT" ] || [ -n "$(ls -A "$OUT")" ]; then
            die "$OUT exists and is not empty (use a new directory)"
        fi
    fi
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
    W=$(mktemp -d "${TMPDIR:-/tmp}/efplan-outputs.XXXXXX")
    trap 'rm -rf "$W"' EXIT
    trap 'exit 130' INT TERM
    cd "$W"
    ln -s "$DATA" inputs
    mkdir plans sim compare other tmp
    : >other/exit-codes.txt
    EFPLAN_DATA=inputs
    export EFPLAN_DATA
    NRUN=0
    NFAIL=0
    start=$(date +%s)
    run_all
    normalise
    for c in $CATEGORIES; do
        mv "$c" "$OUT/$c"
    done
    end=$(date +%s)
    total=$(find "$OUT" -type f | wc -l)
    {
        echo "binary: $EFPLAN"
        echo "inputs: $DATA"
        echo "commands: $NRUN ($NFAIL with a non-zero exit, as other/exit-codes.txt says)"
        echo "files: $total"
        echo "seconds: $((end - start))"
    } >"$OUT/SNAPSHOT"
    sed 's/^/outputs.sh: /' "$OUT/SNAPSHOT"
}

# ---- compare ---------------------------------------------------------------

# show_diff A B: where two differing files first differ, and the head of
# a unified diff (lines cut at 400 characters); for files over 2 MB, 200
# bytes of each around the first differing byte instead of the diff
show_diff() {
    at=$(cmp "$1" "$2" 2>/dev/null | sed -n 's/.* [a-z]* \([0-9]*\), line \([0-9]*\)$/\1 \2/p')
    byte=${at%% *}
    echo "      first difference: byte ${byte:-?}, line ${at##* }"
    sa=$(wc -c <"$1")
    sb=$(wc -c <"$2")
    if [ "$sa" -le 2000000 ] && [ "$sb" -le 2000000 ]; then
        diff -u "$1" "$2" | sed -n '3,22p' | cut -c1-400 | sed 's/^/      /'
        return
    fi
    from=$(( ${byte:-1} > 80 ? ${byte:-1} - 80 : 1 ))
    for f in "$1" "$2"; do
        printf '      %s: ' "$([ "$f" = "$1" ] && echo A || echo B)"
        tail -c +"$from" "$f" | dd bs=200 count=1 2>/dev/null | tr '\n' ' '
        echo
    done
}

# same_plan A B: 1 if plan files A and B (efplan-plan, either version)
# hold the same plan: the same bytes once both are written back in
# version 1 by $EFPLAN validate (a snapshot of a binary that writes
# version 1 against one that writes version 2)
same_plan() {
    grep -q '"format": "efplan-plan"' "$1" && grep -q '"format": "efplan-plan"' "$2" ||
        return 1
    "$DEC" validate --plan "$1" --plan-version 1 --out "$TMPD/pa.json" >/dev/null 2>&1 &&
        "$DEC" validate --plan "$2" --plan-version 1 --out "$TMPD/pb.json" >/dev/null 2>&1 &&
        cmp -s "$TMPD/pa.json" "$TMPD/pb.json"
}

# same_but_hash A B: 1 if A and B differ only in plan file hashes: the
# 8 hex digits of a Slurm job name (efp-HASH-..., "<id of HASH-...>") and
# 16-digit "hash H" (a plan file in another version has other bytes, so
# another hash; plans/ is compared before other/)
same_but_hash() {
    _m='s/\(efp-\|id of \)[0-9a-f]\{8\}/\1<hash>/g; s/hash [0-9a-f]\{16\}/hash <hash>/g'
    sed "$_m" "$1" >"$TMPD/ha" && sed "$_m" "$2" >"$TMPD/hb" &&
        cmp -s "$TMPD/ha" "$TMPD/hb"
}

compare_dirs() {
    [ $# -eq 2 ] || usage
    DEC=${EFPLAN:-build/efplan}
    deq=0
    heq=0
    A=$1
    B=$2
    for d in "$A" "$B"; do
        [ -d "$d" ] || die "$d: not a directory"
        for c in $CATEGORIES; do
            [ -d "$d/$c" ] || die "$d: no $c/ (not a snapshot of outputs.sh)"
        done
    done
    TMPD=$(mktemp -d "${TMPDIR:-/tmp}/efplan-outcmp.XXXXXX")
    trap 'rm -rf "$TMPD"' EXIT
    echo "comparing $A with $B"
    bad=0
    all=0
    alleq=0
    for c in $CATEGORIES; do
        (cd "$A/$c" && find . -type f | sed 's|^\./||') >"$TMPD/la"
        (cd "$B/$c" && find . -type f | sed 's|^\./||') >"$TMPD/lb"
        sort -u "$TMPD/la" "$TMPD/lb" >"$TMPD/l"
        n=0
        eq=0
        : >"$TMPD/report"
        while IFS= read -r f; do
            n=$((n + 1))
            if [ ! -f "$A/$c/$f" ]; then
                echo "  missing in A: $c/$f" >>"$TMPD/report"
            elif [ ! -f "$B/$c/$f" ]; then
                echo "  missing in B: $c/$f" >>"$TMPD/report"
            elif cmp -s "$A/$c/$f" "$B/$c/$f"; then
                eq=$((eq + 1))
            elif [ "$c" = plans ] && same_plan "$A/$c/$f" "$B/$c/$f"; then
                eq=$((eq + 1))
                deq=$((deq + 1))
            elif [ "$deq" -gt 0 ] && same_but_hash "$A/$c/$f" "$B/$c/$f"; then
                eq=$((eq + 1))
                heq=$((heq + 1))
            else
                echo "  differs: $c/$f" >>"$TMPD/report"
                show_diff "$A/$c/$f" "$B/$c/$f" >>"$TMPD/report"
            fi
        done <"$TMPD/l"
        printf '%-8s %5d files, %5d equal, %5d differ or missing\n' \
            "$c" "$n" "$eq" $((n - eq))
        cat "$TMPD/report"
        all=$((all + n))
        alleq=$((alleq + eq))
        [ "$eq" -eq "$n" ] || bad=1
    done
    printf '%-8s %5d files, %5d equal, %5d differ or missing\n' \
        total "$all" "$alleq" $((all - alleq))
    [ "$deq" -eq 0 ] || echo "($deq plan files of those equal hold the same plan in" \
        "different file versions: equal once written back in version 1 by $DEC)"
    [ "$heq" -eq 0 ] || echo "($heq files of those equal differ only in the plan files'" \
        "hashes, which a plan file version changes)"
    if [ "$bad" -eq 0 ]; then
        echo "all equal"
    else
        echo "NOT EQUAL"
    fi
    [ "$bad" -eq 0 ]
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
snapshot) snapshot "$@" ;;
compare) compare_dirs "$@" ;;
*) usage ;;
esac
