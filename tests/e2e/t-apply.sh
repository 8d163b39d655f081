#!/bin/bash
# t-apply.sh - envctl apply, backups and rollback against real sshd hosts:
# the broken seed converges and Python proves it; the symlink stays a
# symlink; the backup is the old file byte for byte; a second apply is a
# no-op; a saved plan refuses a host whose file changed since; rollback
# restores bytes and removes what apply created; no temp file is left;
# --json lists every host for apply, apply PLANFILE and rollback; an old
# backup that cannot be pruned is a warning, not a failure.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 sha256sum stat

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
DEFAULT=$ENVCTL_FIXTURES/debian-default.sitecustomize.py
RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"

fleet_start 3 --seed "$BROKEN" --seed "$DEFAULT" --seed "$RIGHT"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
INV=$FLEET_INVENTORY

backups_of() {
	local d
	d=$(host_dir "$1")/var-backups-envctl/etc/python$FLEET_PYVER/sitecustomize.py
	[ -d "$d" ] || return 0
	find "$d" -maxdepth 1 -type f ! -name '*.json' | sort
}

no_temp_files() {
	local h left
	for h in "${FLEET_HOSTS[@]}"; do
		left=$(find "$(host_dir "$h")/etc-python" -mindepth 1 ! -name sitecustomize.py)
		assert_eq "$left" "" "$h: temp files left beside sitecustomize.py"
	done
}

# --- without --yes and without a terminal, apply refuses ----------------
out=$("${E[@]}" apply "$INV" "${KH[@]}" </dev/null 2>&1)
assert_eq "$?" 64 "apply without --yes, no terminal"
assert_contains "$out" "add --yes" "apply explains --yes"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "refused apply changed nothing"

# --- on a terminal it asks; "n" changes nothing ----------------------------
if command -v script >/dev/null; then
	out=$(printf 'n\n' | script -qec "'$ENVCTL_BIN' apply '$INV' --known-hosts '$FLEET_KNOWN_HOSTS' --color never" /dev/null 2>&1)
	assert_contains "$out" "Apply to 2 hosts? [y/N]" "apply asks on a terminal"
	assert_contains "$out" "nothing changed" "answering n changes nothing"
	assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "after n: file untouched"
fi

# --- apply converges the broken host -------------------------------------
mode_before=$(stat -c '%a %U:%G' "$(host_file gpu-01)")
out=$("${E[@]}" apply "$INV" "${KH[@]}" --yes 2>&1)
rc=$?
note "$out"
assert_eq "$rc" 0 "apply exit status"
assert_contains "$out" "gpu-01: changed (backup " "gpu-01 changed with a backup"
assert_contains "$out" "gpu-02: changed" "gpu-02 changed"
assert_contains "$out" "gpu-03: ok" "gpu-03 untouched"
assert_contains "$out" "2 changed, 1 in sync" "apply summary"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$RIGHT")" "gpu-01 has the desired file"
assert_eq "$(stat -c '%a %U:%G' "$(host_file gpu-01)")" "$mode_before" "mode and owner kept"
link=$(host_ssh gpu-01 "readlink $FLEET_SITE")
assert_eq "$link" "$FLEET_ETC_SITE" "the symlink is still a symlink"
py=$(host_ssh gpu-01 "env -i PATH=/usr/bin:/bin /usr/bin/python3 -c 'import os
for k in \"CUDA_HOME TRITON_PTXAS_PATH TRITON_PTXAS_BLACKWELL_PATH NCCL_PROTO NCCL_ALGO NCCL_P2P_LEVEL NCCL_MAX_NCHANNELS NCCL_BUFFSIZE NCCL_NTHREADS\".split(): print(k, os.environ.get(k))'" 2>"$E2E_TMP/pyerr")
assert_eq "$(cat "$E2E_TMP/pyerr")" "" "fresh python3 on gpu-01 prints nothing on stderr"
assert_eq "$(words "$py")" "CUDA_HOME /usr/local/cuda-13.0 TRITON_PTXAS_PATH /usr/local/cuda-13.0/bin/ptxas TRITON_PTXAS_BLACKWELL_PATH /usr/local/cuda-13.0/bin/ptxas NCCL_PROTO LL NCCL_ALGO Ring NCCL_P2P_LEVEL SYS NCCL_MAX_NCHANNELS 16 NCCL_BUFFSIZE 16777216 NCCL_NTHREADS 512" \
    "all nine variables in effect on gpu-01"
