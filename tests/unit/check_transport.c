/*
 * check_transport.c - controller/ssh/ (transport.h) against real sshd hosts.
 *
 * Every test gets a fresh fleet of NHOSTS hosts from tests/e2e/fleet
 * (checked fixture: started before, stopped after the test).  The
 * unchecked fixture, which runs in the parent whatever the test did,
 * stops it again and removes everything: a failed test exits without its
 * checked teardown.  Processes a test stops with SIGSTOP are listed in a
 * file, so that both teardowns continue them before stopping the fleet.
 * Needs root (mount namespaces); otherwise the tests are skipped, except
 * under CI=true, where they fail.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/transport.h"
#include "testutil.h"

#define NHOSTS		3
#define MIB		(1024 * 1024)

struct thost {
	char	*name;
	int	 port;
	char	*dir;
	int	 pid;		/* the listening sshd */
	char	*key;		/* base64 of its ed25519 host key */
};

/* Set in the parent by the unchecked fixture. */
static char *base;		/* private temp dir */
static char *fleetdir;		/* base/fleet */
static char *stopped_file;	/* base/stopped: PIDs a test SIGSTOPped */
static char *agents_file;	/* base/agents: ssh-agents a test started */
static const char *skip_reason;	/* why the fleet cannot run here */

/* Set in each test's process by the checked fixture. */
static struct thost hosts[NHOSTS];
static char *client_key;	/* fleet/id_ed25519 */
static char *fleet_kh;		/* fleet/known_hosts */
static char *fleet_cfg;		/* fleet/ssh_config */
static char *empty_cfg;		/* base/empty_config */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static bool
contains(const char *hay, const char *needle)
{
	return hay != NULL && strstr(hay, needle) != NULL;
}

#define ck_assert_contains(hay, needle) \
	ck_assert_msg(contains((hay), (needle)), \
	    "'%s' not in: %s", (needle), (hay) != NULL ? (hay) : "(null)")

/* ------------------------------------------------------------ fixtures */

static void
run_fleet(const char *verb, bool must)
{
	char *script = tu_srcpath("tests/e2e/fleet");
	char *argv[] = { script, (char *)verb, fleetdir, "3", "--base-port",
	    "auto", NULL };
	struct tu_run r;

	if (strcmp(verb, "stop") == 0)
		argv[3] = NULL;
	tu_run(&r, argv, NULL, NULL, 0);
	if (must && r.status != 0)
		ck_abort_msg("fleet %s failed (%d): %s%s", verb, r.status,
		    r.out, r.errout);
	tu_run_free(&r);
	free(script);
}

/* Sends sig to every pid recorded in file, then forgets them. */
static void
signal_recorded(const char *file, int sig)
{
	FILE *f;
	int pid;

	if (file == NULL || (f = fopen(file, "r")) == NULL)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 1)
			kill(pid, sig);
	fclose(f);
	unlink(file);
}

/* Continues every process a test stopped (still stopped or not). */
static void
cont_stopped(void)
{
	signal_recorded(stopped_file, SIGCONT);
}

/* Ends the ssh-agents tests started. */
static void
kill_agents(void)
{
	signal_recorded(agents_file, SIGTERM);
}

/* Stops pid with SIGSTOP, remembering it for the teardowns. */
static void
stop_pid(int pid)
{
	FILE *f = fopen(stopped_file, "a");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d\n", pid);
	fclose(f);
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
}

static void
fleet_setup_once(void)
{
	struct tu_run r;
	char *argv[] = { "unshare", "-m", "--propagation", "private", "true",
	    NULL };

	base = tu_mkdtemp();
	fleetdir = xasprintf("%s/fleet", base);
	stopped_file = xasprintf("%s/stopped", base);
	agents_file = xasprintf("%s/agents", base);
	if (geteuid() != 0) {
		skip_reason = "needs root (mount namespaces, sshd)";
		return;
	}
	if (access("/usr/sbin/sshd", X_OK) != 0) {
		skip_reason = "missing /usr/sbin/sshd";
		return;
	}
	tu_run(&r, argv, NULL, NULL, 0);
	if (r.status != 0)
		skip_reason = "cannot create a mount namespace (unshare -m)";
	tu_run_free(&r);
}

static void
fleet_teardown_once(void)
{
	cont_stopped();
	kill_agents();
	if (skip_reason == NULL)
		run_fleet("stop", false);
	tu_rmtree(base);
	free(base);
	free(fleetdir);
	free(stopped_file);
	free(agents_file);
}

static void
read_hosts(void)
{
	char *p = xasprintf("%s/hosts.tsv", fleetdir), line[2048];
	char name[64], dir[1024], key[512], *line2;
	FILE *f = fopen(p, "r");
	int i = 0, port, pid;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#')
			continue;
		ck_assert_int_eq(sscanf(line, "%63s %d %1023s", name, &port,
		    dir), 3);
		ck_assert_int_lt(i, NHOSTS);
		hosts[i].name = xstrdup(name);
		hosts[i].dir = xstrdup(dir);
		hosts[i].port = port;
		i++;
	}
	fclose(f);
	free(p);
	ck_assert_int_eq(i, NHOSTS);
	p = xasprintf("%s/pids", fleetdir);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	while (fscanf(f, "%63s %d", name, &pid) == 2)
		for (i = 0; i < NHOSTS; i++)
			if (strcmp(hosts[i].name, name) == 0)
				hosts[i].pid = pid;
	fclose(f);
	free(p);
	for (i = 0; i < NHOSTS; i++) {
		ck_assert_int_gt(hosts[i].pid, 1);
		p = xasprintf("%s/ssh_host_ed25519_key.pub", hosts[i].dir);
		ck_assert_ptr_nonnull(f = fopen(p, "r"));
		ck_assert_int_eq(fscanf(f, "%*s %511s", key), 1);
		hosts[i].key = xstrdup(key);
		fclose(f);
		free(p);
		/* What "cat .envctl-name" prints on that host. */
		p = xasprintf("%s/root", hosts[i].dir);
		line2 = xasprintf("%s\n", hosts[i].name);
		free(tu_writes(p, ".envctl-name", line2));
		free(line2);
		free(p);
	}
}

