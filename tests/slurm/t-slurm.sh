#!/bin/bash
# t-slurm.sh - contrib/slurm/envctl-drift.sbatch on a real single-node
# Slurm cluster: munged, slurmctld and slurmd (Debian's slurm-wlm and
# munge) started here on 127.0.0.1 with every file in this test's temp
# dir (SLURM_CONF, munged --key-file/--socket: nothing of /etc/slurm or
# /etc/munge is used), `sbatch --array=0-3 --wait` of the shipped script
# against a fleet of tests/e2e sshd hosts; the merge job it submits must
# give the report, metrics and exit status of one unsharded drift run.
# The daemons are stopped by their PIDs.

# shellcheck source=SCRIPTDIR/../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

require munged mungekey slurmctld slurmd sbatch scontrol sinfo
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
    missing "python3-prometheus-client is not installed"
SBATCH_SCRIPT=$E2E_REPO/contrib/slurm/envctl-drift.sbatch
CMP=$E2E_REPO/tests/e2e/shard-compare.py
S=$E2E_TMP/slurm
DAEMONS=()
# munged wants every directory above its socket open to all (x), which
# the test's 0700 temp dir is not: the socket gets a directory of its own.
MS=

# stop_daemons: SIGTERM to the daemons started here, by PID; SIGKILL
# after 10 s.
stop_daemons() {
	local p i
	for p in "${DAEMONS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${DAEMONS[@]}"; do
		for i in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			[ "$i" = 100 ] && kill -9 "$p" 2>/dev/null
			sleep 0.1
		done
	done
	DAEMONS=()
	[ -z "$MS" ] || rm -rf "$MS"
	MS=
}
trap 'stop_daemons; _e2e_exit' EXIT

# daemon_log NAME: the tail of a daemon's log, on failure.
daemon_log() {
	printf -- '--- %s\n' "$1"
	tail -n 20 "$S/$1" 2>/dev/null
}

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- the fleet and one unsharded run -----------------------------------
# This machine's processes are the test hosts' too (no PID namespace):
# the playbook looks at no running worker, so that others' tests running
# meanwhile change nothing here.
PB=$E2E_TMP/pb/cuda13-nccl.yaml
mkdir "$E2E_TMP/pb" || fatal "mkdir $E2E_TMP/pb"
cp "$E2E_REPO"/playbooks/cuda13-nccl.* "$E2E_TMP/pb/" ||
    fatal "cannot copy the playbook"
printf 'processes: [envctl-test-matches-no-process]\n' >>"$PB"
RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" -p "$PB" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
fleet_start 8 --seed "$RIGHT" --seed "$RIGHT" \
    --seed "$ENVCTL_FIXTURES/seed-broken.sitecustomize.py"
sed -i 's/"NCCL_PROTO", "LL"/"NCCL_PROTO", "Simple"/' "$(host_file gpu-01)"
mkdir -m 0700 "$E2E_TMP/locks"
OUT=$E2E_TMP/out
mkdir "$OUT"
"$ENVCTL_BIN" drift "$FLEET_INVENTORY" --known-hosts "$FLEET_KNOWN_HOSTS" -p "$PB" \
    --lock "$E2E_TMP/locks/full.lock" --report "$E2E_TMP/full.json" \
    --metrics-file "$E2E_TMP/full.prom" -q
full_rc=$?
assert_eq "$full_rc" 2 "unsharded drift: exit status"

# --- munge, slurmctld, slurmd ---------------------------------------------
mkdir -p "$S/munge" "$S/state" "$S/spool" || fatal "mkdir $S"
chmod 0700 "$S/munge"
MS=$(mktemp -d "${TMPDIR:-/tmp}/envctl-munge.XXXXXX") || fatal "mktemp"
chmod 0755 "$MS"
mungekey --create --keyfile="$S/munge.key" >/dev/null 2>&1 ||
    fatal "mungekey --create failed"
chmod 0600 "$S/munge.key"
munged --foreground --key-file="$S/munge.key" \
    --socket="$MS/munge.socket" --pid-file="$S/munge/munged.pid" \
    --log-file="$S/munged.log" --seed-file="$S/munge/seed" \
    >"$S/munged.out" 2>&1 &
DAEMONS+=($!)
for _ in $(seq 100); do
	[ -S "$MS/munge.socket" ] && break
	kill -0 "${DAEMONS[0]}" 2>/dev/null || break
	sleep 0.1
done
[ -S "$MS/munge.socket" ] || {
	cat "$S/munged.out"
	daemon_log munged.log
	fatal "munged did not start"
}
node=envctl-test-node
host=$(hostname -s)
cpus=4
export SLURM_CONF=$S/slurm.conf
: >"$S/plugstack.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=envctltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$MS/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
PlugStackConfig=$S/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i >"$S/slurmctld.out" 2>&1 &
DAEMONS+=($!)
slurmd -D -N "$node" >"$S/slurmd.out" 2>&1 &
DAEMONS+=($!)
state=
for _ in $(seq 300); do
	state=$(sinfo -h -n "$node" -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	sleep 0.2
done
if [ "$state" != idle ]; then
	cat "$S/slurmctld.out" "$S/slurmd.out"
	daemon_log slurmctld.log
	daemon_log slurmd.log
	fatal "the Slurm node is '$state', not idle"
fi
note "slurm: $(sinfo -h -o '%P %D %T %c')"

# --- the shipped script, 4 shards -----------------------------------------
export ENVCTL=$ENVCTL_BIN ENVCTL_INVENTORY=$FLEET_INVENTORY ENVCTL_OUT=$OUT
export ENVCTL_LOCK_DIR=$E2E_TMP/locks
export ENVCTL_ARGS="--known-hosts $FLEET_KNOWN_HOSTS -p $PB"
(cd "$OUT" && sbatch --array=0-3 --wait --parsable "$SBATCH_SCRIPT" \
    >"$E2E_TMP/sbatch.out" 2>&1)
rc=$?
assert_eq "$rc" 0 "sbatch --array=0-3 --wait (tasks exit 0 on drift)"
[ "$rc" = 0 ] || { cat "$E2E_TMP/sbatch.out" "$OUT"/*.out; daemon_log slurmd.log; }
job=$(head -n 1 "$E2E_TMP/sbatch.out")
merge_job=$(cat "$OUT/$job/merge.jobid" 2>/dev/null)
[ -n "$merge_job" ] || fatal "no merge job was submitted: $(cat "$OUT"/*.out)"
# Wait for the merge job: a job that depends on it, waited for.
sbatch --wait --dependency="afterany:$merge_job" --output=/dev/null \
    --wrap=true >/dev/null 2>&1
merge_rc=$(scontrol show job "$merge_job" | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p')
assert_eq "$merge_rc" "$full_rc" "the merge job's exit status is the fleet's"
out=$(/usr/bin/python3 "$CMP" "$E2E_TMP/full.json" "$OUT/drift.json" \
    "$E2E_TMP/full.prom" "$OUT/envctl.prom" "$OUT/$job"/shard-?.json) ||
    fail "merged Slurm run differs from the unsharded run: $out"
[ "$(find "$OUT/$job" -name 'shard-*.json' | wc -l)" = 4 ] ||
    fail "not 4 shard reports: $(ls "$OUT/$job")"
stop_daemons
