# shellcheck shell=bash
# tests/e2e/lib.sh - sourced by every tests/e2e/t-*.sh scenario, in the
# spirit of OpenSSH's regress/test-exec.sh.
#
# Gives the scenario a private temp dir ($E2E_TMP), at most one fleet of sshd
# test hosts (fleet_start / fleet_stop; the fleet is always stopped on exit,
# failure or signal) and helpers to reach and inspect the hosts. A scenario
# reports with fail (go on) or fatal (stop here); require skips it when a
# prerequisite is missing, except under CI=true, where that is a failure.
# Exit status: 0 passed, 1 failed, 77 skipped (reason in $E2E_SKIP_FILE).

E2E_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
E2E_REPO=$(cd "$E2E_SRCDIR/../.." && pwd -P)
E2E_NAME=$(basename "$0" .sh)
FLEET_CMD=$E2E_SRCDIR/fleet
if [ -z "${ENVCTL_FIXTURES:-}" ]; then
	ENVCTL_FIXTURES=$E2E_REPO/tests/fixtures
fi
export ENVCTL_FIXTURES
ENVCTL_BIN=${ENVCTL_BIN:-$E2E_REPO/build/envctl}
E2E_FAILED=0
E2E_STARTED=0

E2E_TMP=$(mktemp -d "${E2E_TMPDIR:-/tmp}/envctl-e2e-$E2E_NAME.XXXXXX") || {
	echo "$E2E_NAME: cannot create a temp dir" >&2
	exit 1
}
FLEET_DIR=$E2E_TMP/fleet
# The scenario's own stdout and stderr: what fail, note and the exit trap
# print must reach the log even when they run inside a redirection (a trap
# runs wherever the script was when the signal came).
exec {E2E_OUT}>&1 {E2E_ERR}>&2

# note MSG: progress, shown by `run -v` and in the log of a failed scenario.
note() {
	printf '# %s\n' "$*" >&"$E2E_OUT"
}

