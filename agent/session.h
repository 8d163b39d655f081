/*
 * session.h - one agent session: request frames in, reply frames out.
 *
 * session_run() reads frames from in until EOF and answers each, in order,
 * with one write() of one frame to out; frames given at the start (from
 * the command line: the requests that came with the exec) come first, as
 * if read from in.  Input is buffered up to one
 * largest frame.  A malformed frame (bad length, bad JSON, no integer "id"
 * or string "op", cut short by EOF) gets an error reply, with "id": null
 * when no id can be read, and ends the session.  Diagnostics go to stderr.
 */
#ifndef ENVCTL_AGENT_SESSION_H
#define ENVCTL_AGENT_SESSION_H

#include <stddef.h>

struct agent_ctx;

/*
 * Returns the agent's exit status: 0 at EOF, 2 after a malformed frame,
 * 1 when reading or writing failed, 128 + N when signal N stopped it.
 */
int	session_run(int in, int out, const char *first, size_t firstlen,
	    const struct agent_ctx *ctx);

#endif
