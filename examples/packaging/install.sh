#!/bin/sh
# Installs s3hpc as a package would: the binary, its man pages (generated
# from the binary itself, so they match its --help), the libs3 drop-in,
# and the systemd unit and logrotate file of examples/systemd. A package
# (deb, rpm, Spack, EasyBuild) runs it with DESTDIR set to its staging
# directory.
#
#   cargo build --release
#   sudo examples/packaging/install.sh              # into /usr/local
#   examples/packaging/install.sh DESTDIR=/tmp/pkg  # staged, for a package
#   PREFIX=/opt/s3hpc examples/packaging/install.sh
#
# Nothing is enabled or started: see the comments of the unit file.
set -eu
cd "$(dirname "$0")/../.."
for arg in "$@"; do
    case $arg in
        DESTDIR=*) DESTDIR=${arg#DESTDIR=} ;;
        PREFIX=*) PREFIX=${arg#PREFIX=} ;;
        *) echo "usage: $0 [DESTDIR=DIR] [PREFIX=DIR]" >&2; exit 2 ;;
    esac
done
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
bin=target/release/s3hpc
[ -x "$bin" ] || { echo "error: $bin is missing; run cargo build --release first" >&2; exit 1; }

install -d "$DESTDIR$PREFIX/bin" "$DESTDIR$PREFIX/share/man/man1"
install -m 0755 "$bin" "$DESTDIR$PREFIX/bin/s3hpc"
"$bin" man --out "$DESTDIR$PREFIX/share/man/man1"
gzip -9nf "$DESTDIR$PREFIX"/share/man/man1/s3hpc*.1
# The libs3 drop-in under its sonames, in a directory of its own: in
# $PREFIX/lib it would replace the system's libs3 for every program. A
# program picks it with LD_LIBRARY_PATH=$PREFIX/lib/s3hpc.
install -d "$DESTDIR$PREFIX/lib/s3hpc"
install -m 0755 target/release/libs3_4.so "$DESTDIR$PREFIX/lib/s3hpc/libs3.so.4"
install -m 0755 target/release/libs3.so "$DESTDIR$PREFIX/lib/s3hpc/libs3.so.2"
install -D -m 0644 examples/systemd/s3hpc.service "$DESTDIR/etc/systemd/system/s3hpc.service"
install -D -m 0644 examples/systemd/logrotate-s3hpc "$DESTDIR/etc/logrotate.d/s3hpc"
echo "installed s3hpc into $DESTDIR$PREFIX (man s3hpc, man s3hpc-serve)"
