#!/bin/bash
# t-layers.sh - what the worker really gets (issue 18, items 2 to 4): a
# real unit file whose drop-in sets NCCL_PROTO before Python starts, a real
# /etc/nccl.conf with a line NCCL misreads, and a real long-running worker
# process started with its own environment. plan and drift name the
# shadowing unit, the misread line and the worker; apply converges the file
# but cannot restart the worker, so drift names it until it is gone, and
# the unit until its drop-in is.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3
[ -d /etc/systemd/system ] || missing "no /etc/systemd/system to overlay"
fleet_start 1 --seed "$ENVCTL_FIXTURES/seed-broken.sitecustomize.py" \
    --overlay /etc/systemd/system --overlay /etc
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
H=gpu-01
LOCK=(--lock "$E2E_TMP/d.lock")

# The default playbook, with the service that launches the workers.
SRC=$(dirname "$0")/../../playbooks
cp "$SRC/cuda13-nccl.sitecustomize.py.tmpl" "$E2E_TMP/" ||
    fatal "cannot copy the template"
{ cat "$SRC/cuda13-nccl.yaml"; printf 'services: [vllm.service]\n'; } \
    >"$E2E_TMP/cuda13-nccl.yaml"
P=(-p "$E2E_TMP/cuda13-nccl.yaml")

host_ssh $H 'mkdir -p /etc/systemd/system/vllm.service.d &&
cat >/etc/systemd/system/vllm.service <<UNIT
[Unit]
Description=vLLM workers

[Service]
User=root
Environment="CUDA_HOME=/usr/local/cuda-13.0"
ExecStart=/usr/bin/python3 -m vllm.entrypoints.openai.api_server
UNIT
cat >/etc/systemd/system/vllm.service.d/nccl.conf <<UNIT
[Service]
Environment=NCCL_PROTO=Simple
UNIT
printf "NCCL_ALGO = Tree\nNCCL_SOCKET_IFNAME=eth0\n" >/etc/nccl.conf' ||
    fatal "cannot write the unit files on $H"
[ -e /etc/systemd/system/vllm.service ] && fatal "the unit leaked onto this machine"

# A worker started with its own NCCL_PROTO, as its launcher gave it.
WPID=$(host_ssh $H 'NCCL_PROTO=LL128 nohup python3 -c "import time; time.sleep(900)" vllm.entrypoints.openai.api_server </dev/null >/dev/null 2>&1 & echo $!')
{ [ -n "$WPID" ] && pid_alive "$WPID"; } || fatal "the worker did not start"
stop_worker() { [ -n "$WPID" ] && kill "$WPID" 2>/dev/null; WPID=; }
trap 'stop_worker; _e2e_exit' EXIT

out=$("${E[@]}" plan "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" 2>&1)
assert_eq "$?" 2 "plan: exit status" || note "$out"
assert_contains "$out" "vllm.service sets NCCL_PROTO=Simple (Environment= in /etc/systemd/system/vllm.service.d/nccl.conf:2): envctl's LL is shadowed (policy: setdefault)" \
    "plan: the drop-in's shadowing is named"
assert_contains "$out" "worker $WPID runs with NCCL_PROTO=LL128, want LL: restart it" \
    "plan: the worker's value is named"
assert_contains "$out" "/etc/nccl.conf:1:" "plan: the misread nccl.conf line is named"
json=$("${E[@]}" plan "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" --json 2>/dev/null)
n=$(python3 -c 'import json,sys; h=json.load(sys.stdin)["hosts"][0]["layers"]; print(h["stale_workers"], sum(f["drift"] for f in h["findings"]))' <<<"$json")
assert_eq "$n" "1 2" "plan --json: one stale worker, two drift findings"

out=$("${E[@]}" apply "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "apply: exit status" || note "$out"
assert_contains "$out" "1 changed" "apply: the file changed"

out=$("${E[@]}" drift "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_eq "$?" 2 "drift after apply: the worker and the unit remain" || note "$out"
assert_contains "$out" "restart it" "drift: the worker is named"
assert_contains "$out" "envctl's LL is shadowed" "drift: the unit is named"
out=$("${E[@]}" drift "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" "${LOCK[@]}" --fix 2>&1)
assert_eq "$?" 2 "drift --fix: nothing it can fix, still drift" || note "$out"

# A worker started before the file changed runs the old file.
stop_worker
WPID=$(host_ssh $H 'nohup python3 -c "import time; time.sleep(900)" vllm.worker </dev/null >/dev/null 2>&1 & echo $!')
sleep 1.1
touch "$(host_file $H)"
out=$("${E[@]}" drift "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_contains "$out" "1 worker started before the file last changed" \
    "drift: the worker started before the change is named" || note "$out"
stop_worker
host_ssh $H 'rm -r /etc/systemd/system/vllm.service.d'
out=$("${E[@]}" drift "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_eq "$?" 0 "drift without the drop-in and the worker: silent" || note "$out"

M=$E2E_TMP/m.prom
"${E[@]}" drift "$FLEET_INVENTORY" "${P[@]}" "${KH[@]}" "${LOCK[@]}" --metrics-file "$M" >/dev/null 2>&1
assert_contains "$(cat "$M")" 'envctl_host_stale_processes{host="gpu-01",group="fleet"} 0' \
    "metrics: no stale worker"
