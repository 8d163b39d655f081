/*
 * conn.c - a connection's steps, deadlines, watchdog and error mapping.
 *
 * Deadlines.  A step's deadline is the earlier of its own timeout (from
 * the step's start, renewed by progress) and the whole host's deadline,
 * which the caller fixes once (conn_params.deadline) and progress never
 * moves: a peer that sends a byte now and then keeps a step alive, never
 * the host.  Every step after the connect arms the connection's entry in
 * the shared timer (timer.h) with the step's deadline plus a grace; when
 * the deadline passes while the owner is still inside libssh (a stalled
 * peer; SFTP has no timeout at all), the timer's thread shuts our
 * duplicate of the socket down, libssh sees the connection end and the
 * call returns.  The duplicate fd is ours, closed only after the entry
 * was cancelled (under the timer's lock), so the timer can never hit a
 * descriptor number that libssh closed and the process reused.
 */
#include "controller/ssh/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libssh/server.h>	/* ssh_send_keepalive(), client-side too */

#include "common/deadline.h"
#include "common/err.h"

#define ENVCTL_CONN_GRACE_MS	500	/* watchdog after our own poll */

/* --------------------------------------------------------------- steps */

void
conn_step_from(struct host_conn *c, long long from)
{
	c->deadline = from + (long long)c->timeout * 1000;
	c->host_bound = false;
	if (c->host_deadline != 0 && c->host_deadline <= c->deadline) {
		c->deadline = c->host_deadline;
		c->host_bound = true;
	}
	if (c->watching)
		timer_arm(c->timer, &c->alarm, c->deadline +
		    ENVCTL_CONN_GRACE_MS);
}

void
conn_step_begin(struct host_conn *c, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&c->what);
	va_start(ap, fmt);
	buf_vaddf(&c->what, fmt, ap);
	va_end(ap);
	conn_step_from(c, deadline_now_ms());
}

void
conn_step_progress(struct host_conn *c)
{
	conn_step_from(c, deadline_now_ms());
}

void
conn_step_end(struct host_conn *c)
{
	if (c->watching)
		timer_cancel(c->timer, &c->alarm);
}

int
conn_left_ms(const struct host_conn *c)
{
	return deadline_left_ms(c->deadline, deadline_now_ms());
}

/* ------------------------------------------------------------ watchdog */

/* On the timer's thread: the owner is stuck inside libssh past its
 * deadline, so end the connection under it.  The fd stays open (ours). */
static void
conn_alarm(struct timer_entry *e)
{
	struct host_conn *c = (struct host_conn *)(void *)((char *)e -
	    offsetof(struct host_conn, alarm));

	shutdown(c->wdfd, SHUT_RDWR);
}

