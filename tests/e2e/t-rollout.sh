#!/bin/bash
# t-rollout.sh - canary batches and a fleet-wide failure budget (issue 20,
# item 1) on 6 real hosts.  A .pth in the system site-packages of gpu-02
# and gpu-03 pins NCCL_PROTO, so the new file is refused in validation
# there.  apply --serial 1,2,100% --max-fail 1 changes gpu-01, fails both
# hosts of batch 2, stops, and leaves gpu-04..06 skipped and byte for byte
# untouched (exit 1, the batch lines, the stop in the summary and in
# --json).  Without pins the batches all run; drift --fix --serial, a plan
# file with --serial and rollback --serial too.  Then --by-group over the
# hosts as racks: the batches group by group, one budget spent across
# two groups, the stop inside the second and a later group skipped, a
# group the inventory lacks, the question, a plan file, drift and rollback.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require python3
DIST=/usr/lib/python3/dist-packages
[ -d "$DIST" ] || missing "no $DIST to overlay"
BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
fleet_start 6 --seed "$BROKEN" --overlay "$DIST"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never)
INV=$FLEET_INVENTORY
PIN=$DIST/zz-envctl-e2e-pin.pth
STOP="rollout stopped after batch 2 (2 failures > budget 1)"

# pin HOST: a .pth that sets NCCL_PROTO before sitecustomize runs.
pin() {
	host_ssh "$1" "echo 'import os; os.environ[\"NCCL_PROTO\"] = \"Simple\"' >$PIN" ||
	    fatal "cannot write the .pth on $1"
}
unpin() {
	host_ssh "$1" "rm -f $PIN" || fatal "cannot remove the .pth on $1"
}
# json_get EXPR: EXPR of the JSON document d read from $E2E_TMP/out.json.
json_get() {
	python3 -c "import json; d=json.load(open('$E2E_TMP/out.json')); print($1)"
}

pin gpu-02
pin gpu-03
[ -e "$PIN" ] && fatal "the .pth leaked onto this machine"
v=$(host_ssh gpu-02 python3 -c "'import os; print(os.environ.get(\"NCCL_PROTO\"))'")
assert_eq "$v" Simple "the pin is in effect on gpu-02"

# --- the budget is spent in batch 2: stop, the rest skipped ---------------
fleet_hashes >"$E2E_TMP/before"
out=$("${E[@]}" apply "$INV" "${KH[@]}" --yes -q --serial 1,2,100% \
    --max-fail 1 2>&1)
assert_eq "$?" 1 "stopped rollout: exit status" || note "$out"
# The whole output of -q, as docs/envctl.1 shows it.
want="gpu-01: changed (backup ID)
batch 1/3: 1 host: 1 changed
gpu-02: failed: the new file does not work: NCCL_PROTO is 'Simple', want 'LL'
gpu-03: failed: the new file does not work: NCCL_PROTO is 'Simple', want 'LL'
batch 2/3: 2 hosts: 0 changed, 2 failed
gpu-04: skipped: $STOP
gpu-05: skipped: $STOP
gpu-06: skipped: $STOP
1 changed, 0 in sync, 2 failed, 3 skipped; $STOP"
# shellcheck disable=SC2001 # a regular expression
assert_eq "$(sed 's/(backup [0-9TZ]*-[0-9a-f]*)/(backup ID)/' <<<"$out")" "$want" \
    "stopped rollout: the output"
assert_contains "$out" "batch 1/3: 1 host: 1 changed" "batch 1 line"
assert_contains "$out" "batch 2/3: 2 hosts: 0 changed, 2 failed" "batch 2 line"
case $out in *"batch 3/3"*) fail "batch 3 ran: $out" ;; esac
assert_contains "$out" "gpu-02: failed" "gpu-02 failed"
assert_contains "$out" "gpu-03: failed" "gpu-03 failed"
for h in gpu-04 gpu-05 gpu-06; do
	assert_contains "$out" "$h: skipped: $STOP" "$h skipped, with the reason"
done
assert_contains "$out" "1 changed, 0 in sync, 2 failed, 3 skipped; $STOP" \
    "the summary names the stop"
