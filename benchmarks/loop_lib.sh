# benchmarks/loop_lib.sh: what the closed-loop benchmarks share
# (loop_vs_blind.sh, loop_waves.sh); sourced, not run. The caller sets
# E (the efplan binary), JOB (tests/data/loop_job.py) and SCALE (plan
# seconds per wall second), and T (its private directory) before it
# calls serve_start.

# the process groups of the attempts (pid files "PID STARTTIME"): killed
# only while that pid still is the process that was started
kill_groups() { # dir of pid files
    for f in "$1"/*.pid; do
        [ -f "$f" ] || continue
        read -r pid st0 <"$f" || continue
        [ -r "/proc/$pid/stat" ] || continue
        st=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f20)
        [ "$st" = "$st0" ] || continue
        kill -s KILL -- "-$pid" 2>/dev/null || true
    done
}
stop_pid() { # pid: SIGTERM, a bounded wait, then SIGKILL
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || true
    i=0
    while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
        i=$((i + 1)); sleep 0.1
    done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
# one job's JSON: id model it deadline(absolute|null) speed crash events
# [submit_time [tput]] (tput: loop_job.py's --tput G:T,... for a curve
# that is not 1 iteration per second per GPU)
job_json() {
    jq -cn --arg id "$1" --arg m "$2" --argjson it "$3" --argjson dl "$4" \
        --arg sp "$5" --arg cr "$6" --arg ev "$7" --arg job "$JOB" \
        --argjson st "${8:-null}" --arg tp "${9:-}" --arg sc "$SCALE" \
        '{id: $id, model: $m, batch_size: 64, iterations: $it,
          deadline: $dl, grace_seconds: 5,
          command: (["python3", $job, $ev, "--speed", $sp, "--scale", $sc,
                     "--crash-at", $cr]
                    + (if $tp == "" then [] else ["--tput", $tp] end))}
         + (if $st == null then {} else {submit_time: $st} end)'
}
# GPU-seconds per job from an events file (start/end lines, wall times x
# the time scale): "job gpu_seconds open" (open: attempts with no end line)
events_gpu_s() { # events file
    awk -v sc="$SCALE" '
        $1 == "start" { k = $2 " " $3; g[k] = $4; t[k] = $5; open[$2]++ }
        $1 == "end" { k = $2 " " $3
            if (k in t) { s[$2] += g[k] * ($6 - t[k]) * sc; open[$2]-- } }
        END { for (j in open) printf "%s %.0f %d\n", j, s[j], open[j] }' "$1"
}
# serve_start DIR LOG ARGS...: efplan serve --backend local in DIR (its
# store DIR/db.sqlite, run dir DIR/run, port file DIR/port), in the
# background (SRV its pid); an operator token in DIR/ops.tok, made once;
# URL where it listens
serve_start() {
    sd=$1; lg=$2; shift 2
    if [ ! -s "$sd/ops.tok" ]; then
        "$E" token add ops --operator --db "$sd/db.sqlite" >"$sd/tok.out" 2>&1
        grep -o 'efp_[a-z0-9]\{10\}_[A-Za-z0-9_-]\{43\}' "$sd/tok.out" |
            head -1 >"$sd/ops.tok"
        chmod 600 "$sd/ops.tok"
    fi
    rm -f "$sd/port"
    "$E" serve --db "$sd/db.sqlite" --backend local --single-user \
        --run-dir "$sd/run" --time-scale "$SCALE" --listen 127.0.0.1:0 \
        --port-file "$sd/port" --quiet "$@" >>"$lg" 2>&1 &
    SRV=$!
    i=0
    while [ ! -s "$sd/port" ]; do
        kill -0 "$SRV" 2>/dev/null || { cat "$lg" >&2; exit 1; }
        i=$((i + 1)); [ $i -le 600 ] || { echo "no port file" >&2; exit 1; }
        sleep 0.05
    done
    URL="http://127.0.0.1:$(cat "$sd/port")"
    TOK=$sd/ops.tok
}
api() { # method path: the body on stdout
    curl -sS --max-time 10 -X "$1" -H "Authorization: Bearer $(cat "$TOK")" \
        "$URL$2"
}
now() { api GET /healthz | jq -r .time; }
wait_clock() { # plan time: a bounded wait until the service's clock is there
    i=0
    while [ "$(now)" -lt "$1" ] && [ $i -lt 600 ]; do
        i=$((i + 1)); sleep 0.05
    done
}
# jobs_ended ID...: 0 when every job is done, failed, rejected or cancelled
jobs_ended() {
    for j in "$@"; do
        case $(api GET "/v1/jobs/$j" | jq -r .state) in
            done|failed|rejected|cancelled) ;;
            *) return 1 ;;
        esac
    done
}
# md_section OUT.md NAME TEXT-FILE: TEXT-FILE becomes OUT.md's section
# between "<!-- NAME -->" and "<!-- /NAME -->" (added at its end when it
# has none), so each benchmark rewrites only its own part of the file
md_section() {
    [ -f "$1" ] || : >"$1"
    awk -v n="$2" -v f="$3" '
        function put() { print "<!-- " n " -->"
            while ((getline l < f) > 0) print l
            print "<!-- /" n " -->"; done = 1 }
        $0 == "<!-- " n " -->" { skip = 1; put(); next }
        $0 == "<!-- /" n " -->" { skip = 0; next }
        !skip { print }
        END { if (!done) { if (NR) print ""; put() } }' "$1" >"$1.tmp.$$"
    mv "$1.tmp.$$" "$1"
}
# stop_reasons SERVE-LOG: the loop's stops ("running -> stopping" lines)
# counted by reason, each cause without the other job's id or the GPU
# count ("resize: its promise needs more GPUs x2, ..."), or "none"
stop_reasons() {
    sed -n 's/.*: \([a-z0-9]*\): running -> stopping (attempt [0-9]*): \(.*\)$/\2/p' \
        "$1" | sed -e "s/: [a-z0-9_.-]*'s promise needs its GPUs/: another job's promise needs its GPUs/" \
            -e 's/: [a-z0-9_.-]* gains more from its GPUs/: another job gains more from its GPUs/' \
            -e 's/: its promise needs [0-9]* GPUs/: its promise needs more GPUs/' | sort | uniq -c |
        awk '{ c = $1; $1 = ""; sub(/^ /, ""); printf "%s%s x%d", (NR > 1 ? ", " : ""), $0, c }
             END { if (NR == 0) printf "none" }'
}
# median_max: the median and the largest of the numbers on standard input
# (one per line; "- 0" when there are none)
median_max() {
    sort -n | awk '{ a[++n] = $1 } END { if (n == 0) { print "- 0"; exit }
        printf "%g %g\n", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[n] }'
}
