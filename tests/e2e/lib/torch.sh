# tests/e2e/lib/torch.sh: what the PyTorch tests share, sourced after
# lib/common.sh: Debian's interpreter and its torch, the example.
#   PY        /usr/bin/python3 (Debian's python3-torch is for it only)
#   TRAIN     examples/pytorch/train.py
#   TORCHRUN  /usr/bin/torchrun, or empty when Debian's torch lacks it
# Without torch the test is skipped (exit 77, "skipped: ...": tests/run.sh
# reports SKIP), unless
# EFPLAN_TORCH_TEST=1 (make test-torch), where that is a failure.
: "${EFPLAN_ROOT:?}"
PY=/usr/bin/python3
TRAIN=$EFPLAN_ROOT/examples/pytorch/train.py
if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
    if [ "${EFPLAN_TORCH_TEST:-}" = 1 ]; then
        fail "EFPLAN_TORCH_TEST=1 but $PY cannot import torch (install" \
            "python3-torch: make test-torch does)"
    fi
    echo "skipped: $PY cannot import torch (make test-torch installs" \
        "python3-torch and runs this test)"
    exit 77
fi
TORCHRUN=/usr/bin/torchrun
[ -x $TORCHRUN ] || TORCHRUN=
