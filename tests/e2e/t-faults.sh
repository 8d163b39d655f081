#!/bin/bash
# t-faults.sh - apply when things go wrong, against real sshd hosts:
# the agent killed at every step leaves the old or the new file, whole,
# no temp file after the next run, and the lock free; a candidate that
# does not work is refused before anything is written; two applies at once
# end consistent with one backup per change; an agent cache on a noexec
# mount and an agent built for another architecture fail at once, with
# the reason.
#
# Uses the agent built with test-only fault points (build/envctl-agent-
# faults, -DENVCTL_FAULTS) and ENVCTL_TEST_FAULT, which asks it to _exit
# at one step; no shipped agent accepts that.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 sha256sum
FAULTS_AGENT=${ENVCTL_AGENT_FAULTS:-$E2E_REPO/build/envctl-agent-faults}
[ -x "$FAULTS_AGENT" ] || missing "no $FAULTS_AGENT (make build/envctl-agent-faults)"
export ENVCTL_AGENT=$FAULTS_AGENT

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
OLD=$(sha256 "$BROKEN")
NEW=$(sha256 "$RIGHT")

fleet_start 2 --seed "$BROKEN"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
INV=$FLEET_INVENTORY
F=$(host_file gpu-01)

temp_files() {
	find "$(host_dir "$1")/etc-python" -mindepth 1 ! -name sitecustomize.py
}

# --- killed at every step: old or new, whole; next run cleans up ---------
for step in after-lock after-cas after-validate after-backup \
    after-temp-write after-fsync after-rename after-dirsync after-verify; do
	cp "$BROKEN" "$F"
	out=$(ENVCTL_TEST_FAULT=$step "${E[@]}" apply "$INV" "${KH[@]}" -l gpu-01 --yes 2>&1)
	rc=$?
	assert_eq "$rc" 1 "$step: apply reports the host failed"
	assert_contains "$out" "gpu-01: failed" "$step: host failed"
	h=$(sha256 "$F")
	case $step in
	after-rename | after-dirsync | after-verify)
		assert_eq "$h" "$NEW" "$step: the new file, whole" ;;
	*)
		assert_eq "$h" "$OLD" "$step: the old file, untouched" ;;
	esac
	start=$(date +%s)
	out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-01 --yes --lock-timeout 5 2>&1)
	rc=$?
	took=$(($(date +%s) - start))
	assert_eq "$rc" 0 "$step: the next apply succeeds: $out"
	[ "$took" -le 4 ] || fail "$step: the next apply waited ${took}s (stale lock?)"
	assert_eq "$(sha256 "$F")" "$NEW" "$step: converged afterwards"
	assert_eq "$(temp_files gpu-01)" "" "$step: no temp file after the next run"
done

# --- the change sent with the read ----------------------------------------
# The agent ends as it takes the change: the host failed, its file as it was.
cp "$BROKEN" "$F"
out=$(ENVCTL_TEST_FAULT=with-read "${E[@]}" apply "$INV" "${KH[@]}" -l gpu-01 --yes 2>&1)
assert_eq "$?" 1 "with-read: apply reports the host failed"
assert_contains "$out" "no reply to the change sent with the read" "with-read: the reason"
assert_eq "$(sha256 "$F")" "$OLD" "with-read: the old file, untouched"
# The agent skips it as if the file were right: the controller, which
# found the seed, sends the change again on its own.
out=$(ENVCTL_TEST_FAULT=skip-with-read "${E[@]}" apply "$INV" "${KH[@]}" -l gpu-01 --yes 2>&1)
assert_eq "$?" 0 "skip-with-read: apply exit status: $out"
assert_contains "$out" "gpu-01: changed (backup " "skip-with-read: changed all the same"
assert_eq "$(sha256 "$F")" "$NEW" "skip-with-read: converged"