int
conn_watch(struct host_conn *c, struct timer *t, int fd, struct err *err)
{
	int rc;

	if ((c->wdfd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return err_errno(err, ENVCTL_ESYS, errno, "cannot start the "
		    "watchdog");
	timer_entry_init(&c->alarm, conn_alarm);
	if ((rc = timer_attach(t, err)) != 0)
		return rc;
	c->timer = t;
	c->watching = true;
	return 0;
}

void
conn_cut(struct host_conn *c)
{
	if (c->watching)
		timer_cancel(c->timer, &c->alarm);
	if (c->wdfd >= 0)
		shutdown(c->wdfd, SHUT_RDWR);
}

bool
conn_fired(struct host_conn *c)
{
	return c->watching && timer_fired(c->timer, &c->alarm);
}

void
conn_watch_close(struct host_conn *c)
{
	if (c->watching)
		timer_arm(c->timer, &c->alarm, c->deadline);
}

void
conn_unwatch(struct host_conn *c)
{
	if (c->watching) {
		timer_cancel(c->timer, &c->alarm);
		timer_detach(c->timer);
		c->watching = false;
	}
	if (c->wdfd >= 0)
		close(c->wdfd);
	c->wdfd = -1;
}

/* ----------------------------------------------------------- keepalive */

/*
 * libssh 0.10 has no client keepalive of its own (ssh_config's
 * ServerAliveInterval is one of the keywords it skips) and no thread of
 * its own: the owner thread sends them while it waits (conn_wait_io()),
 * so no second thread ever touches the session.  ssh_send_keepalive() sends a
 * keepalive@openssh.com global request with want-reply, then waits for
 * the reply: in nonblocking mode it returns at once and the reply is
 * taken later with the channel's packets.  While a reply is outstanding
 * (or taken but not yet collected) a call sends nothing and only
 * collects it; the second call then sends.  So each due keepalive sends
 * one request unless the last one is still unanswered, and any byte from
 * the host counts as an answer, as in ssh(1).
 */
int
conn_keepalive(struct host_conn *c, int *ms, struct err *err)
{
	long long now, due;
	int blocking;

	if (c->alive_ms <= 0)
		return 0;
	now = deadline_now_ms();
	due = c->alive_last + c->alive_ms;
	if (now >= due) {
		if (c->alive_sent >= c->alive_max) {
			err_set(err, ENVCTL_ECONNECT, "connection lost while "
			    "%s: no answer to %d keepalives, %d s apart "
			    "(ServerAliveInterval, ServerAliveCountMax)",
			    c->what.data, c->alive_sent, c->alive_ms / 1000);
			err_sethost(err, c->host);
			c->broken = ENVCTL_ECONNECT;
			conn_cut(c);
			return ENVCTL_ECONNECT;
		}
		blocking = ssh_is_blocking(c->session);
		ssh_set_blocking(c->session, 0);
		ssh_send_keepalive(c->session);
		ssh_send_keepalive(c->session);
		ssh_set_blocking(c->session, blocking);
		c->alive_sent++;
		c->stats.keepalives++;
		c->alive_last = now;
		due = now + c->alive_ms;
	}
	if (due - now < *ms)
		*ms = (int)(due - now);
	return 0;
}

void
conn_alive_heard(struct host_conn *c)
{
	c->alive_sent = 0;
	c->alive_last = deadline_now_ms();
}

/* ------------------------------------------------------ error mapping */

/* err->cause stays 0: err_format() reads it as an errno, and libssh's
 * words are in the text. */
int
conn_fail(struct host_conn *c, int code, struct err *err, const char *fmt,
    ...)
{
	struct buf what = ENVCTL_BUF_INIT;
	const char *sshmsg = "";
	int sshcode = SSH_NO_ERROR;
	bool lost;
	va_list ap;

	buf_addstr(&what, c->what.data);
	if (fmt != NULL) {
		buf_addstr(&what, ": ");
		va_start(ap, fmt);
		buf_vaddf(&what, fmt, ap);
		va_end(ap);
	}
	if (c->session != NULL) {
		sshmsg = ssh_get_error(c->session);
		sshcode = ssh_get_error_code(c->session);
	}
	lost = c->connected && (sshcode == SSH_FATAL ||
	    !ssh_is_connected(c->session) ||
	    (ssh_get_status(c->session) & (SSH_CLOSED | SSH_CLOSED_ERROR)));
	if (c->broken == ENVCTL_ETIMEOUT || conn_fired(c) ||
	    code == ENVCTL_ETIMEOUT) {
		code = ENVCTL_ETIMEOUT;
		if (c->host_bound)
			err_set(err, code, "did not finish in %d s (deadline "
			    "for the whole host): timed out while %s",
			    c->host_timeout, what.data);
		else
			err_set(err, code, "timed out after %d s while %s",
			    c->timeout, what.data);
		c->broken = code;
	} else if (lost) {
		code = ENVCTL_ECONNECT;
		err_set(err, code, "connection lost while %s: %s", what.data,
		    *sshmsg != '\0' ? sshmsg : "closed by the host");
		c->broken = code;
	} else if (*sshmsg != '\0')
		err_set(err, code, "%s: %s", what.data, sshmsg);
	else
		err_set(err, code, "%s", what.data);
	if (c->broken != 0)
		conn_cut(c);
	err_sethost(err, c->host);
	buf_release(&what);
	return code;
}

int
conn_usable(struct host_conn *c, struct err *err)
{
	if (c->broken == 0)
		return 0;
	err_set(err, c->broken, "the connection is unusable after an "
	    "earlier %s", c->broken == ENVCTL_ETIMEOUT ? "timeout" : "error");
	err_sethost(err, c->host);
	return c->broken;
}

/* ------------------------------------------------------------- helpers */

void
conn_shquote(struct buf *b, const char *s, bool always)
{
	const char *p;

	if (!always && *s != '\0' &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_./:@%+=,-") == strlen(s)) {
		buf_addstr(b, s);
		return;
	}
	buf_addch(b, '\'');
	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			buf_addstr(b, "'\\''");
		else
			buf_addch(b, *p);
	}
	buf_addch(b, '\'');
}

/*
 * Waits until the session's socket is readable or the deadline passes,
 * sending keepalives meanwhile (conn_keepalive()).
 */
int
conn_wait_io(struct host_conn *c, struct err *err)
{
	struct pollfd pfd;
	int ms, n;

	for (;;) {
		if ((ms = conn_left_ms(c)) == 0)
			return conn_fail(c, ENVCTL_ETIMEOUT, err, NULL);
		if (conn_fired(c))
			return conn_fail(c, ENVCTL_ETIMEOUT, err, NULL);
		pfd.fd = ssh_get_fd(c->session);
		if (pfd.fd < 0 || !ssh_is_connected(c->session))
			return conn_fail(c, ENVCTL_ECONNECT, err, NULL);
		pfd.events = POLLIN;
		if (ssh_get_poll_flags(c->session) & SSH_WRITE_PENDING)
			pfd.events |= POLLOUT;
		pfd.revents = 0;
		if (conn_keepalive(c, &ms, err) != 0)
			return err->code;
		n = poll(&pfd, 1, ms);
		if (n > 0) {
			conn_alive_heard(c);
			return 0;
		}
		if (n < 0 && errno != EINTR)
			return conn_fail(c, ENVCTL_ECONNECT, err,
			    "poll: %s", strerror(errno));
	}
}
