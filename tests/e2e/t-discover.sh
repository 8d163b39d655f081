#!/bin/bash
# t-discover.sh - envctl facts --discover against a real sshd host: two
# venvs made by python3 -m venv (with and without system site-packages), a
# conda-style standalone tree with its own stdlib, a pyenv build in root's
# home, a systemd unit whose ExecStart= runs one venv and a running python
# process of the other, each listed with the kind, version and
# sitecustomize that the interpreter itself reports (the oracle), in text
# and --json.  Everything is made inside the host's overlays of /opt and
# /etc/systemd/system (fleet --overlay) and its own /root; the one process
# started is ended by its PID.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 tar
PYENV=/root/.pyenv/versions/3.11.7
if [ ! -x "$PYENV/bin/python3.11" ] ||
    [ ! -f "$PYENV/lib/libpython3.11.so.1.0" ]; then
	missing "no pyenv build at $PYENV (the standalone interpreter copied)"
fi
[ -d /etc/systemd/system ] || missing "no /etc/systemd/system to overlay"
for p in /opt/svc-a /opt/svc-b /opt/conda-x; do
	[ ! -e "$p" ] || skip "this machine has its own $p"
done

fleet_start 1 --overlay /opt --overlay /etc/systemd/system
H=${FLEET_HOSTS[0]}
KH=(--known-hosts "$FLEET_KNOWN_HOSTS")
PYVER=$FLEET_PYVER

# --- the host's interpreters ---------------------------------------------
# pyenv's build links libpython by an absolute RUNPATH under /root, which
# the host sees replaced by its own: the build (bin, libpython and the
# stdlib start-up needs, no site-packages content) goes there, in the
# host's directory of this scenario.
HROOT=$(host_dir "$H")/root${PYENV#/root}
mkdir -p "$HROOT" || fatal "cannot make the host's $PYENV"
tar -C "$PYENV" -cf - --exclude=__pycache__ \
    --exclude='lib/python3.11/site-packages/*' \
    --exclude=lib/python3.11/test --exclude=lib/python3.11/idlelib \
    --exclude=lib/python3.11/tkinter --exclude=lib/python3.11/turtledemo \
    --exclude=lib/python3.11/lib2to3 --exclude=lib/python3.11/ensurepip \
    --exclude='lib/python3.11/config-3.11*' \
    bin/python3.11 lib/libpython3.11.so.1.0 lib/python3.11 |
    tar -C "$HROOT" -xf - || fatal "cannot copy $PYENV"
ln -s python3.11 "$HROOT/bin/python3" || fatal "cannot link python3"

host_ssh "$H" "set -e
/usr/bin/python3 -m venv --without-pip --system-site-packages /opt/svc-a
/usr/bin/python3 -m venv --without-pip /opt/svc-b
mkdir /opt/conda-x
cp -a $PYENV/. /opt/conda-x/
mkdir /opt/conda-x/conda-meta
printf '[Unit]\nDescription=envctl e2e\n[Service]\nExecStart=-/opt/svc-a/bin/python3 -m http.server 0\n' \
    >/etc/systemd/system/envctl-e2e-svc.service" >"$E2E_TMP/setup.out" 2>&1 ||
    fatal "setting up the host failed: $(cat "$E2E_TMP/setup.out")"

# A running worker of svc-b; its first line is its PID, once it runs.
ready_pipe worker
host_ssh "$H" "exec /opt/svc-b/bin/python3 -c 'import os, time
print(os.getpid(), flush=True)
time.sleep(600)'" 1>&"$READY_FD" 2>"$E2E_TMP/worker.err" &
SSH_PID=$!
await_ready "$READY_FD" "$E2E_TMP/worker.pid"
WORKER=$(cat "$E2E_TMP/worker.pid")
case $WORKER in '' | *[!0-9]*)
	fatal "the worker did not start: $WORKER $(cat "$E2E_TMP/worker.err")" ;;
esac
stop_worker() {
	pid_alive "$WORKER" && kill "$WORKER"
	wait "$SSH_PID" 2>/dev/null
}

