/*
 * readmemo.h - what the session's last read found, for the apply that
 * follows it in the same flight ("after_read").
 *
 * op_read() records every read it answers, failed or not; op_apply()
 * takes the target, the expected bytes and the in-sync test from it when
 * the request names that read.  The memo only ever narrows an apply: it
 * stands for fields the request could have carried itself.  Owns what it
 * holds; one per session, not thread-safe.
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
	int		 clean;		/* the probe started without error */
	json_t		*values;	/* the probe's name -> value */
};

#define READ_MEMO_INIT	{ 0, NULL, 0, NULL, 0, ENVCTL_BUF_INIT, "", 0, NULL }

/*
 * Records read id of interp: ok with path, t and p when the read
 * succeeded with every check passed (checks: its reply's array), else as
 * failed (path, t and p may then be NULL).
 */
void	readmemo_set(struct read_memo *m, json_int_t id, const char *interp,
	    int ok, const char *path, const struct target *t,
	    const struct probe *p, const json_t *checks);
/*
 * 1 when the read found exactly data in place and its probe saw every
 * variable of want (name -> string) with its value: nothing to do.
 */
int	readmemo_in_sync(const struct read_memo *m, const char *data,
	    size_t len, const json_t *want);
void	readmemo_release(struct read_memo *m);

#endif
