#!/bin/sh
# layers.sh: the source tree keeps its layers (CODE_STYLE.md): a folder
# includes project headers only from its own folder and the layers below,
#   common < model < planner < {solver, simulator, profiler, executor}
#     < service < cli
# and the four on the same level never include each other. Includes are
# root-relative ("planner/plan.h"); a relative one ("../x.h") is refused.
. "$(dirname "$0")/lib/common.sh"
ROOT=${EFPLAN_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"

level() { # folder -> its layer, or nothing for a folder outside the tree
    case $1 in
    common) echo 0 ;;
    model) echo 1 ;;
    planner) echo 2 ;;
    solver | simulator | profiler | executor) echo 3 ;;
    service) echo 4 ;;
    cli) echo 5 ;;
    esac
}

bad=0
for dir in common model planner solver simulator profiler executor service \
    cli; do
    mine=$(level "$dir")
    for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu; do
        [ -f "$f" ] || continue
        # every project include: '#include "x/y.h"'
        sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" >"$T/inc"
        while IFS= read -r inc; do
            case $inc in
            */*) ;;
            *) echo "$f: include \"$inc\" is not root-relative"
               bad=1; continue ;;
            esac
            case $inc in
            ../*) echo "$f: include \"$inc\" is relative"; bad=1; continue ;;
            esac
            to=${inc%%/*}
            theirs=$(level "$to")
            if [ -z "$theirs" ]; then
                echo "$f: include \"$inc\" is outside the layers"
                bad=1
            elif [ "$to" != "$dir" ] && [ "$theirs" -ge "$mine" ]; then
                echo "$f: includes $inc (layer $to is not below $dir)"
                bad=1
            fi
        done <"$T/inc"
    done
done
[ "$bad" = 0 ] || fail "the include graph breaks the layers"
echo "layers: ok"
