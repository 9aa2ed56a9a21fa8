#!/bin/sh
# End-to-end: efplan serve's HTTP front holds against one local process
# (docs/security.md, "Connections"), with a small Python client:
# - 300 idle connections held by one process (over --max-waiting 128):
#   another client's GET /healthz is answered (a 5 s bound defines
#   "answered"; the time it took is printed, not asserted);
# - a client that sends one header line a second is closed by the header
#   deadline (--header-timeout 2) before its 20 lines are sent;
# - a body that dribbles past --request-timeout 2 gets 408 with the JSON
#   error body; a body that stops is closed (within 30 s);
# - a token with --per-token 2 requests under way gets 429 (JSON) for a
#   third;
# - the hostile heads get a JSON 4xx with their message: a 100 KB path
#   (414), 10,000 headers and a 1 MB header (431), GET /%ff (404 whose
#   message keeps \xFF); what libmicrohttpd refuses to parse itself (a
#   negative Content-Length, an HTTP/2 preface, HTTP/0.9) is answered
#   4xx/5xx and closed;
# - what a head says of itself is checked before anything is done: a %00
#   in the path or query (it would end an id early: a1%00x named a1) is
#   400, a Transfer-Encoding other than chunked 501, Content-Length twice
#   with two values, or with chunked, 400 (ambiguous framing), a
#   Content-Type that only starts with application/json 415, a query
#   parameter without a value or given twice 400, Authorization twice
#   400; none makes a job;
# - SIGTERM while an answer is being sent (7 MB to a reader with a 4 KiB
#   receive buffer): it arrives whole, a request that comes meanwhile
#   gets 503 (JSON), and the daemon exits 0.
# Counts and bounds only: no timing assertion.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
cd "$T"
trap '[ -z "$SRV" ] || kill "$SRV" 2>/dev/null; rm -rf "$T"' EXIT

new_token alice.tok alice
serve_start n1g8 --header-timeout 2 --request-timeout 2 --per-token 2 \
    --max-waiting 128
PORT=$(cat port)

cat >limits.py <<'EOF'
import json, socket, subprocess, sys, time

port, tok = int(sys.argv[1]), open(sys.argv[2]).read().strip()
fails = []

def fail(m):
    fails.append(m)
    print("FAIL: " + m)

def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return s

def read_all(s, limit=30):
    s.settimeout(limit)
    d = b""
    try:
        while True:
            x = s.recv(65536)
            if not x:
                break
            d += x
    except (socket.timeout, ConnectionResetError) as e:
        d += b"<<" + str(e).encode()
    return d

def json_error(d, status, what):
    head, _, body = d.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 %d" % status):
        fail("%s: expected %d, got %r" % (what, status, head[:80]))
        return None
    if b"application/json" not in head:
        fail("%s: not JSON: %r" % (what, head))
        return None
    try:
        e = json.loads(body.decode())["error"]
    except Exception as ex:
        fail("%s: body %r: %s" % (what, body[:200], ex))
        return None
    if e.get("status") != status or not e.get("message"):
        fail("%s: error body %r" % (what, e))
    return e

# 300 idle connections, then another client's /healthz
idle = []
for i in range(300):
    try:
        idle.append(conn())
    except OSError as e:
        fail("idle connection %d: %s" % (i, e))
        break
t0 = time.monotonic()
r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                    "--max-time", "5", "http://127.0.0.1:%d/healthz" % port],
                   capture_output=True, text=True)
dt = time.monotonic() - t0
if r.stdout != "200":
    fail("/healthz with 300 idle connections held: %r" % r.stdout)
closed = 0
for s in idle:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print("300 idle connections: /healthz answered %s in %.3f s; %d of them "
      "closed by the server" % (r.stdout, dt, closed))
for s in idle:
    s.close()

# the header deadline: one header line a second
s = conn()
s.sendall(b"GET /healthz HTTP/1.1\r\n")
sent = 0
for i in range(20):
    time.sleep(1)
    try:
        s.sendall(b"X-Slow-%d: y\r\n" % i)
        sent += 1
    except OSError:
        break
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            break
    except BlockingIOError:
        pass
    except OSError:
        break
    s.setblocking(True)
if sent >= 20:
    fail("a head sent one line a second for 20 s was not closed")
print("header dribbler: closed after %d lines" % sent)
s.close()

