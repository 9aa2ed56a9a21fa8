#!/bin/sh
# End-to-end: efplan profile on a machine without a GPU.
# - the build without CUDA ($EFPLAN itself when HAVE_CUDA=0, else the
#   build/tests/efplan-nocuda that the Makefile links beside it): exit 6
#   and the documented message, no CUDA library linked, no file written;
# - a build with CUDA on a machine with no driver or GPU: exit 7 and a
#   clear message, no file written (on a machine with a GPU, --probe
#   answers 0 and this part is skipped: benchmarks/profile_gpu.sh is the
#   GPU run);
# - --fit-only on the bundled A100 table: the curve (CSV and curve JSON)
#   reads back through "efplan validate", measured cells are the
#   published ones, modelled cells fill 16..64 GPUs, the provenance says
#   which is which; same bytes on a second run;
# - a table the model cannot follow: modelled cells refused, loudly;
# - usage errors.
. "$(dirname "$0")/lib/common.sh"

run() { # expected-exit name args...: run efplan, keep stdout/stderr
    want=$1; name=$2; shift 2
    set +e
    $V "$EFPLAN" "$@" >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    set -e
    [ "$rc" -eq "$want" ] || { cat "$T/$name.out" "$T/$name.err";
        fail "$name: exit $rc, expected $want"; }
}

# ---- which build is this? -------------------------------------------------
set +e
$V "$EFPLAN" profile --probe >"$T/probe.out" 2>"$T/probe.err"
probe=$?
set -e
BUILD_DIR=$(dirname "$EFPLAN")
case $probe in
6) NOCUDA=$EFPLAN ;;
0|7) NOCUDA=$BUILD_DIR/tests/efplan-nocuda
     [ -x "$NOCUDA" ] || fail "CUDA build without $NOCUDA" ;;
*) cat "$T/probe.err"; fail "profile --probe: exit $probe" ;;
esac

# ---- the build without CUDA -------------------------------------------------
NO_CUDA_MSG='efplan: error: efplan was built without CUDA: the GPU profiler needs the CUDA toolkit (nvcc) and NCCL at build time (rebuild with make HAVE_CUDA=1; see README, "profile")'
for args in "--probe" "--model resnet50 --batch 64 --out $T/nc --json $T/nc.json"; do
    set +e
    # shellcheck disable=SC2086
    $V "$NOCUDA" profile $args >"$T/nc.out" 2>"$T/nc.err"
    rc=$?
    set -e
    [ $rc -eq 6 ] || fail "no-CUDA build, profile $args: exit $rc, expected 6"
    [ "$(cat "$T/nc.err")" = "$NO_CUDA_MSG" ] || { cat "$T/nc.err";
        fail "no-CUDA build: wrong message"; }
done
[ ! -e "$T/nc" ] && [ ! -e "$T/nc.json" ] || fail "no-CUDA build wrote files"
if command -v readelf >/dev/null 2>&1; then
    readelf -d "$NOCUDA" | grep -q 'NEEDED.*\(cudart\|nccl\)' &&
        fail "the no-CUDA build links a CUDA library"
fi

# ---- a CUDA build on a machine with no driver or GPU -------------------------
if [ $probe -eq 7 ]; then
    grep -q '^CUDA runtime [0-9]*, NCCL [0-9.]*, driver [0-9]*$' "$T/probe.out" ||
        fail "probe: no version line"
    grep -q '^efplan: error: no \(CUDA driver\|usable GPU\)' "$T/probe.err" ||
        { cat "$T/probe.err"; fail "probe: unclear message"; }
    run 7 nogpu profile --model bert --batch 64 --out "$T/ng" --json "$T/ng.json"
    grep -q '^efplan: error: no \(CUDA driver\|usable GPU\)' "$T/nogpu.err" ||
        fail "no GPU: unclear message"
    [ ! -e "$T/ng" ] && [ ! -e "$T/ng.json" ] || fail "no GPU: files written"
fi

# ---- fit to the published A100 table ------------------------------------------
mkdir "$T/prov"
run 0 fit profile --fit-only --curves A100 --model resnet50 --fit-gpus 8 \
    --inter-node-gbps 1600 --out "$T/curves" --json "$T/prov/resnet50.json"
grep -q '^in-sample  12 cells: median error [0-9.]*%, worst [0-9.]*%$' \
    "$T/fit.out" || { cat "$T/fit.out"; fail "fit: no in-sample line"; }
