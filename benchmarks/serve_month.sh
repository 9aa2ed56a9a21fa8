#!/bin/sh
# benchmarks/serve_month.sh: a month through efplan serve: JOBS_PER_DAY
# jobs a day (default 2000) for DAYS days (default 30), submitted through
# the API by 20 users at their times on the service's clock, the closed
# loop running them on dry-run physics (--backend dry-run: every attempt
# advances at its curve's speed on the service's clock), on a clock sped
# up SCALE times (efplan serve --time-scale; default: the month in
# MONTH_WALL_S wall seconds, default 300). Not part of make test. Run from
# the repository root after `make`:
#
#   sh benchmarks/serve_month.sh [OUT.md]
#
# Two runs on fresh stores, the same jobs: retention on (--keep KEEP,
# default 7d, so that the month reaches the steady state; --keep-plans
# 100) and retention off (--keep forever --keep-plans 0). Limits are the
# defaults (1,000 queued and 600 submissions a minute per user, on the
# service's clock). After each service day the driver records the store's
# size (the database file and its write-ahead log), its rows (jobs,
# events, plan history), and the submissions of that day: p50, p99 and
# max of the time at the client (one keep-alive connection, sequential),
# and how far behind their times on the service clock they were sent
# (when the service is slower than the arrivals, the month runs late,
# and says so). A job: one of five models, 20,000 to 150,000 iterations
# (about 1 to 6 GPU-hours on one A100), a deadline 1x to 4x its one-GPU
# time after its submission, every 4th best-effort; cluster n128g8
# (1,024 GPUs), A100 curves, 60 s slots.
set -eu
OUTMD=${1:-}
JOBS_PER_DAY=${JOBS_PER_DAY:-2000}
DAYS=${DAYS:-30}
MONTH_WALL_S=${MONTH_WALL_S:-300}
SCALE=${SCALE:-$(awk -v d="$DAYS" -v w="$MONTH_WALL_S" 'BEGIN { printf "%.0f", d * 86400 / w }')}
KEEP=${KEEP:-7d}
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

cat >drive.py <<'EOF'
import http.client, json, os, random, sqlite3, sys, time

url, toks, per_day, days, scale, db, out = sys.argv[1:8]
per_day, days, scale = int(per_day), int(days), float(scale)
host, port = url.split("//")[1].split(":")
toks = [open(t).read().strip() for t in toks.split(",")]
c = http.client.HTTPConnection(host, int(port), timeout=120)

def call(method, path, body=None, tok=None):
    h = {"Content-Type": "application/json"}
    if tok:
        h["Authorization"] = "Bearer " + tok
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    return r.status, r.read()

