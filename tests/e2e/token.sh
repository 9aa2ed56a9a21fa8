#!/bin/sh
# End-to-end: efplan token keeps its secrets.
# - token add prints the token alone, one line of the documented form;
#   the note on standard error names the user, role and public id, never
#   the secret; the store is mode 0600 and holds no secret (strings);
# - token list (table and --json, keys sorted) shows ids, names, roles
#   and times, never a secret;
# - token revoke by id and by name says how many; none matched is exit 3;
# - bad names are usage errors (exit 2), a missing --db too; a --db that
#   is a directory, a text file, another program's SQLite file or a
#   missing store (list, revoke) is exit 3 with the path in the message.
. "$(dirname "$0")/lib/common.sh"
cd "$T"

form='^efp_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$'

$V "$EFPLAN" token add alice --db s.db >a.out 2>a.err ||
    { cat a.err; fail "token add alice failed"; }
[ "$(wc -l <a.out)" -eq 1 ] || fail "token add printed more than one line"
grep -Eq "$form" a.out || fail "token add printed $(cat a.out)"
ta=$(cat a.out)
ida=$(printf '%s' "$ta" | cut -c5-14)
secret_a=$(printf '%s' "$ta" | cut -c16-)
grep -q "token for alice (user) created: efp_${ida}_\.\.\. shown once" a.err ||
    { cat a.err; fail "no note on standard error"; }
grep -qF -- "$secret_a" a.err && fail "the secret is on standard error"
[ "$(stat -c %a s.db)" = 600 ] || fail "the store is mode $(stat -c %a s.db)"

$V "$EFPLAN" token add bob --operator --db s.db >b.out 2>b.err ||
    { cat b.err; fail "token add bob failed"; }
grep -Eq "$form" b.out || fail "token add bob printed $(cat b.out)"
tb=$(cat b.out)
idb=$(printf '%s' "$tb" | cut -c5-14)
secret_b=$(printf '%s' "$tb" | cut -c16-)
grep -q "token for bob (operator) created: efp_${idb}_" b.err ||
    fail "bob's note"
[ "$ta" != "$tb" ] || fail "two tokens are the same"

# list: no secrets; the store neither
$V "$EFPLAN" token list --db s.db >l.out || fail "token list failed"
head -1 l.out | grep -Eq '^id +name +role +unix_user +max_queued +max_submit_rate +created +state$' ||
    fail "no table header: $(head -1 l.out)"
grep -Eq "^$ida +alice +user +- +- +- +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z +live$" \
    l.out || { cat l.out; fail "alice's row"; }
grep -Eq "^$idb +bob +operator .* live$" l.out || fail "bob's row"
$V "$EFPLAN" token list --db s.db --json >l.json || fail "token list --json"
grep -q '^  "tokens": \[' l.json || fail "no tokens array"
grep -q "{\"created\": \"[0-9T:Z-]*\", \"id\": \"$ida\", \"max_queued\": null, \"max_submit_rate\": null, \"name\": \"alice\", \"revoked\": null, \"role\": \"user\", \"state\": \"live\", \"unix_user\": null}" \
    l.json || { cat l.json; fail "alice's JSON (keys sorted)"; }
for f in l.out l.json a.err b.err; do
    grep -qF -- "$secret_a" $f && fail "alice's secret in $f"
    grep -qF -- "$secret_b" $f && fail "bob's secret in $f"
done
for f in s.db s.db-wal; do
    [ -f $f ] || continue
    strings -n 8 $f >strings.out
    grep -qF -- "$secret_a" strings.out && fail "alice's secret in $f"
    grep -qF -- "$secret_b" strings.out && fail "bob's secret in $f"
done
strings -n 8 s.db | grep -q "$ida" || fail "strings does not see the ids"

# revoke by id, then by name
$V "$EFPLAN" token add alice --db s.db >a2.out 2>/dev/null || fail "alice 2"
$V "$EFPLAN" token revoke "$idb" --db s.db >r.out || fail "revoke bob's id"
grep -qx "revoked 1 token: \"$idb\"" r.out || fail "revoke said $(cat r.out)"
$V "$EFPLAN" token list --db s.db >l2.out || fail "token list"
grep -Eq "^$idb +bob +operator .* revoked [0-9]{4}-.*Z$" l2.out ||
    { cat l2.out; fail "bob is not revoked in the list"; }
