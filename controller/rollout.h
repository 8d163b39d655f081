/*
 * rollout.h - canary batches and a fleet-wide failure budget (--serial,
 * --by-group, --max-fail) for the commands that change hosts.
 *
 * Sizes are counts or percentages of the hosts the rollout changes (with
 * --by-group, of a group's), rounded down, at least 1 host a batch; the
 * last size repeats (Ansible's serial:).  The budget is the whole
 * rollout's, exceeded when the failures so far are more than it.  Pure
 * functions; a rollout_spec holds no heap memory, a rollout_run owns its
 * arrays (the names are borrowed).
 */
#ifndef ENVCTL_CONTROLLER_ROLLOUT_H
#define ENVCTL_CONTROLLER_ROLLOUT_H

#include <jansson.h>
#include <stddef.h>

#include "controller/report.h"

struct buf;
struct err;
struct host;
struct inventory;

#define ENVCTL_ROLLOUT_MAXSIZES	64
#define ENVCTL_ROLLOUT_MAXCOUNT	1000000
#define ENVCTL_ROLLOUT_MAXGROUPS 1024

struct rollout_size {
	unsigned	 n;		/* hosts, or percent when percent */
	int		 percent;
};

struct rollout_spec {
	struct rollout_size sizes[ENVCTL_ROLLOUT_MAXSIZES];
	size_t		 nsizes;	/* 0: one batch of every host */
	int		 has_budget;	/* --max-fail was given */
	struct rollout_size max_fail;
	const char	*by_group;	/* --by-group as given; NULL: none */
	size_t		 ngroups;	/* the names in it */
};

struct rollout_batch {
	size_t		 from, to;	/* the engine's rows it spans */
	const char	**names;	/* the hosts, in order (borrowed) */
	size_t		 nhosts;
	const char	*group;		/* --by-group: its group; NULL */
	int		 ran;
	struct plan_counts counts;	/* of its hosts, once each */
};

struct rollout_run {
	const char	**groups;	/* --by-group's, in order (borrowed
					   from the inventory) */
	size_t		 ngroups;	/* 0: one split, in run order */
	struct rollout_batch *batches;
	size_t		 nbatches;
	size_t		 total;		/* hosts in the rollout */
	size_t		 budget;	/* failures allowed; SIZE_MAX: none */
	size_t		 failures;	/* hosts failed or unreachable */
	size_t		 stopped_after;	/* 1-based; 0 when it went through */
};

/*
 * Parses --serial's comma-separated sizes ("1,10%,100%") into rs.
 * ENVCTL_EUSAGE naming the bad size: empty, 0, 0%, over 100%, not
 * decimal, over ENVCTL_ROLLOUT_MAXCOUNT, or more than MAXSIZES sizes.
 */
int	rollout_parse_serial(struct rollout_spec *rs, const char *text,
	    struct err *err);
/* Parses --max-fail's N or P% (0 allowed) into rs; ENVCTL_EUSAGE. */
int	rollout_parse_max_fail(struct rollout_spec *rs, const char *text,
	    struct err *err);
/*
 * Parses --by-group's comma-separated group names into rs (text is
 * borrowed).  ENVCTL_EUSAGE: an empty name, one listed twice, or more
 * than ENVCTL_ROLLOUT_MAXGROUPS.
 */
int	rollout_parse_groups(struct rollout_spec *rs, const char *text,
	    struct err *err);
/*
 * With --by-group, looks rs's groups up in inv into run->groups, and
 * checks that each of hosts[0..n) (those the rollout may change) is in
 * one of them, before any is contacted.  ENVCTL_ENOTFOUND naming a group
 * inv does not have; ENVCTL_EINVALID naming a host in none of them.
 */
int	rollout_groups(struct rollout_run *run, const struct rollout_spec *rs,
	    const struct inventory *inv, const struct host *const *hosts,
	    size_t n, struct err *err);
/*
 * The batch sizes for total hosts, which add up to total (none for 0);
 * a new array of *n entries, the caller frees.
 */
size_t	*rollout_split(const struct rollout_spec *rs, size_t total,
	    size_t *n);
/*
 * Splits the n hosts to change, in run order, into run's batches: group
 * by group of run->groups (a host in the first it is in), else all at
 * once, each by rs's sizes.  Sets run's total, budget and batches, and
 * batch[i] to host i's batch, from 1 (0: in none of the groups).
 */
void	rollout_batches(struct rollout_run *run, const struct rollout_spec *rs,
	    const struct host *const *hosts, size_t n, size_t *batch);
/* The failures allowed across total hosts; SIZE_MAX without a budget. */
size_t	rollout_budget(const struct rollout_spec *rs, size_t total);
/*
 * The question's plan, no newline: ", in batches of 1, 12, 107", or with
 * groups ", by group: rack1 (1, 4, 35), rack2 (1, 8, 71)".
 */
void	rollout_plan_text(struct buf *out, const struct rollout_run *run);
/*
 * "rollout stopped after batch 2 (3 failures > budget 2)", with groups
 * "... batch 5 in group rack2 (...)", no newline.
 */
void	rollout_reason(struct buf *out, const struct rollout_run *run);
/*
 * "batch 2/4: 10 hosts: 9 changed, 1 failed", with groups "batch 5/7 in
 * group rack2: ...", and a newline.
 */
void	rollout_batch_text(struct buf *out, const struct rollout_run *run,
	    size_t i);
/*
 * --json's "rollout": serial, max_fail, by_group, budget, hosts,
 * failures, batches [{index, group, hosts, ok, changed, failed,
 * unreachable, skipped}], stopped_after, reason; a new reference.
 */
json_t	*rollout_json(const struct rollout_spec *rs,
	    const struct rollout_run *run);
void	rollout_run_release(struct rollout_run *run);

#endif
