#!/bin/bash
# t-gpufacts.sh - GPU host facts and the CUDA checks through real sshd
# hosts, from recorded real outputs (tests/data/gpu/README.md names each
# source): gpu-01 an RTX PRO 6000 box on PCIe, gpu-02 an H100 SXM box with
# NVLink, gpu-03 a host without a GPU.
#
# GPUs cannot be made real here.  The test build of the agent
# (envctl-agent-faults) reads /proc/driver/nvidia/version, /proc/cmdline
# and the nvidia-smi places under $ENVCTL_TEST_GPU_ROOT, which every
# host's sshd sets (fleet --setenv) to /root/gpu: each host's own /root,
# where this scenario plants the recordings and an nvidia-smi that prints
# the one its arguments ask for.  The CUDA toolkit is this machine's
# /usr/local/cuda-13.0, when it has one.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3
FAULTS_AGENT=${ENVCTL_AGENT_FAULTS:-$E2E_REPO/build/envctl-agent-faults}
[ -x "$FAULTS_AGENT" ] || missing "no $FAULTS_AGENT (make build/envctl-agent-faults)"
export ENVCTL_AGENT=$FAULTS_AGENT
REC=$E2E_REPO/tests/data/gpu
CUDA=/usr/local/cuda-13.0
[ -x "$CUDA/bin/ptxas" ] || missing "no CUDA 13.0 toolkit in $CUDA"

fleet_start 3 --setenv ENVCTL_TEST_GPU_ROOT=/root/gpu
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
INV=$FLEET_INVENTORY

# plant NAME [RECORDING_DIR [PROC_VERSION]]: the host's /root/gpu.
plant() {
	local g
	g=$(host_dir "$1")/root/gpu
	mkdir -p "$g/proc/driver/nvidia" "$g/usr/bin" "$g/rec" ||
	    fatal "$1: cannot make $g"
	cp "$REC/no-gpu/cmdline" "$g/proc/cmdline" || fatal "$1: cmdline"
	[ -n "${3:-}" ] && { cp "$REC/$3" "$g/proc/driver/nvidia/version" ||
	    fatal "$1: version"; }
	[ -n "${2:-}" ] || return 0
	cp "$REC/$2/nvidia-smi" "$REC/$2/query.csv" "$REC/$2/topo-m" \
	    "$g/rec/" || fatal "$1: the recordings of $2"
	# What the host's nvidia-smi prints, by its arguments (paths as the
	# host sees them: its /root is $(host_dir)/root here).
	cat >"$g/usr/bin/nvidia-smi" <<'SMI' || fatal "$1: nvidia-smi"
#!/bin/sh
case "$*" in
'') exec cat /root/gpu/rec/nvidia-smi ;;
'--query-gpu=index,name,compute_cap,pci.bus_id,memory.total --format=csv,noheader')
	exec cat /root/gpu/rec/query.csv ;;
'topo -m') exec cat /root/gpu/rec/topo-m ;;
esac
echo "nvidia-smi (recorded): no recording for: $*" >&2
exit 2
SMI
	chmod 0755 "$g/usr/bin/nvidia-smi" || fatal "$1: chmod"
}
plant gpu-01 rtxpro6000-pcie
plant gpu-02 h100-sxm open-module/version
plant gpu-03

# --- envctl facts: the RTX PRO 6000 box -----------------------------------
out=$("${E[@]}" facts "$INV" "${KH[@]}" -l gpu-01 2>&1)
assert_eq "$?" 0 "facts gpu-01: exit status: $out"
assert_contains "$out" "NVIDIA RTX PRO 6000 Blackwell Workstation Edition" \
    "facts gpu-01: the GPU's name"
assert_contains "$out" "compute capability 12.0 (sm_120)" \
    "facts gpu-01: its architecture"
assert_contains "$out" "topology: NVLink no, worst PCIe path PHB" \
    "facts gpu-01: the topology, PCIe, its worst level"
assert_contains "$out" "supports CUDA 13.0" "facts gpu-01: the driver's CUDA"
# The toolkit at /usr/local/cuda (no CUDA_HOME set yet), here 13.0's.
assert_contains "$out" "/bin/ptxas (release 13.0, V13.0" \
    "facts gpu-01: the toolkit's ptxas"

