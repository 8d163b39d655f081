/*
 * plan.h - one host's plan: what it has, what it should have, the change.
 *
 * A host_plan is one managed file of one host, with the interpreters that
 * import it.  plan_begin() expands the playbook's values for one host;
 * plan_fetch() sends hello and a read per interpreter pipelined on an open
 * agent session (one round trip on a warm host), groups the interpreters
 * by the file they import, and plan_read() renders the desired file
 * against the current one, diffs it, and compares every variable's
 * effective value in every interpreter with the desired one.  Nothing
 * here writes on the host; the session is the engine's (engine.h).  Each
 * host_plan is filled by one worker thread and read by the printer
 * afterwards.
 */
#ifndef ENVCTL_CONTROLLER_PLAN_H
#define ENVCTL_CONTROLLER_PLAN_H

#include <jansson.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/desired.h"
#include "controller/hash.h"
#include "controller/hoststate.h"
#include "controller/layers.h"
#include "controller/transport.h"

struct agentlink;
struct gpufacts;
struct host;
struct host_plan;
struct playbook;

/* Per-host outcome words, the same in every output. */
enum outcome {
	ENVCTL_OUT_OK,		/* in sync: nothing to do */
	ENVCTL_OUT_CHANGED,	/* apply changed it */
	ENVCTL_OUT_PENDING,	/* plan: apply would change it */
	ENVCTL_OUT_FAILED,
	ENVCTL_OUT_UNREACHABLE,	/* connect, host key or authentication */
	ENVCTL_OUT_SKIPPED,
};

struct var_effect {
	const char	*name;		/* borrowed from the playbook */
	const char	*now;		/* effective now; NULL = unset */
	const char	*want;		/* desired; NULL when not expanded */
	int		 secret;
	int		 in_effect;	/* now equals want, in every
					   interpreter */
	/* The first further interpreter that disagrees with now, or 0. */
	size_t		 other;		/* its index (hoststate_interp) */
	const char	*other_now;
};

struct host_plan {
	const struct host *host;
	const char *const *interps;	/* read for this file (borrowed) */
	size_t		 ninterps;
	const char	**names;	/* row 0: owns the rows' interps */
	int		 several;	/* the host has other rows (files) */
	/*
	 * The host's launchers, NCCL files and workers (the first row
	 * only).  Drift there makes the row pending though the file is
	 * right: layer_only says apply has nothing to change.
	 */
	struct layers	 ly;
	int		 layer_only;
	/* Row 0: the host's GPU facts (playbook facts:, envctl facts), and
	   the hello they came with, for plan_fetch(). */
	struct gpufacts	*gf;
	json_t		*hello;
	/* The file's backups, listed with the read when plan_fetch() was
	   given a backup_dir (an agent reply: ok:true, or its error). */
	json_t		*backups;
	enum outcome	 outcome;
	struct err	 err;		/* why failed / unreachable */
	int		 have_state;	/* st and the fields below are valid */
	struct host_state st;
	struct desired	 d;
	char		 want_sha256[ENVCTL_SHA256_HEX];
	int		 file_matches;
	struct var_effect *effects;
	size_t		 neffects;
	int		 all_in_effect;
	int		 checks_failed;
	int		 block_mode;	/* the playbook owns a block only */
	struct buf	 diff;		/* unified diff, current -> desired */
	struct conn_stats stats;
	double		 seconds;
};

/*
 * After plan_begin() of rows[0], reads the host's n interpreters on
 * session l and fills one row per distinct file they import, in the order
 * of their first interpreter, each through plan_read() (further rows are
 * plan_begin()'d here): at most n rows, *nrows says how many.  An
 * interpreter whose read fails has a failed row of its own.  fork asks the
 * agent to start its fork server while it reads (more interpreter runs
 * follow on this session); backup_dir, when not NULL, asks each read for
 * the backups of its file there (hp->backups: rollback and backups need
 * no round trip more).  then, when not NULL, is sent after the reads in
 * the same flight (a change that follows them); its reply is left on l
 * for the caller.  Returns 0 or the first row's error code; every row's
 * is in its err (the host's name is the caller's to add).
 */
/* The id of plan_fetch()'s first read, which a change sent with it names. */
#define PLAN_READ_ID	2

int	plan_fetch(struct host_plan **rows, size_t *nrows, struct agentlink *l,
	    const struct playbook *pb, const char *const *interps, size_t n,
	    int fork, const char *backup_dir, const json_t *then);
/*
 * plan_fetch() without the network, for tests and fuzzing: plan_begin()
 * sets hp (zeroed) up for h and expands its values (outcome failed and
 * hp->err on error); plan_read() then takes the agent's ok:true hello and
 * read replies, exactly as sent by a host, and fills the rest.  Both
 * return 0 or the error code recorded in hp->err.
 */
int	plan_begin(struct host_plan *hp, const struct host *h,
	    const struct playbook *pb);
/*
 * The host's GPU facts (mask: ENVCTL_GPUFACTS_*) on session l, before
 * anything else (hello and gpufacts pipelined: one round trip), kept in
 * hp; then plan_begin() with them as template variables.  Returns 0 or
 * the error recorded in hp->err (unreachable errors are the caller's).
 */
int	plan_facts(struct host_plan *hp, struct agentlink *l,
	    const struct host *h, const struct playbook *pb, unsigned mask,
	    const char *const *interps, size_t n);
int	plan_read(struct host_plan *hp, const struct playbook *pb,
	    const json_t *hello, const json_t *const *reads, size_t n);
void	plan_release(struct host_plan *hp);
/* "ok", "changed", "pending", "failed", "unreachable", "skipped". */
const char *outcome_name(enum outcome o);

#endif