assert_eq "$(words "$(fleet_changed "$E2E_TMP/before")")" gpu-01 \
    "only the canary changed"
for h in gpu-02 gpu-03 gpu-04 gpu-05 gpu-06; do
	assert_eq "$(host_hash $h)" "$(sha256 "$BROKEN")" "$h: the seed, byte for byte"
done
[ -n "$(find "$(host_dir gpu-01)/var-backups-envctl" -type f)" ] ||
    fail "gpu-01: the changed canary has no backup"
[ -z "$(find "$(host_dir gpu-04)/var-backups-envctl" -type f)" ] ||
    fail "gpu-04: a skipped host got a backup"

# --- the same in --json: gpu-01 is in sync now, 5 hosts to change ----------
# Batches [gpu-02] [gpu-03 gpu-04] [gpu-05 gpu-06]: the second failure is
# in batch 2, after which gpu-05 and gpu-06 are skipped.
"${E[@]}" apply "$INV" "${KH[@]}" --yes --serial 1,2,100% --max-fail 1 \
    --json >"$E2E_TMP/out.json" 2>"$E2E_TMP/err"
assert_eq "$?" 1 "--json stopped rollout: exit status" || note "$(cat "$E2E_TMP/err")"
assert_eq "$(json_get 'd["summary"]["changed"], d["summary"]["failed"], d["summary"]["skipped"], d["summary"]["ok"]')" \
    "1 2 2 1" "--json: summary changed, failed, skipped, ok"
assert_eq "$(json_get '[ (h["name"], h["outcome"]) for h in d["hosts"] ]')" \
    "[('gpu-01', 'ok'), ('gpu-02', 'failed'), ('gpu-03', 'failed'), ('gpu-04', 'changed'), ('gpu-05', 'skipped'), ('gpu-06', 'skipped')]" \
    "--json: the hosts' outcomes"
assert_eq "$(json_get 'd["hosts"][5]["reason"]')" "$STOP" "--json: a skipped host's reason"
assert_eq "$(json_get '[d["rollout"][k] for k in ("serial", "max_fail", "budget", "hosts", "failures", "stopped_after", "reason")]')" \
    "[['1', '2', '100%'], '1', 1, 5, 2, 2, '$STOP']" "--json: the rollout object"
assert_eq "$(json_get '[ (b["index"], b["hosts"], b["changed"], b["failed"], b["skipped"]) for b in d["rollout"]["batches"] ]')" \
    "[(1, ['gpu-02'], 0, 1, 0), (2, ['gpu-03', 'gpu-04'], 1, 1, 0), (3, ['gpu-05', 'gpu-06'], 0, 0, 2)]" \
    "--json: the batches"
for h in gpu-05 gpu-06; do
	assert_eq "$(host_hash $h)" "$(sha256 "$BROKEN")" "--json: $h untouched"
done

# --- without failures every batch runs --------------------------------------
unpin gpu-02
unpin gpu-03
out=$("${E[@]}" apply "$INV" "${KH[@]}" --yes --serial 1,2,100% \
    --max-fail 1 2>&1)
assert_eq "$?" 0 "clean rollout: exit status" || note "$out"
assert_contains "$out" "batch 1/3: 1 host: 1 changed" "clean: batch 1"
assert_contains "$out" "batch 2/3: 2 hosts: 2 changed" "clean: batch 2"
assert_contains "$out" "batch 3/3: 1 host: 1 changed" "clean: batch 3"
assert_contains "$out" "4 changed, 2 in sync" "clean: summary"
case $out in *skipped* | *stopped*) fail "clean rollout: $out" ;; esac
out=$("${E[@]}" plan "$INV" "${KH[@]}" 2>&1)
assert_eq "$?" 0 "after the rollout: in sync" || note "$out"

# --- drift --fix --serial --------------------------------------------------
for h in gpu-01 gpu-04 gpu-06; do
	cp "$BROKEN" "$(host_file $h)" || fatal "cannot reset $h"
done
out=$("${E[@]}" drift "$INV" "${KH[@]}" --lock "$E2E_TMP/d.lock" --fix \
    --serial 1,100% --max-fail 0 2>&1)
