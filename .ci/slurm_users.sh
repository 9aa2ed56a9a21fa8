#!/bin/sh
# .ci/slurm_users.sh: efplan serve --backend slurm, run as root, submits
# each job as its owner (sbatch --uid/--gid, docs/security.md), on a real
# single-node Slurm (Debian's slurmctld, slurmd, munge) started here as
# .ci/slurm.sh does, on ports of its own (controller 17031, node 17032).
#
# Runs when CI=true, or as root with EFPLAN_SLURM_TEST=1; otherwise it
# says it skipped. Needs build/efplan. It
#   1. makes two Unix accounts (useradd, removed on every way out) and
#      tokens alice --unix-user A, bob --unix-user B, carol (none) and
#      ops (operator); serve runs as root with --job-user nobody;
#   2. submits one probe job each (tests/e2e/lib/users.sh): alice's
#      runs as A, bob's as B, carol's as nobody (the uid and `id -un` in
#      its log; Slurm's own record, scontrol show job: UserId); none can
#      read or write the store, list the run directory, read its run/,
#      enter another job's directory, see the service's environment, or
#      find alice's secret (her job's env) in the run directory, the
#      store, /proc/*/environ or Slurm's spool and state directories;
#      each job's directory is its user's, 0700;
#   3. bob's job tries the escalation of issue 32 (sqlite3 STORE "update
#      tokens set op=1 where name='bob'"): sqlite3 cannot open the store,
#      bob stays a user (token list, and GET /v1/jobs?all=1 stays 403);
#   4. a job of A's that runs until stopped, running in Slurm as A: the
#      service killed (-9) and started again follows it (one Slurm job,
#      one attempt: not launched again); cancelled through the API, it
#      ends cancelled, nothing of it left in Slurm;
#   5. cancels what is left, stops the daemons it started (by their pid
#      files), removes the accounts and its scratch directory.
# No timing assertion: bounded waits only.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NAME="slurm users"
. .ci/lib/slurm.sh
slurm_prologue 8

R=$(mktemp -d /tmp/efplan-slurm-users.XXXXXX)
chmod 711 "$R" # the jobs pass through to their own directories
H=$(hostname -s)
mkdir -p "$R/etc" "$R/state" "$R/spool" "$R/log" "$R/run"
chmod 755 "$R/etc"; chmod 700 "$R/state" "$R/spool" "$R/log" "$R/run"
export SLURM_CONF=$R/etc/slurm.conf
A=efsa$$; B=efsb$$
started=""
SRV=
cleanup() {
    rc=$?
    [ -z "$SRV" ] || kill -9 "$SRV" 2>/dev/null || true
    if [ $rc -ne 0 ]; then
        echo "--- serve.log (tail)"; tail -30 "$R/serve.log" 2>/dev/null || true
        echo "--- slurmctld.log (tail)"; tail -20 "$R/log/slurmctld.log" 2>/dev/null || true
        echo "--- slurmd.log (tail)"; tail -20 "$R/log/slurmd.log" 2>/dev/null || true
    fi
    if [ -n "$started" ]; then
        for u in "$A" "$B" nobody; do
            scancel --user="$u" >/dev/null 2>&1 || true
        done
        slurm_stop_daemons "$R/run/slurmd.pid" "$R/run/slurmctld.pid" \
            "$R/run/munged.pid"
    fi
    userdel "$A" 2>/dev/null || true
    userdel "$B" 2>/dev/null || true
    rm -rf "$R"
    exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

useradd -M -N -s /bin/sh "$A" || fail "useradd $A"
useradd -M -N -s /bin/sh "$B" || fail "useradd $B"
UA=$(id -u "$A"); UB=$(id -u "$B"); UN=$(id -u nobody)

{ echo ClusterName=efplanusers; slurm_conf_common; cat <<CONF; } > "$R/etc/slurm.conf"
SlurmctldPort=17031
SlurmdPort=17032
MinJobAge=600
SlurmdSpoolDir=$R/spool
SlurmdPidFile=$R/run/slurmd.pid
SlurmdLogFile=$R/log/slurmd.log
NodeName=$H CPUs=16 RealMemory=1000 Gres=gpu:8 State=UNKNOWN
PartitionName=ci Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$R/etc/gres.conf" <<CONF
NodeName=$H Name=gpu File=/dev/tty[0-7]
CONF
chmod 644 "$R/etc/slurm.conf" "$R/etc/gres.conf"
slurm_start_munge
/usr/sbin/slurmctld -i
/usr/sbin/slurmd
idle=""
for _ in $(seq 1 150); do
    case "$(sinfo -h -o %T 2>/dev/null)" in idle*) idle=1; break ;; esac
    sleep 0.2
