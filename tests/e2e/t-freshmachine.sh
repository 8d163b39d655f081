#!/bin/bash
# t-freshmachine.sh - the README's first command on a machine like a new
# one: `make demo` (scripts/demo start) in a private mount namespace whose
# /run is an empty tmpfs (no /run/sshd, no /run/lock/envctl) and where this
# machine's CUDA toolkit, if any, is hidden.  The demo's plan must give its
# summary, the hosts' CUDA layout must say it is a placeholder (not pass on
# this machine's toolkit), and scripts/demo stop, run in that namespace,
# must end every process the demo started, by PID, and nothing else.
# The placeholder is no toolkit: the default playbook's cuda-toolkit and
# ptxas checks fail every host, and the plan says why, with each diff.

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
OUT=$E2E_TMP/out
mkdir "$OUT" || fatal "cannot make $OUT"

cat >"$E2E_TMP/ns.sh" <<'NS'
set -u
mount -t tmpfs -o mode=0755 envctl-e2e /run && mkdir -m 1777 /run/lock ||
    exit 90
for d in /usr/local/cuda-13.0 /usr/local/cuda; do
	if [ -d "$d" ]; then
		mount -t tmpfs -o mode=0755 envctl-e2e "$d" || exit 91
	fi
done
[ ! -e /run/sshd ] || exit 92
cd "$SRC" || exit 93
B=$BDIR ENVCTL_DEMO_DIR=$DEMO scripts/demo start >"$OUT/start" 2>&1
echo $? >"$OUT/start.rc"
cp "$DEMO/pids" "$OUT/pids"
while read -r name pid; do
	stat -L -c %i "/proc/$pid/ns/mnt" >>"$OUT/ns"
	# 2>&1 on the host: ssh's stdout and stderr would race here.
	ssh -F "$DEMO/ssh_config" "$name" 'test -d /usr/local/cuda-13.0 &&
	    echo "dir"; /usr/local/cuda-13.0/bin/ptxas --version 2>&1; echo "exit $?"' \
	    </dev/null >"$OUT/cuda.$name" 2>&1
done <"$OUT/pids"
B=$BDIR ENVCTL_DEMO_DIR=$DEMO scripts/demo stop >"$OUT/stop" 2>&1
echo $? >"$OUT/stop.rc"
NS
SRC=$SRC BDIR=$BDIR DEMO=$DEMO OUT=$OUT \
    timeout 300 unshare -m --propagation private bash "$E2E_TMP/ns.sh"
rc=$?
case $rc in
0) ;;
90 | 91) fatal "cannot mount the fresh machine's /run or hide CUDA ($rc)" ;;
92) fatal "/run/sshd exists on an empty /run" ;;
*) fatal "the namespace's script failed ($rc):" \
    "$(cat "$OUT"/start 2>/dev/null)" ;;
esac

start=$(cat "$OUT/start")
assert_eq "$(cat "$OUT/start.rc")" 0 "demo start: exit status: $start"
assert_contains "$start" $'\n0 in sync, 3 failed\n' \
    "demo start: the plan's summary"
for name in gpu-01 gpu-02 gpu-03; do
	assert_contains "$start" "$name: failed: 3 checks failed: CUDA_HOME '/usr/local/cuda-13.0' is not a CUDA toolkit: " \
	    "demo start: $name: the placeholder is no toolkit"
done
assert_contains "$start" "check     TRITON_PTXAS_BLACKWELL_PATH: '/usr/local/cuda-13.0/bin/ptxas' reports no release: its --version exited with status 1: ptxas: envctl demo host: no CUDA toolkit here (check: ptxas)" \
    "demo start: the placeholder ptxas"
assert_contains "$start" "error     sitecustomize raises at startup: TypeError" \
    "demo start: the broken seed still shown"
assert_contains "$start" "(exit status 1:" "demo start: plan's exit status"

# Each host's CUDA 13 layout is the demo's own placeholder, and says so.
n=0
while read -r name pid; do
	n=$((n + 1))
	: "$pid"
	assert_eq "$(cat "$OUT/cuda.$name")" "dir
ptxas: envctl demo host: no CUDA toolkit here
exit 1" "$name: its CUDA layout says what it is"
done <"$OUT/pids"
assert_eq "$n" 3 "three hosts recorded"

# Stopped from inside the namespace: every recorded sshd gone, nothing left
# in the hosts' namespaces, the demo's directory removed.
assert_eq "$(cat "$OUT/stop.rc")" 0 "demo stop: exit status: $(cat "$OUT/stop")"
assert_contains "$(cat "$OUT/stop")" "demo fleet stopped" "demo stop: says so"
while read -r name pid; do
	pid_alive "$pid" && fail "$name: sshd $pid still runs after demo stop"
done <"$OUT/pids"
left=()
for p in /proc/[0-9]*; do
	i=$(stat -L -c %i "$p/ns/mnt" 2>/dev/null) || continue
	grep -qx "$i" "$OUT/ns" && left+=("${p#/proc/}")
done
assert_eq "${left[*]}" "" "nothing left in the hosts' namespaces"
[ -e "$DEMO" ] && fail "demo stop left $DEMO"
exit 0
