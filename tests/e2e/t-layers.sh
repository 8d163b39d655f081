#!/bin/bash
# t-layers.sh - what the worker really gets (issue 18): on gpu-01, the
# system python, two real venvs and a pyenv build with its own stdlib; a
# real unit whose drop-in sets NCCL_PROTO before Python starts; a real
# /etc/nccl.conf with a line NCCL misreads; two real long-running workers,
# one started with its own NCCL_PROTO, one started before the file last
# changed. plan shows every interpreter's file, the unit's shadowing and
# the stale workers; apply converges every file but restarts nothing, so
# drift names the workers until they are gone, and the unit until its
# drop-in is. gpu-02 is logged into as an unprivileged user who becomes
# root with sudo: there the agent reads a service only when root's policy
# file lists it, and never shows workers of other units.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 /usr/bin/sudo /usr/sbin/visudo
[ -d /etc/systemd/system ] || missing "no /etc/systemd/system to overlay"
PYENV=/root/.pyenv/versions/3.12.1
SA=$PYENV/bin/python3
[ -x "$SA" ] || missing "no pyenv build $PYENV (the standalone interpreter)"
fleet_start 2 --seed "$ENVCTL_FIXTURES/seed-broken.sitecustomize.py" \
    --overlay /etc --become-host gpu-02:nopasswd
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
LOCK=(--lock "$E2E_TMP/d.lock")
H=gpu-01
HD=$(host_dir $H)

# --- the interpreters of gpu-01 -------------------------------------------
host_ssh $H 'python3 -m venv --without-pip --system-site-packages /root/venv-a &&
    python3 -m venv --without-pip /root/venv-b' || fatal "cannot make the venvs"
mkdir -p "$HD/root/.pyenv/versions" || fatal "cannot make the pyenv tree"
cp -al "$PYENV" "$HD/root/.pyenv/versions/" || fatal "cannot copy $PYENV"
SA_SITE=$(host_ssh $H $SA -c \
    "'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'")
[ -n "$SA_SITE" ] || fatal "no site-packages for $SA"
INV=$E2E_TMP/hosts.yaml
sed "s|^        ansible_python_interpreter: .*|&\n        envctl_interpreters: [/usr/bin/python3, /root/venv-a/bin/python3, /root/venv-b/bin/python3, $SA]|" \
    "$FLEET_INVENTORY" >"$INV"
grep -q envctl_interpreters "$INV" || fatal "cannot write the inventory"

# The default playbook, with the service that launches the workers.
SRC=$(dirname "$0")/../../playbooks
cp "$SRC/cuda13-nccl.sitecustomize.py.tmpl" "$E2E_TMP/" ||
    fatal "cannot copy the template"
{ cat "$SRC/cuda13-nccl.yaml"; printf 'services: [vllm.service]\n'; } \
    >"$E2E_TMP/cuda13-nccl.yaml"
P=(-p "$E2E_TMP/cuda13-nccl.yaml")

# --- the unit, its drop-in and nccl.conf, on both hosts -------------------
UNIT='mkdir -p /etc/systemd/system/vllm.service.d &&
cat >/etc/systemd/system/vllm.service <<UNIT
[Unit]
Description=vLLM workers

[Service]
User=root
Environment="CUDA_HOME=/usr/local/cuda-13.0"
ExecStart=/root/venv-a/bin/python3 -m vllm.entrypoints.openai.api_server
UNIT
cat >/etc/systemd/system/vllm.service.d/nccl.conf <<UNIT
[Service]
Environment=NCCL_PROTO=Simple
UNIT
printf "NCCL_ALGO = Tree\nNCCL_SOCKET_IFNAME=eth0\n" >/etc/nccl.conf'
for h in gpu-01 gpu-02; do
	host_ssh_as root $h "$UNIT" || fatal "cannot write the unit files on $h"
done
[ -e /etc/systemd/system/vllm.service ] && fatal "the unit leaked onto this machine"
[ -e /etc/nccl.conf ] && grep -q 'NCCL_ALGO = Tree' /etc/nccl.conf &&
    fatal "nccl.conf leaked onto this machine"

# --- two workers on gpu-01: one with its own value, one that will be old --
W1=$(host_ssh $H 'NCCL_PROTO=LL128 nohup python3 -c "import time; time.sleep(900)" vllm.entrypoints.openai.api_server </dev/null >/dev/null 2>&1 & echo $!')
W2=$(host_ssh $H 'nohup /root/venv-a/bin/python3 -c "import time; time.sleep(900)" -m vllm.worker </dev/null >/dev/null 2>&1 & echo $!')
{ [ -n "$W1" ] && [ -n "$W2" ] && pid_alive "$W1" && pid_alive "$W2"; } ||
    fatal "the workers did not start"
stop_workers() {
	local p
	for p in $W1 $W2; do kill "$p" 2>/dev/null; done
	W1='' W2=''
}
trap 'stop_workers; _e2e_exit' EXIT

# --- plan: every file, the shadowing unit, the worker with its own value --
out=$("${E[@]}" plan "$INV" "${P[@]}" -l $H "${KH[@]}" 2>&1)
assert_eq "$?" 2 "plan: exit status" || note "$out"
assert_eq "$(grep -c "^$H (.*): pending" <<<"$out")" 2 "plan: two files" || note "$out"
assert_contains "$out" "interpreters /usr/bin/python3, /root/venv-a/bin/python3, /root/venv-b/bin/python3" \
    "plan: the system file's three interpreters"
