#!/usr/bin/env bash
# POSIX over S3 on `s3hpc serve --http`: an s3hpc bucket mounted with
# s3fs-fuse and with rclone mount (through scripts/peers, which starts the
# server and the mounts and takes them down), files written through each
# mount read back through boto3 and the other way round, byte for byte:
# small files and a tree, a multipart file (s3fs: 30 MiB in 10 MiB parts;
# boto3: 20 MiB in 8 MiB parts), renames of a file and of a directory
# (copy and delete, with the directory HEADs and delimiter listings the
# clients rely on), and removal. Each step bounded by `timeout`.
# Prints PASS/FAIL per check and a closing
# `posix over s3: N passed, N failed, N skipped` line; exits 1 on a failure.
# Skips (with the reason) where FUSE or a client is missing, or not root.
#
# Usage: fuse.sh PATH/TO/s3hpc [PYTHON]   (PYTHON: one with boto3)
set -uo pipefail
bin=$(realpath "$1")
py=${2:-python3}
here=$(cd "$(dirname "$0")" && pwd)
peers=$(cd "$here/../../../.." && pwd)/scripts/peers
skip() { echo "posix over s3 skipped: $2"; echo "posix over s3: 0 passed, 0 failed, $1 skipped"; exit 0; }
[ "$(id -u)" = 0 ] || skip 2 "not root (FUSE mounts)"
[ -c /dev/fuse ] || skip 2 "no /dev/fuse"
command -v fusermount >/dev/null || command -v fusermount3 >/dev/null || skip 2 "no fusermount"
"$py" -c 'import boto3' 2>/dev/null || skip 2 "$py has no boto3"

work=$(mktemp -d /tmp/s3hpc-fuse.XXXXXX)
# rclone lists a directory again only after --dir-cache-time: 1 s here, so
# keys written through S3 show after a short wait.
export S3HPC_PEERS_STATE=$work/state S3HPC_BIN=$bin S3HPC_PEERS_RCLONE_ARGS="--vfs-cache-mode off --dir-cache-time 1s"
cleanup() { timeout 60 "$peers" down >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
passed=0 failed=0 skipped=0
check() { # NAME COMMAND... : passes when COMMAND exits 0 within 60 s
    local name=$1; shift
    if out=$(timeout 60 "$@" 2>&1); then
        passed=$((passed + 1)); echo "PASS $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"; echo "$out" | tail -5 | sed 's/^/    /'
    fi
}
if ! timeout 60 "$peers" up --data "$work/data" --stores s3hpc >"$work/up.log" 2>&1; then
    cat "$work/up.log"
    echo "posix over s3: 0 passed, 1 failed, 0 skipped"
    exit 1
fi
read -r _ url ak sk _ < <("$peers" status 2>/dev/null | grep '^s3hpc ')
# boto3's side, as a command the checks' shells can run.
printf '#!/bin/sh\nexec %q %q %q %q %q "$@"\n' "$py" "$here/fuse_io.py" "$url" "$ak" "$sk" >"$work/s3"
chmod 700 "$work/s3"
s3=$work/s3
mkdir -p "$work/src"
head -c 3000 /dev/urandom >"$work/src/small"
head -c $((30 << 20)) /dev/urandom >"$work/src/big"
head -c $((20 << 20)) /dev/urandom >"$work/src/big2"
head -c 100000 /dev/urandom >"$work/src/mid"

# One client: its mount, then the checks with a key prefix of its own.
run_client() { # CLIENT
    local c=$1 m=$work/mnt-$1
    if ! command -v "$c" >/dev/null; then
        skipped=$((skipped + 1)); echo "SKIP $c: not installed (apt-get install $c)"; return
    fi
    if ! timeout 60 "$peers" mount s3hpc "$c" "$m" >"$work/mount-$c.log" 2>&1; then
        failed=$((failed + 1)); echo "FAIL $c mount"; tail -5 "$work/mount-$c.log" | sed 's/^/    /'; return
    fi
    # Writes through the mount, read through boto3.
    check "$c: small file and a tree written, read through boto3" bash -c "
        mkdir -p $m/$c/tree/a/b && cp $work/src/small $m/$c/small && cp $work/src/mid $m/$c/tree/a/b/mid &&
        $s3 get $c/small $work/src/small && $s3 get $c/tree/a/b/mid $work/src/mid"
    check "$c: 30 MiB file (multipart) written, read through boto3" bash -c "
        cp $work/src/big $m/$c/big && sync -f $m/$c/big 2>/dev/null; $s3 get $c/big $work/src/big"
    # Written through boto3 (no directory objects: the mount must infer
    # directories from delimiter listings), read through the mount.
    check "$c: keys written through boto3 listed and read through the mount" bash -c "
        $s3 put $c/from-s3/deep/er/one $work/src/mid && $s3 put $c/from-s3/big2 $work/src/big2 && sleep 1.5 &&
        ls $m/$c/from-s3 | grep -qx deep && ls $m/$c/from-s3/deep/er | grep -qx one &&
        cmp $m/$c/from-s3/deep/er/one $work/src/mid && cmp $m/$c/from-s3/big2 $work/src/big2"
    check "$c: rename of a file (copy and delete)" bash -c "
        mv $m/$c/small $m/$c/small.renamed && ! ls $m/$c | grep -qx small &&
        $s3 get $c/small.renamed $work/src/small && $s3 absent $c/small"
    check "$c: rename of a directory" bash -c "
        mv $m/$c/tree $m/$c/tree2 && cmp $m/$c/tree2/a/b/mid $work/src/mid &&
        $s3 get $c/tree2/a/b/mid $work/src/mid && $s3 absent $c/tree/"
    check "$c: removal seen through boto3" bash -c "
        rm $m/$c/big && $s3 absent $c/big"
    timeout 30 "$peers" umount "$m" >/dev/null 2>&1
    check "$c: unmounted" bash -c "! mountpoint -q $m"
}
run_client s3fs
run_client rclone
echo "posix over s3: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
