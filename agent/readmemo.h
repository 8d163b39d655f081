/*
 * readmemo.h - what the session's last read found, for the apply that
 * follows it in the same flight ("after_read").
 *
 * op_read() records every read it answers, failed or not; op_apply()
 * takes the target and the expected bytes from it when the request names
 * that read, and judges the read's probe run as a verification would.
 * The memo only ever narrows an apply: it stands for fields the request
 * could have carried itself.  Owns what it holds; one per session, not
 * thread-safe.
 */
#ifndef ENVCTL_AGENT_READMEMO_H
#define ENVCTL_AGENT_READMEMO_H

#include <jansson.h>

#include "common/buf.h"

struct probe;
struct target;

struct read_memo {
	json_int_t	 id;		/* the read's request id; 0: none */
	char		*interp;	/* the interpreter as the read named it */
	int		 ok;		/* it answered ok and every check passed */
	char		*path;		/* the target it resolved (ok only) */
	int		 exists;
	struct buf	 data;		/* the bytes it read (ok, exists) */
	char		 sha256[65];
	struct probe	*probe;		/* its interpreter run (ok only) */
};

#define READ_MEMO_INIT	{ 0, NULL, 0, NULL, 0, ENVCTL_BUF_INIT, "", NULL }

/*
 * Records read id of interp: ok with path, t and p when the read
 * succeeded with every check passed (checks: its reply's array), else as
 * failed (path, t and p may then be NULL).  Kept, p's contents are taken
 * and p is left empty (probe_release() of it is a no-op).
 */
void	readmemo_set(struct read_memo *m, json_int_t id, const char *interp,
	    int ok, const char *path, const struct target *t, struct probe *p,
	    const json_t *checks);
void	readmemo_release(struct read_memo *m);

#endif
