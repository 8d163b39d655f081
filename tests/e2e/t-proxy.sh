#!/bin/bash
# t-proxy.sh - a host behind a jump host (ssh_config ProxyJump): envctl
# reaches it through the jump's sshd, which is the only one that forwards,
# and plans, applies and checks drift there exactly as on a direct host;
# a jump that refuses to forward fails the host at once, naming the jump.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require sha256sum
[ -x "$ENVCTL_BIN" ] || fatal "$ENVCTL_BIN: not built (run make)"
BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
[ -r "$BROKEN" ] || missing "fixture $BROKEN not found (set ENVCTL_FIXTURES)"

fleet_start 2 --seed "$BROKEN" --jump-host gpu-01
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never --timeout 10)

# The fleet's ssh_config, with one ProxyJump line in a host's block; the
# inventory names the host only, so ssh_config says where it is.
jump_config() { # TARGET JUMP OUT
	awk -v t="$1" -v j="$2" '
		{ print }
		$1 == "Host" && $2 == t { print "\tProxyJump " j }' \
	    "$FLEET_SSH_CONFIG" >"$3"
}
inventory() { # HOST OUT
	printf 'all:\n  vars:\n    ansible_python_interpreter: /usr/bin/python3\n  hosts:\n    %s:\n' \
	    "$1" >"$2"
}
accepted() { grep -c 'Accepted publickey' "$(host_dir "$1")/sshd.log"; }

jump_config gpu-02 gpu-01 "$E2E_TMP/ssh_config"
inventory gpu-02 "$E2E_TMP/behind.yaml"
SEED=$(sha256 "$BROKEN")

# --- plan through the jump: both sshds see exactly one login ---------------
j0=$(accepted gpu-01) t0=$(accepted gpu-02)
out=$("${E[@]}" plan "$E2E_TMP/behind.yaml" -F "$E2E_TMP/ssh_config" "${KH[@]}" 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 2 "through the jump: plan finds the change pending"
assert_contains "$out" "gpu-02: pending" "through the jump: the host was read"
assert_contains "$out" "TypeError: str expected, not ellipsis" "through the jump: its start-up error"
assert_eq "$(accepted gpu-01)" $((j0 + 1)) "through the jump: one login on the jump host"
assert_eq "$(accepted gpu-02)" $((t0 + 1)) "through the jump: one login on the host behind it"

# --- apply and drift through the jump --------------------------------------
out=$("${E[@]}" apply "$E2E_TMP/behind.yaml" -F "$E2E_TMP/ssh_config" "${KH[@]}" --yes 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 0 "through the jump: apply exit status"
assert_contains "$out" "gpu-02: changed (backup " "through the jump: applied"
[ "$(host_hash gpu-02)" != "$SEED" ] || fail "through the jump: the file is unchanged"
assert_eq "$(host_hash gpu-01)" "$SEED" "through the jump: the jump host is untouched"
"${E[@]}" drift "$E2E_TMP/behind.yaml" -F "$E2E_TMP/ssh_config" "${KH[@]}" \
    --lock "$E2E_TMP/drift.lock" >"$E2E_TMP/out" 2>&1
assert_eq "$?" 0 "through the jump: drift is silent after apply"
assert_eq "$(cat "$E2E_TMP/out")" "" "through the jump: drift printed nothing"

# --- a jump that does not forward: unreachable, named, at once -------------
jump_config gpu-01 gpu-02 "$E2E_TMP/ssh_config.bad"
inventory gpu-01 "$E2E_TMP/bad.yaml"
start=$(date +%s)
out=$("${E[@]}" plan "$E2E_TMP/bad.yaml" -F "$E2E_TMP/ssh_config.bad" "${KH[@]}" 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 1 "refusing jump: exit status"
assert_contains "$out" "gpu-01: unreachable: cannot connect to 127.0.0.1:$(host_port gpu-01) through ProxyJump gpu-02" \
    "refusing jump: the host, its address and the jump"
[ $(($(date +%s) - start)) -le 5 ] || fail "refusing jump: did not fail at once"
grep -q 'refused local port forward' "$(host_dir gpu-02)/sshd.log" ||
    fail "refusing jump: gpu-02's sshd did not log the refused forward"
assert_eq "$(host_hash gpu-01)" "$SEED" "refusing jump: gpu-01 untouched"