# fail MSG: the scenario has failed; it goes on. Shows the tail of every
# host's sshd log. Works from subshells too (the mark is a file).
fail() {
	local f
	{
		printf 'FAIL: %s: %s\n' "$E2E_NAME" "$*"
		E2E_FAILED=1
		: >"$E2E_TMP/.failed"
		[ -d "$FLEET_DIR" ] || return 0
		for f in "$FLEET_DIR"/*/sshd.log; do
			[ -s "$f" ] || continue
			printf -- '--- %s (last 15 lines)\n' "$f"
			tail -n 15 "$f"
		done
	} >&"$E2E_ERR" 2>&1
	return 0
}

# fatal MSG: fail and stop the scenario here.
fatal() {
	fail "$@"
	exit 1
}

# skip REASON: the scenario cannot run here (exit 77).
skip() {
	printf 'SKIP: %s: %s\n' "$E2E_NAME" "$*" >&"$E2E_ERR"
	if [ -n "${E2E_SKIP_FILE:-}" ]; then
		printf '%s\n' "$*" >"$E2E_SKIP_FILE"
	fi
	exit 77
}

# missing REASON: a prerequisite is missing: skip, but under CI=true fail.
missing() {
	if [ "${CI:-}" = true ]; then
		fatal "$* (prerequisites are mandatory under CI=true)"
	fi
	skip "$*"
}

# require CMD...: each CMD (a name on PATH or an absolute path) exists.
require() {
	local c
	for c in "$@"; do
		case $c in
		/*) [ -x "$c" ] || missing "missing $c" ;;
		*) command -v "$c" >/dev/null 2>&1 || missing "missing $c" ;;
		esac
	done
}

# require_root: the fleet needs root (mount namespaces, sshd, root logins).
require_root() {
	[ "$(id -u)" = 0 ] || missing "needs root (mount namespaces, sshd)"
	unshare -m --propagation private true 2>/dev/null ||
	    missing "cannot create a mount namespace (unshare -m)"
}

_e2e_exit() {
	local rc=$?
	trap - EXIT
	set +e
	exec 1>&"$E2E_OUT" 2>&"$E2E_ERR"
	fleet_stop
	[ -e "$E2E_TMP/.failed" ] && E2E_FAILED=1
	if [ "$E2E_FAILED" = 1 ] && [ "$rc" = 0 ]; then
		rc=1
	fi
	if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then
		[ "${E2E_KEEP:-0}" = 1 ] || rm -rf "$E2E_TMP"
	else
		printf '%s: files kept in %s\n' "$E2E_NAME" "$E2E_TMP" >&2
	fi
	exit "$rc"
}
trap _e2e_exit EXIT
trap 'fail "interrupted (SIGINT)"; exit 130' INT
trap 'fail "terminated (SIGTERM)"; exit 143' TERM
trap 'fail "hangup (SIGHUP)"; exit 129' HUP

# fleet_start N [--seed FILE]... [--become-host NAME:nopasswd|password]...
# [fleet start options]: start the scenario's fleet in $FLEET_DIR on a free
# port range ($E2E_BASE_PORT to pin it), and set FLEET_HOSTS (names, in
# order), FLEET_INVENTORY, FLEET_SSH_CONFIG, FLEET_KNOWN_HOSTS, FLEET_KEY,
# FLEET_PYVER, FLEET_SITE (the path Python imports on a host),
# FLEET_ETC_SITE (the file that path links to) and, with --become-host,
# FLEET_OPS_USER, FLEET_OPS_UID and FLEET_OPS_HOME (the login user of those
# hosts, its uid and gid, and its home as the hosts see it; else empty).
fleet_start() {
	local name port dir addr k v a
	[ "$E2E_STARTED" = 0 ] || fatal "fleet_start: the fleet is already started"
	[ $# -ge 1 ] || fatal "usage: fleet_start N [--seed FILE]..."
	require_root
	require ssh ssh-keygen unshare mount /usr/sbin/sshd /usr/bin/python3
	for a in "$@"; do
		case $a in --become-host | --become-host=*)
			require /usr/bin/sudo /usr/sbin/visudo ;;
		esac
	done
	E2E_STARTED=1
	"$FLEET_CMD" start "$FLEET_DIR" "$1" \
	    --base-port "${E2E_BASE_PORT:-auto}" "${@:2}" ||
	    fatal "fleet start $* failed"
	FLEET_INVENTORY=$FLEET_DIR/hosts.yaml
	FLEET_SSH_CONFIG=$FLEET_DIR/ssh_config
	FLEET_KNOWN_HOSTS=$FLEET_DIR/known_hosts
	FLEET_KEY=$FLEET_DIR/id_ed25519
	FLEET_HOSTS=()
	declare -gA _E2E_PORT=() _E2E_HDIR=()
	while IFS=$'\t' read -r name port dir addr; do
		case $name in '' | '#'*) continue ;; esac
		FLEET_HOSTS+=("$name")
		_E2E_PORT[$name]=$port
		_E2E_HDIR[$name]=$dir
		: "$addr"
	done <"$FLEET_DIR/hosts.tsv"
	FLEET_OPS_USER='' FLEET_OPS_UID='' FLEET_OPS_HOME=''
	while IFS='=' read -r k v; do
		case $k in
		FLEET_PYVER) FLEET_PYVER=$v ;;
		FLEET_OPS_USER) FLEET_OPS_USER=$v ;;
		FLEET_OPS_UID) FLEET_OPS_UID=$v ;;
		FLEET_OPS_HOME) FLEET_OPS_HOME=$v ;;
		esac
	done <"$FLEET_DIR/fleet.env"
	FLEET_SITE=/usr/lib/python$FLEET_PYVER/sitecustomize.py
	FLEET_ETC_SITE=/etc/python$FLEET_PYVER/sitecustomize.py
	export FLEET_DIR FLEET_INVENTORY FLEET_SSH_CONFIG FLEET_KNOWN_HOSTS \
	    FLEET_KEY FLEET_PYVER FLEET_SITE FLEET_ETC_SITE FLEET_OPS_USER \
	    FLEET_OPS_UID FLEET_OPS_HOME
}

# fleet_stop: stop the fleet (any number of times; also runs on exit).
fleet_stop() {
	[ "$E2E_STARTED" = 1 ] || return 0
	[ -d "$FLEET_DIR" ] || return 0
	"$FLEET_CMD" stop "$FLEET_DIR" || fail "fleet stop failed"
}

# _e2e_host NAME: NAME is one of the fleet's hosts.
_e2e_host() {
	[ -n "${_E2E_HDIR[$1]:-}" ] && return 0
	fail "no such host in the fleet: '$1'"
	return 1
}

# host_dir NAME: the host's own tree on the real file system.
host_dir() {
	_e2e_host "$1" || return 1
	printf '%s\n' "${_E2E_HDIR[$1]}"
}

# host_port NAME: the host's sshd port on 127.0.0.1.
host_port() {
	_e2e_host "$1" || return 1
	printf '%s\n' "${_E2E_PORT[$1]}"
}

# host_file NAME: the real path of what the host sees as
# /etc/python3.X/sitecustomize.py (read or change it from outside).
host_file() {
	_e2e_host "$1" || return 1
	printf '%s/etc-python/sitecustomize.py\n' "${_E2E_HDIR[$1]}"
}

# host_become NAME: how the host's login user becomes root: nopasswd or
# password for a --become-host host, nothing for one logged into as root.
host_become() {
	local m=
	_e2e_host "$1" || return 1
	[ -f "${_E2E_HDIR[$1]}/become" ] && m=$(<"${_E2E_HDIR[$1]}/become")
	printf '%s\n' "$m"
}

# host_ops_home NAME: the real path of what a --become-host host sees as
# $FLEET_OPS_HOME (the login user's home).
host_ops_home() {
	_e2e_host "$1" || return 1
	printf '%s/home-ops\n' "${_E2E_HDIR[$1]}"
}

# host_ssh NAME CMD...: run CMD on the host with the OpenSSH client and the
# fleet's ssh_config (as root, or as $FLEET_OPS_USER on a --become-host
# host). The key exchange is curve25519 (what libssh uses too): the default
# sntrup761 costs ~0.1 s of CPU per login on each side.
host_ssh() {
	local name=$1
	shift
	_e2e_host "$name" || return 255
	ssh -F "$FLEET_SSH_CONFIG" -o KexAlgorithms=curve25519-sha256 "$name" "$@"
}

# host_ssh_as USER NAME CMD...: host_ssh as USER (root logins work on every
# host, --become-host ones too).
host_ssh_as() {
	local user=$1 name=$2
	shift 2
	_e2e_host "$name" || return 255
	ssh -F "$FLEET_SSH_CONFIG" -o KexAlgorithms=curve25519-sha256 \
	    -l "$user" "$name" "$@"
}

# sha256 FILE: the SHA-256 of FILE, hex; "missing" when it does not exist.
sha256() {
	local h
	if [ -e "$1" ]; then
		h=$(sha256sum <"$1") || return 1
		printf '%s\n' "${h%% *}"
	else
		printf 'missing\n'
	fi
}

# host_hash NAME: the SHA-256 of the host's sitecustomize.py.
host_hash() {
	local f
	f=$(host_file "$1") || return 1
	sha256 "$f"
}

# fleet_hashes: "NAME SHA256" for every host, in fleet order; compare two
# of these (before/after) or keep one with fleet_hashes >FILE.
fleet_hashes() {
	local name
	for name in "${FLEET_HOSTS[@]}"; do
		printf '%s %s\n' "$name" "$(host_hash "$name")"
	done
}

# fleet_changed FILE: the hosts whose hash differs from the fleet_hashes
# output saved in FILE, one per line.
fleet_changed() {
	local name old
	while read -r name old; do
		[ "$(host_hash "$name")" = "$old" ] || printf '%s\n' "$name"
	done <"$1"
}

# pid_alive PID: PID runs (zombies, which init may reap late, do not).
# ready_pipe NAME: a FIFO $E2E_TMP/NAME.out, opened here read-write on fd
# READY_FD, for a background helper's stdout.  await_ready FD FILE: the
# first line the helper prints (its "ready", or why it failed), read from
# FD within 20 s, is written to FILE; FD is closed.  A readiness signal,
# never a sleep.
ready_pipe() {
	mkfifo "$E2E_TMP/$1.out" || fatal "$1: cannot make a FIFO"
	# shellcheck disable=SC2034 # for the caller
	exec {READY_FD}<>"$E2E_TMP/$1.out"
}
await_ready() {
	local line='' fd=$1
	read -r -t 20 line <&"$fd" || line="(nothing within 20 s)"
	exec {fd}>&-
	printf '%s\n' "$line" >"$2"
}

pid_alive() {
	local st
	{ st=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# words TEXT: the lines of TEXT joined by single spaces.
words() {
	printf '%s\n' "$1" | paste -s -d ' ' -
}

# assert_eq ACTUAL EXPECTED WHAT: fail unless equal.
assert_eq() {
	[ "$1" = "$2" ] && return 0
	fail "$3: expected '$2', got '$1'"
	return 1
}

# assert_contains TEXT NEEDLE WHAT: fail unless TEXT contains NEEDLE.
assert_contains() {
	case $1 in *"$2"*) return 0 ;; esac
	fail "$3: '$2' not in: $1"
	return 1
}
