#!/bin/bash
# t-harness.sh - the test-host harness itself, against the real sshd, ssh
# and /usr/bin/python3: each host imports its own sitecustomize.py, sees
# the seed it was given, keeps its writes to itself, and is gone after stop.

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

require sha256sum ssh-keygen sftp awk stat timeout pgrep

BROKEN=$ENVCTL_FIXTURES/seed-broken.sitecustomize.py
DEFAULT=$ENVCTL_FIXTURES/debian-default.sitecustomize.py
WORKING=$ENVCTL_FIXTURES/seed-working.sitecustomize.py
for f in "$BROKEN" "$DEFAULT" "$WORKING"; do
	[ -r "$f" ] || missing "fixture $f not found (set ENVCTL_FIXTURES)"
done

# What this machine has before: none of it may change.
pyver=$(/usr/bin/python3 -I -S -c 'import sys; print("%d.%d" % sys.version_info[:2])')
REAL_SITE=/etc/python$pyver/sitecustomize.py
REAL_PYC=/usr/lib/python$pyver/__pycache__/sitecustomize.cpython-${pyver/./}.pyc
REAL_DIST=/usr/local/lib/python$pyver/dist-packages/sitecustomize.py
REAL_PATHS=("$REAL_SITE" "$REAL_PYC" "$REAL_DIST" /var/lib/envctl /var/backups/envctl
    /run/lock/envctl /root/.cache/e2e-mark /var/log/wtmp /var/log/lastlog)
real_state() {
	local p
	for p in "${REAL_PATHS[@]}"; do
		if [ -d "$p" ]; then
			printf '%s dir\n' "$p"
		else
			printf '%s %s\n' "$p" "$(sha256 "$p")"
		fi
	done
}
real_state >"$E2E_TMP/real.before"

fleet_start 3 --seed "$BROKEN" --seed "$DEFAULT" --seed "$WORKING"
note "fleet up in $FLEET_DIR"

assert_eq "${FLEET_HOSTS[*]}" "gpu-01 gpu-02 gpu-03" "host names"
assert_eq "$FLEET_PYVER" "$pyver" "python version"
assert_eq "$(stat -c %a "$FLEET_DIR")" 700 "mode of the fleet dir"
declare -A SEED=([gpu-01]=$BROKEN [gpu-02]=$DEFAULT [gpu-03]=$WORKING)
declare -A PROTO=([gpu-01]=None [gpu-02]=None [gpu-03]=LL)

# --- every host imports its own file, the seed it was given -------------
for h in "${FLEET_HOSTS[@]}"; do
	note "$h: seeded with ${SEED[$h]##*/}"
	want=$(sha256 "${SEED[$h]}")
	assert_eq "$(host_hash "$h")" "$want" "$h: host file (outside) = seed"

	# Where Python finds it, without running it (the broken seed raises
	# again when imported a second time).
	out=$(host_ssh "$h" "/usr/bin/python3 -c 'import importlib.util as u; print(u.find_spec(\"sitecustomize\").origin)'" 2>/dev/null)
	assert_eq "$out" "$FLEET_SITE" "$h: find_spec(sitecustomize).origin"
	out=$(host_ssh "$h" "/usr/bin/python3 -c 'import sitecustomize; print(sitecustomize.__file__)'" 2>&1)
	if [ "$h" != gpu-01 ]; then
		assert_eq "$out" "$FLEET_SITE" "$h: sitecustomize.__file__"
	else
		assert_contains "$out" "File \"$FLEET_SITE\", line 15" \
		    "$h: importing the broken seed again raises in it"
	fi
	out=$(host_ssh "$h" "readlink -f $FLEET_SITE")
	assert_eq "$out" "$FLEET_ETC_SITE" "$h: readlink -f $FLEET_SITE"
	out=$(host_ssh "$h" "sha256sum $FLEET_SITE")
	assert_eq "${out%% *}" "$want" "$h: sha256 of $FLEET_SITE on the host"
	out=$(host_ssh "$h" "stat -c '%a %U:%G' $FLEET_ETC_SITE")
	assert_eq "$out" "644 root:root" "$h: mode and owner"

	# The effective environment of a fresh interpreter.
	host_ssh "$h" "env -i PATH=/usr/bin:/bin /usr/bin/python3 -c 'import os; print(os.environ.get(\"NCCL_PROTO\"))'" \
	    >"$E2E_TMP/$h.out" 2>"$E2E_TMP/$h.err"
	rc=$?
	assert_eq "$rc" 0 "$h: exit status of python3"
	assert_eq "$(cat "$E2E_TMP/$h.out")" "${PROTO[$h]}" "$h: NCCL_PROTO"
	err=$(cat "$E2E_TMP/$h.err")
	if [ "$h" = gpu-01 ]; then
		assert_contains "$err" "Error in sitecustomize" "$h: stderr"
		assert_contains "$err" "TypeError: str expected, not ellipsis" "$h: stderr"
	else
		assert_eq "$err" "" "$h: stderr"
	fi

	# A clean root home, and empty state dirs of its own.
	# shellcheck disable=SC2016 # $HOME of the host
	out=$(host_ssh "$h" 'echo "$HOME"; ls -A /root; find /root/.cache /var/lib/envctl /var/backups/envctl /run/lock/envctl -mindepth 1')
	assert_eq "$(words "$out")" "/root .cache .ssh" "$h: /root and state dirs at start"
