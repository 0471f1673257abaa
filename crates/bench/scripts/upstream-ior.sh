#!/bin/bash
# Runs upstream IOR/mdtest (hpc/ior, built outside the repo) with the IO500
# phase parameters and fixed amounts, next to the s3hpc posix backend with
# the same amounts, so the two can be compared phase by phase: within 10 %
# shows the harness is not the bottleneck.
#
#   IOR_BIN=/path/to/ior/bin crates/bench/scripts/upstream-ior.sh [DIR] [RANKS]
#
# IOR_BIN is a directory holding `ior` and `mdtest` (IO500's IOR commit),
# built outside this repository; the project neither ships nor builds them.
set -euo pipefail
D=${1:-/dev/shm/s3hpc-upstream}
N=${2:-2}
B=${IOR_BIN:-/tmp/ior-inst/bin}
S3HPC=${S3HPC:-target/release/s3hpc}
EASY_BYTES=1g HARD_SEGMENTS=20000 EASY_FILES=100000 HARD_FILES=50000
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI="mpirun -np $N --oversubscribe --bind-to none"
SEED="-G 271"

[ -e "$D" ] && { echo "$D exists; give a fresh directory" >&2; exit 1; }
mkdir -p "$D/ior-easy" "$D/ior-hard" "$D/mdtest-easy" "$D/mdtest-hard"
trap 'rm -rf "$D"' EXIT
echo "== upstream IOR/mdtest, $N ranks, $D (MiB/s; ops/s)"
$MPI $B/ior -a POSIX -t 2m -b $EASY_BYTES -F -w -k -g $SEED -o "$D/ior-easy/ior_file_easy" | grep -m1 "^write " | sed 's/^/ior-easy /'
$MPI $B/ior -a POSIX -t 47008 -b 47008 -s $HARD_SEGMENTS -w -k -g $SEED -o "$D/ior-hard/file" | grep -m1 "^write " | sed 's/^/ior-hard /'
$MPI $B/ior -a POSIX -t 2m -b $EASY_BYTES -F -r -R -C -Q 1 -k -g $SEED -o "$D/ior-easy/ior_file_easy" | grep -m1 "^read " | sed 's/^/ior-easy /'
$MPI $B/ior -a POSIX -t 47008 -b 47008 -s $HARD_SEGMENTS -r -R -C -Q 1 -k -g $SEED -o "$D/ior-hard/file" | grep -m1 "^read " | sed 's/^/ior-hard /'
$MPI $B/mdtest -n $EASY_FILES -u -L -F -P $SEED -N 1 -d "$D/mdtest-easy" -C -T -r | grep -E "File (creation|stat|removal)" | head -3 | sed 's/^/mdtest-easy/'
$MPI $B/mdtest -n $HARD_FILES -t -w 3901 -e 3901 -P $SEED -N 1 -F -d "$D/mdtest-hard" -C -T -E -X -r | grep -E "File (creation|stat|read|removal)" | head -4 | sed 's/^/mdtest-hard/'
rm -rf "$D"

echo "== s3hpc posix backend, same amounts (the caps end the write phases, hence [INVALID])"
$S3HPC bench io500 --backends posix --ranks "$N" --dir "$D" --stonewall 1000 \
  --ior-easy-max-bytes $EASY_BYTES --ior-hard-max-segments $HARD_SEGMENTS \
  --mdtest-easy-max-files $EASY_FILES --mdtest-hard-max-files $HARD_FILES | grep "^\[RESULT"
