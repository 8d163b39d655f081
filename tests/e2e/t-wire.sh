#!/bin/bash
# t-wire.sh - the structure that makes envctl fast, counted by the hosts'
# own sshd logs (not by envctl): every command makes exactly one SSH
# connection per host; a warm plan uses one exec channel (at most two
# allowed), carrying its requests; a cold host gets the agent through the
# same exec channel; SFTP is never used.
# Nothing here is timed: `make bench` measures speed.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
DEFAULT=$ENVCTL_FIXTURES/debian-default.sitecustomize.py
fleet_start 3 --seed "$BROKEN" --seed "$DEFAULT" --seed "$BROKEN"
E=("$ENVCTL_BIN")
INV=$FLEET_INVENTORY
KH=(--known-hosts "$FLEET_KNOWN_HOSTS")

# counts: "NAME CONNECTIONS EXECS SFTP" per host, from its sshd log.
counts() {
	local h log
	for h in "${FLEET_HOSTS[@]}"; do
		log=$(host_dir "$h")/sshd.log
		printf '%s %s %s %s\n' "$h" \
		    "$(grep -c 'Accepted publickey' "$log")" \
		    "$(grep -c 'Starting session: command' "$log")" \
		    "$(grep -c "Starting session: subsystem 'sftp'" "$log")"
	done
}

# expect WHAT CONNS EXECS SFTP CMD...: runs CMD, then checks what each host
# saw during it.  EXECS may be "1-2" (at least 1, at most 2).
expect() {
	local what=$1 conns=$2 execs=$3 sftp=$4 h c0 e0 s0 c1 e1 s1 lo hi
	shift 4
	counts >"$E2E_TMP/before"
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	note "$what: exit $?"
	counts >"$E2E_TMP/after"
	lo=${execs%-*} hi=${execs#*-}
	while read -r h c0 e0 s0 && read -r _ c1 e1 s1 <&3; do
		assert_eq "$((c1 - c0))" "$conns" "$what: $h: SSH connections"
		if [ $((e1 - e0)) -lt "$lo" ] || [ $((e1 - e0)) -gt "$hi" ]; then
			fail "$what: $h: $((e1 - e0)) exec channels, want $execs"
		fi
		assert_eq "$((s1 - s0))" "$sftp" "$what: $h: SFTP sessions"
	done <"$E2E_TMP/before" 3<"$E2E_TMP/after"
}

# --- cold: one connection; one exec (the bootstrap takes the agent on its
# stdin, checks its digest and becomes it), no SFTP -----------------------
expect "cold plan" 1 1 0 "${E[@]}" plan "$INV" "${KH[@]}" --json
python3 - "$E2E_TMP/out" <<'PY' || fail "cold plan: envctl's own counts"
import json, sys
doc = json.load(open(sys.argv[1]))
for h in doc["hosts"]:
    s = h["stats"]
    # The exec (its requests in it), then the agent sent on its stdin.
    assert s == {"channels": 1, "round_trips": 2}, (h["name"], s)
PY
# --- warm: one connection, one exec, no SFTP --------------------------------
expect "warm plan" 1 1-2 0 "${E[@]}" plan "$INV" "${KH[@]}" --json
python3 - "$E2E_TMP/out" <<'PY' || fail "warm plan: envctl's own counts"
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["hosts"]) == 3
for h in doc["hosts"]:
    s = h["stats"]
    assert 1 <= s["channels"] <= 2, (h["name"], s)
    # hello and read go out with the exec itself: one round trip for the
    # whole plan after the channel is open.
    assert s["round_trips"] == 1, (h["name"], s)
PY
expect "plan -o" 1 1 0 "${E[@]}" plan "$INV" "${KH[@]}" -o "$E2E_TMP/plan.json"
expect "facts" 1 1 0 "${E[@]}" facts "$INV" "${KH[@]}"
expect "drift" 1 1 0 "${E[@]}" drift "$INV" "${KH[@]}" \
    --lock "$E2E_TMP/drift.lock"

