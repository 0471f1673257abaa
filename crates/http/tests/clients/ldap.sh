#!/usr/bin/env bash
# Users from the centre's directory, end to end: a real LDAP server
# (OpenLDAP's slapd, on 127.0.0.1 with its own config and database in a
# temporary folder) holds two users and a group of both, and NSS reads them
# through nslcd (nss-pam-ldapd), as on a cluster. Everything runs in a
# private mount namespace: the test's nsswitch.conf (passwd and group from
# `files ldap`) and nslcd.conf are bind-mounted over the machine's there
# only, and the machine's files and services are left alone (only an empty
# /run/nslcd is made as a mount point, and removed, where there is none).
# LDAP user A makes a key with `s3hpc keys create` on a server that never
# saw it before; the files it writes are A's; B reads A's object through
# the LDAP group; once B leaves the group in LDAP, B is refused within the
# documented cache time (a key's groups are cached a minute). Servers
# listen on 127.0.0.1 only. Prints `PASS`/`FAIL` per check and a closing
# `real clients: N passed, N failed, N skipped` line.
#
# Needs root, slapd and ldap-utils, nslcd and libnss-ldapd (Debian's
# packages), unshare and setpriv; skips without them.
#
# Usage: ldap.sh PATH/TO/s3hpc PATH/TO/python-with-boto3
set -uo pipefail

