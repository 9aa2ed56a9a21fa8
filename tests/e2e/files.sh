#!/bin/sh
# End-to-end: what efplan reads and writes are regular files.
# - inputs: a FIFO as --jobs, --cluster or a file of a --curves directory
#   is refused at once (exit 3, naming the file), never waited on; every
#   run is bounded by timeout, so a regression fails instead of hanging.
# - outputs: a character device (mknod; skipped where that is not
#   allowed), a directory, or a link to either, as --out is refused (exit
#   5, naming it) and left as it was; a symbolic link to a regular file is
#   written through (the link stays, its target gets the bytes) and so is
#   a dangling one (its target is created); no temporary file is left.
# - --out - sends plan's and simulate's JSON to standard output (the same
#   bytes as the file) and the summary to standard error; an output that
#   --svg - prints the chart; two outputs on standard output (--out -
#   --svg -) are a usage error (exit 2).
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

# ---- outputs ----------------------------------------------------------------

cp "$D/jobs/sample.json" q.json
PLAN="plan --jobs q.json --cluster n4g8 --curves A100"
$V "$EFPLAN" $PLAN --out ref.json >ref.out || fail "plan --out ref.json failed"
# a plan one directory down records the queue from there (README: Files
# efplan reads and writes): the reference of the plans written into out/
mkdir down
$V "$EFPLAN" $PLAN --out down/ref.json >/dev/null ||
    fail "plan --out down/ref.json failed"
grep -qF '"jobs_file": "q.json",' ref.json || fail "ref.json: jobs_file"
grep -qF '"jobs_file": "../q.json",' down/ref.json ||
    fail "down/ref.json: jobs_file: $(grep -o '"jobs_file": [^,]*' down/ref.json)"

# out_refused NAME WHAT: plan --out NAME exits 5 naming NAME and WHAT
out_refused() {
    rc=0
    $V "$EFPLAN" $PLAN --out "$1" >o.out 2>o.err || rc=$?
    [ "$rc" = 5 ] || fail "plan --out $1: exit $rc (expected 5)"
    grep -qF "efplan: error: $1" o.err || fail "plan --out $1: message: $(cat o.err)"
    grep -qF "$2 (expected a regular file" o.err ||
        fail "plan --out $1: message: $(cat o.err)"
}

# no temporary file anywhere: the names in the directory are exactly these
only() { # dir names...
    dir=$1
    shift
    want=$(printf '%s\n' "$@" | sort)
    got=$(ls -A "$dir" | sort)
    [ "$got" = "$want" ] || fail "$dir holds: $(echo $got) (expected $(echo $want))"
}

mkdir out
if mknod out/full c 1 7 2>/dev/null; then
    out_refused out/full "is a character device"
    [ -c out/full ] || fail "plan --out out/full replaced the device"
    ln -s full out/to-full
    out_refused out/to-full "(the link's target out/full): is a character device"
    [ -L out/to-full ] && [ -c out/full ] || fail "the link to the device changed"
    rm out/to-full out/full
else
    echo "files: mknod not permitted here: character device case skipped"
fi
mkdir out/dir
out_refused out/dir "is a directory"
[ -d out/dir ] || fail "plan --out out/dir removed the directory"
rmdir out/dir
only out

# a link to a regular file (relative, into another directory): written
# through, the link kept
mkdir real
echo old > real/plan.json
chmod 640 real/plan.json
ln -s ../real/plan.json out/plan.json
$V "$EFPLAN" $PLAN --out out/plan.json >o.out 2>o.err ||
    fail "plan --out LINK failed: $(cat o.err)"
[ -L out/plan.json ] || fail "plan --out LINK replaced the link"
[ "$(readlink out/plan.json)" = ../real/plan.json ] || fail "the link changed"
cmp -s real/plan.json down/ref.json || fail "the link's target is not the plan"
[ "$(stat -c %a real/plan.json)" = 640 ] || fail "the target lost its mode"
only out plan.json
only real plan.json

# a dangling link: its target is created
ln -s fresh.json out/new.json
$V "$EFPLAN" $PLAN --out out/new.json >o.out 2>o.err ||
    fail "plan --out DANGLING failed: $(cat o.err)"
[ -L out/new.json ] && [ "$(readlink out/new.json)" = fresh.json ] ||
    fail "plan --out DANGLING replaced the link"
[ -f out/fresh.json ] && cmp -s out/fresh.json down/ref.json ||
    fail "the dangling link's target was not written"
only out fresh.json new.json plan.json

# --out -: the plan on standard output, the summary on standard error
$V "$EFPLAN" $PLAN --out - >o.json 2>o.err || fail "plan --out - failed"
cmp -s o.json ref.json || fail "plan --out - did not print the plan file"
grep -q '^plan     32 jobs on n4g8' o.err || fail "plan --out -: no summary on stderr"
grep -v '^wrote ' ref.out | cmp -s - o.err || fail "plan --out -: stderr is not the summary"
[ ! -e ./- ] || fail "plan --out - wrote a file named -"
TR="simulate --trace $D/traces/itp/cluster10.csv --cluster n16g8 --curves A100 --policy ef"
$V "$EFPLAN" $TR --out sim.json >sim.out || fail "simulate --out sim.json failed"
$V "$EFPLAN" $TR --out - >o.json 2>o.err || fail "simulate --out - failed"
# the result holds the run's wall seconds: compare without them
grep -v 'wall_seconds\|point_us' sim.json >a.txt
grep -v 'wall_seconds\|point_us' o.json >b.txt
cmp -s a.txt b.txt || fail "simulate --out - did not print the result"
grep -q '^simulate ' o.err || fail "simulate --out -: no summary on stderr"
$V "$EFPLAN" $PLAN --svg chart.svg >/dev/null || fail "plan --svg failed"
$V "$EFPLAN" $PLAN --svg - >o.svg 2>o.err || fail "plan --svg - failed"
cmp -s chart.svg o.svg || fail "plan --svg - did not print the chart"
grep -q 'admitted' o.err || fail "plan --svg -: no summary on stderr"
[ ! -e ./- ] || fail "plan --svg - wrote a file named -"
# standard output holds one output: two of them on it is a usage error
rc=0
$V "$EFPLAN" $PLAN --out - --svg - >o.out 2>o.err || rc=$?
[ "$rc" = 2 ] || fail "plan --out - --svg -: exit $rc (expected 2)"
grep -qF -- '--out and --svg - both write standard output' o.err ||
    fail "plan --out - --svg -: message: $(cat o.err)"
[ ! -s o.out ] || fail "plan --out - --svg -: wrote to standard output"

echo "files: ok"
