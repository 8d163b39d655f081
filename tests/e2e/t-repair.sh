#!/bin/bash
# t-repair.sh - hosts whose start-up is broken stay repairable (issue 16
# item 7, docs/security.md): a sitecustomize that exits, one that hangs and
# one that kills its parent (on a become host under the narrow,
# digest-pinned sudo rule) are read as pending with the cause, found
# without running them (-S -I), repaired by apply, kept in the backups,
# put back by rollback (the restored file's failure noted), then repaired
# again by drift --fix. The hang leaves no process behind.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require sha256sum python3 /usr/bin/sudo /usr/sbin/visudo

RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
fleet_start 3 --seed "$RIGHT" --become-host gpu-03:nopasswd
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never --timeout 6)
INV=$FLEET_INVENTORY
OPS=$FLEET_OPS_USER
now_ms() { local t=${EPOCHREALTIME/[.,]/}; printf '%s\n' $((t / 1000)); }

# --- gpu-03: the narrow rule, this agent only, pinned by its digest -------
out=$("${E[@]}" plan "$INV" "${KH[@]}" 2>&1)
assert_eq "$?" 0 "cold plan: in sync" || note "$out"
mapfile -t agents < <(find "$(host_ops_home gpu-03)/.cache/envctl/agent" \
    -type f -name 'envctl-agent-*' ! -name '*.*')
assert_eq "${#agents[@]}" 1 "gpu-03: one agent in the cache"
NAME=${agents[0]##*/}
RULE=$(host_dir gpu-03)/sudoers.d/$OPS
printf '%s ALL=(root) NOPASSWD: sha256:%s %s\n' "$OPS" "${NAME#envctl-agent-}" \
    "$FLEET_OPS_HOME/.cache/envctl/agent/$NAME" >"$RULE.new"
{ chmod 440 "$RULE.new" && /usr/sbin/visudo -c -f "$RULE.new" >/dev/null &&
    mv "$RULE.new" "$RULE"; } || fatal "cannot set the narrow sudo rule"

EXITS='import sys
sys.exit(3)
'
HANGS='import os, time
open("/root/hang.pid", "w").write(str(os.getpid()))
time.sleep(10 ** 6)
'
KILLS='import os
os.kill(os.getppid(), 9)
'
break_all() {
	printf '%s' "$EXITS" >"$(host_file gpu-01)"
	printf '%s' "$HANGS" >"$(host_file gpu-02)"
	printf '%s' "$KILLS" >"$(host_file gpu-03)"
}
# expect_causes LABEL OUT: each host's cause named.
expect_causes() {
	assert_contains "$2" "start-up fails: /usr/bin/python3 exited with status 1" "$1: gpu-01 exits"
	assert_contains "$2" "start-up fails: /usr/bin/python3 did not finish starting in" "$1: gpu-02 hangs"
	assert_contains "$2" "start-up fails: /usr/bin/python3 was killed by signal 9" "$1: gpu-03 kills its parent"
}
# all_right LABEL: every host holds the desired file.
all_right() {
	local h
	for h in "${FLEET_HOSTS[@]}"; do
		assert_eq "$(sha256 "$(host_file "$h")")" "$(sha256 "$RIGHT")" \
		    "$1: $h holds the desired file"
	done
}

# --- plan: pending, with the cause, never a failure -------------------------
break_all
t0=$(now_ms)
out=$("${E[@]}" plan "$INV" "${KH[@]}" 2>&1)
rc=$?
ms=$(($(now_ms) - t0))
note "plan of broken hosts: exit $rc in $ms ms"
assert_eq "$rc" 2 "plan: exit status (pending)" || note "$out"
for h in gpu-01 gpu-02 gpu-03; do
	assert_contains "$out" "$h: pending" "plan: $h pending"
done
expect_causes plan "$out"
assert_contains "$out" "(start-up fails) -> " "plan: values shown as not set"
[ "$ms" -le 6000 ] || fail "plan took $ms ms, past --timeout 6"
pid=$(cat "$(host_dir gpu-02)/root/hang.pid" 2>/dev/null)
[ -n "$pid" ] || fail "the hanging file did not run"
[ -n "$pid" ] && pid_alive "$pid" && fail "the hanging interpreter ($pid) was left running"

# --- apply repairs each, keeping the broken files as backups ---------------
out=$("${E[@]}" apply "$INV" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "apply: exit status" || note "$out"
assert_contains "$out" "3 changed" "apply: three changed"
all_right apply
for h in gpu-01 gpu-02 gpu-03; do
	store=$(host_dir "$h")/var-backups-envctl$FLEET_ETC_SITE
	newest=$(find "$store" -maxdepth 1 -type f ! -name '*.json' \
	    -printf '%f\n' 2>/dev/null | sort | tail -n 1)
	case $h in
	gpu-01) want=$EXITS ;; gpu-02) want=$HANGS ;; *) want=$KILLS ;;
	esac
	assert_eq "$(cat "$store/$newest" 2>/dev/null)" "${want%$'\n'}" \
	    "apply: $h's broken file is its newest backup"
done
out=$("${E[@]}" plan "$INV" "${KH[@]}" 2>&1)
assert_eq "$?" 0 "plan after apply: in sync" || note "$out"

# --- rollback puts them back, and says what their start-up does ------------
out=$("${E[@]}" rollback "$INV" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "rollback: exit status" || note "$out"
assert_eq "$(grep -c 'note      the restored file raises at startup: /usr/bin/python3 ' <<<"$out")" 3 \
    "rollback: each restored file's start-up failure noted" || note "$out"
assert_eq "$(sha256 "$(host_file gpu-03)")" "$(printf '%s' "$KILLS" | sha256sum | cut -d' ' -f1)" \
    "rollback: gpu-03 holds its old file again"

# --- drift sees them, drift --fix repairs them -----------------------------
LOCK=(--lock "$E2E_TMP/drift.lock")
out=$("${E[@]}" drift "$INV" "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_eq "$?" 2 "drift: exit status (drift)" || note "$out"
expect_causes drift "$out"
out=$("${E[@]}" drift "$INV" "${KH[@]}" "${LOCK[@]}" --fix 2>&1)
assert_eq "$?" 0 "drift --fix: exit status" || note "$out"
assert_eq "$(grep -c ': changed (backup ' <<<"$out")" 3 "drift --fix: three fixed"
all_right "drift --fix"
out=$("${E[@]}" drift "$INV" "${KH[@]}" "${LOCK[@]}" 2>&1)
assert_eq "$?" 0 "drift after the fix: silent" || note "$out"
assert_eq "$out" "" "drift after the fix: no output"

