/*
 * op_rollback.h - the "rollback" op: a chosen backup put back.
 *
 * rollback takes the lock and the compare and swap of apply (change.h),
 * chooses the backup ("latest": the newest whose bytes differ from the
 * file; or an id), backs the current file up, installs the backup's bytes
 * with the mode and owner it recorded, checks them and reports one probe
 * of the restored file (a start-up error is reported, not fatal).
 * Request and reply are in docs/internals.md; argument errors are
 * ENVCTL_EINVALID, a backup not found ENVCTL_ENOTFOUND.
 */
#ifndef ENVCTL_AGENT_OP_ROLLBACK_H
#define ENVCTL_AGENT_OP_ROLLBACK_H

#include <jansson.h>

struct agent_ctx;
struct err;

/* An ops.h handler. */
int	op_rollback(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
