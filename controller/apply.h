/*
 * apply.h - change one host: the controller's half of apply and rollback.
 *
 * The controller only decides and reports; every step on the host (lock,
 * compare-and-swap, validation, backup, temp file, fsync, rename, directory
 * fsync, verification, restore) runs inside envctl-agent.  apply_host()
 * sends one "apply" (or "rollback") request over a fresh agent session and
 * records the outcome: changed, ok (nothing to do), or failed with the
 * agent's reason (ECHANGED "changed since plan", ELOCKED, EVERIFY...).
 */
#ifndef ENVCTL_CONTROLLER_APPLY_H
#define ENVCTL_CONTROLLER_APPLY_H

#include <jansson.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/hash.h"
#include "controller/plan.h"

struct agentlink;
struct agentlink_opts;
struct host;
struct planfile_host;
struct playbook;

/* What to write and what must be there first. */
struct apply_input {
	const char	*path;		/* as the interpreter imports it */
	/*
	 * The interpreters that import it (borrowed): the first validates
	 * and verifies, each further one too.  n = 0: the host's own.
	 */
	const char *const *interps;
	size_t		 ninterps;
	int		 expect_exists;
	const char	*expect;	/* bytes read by plan */
	size_t		 expect_len;
	const char	*expect_sha256;	/* "" when absent */
	const char	*data;		/* bytes to install */
	size_t		 len;
	const char	*sha256;
	const struct desired *d;	/* the values the file must produce */
	const char	*rollback_to;	/* rollback: backup id or "latest" */
	/*
	 * Not 0: sent with the read of that id, in the same flight.  The
	 * agent takes the path and the expected bytes from what that read
	 * found (path and expect are unused), and skips the change where
	 * the read failed or found the file already as wanted.
	 */
	long long	 after_read;
};

struct apply_result {
	const struct host *host;
	enum outcome	 outcome;	/* changed, ok, failed, unreachable */
	struct err	 err;
	char		*backup_id;	/* of the file that was replaced */
	char		*restored_id;	/* rollback: what was put back */
	char		*startup_error;	/* rollback: the restored file raises */
	char		*warning;	/* done, but e.g. old backups stayed */
	char		*note;		/* ok, e.g. another run converged it */
	int		 restored;	/* apply: verification failed, undone */
	struct conn_stats stats;
};

struct apply_opts {
	const struct agentlink_opts *link;
	int		 lock_timeout;	/* seconds */
	int		 change_timeout; /* s: the change's waits and runs */
	const char	*controller;	/* this machine's name, for metadata */
	const char	*fault;		/* test-only: $ENVCTL_TEST_FAULT */
};

/*
 * The bound of a change's waits and interpreter runs: --timeout, but at
 * least the host lock's wait plus 10 s for the two interpreter runs.
 */
int	apply_change_timeout(int timeout, int lock_timeout);
/* Fills in from a plan: what it read, what it rendered (borrowed). */
void	apply_input_from_plan(struct apply_input *in,
	    const struct host_plan *hp);
/*
 * Fills in from a plan file's pending host: the bytes it read and those
 * it is to write (borrowed); d, re-rendered today, gives the values.
 */
void	apply_input_from_planfile(struct apply_input *in,
	    const struct planfile_host *ph, const struct desired *d);
/* Applies in to host h; never fails: see ar->outcome and ar->err. */
void	apply_host(struct apply_result *ar, const struct host *h,
	    const struct playbook *pb, const struct apply_input *in,
	    const struct apply_opts *o);
/*
 * Fills ar (host set, the rest zeroed) from the agent's reply to "apply"
 * or "rollback", as a host sent it: ok:false is failed with the agent's
 * error (and whether the old file was restored), else changed or ok.
 */
void	apply_reply(struct apply_result *ar, const json_t *reply);
/* As apply_host, on an agent session that is already open. */
void	apply_on(struct apply_result *ar, struct agentlink *l,
	    const struct host *h, const struct playbook *pb,
	    const struct apply_input *in, const struct apply_opts *o);
/*
 * The request (id id) for in with in->after_read set, to send with that
 * read (new reference): the agent gets the change's whole time from then.
 */
json_t	*apply_request_after_read(const struct host *h,
	    const struct playbook *pb, const struct apply_input *in,
	    const struct apply_opts *o, long long id);
/*
 * Takes the reply to apply_request_after_read() on l into ar: 0 when it
 * stands for the change (made, failed, or unneeded), 1 when the agent
 * skipped it as the read failed or found the file as wanted.  A reply
 * that cannot be read is a failed change.
 */
int	apply_take_after_read(struct apply_result *ar, struct agentlink *l,
	    const struct host *h, const struct apply_opts *o);
void	apply_result_release(struct apply_result *ar);

#endif
