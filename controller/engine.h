/*
 * engine.h - the per-host job engine: read a host, then change it.
 *
 * The library drives, a command supplies policy (git's
 * run_processes_parallel): engine_run() opens each host's session, sends
 * hello and read pipelined, decides, makes the change on the same session
 * (or, when the policy asks first, on a fresh one after "VERB N hosts?
 * [y/N]"), closes, and prints each host's block whole, in run order,
 * through fleet_run().  With --serial (rollout.h) every change waits for
 * the whole read, then runs batch by batch on fresh sessions, and stops
 * past the failure budget.  The policy is data: which change, its
 * options, whether to ask, the batches.  The change steps are apply.c's and backups.c's; the
 * texts and JSON are report.c's.  One engine per run, on one thread; its
 * host jobs run on fleet threads, each touching only its own
 * engine_host.  Release with engine_release() in every case.
 */
#ifndef ENVCTL_CONTROLLER_ENGINE_H
#define ENVCTL_CONTROLLER_ENGINE_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "controller/agentlink.h"
#include "controller/apply.h"
#include "controller/backups.h"
#include "controller/consistency.h"
#include "controller/desired.h"
#include "controller/plan.h"
#include "controller/report.h"
#include "controller/rollout.h"

struct context;
struct planfile;
struct planfile_host;

/* What is printed, and the shape of a host in --json. */
enum engine_cmd {
	ENVCTL_CMD_PLAN,
	ENVCTL_CMD_FACTS,
	ENVCTL_CMD_APPLY,
	ENVCTL_CMD_DRIFT,
	ENVCTL_CMD_ROLLBACK,
	ENVCTL_CMD_BACKUPS,
};

/* The change made on a host once it is read. */
enum engine_change {
	ENVCTL_CHANGE_NONE,		/* read only */
	ENVCTL_CHANGE_APPLY,		/* pending hosts get the desired file */
	ENVCTL_CHANGE_FIX,		/* as APPLY; the read starts no fork
					   server (most hosts are in sync) */
	ENVCTL_CHANGE_ROLLBACK,		/* list backups, restore policy.to */
	ENVCTL_CHANGE_BACKUPS,		/* list backups */
};

struct engine_policy {
	enum engine_cmd	 cmd;
	enum engine_change change;
	const char	*to;		/* ROLLBACK: an id or "latest" */
	/*
	 * Ask "verb N hosts? [y/N]" on the terminal between the read and the
	 * change, which then runs on a fresh session; else the change runs
	 * on the session that read the host (one connection per host).
	 */
	int		 ask;
	const char	*verb;		/* "Apply to", "Roll back" */
	/*
	 * --serial, --by-group: the hosts to change are changed batch by
	 * batch (group by group), after the whole fleet is read (and the
	 * question asked once), each on a fresh session; past the budget
	 * the rest are skipped.  NULL: one batch.
	 */
	const struct rollout_spec *rollout;
	int		 declined_summary; /* a "no" still prints the summary */
	int		 pending_exit;	/* pending hosts left: exit 2 (cmd.h) */
	/* apply PLANFILE: the hosts and the bytes come from the plan. */
	const struct planfile *plan;
	const char	*plan_path;	/* the plan's name in messages */
	const char	*inventory;	/* as given, for --json */
	struct apply_opts ao;		/* ao.link is the engine's */
	struct agentlink_opts link;	/* link.agent is the engine's */
	struct report_opts ro;
	int		 json;
	int		 verbose;	/* DRIFT: each drifted host's block */
	int		 progress;	/* "N/M hosts done" on stderr */
	int		 forks;
	char		 controller[256]; /* this machine, for ao.controller */
};

/*
 * One row of the run: a managed file of a host.  A host whose interpreters
 * import several files has a row per file, next to each other; the first
 * (the leader) holds one slot per interpreter, reads the host on one
 * session and fills the others.  Slots beyond the files found are unused,
 * and appear nowhere.
 */
struct engine_host {
	const char	*name;
	const struct host *host;	/* NULL: a plan's host not changed */
	const char *const *interps;	/* leader: every one to read */
	size_t		 ninterps;
	size_t		 nrows;		/* leader: its slots, itself first */
	int		 follower;	/* a slot of the leader before it */
	int		 unused;	/* a slot no file needed */
	enum outcome	 outcome;	/* final, as every output says it */
	enum outcome	 found;		/* what the read found */
	int		 read;		/* hp is valid */
	struct host_plan hp;
	int		 chosen;	/* a change was decided */
	int		 tried;		/* the change ran: ar says how */
	int		 waits;		/* chosen; the change waits for the
					   whole fleet's read */
	int		 sent;		/* a change went with the read; its
					   reply is still on the session */
	size_t		 batch;		/* 1-based batch of its change; 0 */
	struct apply_input in;
	struct apply_result ar;
	struct backup_list bl;		/* ROLLBACK, BACKUPS */
	char		*to;		/* ROLLBACK: the chosen backup */
	struct err	 err;		/* deciding failed */
	const struct planfile_host *ph;	/* apply PLANFILE */
	struct desired	 d;		/* re-rendered from today's inputs */
};

struct engine {
	const struct engine_policy *p;
	const struct context *ctx;
	struct agent_binary ab;
	struct agentlink_opts link;	/* p->link with the agent */
	struct apply_opts ao;		/* p->ao with link */
	struct engine_host *hosts;	/* in run order */
	size_t		 nhosts;
	struct host_plan **plans;	/* the read hosts' plans, in order */
	size_t		 nplans;
	struct plan_counts counts;	/* of the final outcomes */
	struct consistency groups;	/* plan, drift: NCCL values that
					   differ inside a group */
	int		 asked_no;	/* the operator answered no */
	int		 phase;		/* 1 read (and change), 2 change */
	size_t		 cur_batch;	/* phase 2: the batch that runs */
	struct rollout_run run;		/* the batches of phase 2 */
};

/*
 * Runs policy p over ctx's selected hosts (or p->plan's) and prints as it
 * goes; e is zeroed by the caller and borrows p and ctx until released.
 * Returns 0 when the run went through (the hosts' own failures are in
 * e->counts, a rollout's batches and stop in e->run; e->asked_no when
 * the operator said no); after printing why,
 * ENVCTL_EUSAGE when it had to ask and stdin is no terminal, or the error
 * that kept it from starting: agent_binary_load()'s, ENVCTL_ENOTFOUND for
 * a plan's host the inventory no longer has, rollout_groups()'s for
 * --by-group (nothing was contacted).
 */
int	engine_run(struct engine *e, const struct engine_policy *p,
	    const struct context *ctx);
/*
 * The run as the one --json envelope (format, command, inventory,
 * playbook, summary, hosts; rollout with --serial); a new reference.
 */
json_t	*engine_json(const struct engine *e);
void	engine_release(struct engine *e);

#endif
