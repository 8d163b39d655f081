/*
 * channel.c - exec channels over a connection (see channel.h).
 *
 * Channel I/O never blocks inside libssh: the channel's data callback
 * moves stdout and stderr into our buffers as packets are processed (so
 * nothing waits unseen in libssh's channel buffers), writes never exceed
 * the peer's window, the channel open and exec request run nonblocking,
 * and we wait in poll(2) on the session's fd until the step's deadline.
 * What still blocks (the exit status) is bounded by the timer (conn.h).
 */
#include "controller/ssh/channel.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/ssh/conn.h"

#define ENVCTL_CONN_STDERR_MAX	(1024 * 1024)	/* stderr kept */
#define ENVCTL_CONN_CMD_SHOWN	60	/* command shown in messages */

/* The command as messages show it: first line, at most a few words. */
static char *
shorten_cmd(const char *cmd)
{
	size_t n = strcspn(cmd, "\n");

	if (n > ENVCTL_CONN_CMD_SHOWN)
		return xasprintf("%.*s...", ENVCTL_CONN_CMD_SHOWN, cmd);
	if (cmd[n] != '\0')
		return xasprintf("%.*s...", (int)n, cmd);
	return xstrdup(cmd);
}

/*
 * libssh hands every packet's data to this callback while it processes
 * the packet, so no data waits in libssh's channel buffers, unseen, while
 * we wait on the socket (the window both streams share would stay closed
 * and the command would stall).  Consuming it all lets libssh grow the
 * window.  Stderr keeps its first ENVCTL_CONN_STDERR_MAX bytes; stdout
 * goes to c->pending (capped) until conn_recv() takes it.
 */
static int
chan_data(ssh_session session, ssh_channel channel, void *data,
    uint32_t len, int is_stderr, void *userdata)
{
	struct host_conn *c = userdata;
	size_t keep = len;

	(void)session;
	(void)channel;
	if (is_stderr) {
		if (c->errbuf.len + keep > ENVCTL_CONN_STDERR_MAX)
			keep = ENVCTL_CONN_STDERR_MAX - c->errbuf.len;
		buf_add(&c->errbuf, data, keep);
	} else if (buf_add(&c->pending, data, len) != 0)
		c->overflow = true;
	return (int)len;
}

/* An exit-signal request: the command was killed ("KILL"). */
static void
chan_exit_signal(ssh_session session, ssh_channel channel,
    const char *signal, int core, const char *errmsg, const char *lang,
    void *userdata)
{
	struct host_conn *c = userdata;
	size_t n = signal != NULL ? strlen(signal) : 0;

	(void)session;
	(void)channel;
	(void)core;
	(void)errmsg;
	(void)lang;
	if (n >= sizeof(c->exit_signal))
		n = sizeof(c->exit_signal) - 1;
	if (n > 0)
		memcpy(c->exit_signal, signal, n);
	c->exit_signal[n] = '\0';
}

/*
 * Lets libssh process what has arrived, without waiting: the data
 * callback fills c->pending and c->errbuf.
 */
static int
chan_pump(struct host_conn *c, struct err *err)
{
	int rc;

	if (!ssh_channel_is_eof(c->chan) && !ssh_channel_is_closed(c->chan) &&
	    ssh_channel_poll(c->chan, 0) == SSH_ERROR)
		return conn_fail(c, ENVCTL_EREMOTE, err, "reading output");
	if (c->overflow) {
		rc = err_set(err, ENVCTL_ETOOBIG, "output of '%s' is larger "
		    "than %zu bytes while not being read", c->cmd,
		    c->pending.cap);
		err_sethost(err, c->host);
		return rc;
	}
	return 0;
}

/*
 * After authentication sshd sends small SSH_MSG_DEBUG packets, and until
 * a session starts its Nagle holds the next one (the channel confirmation)
 * until our delayed ACK, 40 ms on Linux.  Setting TCP_QUICKACK once data
 * came sends the pending ACK at once; setting it before we send is no use
 * (sending re-enters delayed-ACK mode).  Best effort: under a ProxyCommand
 * the fd is not a TCP socket.
 */
