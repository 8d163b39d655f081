#!/bin/bash
# t-planfile.sh - a saved plan is trusted for nothing: a hand-edited
# desired digest is refused; a plan whose target and bytes were changed,
# or whose target alone was redirected to a file holding the very bytes
# the plan says it read, writes nothing, neither the real file nor the
# would-be target; a plan cut short gets jansson's line and column, never
# a YAML message; a JSON object that is no plan is named; an honest plan
# still applies.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3 sha256sum

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
PLAN=$E2E_TMP/plan.json

# edit IN OUT PYTHON: OUT is plan IN after PYTHON ran on it, with d the
# document, h(NAME) a host's entry, b64(BYTES) and sha(BYTES) at hand.
edit() {
	python3 - "$1" "$2" "$3" <<'PY'
import base64, hashlib, json, sys
d = json.load(open(sys.argv[1]))
def h(name):
    return next(x for x in d["hosts"] if x["name"] == name)
def b64(b):
    return base64.b64encode(b).decode()
def sha(b):
    return hashlib.sha256(b).hexdigest()
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}

# reseed: gpu-01 broken, gpu-02 Debian's file, gpu-03 right; a fresh plan.
reseed() {
	cp "$BROKEN" "$(host_file gpu-01)"
	cp "$DEFAULT" "$(host_file gpu-02)"
	cp "$RIGHT" "$(host_file gpu-03)"
	"${E[@]}" plan "$INV" "${KH[@]}" -o "$PLAN" >/dev/null
	assert_eq "$?" 2 "plan -o with changes"
}

apply_plan() {
	"${E[@]}" apply "$1" "${KH[@]}" 2>&1
}

reseed
# The would-be target, beside the real file: seen from outside here.
EVIL_IN=$FLEET_ETC_SITE.evil
EVIL_OUT=$(host_file gpu-01).evil
target=$(python3 -c 'import json, sys
print(next(h for h in json.load(open(sys.argv[1]))["hosts"]
    if h["name"] == "gpu-01")["target"])' "$PLAN")
assert_eq "$target" "$FLEET_SITE" "the plan names the path Python imports"

# --- a hand-edited desired digest ----------------------------------------
edit "$PLAN" "$E2E_TMP/digest.json" \
    'h("gpu-01")["desired"]["sha256"] = sha(b"something else")'
fleet_hashes >"$E2E_TMP/before"
out=$(apply_plan "$E2E_TMP/digest.json")
assert_eq "$?" 1 "hand-edited digest: exit status"
note "$out"
assert_contains "$out" "digest.json: not a valid plan file: 'hosts[0].desired.sha256' is " \
    "hand-edited digest: named"
assert_contains "$out" "but the bytes of 'hosts[0].desired.data_b64' have SHA-256" \
    "hand-edited digest: the reason"
assert_eq "$(fleet_changed "$E2E_TMP/before")" "" "hand-edited digest: no host changed"

# --- desired bytes and their digest edited together -----------------------
edit "$PLAN" "$E2E_TMP/bytes.json" '
x = h("gpu-01")["desired"]
x["data_b64"] = b64(b"import os\nos.system(\"id\")\n")
x["sha256"] = sha(b"import os\nos.system(\"id\")\n")'
out=$(apply_plan "$E2E_TMP/bytes.json")
assert_eq "$?" 1 "edited bytes: exit status"
note "$out"
assert_contains "$out" "gpu-01: failed: the plan's desired file differs from what the inventory and playbook give today (sha256 " \
    "edited bytes: gpu-01 refused"
assert_contains "$out" "; run envctl plan again" "edited bytes: what to do"
assert_contains "$out" "gpu-02: changed" "edited bytes: the honest host applied"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "edited bytes: gpu-01 untouched"
assert_eq "$(host_hash gpu-02)" "$(sha256 "$RIGHT")" "edited bytes: gpu-02 converged"

# --- target and bytes changed: nothing written anywhere --------------------
reseed
edit "$PLAN" "$E2E_TMP/target.json" '
x = h("gpu-01")
x["target"] = x["real"] = "'"$EVIL_IN"'"
x["current"] = {"exists": False}
x["desired"] = {"data_b64": b64(b"owned\n"), "sha256": sha(b"owned\n")}'
fleet_hashes >"$E2E_TMP/before"
out=$(apply_plan "$E2E_TMP/target.json")
assert_eq "$?" 1 "target and bytes changed: exit status"
note "$out"
assert_contains "$out" "gpu-01: failed: the plan's desired file differs" \
    "target and bytes changed: refused"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "target and bytes changed: real file untouched"
assert_eq "$(sha256 "$EVIL_OUT")" missing "target and bytes changed: no file at the would-be target"

# --- the target alone redirected, to a file with the plan's own bytes ------
# The bytes render exactly as the plan says and compare and swap would
# succeed there: only the host's own read of the path stops it.
reseed
cp "$BROKEN" "$EVIL_OUT"
inode=$(stat -c %i "$EVIL_OUT")
edit "$PLAN" "$E2E_TMP/redirect.json" '
h("gpu-01")["target"] = "'"$EVIL_IN"'"'
fleet_hashes >"$E2E_TMP/before"
out=$(apply_plan "$E2E_TMP/redirect.json")
assert_eq "$?" 1 "target redirected: exit status"
note "$out"
assert_contains "$out" "gpu-01: failed: the plan's target '$EVIL_IN' is not the file the host's interpreter imports ('$FLEET_SITE'); run envctl plan again" \
    "target redirected: refused after the host's read"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "target redirected: real file untouched"
assert_eq "$(sha256 "$EVIL_OUT")" "$(sha256 "$BROKEN")" "target redirected: the would-be target's bytes"
# Still the same file, by inode.
assert_eq "$(stat -c %i "$EVIL_OUT")" "$inode" "target redirected: the would-be target never replaced"
assert_contains "$out" "gpu-02: changed" "target redirected: the honest host applied"
backups=$(host_dir gpu-01)/var-backups-envctl
assert_eq "$(find "$backups" 2>/dev/null | grep -c -e evil -e '[0-9]Z-')" 0 \
    "target redirected: nothing backed up on gpu-01"
rm -f "$EVIL_OUT"

# --- a plan cut short: JSON's position, no YAML ----------------------------
reseed
size=$(stat -c %s "$PLAN")
head -c $((size / 2)) "$PLAN" >"$E2E_TMP/cut.json"
fleet_hashes >"$E2E_TMP/before"
out=$(apply_plan "$E2E_TMP/cut.json")
assert_eq "$?" 1 "cut plan: exit status"
note "$out"
pos=$(printf '%s\n' "$out" | sed -n "s|^.*$E2E_TMP/cut.json:\([0-9][0-9]*\)\(:[0-9][0-9]*\)\{0,1\}: not a valid plan file: .*|\1|p")
if [ -z "$pos" ] || [ "$pos" -le 1 ]; then
	fail "cut plan: no 'cut.json:LINE:COL: not a valid plan file' in: $out"
fi
case $out in
*YAML* | *yaml*) fail "cut plan: a YAML message: $out" ;;
esac
assert_eq "$(fleet_changed "$E2E_TMP/before")" "" "cut plan: no host changed"
# Cut within the first line too: still a plan by its first key.
head -c 12 "$PLAN" >"$E2E_TMP/cut2.json"
out=$(apply_plan "$E2E_TMP/cut2.json")
assert_eq "$?" 1 "plan cut at 12 bytes: exit status"
assert_contains "$out" "cut2.json:2:" "plan cut at 12 bytes: line 2"
assert_contains "$out" ": not a valid plan file: " "plan cut at 12 bytes: named"

