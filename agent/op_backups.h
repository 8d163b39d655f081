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
struct policy;

/*
 * Sets "real", "dir", "backups" and "ignored" in out: the backups kept in
 * dir (which pol must allow) of the file whose real path is real.  Also a
 * read's, when it asks for them (rollback needs no second round trip).
 */
int	op_backups_list(json_t *out, struct policy *pol, const char *dir,
	    const char *real, struct err *err);
/* An ops.h handler. */
int	op_backups(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
