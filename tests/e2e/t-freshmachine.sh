#!/bin/bash
# t-freshmachine.sh - the README's first command on a machine like a new
# one: `make demo` (scripts/demo start) in a private mount namespace whose
# /run is an empty tmpfs (no /run/sshd, no /run/lock/envctl) and where this
# machine's CUDA toolkit, if any, is hidden.  Without a toolkit the demo
# must say so, plan with its own playbook (the default less the
# cuda-toolkit and ptxas checks) and show the main job: 2 to change, 1 in
# sync, then `apply --yes` fixes the broken seed and `drift` is silent.  It
# must fake no toolkit on the hosts.  scripts/demo stop, run in that
# namespace, must end every process the demo started, by PID, and nothing
# else.  On a machine with a CUDA 13 toolkit the demo is run once more with
# the toolkit in view: it must keep the default playbook and its checks.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require unshare mount ssh /usr/sbin/sshd /usr/bin/python3 stat
SRC=$(cd "$E2E_SRCDIR/../.." && pwd -P)
BDIR=$(dirname "$ENVCTL_BIN")
[ -x "$BDIR/envctl-agent" ] || missing "no envctl-agent beside $ENVCTL_BIN"

# The demo's directory is the scenario's fleet dir: should anything below
# fail, the harness's own cleanup (fleet stop, by PID file) stops it.
DEMO=$FLEET_DIR
E2E_STARTED=1

# Every CUDA path the demo and the playbook's checks look at: the default
# cuda_home and the /usr/local/cuda link to it (/usr/local/bin's nvcc and
# ptxas here are wrappers that exec from there).
cat >"$E2E_TMP/ns.sh" <<'NS'
set -u
mount -t tmpfs -o mode=0755 envctl-e2e /run && mkdir -m 1777 /run/lock ||
    exit 90
if [ "$HIDE_CUDA" = 1 ]; then
	for d in /usr/local/cuda-13.0 /usr/local/cuda; do
		if [ -d "$d" ]; then
			mount -t tmpfs -o mode=0755 envctl-e2e "$d" || exit 91
		fi
	done
fi
[ ! -e /run/sshd ] || exit 92
cd "$SRC" || exit 93
B=$BDIR ENVCTL_DEMO_DIR=$DEMO scripts/demo start >"$OUT/start" 2>&1
echo $? >"$OUT/start.rc"
cp "$DEMO/pids" "$OUT/pids"
[ ! -e "$DEMO/group_vars" ] || cp -r "$DEMO/group_vars" "$OUT/"
while read -r name pid; do
	stat -L -c %i "/proc/$pid/ns/mnt" >>"$OUT/ns"
	# 2>&1 on the host: ssh's stdout and stderr would race here.
	ssh -F "$DEMO/ssh_config" "$name" 'ls -A /usr/local/cuda-13.0/bin/ 2>&1;
	    echo "exit $?"' </dev/null >"$OUT/cuda.$name" 2>&1
done <"$OUT/pids"
if [ "$HIDE_CUDA" = 1 ]; then
	# What the demo tells the user to try next.
	KH="--known-hosts $DEMO/known_hosts"
	# shellcheck disable=SC2086 # KH is two words
	"$BDIR/envctl" apply "$DEMO/hosts.yaml" $KH --yes -q >"$OUT/apply" 2>&1
	echo $? >"$OUT/apply.rc"
	# shellcheck disable=SC2086
	"$BDIR/envctl" drift "$DEMO/hosts.yaml" $KH >"$OUT/drift" 2>&1
	echo $? >"$OUT/drift.rc"
fi
B=$BDIR ENVCTL_DEMO_DIR=$DEMO scripts/demo stop >"$OUT/stop" 2>&1
echo $? >"$OUT/stop.rc"
NS

# run_demo HIDE_CUDA OUT: the namespace's script, its results in OUT.
run_demo() {
	local rc
	mkdir "$2" || fatal "cannot make $2"
	HIDE_CUDA=$1 SRC=$SRC BDIR=$BDIR DEMO=$DEMO OUT=$2 \
	    timeout 300 unshare -m --propagation private bash "$E2E_TMP/ns.sh"
	rc=$?
	case $rc in
	0) ;;
	90 | 91) fatal "cannot mount the fresh machine's /run or hide CUDA ($rc)" ;;
	92) fatal "/run/sshd exists on an empty /run" ;;
	*) fatal "the namespace's script failed ($rc):" \
	    "$(cat "$2"/start 2>/dev/null)" ;;
	esac
}