# --- JSON objects that are not plans ---------------------------------------
edit "$PLAN" "$E2E_TMP/nokind.json" 'del d["kind"]'
out=$(apply_plan "$E2E_TMP/nokind.json")
assert_eq "$?" 1 "plan without kind: exit status"
assert_contains "$out" "nokind.json: not a valid plan file: 'kind' is missing" \
    "plan without kind: named"
edit "$PLAN" "$E2E_TMP/format.json" 'd["format"] = 2'
out=$(apply_plan "$E2E_TMP/format.json")
assert_eq "$?" 1 "format 2: exit status"
assert_contains "$out" "format.json: not a valid plan file: format 2 is not supported (this envctl reads format 1); run envctl plan again" \
    "format 2: named"
assert_eq "$(fleet_changed "$E2E_TMP/before")" "" "refused plans: no host changed"

# --- a JSON inventory is still an inventory ---------------------------------
"${E[@]}" inventory "$INV" --list >"$E2E_TMP/inv.json" ||
    fatal "inventory --list failed"
out=$("${E[@]}" apply "$E2E_TMP/inv.json" "${KH[@]}" </dev/null 2>&1)
assert_eq "$?" 64 "apply of a JSON inventory asks for --yes"
assert_contains "$out" "add --yes" "a JSON inventory is read as one"

# --- an honest plan still applies -------------------------------------------
out=$(apply_plan "$PLAN")
assert_eq "$?" 0 "honest plan: exit status"
note "$out"
assert_contains "$out" "gpu-01: changed (backup " "honest plan: gpu-01 changed"
assert_contains "$out" "gpu-02: changed" "honest plan: gpu-02 changed"
assert_contains "$out" "2 changed, 1 in sync" "honest plan: summary"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$RIGHT")" "honest plan: gpu-01 converged"
assert_eq "$(host_hash gpu-02)" "$(sha256 "$RIGHT")" "honest plan: gpu-02 converged"
# Applied once: the host now has the plan's bytes, and says so.
out=$(apply_plan "$PLAN")
assert_eq "$?" 0 "the same plan again: exit status"
assert_contains "$out" "gpu-01: ok (already as desired" "the same plan again: nothing to do"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$RIGHT")" "the same plan again: gpu-01 as desired"