# --- apply reads and writes on the same session ---------------------------
# round_trips_are N: every host's --json stats in $E2E_TMP/out say N.
round_trips_are() {
	python3 - "$E2E_TMP/out" "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["hosts"]) == 3
for h in doc["hosts"]:
    assert h["stats"] == {"channels": 1, "round_trips": int(sys.argv[2])}, \
        (h["name"], h["stats"])
PY
}
# A plan file's change needs the read's answer: one round trip more.
expect "apply PLANFILE" 1 1 0 "${E[@]}" apply "$E2E_TMP/plan.json" "${KH[@]}" --json
round_trips_are 2 || fail "apply PLANFILE: envctl's own counts"
# apply --yes with a whole-file template: the change goes with the read.
for h in "${FLEET_HOSTS[@]}"; do cp "$BROKEN" "$(host_file "$h")"; done
expect "apply --yes" 1 1 0 "${E[@]}" apply "$INV" "${KH[@]}" --yes --json
round_trips_are 1 || fail "apply --yes: envctl's own counts"
assert_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["changed"])' "$E2E_TMP/out")" 3 \
    "apply --yes changed all"
# A mode: block playbook renders into the file the read finds: its change
# waits for the read, and whatever else the file holds stays.
printf 'name: blk\nmode: block\nenv:\n  NCCL_PROTO: LL\n' >"$E2E_TMP/blk.yaml"
for h in "${FLEET_HOSTS[@]}"; do
	printf 'import sys  # the operator keeps this\n' >"$(host_file "$h")"
done
expect "apply --yes, mode: block" 1 1 0 "${E[@]}" apply "$INV" "${KH[@]}" \
    -p "$E2E_TMP/blk.yaml" --yes --json
round_trips_are 2 || fail "apply --yes, mode: block: envctl's own counts"
for h in "${FLEET_HOSTS[@]}"; do
	f=$(cat "$(host_file "$h")")
	assert_contains "$f" "import sys  # the operator keeps this" "mode: block: $h kept its line"
	assert_contains "$f" "NCCL_PROTO" "mode: block: $h has the block"
done
cp "$DEFAULT" "$(host_file gpu-02)"
expect "drift --fix" 1 1 0 "${E[@]}" drift "$INV" "${KH[@]}" --fix \
    --lock "$E2E_TMP/drift.lock"
assert_contains "$(cat "$E2E_TMP/out")" "gpu-02" "drift --fix fixed gpu-02"
expect "backups" 1 1 0 "${E[@]}" backups "$INV" "${KH[@]}"
expect "rollback --yes" 1 1 0 "${E[@]}" rollback "$INV" "${KH[@]}" --yes

# --- answered on a terminal: the read's session is closed while the
# question waits, and each chosen host is changed on a fresh one ----------
if command -v script >/dev/null; then
	# answered CONNS ANSWER CMD QUESTION RESULT: envctl CMD on a
	# pseudo-terminal, answering; CONNS connections per host, and the
	# question and the result in what it printed.
	answered() {
		local conns=$1 answer=$2 cmd=$3 question=$4 result=$5
		on_tty() {
			printf '%s\n' "$answer" | script -qec "$*" /dev/null
		}
		expect "$cmd, answered $answer" "$conns" "$conns" 0 on_tty \
		    "$ENVCTL_BIN" "$cmd" "$INV" --known-hosts \
		    "$FLEET_KNOWN_HOSTS" --color never
		assert_contains "$(cat "$E2E_TMP/out")" "$question" \
		    "$cmd, answered $answer: asked"
		assert_contains "$(cat "$E2E_TMP/out")" "$result" \
		    "$cmd, answered $answer: $result"
	}
	for h in "${FLEET_HOSTS[@]}"; do cp "$BROKEN" "$(host_file "$h")"; done
	answered 2 y apply "Apply to 3 hosts? [y/N]" "3 changed"
	answered 2 y rollback "Roll back 3 hosts? [y/N]" "3 changed"
	# A no still prints the summary of what rollback would have done.
	answered 1 n rollback "Roll back 3 hosts? [y/N]" "3 to change"
	assert_contains "$(cat "$E2E_TMP/out")" "nothing changed" \
	    "rollback, answered n: nothing changed"
fi