b=$(backups_of gpu-01)
assert_eq "$(printf '%s\n' "$b" | grep -c .)" 1 "gpu-01: one backup"
assert_eq "$(sha256 "$b")" "$(sha256 "$BROKEN")" "backup is the seed byte for byte"
assert_eq "$(stat -c %a "$b")" 600 "backup mode"
no_temp_files

# --- a second apply changes nothing and writes no backup -----------------
# The change goes with the read, and the agent skips it on a host already
# as wanted: not even the host's lock is taken (its record names the
# last holder's pid).
LOCK=$(host_dir gpu-01)/var-lib-envctl/locks/%etc%python$FLEET_PYVER%sitecustomize.py.lock
[ -f "$LOCK" ] || fail "apply left no lock record at $LOCK"
held=$(cat "$LOCK")
out=$("${E[@]}" apply "$INV" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "second apply exit status"
assert_contains "$out" "
3 in sync" "second apply: all in sync"
assert_eq "$(backups_of gpu-01 | grep -c .)" 1 "no new backup"
assert_eq "$(cat "$LOCK")" "$held" "second apply: the in-sync host's lock was not taken"
"${E[@]}" plan "$INV" "${KH[@]}" >/dev/null
assert_eq "$?" 0 "plan after apply: in sync"

# --- a saved plan refuses a host whose file changed since ----------------
cp "$BROKEN" "$(host_file gpu-01)"
cp "$BROKEN" "$(host_file gpu-03)"
"${E[@]}" plan "$INV" "${KH[@]}" -o "$E2E_TMP/p.json" >/dev/null
assert_eq "$?" 2 "plan -o with changes"
printf '# edited by hand\n' >>"$(host_file gpu-03)"
edited=$(host_hash gpu-03)
out=$("${E[@]}" apply "$E2E_TMP/p.json" --known-hosts "$FLEET_KNOWN_HOSTS" --color never 2>&1)
assert_eq "$?" 1 "apply PLANFILE with a refused host"
assert_contains "$out" "gpu-01: changed" "plan file: gpu-01 applied"
assert_contains "$out" "gpu-03: failed" "plan file: gpu-03 refused"
assert_contains "$out" "changed since" "plan file: the reason"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$RIGHT")" "plan file: gpu-01 converged"
assert_eq "$(host_hash gpu-03)" "$edited" "plan file: gpu-03 untouched"

# --- a plan made from another inventory is refused as a whole ------------
printf '\n' >>"$INV"
out=$("${E[@]}" apply "$E2E_TMP/p.json" --known-hosts "$FLEET_KNOWN_HOSTS" 2>&1)
assert_eq "$?" 1 "apply of a stale plan"
assert_contains "$out" "changed since the plan was made" "stale plan: reason"
# The vars folders beside the inventory are inputs too.
"${E[@]}" plan "$INV" "${KH[@]}" -o "$E2E_TMP/p3.json" >/dev/null
assert_eq "$?" 2 "plan -o before a group_vars edit"
mkdir "$(dirname "$INV")/group_vars"
printf 'unrelated: 1\n' >"$(dirname "$INV")/group_vars/all.yml"
out=$("${E[@]}" apply "$E2E_TMP/p3.json" --known-hosts "$FLEET_KNOWN_HOSTS" 2>&1)
assert_eq "$?" 1 "apply of a plan made before group_vars/ changed"
assert_contains "$out" "changed since the plan was made" "group_vars: reason"
assert_eq "$(host_hash gpu-03)" "$edited" "group_vars: gpu-03 untouched"
rm -r "$(dirname "$INV")/group_vars"

# --- backups and rollback ------------------------------------------------
out=$("${E[@]}" backups "$INV" "${KH[@]}" -l gpu-01 2>&1)
assert_eq "$?" 0 "backups exit status"
# The plan file's apply found the same bytes as the first one backed up:
# that backup is named again, not written twice.
assert_contains "$out" "gpu-01: 1 backup of $FLEET_ETC_SITE" "backups: same bytes kept once"
# Backup metadata comes from the host: an escape sequence in it is text.
meta=$(backups_of gpu-01 | tail -n 1).json
cp "$meta" "$E2E_TMP/meta.saved"
python3 - "$meta" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["controller"] = "ops\x1b[2J\x1b]52;c;ZXZpbA==\x07"
json.dump(m, open(sys.argv[1], "w"))
PY
out=$("${E[@]}" backups "$INV" "${KH[@]}" -l gpu-01 2>&1)
case $out in
*$'\033'*|*$'\007'*) fail "backups: a control character reached the output" ;;
esac
assert_contains "$out" 'from ops\x1b[2J\x1b]52;c;ZXZpbA==\x07' \
    "backups: metadata shown with escapes"