static void
fleet_setup(void)
{
	if (skip_reason != NULL)
		return;
	unsetenv("SSH_AUTH_SOCK");	/* hermetic: the fleet key only */
	/* Whatever a failed test left behind. */
	cont_stopped();
	run_fleet("stop", false);
	tu_rmtree(fleetdir);
	run_fleet("start", true);
	read_hosts();
	client_key = xasprintf("%s/id_ed25519", fleetdir);
	fleet_kh = xasprintf("%s/known_hosts", fleetdir);
	fleet_cfg = xasprintf("%s/ssh_config", fleetdir);
	empty_cfg = tu_writes(base, "empty_config", "");
}

static void
fleet_teardown(void)
{
	if (skip_reason != NULL)
		return;
	cont_stopped();
	kill_agents();
	run_fleet("stop", false);
	for (int i = 0; i < NHOSTS; i++) {
		free(hosts[i].name);
		free(hosts[i].dir);
		free(hosts[i].key);
	}
	memset(hosts, 0, sizeof(hosts));
	free(client_key);
	free(fleet_kh);
	free(fleet_cfg);
	free(empty_cfg);
}

#define REQUIRE_FLEET() do {						\
	if (skip_reason != NULL) {					\
		tu_skip(__func__, skip_reason);				\
		return;							\
	}								\
} while (0)

/* ------------------------------------------------------------- helpers */

/* Parameters that reach host i without any ssh_config. */
static void
params_for(struct conn_params *p, int i)
{
	memset(p, 0, sizeof(*p));
	p->host = hosts[i].name;
	p->address = "127.0.0.1";
	p->port = hosts[i].port;
	p->user = "root";
	p->identity = client_key;
	p->ssh_config = empty_cfg;
	p->known_hosts = fleet_kh;
	p->timeout = 10;
}

static char *
err_text(const struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;

	err_format(err, &b);
	return buf_detach(&b, NULL);
}

/*
 * Runs cmd with input in on c: out gets stdout, *status the exit status.
 * Without input, stdout is read before the exit; with input, after it.
 */
static int
run_cmd(struct host_conn *c, const char *cmd, const void *in, size_t inlen,
    struct buf *out, int *status, struct err *err)
{
	size_t before;
	int rc;

	if ((rc = conn_exec(c, cmd, err)) != 0)
		return rc;
	/* With input: close stdin, wait for the exit, then read. */
	if (inlen > 0 && ((rc = conn_send(c, in, inlen, err)) != 0 ||
	    (rc = conn_exit(c, status, err)) != 0))
		return rc;
	for (;;) {
		before = out->len;
		if ((rc = conn_recv(c, out, err)) != 0)
			return rc;
		if (out->len == before)
			break;
	}
	return inlen > 0 ? 0 : conn_exit(c, status, err);
}

/* Runs cmd on c, expecting success; returns stdout (caller frees). */
static char *
must_run(struct host_conn *c, const char *cmd)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	char *msg;
	int status = -1;

	if (run_cmd(c, cmd, NULL, 0, &out, &status, &err) != 0) {
		msg = err_text(&err);
		ck_abort_msg("'%s': %s", cmd, msg);
	}
	ck_assert_msg(status == 0, "'%s' exited %d: %s", cmd, status,
	    conn_stderr(c)->data);
	return buf_detach(&out, NULL);
}

static struct host_conn *
must_open(const struct conn_params *p)
{
	struct err err = ENVCTL_ERR_INIT;
	struct host_conn *c = NULL;
	char *msg;

	if (conn_open(&c, p, &err) != 0) {
		msg = err_text(&err);
		ck_abort_msg("conn_open %s: %s", p->host, msg);
	}
	ck_assert_ptr_nonnull(c);
	return c;
}

static void
random_bytes(char *p, size_t n, unsigned seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (char)(x >> 24);
	}
	if (n > 10)
		memset(p + n / 2, 0, 10);	/* NULs in the middle */
}

static char *
file_text(const char *path)
{
	char *s = tu_read(path, NULL);

	ck_assert_msg(s != NULL, "cannot read %s", path);
	return s;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		if (*s == '\n')
			n++;
	return n;
}

/* The PIDs of every descendant of pid, from /proc. */
static int
descendants(int pid, int *out, int max)
{
	int n = 0, found, i, p, pp, nadded;
	DIR *d;
	struct dirent *de;
	char path[64], buf[512], *rp;
	FILE *f;

	out[n++] = pid;
	do {
		nadded = 0;
		ck_assert_ptr_nonnull(d = opendir("/proc"));
		while ((de = readdir(d)) != NULL) {
			p = (int)strtol(de->d_name, &rp, 10);
			if (p <= 0 || *rp != '\0')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/stat", p);
			if ((f = fopen(path, "r")) == NULL)
				continue;
			buf[0] = '\0';
			if (fgets(buf, sizeof(buf), f) == NULL)
				buf[0] = '\0';
			fclose(f);
			if ((rp = strrchr(buf, ')')) == NULL ||
			    sscanf(rp + 2, "%*c %d", &pp) != 1)
				continue;
			for (found = 0, i = 0; i < n; i++)
				if (out[i] == p)
					found = 1;
			if (found)
				continue;
			for (i = 0; i < n; i++)
				if (out[i] == pp && n < max) {
					out[n++] = p;
					nadded++;
					break;
				}
		}
		closedir(d);
	} while (nadded > 0);
	/* Drop pid itself: only its children and theirs. */
	memmove(out, out + 1, (size_t)(n - 1) * sizeof(*out));
	return n - 1;
}

/* SIGSTOPs every process below host i's listening sshd: its sessions. */
static int
stop_sessions(int i)
{
	int pids[256], n, k;

	n = descendants(hosts[i].pid, pids, 256);
	for (k = 0; k < n; k++)
		stop_pid(pids[k]);
	return n;
}

/* ------------------------------------------------------------ 1. basics */

