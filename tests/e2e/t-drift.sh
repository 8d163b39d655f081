#!/bin/bash
# t-drift.sh - envctl drift for cron against real sshd hosts: silent and 0
# when in sync; exit 2 with the host, the variable and a per-variable fleet
# summary on drift; a stopped host on stderr and exit 1; Prometheus
# textfile and JSON report that real parsers read; an overlapping drift
# run exits 75 without touching a host, any other holder of the run lock
# is named (exit 1); --fix converges only the drifted host, and gives up
# on a host whose lock is held past --lock-timeout, naming the holder.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require flock sha256sum
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
    missing "python3-prometheus-client is not installed"

RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
fleet_start 3 --seed "$RIGHT"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never --lock "$E2E_TMP/drift.lock")
INV=$FLEET_INVENTORY

# --- in sync: nothing at all, exit 0 -------------------------------------
"${E[@]}" drift "$INV" "${KH[@]}" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
assert_eq "$?" 0 "in sync: exit status"
assert_eq "$(cat "$E2E_TMP/out" "$E2E_TMP/err")" "" "in sync: no output"

# --- one host hand-edited -------------------------------------------------
sed -i 's/"NCCL_PROTO", "LL"/"NCCL_PROTO", "Simple"/' "$(host_file gpu-02)"
mkdir "$E2E_TMP/m"
out=$("${E[@]}" drift "$INV" "${KH[@]}" --metrics-file "$E2E_TMP/m/envctl.prom" \
    --report "$E2E_TMP/report.json" 2>"$E2E_TMP/err")
rc=$?
note "$out"
assert_eq "$rc" 2 "drift: exit status"
assert_eq "$(cat "$E2E_TMP/err")" "" "drift: nothing on stderr"
assert_contains "$out" "gpu-02: NCCL_PROTO effective Simple, want LL" "drift: host and variable"
assert_contains "$out" "NCCL_PROTO: 2 hosts LL, 1 host Simple: gpu-02" "drift: fleet summary"
assert_contains "$out" "warning: group fleet: NCCL_PROTO is LL on 2 hosts, Simple on 1 host now (mid-rollout?): ranks of one job must agree" \
    "drift: the group whose hosts disagree"
[ "$(printf '%s\n' "$out" | grep -c '^gpu-0[13]')" = 0 ] || fail "drift names in-sync hosts"

/usr/bin/python3 - "$E2E_TMP/m/envctl.prom" "$E2E_TMP/report.json" <<'PY' || fail "metrics / report"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def val(name, host=None):
    for s in fams[name].samples:
        if host is None or s.labels.get("host") == host:
            return s.value
    raise KeyError((name, host))
for h, want in (("gpu-01", 1), ("gpu-02", 0), ("gpu-03", 1)):
    assert val("envctl_host_in_sync", h) == want, (h, want)
    assert val("envctl_host_up", h) == 1, h
assert val("envctl_host_drifted_variables", "gpu-02") == 1
assert val("envctl_host_drifted_variables", "gpu-01") == 0
assert val("envctl_drift_hosts") == 1
assert val("envctl_failed_hosts") == 0
assert val("envctl_last_run_timestamp_seconds") > 1.7e9
assert 0 < val("envctl_run_duration_seconds") < 60
for f in fams.values():
    assert f.documentation, f.name
    assert f.type == "gauge", f.name
rep = json.load(open(sys.argv[2]))
assert rep["command"] == "drift" and rep["run"]["timestamp"] > 1.7e9
assert [h["outcome"] for h in rep["hosts"]] == ["ok", "pending", "ok"]
PY
assert_eq "$(find "$E2E_TMP/m" -mindepth 1 | wc -l)" 1 "metrics dir: no temp file left"

# --- -q: nothing at all, the exit code says it -----------------------------
"${E[@]}" drift "$INV" "${KH[@]}" -q >"$E2E_TMP/out" 2>&1
assert_eq "$?" 2 "-q: exit status"
assert_eq "$(cat "$E2E_TMP/out")" "" "-q: no output"

# --- a stopped host: stderr, exit 1 ----------------------------------------
pid=$(awk '$1 == "gpu-03" {print $2}' "$FLEET_DIR/pids")
kill -STOP "$pid"
"${E[@]}" drift "$INV" "${KH[@]}" --timeout 3 >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
kill -CONT "$pid"
assert_eq "$rc" 1 "stopped host: exit status"
assert_contains "$(cat "$E2E_TMP/err")" "gpu-03: unreachable" "stopped host named on stderr"
assert_contains "$(cat "$E2E_TMP/out")" "gpu-02: NCCL_PROTO" "drift still reported beside it"

