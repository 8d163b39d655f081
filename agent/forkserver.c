/* forkserver.c - fresh interpreters forked from one (see forkserver.h). */
#include "forkserver.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "child.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/xmalloc.h"

/* How long a server may take to start, and a killed run to be reported. */
#define START_MS	10000
#define REAP_MS		5000
#define MSG_MAX		64
#define READY_MAX	(256u * 1024)
/* The child's status for "run me afresh"; 255 from the file itself only
 * costs a second, fresh run. */
#define AFRESH		255

/*
 * The server (agent/py/forkserver.py): argv[1] is the script each child
 * runs, its text or the absolute path of its file (cache.h), loaded as
 * CACHE_SCRIPT_BOOT loads one; argv[2], if given, is "classic".  It drops
 * its own imports from sys.modules, then (not classic) does site.main()
 * but for the two customize imports, with fd 0 on /dev/null as a run's
 * is, and fds 1 and 2 on memfds to keep what that printed.  It talks over
 * fd 0 (SOCK_SEQPACKET, one message each):
 * "ready\0E\0NAME=value..." (E: sys.flags.ignore_environment, then its
 * environment as it started, to tell whether a wrapper set PYTHON*
 * variables); "threads" if site-packages left a thread running, and it
 * exits (the agent starts it again, classic); or it exits at once if
 * site was imported (a wrapper that drops -S), or if site.main() raised.
 * Then per run it receives
 * "run\0N\0" + N "NAME=value" + the arguments, all NUL-separated, with
 * the child's stdout and stderr as SCM_RIGHTS, and answers "pid P", then
 * "exit CODE STATUS" (waitid's si_code and si_status; the child is left a
 * zombie so that its pid and group stay valid) and reaps it on "reap".
 * "last" instead of "run": it answers "pid" with its own pid and does the
 * run itself, without a fork, ending with it; the agent, its parent,
 * waits for it.
 * The child does what start-up does after that (see forkserver.h): it
 * writes again what site.main() printed, takes the environment as
 * site.main() left it, puts PYTHONPATH first in sys.path as start-up
 * would have (absolute, without duplicates), imports sitecustomize and
 * usercustomize; a classic child runs the whole site.main() itself.  The
 * names it uses are bound as defaults because it empties __main__.
 * When site initialisation itself ends the interpreter (a sitecustomize
 * that raises SystemExit or KeyboardInterrupt), which Python versions
 * report differently, the child exits AFRESH and the run is started
 * afresh instead.  Its death signal (the agent died) is SIGTERM, which
 * it catches (from after site.main(), so that no .pth file replaces the
 * handler) to SIGKILL the run in progress, its group first, then exit;
 * SIGTERM is blocked around fork() so that no child escapes that, and
 * set back in the child to what site.main() left (normally its default).
 * Python 3.3 and later; classic without os.memfd_create() (before 3.8).
 */
#include "agent/py/forkserver.py.h"

/* The environment entries the child applies itself. */
static int
child_applies(const char *e)
{
	return strncmp(e, "PYTHONPATH=", 11) == 0 ||
	    strncmp(e, "PYTHONDONTWRITEBYTECODE=", 24) == 0;
}

/*
 * The index in argv of the run's script: `INTERP -c SCRIPT ARG...` or
 * `INTERP -c CACHE_SCRIPT_BOOT FILE ARG...` (its arguments follow it);
 * -1 for any other command.
 */
static int
script_index(const struct child_spec *spec)
{
	char *const *argv = spec->argv;

	if (argv[0] == NULL || argv[1] == NULL || strcmp(argv[1], "-c") != 0 ||
	    argv[2] == NULL)
		return -1;
	if (strcmp(argv[2], CACHE_SCRIPT_BOOT) != 0)
		return 2;
	return argv[3] != NULL && argv[3][0] == '/' ? 3 : -1;
}

/*
 * The server's key: interpreter, script and the environment without what
 * the child applies.  Returns how many variables the child applies, or
 * -1 when the run cannot be served at all.
 */
static int
make_key(struct buf *key, const struct child_spec *spec)
{
	size_t i;
	int extras = 0, k;

	if ((k = script_index(spec)) < 0)
		return -1;
	buf_addstr(key, spec->argv[0]);
	buf_addch(key, '\0');
	buf_addstr(key, spec->argv[k]);
	buf_addch(key, '\0');
	for (i = 0; spec->envp[i] != NULL; i++) {
		if (child_applies(spec->envp[i])) {
			extras++;
			continue;
		}
		if (strncmp(spec->envp[i], "PYTHON", 6) == 0)
			return -1;
		buf_addstr(key, spec->envp[i]);
		buf_addch(key, '\0');
	}
	return extras;
}