START_TEST(test_exec_basic)
{
	struct conn_params p;
	struct host_conn *c;
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	double t0, t1, t2;
	int status = -1;

	REQUIRE_FLEET();
	params_for(&p, 0);
	t0 = now_s();
	c = must_open(&p);
	t1 = now_s();
	ck_assert_int_eq(run_cmd(c, "echo out; echo err >&2; exit 3", NULL, 0,
	    &out, &status, &err), 0);
	t2 = now_s();
	ck_assert_str_eq(out.data, "out\n");
	ck_assert_str_eq(conn_stderr(c)->data, "err\n");
	ck_assert_int_eq(status, 3);
	ck_assert_int_eq(conn_stats(c)->channels, 1);
	fprintf(stderr, "check_transport: connect+auth %.1f ms, "
	    "exec+exit %.1f ms\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
	/* The right host: each has its own /root. */
	buf_reset(&out);
	ck_assert_int_eq(run_cmd(c, "cat .envctl-name; pwd", NULL, 0, &out,
	    &status, &err), 0);
	ck_assert_str_eq(out.data, "gpu-01\n/root\n");
	ck_assert_int_eq(status, 0);
	ck_assert_str_eq(conn_stderr(c)->data, "");
	ck_assert_int_eq(conn_stats(c)->channels, 2);
	/* Verbs out of order are errors, not crashes. */
	ck_assert_int_eq(conn_send(c, "x", 1, &err), ENVCTL_EINVALID);
	ck_assert_contains(err.msg, "no command is running");
	ck_assert_str_eq(err.host, "gpu-01");
	err_release(&err);
	buf_release(&out);
	conn_close(c);
	conn_close(NULL);
}
END_TEST

/* --------------------------------------------------------- 2. round trip */

START_TEST(test_round_trip)
{
	struct conn_params p;
	struct host_conn *c;
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	char *data = xmalloc(MIB);
	double t0;
	int status = -1;

	REQUIRE_FLEET();
	random_bytes(data, MIB, 1);
	params_for(&p, 1);
	c = must_open(&p);
	t0 = now_s();
	ck_assert_int_eq(conn_exec(c, "cat", &err), 0);
	ck_assert_int_eq(conn_send(c, data, MIB, &err), 0);
	while (out.len < MIB)
		ck_assert_int_eq(conn_recv(c, &out, &err), 0);
	ck_assert_int_eq(conn_exit(c, &status, &err), 0);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(out.len, MIB);
	ck_assert(memcmp(out.data, data, MIB) == 0);
	ck_assert_int_eq(conn_stats(c)->channels, 1);
	/* The exec's answer, then the data's. */
	ck_assert_int_eq(conn_stats(c)->round_trips, 2);
	fprintf(stderr, "check_transport: 1 MiB through cat in %.1f ms\n",
	    (now_s() - t0) * 1e3);

	/* Small exchanges on one channel: one round trip each. */
	buf_reset(&out);
	t0 = now_s();
	ck_assert_int_eq(conn_exec(c, "cat", &err), 0);
	for (int i = 0; i < 10; i++) {
		size_t want = out.len + 5;

		ck_assert_int_eq(conn_send(c, "ping\n", 5, &err), 0);
		while (out.len < want)
			ck_assert_int_eq(conn_recv(c, &out, &err), 0);
	}
	fprintf(stderr, "check_transport: 10 round trips in %.1f ms\n",
	    (now_s() - t0) * 1e3);
	ck_assert_int_eq(conn_exit(c, &status, &err), 0);
	ck_assert_uint_eq(out.len, 50);
	ck_assert_int_eq(conn_stats(c)->channels, 2);
	ck_assert_int_eq(conn_stats(c)->round_trips, 13);
	/* After the end, recv has nothing more. */
	ck_assert_int_eq(conn_recv(c, &out, &err), 0);
	ck_assert_uint_eq(out.len, 50);

	/* A capped buffer: ETOOBIG, with the command named. */
	buf_release(&out);
	buf_init(&out, 1000);
	ck_assert_int_eq(conn_exec(c, "head -c 100000 /dev/zero", &err), 0);
	while (conn_recv(c, &out, &err) == 0)
		;
	ck_assert_int_eq(err.code, ENVCTL_ETOOBIG);
	ck_assert_contains(err.msg, "head -c 100000");
	ck_assert_str_eq(err.host, "gpu-02");
	err_release(&err);
	buf_release(&out);
	free(data);
	conn_close(c);
}
END_TEST

/* --------------------------------------------------------- 3. ssh_config */

START_TEST(test_ssh_config)
{
	struct conn_params p;
	struct host_conn *c;
	struct err err = ENVCTL_ERR_INIT;
	char *s, *cfg, *empty_kh, *hashed, *text, *msg;
	struct tu_run r;

	REQUIRE_FLEET();
	/* Host name only: HostName, Port, User, IdentityFile and
	 * UserKnownHostsFile all come from the fleet's ssh_config. */
	memset(&p, 0, sizeof(p));
	p.host = "gpu-02";
	p.ssh_config = fleet_cfg;
	p.timeout = 10;
	c = must_open(&p);
	s = must_run(c, "cat .envctl-name; id -un");
	ck_assert_str_eq(s, "gpu-02\nroot\n");
	free(s);
	conn_close(c);

	/* Our known_hosts wins over UserKnownHostsFile. */
	empty_kh = tu_writes(base, "empty_kh", "");
	p.known_hosts = empty_kh;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EHOSTKEY);
	ck_assert_ptr_null(c);
	ck_assert_contains(err.msg, empty_kh);
	ck_assert_contains(err.msg, "unknown host key");
	err_release(&err);

	/* With an address, "Host gpu-03" still matches the inventory name:
	 * the port and key come from its block. */
	memset(&p, 0, sizeof(p));
	p.host = "gpu-03";
	p.address = "127.0.0.1";
	p.ssh_config = fleet_cfg;
	p.timeout = 10;
	c = must_open(&p);
	s = must_run(c, "cat .envctl-name");
	ck_assert_str_eq(s, "gpu-03\n");
	free(s);
	conn_close(c);

	/* User from the config, and the inventory's user winning over it. */
	cfg = xasprintf("Host alias\n\tHostName 127.0.0.1\n\tPort %d\n"
	    "\tUser nosuchuser\n\tIdentityFile %s\n"
	    "\tUserKnownHostsFile %s\n", hosts[0].port, client_key, fleet_kh);
	free(tu_writes(base, "user_config", cfg));
	free(cfg);
	cfg = xasprintf("%s/user_config", base);
	memset(&p, 0, sizeof(p));
	p.host = "alias";
	p.ssh_config = cfg;
	p.timeout = 10;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EAUTH);
	ck_assert_contains(err.msg, "'nosuchuser'");
	err_release(&err);
	p.user = "root";
	c = must_open(&p);
	s = must_run(c, "cat .envctl-name");
	ck_assert_str_eq(s, "gpu-01\n");
	free(s);
	conn_close(c);

	/* ProxyCommand (a relay through bash's /dev/tcp), %h and %p. */
	free(cfg);
	cfg = xasprintf("Host relayed\n\tHostName 127.0.0.1\n\tPort %d\n"
	    "\tUser root\n\tIdentityFile %s\n\tUserKnownHostsFile %s\n"
	    "\tProxyCommand bash -c 'exec 3<>/dev/tcp/%%h/%%p; "
	    "cat <&3 & exec cat >&3'\n", hosts[1].port, client_key, fleet_kh);
	free(tu_writes(base, "proxy_config", cfg));
	free(cfg);
	cfg = xasprintf("%s/proxy_config", base);
	memset(&p, 0, sizeof(p));
	p.host = "relayed";
	p.ssh_config = cfg;
	p.timeout = 10;
	c = must_open(&p);
	s = must_run(c, "cat .envctl-name");
	ck_assert_str_eq(s, "gpu-02\n");
	free(s);
	conn_close(c);

	/* The command line's proxy wins over the config's; "none" drops it. */
	free(cfg);
	cfg = xasprintf("Host relayed\n\tHostName 127.0.0.1\n\tPort %d\n"
	    "\tUser root\n\tIdentityFile %s\n\tUserKnownHostsFile %s\n"
	    "\tProxyJump nosuchjump.invalid\n", hosts[2].port, client_key,
	    fleet_kh);
	free(tu_writes(base, "badjump_config", cfg));
	free(cfg);
	cfg = xasprintf("%s/badjump_config", base);
	p.ssh_config = cfg;
	p.proxy_command = "bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & "
	    "exec cat >&3'";
	c = must_open(&p);
	s = must_run(c, "cat .envctl-name");
	ck_assert_str_eq(s, "gpu-03\n");
	free(s);
	conn_close(c);
	p.proxy_command = "none";
	c = must_open(&p);
	conn_close(c);
	p.proxy_command = NULL;
	p.proxy_jump = "a,b:port";
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EINVALID);
	ck_assert_contains(err.msg, "ProxyJump: 'b:port' is not "
	    "[user@]host[:port]");
	ck_assert_str_eq(err.host, "relayed");
	err_release(&err);

	/* Hashed known_hosts entries (HashKnownHosts) are understood. */
	hashed = xasprintf("%s/hashed_kh", base);
	text = file_text(fleet_kh);
	free(tu_writes(NULL, hashed, text));
	free(text);
	{
		char *argv[] = { "ssh-keygen", "-q", "-H", "-f", hashed, NULL };

		tu_run(&r, argv, NULL, NULL, 0);
		ck_assert_msg(r.status == 0, "ssh-keygen -H: %s", r.errout);
		tu_run_free(&r);
	}
	text = file_text(hashed);
	ck_assert_contains(text, "|1|");
	ck_assert(!contains(text, "127.0.0.1"));
	free(text);
	params_for(&p, 2);
	p.known_hosts = hashed;
	c = must_open(&p);
	conn_close(c);

	/* A name libssh refuses ("gpu_01"): fine with an address (the
	 * config then matches the address), an error without one. */
	params_for(&p, 0);
	p.host = "gpu_01";
	c = must_open(&p);
	conn_close(c);
	p.address = NULL;
	p.ssh_config = fleet_cfg;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EINVALID);
	ck_assert_contains(err.msg, "'gpu_01' is not a valid host name");
	ck_assert_str_eq(err.host, "gpu_01");
	err_release(&err);

	/* A missing -F file, a missing identity. */
	params_for(&p, 0);
	p.ssh_config = "/nonexistent/ssh_config";
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_ENOTFOUND);
	msg = err_text(&err);
	ck_assert_contains(msg, "gpu-01: ");
	ck_assert_contains(msg, "/nonexistent/ssh_config");
	free(msg);
	err_release(&err);
	params_for(&p, 0);
	p.identity = "/nonexistent/id_ed25519";
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_ENOTFOUND);
	ck_assert_contains(err.msg, "/nonexistent/id_ed25519");
	err_release(&err);

	free(hashed);
	free(cfg);
	free(empty_kh);
}
END_TEST

