# tests/e2e/lib/users.sh: what the jobs-run-as-their-owners tests share
# (tests/e2e/serve_users.sh with --backend local, .ci/slurm_users.sh with
# --backend slurm; docs/security.md), sourced after fail() is defined:
#   USERS_PROBE        a job's command text (sh -c TEXT probe STORE RUN):
#                      one line each of what the job can reach, into its
#                      log: uid, gid, `id -un` and working directory; the store
#                      read or written; the run directory listed, its
#                      run/ read; the other jobs' (a1 b1 c1) directories
#                      or logs; the service's environment (SERVICE_MARK
#                      svc-mark...) or the store's path in its own; as b1
#                      or c1, alice's secret (alice-s3cr3t, in a1's env)
#                      in the run directory, the store, /proc/*/environ
#                      and $USERS_SECRET_DIRS (as the test exports it in
#                      the job's env: more places to look); as b1, the
#                      escalation of issue 32 (sqlite3 STORE "update
#                      tokens set op=1 where name='bob'"); with
#                      USERS_HOLD=FILE in its env, it then waits while
#                      FILE is there (at most 3 minutes: a1 runs while
#                      the others look); "probe_done". Its checkpoint
#                      signal (SIGUSR1, as users_body sets) writes
#                      "checkpoint_signal=ATTEMPT" and ends it (exit 0)
#   users_body ID ENV-JSON STORE RUN [DIRS [DEADLINE [ITERATIONS]]]
#                      the job body of probe job ID (best-effort unless
#                      DEADLINE, server seconds, is given; 10 iterations)
#   users_check JOB UID OTHERS RUN
#                      from JOB's logs (RUN/jobs/JOB/*.log, into JOB.logs
#                      in the current directory): it ran as UID, in its
#                      own directory, reached nothing of the above, and
#                      its directory (and checkpoints/) is UID's, 0700;
#                      but a1, it looked for alice's secret
#   users_checkpointed JOB.logs
#                      JOB was stopped (a resize) with its checkpoint
#                      signal, not only killed: the signal reached it
#   users_escalated JOB.logs
#                      b1's escalation ran and sqlite3 failed to open the
#                      store
USERS_PROBE=$(cat <<'EOF'
trap 'echo "checkpoint_signal=$EFPLAN_ATTEMPT"; exit 0' USR1
echo "uid=$(id -u) gid=$(id -g) user=$(id -un) pwd=$(pwd)"
if cat "$1" >/dev/null 2>&1; then echo store_read=yes; else echo store_read=no; fi
if (: >>"$1") 2>/dev/null; then echo store_write=yes; else echo store_write=no; fi
if ls "$2" >/dev/null 2>&1; then echo run_list=yes; else echo run_list=no; fi
if ls "$2/run" >/dev/null 2>&1; then echo run_files=yes; else echo run_files=no; fi
for j in a1 b1 c1; do
    [ "$j" = "$EFPLAN_JOB_ID" ] && continue
    if ls "$2/jobs/$j" >/dev/null 2>&1 || cat "$2/jobs/$j/1.log" >/dev/null 2>&1
    then echo "other_$j=yes"; else echo "other_$j=no"; fi
done
if env | grep -q "svc-mark"; then echo service_env=yes; else echo service_env=no; fi
if env | grep -qF "$1"; then echo store_named=yes; else echo store_named=no; fi
if [ "$EFPLAN_JOB_ID" != a1 ]; then
    sleep 1
    s=alice-s3; s=${s}cr3t # (not spelled out: this text is in the job's script)
    at=$(grep -rls "$s" "$2" "$1" /proc/[0-9]*/environ ${USERS_SECRET_DIRS:-} | head -3)
    if [ -n "$at" ]; then echo "secret found in:" $at; echo secret=yes
    else echo secret=no; fi
fi
if [ "$EFPLAN_JOB_ID" = b1 ]; then
    sqlite3 "$1" "update tokens set op=1 where name='bob'" 2>&1 | head -1
    echo "escalation=$?"
fi
i=0
while [ -n "${USERS_HOLD:-}" ] && [ -e "$USERS_HOLD" ] && [ $i -lt 900 ]; do
    sleep 0.2; i=$((i + 1))
done
echo probe_done
EOF
)

users_body() { # id env-json store run [dirs [deadline [iterations]]]
    jq -cn --arg id "$1" --arg p "$USERS_PROBE" --arg s "$3" --arg r "$4" \
        --arg dirs "${5:-}" --argjson env "$2" --argjson dl "${6:-null}" \
        --argjson it "${7:-10}" \
        '{id: $id, model: "bert", batch_size: 64, iterations: $it,
          deadline: $dl, checkpoint_signal: "SIGUSR1", grace_seconds: 600,
          env: ($env + (if $dirs == "" then {} else {USERS_SECRET_DIRS: $dirs} end)),
          command: ["sh", "-c", $p, "probe", $s, $r]}'
}

users_check() { # job, expected uid, other jobs, run directory: over every
    # attempt's log (a best-effort job may be stopped and started again as
    # others arrive)
    cat "$4/jobs/$1/"*.log >"$1.logs" 2>/dev/null || fail "$1: no log"
    log=$1.logs
    grep -q probe_done "$log" || { cat "$log"; fail "$1: the probe did not finish"; }
    grep -q "^uid=" "$log" || fail "$1: no uid line"
    grep "^uid=" "$log" | grep -qv "^uid=$2 " && { cat "$log"; fail "$1: not run as uid $2"; }
    grep "^uid=" "$log" | grep -qv "pwd=$4/jobs/$1\$" &&
        { cat "$log"; fail "$1: not in its own directory"; }
    for k in store_read store_write run_list run_files service_env store_named; do
        grep -q "^$k=no\$" "$log" || { cat "$log"; fail "$1 ($2): no $k line"; }
    done
    grep -q "=yes\$" "$log" && { cat "$log"; fail "$1 ($2) reached what it must not"; }
    for o in $3; do
        grep -q "^other_$o=no\$" "$log" || { cat "$log"; fail "$1: other_$o"; }
    done
    [ "$1" = a1 ] || grep -q "^secret=no\$" "$log" ||
        { cat "$log"; fail "$1: no secret line"; }
    [ "$(stat -c '%u %a' "$4/jobs/$1")" = "$2 700" ] ||
        fail "$1: its directory is $(stat -c '%u %a' "$4/jobs/$1")"
    [ "$(stat -c '%u' "$4/jobs/$1/checkpoints")" = "$2" ] ||
        fail "$1: its checkpoints directory is not its user's"
}

users_escalated() { # b1's logs
    grep -q "^escalation=" "$1" || fail "bob's escalation did not run"
    grep -qi "unable to open\|readonly\|denied" "$1" ||
        { cat "$1"; fail "bob's sqlite3 did not fail to open the store"; }
}

users_checkpointed() { # a job's logs
    grep -q "^checkpoint_signal=[0-9]" "$1" ||
        { cat "$1"; fail "$1: stopped without its checkpoint signal"; }
}