# --json carries gpufacts, and the host without a GPU has empty facts.
# Exit 1: the default playbook's checks fail on gpu-02, whose driver is
# too old for CUDA 13 (see below).
"${E[@]}" facts "$INV" "${KH[@]}" --json >"$E2E_TMP/facts.json" 2>&1
assert_eq "$?" 1 "facts --json: exit status: $(cat "$E2E_TMP/facts.json")"
python3 - "$E2E_TMP/facts.json" <<'PY' || fail "facts --json: $(cat "$E2E_TMP/facts.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
hosts = {h["name"]: h for h in doc["hosts"]}
g1 = hosts["gpu-01"]["gpufacts"]
assert g1["gpu"]["gpus"][0]["compute_cap"] == "12.0", g1["gpu"]
assert g1["gpu"]["driver_cuda"] == "13.0", g1["gpu"]
assert g1["gpu"]["topology"]["nvlink"] is False, g1["gpu"]
assert g1["gpu"]["topology"]["worst_pcie"] == "PHB", g1["gpu"]
assert g1["cuda"]["ptxas"]["version"] == "13.0", g1["cuda"]
g2 = hosts["gpu-02"]["gpufacts"]
assert g2["gpu"]["topology"]["nvlink"] is True, g2["gpu"]
assert g2["gpu"]["driver"]["flavor"] == "open", g2["gpu"]
assert hosts["gpu-02"]["outcome"] == "failed", hosts["gpu-02"]
assert hosts["gpu-01"]["outcome"] == "pending", hosts["gpu-01"]
g3 = hosts["gpu-03"]["gpufacts"]
assert g3["gpu"]["gpus"] == [] and g3["gpu"]["driver"] is None, g3["gpu"]
assert g3["gpu"]["errors"] == [], g3["gpu"]
PY

# --- a playbook that chooses NCCL_P2P_LEVEL by topology -------------------
mkdir -p "$E2E_TMP/pb" || fatal "cannot make $E2E_TMP/pb"
cat >"$E2E_TMP/pb/topo.yaml" <<'PB'
name: topo
facts: [gpu, cuda, nccl, triton]
env:
  NCCL_P2P_LEVEL: "{{ envctl_gpu_nvlink | default('false') | replace('true', 'NVL') | replace('false', 'PHB') }}"
PB
out=$("${E[@]}" plan "$INV" "${KH[@]}" -p "$E2E_TMP/pb/topo.yaml" 2>&1)
assert_eq "$?" 2 "topo plan: exit status: $out"
lvl() {
	printf '%s\n' "$out" | awk -v h="$1:" '
	    $1 == h { on = 1; next } /^gpu-/ { on = 0 }
	    on && /NCCL_P2P_LEVEL/ && /->/ { print $NF; exit }'
}
assert_eq "$(lvl gpu-02)" NVL "topo plan: the H100 box (NVLink)"
assert_eq "$(lvl gpu-01)" PHB "topo plan: the RTX PRO 6000 box (PCIe)"
assert_eq "$(lvl gpu-03)" PHB "topo plan: the host without a GPU"

# --- the default playbook -------------------------------------------------
# The RTX box (Blackwell, sm_120): its driver supports CUDA 13.0, the
# checks pass, and the plan sets the variable Triton reads there.
out=$("${E[@]}" plan "$INV" "${KH[@]}" -l gpu-01 2>&1)
assert_eq "$?" 2 "default plan gpu-01: exit status: $out"
assert_contains "$out" "gpu-01: pending" "default plan gpu-01: pending"
assert_contains "$out" \
    "+_envctl_os.environ.setdefault(\"TRITON_PTXAS_BLACKWELL_PATH\", \"$CUDA/bin/ptxas\")" \
    "default plan gpu-01: TRITON_PTXAS_BLACKWELL_PATH"
case $out in *"check "*) fail "default plan gpu-01: a check failed: $out" ;; esac

# The H100 box's driver (535.129.03) supports CUDA 12.2: a CUDA 13
# toolkit and its ptxas are refused, with the driver CUDA 13 needs.
out=$("${E[@]}" plan "$INV" "${KH[@]}" -l gpu-02 2>&1)
assert_eq "$?" 1 "default plan gpu-02: exit status: $out"
assert_contains "$out" "gpu-02: failed: 3 checks failed: CUDA_HOME '$CUDA' is CUDA 13.0 but the driver supports 12.2 (driver 535.129.03; CUDA 13 needs 580 or later) (check: cuda-toolkit)" \
    "default plan gpu-02: the toolkit is newer than the driver"
assert_contains "$out" "TRITON_PTXAS_BLACKWELL_PATH: '$CUDA/bin/ptxas' is release 13.0 but the driver supports 12.2 (driver 535.129.03; CUDA 13 needs 580 or later) (check: ptxas)" \
    "default plan gpu-02: so is its ptxas"

# No driver on gpu-03: the versions alone decide, and --json says why.
"${E[@]}" plan "$INV" "${KH[@]}" -l gpu-03 --json >"$E2E_TMP/plan3.json" 2>&1
assert_eq "$?" 2 "default plan gpu-03: exit status"
python3 - "$E2E_TMP/plan3.json" <<'PY' || fail "plan gpu-03 --json: $(cat "$E2E_TMP/plan3.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
(h,) = doc["hosts"]
kinds = {c["name"]: c for c in h["checks"]}
assert kinds["CUDA_HOME"]["kind"] == "cuda-toolkit", kinds
for c in kinds.values():
    assert c["ok"] and c["version"] == "13.0" and c["driver_cuda"] is None, c
    assert c["reason"] == "not checked against the driver: no nvidia-smi (no driver)", c
PY
exit 0