$V "$EFPLAN" token revoke alice --db s.db >r2.out || fail "revoke alice"
grep -qx 'revoked 2 tokens: "alice"' r2.out || fail "revoke said $(cat r2.out)"
rc=0
$V "$EFPLAN" token revoke alice --db s.db >r3.out 2>r3.err || rc=$?
[ $rc -eq 3 ] || fail "revoking again: exit $rc, expected 3"
grep -q 'no live token has the id or name "alice"' r3.err ||
    fail "revoking again said $(cat r3.err)"
[ -s r3.out ] && fail "a failed revoke printed on standard output"
$V "$EFPLAN" token list --db s.db >l3.out || fail "token list"
grep -q ' live$' l3.out && fail "live tokens left"

# bad names: usage errors, nothing stored
for name in 'a b' '.hidden' 'x/y' "$(printf 'a%.0s' $(seq 65))" 'caf€'; do
    rc=0
    $V "$EFPLAN" token add --db s.db -- "$name" >n.out 2>n.err || rc=$?
    [ $rc -eq 2 ] || fail "name '$name': exit $rc, expected 2"
    grep -q 'token name ".*": .*(1 to 64 characters' n.err ||
        fail "name '$name' said $(cat n.err)"
    [ -s n.out ] && fail "a refused add printed a token"
done
rc=0
$V "$EFPLAN" token add --db s.db -- '-x' >n.out 2>n.err || rc=$?
[ $rc -eq 2 ] && grep -q "starts with '-'" n.err || fail "name '-x'"
rc=0
$V "$EFPLAN" token add --db s.db >n.out 2>n.err || rc=$?
[ $rc -eq 2 ] && grep -q 'NAME is required' n.err || fail "no name"
$V "$EFPLAN" token list --db s.db >l4.out || fail "token list"
[ "$(wc -l <l4.out)" -eq 4 ] || fail "a refused add stored something"

# --db missing, a directory, a text file, another SQLite file, no store
for sub in "add carol" "list" "revoke carol"; do
    rc=0
    # shellcheck disable=SC2086
    $V "$EFPLAN" token $sub >n.out 2>n.err || rc=$?
    [ $rc -eq 2 ] && grep -q -- '--db FILE is required' n.err ||
        fail "token $sub without --db: exit $rc: $(cat n.err)"
done
mkdir dir.db
printf 'not a database\n%.0s' $(seq 100) >text.db
sqlite_db=""
if command -v sqlite3 >/dev/null; then
    sqlite3 other.db 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
    sqlite_db=other.db
fi
for db in dir.db text.db $sqlite_db; do
    cp -R $db $db.before
    for sub in "add carol" "list" "revoke carol"; do
        rc=0
        # shellcheck disable=SC2086
        $V "$EFPLAN" token $sub --db $db >n.out 2>n.err || rc=$?
        [ $rc -eq 3 ] || fail "token $sub --db $db: exit $rc, expected 3"
        grep -q "^efplan: error: $db: .*\(directory\|not an efplan store\)" \
            n.err || fail "token $sub --db $db said $(cat n.err)"
        [ -s n.out ] && fail "token $sub --db $db printed $(cat n.out)"
    done
    diff -r $db $db.before >/dev/null || fail "$db was changed"
done
for sub in "list" "revoke carol"; do
    rc=0
    # shellcheck disable=SC2086
    $V "$EFPLAN" token $sub --db none.db >n.out 2>n.err || rc=$?
    [ $rc -eq 3 ] && grep -q 'none.db: no such store' n.err ||
        fail "token $sub of a missing store: exit $rc: $(cat n.err)"
    [ -e none.db ] && fail "token $sub created a store"
done

# help
$V "$EFPLAN" token --help | grep -q '^Usage: efplan token add' ||
    fail "token --help"
for sub in add list revoke; do
    $V "$EFPLAN" token $sub --help | grep -q "^Usage: efplan token $sub" ||
        fail "token $sub --help"
done
rc=0
$V "$EFPLAN" token lst --db s.db >n.out 2>n.err || rc=$?
[ $rc -eq 2 ] && grep -q 'did you mean "list"' n.err || fail "token lst"
echo "token: ok"
