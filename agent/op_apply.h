/*
 * op_apply.h - the "apply" op: every local step of a change.
 *
 * apply resolves the symlink chain, locks the real target (lock.h), removes
 * stale temps, compares what is there with what the controller read
 * (compare and swap, by bytes), validates the candidate in the host's own
 * interpreter, backs the old file up (backup.h), replaces it atomically
 * (install.h), verifies in a fresh interpreter and restores the backup when
 * that fails, then prunes old backups; the steps are change.h's.  Request
 * and reply are in docs/internals.md; argument errors are ENVCTL_EINVALID.
 */
#ifndef ENVCTL_AGENT_OP_APPLY_H
#define ENVCTL_AGENT_OP_APPLY_H

#include <jansson.h>

struct agent_ctx;
struct err;

/* An ops.h handler. */
int	op_apply(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
