#!/bin/bash
# t-locks.sh - locks that no other local user can hold, against real sshd
# hosts.  On a host, a throwaway user (mallory, in that host's own
# /etc/passwd only) who holds a flock on the old lock path does not stop
# apply, and can open neither the new lock directory nor its files; a
# holder that is not envctl is named by pid, user and command.  On the
# controller (a private mount namespace with its own /run and /etc/passwd
# holding mallory), mallory's flock on the old /run/lock/envctl-drift.lock
# cannot make drift exit 75; a holder of the new lock that is not envctl
# is named, exit 1; only another drift run is exit 75.
#
# Holders tell they hold the lock by a line in a file, and hold it until
# the FIFO they read from is closed: no sleeps.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require flock setpriv nsenter unshare mkfifo sha256sum stat

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
fleet_start 2 --seed "$BROKEN" --become-host gpu-02:nopasswd
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
INV=$FLEET_INVENTORY
MUID=2999
NAME="%etc%python$FLEET_PYVER%sitecustomize.py.lock"
REAL=/etc/python$FLEET_PYVER/sitecustomize.py

# mallory exists in gpu-02's namespace only (its /etc/passwd is a copy).
H2=$(host_dir gpu-02)
printf 'mallory:x:%d:%d::/nonexistent:/bin/sh\n' "$MUID" "$MUID" >>"$H2/etc-passwd"
printf 'mallory:x:%d:\n' "$MUID" >>"$H2/etc-group"
P2=$(awk '$1 == "gpu-02" {print $2}' "$FLEET_DIR/pids")
P1=$(awk '$1 == "gpu-01" {print $2}' "$FLEET_DIR/pids")

# hold TAG NSPID USER FILE: a background flock(1) on FILE inside the mount
# namespace of NSPID, as USER (root or mallory); sets HOLDER (its pid:
# nsenter, setpriv and flock exec each other) and returns once it holds
# the lock (1 when it could not take it).  unhold TAG ends it.
declare -A FIFO_FD=()
hold() {
	local tag=$1 ns=$2 user=$3 file=$4 fd
	local -a as=()
	[ "$user" = root ] || as=(setpriv --reuid "$MUID" --regid "$MUID" --clear-groups)
	mkfifo "$E2E_TMP/$tag.fifo" || fatal "$tag: cannot make the FIFO"
	exec {fd}<>"$E2E_TMP/$tag.fifo"
	FIFO_FD[$tag]=$fd
	ready_pipe "$tag"
	nsenter -t "$ns" -m "${as[@]}" flock -n -o "$file" \
	    sh -c 'echo held; exec cat >/dev/null' \
	    <"$E2E_TMP/$tag.fifo" >"$E2E_TMP/$tag.out" 2>&1 {fd}>&- \
	    {READY_FD}>&- &
	HOLDER=$!
	await_ready "$READY_FD" "$E2E_TMP/$tag.ready"
	[ "$(cat "$E2E_TMP/$tag.ready")" = held ]
}
unhold() {
	local fd=${FIFO_FD[$1]}
	exec {fd}>&-
	wait "$HOLDER" 2>/dev/null
}

# --- host: mallory holds the old lock file; apply goes ahead ---------------
OLD=$H2/run-lock-envctl/$NAME
install -m 0644 /dev/null "$OLD"	# as an older agent left it
hold old2 "$P2" mallory "/run/lock/envctl/$NAME" ||
    fatal "mallory cannot flock the old lock file: $(cat "$E2E_TMP/old2.ready")"
start=$(date +%s)
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes --lock-timeout 3 2>&1)
rc=$?
took=$(($(date +%s) - start))
unhold old2
note "$out"
assert_eq "$rc" 0 "old lock held by mallory: apply succeeds"
assert_contains "$out" "gpu-02: changed (backup " "old lock held by mallory: gpu-02 changed"
[ "$took" -le 3 ] || fail "old lock held by mallory: apply waited ${took}s"
assert_eq "$(host_hash gpu-02)" "$(sha256 "$RIGHT")" "old lock held by mallory: converged"

# The new lock: root's 0700 directory, a 0600 file.
LD=$H2/var-lib-envctl/locks
assert_eq "$(stat -c '%U %a' "$LD")" "root 700" "host lock directory: owner and mode"
assert_eq "$(stat -c '%U %a' "$LD/$NAME")" "root 600" "host lock file: owner and mode"