/* ---------------------------------------------------- 4. changed host key */

/* The bytes host i's sshd.log got since offset, once the connection that
 * began after it has been closed (or 3 s passed). */
static char *
log_since(int i, size_t offset)
{
	char *path = xasprintf("%s/sshd.log", hosts[i].dir), *s = NULL;
	size_t len = 0;
	double end = now_s() + 3;

	for (;;) {
		free(s);
		s = tu_read(path, &len);
		ck_assert_ptr_nonnull(s);
		if (len > offset &&
		    (contains(s + offset, "Connection closed") ||
		    contains(s + offset, "Disconnected") ||
		    contains(s + offset, "preauth")))
			break;
		if (now_s() > end)
			break;
		usleep(20000);	/* re-reading for the line sshd logs */
	}
	free(path);
	memmove(s, s + offset, len - offset + 1);
	return s;
}

static size_t
log_size(int i)
{
	char *path = xasprintf("%s/sshd.log", hosts[i].dir);
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	free(path);
	return (size_t)st.st_size;
}

/* A fresh public key of type, base64 only. */
static char *
other_key(const char *name, const char *type)
{
	char *path = xasprintf("%s/%s", base, name), *pub, *text, key[512];
	char *argv[] = { "ssh-keygen", "-q", "-t", (char *)type, "-N", "",
	    "-f", path, NULL };
	struct tu_run r;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 0, "ssh-keygen: %s", r.errout);
	tu_run_free(&r);
	pub = xasprintf("%s.pub", path);
	text = file_text(pub);
	ck_assert_int_eq(sscanf(text, "%*s %511s", key), 1);
	free(text);
	free(pub);
	free(path);
	return xstrdup(key);
}

