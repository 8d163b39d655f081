#!/bin/bash
# t-install.sh - first contact: the agent travels on the bootstrap's own
# exec channel (no SFTP), is checked against its SHA-256 on the host before
# it is renamed into the cache and run; several controllers installing at
# once leave one whole agent and no temp; a connection cut in the middle
# of the agent leaves neither a file nor a temp, and the next run installs
# it whole.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require sha256sum python3
[ -x "$ENVCTL_BIN" ] || fatal "$ENVCTL_BIN: not built (run make)"
BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
[ -r "$BROKEN" ] || missing "fixture $BROKEN not found (set ENVCTL_FIXTURES)"

fleet_start 2 --seed "$BROKEN"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never --timeout 20)
AGENT=${ENVCTL_AGENT:-$(dirname "$ENVCTL_BIN")/envctl-agent}
SHA=$(sha256sum <"$AGENT" | cut -d' ' -f1)
SIZE=$(stat -c %s "$AGENT")

cache() { printf '%s/var-lib-envctl/agent' "$(host_dir "$1")"; }
# listing HOST: the cache's agent programs and their install temps, one
# per line (not the agent's own files beside them: scripts, .checks).
listing() {
	find "$(cache "$1")" -maxdepth 1 \( \( -name 'envctl-agent-*' \
	    ! -name '*.*' \) -o -name '.envctl-agent-*.tmp-*' \) \
	    -printf '%f\n' 2>/dev/null | sort
}
empty_cache() { rm -rf -- "$(cache "$1")"; }
sftp_sessions() {
	grep -c "Starting session: subsystem 'sftp'" "$(host_dir "$1")/sshd.log"
}

# --- a cold host: installed whole, private, through the exec channel -------
empty_cache gpu-01
s0=$(sftp_sessions gpu-01)
out=$("${E[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" -l gpu-01 2>&1)
assert_eq "$?" 2 "cold: plan exit status"
note "$out"
assert_contains "$out" "gpu-01: pending" "cold: the host was read"
assert_eq "$(listing gpu-01)" "envctl-agent-$SHA" "cold: one agent, no temp"
f=$(cache gpu-01)/envctl-agent-$SHA
assert_eq "$(sha256sum <"$f" | cut -d' ' -f1)" "$SHA" "cold: the agent is whole"
assert_eq "$(stat -c %a "$f")" 700 "cold: the agent is 0700"
assert_eq "$(stat -c %a "$(cache gpu-01)")" 700 "cold: the cache is 0700"
assert_eq "$(sftp_sessions gpu-01)" "$s0" "cold: no SFTP session"

# --- controllers installing at once: one whole agent, no temp ---------------
for round in 1 2 3; do
	empty_cache gpu-02
	pids=()
	for i in 1 2 3 4; do
		"${E[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" -l gpu-02 \
		    >"$E2E_TMP/race.$i" 2>&1 &
		pids+=($!)
	done
	for i in 1 2 3 4; do
		wait "${pids[$((i - 1))]}"
		rc=$?
		[ "$rc" = 2 ] || {
			note "$(cat "$E2E_TMP/race.$i")"
			fail "race $round: controller $i exited $rc, want 2"
		}
	done
	assert_eq "$(listing gpu-02)" "envctl-agent-$SHA" \
	    "race $round: one agent and no temp"
	assert_eq "$(sha256sum <"$(cache gpu-02)/envctl-agent-$SHA" |
	    cut -d' ' -f1)" "$SHA" "race $round: the agent is whole"
done

# --- the connection cut in the middle of the agent ---------------------------
# A ProxyCommand that passes the first LIMIT bytes towards the host, then
# closes both ways: the host's bootstrap sees its stdin end part way through
# the agent.
cat >"$E2E_TMP/cut.py" <<'PY'
import os, select, socket, sys
port, limit = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
sent = 0
while True:
    r, _, _ = select.select([0, s], [], [])
    if 0 in r:
        b = os.read(0, 65536)
        if not b:
            break
        b = b[:limit - sent]
        s.sendall(b)
        sent += len(b)
        if sent >= limit:
            break
    if s in r:
        b = s.recv(65536)
        if not b:
            break
        os.write(1, b)
s.close()
PY
LIMIT=$((SIZE / 2))
awk -v h=gpu-01 -v c="ProxyCommand python3 $E2E_TMP/cut.py $(host_port gpu-01) $LIMIT" '
	{ print }
	$1 == "Host" && $2 == h { print "\t" c }' \
    "$FLEET_SSH_CONFIG" >"$E2E_TMP/ssh_config.cut"
empty_cache gpu-01
out=$("${E[@]}" plan "$FLEET_INVENTORY" -F "$E2E_TMP/ssh_config.cut" \
    "${KH[@]}" -l gpu-01 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 1 "cut: plan exit status"
assert_contains "$out" "gpu-01: failed: connection lost while writing" \
    "cut: the host failed, the connection named"
# The bootstrap on the host ends once its stdin does: wait for it.
for _ in $(seq 50); do
	[ -z "$(listing gpu-01)" ] && break
	sleep 0.1
done
assert_eq "$(listing gpu-01)" "" "cut: neither an agent nor a temp is left"
out=$("${E[@]}" plan "$FLEET_INVENTORY" "${KH[@]}" -l gpu-01 2>&1)
assert_eq "$?" 2 "after the cut: plan exit status"
assert_contains "$out" "gpu-01: pending" "after the cut: the host was read"
assert_eq "$(listing gpu-01)" "envctl-agent-$SHA" "after the cut: installed whole"