# --- a candidate that does not work is refused before any write -----------
# A .pth line runs at every interpreter start, before sitecustomize: it
# pins NCCL_PROTO, so a setdefault file cannot take effect.
cp "$BROKEN" "$(host_file gpu-02)"
host_ssh gpu-02 "echo 'import os; os.environ[\"NCCL_PROTO\"] = \"Simple\"' >/usr/local/lib/python$FLEET_PYVER/dist-packages/zz-pin.pth"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes 2>&1)
assert_eq "$?" 1 "pinned host: apply fails"
assert_contains "$out" "the new file does not work" "pinned host: validation refused it"
assert_contains "$out" "NCCL_PROTO is 'Simple', want 'LL'" "pinned host: the reason"
assert_eq "$(host_hash gpu-02)" "$OLD" "pinned host: file untouched"
assert_eq "$(temp_files gpu-02)" "" "pinned host: no temp file"
host_ssh gpu-02 "rm -f /usr/local/lib/python$FLEET_PYVER/dist-packages/zz-pin.pth"

# --- installed, but shadowed: verification fails, the original is back ---
# A playbook managing site-packages' sitecustomize.py on a host whose
# python3 imports Debian's earlier on sys.path: the candidate works on its
# own (validation), but once installed it is never imported.
SP=/usr/local/lib/python$FLEET_PYVER/dist-packages/sitecustomize.py
printf 'name: shadowed\npath: %s\nmode: block\nenv:\n  NCCL_PROTO: LL\n' "$SP" \
    >"$E2E_TMP/shadowed.yaml"
out=$("${E[@]}" plan "$INV" "${KH[@]}" -l gpu-02 -p "$E2E_TMP/shadowed.yaml" 2>&1)
assert_contains "$out" "instead: this file has no effect" "plan warns of the shadowing"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 -p "$E2E_TMP/shadowed.yaml" --yes 2>&1)
assert_eq "$?" 1 "shadowed: apply fails"
assert_contains "$out" "verification failed" "shadowed: verification failed"
assert_contains "$out" "the previous file was restored" "shadowed: restored"
assert_eq "$(host_ssh gpu-02 "test -e $SP && echo present || echo absent")" absent \
    "shadowed: the file apply created is gone again"

# --- disk full and a read-only file system, inside the host only ---------
# The host's mount namespace is its sshd's; nsenter puts a tiny tmpfs over
# its /etc/python3.X, holding the seed and a filler that leaves no room.
require nsenter
pid=$(awk '$1 == "gpu-02" {print $2}' "$FLEET_DIR/pids")
ETC=/etc/python$FLEET_PYVER
nsenter -t "$pid" -m sh -c "cp $ETC/sitecustomize.py /tmp/.e2e-seed.$$ &&
    mount -t tmpfs -o size=16k,mode=0755 envctl-e2e $ETC &&
    cp /tmp/.e2e-seed.$$ $ETC/sitecustomize.py && rm /tmp/.e2e-seed.$$ &&
    (dd if=/dev/zero of=$ETC/.filler bs=1k count=64 2>/dev/null; true)" ||
    fatal "cannot mount the small tmpfs in gpu-02's namespace"
seen=$(host_ssh gpu-02 "sha256sum <$ETC/sitecustomize.py" | cut -d' ' -f1)
assert_eq "$seen" "$OLD" "full disk: the host still has the seed"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes 2>&1)
assert_eq "$?" 1 "full disk: apply fails"
assert_contains "$out" "No space left on device" "full disk: the reason"
seen=$(host_ssh gpu-02 "sha256sum <$ETC/sitecustomize.py; ls -A $ETC" | tr '\n' ' ')
assert_eq "$seen" "$OLD  - .filler sitecustomize.py " "full disk: original untouched, no temp file"
nsenter -t "$pid" -m sh -c "rm -f $ETC/.filler && mount -o remount,ro $ETC" ||
    fatal "cannot remount gpu-02's $ETC read-only"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes 2>&1)
assert_eq "$?" 1 "read-only: apply fails"
assert_contains "$out" "Read-only file system" "read-only: the reason"
seen=$(host_ssh gpu-02 "sha256sum <$ETC/sitecustomize.py" | cut -d' ' -f1)
assert_eq "$seen" "$OLD" "read-only: original untouched"
nsenter -t "$pid" -m umount "$ETC" || fatal "cannot unmount gpu-02's tmpfs"

