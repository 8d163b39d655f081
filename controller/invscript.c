/* invscript.c - run executable inventories (see invscript.h). */
#define _GNU_SOURCE	/* posix_spawn_file_actions_addclosefrom_np */
#include "controller/invscript.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/fdio.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/inv_json.h"
#include "controller/invbuild.h"

extern char **environ;

struct child {
	pid_t		 pid;
	int		 out, errfd;	/* -1 once at EOF */
	int		 reaped, status;
};

static int
spawn(struct child *c, const char *path, char *const argv[], struct err *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, r, code = 0;

	/* posix_spawn may only report a failed exec as status 127. */
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return err_set(err, ENVCTL_ENOTFOUND, "cannot run '%s': no "
		    "such file", path);
	if (fd_cloexec_pipe(o) != 0 || fd_cloexec_pipe(e) != 0) {
		code = err_errno(err, ENVCTL_ESYS, errno, "pipe");
		goto pipes;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	sigfillset(&all);
	sigemptyset(&none);
	/* Its own group, to be killed whole; default signals, none blocked. */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	r = posix_spawn(&c->pid, path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r == ENOENT)
		code = err_set(err, ENVCTL_ENOTFOUND, "cannot run '%s': no "
		    "such file", path);
	else if (r != 0)
		code = err_errno(err, ENVCTL_ESYS, r, "cannot run '%s'", path);
	else {
		c->out = o[0];
		c->errfd = e[0];
		o[0] = e[0] = -1;
	}
pipes:
	if (o[0] >= 0)
		close(o[0]);
	if (o[1] >= 0)
		close(o[1]);
	if (e[0] >= 0)
		close(e[0]);
	if (e[1] >= 0)
		close(e[1]);
	return code;
}

/* Reads what fd has into b (bytes past b's cap are dropped); -1 at EOF. */
static int
drain(int fd, struct buf *b, int *over)
{
	char chunk[65536];
	ssize_t n;
	size_t room;

	n = read(fd, chunk, sizeof(chunk));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? fd : -1;
	if (n == 0) {
		close(fd);
		return -1;
	}
	room = b->cap > b->len ? b->cap - b->len : 0;
	if ((size_t)n > room)
		*over = 1;
	buf_add(b, chunk, (size_t)n > room ? room : (size_t)n);
	return fd;
}

/* The command, for messages. */
static void
command(struct buf *msg, const char *path, const char *arg1,
    const char *arg2)
{
	buf_addf(msg, "'%s %s%s%s'", path, arg1, arg2 != NULL ? " " : "",
	    arg2 != NULL ? arg2 : "");
}

/* Its stderr, made one safe line, for the end of a message. */
static void
stderr_tail(struct buf *msg, const struct buf *errout, int cut)
{
	size_t len = errout->len;

	while (len > 0 && (errout->data[len - 1] == '\n' ||
	    errout->data[len - 1] == ' ' || errout->data[len - 1] == '\r'))
		len--;
	if (len == 0)
		return;
	buf_addstr(msg, "; stderr: ");
	str_addvis(msg, errout->data, len, 0);
	if (cut)
		buf_addstr(msg, "...");
}

int
invscript_run(struct buf *out, struct buf *errout, const char *path,
    const char *arg1, const char *arg2, long long deadline,
    struct err *err)
{
	struct child c = { -1, -1, -1, 0, 0 };
	struct buf ebuf, msg = ENVCTL_BUF_INIT, tail = ENVCTL_BUF_INIT;
	struct pollfd pf[2];
	char *argv[4] = { (char *)path, (char *)arg1, (char *)arg2, NULL };
	int code, ms, outover = 0, errover = 0, timedout = 0, r;

	buf_init(&ebuf, ENVCTL_INVSCRIPT_MAX_ERR);
	buf_reset(out);
	if ((code = spawn(&c, path, argv, err)) != 0)
		goto out;
	while (c.out >= 0 || c.errfd >= 0) {
		if ((ms = deadline_left_ms(deadline, deadline_now_ms())) == 0) {
			timedout = 1;
			break;
		}
		pf[0].fd = c.out;
		pf[1].fd = c.errfd;
		pf[0].events = pf[1].events = POLLIN;
		if (poll(pf, 2, ms) < 0 && errno != EINTR) {
			code = err_errno(err, ENVCTL_ESYS, errno, "poll");
			break;
		}
		if (c.out >= 0 && pf[0].revents != 0)
			c.out = drain(c.out, out, &outover);
		if (c.errfd >= 0 && pf[1].revents != 0)
			c.errfd = drain(c.errfd, &ebuf, &errover);
		if (outover)
			break;
	}
	/* Output closed: wait for the exit, still within the deadline. */
	while (code == 0 && !timedout && !outover && !c.reaped) {
		r = waitpid(c.pid, &c.status, WNOHANG);
		if (r == c.pid)
			c.reaped = 1;
		else if (r < 0 && errno != EINTR) {
			code = err_errno(err, ENVCTL_ESYS, errno, "waitpid");
			break;
		} else if ((ms = deadline_left_ms(deadline,
		    deadline_now_ms())) == 0)
			timedout = 1;
		else
			poll(NULL, 0, ms < 5 ? ms : 5);
	}
	if (!c.reaped) {
		kill(-c.pid, SIGKILL);
		while (waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR)
			;
	}
	if (code != 0)
		goto out;
	command(&msg, path, arg1, arg2);
	stderr_tail(&tail, &ebuf, errover);
	if (timedout)
		code = err_set(err, ENVCTL_ETIMEOUT, "%s did not finish in "
		    "time and was killed%s", msg.data, tail.data);
	else if (outover)
		code = err_set(err, ENVCTL_ETOOBIG, "%s printed more than %u "
		    "bytes and was killed%s", msg.data,
		    ENVCTL_INVSCRIPT_MAX_OUT, tail.data);
	else if (WIFSIGNALED(c.status))
		code = err_set(err, ENVCTL_EINVALID, "%s was killed by signal "
		    "%d%s", msg.data, WTERMSIG(c.status), tail.data);
	else if (WEXITSTATUS(c.status) != 0)
		code = err_set(err, ENVCTL_EINVALID, "%s exited with status "
		    "%d%s", msg.data, WEXITSTATUS(c.status), tail.data);
out:
	if (c.out >= 0)
		close(c.out);
	if (c.errfd >= 0)
		close(c.errfd);
	if (errout != NULL) {
		buf_reset(errout);
		buf_add(errout, ebuf.data, ebuf.len);
	}
	buf_release(&ebuf);
	buf_release(&msg);
	buf_release(&tail);
	return code;
}

/* Records err's message in b; returns its code. */
static int
record(struct invb *b, struct err *err)
{
	int code = err->code;

	invb_error(b, code, NULL, "%s", err->msg);
	err_release(err);
	return code;
}

int
invscript_read(struct invb *b, int timeout)
{
	struct inv_json_hosts need = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	long long deadline;
	struct buf out;
	const char *path = invb_path(b);
	size_t i;
	int code, r;

	buf_init(&out, ENVCTL_INVSCRIPT_MAX_OUT);
	deadline = deadline_now_ms() + (long long)timeout * 1000;
	if ((code = invscript_run(&out, NULL, path, "--list", NULL, deadline,
	    &err)) != 0) {
		code = record(b, &err);
		goto out;
	}
	code = inv_json_read(b, out.data, out.len, "--list", &need);
	for (i = 0; i < need.n; i++) {
		if ((r = invscript_run(&out, NULL, path, "--host",
		    need.names[i], deadline, &err)) != 0)
			r = record(b, &err);
		else
			r = inv_json_read_host(b, need.index[i], need.names[i],
			    out.data, out.len);
		if (code == 0)
			code = r;
		if (r == ENVCTL_ETIMEOUT)
			break;
	}
out:
	inv_json_hosts_release(&need);
	buf_release(&out);
	return code;
}
