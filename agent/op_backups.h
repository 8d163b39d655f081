/*
 * op_backups.h - the "backups" op: the backups of one managed file.
 *
 * Lists the complete backups of the path's real target, newest first, each
 * as its stored metadata (backup.h), and names the damaged ones it skipped.
 * Read only: it takes no lock and removes nothing.  Request and reply are
 * in docs/internals.md; argument errors are ENVCTL_EINVALID.
 */
#ifndef ENVCTL_AGENT_OP_BACKUPS_H
#define ENVCTL_AGENT_OP_BACKUPS_H

#include <jansson.h>

struct agent_ctx;
struct err;

/* An ops.h handler. */
int	op_backups(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
