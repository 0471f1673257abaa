# scripts/cluster-cephfs.sh: CephFS for scripts/cluster (sourced by it; uses
# its STATE, NAME, die, say and in_node). A file system with a metadata
# server, as HPC centres run (Lustre's MDS): one monitor, one manager, one
# OSD, one MDS, and a ceph-fuse client per node. Ceph 16.2 (Debian 12);
# no cephadm, containers or systemd: every daemon is started here with one
# ceph.conf passed with -c, its data, pid file, admin socket and log under
# $STATE/ceph, so nothing goes to /etc/ceph, /var/lib/ceph or /var/log/ceph
# and `down` stops each daemon by its pid.
#
# Tuning (why):
# - mds tick interval = 0.1 (default 5 s): with 5 s, opens on one client of
#   a file just written and renamed on another stalled up to 5 s (56 of 200
#   over 1 s here; the MDS acts on some cap revocations only at its tick);
#   with 0.1 s the worst of 200 was 168 ms.
# - auth none: a test bed on one machine; no keyrings to hand to clients
#   (the monitor's mkfs still wants one).
# - pools of size 1 (one OSD): osd pool default size/min size 1, mon allow
#   pool size one, crush chooseleaf type 0 (no host failure domain),
#   the autoscaler off (fixed PG counts) and its no-redundancy warning off.
# - The OSD keeps its objects in memory (memstore), at most
#   S3HPC_CEPH_MEMSTORE_BYTES (4 GiB; the cluster reports that as its size, and
#   s3hpc bench sizes its runs to fit). Against BlueStore on a sparse 10 GiB
#   file (S3HPC_CEPH_OBJECTSTORE=bluestore), on 2 loaded cores: up in
#   8-12 s instead of 13-19 s (no RocksDB mkfs), metadata calls alike
#   (create 0.30 against 0.35 ms), nothing written to the machine's disk
#   (BlueStore: 300 MB after a test run), and the quick cross-node tests in
#   67 s (BlueStore: 212 s, at a higher load). The price: the OSD's memory
#   grows with the data it holds (1.2 GiB for all daemons after the quick
#   tests, 0.9 GiB with BlueStore; 6.2 GiB after a 4-rank IO500 run, whose
#   deletes the MDS purges later): for long benchmarks on a small machine
#   take BlueStore (osd memory target bounds it).
# - Memory caps for a shared 2-core machine: mds cache memory limit 512 MiB
#   (default 4 GiB), osd memory target 1 GiB (default 4 GiB).
# - Grace for a loaded machine: mds beacon grace 60 s (default 15 s): a
#   starved MDS would otherwise be marked laggy with no standby to replace
#   it, and every client would stall.
# - The monitor's free-space guard (mon data avail crit, 5%) off: the
#   state directory shares the machine's disk, and a monitor that shuts
#   itself down hangs every client.
# - ceph-fuse keeps its defaults: the MDS's capabilities keep the clients
#   coherent (a rename-over on one node is seen at once on the other;
#   fcntl and flock locks conflict across clients).
# - Packages: ceph-fuse needs only libfuse2 (a dependency), which mounts
#   and unmounts directly as root; Debian's `fuse` (fusermount 2), which
#   ceph-fuse recommends, would remove fuse3 (MooseFS's client recommends
#   it), so it is not installed.
# Missing through ceph-fuse (libfuse2): O_TMPFILE and RENAME_NOREPLACE
# (EINVAL); the engine's probe sees both and takes named temporaries and
# link(2) for If-None-Match creates.

CEPH_PKGS=(ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph-common)
CEPH_MEMSTORE_BYTES=${S3HPC_CEPH_MEMSTORE_BYTES:-$((4 << 30))}
CEPH_OBJECTSTORE=${S3HPC_CEPH_OBJECTSTORE:-memstore}

cephfs_missing() {
    local b
    for b in ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse; do
        command -v "$b" >/dev/null || echo "$b"
    done
    command -v ceph >/dev/null && command -v monmaptool >/dev/null || echo ceph-common
}

