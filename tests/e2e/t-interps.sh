#!/bin/bash
# t-interps.sh - several interpreters on one host (issue 18, item 1): the
# system python, a venv with the system site-packages and one without (both
# import Debian's /usr/lib/python3.X/sitecustomize.py, which is in the
# stdlib directory every venv of that python has), and a pyenv build of
# another Python version
# with its own stdlib (this machine's, copied into the host's /root where
# its rpath finds its libpython), which imports no sitecustomize, as uv's
# and conda's interpreters import their own.
# plan shows two files, apply converges each and verifies it in every
# interpreter that imports it, a plan file keeps the rows, drift is silent
# afterwards and names the interpreter whose value is wrong.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3
PYENV=/root/.pyenv/versions/3.12.1
[ -x "$PYENV/bin/python3" ] ||
    missing "no pyenv build $PYENV (the standalone interpreter)"
SA=$PYENV/bin/python3

fleet_start 1 --seed "$ENVCTL_FIXTURES/seed-broken.sitecustomize.py"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
H=gpu-01
HD=$(host_dir $H)

# The host's /root is its own: the venvs and the standalone tree live there.
host_ssh $H 'python3 -m venv --without-pip --system-site-packages /root/venv-sys &&
    python3 -m venv --without-pip /root/venv-own' ||
    fatal "cannot make the venvs on $H"
# Hard links: the tree's files are shared, every new file is the host's.
mkdir -p "$HD/root/.pyenv/versions" || fatal "cannot make the pyenv tree"
cp -al "$PYENV" "$HD/root/.pyenv/versions/" || fatal "cannot copy $PYENV"
SA_SITE=$(host_ssh $H $SA -c \
    "'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'")
[ -n "$SA_SITE" ] || fatal "no site-packages found"

INV=$E2E_TMP/hosts.yaml
# A group variable beside the fleet's ansible_python_interpreter, which it
# takes precedence over.
sed "s|^        ansible_python_interpreter: .*|&\n        envctl_interpreters: [/usr/bin/python3, /root/venv-sys/bin/python3, /root/venv-own/bin/python3, $SA]|" \
    "$FLEET_INVENTORY" >"$INV"
grep -q envctl_interpreters "$INV" || fatal "cannot write the inventory"

# --- plan: a row per file; the shared one names both interpreters --------
out=$("${E[@]}" plan "$INV" "${KH[@]}" 2>&1)
assert_eq "$?" 2 "plan: exit status (pending)" || note "$out"
assert_eq "$(grep -c "^$H (.*): pending" <<<"$out")" 2 "plan: two files pending" ||
    note "$out"
assert_contains "$out" "$H ($FLEET_SITE): pending" "plan: the system file"
assert_contains "$out" "interpreters /usr/bin/python3, /root/venv-sys/bin/python3, /root/venv-own/bin/python3" \
    "plan: both venvs import the system file"
assert_contains "$out" "$H ($SA_SITE/sitecustomize.py): pending" "plan: the pyenv build's file"
assert_contains "$out" "absent: will be created" "plan: the pyenv build's file is created"
assert_contains "$out" "2 to change" "plan: summary counts files"

json=$("${E[@]}" plan "$INV" "${KH[@]}" --json 2>/dev/null)
n=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["hosts"]), " ".join(str(len(h["interpreters"])) for h in d["hosts"]))' <<<"$json")
assert_eq "$n" "2 3 1" "plan --json: two rows, of three and one interpreters"

# --- a plan file keeps the rows; apply it ----------------------------------
"${E[@]}" plan "$INV" "${KH[@]}" -o "$E2E_TMP/p.plan" >/dev/null 2>&1
assert_eq "$?" 2 "plan -o: exit status"
out=$("${E[@]}" apply "$E2E_TMP/p.plan" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "apply PLAN: exit status" || note "$out"
assert_contains "$out" "2 changed" "apply PLAN: two changed"

for py in /usr/bin/python3 /root/venv-sys/bin/python3 /root/venv-own/bin/python3 \
    $SA; do
	v=$(host_ssh $H env -i "$py" -c "'import os; print(os.environ.get(\"NCCL_PROTO\"))'")
	assert_eq "$v" "LL" "after apply: $py sees NCCL_PROTO"
done
out=$("${E[@]}" plan "$INV" "${KH[@]}" 2>&1)
assert_eq "$?" 0 "plan after apply: in sync" || note "$out"
out=$("${E[@]}" drift "$INV" "${KH[@]}" --lock "$E2E_TMP/d.lock" 2>&1)
assert_eq "$?" 0 "drift after apply: silent" || note "$out"

# --- a .pth in the sys venv pins a value: drift names that interpreter -----
host_ssh $H "echo 'import os; os.environ[\"NCCL_PROTO\"] = \"Simple\"' >\$(/root/venv-sys/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/pin.pth" ||
    fatal "cannot write the .pth"
out=$("${E[@]}" drift "$INV" "${KH[@]}" --lock "$E2E_TMP/d.lock" 2>&1)
assert_eq "$?" 2 "drift with a pinned venv: exit status" || note "$out"
assert_contains "$out" "NCCL_PROTO effective LL (Simple in /root/venv-sys/bin/python3), want LL" \
    "drift: the venv that disagrees is named"

# --- apply verifies in every interpreter: the pin makes it fail, undone ---
before=$(sha256 "$(host_file $H)")
INV2=$E2E_TMP/hosts-ll128.yaml
sed "s|^        envctl_interpreters: .*|&\n        nccl_proto: LL128|" "$INV" >"$INV2"
grep -q 'nccl_proto: LL128' "$INV2" || fatal "cannot write the inventory"
out=$("${E[@]}" apply "$INV2" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 1 "apply refused in one venv: exit status" || note "$out"
assert_contains "$out" "in /root/venv-sys/bin/python3" "apply: the refusing interpreter is named"
assert_eq "$(sha256 "$(host_file $H)")" "$before" "apply: the shared file is unchanged"
# Each file is a row of its own: the pyenv build's took the new value.
SA_FILE=$HD$SA_SITE/sitecustomize.py
grep -q '"NCCL_PROTO", "LL128"' "$SA_FILE" || fail "apply: the other file did not change"
host_ssh $H "rm -f \$(/root/venv-sys/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/pin.pth"

out=$("${E[@]}" backups "$INV" "${KH[@]}" 2>&1)
assert_eq "$?" 0 "backups: exit status" || note "$out"
assert_contains "$out" "$H: 1 backup of $FLEET_ETC_SITE" "backups: the system file's"
assert_contains "$out" "$H: 2 backups of $SA_SITE/sitecustomize.py" "backups: the pyenv file's" || note "$out"

# --- rollback restores each file's latest backup --------------------------
out=$("${E[@]}" rollback "$INV" "${KH[@]}" --yes 2>&1)
assert_eq "$?" 0 "rollback: exit status" || note "$out"
grep -q '"NCCL_PROTO", "LL")' "$SA_FILE" || fail "rollback: the pyenv file is not back at LL"
assert_eq "$(sha256 "$(host_file $H)")" "$(sha256 "$ENVCTL_FIXTURES/seed-broken.sitecustomize.py")" \
    "rollback: the seed is back"
