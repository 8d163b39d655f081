/*
 * session.h - opening and closing one SSH connection to one host.
 *
 * conn_open() connects, verifies the host key (strict by default;
 * OpenSSH's accept-new when asked) and authenticates without ever
 * prompting (agent, the given identity, ssh_config IdentityFile).  struct
 * host_conn is opaque outside controller/ssh/; it belongs to one thread at
 * a time, distinct connections may be used by distinct threads at once.
 * Errors carry the host name.
 */
#ifndef ENVCTL_CONTROLLER_SSH_SESSION_H
#define ENVCTL_CONTROLLER_SSH_SESSION_H

struct err;
struct host_conn;
struct startups;

#define ENVCTL_CONN_DEFAULT_TIMEOUT	30	/* s, when timeout <= 0 */

/*
 * NULL or 0 means "from ssh_config" for address, port, user; the given
 * values win over the config.  timeout bounds each step: the connect
 * (TCP, key exchange, host key and authentication together), each wait
 * for output, each write, each SFTP request.  deadline, when not 0, is
 * the whole host's (CLOCK_MONOTONIC ms, common/deadline.h) and
 * host_timeout the seconds it stands for in messages; with deadline 0,
 * host_timeout > 0 sets it to conn_open() + host_timeout.  The wait for a
 * startups slot counts against the deadline, not against timeout.
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
	/*
	 * From the command line (ansible_ssh_common_args): win over
	 * ssh_config, as ssh -o does.  "none" means no proxy.  At most one.
	 */
	const char	*proxy_command;
	const char	*proxy_jump;	/* hops, as ProxyJump takes them */
	/* Keepalives, in seconds; 0: ssh_config's ServerAliveInterval
	 * (and CountMax); alive_interval < 0: none. */
	int		 alive_interval;
	int		 alive_count;
	/* --max-startups: a slot of the first hop's from TCP connect until
	 * authenticated; NULL: no cap. */
	struct startups	*startups;
	int		 timeout;	/* seconds per step */
	int		 host_timeout;	/* seconds in all; 0: none */
	long long	 deadline;	/* of the whole host, ms; 0: none */
};

struct conn_stats {
	int		 channels;	/* exec channels opened */
	int		 round_trips;	/* send -> recv turns */
	int		 keepalives;	/* sent while waiting */
};

/*
 * Process-wide set-up and tear-down of libssh and of the one timer that
 * bounds every connection's steps; call once from the command, before and
 * after every other thread uses the transport.  transport_init() also
 * silences libssh's own logging and ignores SIGPIPE (libssh writes to a
 * ProxyCommand's socket with write(2)).
 */
void	transport_init(void);
void	transport_finish(void);

/*
 * Connects and authenticates; *out is freed with conn_close().  ECONNECT
 * (refused, unreachable), ETIMEOUT (also: no startups slot in time),
 * EINVALID (a malformed ProxyJump), EHOSTKEY (unknown or changed key:
 * before any authentication), EAUTH, ENOTFOUND (a given -F file or
 * identity is missing), EPARSE (ssh_config), ESYS.
 */
int	conn_open(struct host_conn **out, const struct conn_params *p,
	    struct err *err);
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
/* Borrowed; counts of what the connection did so far. */
const struct conn_stats *conn_stats(const struct host_conn *c);
/* Closes channels and the connection; conn_close(NULL) is a no-op. */
void	conn_close(struct host_conn *c);

#endif
