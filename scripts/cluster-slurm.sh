# scripts/cluster-slurm.sh: Slurm on the cluster on one machine, sourced by
# scripts/cluster (`up --slurm`). One slurmctld on the host, one slurmd in
# each node's namespaces: a job step runs where its slurmd runs, so it sees
# that node's host name and its own FUSE mount, as on a real cluster.
#
# Why these settings (slurm-wlm 22.05, tried on this machine kind; see
# ../shared/reference/cluster-notes.md):
# - AuthType=auth/none, CredType=cred/none: no munge daemon or key (every
#   daemon runs as root on one machine; nothing leaves it).
# - ProctrackType=proctrack/pgid, TaskPlugin=task/none: no cgroups to
#   manage in a namespace. slurmd still reads cgroup.conf, and 22.05 has no
#   CgroupPlugin=disabled: cgroup/v1 with IgnoreSystemd and no automount
#   starts without touching the host's cgroups.
# - NodeAddr=127.0.0.1 with a port per node: the nodes share the network
#   namespace; the host name inside each namespace selects its NodeName.
# - SlurmdParameters=config_overrides: the nodes declare CPUs they do not
#   have (all share the machine's cores), so that -n4 fits on two nodes.
# - TmpFS per node: the nodes share the machine's /tmp, where srun
#   --mpi=pmix's per-step directory (spmix_appdir_UID_JOB.STEP) would
#   collide ("File exists") on the second node of a step.
# - Every file (config, state, spool, logs, pids) under $STATE/slurm:
#   nothing outside the state directory is written; clients find the
#   config through SLURM_CONF (printed by `up` and `status`).
#
# Expects from scripts/cluster: STATE, NAME, die, say, in_node, nodes.

SLURM_DIR=$STATE/slurm
SLURM_CONF_FILE=$SLURM_DIR/etc/slurm.conf
# Ports: the controller's, then one per node above it. Not Slurm's
# defaults (6817/6818), so that a site's own Slurm could coexist.
SLURM_PORT=${S3HPC_SLURM_PORT:-6917}
SLURM_CPUS=${S3HPC_SLURM_CPUS:-4}

slurm_check_prereqs() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    ((${#missing[@]} == 0)) && return
    if [ "${S3HPC_CLUSTER_INSTALL:-0}" = 1 ]; then
        say "installing ${missing[*]}"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        die "missing packages for --slurm: apt-get install -y --no-install-recommends ${missing[*]} (or rerun with S3HPC_CLUSTER_INSTALL=1)"
    fi
}

slurm_write_conf() {
    local host=$1 n i=0
    mkdir -p "$SLURM_DIR"/{etc,state,spool,log,run,tmp}
    cat >"$SLURM_CONF_FILE" <<EOF
# Written by scripts/cluster up --slurm; removed by scripts/cluster down.
ClusterName=$NAME
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$SLURM_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/run/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/run/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
TmpFS=$SLURM_DIR/tmp/%n
MailProg=/bin/true
# A job's steps are killed within seconds of scancel or its time limit.
KillWait=5
MinJobAge=60
EOF
    for n in $(nodes); do
        i=$((i + 1))
        echo "NodeName=$n NodeAddr=127.0.0.1 Port=$((SLURM_PORT + i)) CPUs=$SLURM_CPUS State=UNKNOWN" >>"$SLURM_CONF_FILE"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >>"$SLURM_CONF_FILE"
    cat >"$SLURM_DIR/etc/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
IgnoreSystemd=yes
CgroupAutomount=no
EOF
}

slurm_pid_alive() { [ -e "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

slurm_up() {
    local host n t0=$SECONDS
    slurm_check_prereqs
    host=$(hostname -s)
    export SLURM_CONF=$SLURM_CONF_FILE
    [ -e "$SLURM_CONF_FILE" ] || slurm_write_conf "$host"
    if ! slurm_pid_alive "$SLURM_DIR/run/slurmctld.pid"; then
        # -i: a fresh state directory has no saved state to recover.
        slurmctld -f "$SLURM_CONF_FILE" -i >"$SLURM_DIR/log/slurmctld.out" 2>&1 \
            || die "slurmctld did not start: $(tail -3 "$SLURM_DIR/log/slurmctld.log" 2>/dev/null)"
    fi
    for n in $(nodes); do
        mkdir -p "$SLURM_DIR/spool/$n" "$SLURM_DIR/tmp/$n"
        slurm_pid_alive "$SLURM_DIR/run/slurmd-$n.pid" && continue
        in_node "$n" slurmd -f "$SLURM_CONF_FILE" -N "$n" >"$SLURM_DIR/log/slurmd-$n.out" 2>&1 \
            || die "slurmd on $n did not start: $(tail -3 "$SLURM_DIR/log/slurmd-$n.log" 2>/dev/null)"
    done
    # Up when every node takes jobs.
    local want idle
    want=$(nodes | wc -l)
    until idle=$(sinfo -h -N -t idle,mix,alloc -o %N 2>/dev/null | sort -u | wc -l) && ((idle == want)); do
        ((SECONDS - t0 < 60)) || die "slurm: ${idle:-0} of $want nodes idle after 60 s (sinfo -N; logs in $SLURM_DIR/log)"
        sleep 0.3
    done
    say "slurm: slurmctld on $host, slurmd on $(nodes | tr '\n' ' ')($((SECONDS - t0))s)"
    slurm_env
}

# The one line a user needs for sbatch, srun, salloc, squeue and scancel.
slurm_env() { echo "export SLURM_CONF=$SLURM_CONF_FILE"; }

slurm_wait_gone() {
    local pid=$1 t0=$SECONDS
    while kill -0 "$pid" 2>/dev/null && ((SECONDS - t0 < 10)); do sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    return 0
}

slurm_down() {
    [ -d "$SLURM_DIR" ] || return 0
    export SLURM_CONF=$SLURM_CONF_FILE
    local f pid t0=$SECONDS
    if slurm_pid_alive "$SLURM_DIR/run/slurmctld.pid"; then
        # Every job of this cluster ends first (its steps get SIGTERM, then
        # SIGKILL after KillWait), while the daemons can still deliver it.
        squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null || true
        while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && ((SECONDS - t0 < 15)); do sleep 0.3; done
    fi
    for f in "$SLURM_DIR"/run/slurmd-*.pid "$SLURM_DIR/run/slurmctld.pid"; do
        [ -e "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || continue
        slurm_wait_gone "$pid"
    done
    # Step daemons and job processes left behind are killed with their
    # node's namespace (node_down); none runs outside the nodes.
}

slurm_status() {
    [ -e "$SLURM_CONF_FILE" ] || return 0
    if slurm_pid_alive "$SLURM_DIR/run/slurmctld.pid"; then
        echo "slurm: $(SLURM_CONF=$SLURM_CONF_FILE sinfo -h -N -o '%N %T' | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
        slurm_env
    else
        echo "slurm: slurmctld DOWN"
    fi
}