# --- host: mallory can flock neither the new lock nor its directory -------
for f in "/var/lib/envctl/locks/$NAME" /var/lib/envctl/locks; do
	tag=new2-${#FIFO_FD[@]}
	if hold "$tag" "$P2" mallory "$f"; then
		fail "mallory holds $f"
	else
		assert_contains "$(cat "$E2E_TMP/$tag.ready")" "Permission denied" \
		    "mallory on $f: the reason"
	fi
	unhold "$tag"
done

# --- host: a holder that is not envctl is named --------------------------
cp "$BROKEN" "$(host_file gpu-02)"
hold root2 "$P2" root "/var/lib/envctl/locks/$NAME" || fatal "root cannot flock the new lock"
out=$("${E[@]}" apply "$INV" "${KH[@]}" -l gpu-02 --yes --lock-timeout 1 2>&1)
rc=$?
unhold root2
note "$out"
assert_eq "$rc" 1 "foreign holder: apply fails"
assert_contains "$out" "gpu-02: failed" "foreign holder: the host"
assert_contains "$out" "the lock of '$REAL' is held by pid $HOLDER (user root: flock -n -o /var/lib/envctl/locks/$NAME sh -c echo held; exec cat >/dev/null), not by envctl" \
    "foreign holder: pid, user and command"
assert_eq "$(host_hash gpu-02)" "$(sha256 "$BROKEN")" "foreign holder: file untouched"
out=$("${E[@]}" apply "$INV" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "lock free again: apply succeeds: $out"

# --- the controller, in a namespace of its own -------------------------------
# Its /run is a tmpfs (so /run/envctl is made there, never on this
# machine), and its /etc/passwd a copy that holds mallory.
C=$E2E_TMP/ctl
{ mkdir -m 0700 "$C" && cp /etc/passwd "$C/passwd" &&
    cp /etc/group "$C/group"; } || fatal "cannot make $C"
printf 'mallory:x:%d:%d::/nonexistent:/bin/sh\n' "$MUID" "$MUID" >>"$C/passwd"
printf 'mallory:x:%d:\n' "$MUID" >>"$C/group"
mkfifo "$C/ns.fifo" || fatal "cannot make $C/ns.fifo"
exec {NSFD}<>"$C/ns.fifo"
ready_pipe ns
# shellcheck disable=SC2016 # expanded by that sh
unshare -m --propagation private sh -c '
	mount -t tmpfs -o mode=0755 envctl-e2e /run &&
	mkdir -m 1777 /run/lock &&
	mount --bind "$0/passwd" /etc/passwd &&
	mount --bind "$0/group" /etc/group &&
	echo ready && exec cat >/dev/null' "$C" <"$C/ns.fifo" \
	    >"$E2E_TMP/ns.out" 2>&1 {NSFD}>&- {READY_FD}>&- &
NS=$!
await_ready "$READY_FD" "$C/ns.ready"
[ "$(cat "$C/ns.ready")" = ready ] || fatal "controller namespace: $(cat "$C/ns.ready")"
inns() { nsenter -t "$NS" -m "$@"; }
DRIFT=("$ENVCTL_BIN" drift "$INV" "${KH[@]}")
assert_eq "$(inns id -un "$MUID")" mallory "controller namespace: mallory exists there"

# mallory holds the old drift lock: drift runs, and says nothing.
hold oldc "$NS" mallory /run/lock/envctl-drift.lock ||
    fatal "mallory cannot flock /run/lock/envctl-drift.lock"
inns "${DRIFT[@]}" >"$C/out" 2>&1
rc=$?
unhold oldc
assert_eq "$rc" 0 "old drift lock held by mallory: exit status"
assert_eq "$(cat "$C/out")" "" "old drift lock held by mallory: silent"
assert_eq "$(inns stat -c '%U %a' /run/envctl /run/envctl/drift.lock)" \
    "root 700"$'\n'"root 600" "the drift lock: owner and mode"
tag=newc
if hold "$tag" "$NS" mallory /run/envctl/drift.lock; then
	fail "mallory holds /run/envctl/drift.lock"
else
	assert_contains "$(cat "$E2E_TMP/$tag.ready")" "Permission denied" \
	    "mallory on /run/envctl/drift.lock: the reason"
fi
unhold "$tag"

# A holder of the new lock that is not envctl: named, exit 1, not 75.
hold rootc "$NS" root /run/envctl/drift.lock || fatal "root cannot flock the drift lock"
inns "${DRIFT[@]}" >"$C/out" 2>"$C/err"
rc=$?
unhold rootc
assert_eq "$rc" 1 "foreign drift lock holder: exit status"
assert_contains "$(cat "$C/err")" "the drift run lock '/run/envctl/drift.lock' is held by pid $HOLDER (user root: flock -n -o /run/envctl/drift.lock sh -c echo held; exec cat >/dev/null), not by envctl; not starting" \
    "foreign drift lock holder: pid, user and command"
assert_eq "$(cat "$C/out")" "" "foreign drift lock holder: nothing on stdout"

# Another drift run (held up by a stopped host) is the only exit 75.
accepted() { cat "$FLEET_DIR"/*/sshd.log | grep -c 'Accepted publickey'; }
kill -STOP "$P1"
# (nsenter itself, not inns: $! must be the drift run's pid.)
nsenter -t "$NS" -m "${DRIFT[@]}" -l gpu-01 --timeout 30 >"$C/first" 2>&1 &
first=$!
for ((i = 0; i < 400; i++)); do
	grep -q "^pid=$first " "$C/lockcopy" 2>/dev/null && break
	inns cat /run/envctl/drift.lock >"$C/lockcopy" 2>/dev/null
	pid_alive "$first" || break
	sleep 0.05	# polling the record the first run writes
done
grep -q "^pid=$first " "$C/lockcopy" || fail "the first drift run did not take the lock"
before=$(accepted)
inns "${DRIFT[@]}" >"$C/out" 2>"$C/err"
rc=$?
kill "$first"
wait "$first" 2>/dev/null
kill -CONT "$P1"
assert_eq "$rc" 75 "another drift run: exit status"
assert_contains "$(cat "$C/err")" "the previous drift run still holds '/run/envctl/drift.lock' (pid $first); not starting" \
    "another drift run: said on stderr"
assert_eq "$(accepted)" "$before" "another drift run: no host contacted"

exec {NSFD}>&-
wait "$NS" 2>/dev/null
