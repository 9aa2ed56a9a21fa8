#!/bin/sh
# End-to-end: moving a store to a changed cluster, efplan serve
# --move-cluster (docs/operator.md, "Moving the store to another
# cluster"). A store made on n2g8 holds "wide" (vgg16, admitted: its
# deadline needs more than one node's 8 GPUs), "small" (admitted, hours
# of slack) and "be" (best-effort). Checks:
# - on n1g8 without --move-cluster the service is refused (exit 2), the
#   message naming both clusters and --move-cluster;
# - with it, on n1g8: the log names the move, the jobs kept, the promises
#   checked again and the one at risk (wide); wide is at risk (show: its
#   reason; its at_risk event), small keeps its promise, every job is
#   still there; a restart on n1g8 needs no flag, and --move-cluster there
#   says there is nothing to move; n2g8 is now the other cluster;
# - a copy of the store moved to n4g8 keeps every promise: nothing at
#   risk, wide planned on more than 8 GPUs.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
cd "$T"
cleanup() { serve_stop; rm -rf "$T"; }
trap cleanup EXIT
new_token ops.tok ops --operator
new_token ann.tok ann
ef() { "$EFPLAN" "$@"; }

serve_start n2g8
export EFPLAN_SERVER="$URL"
ef submit --token-file ann.tok --job '{"id": "wide", "model": "vgg16",
    "batch_size": 64, "iterations": 100000, "deadline": "now+75m"}' \
    >s1.out || { cat s1.out; fail "submit wide"; }
grep -q '^admitted: wide' s1.out || { cat s1.out; fail "wide not admitted"; }
ef submit --token-file ann.tok --job '{"id": "small", "model": "resnet50",
    "batch_size": 64, "iterations": 3000, "deadline": "now+8h"}' \
    >s2.out || { cat s2.out; fail "submit small"; }
grep -q '^admitted: small' s2.out || { cat s2.out; fail "small not admitted"; }
ef submit --token-file ann.tok --job '{"id": "be", "model": "resnet50",
    "batch_size": 64, "iterations": 3000, "deadline": null}' \
    >s3.out || { cat s3.out; fail "submit be"; }
serve_stop
cp db.sqlite big.sqlite

# another cluster without --move-cluster: refused
rc=0
"$EFPLAN" serve --db db.sqlite --cluster n1g8 --curves A100 \
    --listen 127.0.0.1:0 >refused.out 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { cat refused.out; fail "n1g8 without the flag: exit $rc"; }
grep -q 'db.sqlite: its queue is planned on 2 nodes of 8 GPUs, and --cluster n1g8 has 1 of 8 (.*add --move-cluster to move it' \
    refused.out || { cat refused.out; fail "the refusal's message"; }

# moved to a smaller cluster: wide at risk
: >serve.log
serve_start n1g8 --move-cluster
export EFPLAN_SERVER="$URL"
grep -q 'efplan serve: moved the store from 2 node(s) of 8 GPUs to 1 of 8 (--cluster n1g8): 3 job(s) kept, 2 promise(s) checked again, 1 at risk: wide (plan version [0-9]*)$' \
    serve.log || { cat serve.log; fail "the move's log line"; }
ef jobs --all --token-file ops.tok >jobs1.txt || fail "jobs"
[ "$(grep -c '^\(wide\|small\|be\) ' jobs1.txt)" -eq 3 ] ||
    { cat jobs1.txt; fail "not every job kept"; }
grep -q '^wide .* admitted .* at-risk$' jobs1.txt ||
    { cat jobs1.txt; fail "wide not at risk"; }
grep '^small ' jobs1.txt | grep -q 'at-risk' &&
    { cat jobs1.txt; fail "small at risk"; }
ef show wide --token-file ann.tok >wide.txt || fail "show wide"
grep -q '^  at risk      yes: cannot end by its deadline' wide.txt ||
    { cat wide.txt; fail "wide's risk"; }
grep -q '  at_risk  deadline=' wide.txt ||
    { cat wide.txt; fail "wide's at_risk event"; }
ef show small --token-file ann.tok >small.txt || fail "show small"
grep -q 'at risk' small.txt && { cat small.txt; fail "small's risk"; }
serve_stop
# the store is on n1g8 now
: >serve.log
serve_start n1g8 --move-cluster
grep -q 'the store is planned on this cluster already: nothing to move' \
    serve.log || { cat serve.log; fail "a second move"; }
serve_stop
rc=0
"$EFPLAN" serve --db db.sqlite --cluster n2g8 --curves A100 \
    --listen 127.0.0.1:0 >back.out 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'planned on 1 nodes of 8 GPUs' back.out ||
    { cat back.out; fail "back on n2g8 without the flag: exit $rc"; }

# moved to a bigger cluster: every promise kept
mv big.sqlite db.sqlite
rm -f db.sqlite-wal db.sqlite-shm
: >serve.log
serve_start n4g8 --move-cluster
export EFPLAN_SERVER="$URL"
grep -q 'to 4 of 8 (--cluster n4g8): 3 job(s) kept, 2 promise(s) checked again, 0 at risk (plan' \
    serve.log || { cat serve.log; fail "the bigger move's log line"; }
ef jobs --all --token-file ops.tok >jobs2.txt || fail "jobs 2"
grep -q 'at-risk' jobs2.txt && { cat jobs2.txt; fail "at risk on n4g8"; }
grep -q '^wide .* admitted  *1[0-9] ' jobs2.txt ||
    { cat jobs2.txt; fail "wide not planned on more than 8 GPUs"; }
serve_stop
echo "serve_move: ok"
