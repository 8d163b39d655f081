#!/bin/bash
# t-privsep.sh - the agent as a privilege boundary (docs/security.md): a
# login user under the narrow, digest-pinned sudo rule envctl(1) recommends
# runs the agent by hand and asks it for a program of its own and for
# /etc/shadow, and is refused with the rule named; a cached agent that was
# replaced is reported as tampered, removed, uploaded again and used, under
# a NOPASSWD: ALL rule (the agent's own digest check) and under the pinned
# rule (sudo refuses the file); ansible_become_user other than root works.
# The sudo rules are the fleet's per-host copies of /etc/sudoers.d, in this
# scenario's temp dir: nothing of this machine's sudo changes.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require sha256sum python3 /usr/bin/sudo /usr/sbin/visudo

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
[ -r "$BROKEN" ] || missing "fixture $BROKEN not found (set ENVCTL_FIXTURES)"
[ -x "$ENVCTL_BIN" ] || fatal "$ENVCTL_BIN: not built (run make)"

fleet_start 1 --seed "$BROKEN" --become-host gpu-01:nopasswd
OPS=$FLEET_OPS_USER
H=gpu-01
RULE=$(host_dir $H)/sudoers.d/$OPS
KH=(--known-hosts "$FLEET_KNOWN_HOSTS")
CACHE=$FLEET_OPS_HOME/.cache/envctl/agent	# as the host sees it
OUTSIDE=$(host_ops_home $H)/.cache/envctl/agent

# set_rule TEXT: the host's sudo rule for $OPS (checked by visudo).
set_rule() {
	{ printf '%s\n' "$1" >"$RULE.new" && chmod 440 "$RULE.new" &&
	    /usr/sbin/visudo -c -f "$RULE.new" >/dev/null 2>&1 &&
	    mv "$RULE.new" "$RULE"; } || fatal "cannot set the sudo rule: $1"
}

# plan_ok LABEL [ARGS]: a plan that reads the host (pending: exit 2).
plan_ok() {
	local label=$1 out rc
	shift
	out=$("$ENVCTL_BIN" plan "${1:-$FLEET_INVENTORY}" "${KH[@]}" \
	    --color never --timeout 20 2>"$E2E_TMP/err")
	rc=$?
	note "$label: plan exit $rc; stderr: $(cat "$E2E_TMP/err")"
	assert_eq "$rc" 2 "$label: plan exit status"
	assert_contains "$out" "$H: pending" "$label: the host was read"
}