# the body deadline: the 408 reaches the client
def post_head(length):
    return (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
            tok.encode() + b"\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % length)
s = conn()
s.sendall(post_head(5))
for i in range(5):
    time.sleep(1)
    s.sendall(b" ")
e = json_error(read_all(s), 408, "body dribbled past --request-timeout")
if e and "did not arrive within 2 s" not in e["message"]:
    fail("408 message: %r" % e["message"])
s.close()
print("body dribbler: 408 with its JSON body")

# a body that stops: closed
s = conn()
s.sendall(post_head(100) + b"{")
d = read_all(s, 30)
if d.startswith(b"HTTP/1.1 2") or b"<<" in d:
    fail("a stalled body was not closed: %r" % d[:100])
s.close()
print("stalled body: closed")

# per token: 2 under way, the third 429
held = []
for i in range(2):
    h = conn()
    # Expect: 100-continue: the "100 Continue" comes once the head is
    # checked and the request counts for its token
    h.sendall(post_head(100).replace(b"\r\n\r\n",
                                     b"\r\nExpect: 100-continue\r\n\r\n"))
    h.settimeout(30)
    got = b""
    while b"\r\n\r\n" not in got:
        x = h.recv(1024)
        if not x:
            break
        got += x
    if not got.startswith(b"HTTP/1.1 100"):
        fail("held request %d: %r" % (i, got[:80]))
    h.sendall(b"{")
    held.append(h)
s = conn()
s.sendall(post_head(2) + b"{}")
e = json_error(read_all(s), 429, "a third request of one token")
if e and "requests under way" not in e["message"]:
    fail("429 message: %r" % e["message"])
for h in held:
    h.close()
print("per token: the third request got 429")

# hostile heads: JSON where the handler sees them
cases = [
    ("a 100 KB path", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
     414, "over the limit"),
    ("10,000 headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" +
     b"".join(b"X-%d: y\r\n" % i for i in range(10000)) + b"\r\n", 431,
     "headers"),
    ("a 1 MB header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
     b"a" * 1000000 + b"\r\n\r\n", 431, "bytes"),
    ("GET /%ff", b"GET /%ff HTTP/1.1\r\nHost: x\r\n\r\n", 404, "/\\xFF"),
]
# what the head says of itself, checked before anything is read or done
auth = b"Authorization: Bearer " + tok.encode() + b"\r\n"
ctj = b"Content-Type: application/json\r\n"
jb = (b'{"id": "h1", "model": "resnet50", "batch_size": 64, '
      b'"iterations": 100, "deadline": null}')
def post(extra, body=jb, path=b"/v1/jobs"):
    return (b"POST " + path + b" HTTP/1.1\r\nHost: x\r\n" + auth + extra +
            b"\r\n" + body)
cl = b"Content-Length: %d\r\n" % len(jb)
cases += [
    # a %00 decodes to a NUL, which would end the id early: a1%00x named a1
    ("GET /v1/jobs/h0%00x", b"GET /v1/jobs/h0%00x HTTP/1.1\r\nHost: x\r\n" +
     auth + b"\r\n", 400, "%00"),
    ("DELETE /v1/jobs/h0%00x", b"DELETE /v1/jobs/h0%00x HTTP/1.1\r\n"
     b"Host: x\r\n" + auth + b"\r\n", 400, "%00"),
    ("GET /v1/jobs?all=1%00", b"GET /v1/jobs?all=1%00 HTTP/1.1\r\n"
     b"Host: x\r\n" + auth + b"\r\n", 400, "%00"),
    # a transfer coding libmicrohttpd does not decode: it would read the
    # body until the connection closes, and nothing would be answered
    ("Transfer-Encoding: gzip", post(ctj + b"Transfer-Encoding: gzip\r\n"),
     501, "Transfer-Encoding"),
    ("two Transfer-Encoding", post(ctj + b"Transfer-Encoding: chunked\r\n"
     b"Transfer-Encoding: gzip\r\n", b"0\r\n\r\n"), 400,
     "Transfer-Encoding"),
    # ambiguous framing (request smuggling): refused, not guessed
    ("Content-Length twice", post(ctj + cl + b"Content-Length: 3\r\n"), 400,
     "Content-Length"),
    ("Content-Length and chunked", post(ctj + cl +
     b"Transfer-Encoding: chunked\r\n", b"%x\r\n%s\r\n0\r\n\r\n" %
     (len(jb), jb)), 400, "Content-Length"),
    # application/json exactly (parameters after ';' allowed)
    ("Content-Type: application/jsonx", post(
     b"Content-Type: application/jsonx\r\n" + cl), 415, "jsonx"),
    # a query parameter without a value, or twice: not silently ignored
    ("GET /v1/jobs?all", b"GET /v1/jobs?all HTTP/1.1\r\nHost: x\r\n" +
     auth + b"\r\n", 400, "all"),
    ("GET /v1/jobs?state=queued&state=done", b"GET /v1/jobs?state=queued"
     b"&state=done HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n", 400,
     "twice"),
    # two identities: refused, not the first taken
    ("Authorization twice", b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\n" +
     auth + b"Authorization: Bearer efp_x_y\r\n\r\n", 400,
     "Authorization given 2 times"),
]
for what, req, status, sub in cases:
    s = conn()
    s.sendall(req)
    s.shutdown(socket.SHUT_WR)
    e = json_error(read_all(s), status, what)
    if e and sub not in e["message"]:
        fail("%s: message %r lacks %r" % (what, e["message"], sub))
    s.close()
# none of them made a job: h1 (the body above) and h0 are unknown
s = conn()
s.sendall(b"GET /v1/jobs?all=0 HTTP/1.1\r\nHost: x\r\n" + auth +
          b"Connection: close\r\n\r\n")
d = read_all(s)
s.close()
if not d.startswith(b"HTTP/1.1 200") or b'"jobs":[]' not in d:
    fail("after the refused heads: GET /v1/jobs is %r" % d[:300])
print("hostile heads: JSON %s" % ", ".join(str(c[2]) for c in cases))
# what libmicrohttpd answers itself: an error, and the connection closed
for what, req in [("Content-Length: -1", b"POST /v1/jobs HTTP/1.1\r\nHost: x"
                   b"\r\nContent-Length: -1\r\n\r\n"),
                  ("an HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
                  ("HTTP/0.9", b"GET /healthz\r\n")]:
    s = conn()
    s.sendall(req)
    d = read_all(s, 30)
    if not (d.startswith(b"HTTP/1.1 4") or d.startswith(b"HTTP/1.1 5")) \
            or b"<<" in d:
        fail("%s: %r" % (what, d[:80]))
    s.close()
sys.exit(1 if fails else 0)
EOF
python3 limits.py "$PORT" alice.tok || { tail -20 serve.log; fail "the limits"; }
# the server still answers, and said what it closed
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/healthz")
[ "$code" = 200 ] || fail "/healthz after the limits: $code"
kill "$SRV"; wait "$SRV" || true; SRV=
grep -q "http: closed .*--max-waiting" serve.log ||
    { tail serve.log; fail "no log line for the connections closed over --max-waiting"; }
grep -q "http: closed .*--header-timeout" serve.log ||
    { tail serve.log; fail "no log line for the header deadline"; }

# SIGTERM stops the service after the requests under way (http.h): an
# answer still being sent (GET /v1/queue of about 7 MB to a reader with a
# 4 KiB receive buffer) arrives whole, a request that comes meanwhile
# gets 503 (JSON), and the daemon exits 0
serve_start n1g8
cat >drain.py <<'EOF'
import json, os, signal, socket, sys, time

port, tok, pid = int(sys.argv[1]), open(sys.argv[2]).read().strip(), \
    int(sys.argv[3])
auth = b"Authorization: Bearer " + tok.encode() + b"\r\n"

def fail(m):
    print("FAIL: " + m)
    sys.exit(1)

def read_all(s):
    s.settimeout(60)
    d = b""
    while True:
        x = s.recv(65536)
        if not x:
            return d
        d += x

def exchange(req):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(req)
    d = read_all(s)
    s.close()
    return d

for i in range(30):
    b = json.dumps({"id": "q%d" % i, "model": "resnet50", "batch_size": 64,
                    "iterations": 100, "deadline": None,
                    "command": ["true"] + ["x" * 4000] * 60}).encode()
    d = exchange(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close"
                 b"\r\nContent-Type: application/json\r\n" + auth +
                 b"Content-Length: %d\r\n\r\n" % len(b) + b)
    if not d.startswith(b"HTTP/1.1 201"):
        fail("job q%d: %r" % (i, d[:200]))
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
s.sendall(b"GET /v1/queue HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
          auth + b"\r\n")
got = b""
while b"\r\n\r\n" not in got:
    x = s.recv(4096)
    if not x:
        fail("GET /v1/queue: closed after %r" % got[:100])
    got += x
if not got.startswith(b"HTTP/1.1 200"):
    fail("GET /v1/queue: %r" % got[:100])
seen = os.path.getsize("serve.log")  # the earlier daemon's lines before
os.kill(pid, signal.SIGTERM)
for i in range(1200):
    if b"http: stopping" in open("serve.log", "rb").read()[seen:]:
        break
    time.sleep(0.05)
else:
    fail("no \"http: stopping\" line in serve.log")
d = exchange(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
head, _, body = d.partition(b"\r\n\r\n")
if not head.startswith(b"HTTP/1.1 503"):
    fail("a request while stopping: %r" % d[:200])
e = json.loads(body)["error"]
if e["status"] != 503 or "stopping" not in e["message"]:
    fail("a request while stopping: %r" % e)
d = got + read_all(s)
head, _, body = d.partition(b"\r\n\r\n")
cl = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
      if l.lower().startswith(b"content-length:")]
if not cl or len(body) != cl[0]:
    fail("GET /v1/queue while stopping: %d bytes of %s" % (len(body), cl))
if len(json.loads(body)["jobs"]) != 30:
    fail("GET /v1/queue while stopping: not the 30 jobs")
print("stopping: the answer under way arrived whole (%d bytes), a new "
      "request got 503" % len(body))
EOF
python3 drain.py "$(cat port)" alice.tok "$SRV" ||
    { tail -5 serve.log; fail "stopping with a request under way"; }
rc=0
wait "$SRV" || rc=$?
SRV=
[ $rc -eq 0 ] || { tail -5 serve.log; fail "SIGTERM while answering: exit $rc"; }
echo "serve_limits: ok"