# --- two applies at once ---------------------------------------------------
cp "$BROKEN" "$F"
cp "$BROKEN" "$(host_file gpu-02)"
bdir() {
	printf '%s/var-backups-envctl/etc/python%s/sitecustomize.py\n' \
	    "$(host_dir "$1")" "$FLEET_PYVER"
}
# The backups before, by name: a timestamp could not tell a backup of
# this second from one of the two runs.
backups() {
	find "$(bdir gpu-01)" -type f -name '*.json' 2>/dev/null | sort
}
backups >"$E2E_TMP/before"
"${E[@]}" apply "$INV" "${KH[@]}" --yes >"$E2E_TMP/a1" 2>&1 &
p1=$!
"${E[@]}" apply "$INV" "${KH[@]}" --yes >"$E2E_TMP/a2" 2>&1 &
p2=$!
wait "$p1"
r1=$?
wait "$p2"
r2=$?
note "concurrent applies: $r1 $r2"
for h in gpu-01 gpu-02; do
	assert_eq "$(host_hash "$h")" "$NEW" "$h: consistent after two applies"
	assert_eq "$(temp_files "$h")" "" "$h: no temp file after two applies"
done
# (Counted by name: keep: 10 prunes older ones as new ones come.) At most
# one: when the newest backup already holds the seed, the change reuses it.
made=$(backups | comm -13 "$E2E_TMP/before" - | wc -l)
[ "$made" -le 1 ] || fail "gpu-01: $made backups for one change"
cat "$E2E_TMP/a1" "$E2E_TMP/a2" >"$E2E_TMP/both"
id=$(sed -n 's/^gpu-01: changed (backup \([^)]*\)).*/\1/p' "$E2E_TMP/both")
{ [ -n "$id" ] && [ -f "$(bdir gpu-01)/$id.json" ]; } ||
    fail "gpu-01: the change's backup '$id' is not in the store"
# The loser saw the file changed under it, or nothing to do: never both
# writing.
assert_eq "$(grep -c 'gpu-01: changed' "$E2E_TMP/both")" 1 "gpu-01 changed once"

# --- an agent cache on a noexec mount: a clear error, no hang -------------
# The bootstrap waits for the upload, finds the agent there but cannot run
# it, and ends at EOF; envctl must say so rather than wait for a reply.
pid=$(awk '$1 == "gpu-02" {print $2}' "$FLEET_DIR/pids")
nsenter -t "$pid" -m mount -t tmpfs -o size=4m,mode=0755,noexec envctl-e2e \
    /var/lib/envctl || fatal "cannot mount a noexec tmpfs in gpu-02's namespace"
start=$(date +%s)
out=$("${E[@]}" plan "$INV" "${KH[@]}" -l gpu-02 2>&1)
assert_eq "$?" 1 "noexec cache: plan fails"
assert_contains "$out" "gpu-02: failed" "noexec cache: the host"
assert_contains "$out" "cannot be run there (a noexec mount?)" "noexec cache: the reason"
[ $(($(date +%s) - start)) -le 10 ] || fail "noexec cache: took longer than 10 s"
nsenter -t "$pid" -m umount /var/lib/envctl || fail "cannot unmount gpu-02's tmpfs"

# --- an agent for another architecture: refused before any upload --------
# A copy of the agent whose ELF header says aarch64 (e_machine 183): the
# host says x86_64 while its bootstrap waits, and nothing is uploaded.
if [ "$(uname -m)" = x86_64 ]; then
	cp "${ENVCTL_AGENT:-$(dirname "$ENVCTL_BIN")/envctl-agent}" "$E2E_TMP/agent-aarch64"
	printf '\267\000' | dd of="$E2E_TMP/agent-aarch64" bs=1 seek=18 \
	    conv=notrunc 2>/dev/null
	cache=$(host_dir gpu-01)/var-lib-envctl/agent
	before=$(find "$cache" -mindepth 1 -maxdepth 1 | wc -l)
	start=$(date +%s)
	out=$(ENVCTL_AGENT=$E2E_TMP/agent-aarch64 "${E[@]}" plan "$INV" "${KH[@]}" \
	    -l gpu-01 2>&1)
	assert_eq "$?" 1 "other architecture: plan fails"
	assert_contains "$out" "host architecture is x86_64, but this envctl has an agent for aarch64 only" \
	    "other architecture: the reason"
	assert_eq "$(find "$cache" -mindepth 1 -maxdepth 1 | wc -l)" "$before" "other architecture: nothing uploaded"
	[ $(($(date +%s) - start)) -le 10 ] || fail "other architecture: took longer than 10 s"
fi