# --- cold, under the fleet's NOPASSWD: ALL rule: the agent is uploaded --
plan_ok cold
[ -e "$E2E_TMP/.failed" ] && fatal "the cold plan failed"
mapfile -t agents < <(find "$OUTSIDE" -type f -name 'envctl-agent-*' ! -name '*.*')
assert_eq "${#agents[@]}" 1 "one agent in the cache"
NAME=${agents[0]##*/}
SHA=${NAME#envctl-agent-}
AGENT=$CACHE/$NAME
assert_eq "$(sha256sum <"${agents[0]}" | cut -d' ' -f1)" "$SHA" \
    "the cached agent matches its name"

# --- the narrow rule: this agent only, pinned by its digest -------------
set_rule "$OPS ALL=(root) NOPASSWD: sha256:$SHA $AGENT"
plan_ok pinned

# request JSON: one framed request on stdout.
frame() {
	python3 -c 'import struct, sys
b = sys.argv[1].encode()
sys.stdout.buffer.write(struct.pack(">I", len(b)) + b)' "$1"
}
# reply FIELD: FIELD of the framed reply on stdin ("" when absent).
reply() {
	python3 -c 'import json, struct, sys
d = sys.stdin.buffer.read()
if len(d) < 4:
    print("no reply"); sys.exit(0)
n = struct.unpack(">I", d[:4])[0]
print(json.loads(d[4:4 + n]).get(sys.argv[1], ""))' "$1"
}

# The escalation by hand: a script of the login user as interpreter.
# shellcheck disable=SC2016 # $HOME is the login user's, on the host
host_ssh $H 'printf "#!/bin/sh\ncat /etc/shadow\n" >"$HOME/py" && chmod 755 "$HOME/py"' ||
    fail "cannot write ~/py"
req='{"id":1,"op":"read","interpreter":"'$FLEET_OPS_HOME'/py","path":"/etc/shadow"}'
frame "$req" | host_ssh $H "sudo -n $AGENT" >"$E2E_TMP/r1" 2>"$E2E_TMP/e1"
assert_eq "$(reply ok <"$E2E_TMP/r1")" False "by hand: own interpreter refused"
assert_eq "$(reply code <"$E2E_TMP/r1")" EINVALID "by hand: code"
assert_eq "$(reply message <"$E2E_TMP/r1")" \
    "interpreter '$FLEET_OPS_HOME/py': '$FLEET_OPS_HOME' is not owned by root (uid $FLEET_OPS_UID): a privileged agent runs only root-owned interpreters (docs/security.md)" \
    "by hand: the rule is named"
grep -q "^root:" "$E2E_TMP/r1" "$E2E_TMP/e1" && fail "by hand: /etc/shadow leaked"
# root's own Python, asked for /etc/shadow.
req='{"id":1,"op":"read","interpreter":"/usr/bin/python3","path":"/etc/shadow"}'
frame "$req" | host_ssh $H "sudo -n $AGENT" >"$E2E_TMP/r2" 2>"$E2E_TMP/e2"
assert_contains "$(reply message <"$E2E_TMP/r2")" \
    "target '/etc/shadow' is neither the sitecustomize of the interpreter" \
    "by hand: /etc/shadow is no target"
grep -q "root:" "$E2E_TMP/r2" && fail "by hand: /etc/shadow leaked (python)"
# A change sent after a read takes the read's target, never its own: after
# the refused read of /etc/shadow it is skipped, and a path of its own is
# refused outright.
# second FIELD: FIELD of the second framed reply on stdin.
second() {
	python3 -c 'import json, struct, sys
d = sys.stdin.buffer.read()
n = struct.unpack(">I", d[:4])[0]
d = d[4 + n:]
if len(d) < 4:
    print("no reply"); sys.exit(0)
n = struct.unpack(">I", d[:4])[0]
print(json.loads(d[4:4 + n]).get(sys.argv[1], ""))' "$1"
}
shadow=$(sha256sum /etc/shadow)
req='{"id":2,"op":"read","interpreter":"/usr/bin/python3","path":"/etc/shadow"}'
app='{"id":3,"op":"apply","after_read":2,"interpreter":"/usr/bin/python3","data":"eA==","sha256_new":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881","vars":{},"backup":{"dir":"/var/backups/envctl","keep":1},"playbook":"p","controller":"c"}'
{ frame "$req"; frame "$app"; } | host_ssh $H "sudo -n $AGENT" >"$E2E_TMP/r5" 2>/dev/null
assert_eq "$(second ok <"$E2E_TMP/r5")" True "by hand: the change after the refused read answers"
assert_eq "$(second skipped <"$E2E_TMP/r5")" read-failed "by hand: the change after the refused read is skipped"
app=${app/\"after_read\":2,/\"after_read\":2,\"path\":\"/etc/shadow\",}
{ frame "$req"; frame "$app"; } | host_ssh $H "sudo -n $AGENT" >"$E2E_TMP/r6" 2>/dev/null
assert_eq "$(second code <"$E2E_TMP/r6")" EINVALID "by hand: after_read with a path of its own"
assert_eq "$(sha256sum /etc/shadow)" "$shadow" "by hand: /etc/shadow untouched"
# Backups elsewhere.
req='{"id":1,"op":"backups","path":"/etc/shadow","backup":{"dir":"/tmp"}}'
frame "$req" | host_ssh $H "sudo -n $AGENT" >"$E2E_TMP/r3" 2>/dev/null
assert_contains "$(reply message <"$E2E_TMP/r3")" \
    "backup directory '/tmp' is not '/var/backups/envctl'" "by hand: backups"
# Anything but the agent: sudo refuses.
out=$(host_ssh $H 'sudo -n /bin/cat /etc/shadow' 2>&1) &&
    fail "sudo -n cat ran under the narrow rule"

# --- a replaced cached agent, under the pinned rule: sudo refuses it -------
tamper() {
	host_ssh $H "printf x >>$AGENT" || fail "cannot change $AGENT"
	[ "$(sha256sum <"$OUTSIDE/$NAME" | cut -d' ' -f1)" != "$SHA" ] ||
	    fail "the agent was not changed"
}
# tampered LABEL: a plan reports it, replaces it and reads the host.
tampered() {
	plan_ok "$1"
	assert_contains "$(cat "$E2E_TMP/err")" \
	    "$H: the cached agent $AGENT does not match its digest (tampered or foreign); removed it, uploading again" \
	    "$1: the tamper is reported"
	assert_eq "$(sha256sum <"$OUTSIDE/$NAME" | cut -d' ' -f1)" "$SHA" \
	    "$1: the agent was uploaded again"
	plan_ok "$1, after"
	assert_eq "$(cat "$E2E_TMP/err")" "" "$1, after: nothing reported"
}
tamper
tampered "tampered, pinned rule"

# --- under NOPASSWD: ALL: the agent's own digest check refuses it --------
set_rule "$OPS ALL=(ALL) NOPASSWD: ALL"
tamper
out=$(host_ssh $H "sudo -n $AGENT </dev/null" 2>&1)
rc=$?
assert_eq "$rc" 96 "tampered agent run by hand: exit status"
assert_contains "$out" "does not match its digest" "tampered agent by hand: message"
tampered "tampered, ALL rule"

# --- ansible_become_user other than root -----------------------------------
set_rule "$OPS ALL=(nobody) NOPASSWD: sha256:$SHA $AGENT"
# The agent must be reachable by nobody: the home searchable (0711).
chmod 711 "$(host_ops_home $H)" || fail "chmod of the home"
INV=$E2E_TMP/hosts-nobody.yaml
python3 - "$FLEET_INVENTORY" "$INV" <<'PY' || fatal "cannot write $INV"
import sys, yaml
inv = yaml.safe_load(open(sys.argv[1]))
for h in inv["all"]["children"]["fleet"]["hosts"].values():
    h["ansible_become_user"] = "nobody"
yaml.safe_dump(inv, open(sys.argv[2], "w"))
PY
out=$("$ENVCTL_BIN" facts "$INV" "${KH[@]}" --color never --timeout 20 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 0 "become_user nobody: facts exit status"
assert_contains "$out" "user nobody," "become_user nobody: the agent's user"
assert_eq "$(stat -c '%a' "$OUTSIDE/$NAME")" 755 "become_user: agent mode"
assert_eq "$(stat -c '%a' "$OUTSIDE")" 711 "become_user: cache dir mode"
plan_ok "become_user nobody" "$INV"

fleet_stop
