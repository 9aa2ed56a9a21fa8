# tests/e2e/lib/serve.sh: what the efplan serve tests share, sourced after
# lib/common.sh, in $T:
#   new_token FILE NAME [--operator]   a token of db.sqlite into FILE (0600)
#   serve_start CLUSTER [serve options...]
#                                      start the daemon on db.sqlite, on a
#                                      free loopback port (curves
#                                      $SERVE_CURVES, default A100); sets
#                                      SRV, URL
#   serve_stop                         SIGTERM and wait (exit status kept
#                                      in SERVE_RC)
#   fail REASON                        (replaces lib/common.sh's) the
#                                      reason, serve.log's last 30 lines,
#                                      the reason again (tests/run.sh
#                                      shows a failure's last 40 lines)
# The daemon's output goes to serve.log. A bounded wait for its port file
# is the only wait (no timing assertion).

fail() {
    echo "FAIL: $*"; echo "--- serve.log (tail)"; tail -30 serve.log 2>/dev/null
    echo "FAIL: $*"; exit 1
}

# tokens: the text efplan token add prints (efp_ID_SECRET)
tok_re='efp_[a-z0-9]\{10\}_[A-Za-z0-9_-]\{43\}'
SRV=

new_token() { # file, token add arguments...
    f=$1; shift
    "$EFPLAN" token add "$@" --db db.sqlite >"$f.out" 2>&1 ||
        { cat "$f.out"; fail "token add $* failed"; }
    grep -o "$tok_re" "$f.out" | head -1 >"$f"
    [ -s "$f" ] || { cat "$f.out"; fail "token add $* printed no token"; }
    chmod 600 "$f"
}

serve_start() { # cluster, extra serve options...
    cl=$1; shift
    rm -f port
    $V "$EFPLAN" serve --db db.sqlite --cluster "$cl" \
        --curves "${SERVE_CURVES:-A100}" \
        --listen 127.0.0.1:0 --port-file port "$@" >>serve.log 2>&1 &
    SRV=$!
    i=0
    while [ ! -s port ]; do
        kill -0 "$SRV" 2>/dev/null || { cat serve.log; fail "serve exited"; }
        i=$((i + 1))
        [ $i -le 600 ] || { cat serve.log; fail "no port file after 600 tries"; }
        sleep 0.05
    done
    URL="http://127.0.0.1:$(cat port)"
}

serve_stop() {
    SERVE_RC=0
    if [ -n "$SRV" ]; then
        kill "$SRV" 2>/dev/null || true
        wait "$SRV" 2>/dev/null || SERVE_RC=$?
    fi
    SRV=
}