cp "$E2E_TMP/meta.saved" "$meta"
out=$("${E[@]}" rollback "$INV" "${KH[@]}" -l gpu-01 --yes 2>&1)
assert_eq "$?" 0 "rollback exit status"
assert_contains "$out" "gpu-01: changed (restored " "rollback restored a backup"
assert_contains "$out" "TypeError: str expected, not ellipsis" "rollback reports the restored file raises"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "rollback restored the bytes"
assert_eq "$(stat -c '%a %U:%G' "$(host_file gpu-01)")" "$mode_before" "rollback: mode and owner"

# --- apply creates a missing file; rollback removes it --------------------
# Wherever the host's python3 then imports it from (the dangling Debian
# link's target, or site-packages), it is checked through the host itself.
rm -f "$(host_file gpu-02)"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes 2>&1)
assert_eq "$?" 0 "apply creating the file"
origin=$(host_ssh gpu-02 "/usr/bin/python3 -c 'import importlib.util as u; print(u.find_spec(\"sitecustomize\").origin)'")
note "created file imported from $origin"
# Debian's link was left dangling: its target is what gets recreated.
assert_eq "$origin" "$FLEET_SITE" "the dangling link is the file managed"
assert_eq "$(host_hash gpu-02)" "$(sha256 "$RIGHT")" "the link's target recreated"
assert_eq "$(host_ssh gpu-02 "sha256sum <$origin" | cut -d' ' -f1)" "$(sha256 "$RIGHT")" "created file content"
assert_eq "$(host_ssh gpu-02 "stat -L -c '%a %U:%G' $origin")" "644 root:root" "created file mode"
out=$("${E[@]}" rollback "$INV" "${KH[@]}" -l gpu-02 --yes 2>&1)
assert_eq "$?" 0 "rollback of a created file"
assert_eq "$(host_ssh gpu-02 "test -e $origin && echo present || echo gone")" gone \
    "rollback removed the created file"
no_temp_files

# --- apply --json lists every host, not only the ones it changed ----------
"${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes >/dev/null
assert_eq "$?" 0 "gpu-02 converged again"
json=$("${E[@]}" apply "$INV" "${KH[@]}" --yes --json)
assert_eq "$?" 0 "apply --json exit status"
printf '%s' "$json" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["command"] == "apply", doc
got = [(h["name"], h["outcome"]) for h in doc["hosts"]]
assert got == [("gpu-01", "changed"), ("gpu-02", "ok"), ("gpu-03", "changed")], got
for h in doc["hosts"]:
    assert (h["backup"] is None) == (h["outcome"] == "ok"), h
    assert h["error"] is None and h["restored"] is False, h
assert doc["summary"] == {"ok": 1, "changed": 2, "pending": 0, "failed": 0, "unreachable": 0, "skipped": 0}, doc["summary"]
assert doc["inventory"] and doc["playbook"]["name"] == "cuda13-nccl", doc
' || fail "apply --json: every host with its outcome"

# --- a plan file names the hosts that failed when it was made --------------
cp "$BROKEN" "$(host_file gpu-01)"
pid=$(awk '$1 == "gpu-03" {print $2}' "$FLEET_DIR/pids")
kill -STOP "$pid"
"${E[@]}" plan "$INV" "${KH[@]}" --timeout 3 -o "$E2E_TMP/p2.json" >/dev/null 2>&1
assert_eq "$?" 1 "plan -o with an unreachable host"
# apply --yes waits --timeout to connect, not the change's longer bound.
start=$(date +%s)
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-03 --yes --timeout 3 2>&1)
assert_eq "$?" 1 "apply --yes to a stopped host"
assert_contains "$out" "gpu-03: unreachable: did not finish in 3 s (deadline for the whole host)" "apply --yes: --timeout to connect"
[ $(($(date +%s) - start)) -le 10 ] || fail "apply --yes to a stopped host took more than 10 s"
out=$("${E[@]}" apply "$E2E_TMP/p2.json" "${KH[@]}" 2>&1)
assert_eq "$?" 1 "apply PLANFILE: exit status names the unreachable host"
assert_contains "$out" "gpu-01: changed" "apply PLANFILE: gpu-01 applied"
assert_contains "$out" "gpu-03: unreachable when the plan was made; not applied" \
    "apply PLANFILE: gpu-03 said"