done
[ -n "$idle" ] || fail "the Slurm node did not become idle: $(sinfo 2>&1)"
echo "slurm users: Slurm $(sinfo --version) up on $H; accounts $A ($UA), $B ($UB)"

cd "$R"
V=
EFPLAN_DATA=$ROOT/inputs
. "$ROOT/tests/e2e/lib/serve.sh"
. "$ROOT/tests/e2e/lib/users.sh"

# 1. tokens, and the service as root
new_token ops.tok ops --operator
new_token alice.tok alice --unix-user "$A"
new_token bob.tok bob --unix-user "$B"
new_token carol.tok carol
STORE=$R/db.sqlite
RUN=$R/run-dir
SERVICE_MARK=svc-mark-$$ serve_start n1g8 --backend slurm --run-dir run-dir \
    --job-user nobody --time-scale 50 --quiet
api() { # token method path [curl args]
    t=$1; m=$2; p=$3; shift 3
    curl -sS --max-time 10 -X "$m" -H "Authorization: Bearer $(cat "$t")" \
        "$@" "$URL$p"
}
state() { api ops.tok GET "/v1/jobs/$1" | jq -r .state; }
wait_state() { # job, state...
    j=$1; shift
    i=0
    while :; do
        s=$(state "$j")
        for w in "$@"; do [ "$s" = "$w" ] && return 0; done
        [ "$s" = failed ] && { cat "$RUN/jobs/$j/"*.log 2>/dev/null; fail "$j failed"; }
        i=$((i + 1))
        [ $i -le 900 ] || fail "$j: not $* ($s)"
        sleep 0.2
    done
}

# 2. a probe job of each
# a1 runs until b1 and c1, which look for alice's secret, are done: it is
# long (best-effort, 100000 iterations: its allocation does not end), b1
# and c1 are short with a deadline soon (planned at once, beside a1)
now=$(api ops.tok GET /healthz | jq .time)
submit() { # token id env [deadline iterations]
    body=$(users_body "$2" "$3" "$STORE" "$RUN" "$R/spool $R/state" \
        "${4:-null}" "${5:-10}")
    "$EFPLAN" submit --server "$URL" --token-file "$1" --job "$body" \
        >>submits.out 2>&1 || { cat submits.out; fail "submit $2"; }
}
: >hold
submit alice.tok a1 "{\"ALICE_KEY\": \"alice-s3cr3t\", \"USERS_HOLD\": \"$R/hold\"}" \
    null 100000
