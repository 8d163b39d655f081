#!/bin/bash
# t-plan.sh - envctl plan and facts against real sshd hosts: the broken
# seed is caught by what Python does, not by a text diff; a converged host
# is in sync; plan writes nothing; a cached agent costs one channel and no
# SFTP; -o records what was read; --json has the documented shape; exit
# codes 0/1/2; escape sequences a host sends are shown as text.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 sha256sum

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
DEFAULT=$ENVCTL_FIXTURES/debian-default.sitecustomize.py
RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"

fleet_start 3 --seed "$BROKEN" --seed "$DEFAULT" --seed "$RIGHT"
ENVCTL=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS")
fleet_hashes >"$E2E_TMP/before"

# --- first plan: cold (agent uploaded), three outcomes -------------------
out=$("${ENVCTL[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" --color never \
    -o "$E2E_TMP/plan.json" 2>"$E2E_TMP/err")
rc=$?
note "plan exit $rc"
assert_eq "$rc" 2 "plan exit status with changes pending"
assert_eq "$(cat "$E2E_TMP/err")" "" "plan stderr"
assert_contains "$out" "gpu-01: pending" "broken host is pending"
assert_contains "$out" "sitecustomize raises at startup: TypeError: str expected, not ellipsis" \
    "broken host shows the startup error"
for v in NCCL_PROTO NCCL_ALGO NCCL_P2P_LEVEL NCCL_MAX_NCHANNELS NCCL_BUFFSIZE NCCL_NTHREADS; do
	line=$(printf '%s\n' "$out" | sed -n '/^gpu-01:/,/^gpu-02:/p' | grep " $v ")
	assert_contains "$line" "(unset) ->" "gpu-01: $v not in effect"
done
assert_contains "$out" "gpu-02: pending" "debian default host is pending"
assert_contains "$out" "gpu-03: ok" "converged host is in sync"
assert_contains "$out" "+++ b$FLEET_SITE" "diff header names the file"
assert_contains "$out" "2 to change, 1 in sync" "summary line"

# --- plan writes nothing on any host, leaves no temp file ---------------
changed=$(fleet_changed "$E2E_TMP/before")
assert_eq "$changed" "" "hosts whose file changed during plan"
for h in "${FLEET_HOSTS[@]}"; do
	d=$(host_dir "$h")
	left=$(find "$d/etc-python" -mindepth 1 ! -name sitecustomize.py)
	assert_eq "$left" "" "$h: stray files beside sitecustomize.py"
	n=$(find "$d/var-lib-envctl/agent" -type f -name 'envctl-agent-*' \
	    ! -name '*.*' | wc -l)
	assert_eq "$n" 1 "$h: agent cached once"
	# The probe beside it as a file, its bytecode kept by Python.
	n=$(find "$d/var-lib-envctl/agent" -maxdepth 1 -type f \
	    -name 'envctl-agent-*.probe.py' | wc -l)
	assert_eq "$n" 1 "$h: the probe kept as a file in the cache"
	n=$(find "$d/var-lib-envctl/agent/__pycache__" -type f \
	    -name 'envctl-agent-*.probe.cpython-*.pyc' 2>/dev/null | wc -l)
	assert_eq "$n" 1 "$h: the probe's bytecode kept in the cache"
done

# --- the plan file records what was read --------------------------------
python3 - "$E2E_TMP/plan.json" "$FLEET_DIR" <<'PY' || fail "plan file contents"
import base64, hashlib, json, os, stat, sys
plan = json.load(open(sys.argv[1]))
assert plan["format"] == 1 and plan["kind"] == "envctl-plan", plan.keys()
assert len(plan["inventory"]["sha256"]) == 64
assert len(plan["playbook"]["sha256"]) == 64
assert stat.S_IMODE(os.stat(sys.argv[1]).st_mode) == 0o600
for h in plan["hosts"]:
    path = os.path.join(sys.argv[2], h["name"], "etc-python", "sitecustomize.py")
    data = open(path, "rb").read()
    cur = h["current"]
    assert cur["exists"], h["name"]
    assert cur["sha256"] == hashlib.sha256(data).hexdigest(), h["name"]
    assert base64.b64decode(cur["data_b64"]) == data, h["name"]
    want = base64.b64decode(h["desired"]["data_b64"])
    assert h["desired"]["sha256"] == hashlib.sha256(want).hexdigest()