assert_contains "$out" "$H ($SA_SITE/sitecustomize.py): pending" "plan: the pyenv build's file"
assert_contains "$out" "vllm.service sets NCCL_PROTO=Simple (Environment= in /etc/systemd/system/vllm.service.d/nccl.conf:2): envctl's LL is shadowed (policy: setdefault)" \
    "plan: the drop-in's shadowing is named"
assert_contains "$out" "worker $W1 runs with NCCL_PROTO=LL128, want LL: restart it" \
    "plan: the worker's value is named"
assert_contains "$out" "vllm.service: /etc/nccl.conf:1: NCCL does not trim spaces" \
    "plan: the misread nccl.conf line is named"
case $out in *"not an interpreter envctl manages"*)
	fail "plan: the unit's venv-a is managed, yet named" ;;
esac
json=$("${E[@]}" plan "$INV" "${P[@]}" -l $H "${KH[@]}" --json 2>/dev/null)
n=$(python3 -c 'import json,sys; h=json.load(sys.stdin)["hosts"][0]["layers"]; print(h["stale_workers"], sum(f["kind"] == "drift" for f in h["findings"]))' <<<"$json")
assert_eq "$n" "1 2" "plan --json: one stale worker, two drift findings"

# facts says where each value comes from.
out=$("${E[@]}" facts "$INV" "${P[@]}" -l $H "${KH[@]}" 2>&1)
assert_contains "$out" "source    vllm.service: CUDA_HOME=/usr/local/cuda-13.0, set by the unit too" \
    "facts: a value the unit sets too"
assert_contains "$out" "source    vllm.service: NCCL_ALGO=Ring, from sitecustomize (the unit sets none)" \
    "facts: a value from sitecustomize"
assert_contains "$out" "source    vllm.service: /etc/nccl.conf:2 gives NCCL_SOCKET_IFNAME=eth0 to workers" \
    "facts: what nccl.conf fills in"

# --- apply converges both files; the workers still need a restart --------
sleep 1.1
out=$("${E[@]}" apply "$INV" "${P[@]}" -l $H "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "apply: exit status" || note "$out"
assert_contains "$out" "2 changed" "apply: both files changed"
for py in /usr/bin/python3 /root/venv-a/bin/python3 /root/venv-b/bin/python3 $SA; do
	v=$(host_ssh $H env -i "$py" -c "'import os; print(os.environ.get(\"NCCL_PROTO\"))'")
	assert_eq "$v" "LL" "after apply: $py sees NCCL_PROTO"
done
out=$("${E[@]}" drift "$INV" "${P[@]}" -l $H "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_eq "$?" 2 "drift after apply: the workers and the unit remain" || note "$out"
assert_contains "$out" "worker $W1 runs with NCCL_PROTO=LL128" "drift: the first worker"
assert_contains "$out" "1 worker started before the file last changed" "drift: the old worker"
assert_contains "$out" "(pid $W2)" "drift: the old worker's pid"
assert_contains "$out" "envctl's LL is shadowed" "drift: the unit"
out=$("${E[@]}" drift "$INV" "${P[@]}" -l $H "${KH[@]}" "${LOCK[@]}" --fix 2>&1)
assert_eq "$?" 2 "drift --fix: nothing it can fix, still drift" || note "$out"
M=$E2E_TMP/m.prom
"${E[@]}" drift "$INV" "${P[@]}" -l $H "${KH[@]}" "${LOCK[@]}" --metrics-file "$M" >/dev/null 2>&1
assert_contains "$(cat "$M")" 'envctl_host_stale_processes{host="gpu-01",group="fleet",file="/usr/lib/python3' \
    "metrics: the stale workers, on the host's first file"
assert_contains "$(grep stale_processes "$M")" '} 2' "metrics: two stale workers"

# Restarted (here: ended) workers and no drop-in: silent.
stop_workers
host_ssh $H 'rm -r /etc/systemd/system/vllm.service.d'
out=$("${E[@]}" drift "$INV" "${P[@]}" -l $H "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_eq "$?" 0 "drift without the drop-in and the workers: silent" || note "$out"

# --- gpu-02: the privileged agent reads only the services root lists -----
out=$("${E[@]}" plan "$INV" "${P[@]}" -l gpu-02 "${KH[@]}" 2>&1)
assert_contains "$out" "layers: service 'vllm.service'" "sudo: an unlisted service is refused" ||
    note "$out"
case $out in *"envctl's LL is shadowed"*)
	fail "sudo: the unlisted service was read" ;;
esac
host_ssh_as root gpu-02 'mkdir -p /etc/envctl && printf "service vllm.service\n" >/etc/envctl/agent.conf' ||
    fatal "cannot write the policy file on gpu-02"
W3=$(host_ssh_as root gpu-02 'nohup python3 -c "import time; time.sleep(900)" vllm.serve </dev/null >/dev/null 2>&1 & echo $!')
W1=$W3
out=$("${E[@]}" plan "$INV" "${P[@]}" -l gpu-02 "${KH[@]}" 2>&1)
assert_contains "$out" "envctl's LL is shadowed" "sudo: a listed service is read" || note "$out"
assert_contains "$out" "of services the agent's policy does not list were not read" \
    "sudo: a worker of no listed unit is withheld"
case $out in *"worker $W3 "*)
	fail "sudo: the withheld worker was shown" ;;
esac
stop_workers