if [ "${1:-}" != --inside ]; then
    bin=$(realpath "$1")
    # Not resolved: a virtualenv's python is a link to the system's.
    python=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    missing=()
    for c in slapd nslcd ldapadd ldapmodify unshare setpriv; do
        command -v "$c" >/dev/null || missing+=("$c")
    done
    [ -e /etc/nslcd.conf ] || missing+=(/etc/nslcd.conf)
    compgen -G '/usr/lib/*/libnss_ldap.so.2' >/dev/null || compgen -G '/lib/*/libnss_ldap.so.2' >/dev/null ||
        missing+=(libnss_ldap.so.2)
    if [ "$(id -u)" != 0 ] || ((${#missing[@]})); then
        echo "ldap: skipped (needs root, and slapd, ldap-utils, nslcd and libnss-ldapd:" \
            "missing ${missing[*]:-root})"
        echo "real clients: 0 passed, 0 failed, 1 skipped"
        exit 0
    fi
    # nslcd's socket is at a fixed path, /run/nslcd/socket: a private folder
    # is mounted there in the namespace. If the machine has no /run/nslcd
    # (nslcd never started), the mount point is made here and removed after.
    made_run=
    if [ ! -d /run/nslcd ]; then mkdir /run/nslcd && made_run=1; fi
    trap '[ -n "$made_run" ] && rmdir /run/nslcd 2>/dev/null' EXIT
    trap 'exit 143' TERM INT
    unshare --mount --propagation private -- bash "$0" --inside "$bin" "$python"
    exit
fi

# Inside the private mount namespace from here on.
bin=$2 python=$3
work=$(mktemp -d /tmp/s3hpc-ldap.XXXXXX)
chmod 755 "$work"
ua=ldapa$$ ub=ldapb$$ team=ldapteam$$
uid_a=61001 uid_b=61002 gid_team=61100
base=dc=s3hpc,dc=test rootdn=cn=admin,dc=s3hpc,dc=test rootpw=ldap-test-secret-$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
passed=0 failed=0
suite=ldap
. "$(dirname "$0")/common.sh"
give_up() { # WHAT DETAILS: a step the rest needs failed
    fail "$1" "$2"
    echo "real clients: $passed passed, $failed failed, 0 skipped"
    exit 1
}
elapsed() { python3 -c "print(round($(date +%s.%N) - $1, 1))"; }

for id in $uid_a $uid_b; do
    getent passwd $id >/dev/null && give_up "the test's uids are free" "uid $id is already a user here"
done
getent group $gid_team >/dev/null && give_up "the test's gids are free" "gid $gid_team is already a group here"

# The directory: slapd as root, its config and database in $work.
lport=$(free_port)
mkdir "$work/ldap-db"
cat >"$work/slapd.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
pidfile $work/slapd.pid
argsfile $work/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 16777216
suffix "$base"
rootdn "$rootdn"
rootpw $rootpw
directory $work/ldap-db
access to * by * read
EOF
slapd -h "ldap://127.0.0.1:$lport/" -f "$work/slapd.conf" -d 0 >>"$work/slapd.log" 2>&1 &
pids+=($!)
wait_port "$lport" || give_up "slapd starts" "$(cat "$work/slapd.log")"
ldap() { "$@" -x -H "ldap://127.0.0.1:$lport/" -D "$rootdn" -w "$rootpw"; }
people() { # NAME UID
    printf 'dn: uid=%s,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\n' "$1" "$base"
    printf 'uid: %s\ncn: %s\nuidNumber: %s\ngidNumber: %s\nhomeDirectory: /nonexistent\nloginShell: /usr/sbin/nologin\n\n' \
        "$1" "$1" "$2" "$2"
    printf 'dn: cn=%s,ou=groups,%s\nobjectClass: posixGroup\ncn: %s\ngidNumber: %s\n\n' "$1" "$base" "$1" "$2"
}
r=$( {
    printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: s3hpc test\ndc: s3hpc\n\n' "$base"
    printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$base"
    printf 'dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n' "$base"
    people "$ua" $uid_a
    people "$ub" $uid_b
    printf 'dn: cn=%s,ou=groups,%s\nobjectClass: posixGroup\ncn: %s\ngidNumber: %s\nmemberUid: %s\nmemberUid: %s\n' \
        "$team" "$base" "$team" $gid_team "$ua" "$ub"
} | ldap ldapadd 2>&1) || give_up "the users are added to LDAP" "$r"

# NSS through nslcd, in this namespace only.
sed -E 's/^(passwd|group):.*/\1: files ldap/' /etc/nsswitch.conf >"$work/nsswitch.conf"
grep -q '^passwd:' "$work/nsswitch.conf" || printf 'passwd: files ldap\ngroup: files ldap\n' >>"$work/nsswitch.conf"
cat >"$work/nslcd.conf" <<EOF
uid nslcd
gid nslcd
uri ldap://127.0.0.1:$lport/
base $base
cache dn2uid 1s 1s
EOF
mkdir -m 755 "$work/run-nslcd"
chown nslcd: "$work/run-nslcd" 2>/dev/null
mount --bind "$work/nsswitch.conf" /etc/nsswitch.conf &&
    mount --bind "$work/nslcd.conf" /etc/nslcd.conf &&
    mount --bind "$work/run-nslcd" /run/nslcd || give_up "the test's NSS files are mounted in the namespace" ""
# A running nscd would answer from its cache instead of LDAP: not here.
if [ -d /run/nscd ]; then mkdir "$work/run-nscd" && mount --bind "$work/run-nscd" /run/nscd; fi
nslcd -d >>"$work/nslcd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S /run/nslcd/socket ] && break; sleep 0.1; done
[ -S /run/nslcd/socket ] || give_up "nslcd starts" "$(tail -20 "$work/nslcd.log")"

# 1. The users and their groups come from LDAP.
pw=$(getent passwd "$ua" 2>&1)
ids=$(id "$ub" 2>&1)
if [ "${pw%%:*}" = "$ua" ] && [ "$(cut -d: -f3 <<<"$pw")" = $uid_a ] &&
    grep -q "uid=$uid_b($ub) gid=$uid_b($ub)" <<<"$ids" && grep -q "$gid_team($team)" <<<"$ids"; then
    pass "getent and id see the LDAP users and groups through nslcd"
else
    give_up "getent and id see the LDAP users and groups" "$pw / $ids / $(tail -5 "$work/nslcd.log")"
fi
grep -q "$ua" /etc/passwd && fail "the users are in LDAP only" "$ua is in /etc/passwd"

# 2. A server that never saw the users; A makes a key over its socket.
data=$work/data store=$work/store
mkdir "$data" && chmod 1777 "$data"
mkdir -m 755 "$work/sock"
port=$(free_port)
"$bin" serve --data "$data" --durability none --http "127.0.0.1:$port" --rpc "unix:$work/sock/s.sock" \
    --key-store "$store" >>"$work/serve.log" 2>&1 &
pids+=($!)
wait_port "$port" || give_up "the server starts" "$(cat "$work/serve.log")"
for _ in $(seq 50); do [ -S "$work/sock/s.sock" ] && break; sleep 0.1; done

key_for() { # USER: prints the export lines of a new key of USER
    as_user "$1" "$bin" keys create --socket "$work/sock/s.sock" 2>"$work/create-$1.err"
}

bucket=teamb$$
if out=$(key_for "$ua") && eval "$out" && [[ ${AWS_ACCESS_KEY_ID:-} == S3HK* ]]; then
    pass "an LDAP user the server never saw makes a key over the socket"
else
    give_up "an LDAP user makes a key over the socket" "$out $(cat "$work/create-$ua.err")"
fi
r=$(py "$port" "s3.create_bucket(Bucket='$bucket'); s3.put_object(Bucket='$bucket', Key='plan', Body=b'of the team'); print('put')" 2>&1)
owner=$(stat -c %u:%g "$data/$bucket/plan" 2>/dev/null)
[ "$r" = put ] && [ "$owner" = $uid_a:$uid_a ] && pass "what the LDAP user's key writes is the user's (uid $uid_a)" ||
    fail "what the LDAP user's key writes is the user's" "$r; owner: $owner"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN

# 3. An admin gives the bucket to the LDAP group; B reads through it.
chgrp $gid_team "$data/$bucket" "$data/$bucket/plan" && chmod 750 "$data/$bucket" && chmod 640 "$data/$bucket/plan"
t_read=$(date +%s.%N) # the server reads B's groups now, and keeps them a minute
if out=$(key_for "$ub") && eval "$out" && [[ ${AWS_ACCESS_KEY_ID:-} == S3HK* ]]; then
    r=$(py "$port" "print(s3.get_object(Bucket='$bucket', Key='plan')['Body'].read().decode())" 2>&1)
    [ "$r" = "of the team" ] && pass "another LDAP user reads it through an LDAP group (mode 640, bucket 750)" ||
        fail "another LDAP user reads it through an LDAP group" "$r"
    r=$(py "$port" "print(code(lambda: s3.put_object(Bucket='$bucket', Key='b', Body=b'x')))" 2>&1)
    [ "$r" = AccessDenied ] && pass "the group's read-only bucket refuses its writes" ||
        fail "the group's read-only bucket refuses its writes" "$r"
else
    give_up "another LDAP user makes a key" "$out $(cat "$work/create-$ub.err")"
fi

# 4. B leaves the group in LDAP: NSS sees it at once (nslcd keeps no cache
# of groups), the server within its minute's cache of a key's groups.
r=$(printf 'dn: cn=%s,ou=groups,%s\nchangetype: modify\ndelete: memberUid\nmemberUid: %s\n' "$team" "$base" "$ub" |
    ldap ldapmodify 2>&1) || fail "B is removed from the group in LDAP" "$r"
t0=$(date +%s.%N)
ids=$(id "$ub" 2>&1)
grep -q "($team)" <<<"$ids" && fail "NSS sees the LDAP change at once" "$ids" ||
    pass "NSS sees the LDAP change at once"
refused=0
while :; do
    r=$(py "$port" "print(code(lambda: s3.get_object(Bucket='$bucket', Key='plan')))" 2>&1)
    [ "$r" = AccessDenied ] && { refused=1; break; }
    [ "$(python3 -c "print(int($(elapsed "$t0") < 90))")" = 1 ] || break
    sleep 2
done
took=$(elapsed "$t0") since_read=$(elapsed "$t_read")
if [ $refused = 1 ]; then
    pass "a user removed from the LDAP group is refused within the cache time (${took} s after the change, ${since_read} s after the server read the groups it caches 60 s)"
else
    fail "a user removed from the LDAP group is refused within 90 s" "last answer: $r after ${took} s"
fi
r=$(py "$port" "print(code(lambda: s3.list_buckets()))" 2>&1)
[ "$r" = OK ] && pass "the user's key itself still works" || fail "the user's key itself still works" "$r"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN

echo "real clients: $passed passed, $failed failed, 0 skipped"
