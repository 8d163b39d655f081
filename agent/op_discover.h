/*
 * op_discover.h - the "discover" op: every Python interpreter on the host
 * that may run workers, and what each imports at start-up.
 *
 * Candidates come from running processes, systemd units' ExecStart=,
 * venvs, conda environments, uv, pyenv, /opt and the system's bin
 * directories (docs/worker-env.md); each is probed once with the read's
 * probe (probe.h).  Discovery only reads directories and files.  Bounded:
 * candidates, directory entries, the request's timeout_ms for the whole
 * op and ENVCTL_DISCOVER_RUN_MS per run.  A privileged agent probes only
 * what policy_interpreter() allows and refuses "roots".  Request and reply
 * are in docs/internals.md; argument errors are ENVCTL_EINVALID.
 */
#ifndef ENVCTL_AGENT_OP_DISCOVER_H
#define ENVCTL_AGENT_OP_DISCOVER_H

#include <jansson.h>

struct agent_ctx;
struct err;

#define ENVCTL_DISCOVER_TIMEOUT_MS	20000	/* default timeout_ms */
#define ENVCTL_DISCOVER_MAX	64	/* default "max" candidates */
#define ENVCTL_DISCOVER_MAX_CAP	256	/* the largest "max" */
#define ENVCTL_DISCOVER_ENTRIES	50000	/* directory entries read */
#define ENVCTL_DISCOVER_USERS	4096	/* homes from the user database */
#define ENVCTL_DISCOVER_ROOTS	16	/* "roots" in one request */
#define ENVCTL_DISCOVER_RUN_MS	5000	/* one interpreter run, at most */
#define ENVCTL_DISCOVER_RUN_MIN	300	/* less left: not probed */
#define ENVCTL_DISCOVER_UNIT_MAX	(64u * 1024)	/* bytes of a unit */

/* An ops.h handler. */
int	op_discover(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