done

# --- a write on one host changes that host only --------------------------
fleet_hashes >"$E2E_TMP/hashes.before"
host_ssh gpu-02 "printf '# e2e: written on gpu-02\n' >>$FLEET_ETC_SITE"
assert_eq "$(words "$(fleet_changed "$E2E_TMP/hashes.before")")" gpu-02 \
    "hosts changed by a write on gpu-02"
assert_eq "$(tail -n 1 "$(host_file gpu-02)")" "# e2e: written on gpu-02" \
    "gpu-02's file seen from outside"
# Replaced by rename inside the directory, as an atomic writer does.
host_ssh gpu-03 "cd /etc/python$pyver && cp -p sitecustomize.py .e2e.tmp && echo '# e2e: renamed' >>.e2e.tmp && mv .e2e.tmp sitecustomize.py"
assert_eq "$(tail -n 1 "$(host_file gpu-03)")" "# e2e: renamed" \
    "gpu-03's file replaced by rename, seen from outside"
assert_eq "$(host_hash gpu-01)" "$(sha256 "$BROKEN")" "gpu-01 untouched"
# A sitecustomize.py created in site-packages stays inside the host too.
host_ssh gpu-02 "echo '# e2e' >$REAL_DIST"
assert_eq "$(host_ssh gpu-02 "cat $REAL_DIST")" "# e2e" "gpu-02 sees its own $REAL_DIST"
[ -e "$REAL_DIST" ] && fail "a host's write reached this machine's $REAL_DIST"
assert_eq "$(host_ssh gpu-01 "cat $REAL_DIST 2>&1 >/dev/null | grep -c 'No such file'")" 1 \
    "gpu-01 does not see gpu-02's $REAL_DIST"
assert_eq "$(sha256 "$REAL_SITE")" "$(grep "^$REAL_SITE " "$E2E_TMP/real.before" | cut -d' ' -f2)" \
    "this machine's $REAL_SITE"

for h in "${FLEET_HOSTS[@]}"; do
	host_ssh "$h" "for d in /root/.cache /var/lib/envctl /var/backups/envctl /run/lock/envctl; do echo $h >\$d/e2e-mark; done"
	d=$(host_dir "$h")
	for sub in root/.cache var-lib-envctl var-backups-envctl run-lock-envctl; do
		assert_eq "$(cat "$d/$sub/e2e-mark" 2>&1)" "$h" "$h: $sub/e2e-mark"
	done
done

# SFTP (the controller uploads its agent that way) lands in the host's tree.
printf 'e2e payload\n' >"$E2E_TMP/payload"
printf 'put %s /root/.cache/e2e-payload\n' "$E2E_TMP/payload" |
    sftp -q -b - -F "$FLEET_SSH_CONFIG" -o KexAlgorithms=curve25519-sha256 gpu-02 >/dev/null ||
    fail "gpu-02: sftp put failed"
