#!/bin/sh
# benchmarks/profile_gpu.sh: the GPU run of the profiler, one prepared
# script for a machine with NVIDIA GPUs, a driver, the CUDA toolkit and
# NCCL. Run from the repository root: sh benchmarks/profile_gpu.sh
#
# 1. builds efplan with the GPU side (make HAVE_CUDA=1; fails clearly if
#    nvcc, nccl.h or libnccl are not found);
# 2. efplan profile --probe: versions and GPUs into
#    benchmarks/results/profile_gpu/machine.txt (stops if no GPU: exit 7);
# 3. for every preset, the synthetic step measured on 1, 2, 4, ... GPUs
#    (all visible, or GPUS) at the batch sizes of its A100 table; the
#    curve (measured + modelled cells up to 64 GPUs), the provenance JSON
#    and the log go to benchmarks/results/profile_gpu/MODEL.{csv,json,log};
# 4. regenerates benchmarks/results/profiler.md, whose section 4 then lists
#    the measured it/s beside the published A100 cells.
#
# Environment: GPUS (max GPUs to use, default all), REPEATS (default 3),
# STEPS (steps per repeat, default 5), WARMUP (default 2), INTER_GBPS
# (inter-node bandwidth for the columns past one node, default 1600),
# GPUS_PER_NODE (default 8), MODELS (default: every preset).
# On one GPU the intra-node bandwidth cannot be measured: set INTRA_GBPS
# to fill 2..8-GPU columns from a known figure (else they are refused).
# Expected time: about 2-4 minutes on one H100/H200-class GPU with the
# defaults (gpt2 at batch 256 is the longest: ~200 TFLOP per step).
set -eu
cd "$(dirname "$0")/.."
DIR=benchmarks/results/profile_gpu
GPUS=${GPUS:-64}
REPEATS=${REPEATS:-3}
STEPS=${STEPS:-5}
WARMUP=${WARMUP:-2}
INTER_GBPS=${INTER_GBPS:-1600}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MODELS=${MODELS:-bert deepspeech2 gpt2 inception3 resnet50 resnet50_cifar10 vgg16}

make HAVE_CUDA=1 build/efplan
E=build/efplan
mkdir -p "$DIR"
set +e
$E profile --probe >"$DIR/machine.txt" 2>&1
rc=$?
set -e
cat "$DIR/machine.txt"
if [ $rc -ne 0 ]; then
    echo "profile_gpu: no usable GPU (efplan profile --probe: exit $rc)" >&2
    exit $rc
fi
command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
        --format=csv,noheader >>"$DIR/machine.txt" 2>/dev/null || true
date -u '+measured %Y-%m-%dT%H:%M:%SZ' >>"$DIR/machine.txt"

extra=""
[ -n "${INTRA_GBPS:-}" ] && extra="--intra-node-gbps $INTRA_GBPS"
for m in $MODELS; do
    batches=$(sed -n '2,$p' "inputs/curves/A100/$m.csv" | cut -d, -f1 |
              sed 's/^/--batch /' | tr '\n' ' ')
    echo "== $m ($batches)"
    set +e
    # shellcheck disable=SC2086
    $E profile --model "$m" $batches --gpus "$GPUS" --repeats "$REPEATS" \
        --steps "$STEPS" --warmup "$WARMUP" --inter-node-gbps "$INTER_GBPS" \
        --gpus-per-node "$GPUS_PER_NODE" $extra \
        --out "$DIR/$m.csv" --json "$DIR/$m.json" >"$DIR/$m.log" 2>&1
    rc=$?
    set -e
    cat "$DIR/$m.log"
    [ $rc -eq 0 ] || { echo "profile_gpu: $m failed (exit $rc)" >&2; exit $rc; }
done
sh benchmarks/profiler_fit.sh
