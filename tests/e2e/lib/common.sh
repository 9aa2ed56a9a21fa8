# tests/e2e/lib/common.sh: the prologue the end-to-end scripts source
# (`. "$(dirname "$0")/lib/common.sh"`): strict mode, the binary and the
# bundled inputs from tests/run.sh, an optional valgrind prefix, a
# temporary directory removed on exit, and fail().
#   EFPLAN       the efplan binary (required)
#   EFPLAN_DATA  the bundled inputs directory (required), also as $D
#   VALGRIND     a command prefix for memory checks, as $V (may be empty)
#   $T           a fresh temporary directory
set -eu
: "${EFPLAN:?}" "${EFPLAN_DATA:?}"
V=${VALGRIND:-}
D=$EFPLAN_DATA
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# kill_attempts DIR...: kill -9 the process group of every attempt whose
# monitor left its pid in DIR/*.pid (a state or run directory's run/):
# what a failed test may have left running ("kill -s KILL --": dash's
# kill refuses "kill -9 -- -PGID")
kill_attempts() {
    for d in "$@"; do
        for f in "$d"/*.pid; do
            [ -f "$f" ] || continue
            kill -s KILL -- "-$(cut -d' ' -f1 "$f")" 2>/dev/null || true
        done
    done
}