assert_eq "$(cat "$(host_dir gpu-02)/root/.cache/e2e-payload" 2>&1)" "e2e payload" \
    "gpu-02: file put over sftp, seen from outside"

# Each host compiles its own sitecustomize: two files of the same size and
# mtime must not share a cached .pyc (Python checks only those two).
printf 'import os\nos.environ["E2E_MARK"] = "A"\n' >"$(host_file gpu-01)"
printf 'import os\nos.environ["E2E_MARK"] = "B"\n' >"$(host_file gpu-03)"
touch -d @1700000000 "$(host_file gpu-01)" "$(host_file gpu-03)"
for h in gpu-01 gpu-03 gpu-01; do
	out=$(host_ssh "$h" "/usr/bin/python3 -c 'import os; print(os.environ.get(\"E2E_MARK\"))'")
	case $h in gpu-01) want=A ;; *) want=B ;; esac
	assert_eq "$out" "$want" "$h: E2E_MARK from its own sitecustomize"
done

# --- the files written for clients ---------------------------------------
n=0
while read -r hostport type key extra; do
	n=$((n + 1))
	[[ $hostport =~ ^\[127\.0\.0\.1\]:[0-9]+$ ]] || fail "known_hosts: bad host: $hostport"
	assert_eq "$type" ssh-ed25519 "known_hosts: key type"
	[[ $key =~ ^[A-Za-z0-9+/]+=*$ ]] || fail "known_hosts: bad key: $key"
	assert_eq "$extra" "" "known_hosts: trailing fields"
done <"$FLEET_KNOWN_HOSTS"
assert_eq "$n" 3 "known_hosts lines"
for h in "${FLEET_HOSTS[@]}"; do
	port=$(host_port "$h")
	read -r _ kb _ <"$(host_dir "$h")/ssh_host_ed25519_key.pub"
	out=$(ssh-keygen -F "[127.0.0.1]:$port" -f "$FLEET_KNOWN_HOSTS" | grep -v '^#')
	assert_contains "$out" "$kb" "$h: its host key in known_hosts"
	cfg=$(ssh -G -F "$FLEET_SSH_CONFIG" "$h")
	for want in "hostname 127.0.0.1" "port $port" "user root" \
	    "identityfile $FLEET_KEY" "userknownhostsfile $FLEET_KNOWN_HOSTS" \
	    "stricthostkeychecking true" "batchmode yes"; do
		assert_contains "$cfg" "$want" "$h: ssh -G"
	done
done
# Host keys are really checked: an empty known_hosts is refused.
if ssh -F "$FLEET_SSH_CONFIG" -o UserKnownHostsFile=/dev/null gpu-01 true 2>/dev/null; then
	fail "gpu-01: login accepted without a known host key"
fi

# hosts.yaml: a minimal indentation parser (block mappings, scalars) turned
# into dotted paths, compared with hosts.tsv.
grep -q "$(printf '\t')" "$FLEET_INVENTORY" && fail "hosts.yaml: tab characters"
awk '
/^[[:space:]]*(#|$)/ { next }
{
	match($0, /^ */); ind = RLENGTH; line = substr($0, ind + 1)
	if (line !~ /^[A-Za-z0-9_.-]+:( |$)/) { print "BAD " $0; next }
	key = line; sub(/:.*/, "", key)
	val = line; sub(/^[^:]*:[ ]*/, "", val)
	while (n > 0 && ind <= sind[n]) n--
	if (n > 0 && sind[n] >= ind) { print "BAD " $0; next }
	n++; sind[n] = ind; skey[n] = key
	path = skey[1]; for (i = 2; i <= n; i++) path = path "." skey[i]
	if (val != "") print path "=" val
}' "$FLEET_INVENTORY" | sort >"$E2E_TMP/inventory.got"
{
	echo "all.children.fleet.vars.ansible_python_interpreter=/usr/bin/python3"
	while IFS=$'\t' read -r name port _ addr; do
		case $name in '#'*) continue ;; esac
		p=all.children.fleet.hosts.$name
		echo "$p.ansible_host=$addr"
		echo "$p.ansible_port=$port"
		echo "$p.ansible_user=root"
		echo "$p.ansible_ssh_private_key_file=$FLEET_KEY"
	done <"$FLEET_DIR/hosts.tsv"
} | sort >"$E2E_TMP/inventory.want"
diff -u "$E2E_TMP/inventory.want" "$E2E_TMP/inventory.got" >&2 ||
    fail "hosts.yaml does not describe the fleet"