PY

# --- warm: one channel, no SFTP; --json shape ---------------------------
json=$("${ENVCTL[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" --json)
rc=$?
assert_eq "$rc" 2 "warm plan --json exit status"
printf '%s' "$json" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["format"] == 1 and doc["command"] == "plan"
assert doc["summary"] == {"ok": 1, "changed": 0, "pending": 2, "failed": 0, "unreachable": 0, "skipped": 0}, doc["summary"]
for h in doc["hosts"]:
    for k in ("name", "address", "outcome", "error", "target", "interpreter",
              "agent", "imported", "shadowed", "startup_error", "variables",
              "checks", "file_matches", "in_effect", "want_sha256", "diff",
              "stats", "seconds"):
        assert k in h, (h["name"], k)
    assert h["stats"]["channels"] == 1, h["stats"]
    assert len(h["variables"]) == 9
    t = h["target"]
    assert t["chain"][-1].startswith("/etc/python3"), t
    assert t["mode"] == "0644" and t["owner"] == "root", t
b = {h["name"]: h for h in doc["hosts"]}
assert b["gpu-01"]["startup_error"] == "TypeError: str expected, not ellipsis"
assert b["gpu-01"]["imported"] is None
assert b["gpu-03"]["outcome"] == "ok" and b["gpu-03"]["diff"] == ""
assert all(v["in_effect"] for v in b["gpu-03"]["variables"])
' || fail "plan --json shape"

# --- facts ---------------------------------------------------------------
out=$("${ENVCTL[@]}" facts "$FLEET_INVENTORY" "${KH[@]}" -l gpu-03)
assert_eq "$?" 0 "facts exit status"
assert_contains "$out" "interpreter   /usr/bin/python3" "facts: interpreter"
assert_contains "$out" "-> $FLEET_ETC_SITE" "facts: symlink chain"
assert_contains "$out" "NCCL_PROTO                   LL" "facts: effective value"

# --- exit 0 when all in sync ---------------------------------------------
"${ENVCTL[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" -l gpu-03 >/dev/null
assert_eq "$?" 0 "plan exit status when in sync"

# --- a changed host key fails that host only, before authentication ------
cp "$FLEET_KNOWN_HOSTS" "$E2E_TMP/kh-changed"
ssh-keygen -q -t ed25519 -N '' -f "$E2E_TMP/otherkey"
port=$(host_port gpu-02)
grep -v "^\[127.0.0.1\]:$port " "$FLEET_KNOWN_HOSTS" >"$E2E_TMP/kh-changed"
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$E2E_TMP/otherkey.pub")" \
    >>"$E2E_TMP/kh-changed"
log=$(host_dir gpu-02)/sshd.log
accepted_before=$(grep -c 'Accepted publickey' "$log")
out=$("${ENVCTL[@]}" plan "$FLEET_INVENTORY" --known-hosts "$E2E_TMP/kh-changed" \
    --color never 2>&1)
rc=$?
assert_eq "$rc" 1 "plan exit status with a failed host"
assert_contains "$out" "gpu-02: unreachable" "changed key: host unreachable"
assert_contains "$out" "SHA256:" "changed key: fingerprint shown"
assert_contains "$out" "ssh-keygen" "changed key: the ssh-keygen -R line"
assert_contains "$out" "gpu-01: pending" "changed key: other hosts go on"
assert_eq "$(grep -c 'Accepted publickey' "$log")" "$accepted_before" \
    "changed key: no authentication on that host"

