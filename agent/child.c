/* child.c - run a program with a deadline and capped output (see child.h). */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/deadline.h"
#include "common/err.h"
#include "common/fdio.h"
#include "common/xmalloc.h"

#define CHUNK		65536
/* How long descendants may hold the pipes open once the program exited. */
#define GRACE_MS	200
/* close_range(2) flag, from <linux/close_range.h> (Linux 5.11). */
#define CLOSE_RANGE_CLOEXEC_FLAG	(1U << 2)
/*
 * close_range(2) is 436 on every architecture (Linux 5.9); musl 1.2.3's
 * headers do not name it, and without it every start of the interpreter
 * would mark up to 65536 descriptors one fcntl() at a time.
 */
#ifndef SYS_close_range
#define SYS_close_range	436
#endif

static void
on_sigchld(int sig)
{
	(void)sig;	/* only here to interrupt pselect() */
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Marks every descriptor from low up close-on-exec, or closes them all
 * when close_now (in a child, which must not allocate).
 */
static void
fds_from(int low, int close_now)
{
	long max, fd;

	if (syscall(SYS_close_range, (unsigned int)low, ~0U,
	    close_now ? 0U : CLOSE_RANGE_CLOEXEC_FLAG) == 0)
		return;
	if ((max = sysconf(_SC_OPEN_MAX)) < 0 || max > 65536)
		max = 65536;
	for (fd = low; fd < max; fd++)
		if (close_now)
			close((int)fd);
		else
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

/* Keeps the last keep bytes of b. */
static void
trim_tail(struct buf *b, size_t keep)
{
	if (b->len <= keep)
		return;
	memmove(b->data, b->data + b->len - keep, keep);
	b->len = keep;
	b->data[keep] = '\0';
}

/*
 * The paths execve() tries, like execvp(): argv0 itself when it holds a
 * slash, else argv0 in each directory of path.  Built before fork() so
 * that the child does not allocate.
 */
static char **
exec_candidates(const char *argv0, const char *path)
{
	char **v;
	const char *p, *end;
	size_t n = 2;

	if (strchr(argv0, '/') != NULL || path == NULL) {
		v = xcalloc(2, sizeof(*v));
		v[0] = xstrdup(argv0);
		return v;
	}
	for (p = path; *p != '\0'; p++)
		n += *p == ':';
	v = xcalloc(n, sizeof(*v));
	n = 0;
	for (p = path; *p != '\0'; p = *end == ':' ? end + 1 : end) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		if (end > p)	/* an empty entry would mean ".": skipped */
			v[n++] = xasprintf("%.*s/%s", (int)(end - p), p, argv0);
	}
	return v;
}

static void
free_strv(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * The waiter: holds no descriptor, reaps the program and ends as it ended
 * (its exit code, or the same signal), so the agent sees the program's
 * status.  Whatever kills the waiter kills the program too (its death
 * signal).
 */
static void __attribute__((noreturn))
wait_and_relay(pid_t pid)
{
	struct rlimit none = { 0, 0 };
	sigset_t all;
	int st;

	fds_from(0, 1);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			_exit(127);
	if (WIFEXITED(st))
		_exit(WEXITSTATUS(st));
	setrlimit(RLIMIT_CORE, &none);	/* its core, if any, was dumped */
	sigfillset(&all);
	sigdelset(&all, WTERMSIG(st));
	sigprocmask(SIG_SETMASK, &all, NULL);
	kill(getpid(), WTERMSIG(st));
	_exit(128 + WTERMSIG(st));
}

/*
 * The forked child: set up and exec, or report errno on statfd and die.
 * The program runs one process further down, under a waiter, so that its
 * parent is never the agent: a sitecustomize that kills its parent
 * (os.kill(os.getppid(), 9)) ends the waiter, and the agent lives to
 * report that run like any death by a signal.  spec->direct skips it.
 */
static void __attribute__((noreturn))
exec_child(const struct child_spec *spec, char **cand, pid_t parent,
    int nullfd, int outfd, int errfd, int statfd)
{
	sigset_t none;
	pid_t pid;
	int sig, e = 0, eacces = 0, deathsig;
	size_t i;

	if (setpgid(0, 0) == -1)
		goto fail;
	/* Dies with the agent even if the agent is SIGKILLed. */
	deathsig = spec->deathsig != 0 ? spec->deathsig : SIGKILL;
	prctl(PR_SET_PDEATHSIG, deathsig);
	if (getppid() != parent)
		_exit(127);
	for (sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (!spec->direct) {
		parent = getpid();
		if ((pid = fork()) == -1)
			goto fail;
		if (pid > 0)
			wait_and_relay(pid);
		prctl(PR_SET_PDEATHSIG, deathsig);
		if (getppid() != parent)
			_exit(127);
	}
	if (dup2(nullfd, 0) == -1 || dup2(outfd, 1) == -1 ||
	    dup2(errfd, 2) == -1)
		goto fail;
	if (spec->cwd != NULL && chdir(spec->cwd) == -1)
		goto fail;
	fds_from(3, 0);
	for (i = 0; cand[i] != NULL; i++) {
		execve(cand[i], spec->argv, spec->envp);
		e = errno;
		if (e == EACCES)
			eacces = 1;
		else if (e != ENOENT && e != ENOTDIR)
			break;
	}
	if (eacces && (e == ENOENT || e == ENOTDIR))
		e = EACCES;
	if (e == 0)
		e = ENOENT;
	goto report;
fail:
	e = errno;
report:
	while (statfd >= 0 && write(statfd, &e, sizeof(e)) == -1 &&
	    errno == EINTR)
		;
	_exit(127);
}

/* Notes the errno the child sent, when it could not exec. */
static int
exec_status(struct child_result *res, int fd, const struct child_spec *spec,
    struct err *err)
{
	ssize_t n;
	int e;

	while ((n = read(fd, &e, sizeof(e))) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(e))
		return 0;
	res->exec_errno = e;
	return err_errno(err, e == ENOENT ? ENVCTL_ENOTFOUND : ENVCTL_ESYS, e,
	    "cannot run '%s'", spec->name);
}

int
child_pipes(int rd[], int wr[], int n, struct err *err)
{
	int i, p[2];

	for (i = 0; i < n; i++)
		rd[i] = wr[i] = -1;
	for (i = 0; i < n; i++) {
		if (fd_cloexec_pipe(p) == -1) {
			err_errno(err, ENVCTL_ESYS, errno,
			    "cannot make a pipe");
			break;
		}
		rd[i] = p[0];
		wr[i] = p[1];
		/* Read ends go to pselect(). */
		if (rd[i] >= FD_SETSIZE) {
			err_set(err, ENVCTL_ESYS,
			    "descriptor beyond FD_SETSIZE");
			break;
		}
	}
	if (i == n)
		return 0;
	for (i = 0; i < n; i++) {
		close_fd(&rd[i]);
		close_fd(&wr[i]);
	}
	return err->code;
}

void
child_result_init(struct child_result *res)
{
	memset(res, 0, sizeof(*res));
	buf_init(&res->out, 0);
	buf_init(&res->err, 0);
	res->pid = -1;
}

pid_t
child_spawn(const struct child_spec *spec, int in, int out, int errfd,
    int statfd, struct err *err)
{
	char **cand = exec_candidates(spec->argv[0], spec->path);
	pid_t pid, parent = getpid();

	/* A program whose waiter dies is reparented here (child_kill()). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	if ((pid = fork()) == -1) {
		err_errno(err, ENVCTL_ESYS, errno, "cannot run '%s'",
		    spec->name);
		free_strv(cand);
		return -1;
	}
	if (pid == 0)
		exec_child(spec, cand, parent, in, out, errfd, statfd);
	/* Either call makes the group, so kill(-pid) always works. */
	setpgid(pid, pid);
	free_strv(cand);
	return pid;
}

int
child_collect(struct child_result *res, int rd[2], struct child_watch *w,
    const struct child_spec *spec, const sigset_t *waitmask,
    long long deadline, struct err *err)
{
	struct timespec ts;
	fd_set rfds;
	char chunk[CHUNK];
	size_t keep[2], total[2] = { 0, 0 };
	struct buf *bufs[2];
	long long grace_end = 0, t, slice;
	int r = 0, maxfd, exited = 0, i, fds[3];
	ssize_t n;

	bufs[0] = &res->out;
	bufs[1] = &res->err;
	keep[0] = spec->out_keep;
	keep[1] = spec->err_keep;
	for (;;) {
		if (spec->stop != NULL && *spec->stop) {
			r = err_set(err, ENVCTL_ESYS, "'%s' was stopped: the "
			    "agent is shutting down", spec->name);
			break;
		}
		if (!exited && w->gone(w->arg)) {
			exited = 1;
			grace_end = deadline_now_ms() + GRACE_MS;
		}
		if (exited && rd[0] < 0 && rd[1] < 0 && w->fd < 0)
			break;
		t = deadline_now_ms();
		if (exited && t >= grace_end)
			break;
		if (t >= deadline) {
			r = err_set(err, ENVCTL_ETIMEOUT,
			    "%s did not finish within %g s", spec->name,
			    spec->timeout_ms / 1000.0);
			break;
		}
		slice = deadline - t;
		if (exited && grace_end - t < slice)
			slice = grace_end - t;
		ts.tv_sec = (time_t)(slice / 1000);
		ts.tv_nsec = (long)(slice % 1000) * 1000000;
		FD_ZERO(&rfds);
		maxfd = -1;
		fds[0] = rd[0];
		fds[1] = rd[1];
		fds[2] = w->fd;
		for (i = 0; i < 3; i++) {
			if (fds[i] < 0)
				continue;
			FD_SET(fds[i], &rfds);
			if (fds[i] > maxfd)
				maxfd = fds[i];
		}
		if (pselect(maxfd + 1, &rfds, NULL, NULL, &ts,
		    waitmask) == -1) {
			if (errno == EINTR)
				continue;
			r = err_errno(err, ENVCTL_ESYS, errno,
			    "cannot wait for '%s'", spec->name);
			break;
		}
		if (w->fd >= 0 && FD_ISSET(w->fd, &rfds)) {
			if ((r = w->ready(w->arg, err)) < 0)
				break;
			if (r > 0)
				w->fd = -1;
			r = 0;
		}
		for (i = 0; i < 2; i++) {
			if (rd[i] < 0 || !FD_ISSET(rd[i], &rfds))
				continue;
			n = read(rd[i], chunk, sizeof(chunk));
			if (n > 0) {
				total[i] += (size_t)n;
				buf_add(bufs[i], chunk, (size_t)n);
				if (bufs[i]->len > 2 * keep[i] + CHUNK)
					trim_tail(bufs[i], keep[i]);
			} else if (n == 0 || (errno != EINTR &&
			    errno != EAGAIN))
				close_fd(&rd[i]);
		}
	}
	for (i = 0; i < 2; i++) {
		close_fd(&rd[i]);
		trim_tail(bufs[i], keep[i]);
		if (total[i] > keep[i])
			*(i == 0 ? &res->out_truncated : &res->err_truncated) =
			    1;
	}
	return r;
}

/* child_run()'s watch: the exec status pipe, and its own child's exit. */
struct exec_watch {
	struct child_result *res;
	const struct child_spec *spec;
	struct child_watch w;
};

static int
exec_ready(void *arg, struct err *err)
{
	struct exec_watch *x = arg;
	int r;

	/* Data: exec failed.  EOF: it succeeded; either way it is done. */
	r = exec_status(x->res, x->w.fd, x->spec, err);
	return r != 0 ? r : 1;
}

int
child_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    0 && si.si_pid == pid;
}

static int
exec_gone(void *arg)
{
	return child_exited(((struct exec_watch *)arg)->res->pid);
}

void
child_sigchld_hold(struct child_sigchld *h, const sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, &h->oldsa);
	sigprocmask(SIG_BLOCK, &chld, &h->oldmask);
	h->waitmask = waitmask != NULL ? *waitmask : h->oldmask;
	sigdelset(&h->waitmask, SIGCHLD);
}

void
child_sigchld_release(struct child_sigchld *h)
{
	sigaction(SIGCHLD, &h->oldsa, NULL);
	sigprocmask(SIG_SETMASK, &h->oldmask, NULL);
}

int
child_kill(pid_t pid)
{
	int st = 0;

	int other;

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	/*
	 * What the killed waiter left is ours now (child_spawn() made the
	 * agent a subreaper): reaped here, so that nothing of the group
	 * outlives this call, not even for the moment it takes init.
	 */
	while (waitpid(-pid, &other, 0) != -1 || errno == EINTR)
		;
	return st;
}

void
child_reap(struct child_result *res, pid_t pid)
{
	int st = child_kill(pid);

	if (WIFSIGNALED(st)) {
		res->signal = WTERMSIG(st);
		res->status = 128 + res->signal;
	} else
		res->status = WEXITSTATUS(st);
}

int
child_run(struct child_result *res, const struct child_spec *spec,
    struct err *err)
{
	struct child_sigchld h;
	struct exec_watch x;
	/* [0] stdout, [1] stderr, [2] exec status; read ends, write ends */
	int rd[3] = { -1, -1, -1 }, wr[3] = { -1, -1, -1 };
	int nullfd = -1, r = 0, i;
	long long deadline;
	pid_t pid;

	child_result_init(res);
	child_sigchld_hold(&h, spec->waitmask);

	if ((nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot open /dev/null");
		goto out;
	}
	if ((r = child_pipes(rd, wr, 3, err)) != 0)
		goto out;
	/* Even exec() is under the deadline: it can hang on a dead mount. */
	deadline = deadline_now_ms() + spec->timeout_ms;
	if ((pid = child_spawn(spec, nullfd, wr[0], wr[1], wr[2], err)) == -1) {
		r = err->code;
		goto out;
	}
	res->pid = pid;
	for (i = 0; i < 3; i++)
		close_fd(&wr[i]);
	close_fd(&nullfd);

	x.res = res;
	x.spec = spec;
	x.w.fd = rd[2];
	x.w.ready = exec_ready;
	x.w.gone = exec_gone;
	x.w.arg = &x;
	r = child_collect(res, rd, &x.w, spec, &h.waitmask, deadline, err);
	/* Gone without a word on the status pipe yet: read it (no wait). */
	if (r == 0 && x.w.fd >= 0)
		r = exec_status(res, x.w.fd, spec, err);
	/* Whatever happened, nothing of the group outlives this call. */
	child_reap(res, pid);
out:
	for (i = 0; i < 3; i++) {
		close_fd(&rd[i]);
		close_fd(&wr[i]);
	}
	close_fd(&nullfd);
	child_sigchld_release(&h);
	return r;
}

void
child_result_release(struct child_result *res)
{
	buf_release(&res->out);
	buf_release(&res->err);
}
