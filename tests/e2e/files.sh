#!/bin/sh
# End-to-end: what efplan reads and writes are regular files.
# - inputs: a FIFO as --jobs, --cluster or a file of a --curves directory
#   is refused at once (exit 3, naming the file), never waited on; every
#   run is bounded by timeout, so a regression fails instead of hanging.
. "$(dirname "$0")/lib/common.sh"
cd "$T"

# ---- inputs: FIFOs ---------------------------------------------------------

mkfifo jobs.fifo
rc=0
timeout 20 $V "$EFPLAN" validate --jobs jobs.fifo >fifo.out 2>fifo.err ||
    rc=$?
[ "$rc" = 3 ] || fail "validate --jobs FIFO: exit $rc (expected 3; 124 = it blocked)"
grep -qxF 'efplan: error: jobs.fifo: is a FIFO (expected a regular file)' \
    fifo.err || fail "validate --jobs FIFO: message: $(cat fifo.err)"

mkfifo cluster.csv
rc=0
timeout 20 $V "$EFPLAN" validate --cluster cluster.csv >fifo.out \
    2>fifo.err || rc=$?
[ "$rc" = 3 ] || fail "validate --cluster FIFO: exit $rc (expected 3)"
grep -qxF 'efplan: error: cluster.csv: is a FIFO (expected a regular file)' \
    fifo.err || fail "validate --cluster FIFO: message: $(cat fifo.err)"

mkdir curves
cp "$D/curves/A100/bert.csv" curves/
mkfifo curves/gpt2.csv
rc=0
timeout 20 $V "$EFPLAN" validate --curves curves >fifo.out 2>fifo.err ||
    rc=$?
[ "$rc" = 3 ] || fail "validate --curves DIR with a FIFO: exit $rc (expected 3)"
grep -qxF 'efplan: error: curves/gpt2.csv: is a FIFO (expected a regular file)' \
    fifo.err || fail "validate --curves FIFO: message: $(cat fifo.err)"

echo "files: ok"
