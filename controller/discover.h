/*
 * discover.h - `envctl facts --discover`: every Python interpreter on each
 * host that may run workers (the agent's "discover" op).
 *
 * discover_fleet() runs one agent session per selected host on the fleet
 * runner (hello and discover pipelined), parses each reply strictly into
 * a struct discover_host (every field checked; anything else fails that
 * host with ENVCTL_EPARSE) and prints each host's table whole, in
 * inventory order, or the --json envelope at the end: text and JSON come
 * from the same structure.  Strings from a host are kept as sent and
 * escaped when printed.  Host jobs run on fleet threads, each touching
 * only its own discover_host.
 */
#ifndef ENVCTL_CONTROLLER_DISCOVER_H
#define ENVCTL_CONTROLLER_DISCOVER_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "controller/plan.h"

struct buf;
struct context;
struct engine_policy;

#define ENVCTL_DISCOVER_MAX_CANDS	256	/* the agent's largest "max" */
#define ENVCTL_DISCOVER_STR_MAX		8192	/* bytes of one string */

/* One interpreter as the agent found it; NULL members were null. */
struct discover_interp {
	char		*path;		/* as users would write it */
	char		*real;		/* the executable, resolved */
	char		*kind;		/* system, venv, uv-venv, uv, conda,
					   pyenv, other */
	char		**sources;	/* where it was found */
	size_t		  nsources;
	int		  probed;	/* the interpreter ran */
	char		*executable;	/* sys.executable */
	char		*version;
	char		*site;		/* the sitecustomize it imports */
	char		*site_real;	/* ... resolved */
	char		*would_create;	/* none: where envctl would create it */
	char		*startup_error;	/* Python's "Error in sitecustomize" */
	char		*failed;	/* start-up never finished: why */
	char		*error;		/* not probed, or the probe failed */
};

struct discover_host {
	const char	*name;
	enum outcome	 outcome;	/* ok, failed or unreachable */
	struct err	 err;
	int		 privileged;	/* the agent runs as root via sudo */
	long long	 entries;	/* directory entries it read */
	char		*truncated;	/* why the list is incomplete */
	struct discover_interp *interps;
	size_t		 ninterps;
};

/* The discover request (a new reference); timeout_ms for the whole op. */
json_t	*discover_request(json_int_t id, int timeout_ms);
/*
 * Parses the agent's ok reply into dh (which the caller zeroed; release it
 * with discover_host_release() in any case).  ENVCTL_EPARSE names the
 * first member that is missing or wrong, e.g. "agent reply:
 * 'candidates[2].kind' is not a kind envctl knows".
 */
int	discover_parse(struct discover_host *dh, const json_t *reply,
	    struct err *err);
/* Appends the host's block: the table and the interpreters: hint. */
void	discover_text(struct buf *out, const struct discover_host *dh);
/* The host as a --json object (a new reference). */
json_t	*discover_json(const struct discover_host *dh);
void	discover_host_release(struct discover_host *dh);
/*
 * Runs discovery on ctx's selected hosts with p's link and output options,
 * printing as hosts finish (text) or once at the end (p->json).  Returns 0
 * when every host was read, 1 when one failed or was unreachable, or a
 * negative ENVCTL_E* code (after printing why) when it could not start.
 */
int	discover_fleet(const struct engine_policy *p,
	    const struct context *ctx);

#endif