/* OpenSSH's fingerprint of host i's key. */
static char *
host_fingerprint(int i)
{
	char *pub = xasprintf("%s/ssh_host_ed25519_key.pub", hosts[i].dir);
	char *argv[] = { "ssh-keygen", "-l", "-f", pub, NULL }, fp[128];
	struct tu_run r;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(sscanf(r.out, "%*d %127s", fp), 1);
	tu_run_free(&r);
	free(pub);
	return xstrdup(fp);
}

START_TEST(test_changed_hostkey)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	char *key = other_key("other", "ed25519"), *line, *kh, *logtext;
	char *fp, *msg;
	char *want, *before;
	size_t off;

	REQUIRE_FLEET();
	line = xasprintf("# a comment\n[127.0.0.1]:%d ssh-ed25519 %s\n",
	    hosts[0].port, key);
	kh = tu_writes(base, "changed_kh", line);
	params_for(&p, 0);
	p.known_hosts = kh;
	off = log_size(0);
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EHOSTKEY);
	ck_assert_ptr_null(c);
	msg = err_text(&err);
	fp = host_fingerprint(0);
	ck_assert_contains(msg, "gpu-01: ");
	ck_assert_contains(msg, "has changed");
	ck_assert_contains(msg, "ssh-ed25519");
	ck_assert_contains(msg, fp);
	ck_assert_contains(msg, "SHA256:");
	want = xasprintf("%s:2", kh);
	ck_assert_contains(msg, want);
	free(want);
	want = xasprintf("ssh-keygen -f %s -R '[127.0.0.1]:%d'", kh,
	    hosts[0].port);
	ck_assert_contains(msg, want);
	free(want);
	free(msg);
	err_release(&err);

	/* Rejected before authentication: sshd saw no attempt at all. */
	logtext = log_since(0, off);
	ck_assert_contains(logtext, "Connection from 127.0.0.1");
	ck_assert_msg(!contains(logtext, "Accepted") &&
	    !contains(logtext, "Failed") && !contains(logtext, "Postponed"),
	    "authentication was attempted: %s", logtext);
	free(logtext);

	/* Under accept_new too, and the file stays as it was. */
	p.accept_new = 1;
	before = file_text(kh);
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EHOSTKEY);
	ck_assert_contains(err.msg, "has changed");
	msg = file_text(kh);
	ck_assert_str_eq(msg, before);
	free(msg);
	free(before);
	err_release(&err);

	/* A key of another type only: changed too. */
	free(line);
	free(key);
	key = other_key("ecdsa", "ecdsa");
	line = xasprintf("[127.0.0.1]:%d ecdsa-sha2-nistp256 %s\n",
	    hosts[0].port, key);
	free(tu_writes(NULL, kh, line));
	p.accept_new = 0;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EHOSTKEY);
	ck_assert_contains(err.msg, "another type");
	ck_assert_contains(err.msg, "ssh-keygen");
	err_release(&err);

	free(fp);
	free(line);
	free(kh);
	free(key);
}
END_TEST

/* ------------------------------------------------- 5. unknown, accept-new */

struct accept_job {
	int		 host;
	const char	*kh;
	int		 rc;
	char		*msg;
};

static void *
accept_thread(void *arg)
{
	struct accept_job *j = arg;
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;

	params_for(&p, j->host);
	p.known_hosts = j->kh;
	p.accept_new = 1;
	j->rc = conn_open(&c, &p, &err);
	if (j->rc != 0)
		j->msg = err_text(&err);
	err_release(&err);
	conn_close(c);
	return NULL;
}

START_TEST(test_unknown_hostkey)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct accept_job jobs[20];
	pthread_t th[20];
	char *kh, *text, *want, *fp, *broken;
	int i;

	REQUIRE_FLEET();
	/* Strict: unknown host refused, with the way to accept it. */
	kh = xasprintf("%s/new_kh", base);
	params_for(&p, 1);
	p.known_hosts = kh;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EHOSTKEY);
	fp = host_fingerprint(1);
	ck_assert_contains(err.msg, "unknown host key");
	ck_assert_contains(err.msg, fp);
	ck_assert_contains(err.msg, "ssh-ed25519");
	ck_assert_contains(err.msg, "--accept-new-host-keys");
	ck_assert_contains(err.msg, "ssh-keyscan");
	ck_assert_contains(err.msg, kh);
	ck_assert_str_eq(err.host, "gpu-02");
	ck_assert(access(kh, F_OK) != 0);	/* nothing written */
	err_release(&err);

	/* accept_new: one line, [host]:port, as OpenSSH writes it. */
	p.accept_new = 1;
	c = must_open(&p);
	conn_close(c);
	text = file_text(kh);
	want = xasprintf("[127.0.0.1]:%d ssh-ed25519 %s\n", hosts[1].port,
	    hosts[1].key);
	ck_assert_str_eq(text, want);
	free(text);
	c = must_open(&p);
	conn_close(c);
	text = file_text(kh);
	ck_assert_str_eq(text, want);	/* not twice */
	free(text);
	free(want);

	/* A file without a final newline gets one before our line. */
	free(tu_writes(NULL, kh, "# no newline"));
	c = must_open(&p);
	conn_close(c);
	text = file_text(kh);
	want = xasprintf("# no newline\n[127.0.0.1]:%d ssh-ed25519 %s\n",
	    hosts[1].port, hosts[1].key);
	ck_assert_str_eq(text, want);
	free(text);
	free(want);

	/* A broken line for the host: an error, never another line. */
	broken = xasprintf("[127.0.0.1]:%d ssh-ed25519 AAAAnotbase64!!\n",
	    hosts[1].port);
	free(tu_writes(NULL, kh, broken));
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EHOSTKEY);
		ck_assert_contains(err.msg, "cannot be read");
		ck_assert_contains(err.msg, "ssh-keygen");
		ck_assert_int_eq(err.line, 1);
		ck_assert_str_eq(err.path, kh);
		err_release(&err);
		text = file_text(kh);
		ck_assert_str_eq(text, broken);
		free(text);
	}
	free(broken);

	/* A missing directory is made, as OpenSSH makes ~/.ssh. */
	free(kh);
	kh = xasprintf("%s/newdir/known_hosts", base);
	c = NULL;
	p.known_hosts = kh;
	c = must_open(&p);
	conn_close(c);
	{
		struct stat st;
		char *d = xasprintf("%s/newdir", base);

		ck_assert_int_eq(stat(d, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0700);
		free(d);
	}
	text = file_text(kh);
	ck_assert_int_eq(count_lines(text), 1);
	free(text);

	/* 20 threads, 3 new hosts, one file: exactly 3 lines. */
	unlink(kh);
	for (i = 0; i < 20; i++) {
		jobs[i].host = i % NHOSTS;
		jobs[i].kh = kh;
		jobs[i].rc = -1;
		jobs[i].msg = NULL;
		ck_assert_int_eq(pthread_create(&th[i], NULL, accept_thread,
		    &jobs[i]), 0);
	}
	for (i = 0; i < 20; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 20; i++) {
		ck_assert_msg(jobs[i].rc == 0, "thread %d: %s", i,
		    jobs[i].msg);
		free(jobs[i].msg);
	}
	text = file_text(kh);
	ck_assert_int_eq(count_lines(text), 3);
	for (i = 0; i < NHOSTS; i++) {
		want = xasprintf("[127.0.0.1]:%d ssh-ed25519 %s\n",
		    hosts[i].port, hosts[i].key);
		ck_assert_contains(text, want);
		free(want);
	}
	free(text);
	free(fp);
	free(kh);
}
END_TEST

