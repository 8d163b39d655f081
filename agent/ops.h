/*
 * ops.h - request dispatch: one handler per "op".
 *
 * ops_handle() answers one decoded request: it checks the envelope (an
 * integer "id", a string "op"), finds the op in a table and lets its
 * handler fill the reply.  A handler adds fields to a reply that already
 * holds "id" and "ok": true; on failure it returns an ENVCTL_E* code with
 * err filled, and may leave a "detail" object in the reply, which the error
 * reply keeps.  Later ops (lock, apply, backup, rollback, verify) are one
 * table line each.  Single-threaded, like the whole agent.
 */
#ifndef ENVCTL_AGENT_OPS_H
#define ENVCTL_AGENT_OPS_H

#include <jansson.h>
#include <signal.h>

struct cache;
struct err;
struct forkserver;
struct read_memo;

/* What every handler may need from main(). */
struct agent_ctx {
	const volatile sig_atomic_t *stop;	/* signal number once asked to
						   stop (SIGHUP/INT/TERM) */
	const sigset_t	*waitmask;	/* mask while blocked waiting */
	struct forkserver *fs;		/* the session's (forkserver.h) */
	struct cache	*cache;		/* the agent's (cache.h) */
	struct read_memo *memo;		/* the last read (readmemo.h), or
					   NULL: none kept */
};

/*
 * Answers req in *reply (a new reference).  Returns 0, or ENVCTL_EPARSE
 * when the envelope is malformed: the reply then says so and the session
 * must end.
 */
int	ops_handle(json_t **reply, const json_t *req,
	    const struct agent_ctx *ctx);
/* An error reply carrying id (a copy), or "id": null when id is NULL. */
json_t	*ops_error_reply(const json_t *id, const struct err *err);

#endif
