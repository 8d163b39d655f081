/*
 * transport.h - one SSH connection to one host (the only libssh user).
 *
 * conn_open() connects, verifies the host key (strict by default; OpenSSH's
 * accept-new when asked) and authenticates without ever prompting (agent,
 * the given identity, ssh_config IdentityFile).  A connection then runs one
 * exec channel at a time, speaking raw bytes, and can upload a file through
 * SFTP.  Every blocking step is bounded by its own timeout and by the
 * deadline of the whole host (--timeout: fixed when the host's job
 * starts, never moved by progress, so a host that drips its bytes is cut
 * all the same), including SFTP, which libssh leaves unbounded: a
 * watchdog thread cuts the socket of a stalled connection.  A timed-out
 * connection is unusable afterwards.  A struct host_conn belongs to one
 * thread at a time; distinct connections may be used by distinct threads
 * at once.
 * Errors: ENVCTL_ECONNECT, ENVCTL_EHOSTKEY, ENVCTL_EAUTH, ENVCTL_ETIMEOUT,
 * ENVCTL_EREMOTE (plus ENOTFOUND, ESYS, ETOOBIG...), with the host name set.
 */
#ifndef ENVCTL_CONTROLLER_TRANSPORT_H
#define ENVCTL_CONTROLLER_TRANSPORT_H

#include <stddef.h>

struct buf;
struct err;
struct host_conn;

#define ENVCTL_CONN_DEFAULT_TIMEOUT	30	/* s, when timeout <= 0 */

/*
 * NULL or 0 means "from ssh_config" for address, port, user; the given
 * values win over the config.  timeout bounds each step: the connect
 * (TCP, key exchange, host key and authentication together), each wait
 * for output, each write, each SFTP request.  deadline, when not 0, is
 * the whole host's (CLOCK_MONOTONIC ms, common/deadline.h) and
 * host_timeout the seconds it stands for in messages; with deadline 0,
 * host_timeout > 0 sets it to conn_open() + host_timeout.
 */
struct conn_params {
	const char	*host;		/* inventory name */
	const char	*address;	/* ansible_host */
	int		 port;		/* ansible_port */
	const char	*user;		/* ansible_user */
	const char	*identity;	/* ansible_ssh_private_key_file */
	const char	*ssh_config;	/* -F FILE; NULL: ~/.ssh/config */
	const char	*known_hosts;	/* NULL: ssh_config's */
	int		 accept_new;	/* --accept-new-host-keys */
	int		 timeout;	/* seconds per step */
	int		 host_timeout;	/* seconds in all; 0: none */
	long long	 deadline;	/* of the whole host, ms; 0: none */
};

struct conn_stats {
	int		 channels;	/* exec channels opened */
	int		 sftp_sessions;
	int		 round_trips;	/* send -> recv turns */
};

/*
 * Process-wide set-up and tear-down of libssh; call once from main, before
 * and after every other thread uses the transport.  transport_init() also
 * silences libssh's own logging and ignores SIGPIPE (libssh writes to a
 * ProxyCommand's socket with write(2)).
 */
void	transport_init(void);
void	transport_finish(void);

/*
 * Connects and authenticates; *out is freed with conn_close().  ECONNECT
 * (refused, unreachable), ETIMEOUT, EHOSTKEY (unknown or changed key:
 * before any authentication), EAUTH, ENOTFOUND (a given -F file or
 * identity is missing), EPARSE (ssh_config).
 */
int	conn_open(struct host_conn **out, const struct conn_params *p,
	    struct err *err);
/* Starts cmd in a new exec channel (closing any previous one). */
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
/* The per-step timeout of the steps that follow (<= 0: the default). */
void	conn_set_timeout(struct host_conn *c, int seconds);
/*
 * Moves the whole host's deadline (CLOCK_MONOTONIC ms; 0: none), which
 * messages call a limit of seconds: for a request that has a longer
 * budget of its own (a change).  Nothing else ever moves it.
 */
void	conn_set_deadline(struct host_conn *c, long long deadline,
	    int seconds);
/* The whole host's deadline (0: none). */
long long conn_deadline(const struct host_conn *c);
/* What the current or last command wrote to stderr (first 1 MiB). */
const struct buf *conn_stderr(const struct host_conn *c);
/*
 * Uploads data to dir/name through SFTP (one SFTP session per connection,
 * opened on first use): creates dir (mode 0700, parents too; relative to
 * the login directory unless absolute), creates a temporary name in dir
 * with mode (less the SFTP server's umask), writes it in chunks as large
 * as the server takes, then renames it into place.  An existing
 * dir/name is left as it is (content-addressed names); the temporary file
 * is removed on any failure the connection survives.
 */
int	conn_upload(struct host_conn *c, const char *dir, const char *name,
	    const void *data, size_t len, int mode, struct err *err);
const struct conn_stats *conn_stats(const struct host_conn *c);
/* Closes channels and the connection; conn_close(NULL) is a no-op. */
void	conn_close(struct host_conn *c);

#endif
