#!/bin/sh
# benchmarks/serve_load.sh: submission latency of efplan serve under load,
# next to file-mode efplan submit on the same queue. Not part of make
# test. Run from the repository root after `make`:
#
#   sh benchmarks/serve_load.sh [SIZES] [FILL_BUDGET_S] [OUT.md]
#
# SIZES (default "100 1000 5000"): queue sizes, ascending. One daemon on a
# fresh store (cluster n128g8 = 1,024 GPUs, curves A100, slot 60, overhead
# fig12) is filled through the API, sequentially (one curl process per 100
# jobs, keep-alive), with long deadlines so that most jobs are admitted;
# at each size it measures:
#   - 8 concurrent clients (one curl each, keep-alive), each submitting 20
#     more jobs: submissions per second (160 / wall time of the round)
#     and p50 / p99 / max of curl's %{time_total};
#   - one client alone: 20 sequential submissions (p50), and /healthz
#     asked 200 times by a 9th client during the 8 clients' round (p99);
#   - file mode (FILE_MODE=1 only): the queue exported by GET /v1/queue, planned with
#     efplan plan (same cluster, curves, slot, --now the service plan's
#     now), then 20 sequential `efplan submit --plan FILE --job JSON`,
#     each timed with date +%s%N (process start included).
# SERVE_EXTRA: more serve options, e.g. "--backend dry-run --time-scale
# 60" (the loop re-plans from reality once a wall second, so submissions
# meet its re-plans).
# The 160 measured jobs stay in the queue: the next size is filled on top
# of them. Filling stops when it has taken FILL_BUDGET_S seconds in all
# (default 600), as every submission re-plans the whole queue; the sizes
# not reached are reported as such, with the fill rate at the last one.
# The table goes to standard output and, with OUT.md, into that file
# (copied whole; write the notes around it by hand).
set -eu
SIZES=${1:-100 1000 5000}
BUDGET=${2:-600}
OUTMD=${3:-}
E=${EFPLAN:-build/efplan}
case $E in /*) ;; *) E=$PWD/$E ;; esac
T=$(mktemp -d)
SRV=
cleanup() {
    if [ -n "$SRV" ]; then
        kill "$SRV" 2>/dev/null || true
        wait "$SRV" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
cd "$T"
now_ns() { date +%s%N; }

"$E" token add bench --operator --db db.sqlite >tok 2>/dev/null
TOK=$(cat tok)
# shellcheck disable=SC2086 # SERVE_EXTRA: options, split on purpose
"$E" serve --db db.sqlite --cluster n128g8 --curves A100 --slot 60 \
    --max-queued none --max-submit-rate none ${SERVE_EXTRA:-} \
    --listen 127.0.0.1:0 --port-file port --quiet >serve.log 2>&1 &
SRV=$!
i=0
while [ ! -s port ]; do
    kill -0 "$SRV" 2>/dev/null || { cat serve.log; exit 1; }
    i=$((i + 1)); [ $i -le 600 ] || exit 1
    sleep 0.05
done
URL="http://127.0.0.1:$(cat port)/v1/jobs"
NOW=$(date +%s)

# job N: a deterministic mix of models and sizes, deadlines 1 to 3 days
# out (long: most are admitted); best-effort every 10th
body() {
    awk -v n="$1" -v id="$2" -v now="$NOW" 'BEGIN {
        split("resnet50 vgg16 bert gpt2 inception3", m, " ")
        split("64 64 64 128 64", b, " ")
        k = n % 5 + 1
        it = 1000 + (n * 7919) % 9000
        dl = (n % 10 == 0) ? "null" : now + 86400 + (n * 104729) % 172800
        printf "{\"id\": \"%s\", \"model\": \"%s\", \"batch_size\": %s, " \
               "\"iterations\": %d, \"deadline\": %s}\n", \
               id, m[k], b[k], it, dl
    }'
}
# a curl config submitting jobs FROM..TO with id prefix P
config() { # from to prefix
    n=$1
    while [ "$n" -le "$2" ]; do
        body "$n" "$3$n" >"j.$3$n"
        printf 'url = "%s"\nheader = "Content-Type: application/json"\n' "$URL"
        printf 'header = "Authorization: Bearer %s"\n' "$TOK"
        printf 'data-binary = "@j.%s"\noutput = "/dev/null"\n' "$3$n"
        printf 'write-out = "%%{http_code} %%{time_total}\\n"\n'
        [ "$n" -lt "$2" ] && printf 'next\n'
        n=$((n + 1))
    done
}
count() { grep -c . "$1" 2>/dev/null || echo 0; }
pct() { # file of seconds, percentile: nearest rank
    sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
        r = int(p / 100 * NR + 0.999999); if (r < 1) r = 1
        printf "%.1f", v[r] * 1000 }'
}

filled=0
fill_s=0
rows=
notreached=
lastrate=
for N in $SIZES; do
    # fill to N jobs in the queue, 100 at a time, within the budget
    while [ "$filled" -lt "$N" ]; do
        if awk -v a="$fill_s" -v b="$BUDGET" 'BEGIN { exit !(a >= b) }'; then
            break
        fi
        to=$((filled + 100))
        [ "$to" -le "$N" ] || to=$N
        config $((filled + 1)) "$to" f >fill.cfg
        a=$(now_ns)
        curl -s -K fill.cfg >fill.out
        b=$(now_ns)
        bad=$(awk '$1 !~ /^20[01]$/' fill.out | wc -l)
        [ "$bad" -eq 0 ] || { echo "fill: $bad non-2xx answers" >&2; exit 1; }
        fill_s=$(awk -v s="$fill_s" -v a="$a" -v b="$b" \
            'BEGIN { printf "%.3f", s + (b - a) / 1e9 }')
        lastrate=$(awk -v n=$((to - filled)) -v a="$a" -v b="$b" \
            'BEGIN { printf "%.1f", (b - a) / 1e6 / n }')
        filled0=$filled
        filled=$to
        echo "filled $filled jobs (${fill_s} s so far, last $((to - filled0)): ${lastrate} ms/job)" >&2
        echo "| $filled0..$filled | $lastrate |" >>fill.rates
    done
    if [ "$filled" -lt "$N" ]; then
        notreached="$notreached $N"
        continue
    fi
    q=$(curl -s "${URL%/v1/jobs}/metrics" |
        sed -n 's/^efplan_jobs_planned \([0-9]*\)/\1/p')
    # one client alone: 20 sequential submissions, keep-alive
    config 1 20 "one${N}-" >one.cfg
    curl -s -K one.cfg >one.out
    awk '{ print $2 }' one.out >olat
    o50=$(pct olat 50)
    # 8 concurrent clients x 20 jobs
    c=1
    a=$(now_ns)
    pids=
    while [ $c -le 8 ]; do
        config 1 20 "m${N}c${c}-" >"m$c.cfg"
        curl -s -K "m$c.cfg" >"m$c.out" &
        pids="$pids $!"
        c=$((c + 1))
    done
    # /healthz while the 8 clients submit: one more client, 200 requests
    : >h.cfg
    k=0
    while [ $k -lt 200 ]; do
        printf 'url = "%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' \
            "${URL%/v1/jobs}/healthz" >>h.cfg
        k=$((k + 1))
        [ $k -lt 200 ] && printf 'next\n' >>h.cfg
    done
    curl -s -K h.cfg >h.out &
    hpid=$!
    for p in $pids; do wait "$p"; done
    b=$(now_ns)
    wait "$hpid"
    awk '{ print $2 }' h.out >hlat
    h99=$(pct hlat 99)
    cat m?.out >m.out
    bad=$(awk '$1 !~ /^20[01]$/' m.out | wc -l)
    [ "$bad" -eq 0 ] || { echo "measure: $bad non-2xx answers" >&2; exit 1; }
    awk '{ print $2 }' m.out >lat
    nreq=$(count lat)
    rate=$(awk -v n="$nreq" -v a="$a" -v b="$b" \
        'BEGIN { printf "%.1f", n / ((b - a) / 1e9) }')
    p50=$(pct lat 50) p99=$(pct lat 99) pmax=$(pct lat 100)
    filled=$((filled + nreq))
    # file mode on the same queue (FILE_MODE=1 only: it re-plans the
    # whole queue per submission)
    : >flat
    if [ "${FILE_MODE:-0}" = 1 ]; then
    curl -s -H "Authorization: Bearer $TOK" "${URL%/jobs}/queue" >queue.json
    curl -s -H "Authorization: Bearer $TOK" "${URL%/jobs}/plan" >svc_plan.json
    pnow=$(sed -n 's/^ *"now": *\([0-9]*\).*/\1/p' svc_plan.json | head -1)
    "$E" plan --jobs queue.json --cluster n128g8 --curves A100 --slot 60 \
        --now "$pnow" --out file_plan.json >/dev/null 2>&1
    k=1
    while [ $k -le 20 ]; do
        j=$(body "$k" "file$N-$k")
        a=$(now_ns)
        "$E" submit --plan file_plan.json --job "$j" >/dev/null 2>&1 || true
        b=$(now_ns)
        awk -v a="$a" -v b="$b" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>flat
        k=$((k + 1))
    done
    else
        echo 0 >flat
    fi
    f50=$(pct flat 50) f99=$(pct flat 99)
    rows="$rows$(printf '| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |' \
        "$N" "$q" "$rate" "$p50" "$p99" "$pmax" "$o50" "$h99" "$f50" "$f99")
"
    echo "size $N: $rate sub/s, p50 $p50 ms, p99 $p99 ms, one client p50 $o50 ms, healthz p99 $h99 ms" >&2
done

hdr="| queued jobs | in the planning state | serve sub/s (8 clients) | serve p50 ms | serve p99 ms | serve max ms | one client p50 ms | /healthz p99 ms (during) | file-mode p50 ms | file-mode p99 ms |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
{
    echo "$hdr"
    printf '%s' "$rows"
    echo
    echo "fill: $filled jobs submitted in all, ${fill_s} s of sequential fill"
    echo
    echo "| jobs in the queue while filling | ms per sequential submission |"
    echo "|---|---:|"
    cat fill.rates
    [ -z "$notreached" ] ||
        echo "not reached within the ${BUDGET} s fill budget:$notreached"
} >table.md
cat table.md
if [ -n "$OUTMD" ]; then
    case $OUTMD in
    /*) cp table.md "$OUTMD" ;;
    *) cp table.md "$OLDPWD/$OUTMD" ;;
    esac
fi