assert_eq "$?" 0 "drift --fix --serial: exit status" || note "$out"
assert_contains "$out" "batch 1/2: 1 host: 1 changed" "drift --fix: batch 1"
assert_contains "$out" "batch 2/2: 2 hosts: 2 changed" "drift --fix: batch 2"
out=$("${E[@]}" drift "$INV" "${KH[@]}" --lock "$E2E_TMP/d.lock" 2>&1)
assert_eq "$?" 0 "drift after --fix: silent" || note "$out"
# A pinned canary fails: --max-fail 0 skips the rest, the report says so.
for h in gpu-01 gpu-05; do
	cp "$BROKEN" "$(host_file $h)" || fatal "cannot reset $h"
done
pin gpu-01
out=$("${E[@]}" drift "$INV" "${KH[@]}" --lock "$E2E_TMP/d.lock" --fix \
    --serial 1 --max-fail 0 --report "$E2E_TMP/out.json" 2>&1)
assert_eq "$?" 1 "drift --fix, failed canary: exit status" || note "$out"
assert_contains "$out" "gpu-05: skipped: rollout stopped after batch 1 (1 failure > budget 0)" \
    "drift --fix: the rest skipped"
assert_eq "$(host_hash gpu-05)" "$(sha256 "$BROKEN")" "drift --fix: gpu-05 untouched"
assert_eq "$(json_get 'd["rollout"]["stopped_after"], [h["outcome"] for h in d["hosts"] if h["name"] == "gpu-05"]')" \
    "1 ['skipped']" "drift --report: the stop and the skipped host"
unpin gpu-01

# --- a plan file applied in batches keeps its compare-and-swap --------------
"${E[@]}" plan "$INV" "${KH[@]}" -o "$E2E_TMP/p.plan" >/dev/null 2>&1
assert_eq "$?" 2 "plan -o: exit status"
out=$("${E[@]}" apply "$E2E_TMP/p.plan" "${KH[@]}" --serial 1 2>&1)
assert_eq "$?" 0 "apply PLAN --serial 1: exit status" || note "$out"
assert_contains "$out" "batch 2/2: 1 host: 1 changed" "apply PLAN: batch 2"

# --- asked once for the whole rollout, on a terminal -------------------------
if command -v script >/dev/null; then
	for h in gpu-02 gpu-03; do
		cp "$BROKEN" "$(host_file $h)" || fatal "cannot reset $h"
	done
	out=$(printf 'y\n' | script -qec "'$ENVCTL_BIN' apply '$INV' --known-hosts '$FLEET_KNOWN_HOSTS' --color never -q --serial 1" /dev/null 2>&1)
	assert_eq "$(grep -c 'y/N' <<<"$out")" 1 "asked once" || note "$out"
	assert_contains "$out" "Apply to 2 hosts, in batches of 1, 1? [y/N]" \
	    "the question names the batches"
	assert_contains "$out" "batch 2/2: 1 host: 1 changed" "asked: batch 2 ran"
	assert_contains "$out" "2 changed, 4 in sync" "asked: summary"
else
	note "no script(1): the question is not checked"
fi

# --- rollback in batches ----------------------------------------------------
"${E[@]}" rollback "$INV" "${KH[@]}" --yes --serial 2 --json \
    >"$E2E_TMP/out.json" 2>"$E2E_TMP/err"
assert_eq "$?" 0 "rollback --serial 2: exit status" || note "$(cat "$E2E_TMP/err")"
assert_eq "$(json_get '[ len(b["hosts"]) for b in d["rollout"]["batches"] ], d["summary"]["changed"]')" \
    "[2, 2, 2] 6" "rollback --serial 2: three batches of two"