# check_stop OUT: stopped from inside the namespace, every recorded sshd
# gone, nothing left in the hosts' namespaces, the demo's directory removed.
check_stop() {
	local name pid p i left=()
	assert_eq "$(cat "$1/stop.rc")" 0 "demo stop: exit status: $(cat "$1/stop")"
	assert_contains "$(cat "$1/stop")" "demo fleet stopped" "demo stop: says so"
	while read -r name pid; do
		pid_alive "$pid" && fail "$name: sshd $pid still runs after demo stop"
	done <"$1/pids"
	for p in /proc/[0-9]*; do
		i=$(stat -L -c %i "$p/ns/mnt" 2>/dev/null) || continue
		grep -qx "$i" "$1/ns" && left+=("${p#/proc/}")
	done
	assert_eq "${left[*]}" "" "nothing left in the hosts' namespaces"
	[ -e "$DEMO" ] && fail "demo stop left $DEMO"
}

# A fresh machine: no CUDA toolkit.
OUT=$E2E_TMP/fresh
run_demo 1 "$OUT"
start=$(cat "$OUT/start")
assert_eq "$(cat "$OUT/start.rc")" 0 "demo start: exit status: $start"
assert_contains "$start" $'\nno CUDA 13 toolkit on this machine: the demo\'s playbook leaves out the cuda-toolkit and ptxas checks (' \
    "demo start: says what it did about CUDA"
assert_contains "$start" "; on GPU hosts use playbooks/cuda13-nccl.yaml"$'\n' \
    "demo start: names the real playbook"
assert_eq "$(cat "$OUT/group_vars/all.yaml")" \
    "envctl_playbook: cuda13-nccl-demo.yaml" "the demo inventory's playbook"
assert_contains "$start" $'\ngpu-01: pending\n' "demo start: gpu-01"
assert_contains "$start" $'\ngpu-02: pending\n' "demo start: gpu-02"
assert_contains "$start" $'\ngpu-03: ok\n' "demo start: gpu-03"
assert_contains "$start" $'\n2 to change, 1 in sync\n' \
    "demo start: the plan's summary"
assert_contains "$start" "error     sitecustomize raises at startup: TypeError" \
    "demo start: the broken seed"
assert_contains "$start" "(exit status 2:" "demo start: plan's exit status"
case $start in *"(check: "* | *": failed: "*)
	fail "demo start: a check ran or a host failed: $start" ;;
esac
# No host sees a toolkit, real or fake.
n=0
while read -r name pid; do
	n=$((n + 1))
	: "$pid"
	assert_contains "$(cat "$OUT/cuda.$name")" "No such file or directory" \
	    "$name: no CUDA toolkit faked"
done <"$OUT/pids"
assert_eq "$n" 3 "three hosts recorded"
assert_eq "$(cat "$OUT/apply.rc")" 0 "apply --yes: exit status: $(cat "$OUT/apply")"
assert_contains "$(cat "$OUT/apply")" $'\n2 changed, 1 in sync' \
    "apply --yes: fixes both"
assert_contains "$(cat "$OUT/apply")" "gpu-01: changed (backup " \
    "apply --yes: the broken seed, backed up"
assert_eq "$(cat "$OUT/drift.rc")" 0 "drift after apply: exit status"
assert_eq "$(cat "$OUT/drift")" "" "drift after apply: silent"
check_stop "$OUT"

# This machine's toolkit, if it has one: the default playbook and its
# checks, no demo playbook.
if /usr/local/cuda-13.0/bin/ptxas --version 2>/dev/null |
    grep -q 'release 13\.'; then
	OUT=$E2E_TMP/toolkit
	run_demo 0 "$OUT"
	start=$(cat "$OUT/start")
	assert_eq "$(cat "$OUT/start.rc")" 0 "toolkit: demo start: exit status: $start"
	assert_contains "$start" $'\nCUDA 13 toolkit in /usr/local/cuda-13.0: the demo\'s playbook is playbooks/cuda13-nccl.yaml, with its cuda-toolkit and ptxas checks\n' \
	    "toolkit: demo start: says what it did about CUDA"
	[ -e "$OUT/group_vars" ] && fail "toolkit: the demo named a playbook"
	assert_contains "$(cat "$OUT/cuda.gpu-01")" "ptxas" \
	    "toolkit: the hosts see this machine's toolkit"
	check_stop "$OUT"
else
	note "no CUDA 13 toolkit here: the demo with a toolkit is not run"
fi
exit 0
