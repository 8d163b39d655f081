#!/bin/bash
# t-deadline.sh - --timeout is one deadline for the whole host, against real
# sshd hosts: a host whose bytes come one every 1.5 s, through a TCP relay
# between envctl and its sshd, is cut at --timeout whether it drips from
# the first byte (connect) or only from the middle of the agent's reply
# (every byte used to restart the wait), and a host whose sitecustomize
# hangs is reported by its own agent ("did not finish starting ...
# (sitecustomize hangs?)", pending: the file is found without start-up)
# before the controller's deadline, while the other hosts of the same run
# are fine.
#
# Wall times come from the shell's own clock ($EPOCHREALTIME); the allowed
# margin over --timeout is MARGIN_MS (closing, reporting, process exit).

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3
[ -x "$ENVCTL_BIN" ] || fatal "$ENVCTL_BIN: not built (run make)"
BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
[ -r "$BROKEN" ] || missing "fixture $BROKEN not found (set ENVCTL_FIXTURES)"
MARGIN_MS=1000
TIMEOUT=3

fleet_start 3 --seed "$BROKEN"
E=("$ENVCTL_BIN")

now_ms() { local t=${EPOCHREALTIME/[.,]/}; printf '%s\n' $((t / 1000)); }

# A relay between envctl and one sshd: what the client sends passes at
# once; what the host sends passes at once for its first AFTER bytes, then
# one byte every INTERVAL seconds (TCP_NODELAY: a segment each).  It
# prints its port once it listens, and "down=N" once a connection has
# ended (the bytes the host sent through it); it exits with the
# scenario's shell.
cat >"$E2E_TMP/drip.py" <<'EOF'
import os, socket, sys, threading, time

target, after, interval, parent = (int(sys.argv[1]), int(sys.argv[2]),
                                   float(sys.argv[3]), int(sys.argv[4]))

def up(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                dst.shutdown(socket.SHUT_WR)
                return
            dst.sendall(b)
    except OSError:
        pass

def down(src, dst):
    n = 0
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            fast = max(0, min(len(b), after - n))
            dst.sendall(b[:fast])
            n += fast
            for i in range(fast, len(b)):
                time.sleep(interval)
                dst.sendall(b[i:i + 1])
                n += 1
    except OSError:
        pass
    finally:
        print('down=%d' % n, flush=True)
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass

def serve(c):
    t = socket.create_connection(('127.0.0.1', target))
    for s in (c, t):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=up, args=(c, t), daemon=True).start()
    threading.Thread(target=down, args=(t, c), daemon=True).start()

def orphan():
    while True:
        try:
            os.kill(parent, 0)
        except OSError:
            os._exit(0)
        time.sleep(1)

ls = socket.socket()
ls.bind(('127.0.0.1', 0))
ls.listen(16)
threading.Thread(target=orphan, daemon=True).start()
print(ls.getsockname()[1], flush=True)
while True:
    c, _ = ls.accept()
    serve(c)
EOF

# relay_start AFTER: starts a relay to gpu-02's sshd; sets RELAY_PORT,
# RELAY_PID, RELAY_FD (its output), and RELAY_INV / RELAY_KH (inventory and
# known_hosts that reach gpu-02 through it).
relay_start() {
	local port2 line
	port2=$(host_port gpu-02)
	exec {RELAY_FD}< <(exec python3 "$E2E_TMP/drip.py" "$port2" "$1" 1.5 $$)
	RELAY_PID=$!
	read -r -t 10 RELAY_PORT <&"$RELAY_FD" ||
	    fatal "the relay did not say its port"
	sed "s/ansible_port: $port2\$/ansible_port: $RELAY_PORT/" \
	    "$FLEET_INVENTORY" >"$E2E_TMP/relay.yaml"
	RELAY_INV=$E2E_TMP/relay.yaml
	RELAY_KH=$E2E_TMP/relay.known_hosts
	cp "$FLEET_KNOWN_HOSTS" "$RELAY_KH"
	line=$(grep "^\[127\.0\.0\.1\]:$port2 " "$FLEET_KNOWN_HOSTS") ||
	    fatal "no known_hosts line for gpu-02"
	printf '[127.0.0.1]:%s %s\n' "$RELAY_PORT" "${line#* }" >>"$RELAY_KH"
}

