#!/bin/sh
# tests/e2e/validate_traces.sh: every bundled input must validate, and the
# readers must see exactly what is in it. Runs "$EFPLAN validate" on each
# trace (with its curve set and cluster), on inputs/jobs/sample.json, on
# every cluster spec and on each curve set alone, and checks exit 0, the
# "ok: inputs are valid" line and the counts printed.
#
# The expected counts were taken from the files themselves (one job per
# non-header line; the generated trace marks none best-effort) when this
# test was written; a reader that drops or invents rows fails here.
#
# Environment: EFPLAN, EFPLAN_DATA, VALGRIND (see tests/run.sh).
set -u
LC_ALL=C
export LC_ALL
ROOT=${EFPLAN_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
EFPLAN=${EFPLAN:-$ROOT/build/efplan}
EFPLAN_DATA=${EFPLAN_DATA:-$ROOT/inputs}
export EFPLAN_DATA
VALGRIND=${VALGRIND:-}
D=$EFPLAN_DATA

out=$(mktemp "${TMPDIR:-/tmp}/efplan-traces.XXXXXX") || exit 1
err=$out.err
trap 'rm -f "$out" "$err"' EXIT

pass=0
fail=0

# check NAME WANT... -- ARGS...: run validate with ARGS; every WANT line
# must appear in stdout exactly (as a whole line).
check() {
    name=$1
    shift
    wants=""
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        wants="$wants$1
"
        shift
    done
    shift
    $VALGRIND "$EFPLAN" validate "$@" >"$out" 2>"$err"
    rc=$?
    why=""
    if [ "$rc" -ne 0 ]; then
        why="exit code $rc (expected 0)"
    elif [ -s "$err" ]; then
        why="unexpected stderr"
    elif ! grep -qx 'ok: inputs are valid' "$out"; then
        why="no \"ok: inputs are valid\" line"
    else
        printf '%s' "$wants" >"$err.want"
        while IFS= read -r w; do
            if ! grep -qxF -- "$w" "$out"; then
                why="stdout lacks the line \"$w\""
                break
            fi
        done <"$err.want"
        rm -f "$err.want"
    fi
    if [ -z "$why" ]; then
        pass=$((pass + 1))
        return
    fi
    fail=$((fail + 1))
    echo "FAIL $name: $why"
    echo "  command: efplan validate $*"
    sed 's/^/  stderr| /' "$err" | head -10
    grep -E '^(cluster|curves|jobs) |^ok' "$out" | sed 's/^/  stdout| /'
}

# trace DIR/FILE JOBS: a trace with its curve set and cluster.
trace() {
    f=$1
    n=$2
    case $f in
    */elasticVpollux_e.csv) curves=T4 cl=n16g4 ;;
    *) curves=A100 cl=n128g8 ;;
    esac
    check "traces/$f" \
        "jobs     $D/traces/$f: $n jobs ($n with a deadline, 0 best-effort)" \
        -- --jobs "$D/traces/$f" --curves "$curves" --cluster "$cl"
}

trace artifact/elasticVpollux_e.csv 195
trace artifact/philly_103959.csv 876
trace generated/fig9_1000job_1500lam.csv 1000
trace itp/195job.csv 195
trace itp/cluster01.csv 1595
trace itp/cluster05.csv 3629
trace itp/cluster06.csv 2396
trace itp/cluster08.csv 13047
trace itp/cluster09.csv 11134
trace itp/cluster10.csv 260

# A trace added to inputs/traces/ must be added above too.
for f in "$D"/traces/*/*.csv; do
    rel=${f#"$D"/traces/}
    if ! grep -q "^trace $rel " "$0"; then
        fail=$((fail + 1))
        echo "FAIL traces/$rel: bundled trace has no expected job count in $0"
    fi
done

check jobs/sample.json \
    "jobs     $D/jobs/sample.json: 32 jobs (28 with a deadline, 4 best-effort)" \
    -- --jobs "$D/jobs/sample.json" --curves A100 --cluster n2g8

# cluster FILE LINE: a bundled cluster spec and the summary it must give.
cluster() {
    check "clusters/$1" "$2" -- --cluster "$D/clusters/$1"
}
cluster n128g8.csv "cluster  n128g8: 128 nodes x 8 GPUs = 1024 GPUs"
cluster n160g8.csv "cluster  n160g8: 160 nodes x 8 GPUs = 1280 GPUs"
cluster n16g4.csv "cluster  n16g4: 16 nodes x 4 GPUs = 64 GPUs"
cluster n16g8.csv "cluster  n16g8: 16 nodes x 8 GPUs = 128 GPUs"
cluster n1g1.csv "cluster  n1g1: 1 node x 1 GPUs = 1 GPUs"
# n1g2.csv holds num_node_p_switch=2, num_gpu_p_node=1: 2 nodes of 1 GPU,
# whatever its name says. The reader must report what the file holds.
cluster n1g2.csv "cluster  n2g1: 2 nodes x 1 GPUs = 2 GPUs"
cluster n1g4.csv "cluster  n1g4: 1 node x 4 GPUs = 4 GPUs"
cluster n1g8.csv "cluster  n1g8: 1 node x 8 GPUs = 8 GPUs"
cluster n256g8.csv "cluster  n256g8: 256 nodes x 8 GPUs = 2048 GPUs"
cluster n2g2.csv "cluster  n2g2: 2 nodes x 2 GPUs = 4 GPUs"
cluster n32g4.csv "cluster  n32g4: 32 nodes x 4 GPUs = 128 GPUs"
cluster n32g8.csv "cluster  n32g8: 32 nodes x 8 GPUs = 256 GPUs"
cluster n48g8.csv "cluster  n48g8: 48 nodes x 8 GPUs = 384 GPUs"
cluster n4g8.csv "cluster  n4g8: 4 nodes x 8 GPUs = 32 GPUs"
cluster n64g8.csv "cluster  n64g8: 64 nodes x 8 GPUs = 512 GPUs"
cluster n8g8.csv "cluster  n8g8: 8 nodes x 8 GPUs = 64 GPUs"
for f in "$D"/clusters/*.csv; do
    if ! grep -q "^cluster ${f##*/} " "$0"; then
        fail=$((fail + 1))
        echo "FAIL clusters/${f##*/}: bundled cluster has no expected line in $0"
    fi
done

# Curve sets alone, by bundled name and by path.
check curves/A100 "curves   $D/curves/A100: 7 models, 17 batch sizes" \
    -- --curves A100
check curves/T4 "curves   $D/curves/T4: 6 models, 9 batch sizes" \
    -- --curves T4
check curves/A100-path "curves   $D/curves/A100: 7 models, 17 batch sizes" \
    -- --curves "$D/curves/A100"

echo "bundled inputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
