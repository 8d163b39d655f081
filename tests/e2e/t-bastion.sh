#!/bin/bash
# t-bastion.sh - hosts behind a bastion, set up the Ansible way, in the
# inventory's ansible_ssh_common_args: "-J bastion" and "-o ProxyCommand=
# ssh -W %h:%p bastion" take effect and win over ssh_config's ProxyJump; an
# ssh option envctl does not apply is refused by name.  Then the bastion's
# sshd has MaxStartups 3:100:3, as a small sshd_config would: with more
# handshakes in flight than that (--max-startups 1000, -j 20), the bastion
# drops some and those hosts are unreachable; with --max-startups 3, none.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require sha256sum
[ -x "$ENVCTL_BIN" ] || fatal "$ENVCTL_BIN: not built (run make)"
BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
[ -r "$BROKEN" ] || missing "fixture $BROKEN not found (set ENVCTL_FIXTURES)"

N=21	# gpu-01, the bastion, and 20 hosts behind it
fleet_start $N --seed "$BROKEN" --jump-host gpu-01 \
    --sshd-option 'gpu-01=MaxStartups 3:100:3'
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never --timeout 20)
accepted() { grep -c 'Accepted publickey' "$(host_dir "$1")/sshd.log"; }
SEED=$(sha256 "$BROKEN")

# inventory OUT ARGS HOST...: the fleet's hosts.yaml, limited to HOSTs,
# each with ansible_ssh_common_args ARGS.
inventory() {
	local out=$1 args=$2 h
	shift 2
	{
		printf 'all:\n  vars:\n    ansible_python_interpreter: /usr/bin/python3\n'
		printf '    ansible_ssh_common_args: %s\n  hosts:\n' "$args"
		for h in "$@"; do
			printf '    %s:\n      ansible_host: 127.0.0.1\n' "$h"
			printf '      ansible_port: %s\n' "$(host_port "$h")"
			printf '      ansible_user: root\n'
			printf '      ansible_ssh_private_key_file: %s\n' "$FLEET_KEY"
		done
	} >"$out"
}
# ssh_config with "ProxyJump gpu-03" (which forwards nothing) for HOST.
bad_jump_config() { # HOST OUT
	awk -v t="$1" '{ print } $1 == "Host" && $2 == t { print "\tProxyJump gpu-03" }' \
	    "$FLEET_SSH_CONFIG" >"$2"
}
bad_jump_config gpu-02 "$E2E_TMP/ssh_config"

# --- -J from the inventory wins over ssh_config's ProxyJump ----------------
inventory "$E2E_TMP/j.yaml" "-J gpu-01" gpu-02
j0=$(accepted gpu-01) t0=$(accepted gpu-02) b0=$(accepted gpu-03)
out=$("${E[@]}" plan "$E2E_TMP/j.yaml" -F "$E2E_TMP/ssh_config" "${KH[@]}" 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 2 "-J: plan finds the change pending"
assert_contains "$out" "gpu-02: pending" "-J: the host was read"
assert_eq "$(accepted gpu-01)" $((j0 + 1)) "-J: one login on the bastion"
assert_eq "$(accepted gpu-02)" $((t0 + 1)) "-J: one login on the host"
assert_eq "$(accepted gpu-03)" "$b0" "-J: ssh_config's ProxyJump was not used"

# --- -o ProxyCommand="ssh -W %h:%p -q bastion", apply through it -----------
inventory "$E2E_TMP/pc.yaml" "'-o ProxyCommand=\"ssh -F $FLEET_SSH_CONFIG -W %h:%p -q gpu-01\"'" gpu-02
j0=$(accepted gpu-01) b0=$(accepted gpu-03)
out=$("${E[@]}" apply "$E2E_TMP/pc.yaml" -F "$E2E_TMP/ssh_config" "${KH[@]}" --yes 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 0 "ProxyCommand: apply exit status"
assert_contains "$out" "gpu-02: changed (backup " "ProxyCommand: applied"
[ "$(host_hash gpu-02)" != "$SEED" ] || fail "ProxyCommand: the file is unchanged"
assert_eq "$(accepted gpu-01)" $((j0 + 1)) "ProxyCommand: one login on the bastion"
assert_eq "$(accepted gpu-03)" "$b0" "ProxyCommand: ssh_config's ProxyJump was not used"

# --- what envctl does not apply is refused by name -------------------------
inventory "$E2E_TMP/cp.yaml" "-J gpu-01 -o ControlPersist=60s" gpu-04
j0=$(accepted gpu-01)
out=$("${E[@]}" plan "$E2E_TMP/cp.yaml" -F "$FLEET_SSH_CONFIG" "${KH[@]}" 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 1 "refused option: exit status"
assert_contains "$out" "gpu-04: unreachable: ansible_ssh_common_args: ssh option 'ControlPersist' is not supported" \
    "refused option: named"
assert_eq "$(accepted gpu-01)" "$j0" "refused option: nothing was contacted"

# --- MaxStartups 3:100:3 on the bastion, 20 hosts behind it at -j 20 -------
behind=()
for ((i = 2; i <= N; i++)); do behind+=("$(printf 'gpu-%02d' "$i")"); done
inventory "$E2E_TMP/fleet.yaml" "-J gpu-01" "${behind[@]}"
dropped() { grep -c 'past MaxStartups' "$(host_dir gpu-01)/sshd.log"; }

# capped N: plan the 20 at -j 20 with --max-startups N; sets out, rc,
# nfail (hosts unreachable) and ndrop (connections the bastion dropped).
capped() {
	local d0
	d0=$(dropped)
	out=$("${E[@]}" plan "$E2E_TMP/fleet.yaml" -F "$FLEET_SSH_CONFIG" \
	    "${KH[@]}" -j 20 --max-startups "$1" 2>&1)
	rc=$?
	note "$out"
	nfail=$(printf '%s\n' "$out" | grep -c ': unreachable: ')
	ndrop=$(($(dropped) - d0))
	note "--max-startups $1: $nfail of ${#behind[@]} unreachable, the bastion dropped $ndrop"
}

capped 1000
assert_eq "$rc" 1 "--max-startups 1000: exit status"
[ "$nfail" -gt 0 ] || fail "--max-startups 1000: no host failed"
[ "$ndrop" -gt 0 ] || fail "--max-startups 1000: the bastion dropped nothing"
assert_contains "$out" "through ProxyJump gpu-01: Socket error: Connection reset by peer" \
    "--max-startups 1000: the failure names the jump"

capped 3
assert_eq "$nfail" 0 "--max-startups 3: hosts unreachable"
assert_eq "$ndrop" 0 "--max-startups 3: connections the bastion dropped"
assert_eq "$(printf '%s\n' "$out" | grep -c ': pending')" 19 \
    "--max-startups 3: every host read (gpu-02 applied above)"