# relay_stop: waits for the relay's "down=N" of the one connection (sets
# RELAY_DOWN to N), then stops it.
relay_stop() {
	RELAY_DOWN=
	read -r -t 10 RELAY_DOWN <&"$RELAY_FD" || fail "the relay said nothing"
	RELAY_DOWN=${RELAY_DOWN#down=}
	kill "$RELAY_PID" 2>/dev/null
	wait "$RELAY_PID" 2>/dev/null
	exec {RELAY_FD}<&-
}

# gpu-02's reply is large (a 32 KiB file), so that the middle of what the
# host sends is the middle of the agent's reply.
{
	cat "$BROKEN"
	for i in $(seq 1 400); do
		printf '# padding line %03d so that the reply is large: %s\n' \
		    "$i" "abcdefghijklmnopqrstuvwxyz0123456789"
	done
} >"$(host_file gpu-02)"

# Warm every host (agent in its cache), so that what follows is a warm plan.
out=$("${E[@]}" plan "$FLEET_INVENTORY" --known-hosts "$FLEET_KNOWN_HOSTS" \
    --color never 2>&1)
assert_eq "$?" 2 "warm-up plan: pending: $out"

# --- through the relay, nothing held back: a normal plan -------------------
relay_start 1000000000
out=$("${E[@]}" plan "$RELAY_INV" -l gpu-02 --known-hosts "$RELAY_KH" \
    --color never --timeout "$TIMEOUT" 2>&1)
assert_eq "$?" 2 "relay, no drip: plan exit status: $out"
assert_contains "$out" "gpu-02: pending" "relay, no drip: the host was read"
relay_stop
total=$RELAY_DOWN
note "relay, no drip: the host sent $total bytes"
{ [ -n "$total" ] && [ "$total" -gt 40000 ]; } ||
    fatal "relay, no drip: only '$total' bytes came through"

# drip_plan AFTER WHAT: plan the fleet with gpu-02 behind a relay that drips
# after AFTER bytes; gpu-02 fails at the deadline, the others are read.
drip_plan() {
	local t0 ms rc
	relay_start "$1"
	t0=$(now_ms)
	out=$("${E[@]}" plan "$RELAY_INV" --known-hosts "$RELAY_KH" \
	    --color never --timeout "$TIMEOUT" 2>&1)
	rc=$?
	ms=$(($(now_ms) - t0))
	relay_stop
	note "$2: plan took $ms ms: $(grep '^gpu-' <<<"$out")"
	assert_eq "$rc" 1 "$2: plan exit status"
	case $out in
	*"gpu-02: unreachable: "* | *"gpu-02: failed: "*) ;;
	*) fail "$2: gpu-02 not reported unreachable or failed" ;;
	esac
	assert_contains "$out" "did not finish in $TIMEOUT s (deadline for the whole host)" \
	    "$2: the deadline named"
	assert_contains "$out" "gpu-01: pending" "$2: gpu-01 read"
	assert_contains "$out" "gpu-03: pending" "$2: gpu-03 read"
	[ "$ms" -le $((TIMEOUT * 1000 + MARGIN_MS)) ] ||
	    fail "$2: plan took $ms ms, more than ${TIMEOUT} s + $MARGIN_MS ms"
	[ "$ms" -ge $((TIMEOUT * 1000 - 100)) ] ||
	    fail "$2: plan ended after $ms ms, before the deadline"
}

# --- a host that drips from its first byte (banner, key exchange) --------
drip_plan 0 "drip from the start"
assert_contains "$out" "connecting to" "drip from the start: cut while connecting"

# --- a host that drips from the middle of the agent's reply ---------------
# Every byte used to restart the wait: this plan ran for minutes.
drip_plan $((total / 2)) "drip in the reply"
assert_contains "$out" "waiting for output of" "drip in the reply: cut while reading"
got=$RELAY_DOWN
[ "${got:-0}" -gt $((total / 2)) ] ||
    fail "drip in the reply: the relay passed $got bytes, no drip began"

# --- a sitecustomize that never returns ------------------------------------
printf 'import time\ntime.sleep(10 ** 6)\n' >"$(host_file gpu-03)"
t0=$(now_ms)
out=$("${E[@]}" plan "$FLEET_INVENTORY" --known-hosts "$FLEET_KNOWN_HOSTS" \
    --color never --timeout "$TIMEOUT" 2>&1)
rc=$?
ms=$(($(now_ms) - t0))
note "hanging sitecustomize: plan took $ms ms: $(grep '^gpu-' <<<"$out")"
assert_eq "$rc" 2 "hanging sitecustomize: plan exit status (pending)"
assert_contains "$out" "gpu-03: pending" "hanging sitecustomize: gpu-03 read"
re='start-up fails: [^ ]*python3 did not finish starting in [0-9.]+ s \(sitecustomize hangs\?\)'
[[ $out =~ $re ]] ||
    fail "hanging sitecustomize: the agent's own report: $out"
case $out in *"timed out"*) fail "hanging sitecustomize: a transport timeout: $out" ;; esac
assert_contains "$out" "gpu-01: pending" "hanging sitecustomize: gpu-01 read"
assert_contains "$out" "gpu-02: pending" "hanging sitecustomize: gpu-02 read"
[ "$ms" -le $((TIMEOUT * 1000)) ] ||
    fail "hanging sitecustomize: plan took $ms ms, past the ${TIMEOUT} s deadline"

# --- an apply whose new file hangs at start-up -----------------------------
# The change's interpreter runs (validation, verification) get their share
# of the change's budget, so the agent names the hang, well before the
# controller's deadline (--lock-timeout 1: a budget of 11 s), and the
# file is left as it was.
mkdir -p "$E2E_TMP/pb"
cp "$E2E_REPO/playbooks/cuda13-nccl.yaml" "$E2E_TMP/pb/"
{ printf 'import time\ntime.sleep(10 ** 6)\n'
  cat "$E2E_REPO/playbooks/cuda13-nccl.sitecustomize.py.tmpl"; } \
    >"$E2E_TMP/pb/cuda13-nccl.sitecustomize.py.tmpl"
before=$(host_hash gpu-01)
t0=$(now_ms)
out=$("${E[@]}" apply "$FLEET_INVENTORY" --known-hosts "$FLEET_KNOWN_HOSTS" \
    -l gpu-01 --yes --color never --timeout "$TIMEOUT" --lock-timeout 1 \
    -p "$E2E_TMP/pb/cuda13-nccl.yaml" 2>&1)
rc=$?
ms=$(($(now_ms) - t0))
note "hanging candidate: apply took $ms ms: $(grep '^gpu-' <<<"$out")"
assert_eq "$rc" 1 "hanging candidate: apply exit status"
re='gpu-01: failed: .*did not finish starting in [0-9.]+ s \(sitecustomize hangs\?\)'
[[ $out =~ $re ]] ||
    fail "hanging candidate: the agent's own report: $out"
case $out in *"timed out"* | *"did not finish in"*) fail "hanging candidate: the controller's deadline fired: $out" ;; esac
assert_eq "$(host_hash gpu-01)" "$before" "hanging candidate: file untouched"
[ "$ms" -le 8000 ] ||
    fail "hanging candidate: apply took $ms ms, past its interpreter runs' share"
