#!/bin/bash
# t-shard.sh - --shard K/N against real sshd hosts: 4 sharded drift runs
# (and plan runs), side by side, merged by `envctl report merge`, give the
# report, metrics and exit status one unsharded run gives; each shard's
# files carry its shard; --shard auto from Slurm's and Kubernetes'
# variables picks the same hosts; a shard missing or of another run is
# refused by name.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
    missing "python3-prometheus-client is not installed"

# This machine's processes are the test hosts' too (no PID namespace):
# the playbook looks at no running worker, so that others' tests running
# meanwhile change nothing here.
PB=$E2E_TMP/pb/cuda13-nccl.yaml
mkdir "$E2E_TMP/pb" || fatal "mkdir $E2E_TMP/pb"
cp "$E2E_REPO"/playbooks/cuda13-nccl.* "$E2E_TMP/pb/" ||
    fatal "cannot copy the playbook"
printf 'processes: [envctl-test-matches-no-process]\n' >>"$PB"
RIGHT=$E2E_TMP/right.py
printf 'all:\n  hosts:\n    x:\n' >"$E2E_TMP/one.yaml"
"$ENVCTL_BIN" render "$E2E_TMP/one.yaml" -p "$PB" --host x >"$RIGHT" ||
    fatal "render of the desired file failed"
fleet_start 10 --seed "$RIGHT" --seed "$RIGHT" \
    --seed "$ENVCTL_FIXTURES/seed-broken.sitecustomize.py"
sed -i 's/"NCCL_PROTO", "LL"/"NCCL_PROTO", "Simple"/' "$(host_file gpu-02)"
E=("$ENVCTL_BIN")
KH=(--known-hosts "$FLEET_KNOWN_HOSTS" --color never -p "$PB")
INV=$FLEET_INVENTORY
CMP=$E2E_SRCDIR/shard-compare.py
D=$E2E_TMP/out
mkdir "$D"

# --- drift: one run, then 4 shards at once --------------------------------
"${E[@]}" drift "$INV" "${KH[@]}" --lock "$E2E_TMP/full.lock" \
    --report "$D/full.json" --metrics-file "$D/full.prom" >/dev/null 2>&1
full_rc=$?
assert_eq "$full_rc" 2 "unsharded drift: exit status"
pids=()
for k in 0 1 2 3; do
	"${E[@]}" drift "$INV" "${KH[@]}" --shard "$k/4" \
	    --lock "$E2E_TMP/s$k.lock" --report "$D/drift-$k.json" \
	    --metrics-file "$D/drift-$k.prom" >"$D/drift-$k.out" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for k in 0 1 2 3; do
	[ -s "$D/drift-$k.json" ] || fail "shard $k wrote no report: $(cat "$D/drift-$k.out")"
	n=$(grep -c '^envctl_' "$D/drift-$k.prom")
	assert_eq "$(grep -c "shard=\"$k/4\"" "$D/drift-$k.prom")" "$n" \
	    "shard $k: every series has shard=\"$k/4\""
done
"${E[@]}" report merge -o "$D/merged.json" --metrics-file "$D/merged.prom" \
    "$D"/drift-?.json "$D"/drift-?.prom >"$D/merge.out" 2>&1
assert_eq "$?" "$full_rc" "merged drift: the unsharded exit status"
assert_contains "$(cat "$D/merge.out")" "drift, 4 shards: 4 to change, 6 in sync" \
    "merge: summary line"
out=$(/usr/bin/python3 "$CMP" "$D/full.json" "$D/merged.json" \
    "$D/full.prom" "$D/merged.prom" "$D"/drift-?.json) ||
    fail "merged drift differs from the unsharded run: $out"
assert_eq "$(find "$D" -name '.*' | wc -l)" 0 "no temp file left"

# --- plan --json, 4 shards ------------------------------------------------
"${E[@]}" plan "$INV" "${KH[@]}" --json >"$D/plan-full.json" 2>/dev/null
plan_rc=$?
for k in 0 1 2 3; do
	"${E[@]}" plan "$INV" "${KH[@]}" --json --shard "$k/4" \
	    >"$D/plan-$k.json" 2>/dev/null
done
"${E[@]}" report merge -q -o "$D/plan-merged.json" "$D"/plan-?.json
assert_eq "$?" "$plan_rc" "merged plan: the unsharded exit status"
out=$(/usr/bin/python3 - "$D/plan-full.json" "$D/plan-merged.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    for h in d["hosts"]:
        h.pop("seconds", None)
        h.pop("stats", None)
print("same" if a == b else "differ")
PY
)
assert_eq "$out" same "merged plan equals the unsharded plan"

# --- auto: Slurm's and Kubernetes' variables ------------------------------
names() { /usr/bin/python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(sys.stdin)["hosts"]))'; }
want=$(names <"$D/drift-2.json")
got=$(SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 \
    SLURM_ARRAY_TASK_COUNT=4 "${E[@]}" facts "$INV" "${KH[@]}" --json \
    --shard auto 2>/dev/null | names)
assert_eq "$got" "$want" "--shard auto from SLURM_ARRAY_TASK_* (--array=1-4)"
got=$(JOB_COMPLETION_INDEX=2 "${E[@]}" backups "$INV" "${KH[@]}" --json \
    --shard auto --shards 4 2>/dev/null | names)
assert_eq "$got" "$want" "--shard auto from JOB_COMPLETION_INDEX"
"${E[@]}" drift "$INV" "${KH[@]}" --shard auto >/dev/null 2>"$E2E_TMP/err"
assert_eq "$?" 64 "--shard auto outside a job: usage error"
assert_contains "$(cat "$E2E_TMP/err")" "neither SLURM_ARRAY_TASK_ID" "--shard auto: why"

# --- refusals -------------------------------------------------------------
"${E[@]}" report merge -o "$D/x.json" "$D/drift-0.json" "$D/drift-2.json" \
    "$D/drift-3.json" 2>"$E2E_TMP/err"
assert_eq "$?" 1 "a missing shard: exit 1"
assert_contains "$(cat "$E2E_TMP/err")" "missing shard 1/4 (3 of 4 inputs given)" \
    "a missing shard is named"
"${E[@]}" report merge -o "$D/x.json" "$D"/drift-[012].json "$D/plan-3.json" \
    2>"$E2E_TMP/err"
assert_eq "$?" 1 "reports of two commands: exit 1"
assert_contains "$(cat "$E2E_TMP/err")" "is a plan report, but" "another command"
if [ -e "$D/x.json" ]; then
	fail "a refused merge wrote its output"
fi