# hold_flock FILE: a flock(1) holding FILE until unhold_flock (it reads a
# FIFO until that closes); HOLDER its pid, once /proc/locks shows it.
hold_flock() {
	local i
	rm -f "$E2E_TMP/h.fifo"
	mkfifo "$E2E_TMP/h.fifo" || fatal "cannot make a FIFO"
	exec {HOLD_FD}<>"$E2E_TMP/h.fifo"
	flock -o "$1" cat <"$E2E_TMP/h.fifo" >/dev/null {HOLD_FD}>&- &
	HOLDER=$!
	for ((i = 0; i < 400; i++)); do
		grep -q "FLOCK .* $HOLDER " /proc/locks && return 0
		# polling /proc/locks: flock(1) prints nothing, and its command
		# line is what envctl must name, so no "held" line to wait on
		sleep 0.05
	done
	fatal "flock $1 did not take the lock"
}
unhold_flock() {
	exec {HOLD_FD}>&-
	wait "$HOLDER" 2>/dev/null
}

# --- an overlapping run exits 75 and touches no host -----------------------
# The previous run is a real drift run, held up by the stopped gpu-03; it
# has the lock once its record is in the file.
accepted() { cat "$FLEET_DIR"/*/sshd.log | grep -c 'Accepted publickey'; }
kill -STOP "$pid"
"${E[@]}" drift "$INV" "${KH[@]}" -l gpu-03 --timeout 30 >/dev/null 2>&1 &
holder=$!
for ((i = 0; i < 400; i++)); do
	grep -q "^pid=$holder " "$E2E_TMP/drift.lock" 2>/dev/null && break
	pid_alive "$holder" || break
	sleep 0.05	# polling the record the first run writes
done
before=$(accepted)
start=$(date +%s)
"${E[@]}" drift "$INV" "${KH[@]}" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
kill -CONT "$pid"
assert_eq "$rc" 75 "overlap: exit status"
assert_contains "$(cat "$E2E_TMP/err")" "previous drift run still holds" "overlap: said on stderr"
[ $(($(date +%s) - start)) -le 2 ] || fail "overlap: did not return at once"
assert_eq "$(accepted)" "$before" "overlap: no host was contacted"
# Anything else holding it is named, and a failure (exit 1), not 75.
hold_flock "$E2E_TMP/drift.lock"
"${E[@]}" drift "$INV" "${KH[@]}" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
rc=$?
unhold_flock
assert_eq "$rc" 1 "foreign holder: exit status"
assert_contains "$(cat "$E2E_TMP/err")" "is held by pid $HOLDER (user root: flock -o $E2E_TMP/drift.lock cat), not by envctl" \
    "foreign holder: named"

# --- --fix waits --lock-timeout for another envctl's lock on a host -------
out=$("${E[@]}" drift "$INV" "${KH[@]}" --lock-timeout 5 2>&1)
assert_eq "$?" 64 "--lock-timeout without --fix: usage error"
assert_contains "$out" "--lock-timeout is for --fix" "--lock-timeout without --fix: why"
# gpu-02's lock as its agent takes it: /var/lib/envctl/locks in its
# namespace (root's, 0700), held here by something that is not envctl.
hl="$(host_dir gpu-02)/var-lib-envctl/locks"
# shellcheck disable=SC2174 # only locks/ is 0700; its parent is the host's
mkdir -p -m 0700 "$hl" || fatal "cannot make $hl"
hl=$hl/%etc%python$FLEET_PYVER%sitecustomize.py.lock
hold_flock "$hl"
start=$(date +%s)
out=$("${E[@]}" drift "$INV" "${KH[@]}" --fix --lock-timeout 1 2>&1)
rc=$?
took=$(($(date +%s) - start))
unhold_flock
note "$out"
assert_eq "$rc" 1 "held host lock: --fix fails the host"
assert_contains "$out" "gpu-02: failed" "held host lock: gpu-02 named"
assert_contains "$out" "is held by pid $HOLDER (user root: flock -o $hl cat), not by envctl" \
    "held host lock: the holder named"
[ "$took" -le 6 ] || fail "held host lock: --lock-timeout 1 waited ${took}s"
[ "$(host_hash gpu-02)" != "$(sha256 "$RIGHT")" ] ||
    fail "held host lock: gpu-02 was changed anyway"

# --- --fix converges only the drifted host; then drift is silent -----------
out=$("${E[@]}" drift "$INV" "${KH[@]}" --fix 2>&1)
assert_eq "$?" 0 "--fix: exit status"
assert_contains "$out" "gpu-02: changed (backup " "--fix: fixed gpu-02"
for h in gpu-01 gpu-03; do
	n=$(find "$(host_dir "$h")/var-backups-envctl" -type f | wc -l)
	assert_eq "$n" 0 "--fix: $h untouched"
done
assert_eq "$(host_hash gpu-02)" "$(sha256 "$RIGHT")" "--fix: gpu-02 converged"
"${E[@]}" drift "$INV" "${KH[@]}" >"$E2E_TMP/out" 2>&1
assert_eq "$?" 0 "after --fix: exit status"
assert_eq "$(cat "$E2E_TMP/out")" "" "after --fix: silent"
