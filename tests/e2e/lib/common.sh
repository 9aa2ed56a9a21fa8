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