# --- a stopped host fails within the timeout ----------------------------
pid=$(awk '$1 == "gpu-01" {print $2}' "$FLEET_DIR/pids")
kill -STOP "$pid"
start=$(date +%s)
out=$("${ENVCTL[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" --timeout 3 --color never 2>&1)
rc=$?
took=$(($(date +%s) - start))
kill -CONT "$pid"
assert_eq "$rc" 1 "stopped host: exit status"
assert_contains "$out" "gpu-01: unreachable" "stopped host: unreachable"
[ "$took" -le 8 ] || fail "stopped host: took ${took}s with --timeout 3"
assert_contains "$out" "gpu-03: ok" "stopped host: others go on"

# --- a refused port fails fast ------------------------------------------
sed "s/ansible_port: $(host_port gpu-02)/ansible_port: 1/" "$FLEET_INVENTORY" \
    >"$E2E_TMP/refused.yaml"
start=$(date +%s)
out=$("${ENVCTL[@]}" plan "$E2E_TMP/refused.yaml" "${KH[@]}" -l gpu-02 2>&1)
rc=$?
took=$(($(date +%s) - start))
assert_eq "$rc" 1 "refused port: exit status"
assert_contains "$out" "gpu-02: unreachable" "refused port: unreachable"
[ "$took" -le 2 ] || fail "refused port: took ${took}s"

# --- nothing was written by any of it -----------------------------------
changed=$(fleet_changed "$E2E_TMP/before")
assert_eq "$changed" "" "hosts whose file changed"

# --- what a host sends is shown as text, never as terminal control -------
# A sitecustomize whose value, exception and comment carry escape
# sequences (clear screen, title, a forged "ok" line).
f=$(host_file gpu-02)
cp "$f" "$E2E_TMP/gpu-02.saved"
{
	printf 'import os\n'
	printf '# hidden \033[8m text \033[2J\n'
	printf 'os.environ["NCCL_PROTO"] = "LL\\x1b]0;pwned\\x07"\n'
	printf 'raise RuntimeError("\\x1b[2J\\x1b[Hgpu-02: ok\\nmore")\n'
} >"$f"
for cmd in plan facts; do
	out=$("${ENVCTL[@]}" "$cmd" "$FLEET_INVENTORY" "${KH[@]}" -l gpu-02 \
	    --color never 2>&1)
	case $out in
	*$'\033'*|*$'\007'*) fail "$cmd: a control character reached the output: $out" ;;
	esac
	assert_contains "$out" 'RuntimeError: \x1b[2J\x1b[Hgpu-02: ok' \
	    "$cmd: the startup error shown with escapes"
	assert_contains "$out" 'LL\x1b]0;pwned\x07' \
	    "$cmd: the effective value shown with escapes"
done
out=$("${ENVCTL[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" -l gpu-02 \
    --color always 2>&1)
assert_contains "$out" '-# hidden \x1b[8m text \x1b[2J' \
    "plan: the diff line shown with escapes"
assert_eq "$(printf '%s' "$out" | tr -d '\n' | grep -c $'\033\\[[28]')" 0 \
    "plan --color always: only the report's own colours"
cp "$E2E_TMP/gpu-02.saved" "$f"

# --- a group whose hosts would end up with different NCCL values ----------
INV2=$E2E_TMP/hosts-tree.yaml
sed 's|^        gpu-02:$|&\n          nccl_algo: Tree|' "$FLEET_INVENTORY" >"$INV2"
grep -q 'nccl_algo: Tree' "$INV2" || fatal "cannot write the inventory"
out=$("${ENVCTL[@]}" plan "$INV2" "${KH[@]}" 2>&1)
assert_contains "$out" "warning: group fleet: NCCL_ALGO would be Ring on 2 hosts, Tree on 1 host: ranks of one job must agree" \
    "plan: a group whose desired NCCL values differ" || note "$out"
n=$("${ENVCTL[@]}" plan "$INV2" "${KH[@]}" --json 2>/dev/null |
    python3 -c 'import json,sys; g=[x for x in json.load(sys.stdin)["groups"] if x["kind"] == "desired"]; print(len(g), g[0]["group"], g[0]["variable"])')
assert_eq "$n" "1 fleet NCCL_ALGO" "plan --json: the group warning"
