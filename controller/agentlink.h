/*
 * agentlink.h - a session with envctl-agent on one host.
 *
 * Over SSH, the agent is started from the host's per-user cache
 * (/var/lib/envctl/agent for root, ~/.cache/envctl/agent otherwise) under
 * its SHA-256 name, by one exec that carries the requests sent before
 * the first receive; when it is not there yet, the bootstrap says so and
 * waits, the link sends it on the same channel, and the bootstrap checks
 * its digest, installs and starts it: the caller only sees requests and
 * replies.  With ansible_connection: local the same agent runs as a child
 * process.  Requests may be pipelined: send several, then receive their
 * replies in order.  A link whose requests are all answered closes
 * without waiting for the agent's exit.  One link belongs to one thread;
 * errors carry the host name.
 */
#ifndef ENVCTL_CONTROLLER_AGENTLINK_H
#define ENVCTL_CONTROLLER_AGENTLINK_H

#include <jansson.h>
#include <stddef.h>

#include "controller/hash.h"

struct conn_stats;
struct err;
struct host;
struct agentlink;
struct startups;

/* The agent program this envctl ships, read once per run. */
struct agent_binary {
	char		*path;
	char		*data;
	size_t		 len;
	char		 sha256[ENVCTL_SHA256_HEX];
	const char	*arch;		/* uname -m name, e.g. "x86_64" */
};

struct agentlink_opts {
	const struct agent_binary *agent;
	const char	*ssh_config;	/* -F, or NULL */
	const char	*known_hosts;	/* --known-hosts, or NULL */
	int		 accept_new;
	int		 timeout;	/* seconds */
	int		 max_startups;	/* --max-startups */
	/* Its slots, shared by every link of a run (startups.h); NULL: no
	 * cap.  The caller makes it around the fleet's run. */
	struct startups	*startups;
};

/*
 * Finds and reads the agent: path if not NULL, else $ENVCTL_AGENT, else
 * envctl-agent beside the running envctl, else the installed libexec copy.
 * ENVCTL_ENOTFOUND lists where it looked.  Release with agent_binary_release.
 */
int	agent_binary_load(struct agent_binary *ab, const char *path,
	    struct err *err);
void	agent_binary_release(struct agent_binary *ab);

/* Connects to h and starts the agent; *out is freed by agentlink_close. */
int	agentlink_open(struct agentlink **out, const struct host *h,
	    const struct agentlink_opts *o, struct err *err);
/* Sends one request (not waiting for its reply). */
int	agentlink_send(struct agentlink *l, const json_t *req, struct err *err);
/*
 * Receives the next reply into *reply (a new reference).  An ok:false
 * reply is returned as such: use proto_reply_error() to read it.
 */
int	agentlink_recv(struct agentlink *l, json_t **reply, struct err *err);
/*
 * The link has one deadline for the whole host, fixed by agentlink_open()
 * (now + o->timeout) and never moved by what the host sends.  This moves
 * it to now + seconds when that is later and seconds is longer than the
 * link's own timeout: for a request that takes long on the host (a
 * change waits for the host's lock and runs the interpreter twice).
 */
void	agentlink_set_timeout(struct agentlink *l, int seconds);
/*
 * As agentlink_set_timeout(), even when seconds is not longer than the
 * link's timeout: for a change that went with the read, which the agent
 * gives its whole time from when it takes it, after the read.
 */
void	agentlink_extend(struct agentlink *l, int seconds);
/*
 * The ms the agent may spend on a request sent now: what is left of the
 * deadline less the controller's margin (deadline_host_ms()), so that the
 * agent's own failure arrives before the controller gives up.
 */
int	agentlink_host_ms(const struct agentlink *l);
/* Channels, SFTP sessions and round trips used so far (zeros for local). */
void	agentlink_stats(const struct agentlink *l, struct conn_stats *out);
/* Ends the agent (EOF on its stdin) and the connection. */
void	agentlink_close(struct agentlink *l);

#endif