/* ------------------------------------------------------------- 6. stalls */

START_TEST(test_stall_connect)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	double t0, dt;
	char *want;

	REQUIRE_FLEET();
	stop_pid(hosts[2].pid);
	params_for(&p, 2);
	p.timeout = 2;
	t0 = now_s();
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_ETIMEOUT);
	dt = now_s() - t0;
	ck_assert_msg(dt < 4.0, "took %.2f s", dt);
	ck_assert_msg(dt > 1.5, "took %.2f s", dt);
	want = xasprintf("timed out after 2 s while connecting to "
	    "127.0.0.1:%d", hosts[2].port);
	ck_assert_contains(err.msg, want);
	ck_assert_str_eq(err.host, "gpu-03");
	free(want);
	err_release(&err);
	cont_stopped();
}
END_TEST

START_TEST(test_stall_recv)
{
	struct conn_params p;
	struct host_conn *c;
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	double t0, dt;
	int status;

	REQUIRE_FLEET();
	params_for(&p, 0);
	p.timeout = 2;
	c = must_open(&p);
	ck_assert_int_eq(conn_exec(c, "cat", &err), 0);
	ck_assert_int_gt(stop_sessions(0), 0);
	t0 = now_s();
	ck_assert_int_eq(conn_send(c, "hello\n", 6, &err), 0);
	ck_assert_int_eq(conn_recv(c, &out, &err), ENVCTL_ETIMEOUT);
	dt = now_s() - t0;
	ck_assert_msg(dt < 3.0 && dt > 1.5, "took %.2f s", dt);
	ck_assert_contains(err.msg, "timed out after 2 s while waiting for "
	    "output of 'cat'");
	ck_assert_str_eq(err.host, "gpu-01");
	err_release(&err);
	/* The connection is unusable now, and says why. */
	ck_assert_int_eq(conn_exit(c, &status, &err), ENVCTL_ETIMEOUT);
	ck_assert_contains(err.msg, "earlier timeout");
	err_release(&err);
	t0 = now_s();
	conn_close(c);
	ck_assert_msg(now_s() - t0 < 1.0, "close took %.2f s", now_s() - t0);
	buf_release(&out);
}
END_TEST

START_TEST(test_stall_exit)
{
	struct conn_params p;
	struct host_conn *c;
	struct err err = ENVCTL_ERR_INIT;
	double t0, dt;
	int status;

	REQUIRE_FLEET();
	/* A command that ignores EOF on stdin never exits: bounded. */
	params_for(&p, 1);
	p.timeout = 2;
	c = must_open(&p);
	ck_assert_int_eq(conn_exec(c, "sleep 60", &err), 0);
	t0 = now_s();
	ck_assert_int_eq(conn_exit(c, &status, &err), ENVCTL_ETIMEOUT);
	dt = now_s() - t0;
	ck_assert_msg(dt < 3.5 && dt > 1.5, "took %.2f s", dt);
	ck_assert_contains(err.msg, "while waiting for 'sleep 60' to exit");
	err_release(&err);
	conn_close(c);

	/* The limit for the whole host cuts a step that has time left. */
	p.timeout = 10;
	p.host_timeout = 1;
	t0 = now_s();
	c = must_open(&p);
	ck_assert_int_eq(conn_exec(c, "sleep 60", &err), 0);
	ck_assert_int_eq(conn_exit(c, &status, &err), ENVCTL_ETIMEOUT);
	dt = now_s() - t0;
	ck_assert_msg(dt < 2.5 && dt > 0.9, "took %.2f s", dt);
	ck_assert_contains(err.msg, "did not finish in 1 s (deadline for the "
	    "whole host): timed out while waiting for 'sleep 60' to exit");
	err_release(&err);
	conn_close(c);
}
END_TEST

/* ----------------------------------------------------- 7. refused, 8. key */

START_TEST(test_refused)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	double t0, dt;
	char *want;

	REQUIRE_FLEET();
	params_for(&p, 0);
	/* Stop the fleet's third host: its port is then free. */
	p.port = hosts[2].port;
	kill(hosts[2].pid, SIGTERM);
	ck_assert_int_eq(tu_wait_gone(hosts[2].pid, 2000), 0);
	t0 = now_s();
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_ECONNECT);
	dt = now_s() - t0;
	ck_assert_msg(dt < 1.0, "took %.2f s", dt);
	want = xasprintf("cannot connect to 127.0.0.1:%d", hosts[2].port);
	ck_assert_contains(err.msg, want);
	ck_assert_contains(err.msg, "refused");
	ck_assert_str_eq(err.host, "gpu-01");
	free(want);
	err_release(&err);
}
END_TEST