# --- group by group: --by-group, one budget across the groups ---------------
# The same hosts as racks: rack1 gpu-01 gpu-02, rack2 gpu-03..05, rack3
# gpu-06.  gpu-02 (rack1) and gpu-04 (rack2) are pinned: with --max-fail 1
# rack1's one failure is within the budget, rack2's second exceeds it, so
# the rollout stops inside rack2 and gpu-05 (rack2) and gpu-06 (rack3) are
# skipped.
RACKS=$E2E_TMP/racks.yaml
{
	cat "$INV"
	printf '    rack1:\n      hosts:\n        gpu-01:\n        gpu-02:\n'
	printf '    rack2:\n      hosts:\n        gpu-03:\n        gpu-04:\n'
	printf '        gpu-05:\n'
	printf '    rack3:\n      hosts:\n        gpu-06:\n'
} >"$RACKS"
for h in gpu-01 gpu-02 gpu-03 gpu-04 gpu-05 gpu-06; do
	cp "$BROKEN" "$(host_file $h)" || fatal "cannot reset $h"
done
pin gpu-02
pin gpu-04
fleet_hashes >"$E2E_TMP/before"
out=$("${E[@]}" apply "$RACKS" "${KH[@]}" --yes -q --serial 1 \
    --by-group rack1,rack2,rack3 --max-fail 1 2>&1)
assert_eq "$?" 1 "--by-group stopped rollout: exit status" || note "$out"
GSTOP="rollout stopped after batch 4 in group rack2 (2 failures > budget 1)"
want="gpu-01: changed (backup ID)
batch 1/6 in group rack1: 1 host: 1 changed
gpu-02: failed: the new file does not work: NCCL_PROTO is 'Simple', want 'LL'
batch 2/6 in group rack1: 1 host: 0 changed, 1 failed
gpu-03: changed (backup ID)
batch 3/6 in group rack2: 1 host: 1 changed
gpu-04: failed: the new file does not work: NCCL_PROTO is 'Simple', want 'LL'
batch 4/6 in group rack2: 1 host: 0 changed, 1 failed
gpu-05: skipped: $GSTOP
gpu-06: skipped: $GSTOP
2 changed, 0 in sync, 2 failed, 2 skipped; $GSTOP"
# shellcheck disable=SC2001 # a regular expression
assert_eq "$(sed 's/(backup [0-9TZ]*-[0-9a-f]*)/(backup ID)/' <<<"$out")" "$want" \
    "--by-group stopped rollout: the output"
assert_eq "$(words "$(fleet_changed "$E2E_TMP/before")")" "gpu-01 gpu-03" \
    "--by-group: only the hosts before the stop changed"
for h in gpu-05 gpu-06; do
	assert_eq "$(host_hash $h)" "$(sha256 "$BROKEN")" "--by-group: $h untouched"
done

# In the groups' order, not the inventory's: rack3 first, then rack2,
# whose failure (gpu-04) spends --max-fail 0; rack1 is not reached.
"${E[@]}" apply "$RACKS" "${KH[@]}" --yes --by-group rack3,rack2,rack1 \
    --max-fail 0 --json >"$E2E_TMP/out.json" 2>"$E2E_TMP/err"
assert_eq "$?" 1 "--by-group --json: exit status" || note "$(cat "$E2E_TMP/err")"
GSTOP="rollout stopped after batch 2 in group rack2 (1 failure > budget 0)"
assert_eq "$(json_get '[d["rollout"][k] for k in ("serial", "by_group", "budget", "hosts", "failures", "stopped_after", "reason")]')" \
    "[[], ['rack3', 'rack2', 'rack1'], 0, 4, 1, 2, '$GSTOP']" \
    "--by-group --json: the rollout object"
assert_eq "$(json_get '[ (b["group"], b["hosts"], b["changed"], b["failed"], b["skipped"]) for b in d["rollout"]["batches"] ]')" \
    "[('rack3', ['gpu-06'], 1, 0, 0), ('rack2', ['gpu-04', 'gpu-05'], 1, 1, 0), ('rack1', ['gpu-02'], 0, 0, 1)]" \
    "--by-group --json: a batch per group, in the groups' order"
assert_eq "$(json_get '[ (h["name"], h["outcome"], h.get("reason")) for h in d["hosts"] if h["name"] == "gpu-02" ]')" \
    "[('gpu-02', 'skipped', '$GSTOP')]" "--by-group --json: the later group skipped"
assert_eq "$(host_hash gpu-02)" "$(sha256 "$BROKEN")" "--by-group --json: gpu-02 untouched"

