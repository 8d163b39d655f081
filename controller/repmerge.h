/*
 * repmerge.h - join the reports of a sharded run into the one report of
 * the whole run (envctl report merge).
 *
 * The inputs are --json envelopes (report.h) written with --shard: of one
 * command, inventory digest and playbook digest, every shard once.  The
 * result is the envelope one unsharded run would print: hosts in inventory
 * order, summary and group warnings recomputed, the run's span.  Inputs
 * are borrowed; the result is the caller's.  Pure; thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_REPMERGE_H
#define ENVCTL_CONTROLLER_REPMERGE_H

#include <jansson.h>
#include <stddef.h>

struct err;

struct repmerge_input {
	const char	*name;		/* for messages */
	const json_t	*doc;
};

/*
 * Merges the n envelopes of in into *out (a new reference) and sets
 * *status to the exit status the unsharded run would have had: 1 when a
 * host failed or was unreachable, else 2 when plan or drift left hosts
 * pending, else 0.  Returns 0, or ENVCTL_EPARSE (not an envelope, a field
 * missing), ENVCTL_EINVALID ("'b.json' is a plan report, but 'a.json' is
 * a drift report", another inventory or playbook digest, and
 * shard_check_set()'s messages); *out is NULL then.
 */
int	repmerge_reports(json_t **out, int *status,
	    const struct repmerge_input *in, size_t n, struct err *err);

#endif