START_TEST(test_wrong_key)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	char *path = xasprintf("%s/wrongkey", base), *msg;
	char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
	    path, NULL };
	char *argv2[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "secret",
	    "-f", NULL, NULL };
	struct tu_run r;

	REQUIRE_FLEET();
	/* No terminal to prompt on, nothing to read: a prompt would fail
	 * the test rather than hang it. */
	setsid();
	ck_assert_ptr_nonnull(freopen("/dev/null", "r", stdin));
	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	params_for(&p, 0);
	p.identity = path;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EAUTH);
	msg = err_text(&err);
	ck_assert_contains(msg, "gpu-01: permission denied for 'root'");
	ck_assert_contains(msg, path);
	ck_assert_contains(msg, "publickey");
	free(msg);
	err_release(&err);

	/* An encrypted key: skipped, never a passphrase prompt. */
	free(path);
	path = xasprintf("%s/encrypted", base);
	argv2[7] = path;
	tu_run(&r, argv2, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	/* Without its .pub, libssh must open the private key itself. */
	msg = xasprintf("%s.pub", path);
	unlink(msg);
	free(msg);
	p.identity = path;
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_EAUTH);
	ck_assert_contains(err.msg, "permission denied");
	err_release(&err);
	free(path);
}
END_TEST

/*
 * An ssh-agent holding more keys than sshd's MaxAuthTries (6), none of
 * them authorized: the inventory's key is offered first, so it still works.
 */