ceph_dir() { echo "$STATE/ceph"; }
ceph_cli() { timeout 60 ceph -c "$(ceph_dir)/ceph.conf" "$@"; }

cephfs_conf() {
    local d=$1 fsid=$2
    cat <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:3300,v1:127.0.0.1:6789]
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
keyring = $d/keyring
run dir = $d/run
admin socket = $d/run/\$name.asok
pid file = $d/run/\$name.pid
log file = $d/log/\$name.log
log to syslog = false
crash dir = $d/crash
mon cluster log file = $d/log/cluster.log
mon data = $d/data/\$name
mgr data = $d/data/\$name
osd data = $d/data/\$name
mds data = $d/data/\$name
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon data avail crit = 0
mon data avail warn = 0
osd crush chooseleaf type = 0
[mgr]
mgr initial modules =
[osd]
osd objectstore = $CEPH_OBJECTSTORE
memstore device bytes = $CEPH_MEMSTORE_BYTES
bluestore block create = true
bluestore block size = 10737418240
osd memory target = 1073741824
[mds]
mds tick interval = 0.1
mds beacon grace = 60
mds cache memory limit = 536870912
[client]
admin socket = $d/run/\$name.\$pid.asok
# A client that cannot reach the MDS gives up after 30 s, not 300.
client mount timeout = 30
EOF
}

# Runs a Ceph daemon with no file descriptors but 0-2: Ceph's daemons keep
# what they inherit, and a mon that held the caller's `flock` lock file
# kept the lock (and the next bring-up waiting) for as long as it lived.
ceph_daemon() {
    (
        local fd
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            ((fd > 2)) && eval "exec $fd>&-"
        done
        exec "$@"
    )
}

# Waits up to $1 s for command $2... to succeed.
ceph_wait() {
    local limit=$1 t0=$SECONDS
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS - t0 < limit)) || return 1
        sleep 0.3
    done
}

cephfs_up() {
    local d t0=$SECONDS fsid
    d=$(ceph_dir)
    if [ -e "$d/ceph.conf" ]; then
        cephfs_running mon.a || die "a CephFS cluster is configured in $d but its monitor is not running: scripts/cluster down first"
        return 0
    fi
    # Only one Ceph cluster can listen on the monitor's ports.
    ! pgrep -x ceph-mon >/dev/null || die "a ceph-mon not started by this state directory is running (ports 3300/6789 are taken): stop it first"
    mkdir -p "$d/run" "$d/log" "$d/crash" "$d/data/mon.a" "$d/data/mgr.x" "$d/data/osd.0" "$d/data/mds.a"
    fsid=$(cat /proc/sys/kernel/random/uuid)
    cephfs_conf "$d" "$fsid" >"$d/ceph.conf"
    local c=(-c "$d/ceph.conf")
    ceph-authtool --create-keyring "$d/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    monmaptool --create --fsid "$fsid" --addv a '[v2:127.0.0.1:3300,v1:127.0.0.1:6789]' "$d/monmap" >/dev/null
    ceph-mon "${c[@]}" --mkfs -i a --monmap "$d/monmap" --keyring "$d/keyring" 2>"$d/log/mkfs.err" \
        || die "ceph-mon --mkfs failed: $(tail -2 "$d/log/mkfs.err")"
    ceph_daemon ceph-mon "${c[@]}" -i a || die "ceph-mon did not start (log: $d/log/mon.a.log)"
    ceph_wait 30 ceph_cli mon stat || die "the monitor did not answer within 30 s (log: $d/log/mon.a.log)"
    ceph_daemon ceph-mgr "${c[@]}" -i x || die "ceph-mgr did not start (log: $d/log/mgr.x.log)"
    local uuid id
    uuid=$(cat /proc/sys/kernel/random/uuid)
    id=$(ceph_cli osd new "$uuid") || die "ceph osd new failed"
    ceph-osd "${c[@]}" -i "$id" --mkfs --osd-uuid "$uuid" 2>"$d/log/mkfs.err" >/dev/null \
        || die "ceph-osd --mkfs failed: $(tail -2 "$d/log/mkfs.err")"
    ceph_daemon ceph-osd "${c[@]}" -i "$id" 2>/dev/null || die "ceph-osd did not start (log: $d/log/osd.$id.log)"
    local out
    out=$({ ceph_cli osd pool create cephfs_metadata 16 && ceph_cli osd pool create cephfs_data 32 \
        && ceph_cli fs new cephfs cephfs_metadata cephfs_data; } 2>&1) || die "making the file system failed: $out"
    ceph_daemon ceph-mds "${c[@]}" -i a >/dev/null 2>&1 || die "ceph-mds did not start (log: $d/log/mds.a.log)"
    ceph_wait 60 cephfs_active || die "the MDS was not active within 60 s: $(ceph_cli fs status 2>&1 | head -5)"
    # Clients' statfs reports no free space until the manager has the OSD's
    # statistics (a few seconds): s3hpc bench, which sizes its runs to the
    # free space, then shrank an IO500 run to a few operations.
    ceph_wait 60 cephfs_has_space || die "the cluster reported no free space within 60 s: $(ceph_cli df 2>&1 | head -4)"
    say "cephfs: mon, mgr, osd, mds up in $((SECONDS - t0)) s"
}