st, b = call("GET", "/healthz")
t0 = json.loads(b)["time"]
w0 = time.time()
start = (t0 // 60 + 1) * 60
def svc_now():
    return t0 + (time.time() - w0) * scale

models = [("resnet50", 64, 6.8), ("bert", 64, 6.0), ("vgg16", 64, 0),
          ("gpt2", 128, 0), ("inception3", 64, 0)]
rng = random.Random(33)

def sizes():
    f = lambda p: os.path.getsize(p) if os.path.exists(p) else 0
    q = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    rows = [q.execute("SELECT count(*) FROM " + t).fetchone()[0]
            for t in ("jobs", "events", "plans")]
    live = q.execute("SELECT count(*) FROM jobs WHERE state IN "
                     "('queued', 'running')").fetchone()[0]
    q.close()
    return {"db": f(db), "wal": f(db + "-wal"), "jobs": rows[0],
            "events": rows[1], "plans": rows[2], "live": live}

res = []
n = 0
for d in range(days):
    lat, late, codes = [], [], {}
    for k in range(per_day):
        at = start + d * 86400 + k * 86400.0 / per_day
        while svc_now() < at:
            time.sleep(min(0.05, (at - svc_now()) / scale))
        late.append(svc_now() - at)
        m, bs, _ = models[n % 5]
        it = rng.randint(20000, 150000)
        one = it / 6.5  # about its one-GPU seconds
        sent = max(at, svc_now())
        dl = None if n % 4 == 0 else int(sent + one * rng.uniform(1.0, 4.0))
        body = json.dumps({"id": "j%06d" % n, "model": m, "batch_size": bs,
                           "iterations": it, "deadline": dl})
        t = time.perf_counter()
        st, b = call("POST", "/v1/jobs", body, toks[n % len(toks)])
        lat.append(time.perf_counter() - t)
        codes[st] = codes.get(st, 0) + 1
        n += 1
    while svc_now() < start + (d + 1) * 86400:
        time.sleep(0.01)
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
    r = {"day": d + 1, "p50_ms": q(0.50), "p99_ms": q(0.99),
         "max_ms": lat[-1] * 1000, "late_s": max(late),
         "codes": codes, "wall_s": time.time() - w0}
    r.update(sizes())
    res.append(r)
    print(json.dumps(r), flush=True)
json.dump(res, open(out, "w"))
EOF

run() { # name, serve options...
    name=$1; shift
    mkdir "$name"
    (
        cd "$name"
        toks=""
        u=1
        while [ $u -le 20 ]; do
            "$E" token add "user$u" --db db.sqlite >"u$u.tok" 2>/dev/null
            toks="$toks${toks:+,}u$u.tok"
            u=$((u + 1))
        done
        "$E" serve --db db.sqlite --cluster n128g8 --curves A100 --slot 60 \
            --backend dry-run --time-scale "$SCALE" --quiet \
            --listen 127.0.0.1:0 --port-file port "$@" >serve.log 2>&1 &
        SRV=$!
        i=0
        while [ ! -s port ]; do
            kill -0 "$SRV" 2>/dev/null || { cat serve.log; exit 1; }
            i=$((i + 1)); [ $i -le 600 ] || exit 1
            sleep 0.05
        done
        python3 ../drive.py "http://127.0.0.1:$(cat port)" "$toks" \
            "$JOBS_PER_DAY" "$DAYS" "$SCALE" db.sqlite ../"$name.json" >&2
        kill "$SRV"
        wait "$SRV" || true
        grep -c 'retention: pruned' serve.log >../"$name.pruned" || true
    )
}

echo "serve_month: $JOBS_PER_DAY jobs a day, $DAYS days, time scale $SCALE" >&2
run keep --keep "$KEEP" --keep-plans 100
run off --keep forever --keep-plans 0

python3 - "$JOBS_PER_DAY" "$DAYS" "$SCALE" "$KEEP" >table.md <<'EOF'
import json, sys
per_day, days, scale, keep = sys.argv[1:5]
A = json.load(open("keep.json"))
B = json.load(open("off.json"))
mib = lambda r: "%.1f + %.1f" % (r["db"] / 2**20, r["wal"] / 2**20)
print("%s jobs a day for %s days, time scale %s (one service day in %.1f wall s)"
      % (per_day, days, scale, 86400 / float(scale)))
print()
print("| day | --keep %s: store MiB (db + WAL) | jobs / events / plan rows | submit p50 / p99 / max ms | --keep forever: store MiB | jobs / events / plan rows | submit p50 / p99 / max ms | sent late by (service s), keep / forever |" % keep)
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
show = sorted(set([d for d in [1, 10, len(A)] + list(range(5, len(A) + 1, 5))
                  if d <= len(A)]))
for d in show:
    a, b = A[d - 1], B[d - 1]
    print("| %d | %s | %d / %d / %d | %.1f / %.1f / %.1f | %s | %d / %d / %d | %.1f / %.1f / %.1f | %.0f / %.0f |" % (
        d, mib(a), a["jobs"], a["events"], a["plans"], a["p50_ms"],
        a["p99_ms"], a["max_ms"], mib(b), b["jobs"], b["events"], b["plans"],
        b["p50_ms"], b["p99_ms"], b["max_ms"], a["late_s"], b["late_s"]))
bad = [(n, r["day"], r["codes"]) for n, R in (("keep", A), ("forever", B))
       for r in R if set(r["codes"]) - {"201"}]
print()
print("Answers other than 201: %s" % (bad if bad else "none"))
EOF
cat table.md
if [ -n "$OUTMD" ]; then
    cp table.md "$OUTMD"
fi
