#!/bin/sh
# End-to-end: every runnable example of README.md and docs/*.md prints
# what its document shows (tests/e2e/lib/doctest.py; the convention is in
# docs/conventions.md, "Examples in these documents"), so examples cannot
# go stale. First the harness itself, on documents made here:
# - a document whose examples print what it shows passes: masks (a
#   temporary path, an ISO time, Unix seconds, a wall-clock duration, a
#   token), `...` lines and `...` inside a line, a command over two
#   lines, state carried from one block to the next, a background
#   process left running;
# - a deliberately wrong expected output fails, naming the document's
#   line and showing the diff; so do a missing line, an extra line, and a
#   command that prints where its document shows nothing;
# - a `$ ` command in a fence that is not `console` is refused (exit 2).
# Then README.md and every docs/*.md, each in a scratch directory of its
# own, with the efplan under test on PATH; the README must hold a checked
# example of plan, oracle, apply, serve and submit; a ```sh fence (not
# run) must have its reason on the line before it (<!-- not run: WHY -->).
. "$(dirname "$0")/lib/common.sh"
ROOT=${EFPLAN_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
DT="$(dirname "$0")/lib/doctest.py"
command -v python3 >/dev/null || fail "python3 is missing (make deps)"
command -v bash >/dev/null || fail "bash is missing"

# the harness's own tests need no repository: an empty one is faster
mkdir "$T/root"
dt() { python3 "$DT" --root "$T/root" --efplan "$EFPLAN" "$@"; }

# --- the harness on a good document -------------------------------------
cat >"$T/good.md" <<'EOF'
# A document

Text between blocks is not run.

```console
$ echo hello; mkdir -p sub; echo kept >sub/file
hello
$ printf 'made %s at 2026-12-06T20:17:29Z (%s)\n' /tmp/x.abc/q.db 1796588249
made /tmp/docs/q.db at 2031-01-01T00:00:00Z (1800000000)
$ echo 'took 0.73 s, slack 7h 44m, token efp_ab12cd34ef_x'
took 9.99 s, slack 7h 44m, token efp_zz99zz99zz_x
$ seq 1 10
1
2
...
9
10
$ echo 'a long line whose middle varies: 12345 then the end'
a long line whose middle ... then the end
$ echo one \
    two
one two
```

```json
{"not": "run"}
```

```console
$ cat sub/file
kept
$ sleep 30 &
$ echo last
last
```
EOF
dt "$T/good.md" >"$T/good.out" 2>&1 ||
    { cat "$T/good.out"; fail "the harness fails a document that is right"; }
grep -q '^doctest: 9 example(s) in 1 document(s), 0 failed$' "$T/good.out" ||
    { cat "$T/good.out"; fail "the harness did not run 9 examples"; }

# --- the harness on wrong documents --------------------------------------
bad() { # name, what it checks; the document on standard input
    cat >"$T/$1.md"
    rc=0
    dt "$T/$1.md" >"$T/$1.out" 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || { cat "$T/$1.out"; fail "$2: exit $rc, expected 1"; }
    grep -q "^FAIL $T/$1.md:" "$T/$1.out" ||
        { cat "$T/$1.out"; fail "$2: the failure names no line"; }
}
bad wrong 'a wrong expected output' <<'EOF'
```console
$ echo right
right
$ echo 'admitted 24, rejected 4'
admitted 25, rejected 4
```
EOF
grep -q '^FAIL .*/wrong.md:4: \$ echo '"'"'admitted 24' "$T/wrong.out" ||
    { cat "$T/wrong.out"; fail "the wrong output's line is not named"; }
grep -q '^    -admitted 25, rejected 4$' "$T/wrong.out" &&
    grep -q '^    +admitted 24, rejected 4$' "$T/wrong.out" ||
    { cat "$T/wrong.out"; fail "no diff of the wrong output"; }
grep -q '1 failed$' "$T/wrong.out" ||
    { cat "$T/wrong.out"; fail "the right example failed too"; }
bad missing 'a line the command does not print' <<'EOF'
```console
$ echo one
one
two
```
EOF
bad extra 'a line the document does not show' <<'EOF'
```console
$ printf 'one\ntwo\n'
one
```
EOF
bad silent 'output where the document shows none' <<'EOF'
```console
$ echo surprise
$ true
```
EOF
bad masks 'a difference outside the masks' <<'EOF'
```console
$ echo 'at 2026-12-06T20:17:29Z: 24 admitted'
at 2026-12-06T20:17:29Z: 23 admitted
```
EOF
# --update rewrites what drifted, keeps what matches (a `...` included)
cat >"$T/upd.md" <<'EOF'
Before.

```console
$ printf 'head\nadmitted 24\nmiddle 1\nmiddle 2\ntail\n'
head
admitted 25
...
tail
$ echo same
same
```
EOF
dt --update "$T/upd.md" >"$T/upd.out" 2>&1 &&
    fail "--update: a drifted document passed"
dt "$T/upd.md" >"$T/upd2.out" 2>&1 ||
    { cat "$T/upd.out" "$T/upd2.out"; fail "--update: the document still fails"; }
grep -q '^admitted 24$' "$T/upd.md" && grep -q '^\.\.\.$' "$T/upd.md" &&
    grep -q '^Before\.$' "$T/upd.md" && ! grep -q 'admitted 25' "$T/upd.md" ||
    { cat "$T/upd.md"; fail "--update: not the lines expected"; }
cat >"$T/fence.md" <<'EOF'
```sh
$ efplan plan --jobs q.json
```
EOF
rc=0
dt "$T/fence.md" >"$T/fence.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'fence.md:2: a command' "$T/fence.out" ||
    { cat "$T/fence.out"; fail "a \$ command in a sh fence: exit $rc"; }

# --- the documents --------------------------------------------------------
# the README leads with the card's three jobs and the service, each a
# checked recipe: a plan file, the oracle, a real apply, efplan serve
python3 "$DT" --root "$ROOT" --efplan "$EFPLAN" --list "$ROOT/README.md" \
    >"$T/readme.list" 2>&1 || { cat "$T/readme.list"; fail "README.md"; }
for c in 'efplan plan --jobs' 'efplan oracle' 'efplan apply' 'efplan serve' \
         'efplan submit'; do
    grep -qF ": \$ $c" "$T/readme.list" ||
        { cat "$T/readme.list"; fail "README.md runs no \"$c\" example"; }
done
set -- "$ROOT/README.md"
for f in "$ROOT"/docs/*.md; do
    [ -f "$f" ] && set -- "$@" "$f"
done
# a command a test cannot run here (root, systemd, Slurm, a recipe another
# test runs word for word) stays in a ```sh fence, with its reason on the
# line before: <!-- not run: WHY --> (or <!-- not run here: WHY -->)
sh_reasons() { # files...: the ```sh fences without a reason, one a line
    for f in "$@"; do
        awk -v F="$f" '/^```sh/ && prev !~ /^<!-- not run( here)?: .+ -->$/ {
                printf "%s:%d: a ```sh fence without a <!-- not run: WHY --> line before it (make it a ```console example a test runs)\n", F, NR }
            { prev = $0 }' "$f"
    done
}
printf '<!-- not run: a reason -->\n```sh\nmake a\n```\n\n```sh\nmake b\n```\n' \
    >"$T/shdoc.md"
sh_reasons "$T/shdoc.md" >"$T/shdoc.out"
[ "$(cat "$T/shdoc.out")" = "$T/shdoc.md:6: a \`\`\`sh fence without a <!-- not run: WHY --> line before it (make it a \`\`\`console example a test runs)" ] ||
    { cat "$T/shdoc.out"; fail "the sh fence check"; }
sh_reasons "$@" >"$T/sh.out"
[ ! -s "$T/sh.out" ] || { cat "$T/sh.out"; fail "sh fences without a reason"; }
python3 "$DT" --root "$ROOT" --efplan "$EFPLAN" "$@" >"$T/docs.out" 2>&1 ||
    { cat "$T/docs.out"; fail "documents drifted"; }
tail -1 "$T/docs.out"
