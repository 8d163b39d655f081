/*
 * op_read.h - the "read" op: all a plan needs from one host, in one reply.
 *
 * One interpreter run (probe.h) gives the sitecustomize it imports, the
 * effective values and any start-up error; then the managed file is read
 * with its chain, mode and owner (target.h) and the playbook's checks are
 * made (fscheck.h).  Request and reply are documented in
 * docs/internals.md; argument errors are ENVCTL_EINVALID.
 */
#ifndef ENVCTL_AGENT_OP_READ_H
#define ENVCTL_AGENT_OP_READ_H

#include <jansson.h>

struct agent_ctx;
struct err;

#define ENVCTL_READ_TIMEOUT_MS	10000
#define ENVCTL_READ_TIMEOUT_MAX	3600000

/* An ops.h handler. */
int	op_read(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
