# .ci/lib/slurm.sh: what the Slurm CI scripts (.ci/slurm.sh one node,
# .ci/slurm_multi.sh two) share, sourced from the repository root with
# $NAME set to the script's word in messages ("slurm e2e", ...):
#   slurm_prologue NGPUS      skip unless CI=true or EFPLAN_SLURM_TEST=1;
#                             check root, /dev/null and /dev/tty0..NGPUS-1
#                             (the faked GPUs), build/efplan (sets
#                             $EFPLAN); install munge and Slurm's
#                             packages when missing
#   slurm_conf_common         the slurm.conf lines both clusters have:
#                             munge, no cgroups, no accounting, backfill,
#                             cons_tres, the state and pid paths under $R
#                             (to which each script adds its own nodes,
#                             partitions, log and spool paths)
#   slurm_start_munge         munged with a key (made when there is none),
#                             or the one already running; sets started=1
#                             (what cleanup checks before stopping)
#   slurm_stop_daemons PIDFILE...
#                             cancel every job of root, then stop the
#                             daemons by their pid files, waiting for each
#                             to be gone or a zombie (PID 1 may not reap)
slurm_prologue() {
    if [ "${CI:-}" != true ] && [ "${EFPLAN_SLURM_TEST:-}" != 1 ]; then
        echo "$NAME: skipped (set CI=true or EFPLAN_SLURM_TEST=1; needs root)"
        exit 0
    fi
    [ "$(id -u)" = 0 ] || { echo "$NAME: must run as root"; exit 1; }
    [ -c /dev/null ] || { echo "$NAME: /dev/null is not a character device (munged needs it)"; exit 1; }
    n=0
    while [ $n -lt "$1" ]; do
        [ -c /dev/tty$n ] || { echo "$NAME: /dev/tty$n missing (faked GPU devices)"; exit 1; }
        n=$((n + 1))
    done
    EFPLAN=$ROOT/build/efplan
    [ -x "$EFPLAN" ] || { echo "$NAME: build/efplan missing (run make first)"; exit 1; }
    missing=""
    for p in slurmctld slurmd slurm-client munge; do
        dpkg-query -W -f='${Status}\n' $p 2>/dev/null | grep -q 'install ok installed' ||
            missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "$NAME: installing$missing"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends $missing) >/dev/null
    fi
}

slurm_conf_common() {
    cat <<CONF
SlurmctldHost=$H
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$R/state
SlurmctldPidFile=$R/run/slurmctld.pid
SlurmctldLogFile=$R/log/slurmctld.log
GresTypes=gpu
CONF
}

slurm_start_munge() {
    install -d -o munge -g munge -m 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=128 2>/dev/null
        chown munge:munge /etc/munge/munge.key
        chmod 0400 /etc/munge/munge.key
    fi
    started=1
    if [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
        echo "$NAME: using the munged already running"
    else
        runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
        cp /run/munge/munged.pid "$R/run/munged.pid"
    fi
}

slurm_stop_daemons() {
    scancel --user=root >/dev/null 2>&1 || true
    for f in "$@"; do
        [ -s "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
            case $st in gone|Z|X) break ;; esac
            sleep 0.1
        done
        rm -f "$f"
    done
}