static void
quick_ack(struct host_conn *c)
{
	int one = 1, fd = ssh_get_fd(c->session);

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

void
channel_release(struct host_conn *c)
{
	if (c->chan == NULL)
		return;
	if (c->broken == 0 && ssh_channel_is_open(c->chan))
		ssh_channel_close(c->chan);
	ssh_remove_channel_callbacks(c->chan, &c->chan_cb);
	ssh_channel_free(c->chan);
	c->chan = NULL;
}

static int
need_chan(struct host_conn *c, const char *verb, struct err *err)
{
	if (c->chan != NULL)
		return 0;
	err_set(err, ENVCTL_EINVALID, "cannot %s: no command is running",
	    verb);
	err_sethost(err, c->host);
	return ENVCTL_EINVALID;
}

int
conn_exec(struct host_conn *c, const char *cmd, struct err *err)
{
	int rc, e;

	if ((rc = conn_usable(c, err)) != 0)
		return rc;
	free(c->cmd);
	c->cmd = shorten_cmd(cmd);
	conn_step_begin(c, "starting '%s'", c->cmd);
	channel_release(c);
	buf_reset(&c->errbuf);
	buf_reset(&c->pending);
	c->overflow = false;
	c->sent = false;
	if ((c->chan = ssh_channel_new(c->session)) == NULL) {
		rc = conn_fail(c, ENVCTL_ECONNECT, err, NULL);
		goto out;
	}
	memset(&c->chan_cb, 0, sizeof(c->chan_cb));
	c->chan_cb.userdata = c;
	c->chan_cb.channel_data_function = chan_data;
	c->chan_cb.channel_exit_signal_function = chan_exit_signal;
	c->exit_signal[0] = '\0';
	ssh_callbacks_init(&c->chan_cb);
	ssh_set_channel_callbacks(c->chan, &c->chan_cb);
	/* Nonblocking, so that we wait (and ACK) in our own loop. */
	ssh_set_blocking(c->session, 0);
	while ((e = ssh_channel_open_session(c->chan)) == SSH_AGAIN) {
		if ((rc = conn_wait_io(c, err)) != 0)
			goto out;
		quick_ack(c);
	}
	if (e != SSH_OK) {
		rc = conn_fail(c, ENVCTL_EREMOTE, err,
		    "cannot open a channel");
		goto out;
	}
	c->stats.channels++;
	while ((e = ssh_channel_request_exec(c->chan, cmd)) == SSH_AGAIN) {
		if ((rc = conn_wait_io(c, err)) != 0)
			goto out;
		quick_ack(c);
	}
	if (e != SSH_OK)
		rc = conn_fail(c, ENVCTL_EREMOTE, err,
		    "the host refused the command");
	else
		c->stats.round_trips++;	/* the exec's own answer */
out:
	ssh_set_blocking(c->session, 1);
	if (rc != 0)
		channel_release(c);
	conn_step_end(c);
	return rc;
}

int
conn_send(struct host_conn *c, const void *data, size_t len,
    struct err *err)
{
	const char *p = data;
	size_t off = 0, n;
	uint32_t win;
	int rc, w;

	if ((rc = conn_usable(c, err)) != 0 ||
	    (rc = need_chan(c, "send", err)) != 0)
		return rc;
	conn_step_begin(c, "writing to '%s'", c->cmd);
	while (off < len) {
		/* Reading keeps our window open while the peer echoes. */
		if ((rc = chan_pump(c, err)) != 0)
			goto out;
		if (ssh_channel_is_closed(c->chan)) {
			rc = err_set(err, ENVCTL_EREMOTE, "'%s' exited before "
			    "reading all its input", c->cmd);
			err_sethost(err, c->host);
			goto out;
		}
		if ((win = ssh_channel_window_size(c->chan)) == 0) {
			if ((rc = conn_wait_io(c, err)) != 0)
				goto out;
			continue;
		}
		n = len - off;
		if (n > win)
			n = win;
		if (n > ENVCTL_CONN_CHUNK * 4)
			n = ENVCTL_CONN_CHUNK * 4;
		if ((w = ssh_channel_write(c->chan, p + off, (uint32_t)n)) <
		    0) {
			rc = conn_fail(c, ENVCTL_EREMOTE, err, NULL);
			goto out;
		}
		if (w == 0 && (rc = conn_wait_io(c, err)) != 0)
			goto out;
		if (w > 0)
			conn_step_progress(c);
		off += (size_t)w;
	}
	c->sent = true;
out:
	conn_step_end(c);
	return rc;
}

/* Moves what c->pending holds to out. */
static int
take_pending(struct host_conn *c, struct buf *out, struct err *err)
{
	int rc;

	if ((rc = buf_add(out, c->pending.data, c->pending.len)) != 0) {
		err_set(err, rc, "output of '%s' is larger than %zu bytes",
		    c->cmd != NULL ? c->cmd : "?", out->cap);
		err_sethost(err, c->host);
		return rc;
	}
	buf_reset(&c->pending);
	return 0;
}

static int
recv_until(struct host_conn *c, struct buf *out, bool wake_on_stderr,
    struct err *err)
{
	size_t errlen = c->errbuf.len;
	int rc;

	if (c->sent) {
		c->stats.round_trips++;
		c->sent = false;
	}
	if (c->pending.len > 0)
		return take_pending(c, out, err);
	if (c->chan == NULL)
		return 0;	/* after conn_exit(): nothing more */
	if ((rc = conn_usable(c, err)) != 0)
		return rc;
	conn_step_begin(c, "waiting for output of '%s'", c->cmd);
	for (;;) {
		if ((rc = chan_pump(c, err)) != 0)
			break;
		if (c->pending.len > 0) {
			rc = take_pending(c, out, err);
			break;
		}
		if (ssh_channel_is_eof(c->chan) ||
		    ssh_channel_is_closed(c->chan))
			break;
		if (wake_on_stderr && c->errbuf.len != errlen)
			break;
		if ((rc = conn_wait_io(c, err)) != 0)
			break;
	}
	conn_step_end(c);
	return rc;
}

int
conn_recv(struct host_conn *c, struct buf *out, struct err *err)
{
	return recv_until(c, out, false, err);
}

int
conn_recv_any(struct host_conn *c, struct buf *out, struct err *err)
{
	return recv_until(c, out, true, err);
}

int
conn_exit(struct host_conn *c, int *status, struct err *err)
{
	size_t before;
	int rc;

	*status = -1;
	if ((rc = conn_usable(c, err)) != 0 ||
	    (rc = need_chan(c, "wait for the exit", err)) != 0)
		return rc;
	conn_step_begin(c, "waiting for '%s' to exit", c->cmd);
	if (ssh_channel_is_open(c->chan) && ssh_channel_send_eof(c->chan) !=
	    SSH_OK) {
		rc = conn_fail(c, ENVCTL_EREMOTE, err, "closing its input");
		goto out;
	}
	for (;;) {
		before = c->pending.len + c->errbuf.len;
		if ((rc = chan_pump(c, err)) != 0)
			goto out;
		if (ssh_channel_is_eof(c->chan) ||
		    ssh_channel_is_closed(c->chan))
			break;
		if (c->pending.len + c->errbuf.len != before)
			conn_step_progress(c);
		else if ((rc = conn_wait_io(c, err)) != 0)
			goto out;
	}
	/* Blocks until exit-status or close arrive: the watchdog bounds it. */
	*status = ssh_channel_get_exit_status(c->chan);
	if (conn_fired(c)) {
		rc = conn_fail(c, ENVCTL_ETIMEOUT, err, NULL);
		goto out;
	}
	channel_release(c);
out:
	conn_step_end(c);
	return rc;
}

const char *
conn_exit_signal(const struct host_conn *c)
{
	return c->exit_signal[0] != '\0' ? c->exit_signal : NULL;
}

const struct buf *
conn_stderr(const struct host_conn *c)
{
	return &c->errbuf;
}