START_TEST(test_agent_many_keys)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	char *sock = xasprintf("%s/agent.sock", base), *keys[9], *env[3];
	char *add_argv[12];
	struct tu_run r;
	double t0, t1;
	FILE *f;
	int i, fd;
	pid_t pid;

	REQUIRE_FLEET();
	/* In the foreground (-D): a daemon would keep tu_run's pipes. */
	if ((pid = fork()) == 0) {
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("ssh-agent", "ssh-agent", "-D", "-a", sock,
		    (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(pid, 1);
	ck_assert_ptr_nonnull(f = fopen(agents_file, "a"));
	fprintf(f, "%d\n", (int)pid);
	fclose(f);
	ck_assert_msg(tu_wait_file(sock, 5000) == 0, "ssh-agent did not start");
	add_argv[0] = "/usr/bin/ssh-add";
	add_argv[1] = "-q";
	for (i = 0; i < 8; i++) {
		char *name = xasprintf("agentkey%d", i);

		free(other_key(name, "ed25519"));
		keys[i] = xasprintf("%s/%s", base, name);
		add_argv[2 + i] = keys[i];
		free(name);
	}
	add_argv[10] = NULL;
	env[0] = xasprintf("SSH_AUTH_SOCK=%s", sock);
	env[1] = "PATH=/usr/bin:/bin";
	env[2] = NULL;
	tu_run(&r, add_argv, env, NULL, 0);
	ck_assert_msg(r.status == 0, "ssh-add: %s", r.errout);
	tu_run_free(&r);
	setenv("SSH_AUTH_SOCK", sock, 1);

	/*
	 * Without the inventory's key: the agent's keys, then refused, as
	 * soon as sshd disconnects after MaxAuthTries (libssh 0.10 blocking
	 * would notice only when the 10 s timeout ran out).
	 */
	params_for(&p, 0);
	p.identity = NULL;
	t0 = now_s();
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_ECONNECT);
	t1 = now_s();
	ck_assert_msg(strstr(err.msg, "Too many authentication failures") !=
	    NULL, "%s", err.msg);
	ck_assert_msg(t1 - t0 < 5, "the refusal took %.1f s", t1 - t0);
	ck_assert_ptr_null(c);
	err_release(&err);
	/* With it: offered first, accepted. */
	params_for(&p, 0);
	c = must_open(&p);
	conn_close(c);

	unsetenv("SSH_AUTH_SOCK");
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	for (i = 0; i < 8; i++)
		free(keys[i]);
	free(env[0]);
	free(sock);
}
END_TEST

/* -------------------------------------------------------- 10. stderr flood */

START_TEST(test_stderr_flood)
{
	struct conn_params p;
	struct host_conn *c;
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	double t0, c0, dt, dc;
	int status = -1;

	REQUIRE_FLEET();
	params_for(&p, 1);
	c = must_open(&p);
	t0 = now_s();
	c0 = cpu_s();
	/* 5 MiB of stderr, then a second of silence: a busy loop would
	 * burn that second. */
	ck_assert_int_eq(conn_exec(c, "head -c 5242880 /dev/zero | tr '\\0' e"
	    " >&2; sleep 1; exit 2", &err), 0);
	ck_assert_int_eq(conn_exit(c, &status, &err), 0);
	dt = now_s() - t0;
	dc = cpu_s() - c0;
	ck_assert_int_eq(status, 2);
	ck_assert_msg(dt < 5.0, "took %.2f s", dt);
	ck_assert_msg(dc < 0.6, "used %.2f s of CPU in %.2f s", dc, dt);
	ck_assert_uint_eq(conn_stderr(c)->len, MIB);
	ck_assert_int_eq(conn_stderr(c)->data[0], 'e');
	fprintf(stderr, "check_transport: 5 MiB of stderr: %.2f s, %.2f s "
	    "CPU\n", dt, dc);

	/* Stdout and stderr together, stdout read after the exit. */
	ck_assert_int_eq(conn_exec(c, "head -c 3000000 /dev/zero >&2 & "
	    "head -c 3000000 /dev/zero; wait; exit 4", &err), 0);
	ck_assert_int_eq(conn_exit(c, &status, &err), 0);
	ck_assert_int_eq(status, 4);
	while (conn_recv(c, &out, &err) == 0 && out.len < 3000000)
		;
	ck_assert_uint_eq(out.len, 3000000);
	ck_assert_int_eq(conn_recv(c, &out, &err), 0);
	ck_assert_uint_eq(out.len, 3000000);
	buf_release(&out);

	/* sudo -n failing: message on stderr, exit 1. */
	ck_assert_int_eq(conn_exec(c, "echo 'sudo: a password is required' "
	    ">&2; exit 1", &err), 0);
	ck_assert_int_eq(conn_exit(c, &status, &err), 0);
	ck_assert_int_eq(status, 1);
	ck_assert_str_eq(conn_stderr(c)->data,
	    "sudo: a password is required\n");
	conn_close(c);
}
END_TEST

/* ---------------------------------------------------------- 11. threads */

struct rt_job {
	int	 host;
	int	 rc;
	char	*msg;
};

static void *
rt_thread(void *arg)
{
	struct rt_job *j = arg;
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	char data[65536];
	int status = -1;

	random_bytes(data, sizeof(data), (unsigned)j->host);
	params_for(&p, j->host % NHOSTS);
	j->rc = conn_open(&c, &p, &err);
	if (j->rc == 0)
		j->rc = run_cmd(c, "cat", data, sizeof(data), &out, &status,
		    &err);
	if (j->rc == 0 && (status != 0 || out.len != sizeof(data) ||
	    memcmp(out.data, data, sizeof(data)) != 0))
		j->rc = err_set(&err, ENVCTL_EREMOTE, "bad echo: status %d, "
		    "%zu bytes", status, out.len);
	if (j->rc != 0)
		j->msg = err_text(&err);
	err_release(&err);
	buf_release(&out);
	conn_close(c);
	return NULL;
}

/*
 * --max-startups: a connection holds its target's slot until it is
 * authenticated, and one that cannot get a slot before the host's
 * deadline fails, saying what it waited for.
 */
START_TEST(test_startups)
{
	struct conn_params p;
	struct host_conn *c = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct startups *su = startups_new(1);
	char *key, *want;
	double t0, dt;

	REQUIRE_FLEET();
	params_for(&p, 0);
	p.startups = su;
	c = must_open(&p);
	key = xasprintf("127.0.0.1:%d", hosts[0].port);
	ck_assert_int_eq(startups_held(su, key), 0);
	ck_assert_uint_eq(startups_nkeys(su), 0);
	conn_close(c);

	/* Another handshake to the same target is in flight. */
	ck_assert_int_eq(startups_acquire(su, key, 0, NULL, &err), 0);
	p.host_timeout = 1;
	t0 = now_s();
	ck_assert_int_eq(conn_open(&c, &p, &err), ENVCTL_ETIMEOUT);
	dt = now_s() - t0;
	ck_assert_msg(dt > 0.9 && dt < 3.0, "took %.2f s", dt);
	want = xasprintf("waited 1 s for a handshake slot to %s "
	    "(--max-startups 1)", key);
	ck_assert_str_eq(err.msg, want);
	ck_assert_str_eq(err.host, "gpu-01");
	free(want);
	err_release(&err);
	/* Other targets do not wait for it. */
	params_for(&p, 1);
	p.startups = su;
	p.host_timeout = 1;
	c = must_open(&p);
	conn_close(c);
	startups_release(su, key);
	ck_assert_uint_eq(startups_nkeys(su), 0);
	startups_free(su);
	free(key);
}
END_TEST

/*
 * ServerAliveInterval from ssh_config (which libssh skips): the owner
 * sends keepalives while it waits for a quiet command, and the host's
 * answers keep the connection; -1 turns them off.
 */
START_TEST(test_keepalive)
{
	struct conn_params p;
	struct host_conn *c;
	char *cfg, *s;

	REQUIRE_FLEET();
	cfg = xasprintf("Host nomatch\n\tServerAliveInterval 60\n"
	    "Host gpu-*\n\tServerAliveInterval 1\n\tServerAliveCountMax 2\n");
	free(tu_writes(base, "alive_config", cfg));
	free(cfg);
	cfg = xasprintf("%s/alive_config", base);
	params_for(&p, 0);
	p.ssh_config = cfg;
	c = must_open(&p);
	s = must_run(c, "sleep 3.4; echo awake");
	ck_assert_str_eq(s, "awake\n");
	free(s);
	ck_assert_int_ge(conn_stats(c)->keepalives, 3);
	ck_assert_int_le(conn_stats(c)->keepalives, 4);
	conn_close(c);
	p.alive_interval = -1;
	c = must_open(&p);
	s = must_run(c, "sleep 1.5; echo awake");
	free(s);
	ck_assert_int_eq(conn_stats(c)->keepalives, 0);
	conn_close(c);
	free(cfg);
}
END_TEST

START_TEST(test_threads)
{
	struct rt_job jobs[30];
	pthread_t th[30];
	double t0;
	int i;

	REQUIRE_FLEET();
	t0 = now_s();
	for (i = 0; i < 30; i++) {
		jobs[i].host = i;
		jobs[i].rc = -1;
		jobs[i].msg = NULL;
		ck_assert_int_eq(pthread_create(&th[i], NULL, rt_thread,
		    &jobs[i]), 0);
	}
	for (i = 0; i < 30; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 30; i++) {
		ck_assert_msg(jobs[i].rc == 0, "thread %d: %s", i,
		    jobs[i].msg);
		free(jobs[i].msg);
	}
	fprintf(stderr, "check_transport: 30 threads, connect + 64 KiB round "
	    "trip each: %.1f ms\n", (now_s() - t0) * 1e3);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("fleet");
	SRunner *sr;
	int failed;

	transport_init();
	tcase_add_unchecked_fixture(tc, fleet_setup_once, fleet_teardown_once);
	tcase_add_checked_fixture(tc, fleet_setup, fleet_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_exec_basic);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_ssh_config);
	tcase_add_test(tc, test_changed_hostkey);
	tcase_add_test(tc, test_unknown_hostkey);
	tcase_add_test(tc, test_stall_connect);
	tcase_add_test(tc, test_stall_recv);
	tcase_add_test(tc, test_stall_exit);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_wrong_key);
	tcase_add_test(tc, test_agent_many_keys);
	tcase_add_test(tc, test_stderr_flood);
	tcase_add_test(tc, test_startups);
	tcase_add_test(tc, test_keepalive);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	transport_finish();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
