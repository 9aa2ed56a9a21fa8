#!/bin/sh
# End-to-end: efplan serve over HTTPS (--tls-cert/--tls-key, GnuTLS in
# libmicrohttpd) with a self-signed certificate made by openssl:
# - curl trusting that certificate gets /healthz and an authenticated
#   /v1/jobs; plain HTTP to the same port gets no answer;
# - the CLI client trusts it through EFPLAN_CACERT, and refuses it
#   without (the certificate problem named, exit 5);
# - half a TLS configuration (a certificate without its key) and an
#   unreadable key are usage/input errors before anything listens.
. "$(dirname "$0")/lib/common.sh"
cd "$T"
SRV=
cleanup() {
    [ -n "$SRV" ] && { kill "$SRV" 2>/dev/null || true; wait "$SRV" 2>/dev/null || true; }
    rm -rf "$T"
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem \
    -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
    >openssl.log 2>&1 || { cat openssl.log; fail "openssl could not make a certificate"; }
"$EFPLAN" token add ops --operator --db s.db >ops.tok 2>/dev/null
chmod 600 ops.tok

# half a configuration, a missing key: refused before listening
rc=0; "$EFPLAN" serve --db s.db --cluster n4g8 --curves A100 \
    --listen 127.0.0.1:0 --tls-cert cert.pem 2>err || rc=$?
[ $rc = 2 ] || fail "a certificate without its key: exit $rc, expected 2"
grep -q 'tls-key' err || { cat err; fail "no word of --tls-key"; }
rc=0; "$EFPLAN" serve --db s.db --cluster n4g8 --curves A100 \
    --listen 127.0.0.1:0 --tls-cert cert.pem --tls-key nope.pem 2>err || rc=$?
[ $rc = 3 ] || { cat err; fail "a missing key file: exit $rc, expected 3"; }
grep -q 'nope.pem' err || { cat err; fail "the missing key is not named"; }

$V "$EFPLAN" serve --db s.db --cluster n4g8 --curves A100 --listen 127.0.0.1:0 \
    --port-file port --tls-cert cert.pem --tls-key key.pem 2>serve.log &
SRV=$!
for _ in $(seq 1 200); do [ -s port ] && break; sleep 0.05; done
[ -s port ] || { cat serve.log; fail "the HTTPS server did not start"; }
P=$(cat port)
grep -q "listening on https://127.0.0.1:$P" serve.log || { cat serve.log; fail "log line"; }
code=$(curl -s -o h.json -w '%{http_code}' --cacert cert.pem "https://127.0.0.1:$P/healthz")
[ "$code" = 200 ] || fail "HTTPS /healthz: $code"
grep -q '"status":"ok"' h.json || fail "healthz body"
code=$(curl -s -o j.json -w '%{http_code}' --cacert cert.pem \
    -H "Authorization: Bearer $(cat ops.tok)" "https://127.0.0.1:$P/v1/jobs")
[ "$code" = 200 ] || fail "HTTPS /v1/jobs: $code"
# plain HTTP to the TLS port: no HTTP answer
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$P/healthz" || true)
[ "$code" = 000 ] || fail "plain HTTP to the HTTPS port answered $code"
# the CLI: trusted through EFPLAN_CACERT; refused without
EFPLAN_SERVER="https://127.0.0.1:$P" EFPLAN_CACERT=cert.pem \
    "$EFPLAN" jobs --token-file ops.tok >out 2>err || { cat err; fail "jobs over HTTPS"; }
grep -q 'no jobs' out || { cat out; fail "jobs output"; }
rc=0; EFPLAN_SERVER="https://127.0.0.1:$P" "$EFPLAN" jobs --token-file ops.tok \
    >out 2>err || rc=$?
[ $rc = 5 ] || fail "an untrusted certificate: exit $rc, expected 5"
grep -qi 'certificate' err || { cat err; fail "the certificate problem is not named"; }
kill "$SRV"; wait "$SRV" || fail "the HTTPS server did not stop cleanly"
SRV=
echo "serve_tls: ok"
