#!/bin/bash
# t-backups.sh - backups keep their history, against real sshd hosts:
# eleven `drift --fix` runs whose verification fails (the managed file is
# shadowed) each restore the file and leave the older distinct backups
# exactly as they were, and `envctl backups` lists them; an agent killed
# by a signal is reported with that signal, over SSH and as a local child.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 sha256sum

RIGHT=$E2E_TMP/right.py
BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
# The file python3 imports sets every variable the playbooks below want.
fleet_start 1 --seed "$RIGHT"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
LOCK=(--lock "$E2E_TMP/drift.lock")
INV=$FLEET_INVENTORY

# A playbook managing site-packages' sitecustomize.py, which python3 never
# imports (Debian's comes first on sys.path): it verifies while the file
# that is imported sets the same values, and fails once that one is broken.
SP=/usr/local/lib/python$FLEET_PYVER/dist-packages/sitecustomize.py
STORE=$(host_dir gpu-01)/var-backups-envctl$SP
VARS=("NCCL_PROTO: LL" "NCCL_ALGO: Ring" "NCCL_P2P_LEVEL: SYS"
    "NCCL_MAX_NCHANNELS: '16'" "NCCL_BUFFSIZE: '16777216'")
playbook() { # N: revision N manages the first N variables
	local i
	{
		printf 'name: sp%s\npath: %s\nmode: block\nbackup: {keep: 3}\nenv:\n' \
		    "$1" "$SP"
		for ((i = 0; i < $1; i++)); do
			printf '  %s\n' "${VARS[$i]}"
		done
	} >"$E2E_TMP/sp$1.yaml"
	printf '%s\n' "$E2E_TMP/sp$1.yaml"
}
ids() { # the backup ids on the host, oldest first
	find "$STORE" -maxdepth 1 -name '*.json' -printf '%f\n' 2>/dev/null |
	    sed 's/\.json$//' | sort
}

# --- history: four changes, keep 3 ------------------------------------------
for n in 1 2 3 4; do
	out=$("${E[@]}" apply "$INV" "${KH[@]}" -p "$(playbook $n)" --yes 2>&1)
	assert_eq "$?" 0 "revision $n: apply" || note "$out"
	assert_contains "$out" "gpu-01: changed (backup " "revision $n: changed"
done
before=$(ids)
note "backups before: $(words "$before")"
assert_eq "$(printf '%s\n' "$before" | grep -c .)" 3 "keep 3: three backups"
cur=$(host_ssh gpu-01 "sha256sum <$SP" | cut -d' ' -f1)

# --- eleven drift --fix runs whose verification fails ----------------------
cp "$BROKEN" "$(host_file gpu-01)"
PB5=$(playbook 5)
for i in $(seq 11); do
	out=$("${E[@]}" drift "$INV" "${KH[@]}" "${LOCK[@]}" -p "$PB5" --fix 2>&1)
	rc=$?
	[ "$rc" = 1 ] || fail "drift --fix run $i: exit status $rc, want 1"
	assert_contains "$out" "verification failed" "drift --fix run $i: verification" ||
	    note "$out"
	assert_contains "$out" "the previous file was restored" "drift --fix run $i: restored"
done
after=$(ids)
assert_eq "$(words "$after")" "$(words "$before")" \
    "eleven failed --fix runs: the same backups, none added, none pruned"
assert_eq "$(find "$STORE" -mindepth 1 | wc -l)" 6 "three pairs, no leftover"
assert_eq "$(host_ssh gpu-01 "sha256sum <$SP" | cut -d' ' -f1)" "$cur" \
    "the file is what it was"
# The three are three versions.
# shellcheck disable=SC2086 # $before: one backup id a word, split on purpose
assert_eq "$(cd "$STORE" && sha256sum $before | cut -d' ' -f1 | sort -u | wc -l)" 3 \
    "three distinct versions kept"

out=$("${E[@]}" backups "$INV" "${KH[@]}" -p "$PB5" 2>&1)
assert_eq "$?" 0 "backups: exit status"
assert_contains "$out" "gpu-01: 3 backups of $SP" "backups lists three"
for id in $before; do
	assert_contains "$out" "$id" "backups lists $id"
done

# A success afterwards prunes to keep 3 by version: the newest stays, and
# the backup of the file it replaced joins them.
cp "$RIGHT" "$(host_file gpu-01)"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -p "$PB5" --yes 2>&1)
assert_eq "$?" 0 "apply after the failures" || note "$out"
newest=$(printf '%s\n' "$before" | tail -n 1)
assert_contains "$(ids)" "$newest" "the newest older backup stays"
assert_eq "$(ids | grep -c .)" 3 "still three"

# --- an agent killed by a signal is named with it --------------------------
# The interpreter's parent is a waiter (agent/child.c), which a file that
# kills its parent ends instead of the agent (t-repair); the agent is the
# waiter's parent, so the killer goes one level up.
KILLER=/usr/local/bin/envctl-e2e-killer
# shellcheck disable=SC2016 # expanded by the killer, at its run
KILL_AGENT='kill -KILL $(cut -d" " -f4 /proc/$PPID/stat)'
host_ssh gpu-01 "printf '#!/bin/sh\n%s\nexec /usr/bin/python3 \"\$@\"\n' \
    '$KILL_AGENT' >$KILLER && chmod 755 $KILLER" ||
    fatal "cannot write the killer on gpu-01"
# The inventory's ansible_python_interpreter wins over a playbook's.
sed "s|ansible_python_interpreter: .*|ansible_python_interpreter: $KILLER|" \
    "$INV" >"$E2E_TMP/killer-hosts.yaml"
grep -q "interpreter: $KILLER" "$E2E_TMP/killer-hosts.yaml" ||
    fatal "cannot point the inventory at the killer"
out=$("${E[@]}" plan "$E2E_TMP/killer-hosts.yaml" "${KH[@]}" 2>&1)
assert_eq "$?" 1 "killed agent over SSH: exit status"
note "$out"
assert_contains "$out" "the agent was killed by signal 9 (SIGKILL)" "killed agent over SSH: the signal"
case $out in *"exit -1"*) fail "killed agent over SSH: 'exit -1' in: $out" ;; esac

# The same as a local child (ansible_connection: local).
LK=$E2E_TMP/killer
printf '#!/bin/sh\n%s\nexec /usr/bin/python3 "$@"\n' "$KILL_AGENT" >"$LK"
chmod 755 "$LK"
printf 'all:\n  hosts:\n    me:\n      ansible_connection: local\n' >"$E2E_TMP/local.yaml"
printf 'name: killer\ninterpreter: %s\nenv:\n  NCCL_PROTO: LL\n' "$LK" \
    >"$E2E_TMP/lkiller.yaml"
out=$("${E[@]}" plan "$E2E_TMP/local.yaml" --color never -p "$E2E_TMP/lkiller.yaml" 2>&1)
assert_eq "$?" 1 "killed local agent: exit status"
note "$out"
assert_contains "$out" "the agent was killed by signal 9 (SIGKILL)" "killed local agent: the signal"