cephfs_active() { ceph_cli mds stat | grep -q 'up:active'; }
cephfs_has_space() { ceph_cli df -f json | grep -q '"total_avail_bytes":[1-9]'; }

cephfs_running() {
    local pf
    pf="$(ceph_dir)/run/$1.pid"
    [ -e "$pf" ] && kill -0 "$(cat "$pf")" 2>/dev/null
}

cephfs_mount() {
    local node=$1 mnt=$2
    # Each node's client has its own name, hence its own pid file and log.
    ceph_daemon nsenter --mount="$(ns_mnt "$node")" --uts="$(ns_uts "$node")" ceph-fuse -c "$(ceph_dir)/ceph.conf" --id "fuse-$node" "$mnt" >/dev/null
}

# Stops a daemon by its pid file: SIGTERM (or $2), then SIGKILL after 10 s.
cephfs_stop() {
    local pf=$1 sig=${2:-TERM} pid t0=$SECONDS
    pid=$(cat "$pf" 2>/dev/null) || return 0
    kill -s "$sig" "$pid" 2>/dev/null || return 0
    while kill -0 "$pid" 2>/dev/null; do
        ((SECONDS - t0 < 10)) || { kill -9 "$pid" 2>/dev/null || true; break; }
        sleep 0.1
    done
}

cephfs_down() {
    local d pf
    d=$(ceph_dir)
    [ -d "$d/run" ] || return 0
    # Clients first (the nodes' mounts are gone by now), then mds, osd, mgr,
    # mon. The OSD is killed: a memstore OSD stopped cleanly writes every
    # object it holds into its data directory (MemStore::umount saves; up
    # to 4 GiB after an IO500 run), only for `down` to delete it.
    for pf in "$d"/run/client.*.pid "$d"/run/mds.*.pid; do
        [ -e "$pf" ] && cephfs_stop "$pf"
    done
    for pf in "$d"/run/osd.*.pid; do
        [ -e "$pf" ] && cephfs_stop "$pf" KILL
    done
    for pf in "$d"/run/mgr.*.pid "$d"/run/mon.*.pid; do
        [ -e "$pf" ] && cephfs_stop "$pf"
    done
    # Any daemon of this cluster still running now is one no pid file
    # named (seen once, after an IO500 run: a ceph-mds whose process began
    # during `down`, after the pid files were read; not traced further).
    # Every daemon here was started with this state directory's ceph.conf.
    local left
    left=$(pgrep -f -- "-c $d/ceph.conf" || true)
    if [ -n "$left" ]; then
        say "down: stopping daemons no pid file named: $(tr '\n' ' ' <<<"$left")"
        kill -KILL $left 2>/dev/null || true
    fi
    return 0
}