if /usr/bin/python3 -I -c 'import yaml' 2>/dev/null; then
	out=$(/usr/bin/python3 -I -c '
import sys, yaml
inv = yaml.safe_load(open(sys.argv[1]))
for name, v in inv["all"]["children"]["fleet"]["hosts"].items():
    print(name, v["ansible_host"], v["ansible_port"], v["ansible_user"])
' "$FLEET_INVENTORY")
	assert_eq "$(words "$out")" \
	    "gpu-01 127.0.0.1 $(host_port gpu-01) root gpu-02 127.0.0.1 $(host_port gpu-02) root gpu-03 127.0.0.1 $(host_port gpu-03) root" \
	    "hosts.yaml read by PyYAML"
fi

# --- processes ------------------------------------------------------------
declare -A PID=()
while read -r name pid; do PID[$name]=$pid; done <"$FLEET_DIR/pids"
assert_eq "${#PID[@]}" 3 "pids recorded"
for h in "${FLEET_HOSTS[@]}"; do
	pid=${PID[$h]:-}
	assert_eq "$(cat "$(host_dir "$h")/sshd.pid" 2>&1)" "$pid" "$h: pid file of sshd = recorded pid"
	[ "/proc/$pid/exe" -ef /usr/sbin/sshd ] || fail "$h: pid $pid is not /usr/sbin/sshd"
	[ "/proc/$pid/ns/mnt" -ef /proc/self/ns/mnt ] &&
	    fail "$h: sshd runs in our own mount namespace"
	grep -q "Accepted publickey for root" "$(host_dir "$h")/sshd.log" ||
	    fail "$h: no VERBOSE login record in sshd.log"
done
out=$("$FLEET_CMD" status "$FLEET_DIR") || fail "fleet status: not all up: $out"
assert_eq "$(printf '%s\n' "$out" | grep -c $'\tup\t')" 3 "fleet status: hosts up"

# A session still running at stop time goes with its host.
ready_pipe session
host_ssh gpu-01 'echo started; exec sleep 6017' </dev/null \
    >"$E2E_TMP/session.out" 2>&1 {READY_FD}>&- &
client=$!
await_ready "$READY_FD" "$E2E_TMP/session.ready"
pgrep -f '^sleep 6017$' >/dev/null || fail "the long session did not start"

fleet_stop
for h in "${FLEET_HOSTS[@]}"; do
	pid=${PID[$h]}
	pid_alive "$pid" && fail "$h: sshd $pid still alive after stop"
	if (exec 3<>"/dev/tcp/127.0.0.1/$(host_port "$h")") 2>/dev/null; then
		fail "$h: port $(host_port "$h") still accepts connections"
	fi
done
pgrep -f '^sleep 6017$' >/dev/null && fail "a session of gpu-01 survived stop"
timeout 5 tail --pid="$client" -f /dev/null || fail "the ssh client did not end"
wait "$client" 2>/dev/null
left=$(grep -l -F -- "$FLEET_DIR/" /proc/[0-9]*/cmdline 2>/dev/null)
assert_eq "$left" "" "processes still naming $FLEET_DIR"
out=$("$FLEET_CMD" status "$FLEET_DIR") && fail "fleet status: up after stop"
assert_eq "$(printf '%s\n' "$out" | grep -c $'\tdown\t')" 3 "fleet status: hosts down"
"$FLEET_CMD" stop "$FLEET_DIR" || fail "a second fleet stop failed"

real_state >"$E2E_TMP/real.after"
diff -u "$E2E_TMP/real.before" "$E2E_TMP/real.after" >&2 ||
    fail "this machine's files changed"
