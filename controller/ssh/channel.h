/*
 * channel.h - running one command at a time on a connection, raw bytes.
 *
 * An exec channel carries the command's stdin, stdout and stderr.  No
 * call blocks inside libssh: output is taken as packets arrive, writes
 * never exceed the peer's window, and every wait is bounded by the step's
 * timeout and the host's deadline (session.h).  A connection that timed
 * out or was lost refuses every verb afterwards.  Errors: ETIMEOUT,
 * ECONNECT, EREMOTE, ETOOBIG, EINVALID (no command running).
 */
#ifndef ENVCTL_CONTROLLER_SSH_CHANNEL_H
#define ENVCTL_CONTROLLER_SSH_CHANNEL_H

#include <stddef.h>

struct buf;
struct err;
struct host_conn;

/*
 * Starts cmd in a new exec channel (closing any previous one), once sshd
 * has answered the exec request: one round trip in the stats.
 */
int	conn_exec(struct host_conn *c, const char *cmd, struct err *err);
/*
 * Writes all of data to the running command's stdin.  Output that arrives
 * meanwhile is kept for conn_recv(); EREMOTE when the command has gone.
 */
int	conn_send(struct host_conn *c, const void *data, size_t len,
	    struct err *err);
/*
 * Appends to out the stdout bytes that are there, waiting until at least
 * one came; returns 0 with nothing appended at the end of the command's
 * output (then see conn_exit()).  ETIMEOUT when nothing came before the
 * deadline, ETOOBIG past out's cap.  Stderr is drained into the
 * connection's stderr buffer meanwhile.  The first conn_recv() after one
 * or more conn_send() counts one round trip.
 */
int	conn_recv(struct host_conn *c, struct buf *out, struct err *err);
/*
 * As conn_recv(), but also returns 0 with nothing appended as soon as the
 * command's stderr has grown: a caller waiting for a line there compares
 * conn_stderr() with what it saw (unchanged and nothing appended: the end).
 */
int	conn_recv_any(struct host_conn *c, struct buf *out, struct err *err);
/*
 * Closes stdin, waits for the command to exit and closes its channel;
 * *status gets the exit status (-1 when it died by a signal).  Stdout
 * still unread is kept for conn_recv().
 */
int	conn_exit(struct host_conn *c, int *status, struct err *err);
/*
 * The signal that killed the last command, as the server named it in its
 * exit-signal request ("KILL", without "SIG"); NULL when none came.
 */
const char *conn_exit_signal(const struct host_conn *c);
/* What the current or last command wrote to stderr (first 1 MiB). */
const struct buf *conn_stderr(const struct host_conn *c);

/* For controller/ssh/ only: frees the channel, if any (conn_close()). */
void	channel_release(struct host_conn *c);

#endif
