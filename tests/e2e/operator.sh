#!/bin/sh
# End-to-end: an operator's verbs on efplan serve (docs/operator.md).
# - --nodes takes a Slurm host list ('gpu[01-02]'), on the command line
#   or on a line of a --nodes file; a bad list is exit 3 naming it;
# - node list shows each node's name; node drain/undrain take a number or
#   a name; --reason is stored and shown ("drained by ops: ...") and in
#   the node's event; an unknown node is exit 3 naming the cluster's
#   nodes; a name that cannot be one, or --reason on undrain, exit 2;
# - efplan replan re-plans (an operator's token: a user's is exit 8).
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
cd "$T"
cleanup() { serve_stop; rm -rf "$T"; }
trap cleanup EXIT
new_token ops.tok ops --operator
new_token ann.tok ann

# a bad host list: exit 3, the list and what is wrong
rc=0
"$EFPLAN" serve --db bad.sqlite --cluster n2g4 --curves A100 --backend dry-run \
    --nodes 'gpu[02-01]' --listen 127.0.0.1:0 >bad.out 2>&1 || rc=$?
[ $rc -eq 3 ] || { cat bad.out; fail "a bad host list: exit $rc, expected 3"; }
grep -q '^efplan: error: --nodes (no such file: a host list):1: "gpu\[02-01\]" is not a host list: a range whose first number is above its last' bad.out ||
    { cat bad.out; fail "bad host list message"; }

serve_start n2g4 --backend dry-run --nodes 'gpu[01-02]'
export EFPLAN_SERVER="$URL"
ef() { "$EFPLAN" "$@"; }
ef node list --token-file ops.tok >list.txt || fail "node list"
grep -q '^0     gpu01  up ' list.txt || { cat list.txt; fail "node 0's name"; }
grep -q '^1     gpu02  up ' list.txt || { cat list.txt; fail "node 1's name"; }
ef node drain gpu02 --reason 'DIMM errors' --token-file ops.tok >drain.txt ||
    fail "drain gpu02: $(cat drain.txt)"
grep -qx 'node 1 (gpu02) is drained: what runs there moves' drain.txt ||
    { cat drain.txt; fail "drain's line"; }
ef node list --token-file ops.tok >list2.txt || fail "node list 2"
grep -q '^1     gpu02  drained  20[0-9-]*T[0-9:]*Z  drained by ops: DIMM errors$' list2.txt ||
    { cat list2.txt; fail "the reason in the list"; }
ef node list --json --token-file ops.tok | jq -e \
    '.nodes[1] | .name == "gpu02" and .why == "drained by ops: DIMM errors"' \
    >/dev/null || fail "node list --json"
# by number, again: it already was
ef node drain 1 --token-file ops.tok >again.txt || fail "drain 1"
grep -q "(it already was)" again.txt || { cat again.txt; fail "drain 1 again"; }
rc=0; ef node drain gpu07 --token-file ops.tok >unk.txt 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "unknown node: exit $rc"
grep -q 'HTTP 404: node gpu07: the cluster has nodes 0 to 1, named gpu01 to gpu02' unk.txt ||
    { cat unk.txt; fail "unknown node's message"; }
rc=0; ef node drain 'gpu 1' --token-file ops.tok >bad1.txt 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat bad1.txt; fail "a name with a blank: exit $rc"; }
rc=0; ef node undrain gpu02 --reason x --token-file ops.tok >bad2.txt 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat bad2.txt; fail "--reason on undrain: exit $rc"; }
rc=0; ef node drain gpu01 --token-file ann.tok >bad3.txt 2>&1 || rc=$?
[ $rc -eq 8 ] || { cat bad3.txt; fail "a user's drain: exit $rc"; }
ef node undrain gpu02 --token-file ops.tok >undrain.txt || fail "undrain"
grep -qx 'node 1 (gpu02) is up' undrain.txt || { cat undrain.txt; fail "undrain's line"; }

# efplan replan
ef replan --token-file ops.tok >replan.txt || fail "replan: $(cat replan.txt)"
grep -q '^re-planned: plan v[0-9]* (changed), 0 admitted, 0 at risk$' replan.txt ||
    { cat replan.txt; fail "replan's line"; }
rc=0; ef replan --token-file ann.tok >replan2.txt 2>&1 || rc=$?
[ $rc -eq 8 ] || { cat replan2.txt; fail "a user's replan: exit $rc"; }
rc=0; ef replan now --token-file ops.tok >replan3.txt 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "replan with an argument: exit $rc"
serve_stop

# a --nodes file: one name a line, or a host list on a line
printf '# rack 1\ngpu[01-02]\ngpu09\n' >nodes.txt
rm -rf db.sqlite* # a store of another cluster
new_token ops.tok ops --operator
serve_start n3g4 --backend dry-run --nodes nodes.txt
export EFPLAN_SERVER="$URL"
ef node list --token-file ops.tok >list3.txt || fail "node list 3"
grep -q '^2     gpu09  up ' list3.txt || { cat list3.txt; fail "a --nodes file's names"; }
serve_stop
# sbatch pass-through: other resources merge into efplan's --gres; an
# option and its value in one word is refused with the word to write
"$EFPLAN" plan --jobs "$D/jobs/sample.json" --cluster n1g8 --curves A100 \
    --out p1.json >/dev/null || fail "plan"
"$EFPLAN" apply p1.json --backend dry-run --slots 1 --nodes 'gpu[07]' \
    --sbatch-arg=--gres=nvme:1 --sbatch-arg=--mem=4G >dry.txt 2>&1 ||
    { cat dry.txt; fail "dry run with --sbatch-arg"; }
grep -q 'sbatch --mem=4G .*--nodelist=gpu07 .*--gres=gpu:8,nvme:1 ' dry.txt ||
    { cat dry.txt; fail "--gres=nvme:1 not merged"; }
rc=0
"$EFPLAN" apply p1.json --backend dry-run --sbatch-arg "--mem 4G" >sb.txt 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat sb.txt; fail "--sbatch-arg '--mem 4G': exit $rc"; }
grep -q 'write --sbatch-arg=--mem=4G$' sb.txt || { cat sb.txt; fail "--mem 4G message"; }
rc=0
"$EFPLAN" apply p1.json --backend dry-run --sbatch-arg=--gres=gpu:2 >sg.txt 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat sg.txt; fail "--gres=gpu:2: exit $rc"; }
echo "operator: names, host lists, --reason, replan, sbatch pass-through"