submit bob.tok b1 '{}' $((now + 900))
submit carol.tok c1 '{}' $((now + 900))
for j in b1 c1; do wait_state $j done; done
rm hold # a1 ran until b1 and c1 were done
wait_state a1 done
users_check a1 "$UA" "b1 c1" "$RUN"
users_check b1 "$UB" "a1 c1" "$RUN"
users_check c1 "$UN" "a1 b1" "$RUN"
grep -q "^uid=$UA gid=[0-9]* user=$A " a1.logs || fail "a1: id -un is not $A"
grep -q "^uid=$UB gid=[0-9]* user=$B " b1.logs || fail "b1: id -un is not $B"
grep -q "^uid=$UN gid=[0-9]* user=nobody " c1.logs || fail "c1: id -un is not nobody"
# Slurm's own record of who each job was: its UserId
for p in "a1 $A" "b1 $B" "c1 nobody"; do
    set -- $p
    info=$(scontrol show job -o | grep "JobName=efp-[0-9a-f]*-$1-1 ") ||
        fail "$1: no Slurm job"
    echo "$info" | grep -q "UserId=$2(" || fail "$1: Slurm ran it as: $info"
    echo "slurm users: $1 = Slurm job $(echo "$info" | sed 's/^JobId=\([0-9]*\).*/\1/') as $2," \
        "$(echo "$info" | grep -o 'StartTime=[^ ]* EndTime=[^ ]*')"
done

# 3. bob's escalation failed; he is still a user
users_escalated b1.logs
users_checkpointed a1.logs # (resized as b1 and c1 came)
"$EFPLAN" token list --db db.sqlite --json >t.json
jq -e '.tokens[] | select(.name == "bob") | .role == "user"' t.json >/dev/null ||
    fail "bob became an operator"
code=$(curl -s -o /dev/null -w '%{http_code}' \
    -H "Authorization: Bearer $(cat bob.tok)" "$URL/v1/jobs?all=1")
[ "$code" = 403 ] || fail "bob's GET /v1/jobs?all=1: $code, expected 403"
[ "$(stat -c '%u %a' db.sqlite)" = "0 600" ] || fail "store: $(stat -c '%u %a' db.sqlite)"

# 4. a job of A's, stopped through the API: the loop finds it in Slurm
# (where it is A's) and cancels it
body=$(jq -cn '{id: "a2", model: "bert", batch_size: 64, iterations: 100000,
    deadline: null, command: ["sh", "-c", "echo started; exec sleep 600"]}')
"$EFPLAN" submit --server "$URL" --token-file alice.tok --job "$body" \
    >>submits.out 2>&1 || { cat submits.out; fail "submit a2"; }
wait_state a2 running
i=0
until grep -q started "$RUN/jobs/a2/1.log" 2>/dev/null; do
    i=$((i + 1)); [ $i -le 300 ] || fail "a2 did not start in Slurm"
    sleep 0.2
done
squeue -h -o '%j %u %T' | grep -q "^efp-[0-9a-f]*-a2-1 $A RUNNING\$" ||
    fail "a2 is not running in Slurm as $A: $(squeue -h -o '%j %u %T')"
# the service killed and started again follows a2 (A's job in Slurm) and
# launches it no second time
kill -9 "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=
serve_start n1g8 --backend slurm --run-dir run-dir --job-user nobody \
    --time-scale 50 --quiet
wait_state a2 running
sleep 2 # (a few of the loop's ticks: a relaunch would show)
n=$(squeue -h -o %j | grep -c -- "-a2-" || true)
[ "$n" = 1 ] || fail "a2 after the restart: $n jobs in Slurm: $(squeue -h -o '%j %u %T')"
api ops.tok GET /v1/jobs/a2 | jq -e '.attempts | length == 1' >/dev/null ||
    fail "a2 launched again after the restart: $(api ops.tok GET /v1/jobs/a2)"
api alice.tok DELETE /v1/jobs/a2 >del.json
wait_state a2 cancelled
i=0
while squeue -h -o %j | grep -q -- "-a2-"; do
    i=$((i + 1)); [ $i -le 300 ] || fail "a2 left in Slurm: $(squeue -h -o '%j %u %T')"
    sleep 0.2
done
echo "slurm users: a2 (as $A) cancelled through the API, gone from Slurm"
serve_stop
[ "$SERVE_RC" = 0 ] || fail "serve exited $SERVE_RC"
echo "slurm users ok: jobs ran as $A, $B and nobody under Slurm; none reached the store, another's directory or secret; bob stayed a user"