/*
 * Waits for one message until deadline; its text, NUL-terminated, in
 * msg.  Its length, or -1 on EOF, error, deadline or the stop flag.
 */
static int
recv_msg(int sock, char *msg, size_t size, long long deadline,
    const struct child_spec *spec)
{
	struct timespec ts;
	fd_set rfds;
	long long left;
	ssize_t n;

	for (;;) {
		if (spec->stop != NULL && *spec->stop)
			return -1;
		n = recv(sock, msg, size - 1, MSG_DONTWAIT);
		if (n > 0) {
			msg[n] = '\0';
			return (int)n;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR))
			return -1;
		if ((left = deadline - deadline_now_ms()) <= 0)
			return -1;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000;
		FD_ZERO(&rfds);
		FD_SET(sock, &rfds);
		if (pselect(sock + 1, &rfds, NULL, NULL, &ts,
		    spec->waitmask) == -1 && errno != EINTR)
			return -1;
	}
}

/*
 * Whether the server's environment (s, NUL-separated) holds no PYTHON*
 * variable, as the agent gave it none: then nothing between the agent and
 * the interpreter (a wrapper script) had a say in PYTHONPATH, and a child
 * can apply the run's as a fresh start would.
 */
static int
no_python_vars(const char *s, size_t len)
{
	const char *end = s + len, *e;

	for (; s < end; s = e + 1) {
		if ((e = memchr(s, '\0', (size_t)(end - s))) == NULL)
			e = end;
		if ((size_t)(e - s) >= 6 && memcmp(s, "PYTHON", 6) == 0)
			return 0;
	}
	return 1;
}

/*
 * Spawns a server, classic or not, without waiting for it: 0 (it is
 * starting), or -1 on failure (nothing left running).
 */