grep -q '^predicted  9 cells: ' "$T/fit.out" || fail "fit: no predicted line"
grep -q '^fill     accepted$' "$T/fit.out" || fail "fit: not accepted"
[ ! -s "$T/fit.err" ] || { cat "$T/fit.err"; fail "fit: unexpected stderr"; }
C=$T/curves/resnet50.csv
[ "$(head -1 "$C")" = "global_batch_size,1,2,4,8,16,32,64" ] || fail "csv header"
# measured cells are the published ones (9 significant digits)
pub=$(sed -n 2p "$EFPLAN_DATA/curves/A100/resnet50.csv" | cut -d, -f2-5)
got=$(sed -n 2p "$C" | cut -d, -f2-5)
[ "$(printf '%s\n' "$pub" | awk -F, '{printf "%.9g,%.9g,%.9g,%.9g", $1,$2,$3,$4}')" = "$got" ] ||
    fail "measured cells differ from the published: $got vs $pub"
# every column filled
awk -F, 'NR > 1 { for (i = 2; i <= 8; i++) if ($i == "" || $i <= 0) exit 1 }' "$C" ||
    fail "empty cells in $(cat "$C")"
run 0 val validate --curves "$T/curves"
grep -q 'resnet50' "$T/val.out" || fail "validate does not list resnet50"
g16='"gpus": 16,'
grep -A3 "$g16" "$T/prov/resnet50.json" | grep -q '"source": "modelled"' ||
    fail "provenance: 16 GPUs not modelled"
grep -c '"source": "measured"' "$T/prov/resnet50.json" | grep -qx 12 ||
    fail "provenance: not 12 measured cells"
grep -q '"format": "efplan-profile"' "$T/prov/resnet50.json" || fail "format"
grep -q '"origin": "fit to .*A100/resnet50.csv"' "$T/prov/resnet50.json" ||
    fail "origin"
# the curve JSON reads back too; the same bytes a second time
run 5 nodir profile --fit-only --curves A100 --model resnet50 \
    --out "$T/cj/resnet50.json"
grep -q "^efplan: error: $T/cj/resnet50.json" "$T/nodir.err" || fail "nodir"
mkdir "$T/cj"
run 0 fitj profile --fit-only --curves A100 --model resnet50 --fit-gpus 8 \
    --inter-node-gbps 1600 --out "$T/cj/resnet50.json" --json "$T/prov/again.json"
run 0 valj validate --curves "$T/cj"
cmp -s "$T/prov/resnet50.json" "$T/prov/again.json" || fail "provenance differs"
# every preset fits its table within the threshold
for m in bert deepspeech2 gpt2 inception3 resnet50 resnet50_cifar10 vgg16; do
    run 0 "all-$m" profile --fit-only --curves A100 --model "$m"
    grep -q '^fit      [0-9]* cells' "$T/all-$m.out" || fail "$m: no fit line"
done

# ---- a table the model cannot follow: refused, loudly -------------------------
mkdir "$T/zig"
printf 'global_batch_size,1,2,4,8\n64,10,30,5,40\n' > "$T/zig/zig.csv"
run 0 zig profile --fit-only --curves "$T/zig" --model zig --params 1e8 \
    --flops-per-sample 1e9 --max-gpus 16 --inter-node-gbps 100 --out "$T/zo" \
    --json "$T/zig.json"
grep -q '^efplan: warning: 1 modelled cell refused (left empty): the fitted model is off by up to [0-9.]*% on the measured cells (threshold 10.0%)$' \
    "$T/zig.err" || { cat "$T/zig.err"; fail "zig: no warning"; }
[ "$(sed -n 2p "$T/zo/zig.csv")" = "64,10,30,5,40," ] || fail "zig: cell filled"
grep -q '"accepted": false' "$T/zig.json" || fail "zig: accepted in json"
grep -q '"source": "refused"' "$T/zig.json" || fail "zig: no refused cell"

# ---- usage errors ----------------------------------------------------------------
run 2 u1 profile --fit-only --curves A100 --model resnet5
grep -q 'did you mean "resnet50"' "$T/u1.err" || fail "u1: no suggestion"
run 2 u2 profile --model resnet50 --batch 64 --gpus-per-node 3
run 2 u3 profile --model resnet50
grep -q -- '--batch is required' "$T/u3.err" || fail "u3: message"
run 2 u4 profile --fit-only --curves A100 --model bert --out "$T/curves" \
    --json "$T/curves/bert.json"
grep -q 'outside the curve directory' "$T/u4.err" || fail "u4: message"
run 2 u5 profile --fit-only --model bert
run 2 u6 profile --model resnet50 --batch 0
run 3 u7 profile --fit-only --curves "$T/nowhere" --model bert
run 3 u8 profile --fit-only --curves A100 --model nomodel --params 1e6 \
    --flops-per-sample 1e9
grep -q 'no curve for model "nomodel"' "$T/u8.err" || fail "u8: message"
echo "profile e2e ok"
