#!/usr/bin/env bash
# The Slurm examples (examples/slurm) on the cluster on one machine, with
# small sizes: `scripts/cluster up --fs FS --nodes 3 --slurm`, then
#   io500: io500-s3.sbatch to its end: ranks on two nodes, a gateway
#          started and stopped on each, a valid comparison of posix,
#          embedded, libs3 and remote, the job's geometry in the JSON, no
#          socket and no data left;
#   io500-signal: the same job given the time-limit signal mid-run
#          (scancel --batch --signal=TERM): the bench stops and removes its
#          data, then the gateways stop and remove their sockets; status 143;
#   s3-service: s3-service.sbatch with a client command: an object PUT
#          through one node's endpoint is read through another's, and the
#          servers stop when the command ends;
#   s3-job: s3-job.sbatch, a user's job that gets temporary credentials
#          from its node's gateway and writes and reads with the aws CLI
#          and boto3.
# `down` runs in a trap. Prints "slurm examples: N tests, M failed".
#
#   scripts/cluster-slurm-test.sh S3HPC-MPI-BINARY [--fs moosefs|glusterfs|cephfs]
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:?usage: $0 S3HPC-MPI-BINARY [--fs FS]}")
FS=moosefs
[ "${2:-}" = --fs ] && FS=$3
STATE=${S3HPC_CLUSTER_STATE:-/var/lib/s3hpc-cluster}
MNT=/mnt/s3hpc-cluster
[ -n "${S3HPC_CLUSTER_MOUNT:-}" ] && MNT=$S3HPC_CLUSTER_MOUNT
WORK=$(mktemp -d /tmp/s3hpc-slurm-test.XXXXXX)
trap '"$REPO/scripts/cluster" down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
tests=0 failed=0

# check NAME JOB-OUTPUT CONDITION-DESCRIPTION COMMAND...
check() {
    local name=$1 out=$2 what=$3
    shift 3
    if ! "$@"; then
        echo "slurm $name: FAILED: $what"
        ok=0
    fi
}
# Ends a test: counts it, shows the job's output if it failed.
done_test() {
    local name=$1 out=$2
    tests=$((tests + 1))
    if ((ok)); then
        echo "slurm $name: ok"
    else
        failed=$((failed + 1))
        echo "--- $name: job output"
        cat "$out" 2>/dev/null
        echo "---"
    fi
}
has() { grep -q -- "$2" "$1" 2>/dev/null; }
count() { grep -c -- "$2" "$1"; }

"$REPO/scripts/cluster" up --fs "$FS" --nodes 3 --mount "$MNT" --slurm >"$WORK/up.log" 2>&1 || {
    cat "$WORK/up.log"
    echo "slurm examples: 1 tests, 1 failed (scripts/cluster up --slurm did not come up)"
    exit 1
}
eval "$(grep '^export SLURM_CONF=' "$WORK/up.log")"
cd "$WORK" || exit 1
# Open MPI leaves loopback out of its TCP transports; the nodes share it.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export S3HPC_BIN=$BIN
# --- io500: the whole job.
ok=1 out=$WORK/io500.out t0=$SECONDS
# A 1 s stonewall with no caps: every write phase runs to it (valid).
S3HPC_DATA=$MNT/io500-job S3HPC_STONEWALL=1 \
    timeout 300 sbatch --wait --nodes=2 --ntasks-per-node=2 --time=10 -o "$out" "$REPO/examples/slurm/io500-s3.sbatch" >/dev/null
rc=$?
job=$(grep -o 'job [0-9]*' "$out" | head -1 | cut -d' ' -f2)
check io500 "$out" "job status $rc" [ "$rc" = 0 ]
check io500 "$out" "two gateways started" [ "$(count "$out" 'listening on unix:')" = 2 ]
check io500 "$out" "two gateways stopped" [ "$(count "$out" 's3hpc serve: stopped')" = 2 ]
check io500 "$out" "gateways' sockets removed" has "$out" "no gateway socket left on any node"
check io500 "$out" "a comparison of every backend" has "$out" "remote/posix"
check io500 "$out" "a score per backend" [ "$(count "$out" '^\[SCORE \]')" = 4 ]
check io500 "$out" "valid results" bash -c "! grep -q INVALID '$out'"
check io500 "$out" "the job's geometry in the text" has "$out" "Slurm job $job on cluster s3hpc-cluster, partition debug: 2 nodes (node\[1-2\]), 4 tasks"
json=$WORK/s3hpc-io500.$job.json
check io500 "$out" "4 ranks on 2 nodes and 4 valid scores in the JSON" python3 -c "
import json, sys
doc = json.load(open('$json'))
run, scores = doc['run'], doc['scores']
sys.exit(not (run['ranks'] == 4 and run['slurm']['nodes'] == 2 and run['slurm']['job_id'] == '$job'
              and len(scores) == 4 and all(s['valid'] for s in scores)))"
check io500 "$out" "no data left" [ ! -e "$MNT/io500-job" ]
check io500 "$out" "no socket left" bash -c "! ls /tmp/s3hpc-$job-* 2>/dev/null"
check io500 "$out" "IOR skipped or run" has "$out" "IOR"
done_test io500 "$out"
echo "slurm io500: $((SECONDS - t0)) s"

# --- io500-signal: the time-limit signal while the bench runs.
ok=1 out=$WORK/signal.out t0=$SECONDS
job=$(S3HPC_DATA=$MNT/io500-signal S3HPC_STONEWALL=60 sbatch --parsable --nodes=2 --ntasks-per-node=2 --time=10 \
    -o "$out" "$REPO/examples/slurm/io500-s3.sbatch")
