/*
 * conn.h - the state of one SSH connection, shared inside controller/ssh/.
 *
 * Private to controller/ssh/ (the rest of the controller sees struct
 * host_conn as opaque, through session.h and channel.h).  A step
 * names what the connection is doing and sets its deadline; while a step
 * runs, the shared timer cuts the connection's socket at that deadline.
 * conn_fail() is the one place where libssh and SFTP failures become
 * ENVCTL_E* codes.  Used by the connection's owner thread only.
 */
#ifndef ENVCTL_CONTROLLER_SSH_CONN_H
#define ENVCTL_CONTROLLER_SSH_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "common/buf.h"
#include "controller/ssh/session.h"
#include "controller/ssh/timer.h"

/* Channel writes; SFTP writes. */
#define ENVCTL_CONN_CHUNK	(32 * 1024)

struct err;

struct host_conn {
	char		*host;		/* inventory name */
	char		*target;	/* "address:port", for messages, and
					   " through ProxyJump J" */
	char		*known_hosts;	/* the file libssh reads */
	char		*slot_key;	/* its first hop, for startups */
	char		*slot_words;	/* "behind bastion B", for messages */
	struct startups	*startups;	/* holds a slot of it, or NULL */
	int		 timeout;	/* seconds */
	int		 host_timeout;	/* seconds; 0: none */
	long long	 host_deadline;	/* ms; 0: none */
	ssh_session	 session;
	bool		 connected;	/* ssh_connect() succeeded */
	struct ssh_callbacks_struct cb;
	ssh_channel	 chan;
	struct ssh_channel_callbacks_struct chan_cb;
	char		 exit_signal[32]; /* "KILL", or "" */
	char		*cmd;		/* shortened, for messages */
	struct buf	 what;		/* the current step */
	long long	 deadline;	/* of the current step, ms */
	bool		 host_bound;	/* deadline is the host's */
	int		 broken;	/* code that made the connection
					 * unusable, or 0 */
	bool		 sent;		/* sent since the last recv */
	struct buf	 pending;	/* stdout not yet received */
	bool		 overflow;	/* pending hit its cap */
	struct buf	 errbuf;
	struct conn_stats stats;
	/* The watchdog: the shared timer cuts wdfd at the step's deadline. */
	struct timer	*timer;
	struct timer_entry alarm;
	int		 wdfd;		/* our dup of the socket, or -1 */
	bool		 watching;	/* attached to timer */
	/* Keepalives: ServerAliveInterval (ms; 0: none), CountMax. */
	int		 alive_ms;
	int		 alive_max;
	int		 alive_sent;	/* since the host last sent anything */
	long long	 alive_last;	/* then, or the last keepalive, ms */
};

/*
 * Starts a step: names it for messages and arms the deadline, now plus
 * the timeout, or the host's deadline when that comes first.
 */
void	conn_step_begin(struct host_conn *c, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Sets the step's deadline as if it had begun at from (ms). */
void	conn_step_from(struct host_conn *c, long long from);
/* The step made progress: its own timeout starts again. */
void	conn_step_progress(struct host_conn *c);
/* The step is over: nothing cuts the connection until the next one. */
void	conn_step_end(struct host_conn *c);
/* The ms left until the step's deadline; 0 once it passed. */
int	conn_left_ms(const struct host_conn *c);

/*
 * Lets c's steps be cut by timer t: watches a duplicate of fd (the
 * session's socket), closed by conn_unwatch().  ENVCTL_ESYS.
 */
int	conn_watch(struct host_conn *c, struct timer *t, int fd,
	    struct err *err);
/* Ends the connection now (after our own timeout or a fatal error). */
void	conn_cut(struct host_conn *c);
/* Did the timer cut the connection at a deadline? */
bool	conn_fired(struct host_conn *c);
/* Leaves the timer and closes the duplicate; a no-op when not watching. */
void	conn_unwatch(struct host_conn *c);
/* Re-arms the watchdog at c->deadline itself, without grace (closing). */
void	conn_watch_close(struct host_conn *c);

/*
 * While the owner waits for the host: sends a keepalive when one is due
 * (ServerAliveInterval of silence) and lowers *ms to when the next one
 * is; ECONNECT once alive_max of them went unanswered.  A no-op without
 * keepalives.  conn_alive_heard(): the host sent something.
 */
int	conn_keepalive(struct host_conn *c, int *ms, struct err *err);
void	conn_alive_heard(struct host_conn *c);
/*
 * In non-blocking mode, after libssh said "again": waits until the
 * session's socket is readable (or writable with output pending), sending
 * keepalives meanwhile.  ETIMEOUT at the step's deadline, ECONNECT when
 * the connection is gone.
 */
int	conn_wait_io(struct host_conn *c, struct err *err);

/*
 * The one place where libssh failures become envctl errors.  The step
 * that failed is c->what; fmt, when not NULL, says more.  code is the
 * ENVCTL_E* for a failure that is neither a timeout nor a lost connection.
 * A timeout or a lost connection makes the connection unusable.  Returns
 * the code.
 */
int	conn_fail(struct host_conn *c, int code, struct err *err,
	    const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
/* 0, or the code of the earlier timeout or error that broke c. */
int	conn_usable(struct host_conn *c, struct err *err);
/* Appends s quoted for a POSIX shell when it needs quoting (or always). */
void	conn_shquote(struct buf *b, const char *s, bool always);

#endif
