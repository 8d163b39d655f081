/*
 * op_apply.h - the "apply" and "rollback" ops: every local step of a change.
 *
 * apply resolves the symlink chain, locks the real target (lock.h), removes
 * stale temps, compares what is there with what the controller read
 * (compare and swap, by bytes), validates the candidate in the host's own
 * interpreter, backs the old file up (backup.h), replaces it atomically
 * (install.h), verifies in a fresh interpreter and restores the backup when
 * that fails, then prunes old backups.  rollback takes the same lock and
 * compare-and-swap, backs the current file up, installs a chosen backup
 * with its mode and owner, checks it and reports one probe.  Requests and
 * replies are in docs/internals.md; argument errors are ENVCTL_EINVALID.
 */
#ifndef ENVCTL_AGENT_OP_APPLY_H
#define ENVCTL_AGENT_OP_APPLY_H

#include <jansson.h>

struct agent_ctx;
struct err;

#define ENVCTL_APPLY_TIMEOUT_MS		30000
#define ENVCTL_APPLY_LOCK_TIMEOUT_MS	30000
#define ENVCTL_APPLY_TIMEOUT_MAX	3600000
#define ENVCTL_APPLY_LABEL_MAX		256

/* ops.h handlers. */
int	op_apply(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);
int	op_rollback(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
