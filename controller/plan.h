/*
 * plan.h - one host's plan: what it has, what it should have, the change.
 *
 * plan_begin() expands the playbook's values for one host; plan_fetch()
 * sends hello and read pipelined on an open agent session (one round trip
 * on a warm host) and plan_read() renders the desired file against the
 * current one, diffs it, and compares every variable's effective value
 * with the desired one.  Nothing here writes on the host; the session is
 * the engine's (engine.h).  Each host_plan is filled by one worker thread
 * and read by the printer afterwards.
 */
#ifndef ENVCTL_CONTROLLER_PLAN_H
#define ENVCTL_CONTROLLER_PLAN_H

#include <jansson.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/desired.h"
#include "controller/hash.h"
#include "controller/hoststate.h"
#include "controller/transport.h"

struct agentlink;
struct host;
struct host_plan;
struct playbook;

/* Per-host outcome words, the same in every output. */
enum outcome {
	ENVCTL_OUT_OK,		/* in sync: nothing to do */
	ENVCTL_OUT_CHANGED,	/* apply changed it */
	ENVCTL_OUT_PENDING,	/* plan: apply would change it */
	ENVCTL_OUT_FAILED,
	ENVCTL_OUT_UNREACHABLE,	/* connect, host key or authentication */
	ENVCTL_OUT_SKIPPED,
};

struct var_effect {
	const char	*name;		/* borrowed from the playbook */
	const char	*now;		/* effective now; NULL = unset */
	const char	*want;		/* desired; NULL when not expanded */
	int		 secret;
	int		 in_effect;	/* now equals want */
};

struct host_plan {
	const struct host *host;
	enum outcome	 outcome;
	struct err	 err;		/* why failed / unreachable */
	int		 have_state;	/* st and the fields below are valid */
	struct host_state st;
	struct desired	 d;
	char		 want_sha256[ENVCTL_SHA256_HEX];
	int		 file_matches;
	struct var_effect *effects;
	size_t		 neffects;
	int		 all_in_effect;
	int		 checks_failed;
	int		 block_mode;	/* the playbook owns a block only */
	struct buf	 diff;		/* unified diff, current -> desired */
	struct conn_stats stats;
	double		 seconds;
};

/*
 * After plan_begin(), reads the host on session l and fills the rest of hp
 * through plan_read(); fork asks the agent to start its fork server (more
 * interpreter runs follow on this session).  Returns 0 or the error code
 * recorded in hp->err (the host's name is the caller's to add).
 */
int	plan_fetch(struct host_plan *hp, struct agentlink *l,
	    const struct playbook *pb, int fork);
/*
 * plan_fetch() without the network, for tests and fuzzing: plan_begin()
 * sets hp (zeroed) up for h and expands its values (outcome failed and
 * hp->err on error); plan_read() then takes the agent's ok:true hello and
 * read replies, exactly as sent by a host, and fills the rest.  Both
 * return 0 or the error code recorded in hp->err.
 */
int	plan_begin(struct host_plan *hp, const struct host *h,
	    const struct playbook *pb);
int	plan_read(struct host_plan *hp, const struct playbook *pb,
	    const json_t *hello, const json_t *read);
void	plan_release(struct host_plan *hp);
/* "ok", "changed", "pending", "failed", "unreachable", "skipped". */
const char *outcome_name(enum outcome o);

#endif