# A group the inventory lacks, a host in none of the groups: refused
# before any host is contacted.
fleet_hashes >"$E2E_TMP/before"
out=$("${E[@]}" apply "$RACKS" "${KH[@]}" --yes --by-group rack1,rack9 2>&1)
assert_eq "$?" 1 "--by-group, unknown group: exit status" || note "$out"
assert_eq "$out" "--by-group: group 'rack9' is not in the inventory '$RACKS'" \
    "--by-group, unknown group: the message"
out=$("${E[@]}" apply "$RACKS" "${KH[@]}" --yes --by-group rack2,rack1 2>&1)
assert_eq "$?" 1 "--by-group, host in none: exit status" || note "$out"
assert_eq "$out" "--by-group: host 'gpu-06' is in none of the groups rack2,rack1: list its group, end the list with all, or leave it out (-l)" \
    "--by-group, host in none: the message"
assert_eq "$(fleet_changed "$E2E_TMP/before")" "" "--by-group refused: nothing changed"

# The question shows the plan: a canary in each group, then the rest of
# it; all, last, takes the hosts of no group listed before.
unpin gpu-02
unpin gpu-04
for h in gpu-03 gpu-05; do
	cp "$BROKEN" "$(host_file $h)" || fatal "cannot reset $h"
done
if command -v script >/dev/null; then
	out=$(printf 'n\n' | script -qec "'$ENVCTL_BIN' apply '$RACKS' --known-hosts '$FLEET_KNOWN_HOSTS' --color never -q --serial 1,100% --by-group rack2,all" /dev/null 2>&1)
	assert_contains "$out" "Apply to 4 hosts, by group: rack2 (1, 2), all (1)? [y/N]" \
	    "--by-group: the question names the groups and their batches"
	assert_contains "$out" "nothing changed" "--by-group: answered no"
else
	note "no script(1): the question is not checked"
fi

# A plan file: its hosts, the groups of its inventory.
"${E[@]}" plan "$RACKS" "${KH[@]}" -o "$E2E_TMP/g.plan" >/dev/null 2>&1
assert_eq "$?" 2 "--by-group: plan -o: exit status"
out=$("${E[@]}" apply "$E2E_TMP/g.plan" "${KH[@]}" -q --serial 1,100% \
    --by-group rack2,rack1 2>&1)
assert_eq "$?" 0 "apply PLAN --by-group: exit status" || note "$out"
assert_contains "$out" "batch 1/3 in group rack2: 1 host: 1 changed" "apply PLAN: rack2's canary"
assert_contains "$out" "batch 2/3 in group rack2: 2 hosts: 2 changed" "apply PLAN: rack2's rest"
assert_contains "$out" "batch 3/3 in group rack1: 1 host: 1 changed" "apply PLAN: then rack1"
out=$("${E[@]}" plan "$RACKS" "${KH[@]}" 2>&1)
assert_eq "$?" 0 "after the --by-group rollouts: in sync" || note "$out"

# drift --fix and rollback take it too.
for h in gpu-01 gpu-06; do
	cp "$BROKEN" "$(host_file $h)" || fatal "cannot reset $h"
done
out=$("${E[@]}" drift "$RACKS" "${KH[@]}" --lock "$E2E_TMP/d.lock" --fix \
    --by-group rack3,rack1,rack2 2>&1)
assert_eq "$?" 0 "drift --fix --by-group: exit status" || note "$out"
assert_contains "$out" "batch 1/2 in group rack3: 1 host: 1 changed" "drift --fix: rack3 first"
assert_contains "$out" "batch 2/2 in group rack1: 1 host: 1 changed" "drift --fix: then rack1"
"${E[@]}" rollback "$RACKS" "${KH[@]}" --yes --by-group rack3,rack2,rack1 \
    --serial 2 --json >"$E2E_TMP/out.json" 2>"$E2E_TMP/err"
assert_eq "$?" 0 "rollback --by-group: exit status" || note "$(cat "$E2E_TMP/err")"
assert_eq "$(json_get '[ (b["group"], len(b["hosts"])) for b in d["rollout"]["batches"] ]')" \
    "[('rack3', 1), ('rack2', 2), ('rack2', 1), ('rack1', 2)]" \
    "rollback --by-group: --serial 2 within each group"
