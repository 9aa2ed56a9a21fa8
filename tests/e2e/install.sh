#!/bin/sh
# End-to-end: make install into a temporary prefix, then run from there.
# - `make install PREFIX=P` (nothing rebuilt: -o the binary) puts
#   bin/efplan, share/efplan/inputs, share/man/man1/efplan.1 and
#   share/bash-completion/completions/efplan and the systemd units
#   (lib/systemd/system: efplan nightly's service, timer and kick,
#   efplan serve's service, checked by systemd-analyze verify where it
#   exists) under P;
# - the prefix moved elsewhere still finds its bundled inputs beside its
#   executable (EFPLAN_DATA unset): --help names them, --curves A100
#   reads them, a plan of the bundled sample queue is made;
# - efplan(1) renders (man -l, when man is installed) with its sections
#   and every command's help text;
# - the bash completion completes `efplan pl` and `efplan plan --cl`,
#   and holds every long option of the parsers' tables;
# - a plan made in one directory records its jobs file relative to
#   itself: apply (dry-run and a real local apply of the sample's stand-in
#   jobs), validate --plan --out and submit work from another directory;
#   a plan that records a name relative to where it was made (as older
#   efplan wrote, and --out - still does) works from there only, and
#   elsewhere says what to do (exit 3);
# - make uninstall removes what install put there.
. "$(dirname "$0")/lib/common.sh"
ROOT=${EFPLAN_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=$(cd "$(dirname "$EFPLAN")" && pwd)
EFPLAN=$BUILD/efplan
unset EFPLAN_DATA
cd "$T"

make -C "$ROOT" --no-print-directory -o "$EFPLAN" install BUILD="$BUILD" \
    PREFIX="$T/prefix" >make.out 2>&1 || {
    cat make.out; fail "make install failed"; }
for f in bin/efplan share/efplan/inputs/curves/A100/resnet50.csv \
         share/efplan/inputs/jobs/sample.json share/man/man1/efplan.1 \
         share/efplan/examples/pytorch/train.py \
         share/bash-completion/completions/efplan; do
    [ -f "$T/prefix/$f" ] || fail "make install: no $f"
done
[ -x "$T/prefix/bin/efplan" ] || fail "make install: bin/efplan not executable"
cmp -s "$EFPLAN" "$T/prefix/bin/efplan" || fail "bin/efplan is not the built one"
# the systemd units: the installed efplan's path in them, and valid for
# systemd-analyze verify where it exists
U=$T/prefix/lib/systemd/system
for u in efplan-nightly.service efplan-nightly.timer efplan-nightly-kick.service \
         efplan-serve.service; do
    [ -f "$U/$u" ] || fail "make install: no lib/systemd/system/$u"
done
grep -qxF "ExecStart=$T/prefix/bin/efplan nightly --queue \${EFPLAN_QUEUE} --state \${EFPLAN_STATE} --cluster \${EFPLAN_CLUSTER} --curves \${EFPLAN_CURVES} \$EFPLAN_NIGHTLY_ARGS" \
    "$U/efplan-nightly.service" || fail "efplan-nightly.service: $(grep ExecStart "$U/efplan-nightly.service")"
grep -q '@[A-Z]*@' "$U"/* && fail "a unit keeps a placeholder: $(grep '@[A-Z]*@' "$U"/*)"
if command -v systemd-analyze >/dev/null 2>&1; then
    (cd "$U" && systemd-analyze verify --man=no ./efplan-nightly.service \
        ./efplan-nightly.timer ./efplan-nightly-kick.service \
        ./efplan-serve.service) >verify.out 2>&1 ||
        { cat verify.out; fail "systemd-analyze verify failed"; }
else
    echo "install: systemd-analyze is not installed: the units not verified"
fi

# ---- the prefix moved ------------------------------------------------------

mv "$T/prefix" "$T/moved"
P=$(cd "$T/moved" && pwd -P)
E=$P/bin/efplan
mkdir "$T/elsewhere"
cd "$T/elsewhere"
$E --help >help.out || fail "efplan --help failed"
grep -qxF "Bundled inputs: $P/share/efplan/inputs (found beside the executable)" \
    help.out || fail "--help: $(grep 'Bundled' help.out)"
$E validate --curves A100 >v.out || fail "validate --curves A100 failed"
grep -qF "curves   $P/share/efplan/inputs/curves/A100: 7 models" v.out ||
    fail "validate --curves A100 read: $(grep '^curves' v.out)"
$E plan --jobs "$P/share/efplan/inputs/jobs/sample.json" --curves A100 \
    --cluster n4g8 --out p.json >plan.out || fail "plan from the moved prefix failed"
grep -q '^plan     32 jobs on n4g8' plan.out || fail "plan: $(head -1 plan.out)"
EFPLAN_DATA=/nowhere $E --help | grep -qxF 'Bundled inputs: /nowhere ($EFPLAN_DATA)' ||
    fail "--help with EFPLAN_DATA: $(EFPLAN_DATA=/nowhere $E --help | tail -1)"

# ---- the manual page -------------------------------------------------------

MAN=$P/share/man/man1/efplan.1
cmp -s "$MAN" "$BUILD/efplan.1" || fail "efplan.1 is not the built one"
$E --man | cmp -s - "$MAN" || fail "efplan.1 is not what efplan --man writes"
if command -v man >/dev/null 2>&1; then
    MANWIDTH=100 MANPAGER=cat man -l "$MAN" >man.out 2>man.err ||
        fail "man -l efplan.1: $(cat man.err)"
    for s in NAME SYNOPSIS DESCRIPTION COMMANDS EXAMPLES 'EXIT STATUS' \
             ENVIRONMENT FILES; do
        grep -qx "$s" man.out || fail "efplan(1) has no $s section"
    done
    # every command, with the first line of its help
    for c in $($E --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 {print $1}'); do
        grep -qx "   efplan $c" man.out || fail "efplan(1): no command $c"
        first=$($E help "$c" | head -1 | sed 's/  */ /g')
        sed 's/  */ /g' man.out | grep -qF "$first" ||
            fail "efplan(1): no help of $c ($first)"
    done
else
    echo "install: man is not installed: the page's rendering not checked"
fi
if command -v lexgrog >/dev/null 2>&1; then # what apropos and whatis read
    lexgrog "$MAN" | grep -qF '"efplan - deadline-aware planner' ||
        fail "lexgrog: $(lexgrog "$MAN")"
fi
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$MAN" 2>groff.err || fail "groff failed"
    [ ! -s groff.err ] || fail "groff warns: $(head -3 groff.err)"
fi

# every exit code cli.h defines is in --help and in EXIT STATUS
codes=$(grep -ho '^#define EXIT_[A-Z_]* *[0-9]*' "$ROOT"/cli/cli.h |
        awk '{print $3}' | sort -un)
$E --help | sed -n '/^Exit codes:/,/^Bundled/p' | tr '\n' ' ' >codes.txt
for c in $codes; do
    grep -q "[ :]$c [a-z]" codes.txt || fail "efplan --help: no exit code $c"
    grep -q "^\.B $c\$" "$MAN" || fail "efplan(1) EXIT STATUS: no code $c"
done

# ---- bash completion ---------------------------------------------------------

COMP=$P/share/bash-completion/completions/efplan
if command -v bash >/dev/null 2>&1; then
    # complete WORDS...: COMPREPLY for the last word
    complete_() {
        bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
                 _efplan; echo "${COMPREPLY[*]}"' complete "$COMP" "$@"
    }
    [ "$(complete_ efplan pl)" = plan ] ||
        fail "efplan pl<TAB>: $(complete_ efplan pl)"
    [ "$(complete_ efplan plan --cl)" = --cluster ] ||
        fail "efplan plan --cl<TAB>: $(complete_ efplan plan --cl)"
    [ "$(complete_ efplan apply --time)" = "--time-scale --time-zone" ] ||
        fail "efplan apply --time<TAB>: $(complete_ efplan apply --time)"
    [ "$(complete_ efplan help va)" = validate ] ||
        fail "efplan help va<TAB>: $(complete_ efplan help va)"
    [ "$(complete_ efplan s)" = "serve show simulate submit" ] ||
        fail "efplan s<TAB>: $(complete_ efplan s)"
    # values: from the help's "--opt a|b|c", the policy registry, verbs
    [ "$(complete_ efplan apply x.json --backend '')" = "local slurm dry-run" ] ||
        fail "apply --backend <TAB>: $(complete_ efplan apply x.json --backend '')"
    [ "$(complete_ efplan serve --backend d)" = "dry-run" ] ||
        fail "serve --backend d<TAB>: $(complete_ efplan serve --backend d)"
    [ "$(complete_ efplan simulate --policy ed)" = "edf edf-ac" ] ||
        fail "simulate --policy ed<TAB>: $(complete_ efplan simulate --policy ed)"
    [ "$(complete_ efplan oracle --method '')" = "auto exact relaxed both" ] ||
        fail "oracle --method <TAB>: $(complete_ efplan oracle --method '')"
    [ "$(complete_ efplan plan --time-zone l)" = "local" ] ||
        fail "plan --time-zone l<TAB>: $(complete_ efplan plan --time-zone l)"
    [ "$(complete_ efplan node '')" = "list drain undrain" ] ||
        fail "node <TAB>: $(complete_ efplan node '')"
    [ "$(complete_ efplan token r)" = "revoke" ] ||
        fail "token r<TAB>: $(complete_ efplan token r)"
    [ "$(complete_ efplan node drain --re)" = "--reason" ] ||
        fail "node drain --re<TAB>: $(complete_ efplan node drain --re)"
else
    echo "install: bash is not installed: completion not checked"
fi
# the completion is made from the help text: every long option of the
# parsers' tables (cli/cmd_*.c, cli.h) is in some command's help, so in it
for o in $(cat "$ROOT"/cli/cmd_*.c "$ROOT"/cli/cli.h |
           grep -o '{"[a-z0-9-]*", *\(required\|no\|optional\)_argument' |
           sed 's/{"\([^"]*\)".*/\1/' | sort -u); do
    grep -q -- "[ ']--$o[ ']" "$COMP" ||
        fail "option --$o of a parser is in no command's help (completion)"
done

# ---- plans and their jobs file, from another directory ----------------------

mkdir -p "$T/work/plans" "$T/other/deeper"
cd "$T/work"
cp "$P/share/efplan/inputs/jobs/sample.json" queue.json
$E plan --jobs queue.json --cluster n1g8 --curves A100 \
    --out plans/local.json >/dev/null || fail "plan --out plans/local.json failed"
grep -qF '"jobs_file": "../queue.json",' plans/local.json ||
    fail "plans/local.json records $(grep -o '"jobs_file": [^,]*' plans/local.json)"
cd "$T/other"
$E apply "$T/work/plans/local.json" --backend dry-run --slots 1 >dry.out ||
    fail "apply --backend dry-run from another directory failed"
grep -qF -- '-- sh -c' dry.out || fail "the dry run shows no command: $(head -5 dry.out)"
# a real local apply of the first slots: the stand-in j00 runs and is done
$E apply "$T/work/plans/local.json" --until 400 --time-scale 100 \
    >apply.out 2>apply.err || fail "apply from another directory: exit $?: $(cat apply.err)"
grep -qF 'done j00' apply.err || fail "apply: j00 not done: $(cat apply.err)"
[ -f "$T/work/plans/local.state/state.json" ] || fail "apply wrote no state.json"
# validate --plan --out elsewhere: the copy records the queue from there
$E validate --plan "$T/work/plans/local.json" --out deeper/copy.json >/dev/null ||
    fail "validate --plan --out failed"
grep -qF '"jobs_file": "../../work/queue.json",' deeper/copy.json ||
    fail "deeper/copy.json records $(grep -o '"jobs_file": [^,]*' deeper/copy.json)"
cd /
$E apply "$T/other/deeper/copy.json" --backend dry-run --slots 1 >/dev/null ||
    fail "apply of the converted copy from / failed"
# submit from another directory adds the job to the plan's queue
cd "$T/other"
cp "$T/work/plans/local.json" "$T/work/plans/sub.json"
$E submit --plan "$T/work/plans/sub.json" --job \
    '{"id": "late", "model": "resnet50", "batch_size": 64, "iterations": 100, "submit_time": 20000, "deadline": null}' \
    >submit.out 2>&1 || fail "submit from another directory: $(cat submit.out)"
grep -qF '"late"' "$T/work/queue.json" || fail "submit did not add to the plan's queue"
# a name relative to where the plan was made (--out -: no file to be
# relative to): from there, yes; elsewhere, exit 3 saying what to do
cd "$T/work"
$E plan --jobs queue.json --cluster n1g8 --curves A100 --out - \
    >plans/old.json 2>/dev/null || fail "plan --out - failed"
grep -qF '"jobs_file": "queue.json",' plans/old.json || fail "plan --out -: jobs_file"
$E apply plans/old.json --backend dry-run --slots 1 >/dev/null ||
    fail "an old-style plan from its directory failed"
cd "$T/other"
rc=0
$E apply "$T/work/plans/old.json" --backend dry-run --slots 1 >/dev/null \
    2>old.err || rc=$?
[ "$rc" = 3 ] || fail "an old-style plan elsewhere: exit $rc (expected 3)"
grep -qF 'jobs_file "queue.json" not found, beside the plan file nor here' old.err &&
    grep -qF 'pass --jobs FILE' old.err || fail "old-style plan elsewhere: $(cat old.err)"
$E apply "$T/work/plans/old.json" --jobs "$T/work/queue.json" \
    --backend dry-run --slots 1 >/dev/null || fail "apply --jobs failed"

# ---- uninstall ----------------------------------------------------------------

make -C "$ROOT" --no-print-directory -o "$EFPLAN" uninstall BUILD="$BUILD" \
    PREFIX="$P" >make.out 2>&1 || { cat make.out; fail "make uninstall failed"; }
left=$(cd "$P" && find . -type f | sort)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install: ok"