assert_contains "$out" "1 changed, 1 in sync, 1 unreachable" "apply PLANFILE: summary"
cp "$BROKEN" "$(host_file gpu-01)"
json=$("${E[@]}" apply "$E2E_TMP/p2.json" "${KH[@]}" --json)
assert_eq "$?" 1 "apply PLANFILE --json exit status"
kill -CONT "$pid"
printf '%s' "$json" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
got = [(h["name"], h["outcome"]) for h in doc["hosts"]]
assert got == [("gpu-01", "changed"), ("gpu-02", "ok"), ("gpu-03", "unreachable")], got
assert doc["summary"] == {"ok": 1, "changed": 1, "pending": 0, "failed": 0, "unreachable": 1, "skipped": 0}, doc["summary"]
' || fail "apply PLANFILE --json: every host of the plan"

# --- rollback --json --------------------------------------------------------
"${E[@]}" rollback "$INV" "${KH[@]}" -l gpu-01 --json </dev/null >/dev/null 2>&1
assert_eq "$?" 64 "rollback --json without --yes"
json=$("${E[@]}" rollback "$INV" "${KH[@]}" -l gpu-01 --yes --json)
assert_eq "$?" 0 "rollback --yes --json exit status"
printf '%s' "$json" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["command"] == "rollback", doc
[h] = doc["hosts"]
assert h["name"] == "gpu-01" and h["outcome"] == "changed", h
assert h["restored"] and h["backup"] and h["restored"] != h["backup"], h
assert h["startup_error"] == "TypeError: str expected, not ellipsis", h
assert h["error"] is None, h
assert doc["summary"] == {"ok": 0, "changed": 1, "pending": 0, "failed": 0, "unreachable": 0, "skipped": 0}, doc["summary"]
' || fail "rollback --json: the restored backup, the new one, the startup error"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "rollback --json restored the seed"

# --- an old backup that cannot be pruned: the change is done, and said -----
# A playbook keeping one backup, and the oldest backup's file made a mount
# point inside gpu-01's namespace (a bind mount on itself), which unlink
# refuses with EBUSY; the mount goes with the host's namespace.
require nsenter
mkdir -p "$E2E_TMP/pb"
sed 's/^  keep: 10$/  keep: 1/' "$E2E_REPO/playbooks/cuda13-nccl.yaml" \
    >"$E2E_TMP/pb/cuda13-nccl.yaml"
cp "$E2E_REPO/playbooks/cuda13-nccl.sitecustomize.py.tmpl" "$E2E_TMP/pb/"
grep -q '^  keep: 1$' "$E2E_TMP/pb/cuda13-nccl.yaml" || fatal "no keep: 1 playbook"
oldest=$(backups_of gpu-01 | head -n 1)
[ -n "$oldest" ] || fatal "gpu-01 has no backup to pin"
inside=/var/backups/envctl/etc/python$FLEET_PYVER/sitecustomize.py/$(basename "$oldest")
pid=$(awk '$1 == "gpu-01" {print $2}' "$FLEET_DIR/pids")
nsenter -t "$pid" -m mount --bind "$inside" "$inside" ||
    fatal "cannot pin $inside in gpu-01's namespace"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-01 --yes -p "$E2E_TMP/pb/cuda13-nccl.yaml" 2>&1)
assert_eq "$?" 0 "apply with a backup that cannot be pruned"
assert_contains "$out" "gpu-01: changed" "prune failure: the change is done"
assert_contains "$out" "    warning   cannot remove " "prune failure: said as a warning"
json=$("${E[@]}" rollback "$INV" "${KH[@]}" -l gpu-01 --yes --json -p "$E2E_TMP/pb/cuda13-nccl.yaml")
assert_eq "$?" 0 "rollback --json with a backup that cannot be pruned"
printf '%s' "$json" | python3 -c '
import json, sys
[h] = json.load(sys.stdin)["hosts"]
assert h["outcome"] == "changed" and h["warning"].startswith("cannot remove "), h
' || fail "rollback --json: the prune warning"
note "$out"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "prune failure: gpu-01 rolled back"
nsenter -t "$pid" -m umount "$inside" || fail "cannot unpin $inside"