# Signalled once the first phase has run a moment.
until has "$out" "a gateway on each" || ((SECONDS - t0 > 60)); do sleep 0.5; done
sleep 4
scancel --batch --signal=TERM "$job"
until [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || ((SECONDS - t0 > 180)); do sleep 0.5; done
state=$(grep -o 'bench finished (status [0-9]*)' "$out")
check io500-signal "$out" "the job ended" [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]
check io500-signal "$out" "the trap ran" has "$out" "signal: stopping s3hpc-bench"
check io500-signal "$out" "the bench stopped on SIGTERM (status 143), not $state" [ "$state" = "bench finished (status 143)" ]
check io500-signal "$out" "the bench removed its data" has "$out" "removed the run directory"
check io500-signal "$out" "two gateways stopped" [ "$(count "$out" 's3hpc serve: stopped')" = 2 ]
check io500-signal "$out" "gateways' sockets removed" has "$out" "no gateway socket left on any node"
check io500-signal "$out" "no data left" [ ! -e "$MNT/io500-signal" ]
done_test io500-signal "$out"
echo "slurm io500-signal: $((SECONDS - t0)) s"

# --- s3-service: an endpoint per node, and a client command.
ok=1 out=$WORK/service.out t0=$SECONDS
S3HPC_DATA=$MNT/s3-service S3HPC_ANONYMOUS=1 S3HPC_PORT=${S3HPC_TEST_PORT:-19400} \
    timeout 120 sbatch --wait --nodes=3 --time=5 -o "$out" "$REPO/examples/slurm/s3-service.sbatch" bash -c '
    [ "$SLURM_PROCID" = 0 ] || exit 0
    first=$(head -1 "$S3HPC_ENDPOINTS_FILE") last=$(tail -1 "$S3HPC_ENDPOINTS_FILE")
    [ "$(wc -l <"$S3HPC_ENDPOINTS_FILE")" = 3 ] && [ "$first" != "$last" ] && [ "$S3HPC_ENDPOINT" = "$first" ] &&
    curl -sf -X PUT "$first/data" && echo "from $(hostname)" | curl -sf -X PUT --data-binary @- "$first/data/k" &&
    echo "read back: $(curl -sf "$last/data/k")"' >/dev/null
rc=$?
check s3-service "$out" "job status $rc" [ "$rc" = 0 ]
check s3-service "$out" "read through another node's endpoint" has "$out" "read back: from node1"
check s3-service "$out" "three servers stopped" [ "$(count "$out" 's3hpc serve: stopped')" = 3 ]
check s3-service "$out" "the endpoints file removed" bash -c "! ls '$WORK'/s3hpc-endpoints.* 2>/dev/null"
rm -rf "$MNT/s3-service"
done_test s3-service "$out"
echo "slurm s3-service: $((SECONDS - t0)) s"

# --- s3-job: a user's job with temporary credentials from its node's
# gateway (a server with --key-store on node2, as a centre runs one per
# node), through the aws CLI and boto3; the credentials last the job's
# remaining time.
ok=1 out=$WORK/job.out t0=$SECONDS
port=${S3HPC_TEST_JOB_PORT:-19480}
# (No mkdir here: $MNT is mounted in the nodes only; serve makes --data.)
"$REPO/scripts/cluster" exec node2 "$BIN" serve --data "$MNT/s3-job" --durability none \
    --http "127.0.0.1:$port" --rpc "unix:$WORK/node2.sock" --key-store "$MNT/s3-job-keys" \
    >"$WORK/job-server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -S "$WORK/node2.sock" ] && break; sleep 0.1; done
S3HPC_SOCKET=$WORK/node2.sock S3HPC_ENDPOINT=http://127.0.0.1:$port S3HPC_BUCKET=jobbucket \
    timeout 120 sbatch --wait --nodes=1 -w node2 --time=5 -o "$out" "$REPO/examples/slurm/s3-job.sbatch" >/dev/null
rc=$?
check s3-job "$out" "job status $rc" [ "$rc" = 0 ]
check s3-job "$out" "written and read back with the job's credentials" has "$out" "read back: written by job"
check s3-job "$out" "listed with boto3" has "$out" "listed with boto3: \['"
check s3-job "$out" "credentials for the job's remaining time" has "$out" "temporary credentials, valid until"
check s3-job "$out" "the object is on the shared file system, seen from another node" \
    "$REPO/scripts/cluster" exec node1 bash -c "ls '$MNT'/s3-job/jobbucket/*/hello.txt >/dev/null"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
cat "$WORK/job-server.log" >>"$out"
"$REPO/scripts/cluster" exec node1 rm -rf "$MNT/s3-job" "$MNT/s3-job-keys"
done_test s3-job "$out"
echo "slurm s3-job: $((SECONDS - t0)) s"

cd / && "$REPO/scripts/cluster" down >/dev/null 2>&1
left=$(pgrep -x slurmd; pgrep -x slurmctld; pgrep -x slurmstepd)
((tests += 1))
if [ -n "$left" ] || grep -q " $MNT " /proc/mounts; then
    echo "slurm down: FAILED: left behind: ${left:-} $(grep " $MNT " /proc/mounts)"
    ((failed += 1))
fi
echo "slurm examples: $tests tests, $failed failed"
((failed == 0))