static int
spawn_one(struct forkserver *fs, const struct child_spec *spec, int classic,
    struct err *err)
{
	struct child_spec ss = *spec;
	char *argv[8], **env;
	int sv[2], nullfd;
	size_t i, k = 0, a = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if (sv[0] >= FD_SETSIZE ||
	    (nullfd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	for (i = 0; spec->envp[i] != NULL; i++)
		;
	env = xcalloc(i + 1, sizeof(*env));
	for (i = 0; spec->envp[i] != NULL; i++)
		if (strncmp(spec->envp[i], "PYTHON", 6) != 0)
			env[k++] = spec->envp[i];
	argv[a++] = spec->argv[0];
	argv[a++] = "-S";
	argv[a++] = "-c";
	a = cache_script_args(argv, a, fs->cache, "server", forkserver_py);
	argv[a++] = spec->argv[script_index(spec)];
	if (classic)
		argv[a++] = "classic";
	argv[a] = NULL;
	ss.argv = argv;
	ss.envp = env;
	ss.deathsig = SIGTERM;
	ss.direct = 1;	/* it reports its own pid; its runs fork from it */
	fs->pid = child_spawn(&ss, sv[1], nullfd, nullfd, -1, err);
	close(sv[1]);
	close(nullfd);
	free(env);
	fs->sock = sv[0];
	fs->starting = fs->pid != -1;
	if (fs->pid == -1) {
		close(fs->sock);
		fs->sock = -1;
		return -1;
	}
	return 0;
}

/* Spawns the first server for key (taken): as spawn_one(). */
static int
spawn_keyed(struct forkserver *fs, const struct child_spec *spec,
    struct buf *key)
{
	struct err serr = ENVCTL_ERR_INIT;
	int r;

	buf_release(&fs->key);
	fs->key = *key;
	buf_init(key, 0);
	r = spawn_one(fs, spec, 0, &serr);
	err_release(&serr);
	return r;
}

/*
 * Waits, within the run's timeout (START_MS at most), for the spawned
 * server's first word: 0 once it is ready, 1 when it found a thread
 * after site-packages (killed and reaped), -1 on failure.
 */
static int
await_ready(struct forkserver *fs, const struct child_spec *spec)
{
	char *ready = xmalloc(READY_MAX);
	int n;

	fs->starting = 0;
	n = recv_msg(fs->sock, ready, READY_MAX, deadline_now_ms() +
	    (spec->timeout_ms < START_MS ? spec->timeout_ms : START_MS), spec);
	if (n == 7 && memcmp(ready, "threads", 7) == 0) {
		free(ready);
		close(fs->sock);
		fs->sock = -1;
		child_kill(fs->pid);
		fs->pid = 0;
		return 1;
	}
	/* "ready\0E", then "\0NAME=value" for each variable it has. */
	if (n < 7 || memcmp(ready, "ready\0", 6) != 0 ||
	    (n > 7 && ready[7] != '\0')) {
		free(ready);
		return -1;
	}
	fs->extras_ok = ready[6] == '0' &&
	    (n == 7 || no_python_vars(ready + 8, (size_t)n - 8));
	free(ready);
	return 0;
}

/* The server, once ready: 0, or -1 (the caller gives up on it). */
static int
serve_ready(struct forkserver *fs, const struct child_spec *spec,
    struct err *err)
{
	int r = fs->starting ? await_ready(fs, spec) : 0;

	if (r == 1 && (r = spawn_one(fs, spec, 1, err)) == 0)
		r = await_ready(fs, spec);
	return r == 0 ? 0 : -1;
}

/* Sends the run with the write ends of its stdout and stderr. */
static int
send_run(int sock, const struct child_spec *spec, const int wr[2], int last)
{
	union {
		char		buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr	align;
	} u;
	struct buf m = ENVCTL_BUF_INIT;
	struct cmsghdr *cm;
	struct msghdr mh;
	struct iovec iov;
	size_t i, n = 0;
	ssize_t r;

	for (i = 0; spec->envp[i] != NULL; i++)
		n += child_applies(spec->envp[i]);
	buf_addf(&m, "%s%c%zu", last ? "last" : "run", '\0', n);
	for (i = 0; spec->envp[i] != NULL; i++)
		if (child_applies(spec->envp[i])) {
			buf_addch(&m, '\0');
			buf_addstr(&m, spec->envp[i]);
		}
	for (i = (size_t)script_index(spec) + 1; spec->argv[i] != NULL; i++) {
		buf_addch(&m, '\0');
		buf_addstr(&m, spec->argv[i]);
	}
	memset(&u, 0, sizeof(u));
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = m.data;
	iov.iov_len = m.len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), wr, 2 * sizeof(int));
	while ((r = sendmsg(sock, &mh, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	buf_release(&m);
	return r == (ssize_t)iov.iov_len ? 0 : -1;
}

/* The run in progress, as child_collect() watches it. */
struct run {
	struct child_result *res;
	int		 sock;
	int		 exited;	/* "exit" came: the status is in res */
	int		 lost;		/* the server closed or talked
					   nonsense */
};

static int
parse_exit(struct run *rn, const char *msg)
{
	int code, status;

	if (sscanf(msg, "exit %d %d", &code, &status) != 2)
		return -1;
	rn->exited = 1;
	rn->res->signal = code == CLD_EXITED ? 0 : status;
	rn->res->status = code == CLD_EXITED ? status : 128 + status;
	return 0;
}

/* The server's socket is readable: the "exit" message, or it is lost. */
static int
run_ready(void *arg, struct err *err)
{
	struct run *rn = arg;
	char msg[MSG_MAX];
	ssize_t n;

	(void)err;
	while ((n = recv(rn->sock, msg, sizeof(msg) - 1, MSG_DONTWAIT)) ==
	    -1 && errno == EINTR)
		;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n > 0) {
		msg[n] = '\0';
		if (parse_exit(rn, msg) == 0)
			return 1;
	}
	rn->lost = 1;
	return -1;
}

static int
run_gone(void *arg)
{
	return ((struct run *)arg)->exited;
}

static int
server_gone(void *arg)
{
	return child_exited(*(pid_t *)arg);
}

/* A run that site initialisation ended is done again afresh. */
static int
outcome(int r, const struct child_result *res)
{
	if (r == 0 && res->signal == 0 && res->status == AFRESH)
		return ENVCTL_EUNSUPPORTED;
	return r;
}

/*
 * The server does the last run itself: the run is the agent's own child,
 * watched and reaped as an exec'd interpreter is, and the server is gone.
 * child_collect() checks gone() before each wait, so an exit before
 * SIGCHLD is held is not missed.
 */
static int
run_last(struct forkserver *fs, struct child_result *res, int rd[2],
    const struct child_spec *spec, long long deadline, struct err *err)
{
	struct child_sigchld h;
	struct child_watch w;
	pid_t pid = fs->pid;
	int r;

	memset(&w, 0, sizeof(w));
	w.fd = -1;
	w.gone = server_gone;
	w.arg = &pid;
	res->pid = pid;
	child_sigchld_hold(&h, spec->waitmask);
	r = child_collect(res, rd, &w, spec, &h.waitmask, deadline, err);
	child_sigchld_release(&h);
	child_reap(res, pid);
	fs->pid = 0;
	forkserver_stop(fs);
	return outcome(r, res);
}

int
forkserver_serving(const struct forkserver *fs)
{
	return fs->pid > 0;
}

void
forkserver_stop(struct forkserver *fs)
{
	if (fs->sock >= 0)
		close(fs->sock);
	fs->sock = -1;
	if (fs->pid > 0)
		child_kill(fs->pid);
	fs->pid = 0;
	fs->starting = 0;
	buf_release(&fs->key);
}

/* Gives up on the server for good: runs go back to fresh starts. */
static int
broken(struct forkserver *fs)
{
	forkserver_stop(fs);
	fs->pid = -1;
	return ENVCTL_EUNSUPPORTED;
}

int
forkserver_prestart(struct forkserver *fs, const struct child_spec *spec)
{
	struct buf key = ENVCTL_BUF_INIT;

	if (fs->pid != 0 || make_key(&key, spec) < 0) {
		buf_release(&key);
		return fs->pid > 0 ? 0 : ENVCTL_EUNSUPPORTED;
	}
	return spawn_keyed(fs, spec, &key) == 0 ? 0 : broken(fs);
}

static void
close_pair(int fd[2])
{
	int i;

	for (i = 0; i < 2; i++)
		if (fd[i] >= 0) {
			close(fd[i]);
			fd[i] = -1;
		}
}

int
forkserver_run(struct forkserver *fs, struct child_result *res,
    const struct child_spec *spec, int last, struct err *err)
{
	struct err serr = ENVCTL_ERR_INIT;
	struct buf key = ENVCTL_BUF_INIT;
	struct child_watch w;
	struct run rn;
	char msg[MSG_MAX];
	int rd[2], wr[2], r, pid, extras;
	long long deadline;

	child_result_init(res);
	if (fs->pid < 0 || (extras = make_key(&key, spec)) < 0) {
		buf_release(&key);
		return ENVCTL_EUNSUPPORTED;
	}
	if (fs->pid > 0 && (key.len != fs->key.len ||
	    memcmp(key.data, fs->key.data, key.len) != 0))
		forkserver_stop(fs);
	if (fs->pid == 0 && last) {
		/* A server started for one run costs more than a fresh one. */
		buf_release(&key);
		return ENVCTL_EUNSUPPORTED;
	}
	if (fs->pid == 0)
		(void)spawn_keyed(fs, spec, &key);
	buf_release(&key);
	r = fs->pid > 0 ? serve_ready(fs, spec, &serr) : -1;
	err_release(&serr);
	if (r != 0)
		return broken(fs);
	if (extras && !fs->extras_ok)
		return ENVCTL_EUNSUPPORTED;
	if ((r = child_pipes(rd, wr, 2, err)) != 0)
		return r;
	deadline = deadline_now_ms() + spec->timeout_ms;
	r = send_run(fs->sock, spec, wr, last);
	close_pair(wr);
	if (r != 0 || recv_msg(fs->sock, msg, MSG_MAX, deadline, spec) < 0 ||
	    sscanf(msg, "pid %d", &pid) != 1 || pid <= 0 ||
	    (last && pid != fs->pid)) {
		close_pair(rd);
		return broken(fs);
	}
	if (last)
		return run_last(fs, res, rd, spec, deadline, err);
	res->pid = pid;
	memset(&rn, 0, sizeof(rn));
	rn.res = res;
	rn.sock = fs->sock;
	w.fd = fs->sock;
	w.ready = run_ready;
	w.gone = run_gone;
	w.arg = &rn;
	r = child_collect(res, rd, &w, spec, spec->waitmask, deadline, err);
	/* The child is not reaped yet, so its pid still names its group. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	/* Lost while it ran: its outcome is unknown, run it afresh. */
	if (rn.lost)
		return broken(fs);
	if (!rn.exited && (recv_msg(fs->sock, msg, MSG_MAX,
	    deadline_now_ms() + REAP_MS, spec) < 0 ||
	    parse_exit(&rn, msg) != 0)) {
		broken(fs);
		return r != 0 ? r : ENVCTL_EUNSUPPORTED;
	}
	if (send(fs->sock, "reap", 4, MSG_NOSIGNAL) != 4)
		broken(fs);
	return outcome(r, res);
}