# The oracle: what each interpreter itself says (version, the real file of
# the sitecustomize it imported, or nothing).
oracle() {
	host_ssh "$H" "$1 -c 'import os, sys
m = sys.modules.get(\"sitecustomize\")
f = getattr(m, \"__file__\", None)
print(sys.version.split()[0], os.path.realpath(f) if f else \"-\")'"
}
SVC_A=/opt/svc-a/bin/python3
SVC_B=/opt/svc-b/bin/python3
CONDA=/opt/conda-x/bin/python3
PYENV3=$PYENV/bin/python3
declare -A ORACLE=()
for p in "$SVC_A" "$SVC_B" "$CONDA" "$PYENV3" /usr/bin/python3; do
	o=$(oracle "$p") || fatal "$p does not run on $H: $o"
	ORACLE[$p]=$o
done

# --- text ----------------------------------------------------------------
out=$("$ENVCTL_BIN" facts --discover "$FLEET_INVENTORY" "${KH[@]}" \
    --color never 2>"$E2E_TMP/err")
rc=$?
note "$out"
assert_eq "$rc" 0 "facts --discover exit status"
assert_eq "$(cat "$E2E_TMP/err")" "" "facts --discover stderr"
row() {
	printf '%s\n' "$out" | grep -E "^    $1 " | tr -s ' '
}
v=${ORACLE[$SVC_A]%% *}
assert_eq "$(row "$SVC_A")" " $SVC_A $v venv /etc/python$PYVER/sitecustomize.py opt,venv,systemd" \
    "svc-a: a venv with system site-packages, run by a unit"
assert_eq "$(row "$SVC_B")" " $SVC_B $v venv ${ORACLE[$SVC_B]#* } opt,venv,process" \
    "svc-b: a venv, running"
assert_eq "$(row "$CONDA")" " $CONDA 3.11.7 conda (none: would be /opt/conda-x/lib/python3.11/site-packages/sitecustomize.py) opt,conda" \
    "conda-x: a standalone tree with conda-meta/"
assert_eq "$(row "$PYENV3")" " $PYENV3 3.11.7 pyenv (none: would be $PYENV/lib/python3.11/site-packages/sitecustomize.py) pyenv" \
    "the pyenv build in root's home"
assert_contains "$(row /usr/bin/python3)" " /usr/bin/python3 $v system /etc/python$PYVER/sitecustomize.py system" \
    "the system interpreter"
assert_contains "$out" "interpreters: [/usr/bin/python3, " "hint line"
for p in "$SVC_A" "$SVC_B" "$CONDA" "$PYENV3"; do
	assert_contains "$(printf '%s\n' "$out" | grep 'interpreters: \[')" \
	    "$p" "hint lists $p"
done

# --- JSON, against the oracle --------------------------------------------
"$ENVCTL_BIN" facts --discover "$FLEET_INVENTORY" "${KH[@]}" --json \
    >"$E2E_TMP/d.json" 2>"$E2E_TMP/err"
assert_eq "$?" 0 "facts --discover --json exit status"
for p in "$SVC_A" "$SVC_B" "$CONDA" "$PYENV3" /usr/bin/python3; do
	got=$(python3 - "$E2E_TMP/d.json" "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == 1 and d["command"] == "facts" and d["discover"] is True
h = d["hosts"][0]
assert h["outcome"] == "ok" and h["error"] is None, h
assert h["privileged"] is False and h["truncated"] is None, h
c = [c for c in h["interpreters"] if c["path"] == sys.argv[2]]
assert len(c) == 1, [c["path"] for c in h["interpreters"]]
c = c[0]
assert c["probed"] and c["error"] is None and c["failed"] is None, c
assert c["startup_error"] is None, c
s = c["sitecustomize"]
assert (s is None) != (c["would_create"] is None), c
print(c["version"], s["real"] if s else "-", c["kind"])
PY
)
	assert_eq "$got" "${ORACLE[$p]} $(case $p in
	    "$SVC_A" | "$SVC_B") echo venv ;; "$CONDA") echo conda ;;
	    "$PYENV3") echo pyenv ;; *) echo system ;; esac)" "$p in --json"
done

# --- nothing outside the host --------------------------------------------
stop_worker
for p in /opt/svc-a /opt/svc-b /opt/conda-x \
    /etc/systemd/system/envctl-e2e-svc.service; do
	[ ! -e "$p" ] || fail "$p was made on this machine, not in the host"
done
exit "$E2E_FAILED"
