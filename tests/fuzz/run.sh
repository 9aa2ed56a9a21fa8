#!/bin/sh
# tests/fuzz/run.sh BINARY [SECONDS [READER]]: fuzz the input readers.
#
# Seeds a work corpus (gitignored; kept between runs so coverage
# accumulates) from the committed seeds in tests/fuzz/corpus/READER/ (one
# folder per reader: queue_csv, queue_json, curve_csv, curve_json,
# cluster_csv, cluster_json, plan_json; the first byte of each seed is the harness's
# selector, see fuzz_inputs.c), runs the libFuzzer BINARY for SECONDS
# (default 60) with the dictionary tests/fuzz/inputs.dict, and reports
# how long it ran, how many inputs it executed, the corpus size and what
# it found.
#   without READER: every reader (the first byte chooses), seeds from
#     every folder, work corpus tests/fuzz/corpus-work/corpus/;
#   with READER: that reader only (EFPLAN_FUZZ_READER), its seeds, work
#     corpus tests/fuzz/corpus-work/READER/.
# Crash, leak and timeout inputs are kept in tests/fuzz/corpus-work/
# findings/; the script exits 1 when the fuzzer found something (or
# failed to run), 0 otherwise.
#
# Environment: FUZZ_FORK=N runs N fuzzing processes (-fork=N) instead of
# one; FUZZ_ARGS adds libFuzzer options (e.g. -max_len=4096).
# To replay a finding: BINARY tests/fuzz/corpus-work/findings/crash-...
# (with EFPLAN_FUZZ_READER=READER if it came from a one-reader run)
set -u
if [ $# -lt 1 ]; then
    echo "usage: $0 BINARY [SECONDS [READER]]" >&2
    exit 2
fi
BIN=$1
SECS=${2:-60}
READER=${3:-}
case $SECS in
'' | *[!0-9]*) echo "$0: SECONDS must be a whole number, got \"$SECS\"" >&2
    exit 2 ;;
esac
DIR=$(cd "$(dirname "$0")" && pwd)
WORK=$DIR/corpus-work
FINDINGS=$WORK/findings
if [ -n "$READER" ]; then
    [ -d "$DIR/corpus/$READER" ] || {
        echo "$0: no reader \"$READER\" (expected one of: $(ls "$DIR/corpus" | tr '\n' ' '))" >&2
        exit 2; }
    CORPUS=$WORK/$READER
    SEEDS=$DIR/corpus/$READER
    EFPLAN_FUZZ_READER=$READER
    export EFPLAN_FUZZ_READER
else
    CORPUS=$WORK/corpus
    SEEDS=$DIR/corpus/*
    unset EFPLAN_FUZZ_READER
fi
if [ ! -x "$BIN" ]; then
    echo "$0: no fuzz binary at $BIN (build it with: make fuzz)" >&2
    exit 2
fi
mkdir -p "$CORPUS" "$FINDINGS" || exit 2
# shellcheck disable=SC2086
for d in $SEEDS; do cp "$d"/* "$CORPUS"/ || exit 2; done
before=$(ls "$FINDINGS" | wc -l)
log=$WORK/last-run${READER:+-$READER}.log
fork=""
[ -n "${FUZZ_FORK:-}" ] && fork="-fork=$FUZZ_FORK -ignore_crashes=0"
start=$(date +%s)
echo "fuzz: $BIN for ${SECS}s, ${READER:-every reader}, corpus $CORPUS ($(ls "$CORPUS" | wc -l) inputs)"
# shellcheck disable=SC2086
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$BIN" -max_total_time="$SECS" -print_final_stats=1 -max_len=8192 \
    -timeout=10 -rss_limit_mb=2048 -dict="$DIR/inputs.dict" \
    -artifact_prefix="$FINDINGS/" $fork ${FUZZ_ARGS:-} "$CORPUS" \
    >"$log" 2>&1
rc=$?
end=$(date +%s)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*DONE.*/\1/p' "$log" | tail -1)
[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -1)
after=$(ls "$FINDINGS" | wc -l)
# The fuzzer's own corpus (units/size) and coverage, from its last status.
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
corp=$(echo "$last" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
echo "fuzz: ${READER:-every reader}: ran $((end - start))s (exit $rc), ${execs:-?} executions," \
    "coverage ${cov:-?} edges, corpus ${corp:-?} (units/size);" \
    "$(ls "$CORPUS" | wc -l) files in $CORPUS"
echo "fuzz: log in $log"
if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
    echo "fuzz: FOUND something:"
    grep -E '^==[0-9]+==ERROR|runtime error|SUMMARY|deadly signal|Test unit written' "$log" | head -20
    ls -t "$FINDINGS" | head -5 | sed "s|^|  $FINDINGS/|"
    exit 1
fi
echo "fuzz: no findings"
exit 0
