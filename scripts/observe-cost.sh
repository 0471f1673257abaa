#!/bin/bash
# What --access-log and --metrics cost: four `s3hpc serve --http` over tmpfs
# (plain, access log + metrics, log only, metrics only) measured by one
# `s3hpc explain` with the four as --endpoint ext1..ext4 (layer order
# alternating), three runs; after each, every server's CPU time (the sum of
# its threads' on-CPU time, /proc/PID/task/*/schedstat) for the same
# requests. Usage: scripts/observe-cost.sh [path/to/s3hpc]
B=${1:-target/release/s3hpc}
W=/dev/shm/s3hpc-observe-cost.$$
L=$W/logs
mkdir -p $W $L
echo "bench benchsecret" > $W/creds
pids=()
trap 'kill ${pids[@]} 2>/dev/null; wait; rm -rf $W' EXIT
start() { $B serve --data $W/$1 --durability none --http 127.0.0.1:0 --credentials $W/creds "${@:2}" </dev/null >/dev/null 2> $W/$1.err & pids+=($!); }
endpoint() { for i in $(seq 50); do grep -q listening $W/$1.err 2>/dev/null && break; sleep 0.1; done; grep -o "http://127.0.0.1:[0-9]*" $W/$1.err | head -1; }
cpu() { cat /proc/$1/task/*/schedstat | awk '{s+=$1} END {printf "%.0f", s/1000}'; }
start plain; start both --access-log $L/both.log --metrics 127.0.0.1:0; start log --access-log $L/log.log; start metrics --metrics 127.0.0.1:0
E=(); for n in plain both log metrics; do E+=($(endpoint $n)); done
for r in 1 2 3; do
  before=(); for p in ${pids[@]}; do before+=($(cpu $p)); done
  S3HPC_ACCESS_KEY=bench S3HPC_SECRET_KEY=benchsecret $B explain --dir /dev/shm --allow-nonempty \
    --layers ext1,ext2,ext3,ext4 --endpoint ${E[0]} --endpoint ${E[1]} --endpoint ${E[2]} --endpoint ${E[3]} \
    --sizes 3901 --repeat 3 --batch 200 2>&1 | grep -E "^(ext|layer)" | head -6
  n=$(wc -l < $L/log.log)
  i=0; for p in ${pids[@]}; do now=$(cpu $p); echo "run $r server $i cpu_us $((now - ${before[$i]})) (log lines so far $n)"; i=$((i+1)); done
  # explain leaves its bucket: empty it for the next run
  for n2 in plain both log metrics; do rm -rf $W/$n2/explain; done
done
