#!/bin/sh
# tests/e2e/validate_cases.sh [NAME...]: run the data-driven input cases in
# tests/cases/validate/*.case (or only the named ones) against $EFPLAN.
#
# Each case is materialised into a fresh temporary directory, the binary
# is run there ($VALGRIND $EFPLAN ARGS, so paths in messages are relative),
# and the exit code, the exact stderr and stdout are checked. The case
# format is described in tests/cases/README.md.
#
# Environment: EFPLAN (binary; default build/efplan), EFPLAN_DATA (bundled
# inputs; default inputs/), EFPLAN_ROOT (repository root), VALGRIND
# (optional prefix command). Prints each failing case with what was
# expected and what came; exits 1 if any case failed.
set -u
LC_ALL=C
export LC_ALL
ROOT=${EFPLAN_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
EFPLAN=${EFPLAN:-$ROOT/build/efplan}
EFPLAN_DATA=${EFPLAN_DATA:-$ROOT/inputs}
export EFPLAN_DATA
VALGRIND=${VALGRIND:-}
CASES=$ROOT/tests/cases/validate
case $EFPLAN in /*) ;; *) EFPLAN=$(pwd)/$EFPLAN ;; esac
case $EFPLAN_DATA in /*) ;; *) EFPLAN_DATA=$(pwd)/$EFPLAN_DATA ;; esac
if [ ! -x "$EFPLAN" ]; then
    echo "validate_cases: no binary at $EFPLAN (run make first)" >&2
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/efplan-cases.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Turn a case file into a plan, one directive a line:
#   A args | X exit | E stderr-line | O stdout-substring
#   F first-line last-line noeol name | D dirname | ! problem
plan() {
    awk '
    function bad(msg) { print "! line " NR ": " msg; err = 1; exit }
    function close_file(last) {
        if (name != "")
            print "F", first, last, noeol, name
        name = ""
    }
    BEGIN { name = ""; insec = 0; err = 0; nargs = 0; nexit = 0 }
    substr($0, 1, 4) == "--- " {
        close_file(NR - 1)
        insec = 1
        n = substr($0, 5)
        noeol = 0
        if (length(n) > 8 && substr(n, length(n) - 7) == " (noeol)") {
            noeol = 1
            n = substr(n, 1, length(n) - 8)
        }
        if (n == "" || substr(n, 1, 1) == "/" || n ~ /(^|\/)\.\.(\/|$)/ ||
            n ~ /[ \t\r]/)
            bad("bad file name \"" n "\" (expected a relative path)")
        if (substr(n, length(n)) == "/") {
            print "D", n
            next
        }
        name = n
        first = NR + 1
        next
    }
    insec { next }
    /^#/ || /^[ \t]*$/ { next }
    /^args: / { print "A", substr($0, 7); nargs++; next }
    /^exit: [0-9]+$/ { print "X", substr($0, 7); nexit++; next }
    /^stderr: / { print "E", substr($0, 9); next }
    /^stderr:$/ { print "E"; next }
    /^stdout: / { print "O", substr($0, 9); next }
    { bad("unknown header line (expected args:, exit:, stderr:, stdout:, " \
          "# comment or --- FILE)") }
    END {
        if (err)
            exit 0
        close_file(NR)
        if (nargs != 1)
            print "! needs exactly one args: line"
        if (nexit != 1)
            print "! needs exactly one exit: line"
    }' "$1"
}

# Replace every occurrence of $EFPLAN_DATA in stdin by @DATA@.
mask_data() {
    awk -v d="$EFPLAN_DATA" '
    {
        out = ""
        s = $0
        while ((i = index(s, d)) > 0) {
            out = out substr(s, 1, i - 1) "@DATA@"
            s = substr(s, i + length(d))
        }
        print out s
    }'
}

pass=0
fail=0
failed=""

report() { # name, reason
    fail=$((fail + 1))
    failed="$failed $1"
    echo "FAIL $1: $2"
}

show() { # label, file
    echo "  $1:"
    if [ -s "$2" ]; then
        sed 's/^/    | /' "$2"
    else
        echo "    (empty)"
    fi
}

run_case() { # path of a .case file
    c=$1
    name=$(basename "$c" .case)
    dir=$work/$name
    rm -rf "$dir"
    mkdir -p "$dir/.run" "$dir/t" || return
    plan "$c" >"$dir/.run/plan"
    if grep -q '^!' "$dir/.run/plan"; then
        report "$name" "malformed case file: $(sed -n 's/^! //p' "$dir/.run/plan" | head -1)"
        return
    fi
    : >"$dir/.run/want_err"
    : >"$dir/.run/want_out"
    args=""
    want_rc=""
    while IFS= read -r l; do
        k=${l%% *}
        v=${l#"$k"}
        v=${v# }
        case $k in
        A) args=$v ;;
        X) want_rc=$v ;;
        E) printf '%s\n' "$v" >>"$dir/.run/want_err" ;;
        O) printf '%s\n' "$v" >>"$dir/.run/want_out" ;;
        D) mkdir -p "$dir/t/$v" ;;
        F)
            set -f
            # shellcheck disable=SC2086 # split "FIRST LAST NOEOL NAME"
            set -- $v
            set +f
            first=$1 last=$2 noeol=$3 f=$4
            mkdir -p "$(dirname "$dir/t/$f")"
            if [ "$last" -ge "$first" ]; then
                sed -n "${first},${last}p" "$c" >"$dir/.run/body"
            else
                : >"$dir/.run/body"
            fi
            size=$(wc -c <"$dir/.run/body")
            if [ "$noeol" = 1 ] && [ "$size" -gt 0 ]; then
                dd if="$dir/.run/body" of="$dir/t/$f" bs=1 \
                    count=$((size - 1)) 2>/dev/null
            else
                cp "$dir/.run/body" "$dir/t/$f"
            fi
            ;;
        esac
    done <"$dir/.run/plan"
    # Arguments are split on blanks; @DATA@ stands for $EFPLAN_DATA.
    set -f
    # shellcheck disable=SC2086 # args: are split on blanks on purpose
    set -- $args
    set +f
    n=$#
    i=0
    while [ "$i" -lt "$n" ]; do
        a=$1
        shift
        case $a in
        *@DATA@*) a=$EFPLAN_DATA${a#*@DATA@} ;;
        esac
        set -- "$@" "$a"
        i=$((i + 1))
    done
    (cd "$dir/t" && exec $VALGRIND "$EFPLAN" "$@") \
        >"$dir/.run/out" 2>"$dir/.run/err_raw"
    rc=$?
    mask_data <"$dir/.run/err_raw" >"$dir/.run/err"
    why=""
    if [ "$rc" != "$want_rc" ]; then
        why="exit code $rc (expected $want_rc)"
    elif ! cmp -s "$dir/.run/err" "$dir/.run/want_err"; then
        why="stderr differs"
    elif [ "$want_rc" != 0 ] && [ -s "$dir/.run/out" ]; then
        why="stdout not empty on error"
    else
        while IFS= read -r l; do
            if ! grep -qF -- "$l" "$dir/.run/out"; then
                why="stdout lacks \"$l\""
                break
            fi
        done <"$dir/.run/want_out"
    fi
    if [ -z "$why" ]; then
        pass=$((pass + 1))
        return
    fi
    report "$name" "$why"
    echo "  args: $args"
    show "expected stderr" "$dir/.run/want_err"
    show "got stderr" "$dir/.run/err"
    if [ -s "$dir/.run/out" ]; then
        head -20 "$dir/.run/out" >"$dir/.run/out20"
        show "got stdout (first 20 lines)" "$dir/.run/out20"
    fi
}

if [ $# -gt 0 ]; then
    for n in "$@"; do
        n=$(basename "$n" .case)
        if [ -f "$CASES/$n.case" ]; then
            run_case "$CASES/$n.case"
        else
            report "$n" "no such case: $CASES/$n.case"
        fi
    done
else
    for c in "$CASES"/*.case; do
        [ -f "$c" ] || continue
        run_case "$c"
    done
fi
total=$((pass + fail))
if [ "$total" -eq 0 ]; then
    echo "validate_cases: no cases found in $CASES" >&2
    exit 1
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "validate cases: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
