/*
 * report.h - plan and facts results as text for people and JSON for tools.
 *
 * Builds output into buffers from the host_plan results (one result
 * structure for both forms); printing is output.h's job.  Values of
 * secret: true variables are masked everywhere, the diff included.
 * Pure functions; safe to call from the fleet's done() callback.
 */
#ifndef ENVCTL_CONTROLLER_REPORT_H
#define ENVCTL_CONTROLLER_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "controller/plan.h"

struct apply_result;
struct buf;
struct err;
struct host_plan;

#define ENVCTL_MASK	"********"

struct report_opts {
	int		 color;		/* ANSI colours */
	int		 verbose;	/* details for in-sync hosts too */
	int		 quiet;		/* only problems and the summary */
	int		 show_diff;
};

struct plan_counts {
	size_t		 ok, pending, changed, failed, unreachable, skipped;
};

/* Appends the text block for one host (nothing for -q and ok). */
void	report_plan_host(struct buf *out, const struct host_plan *hp,
	    const struct report_opts *ro);
/* Appends the facts block for one host. */
void	report_facts_host(struct buf *out, const struct host_plan *hp,
	    const struct report_opts *ro);
/* Appends one host's apply or rollback result line (and notes). */
void	report_apply_result(struct buf *out, const struct apply_result *ar,
	    const struct report_opts *ro);
/* Adds hp's outcome to c. */
void	report_count(struct plan_counts *c, const struct host_plan *hp);
/* Adds one host of outcome o to c. */
void	report_count_outcome(struct plan_counts *c, enum outcome o);
/* Appends "3 to change, 96 in sync, 1 failed" and a newline. */
void	report_summary(struct buf *out, const struct plan_counts *c,
	    const struct report_opts *ro);
/* An error as every --json shows it: {code, message}, or null (new). */
json_t	*report_err_json(const struct err *err);
/*
 * The --json document of apply or rollback (command): hosts (taken) and
 * the summary of c.
 */
json_t	*report_result_json(const char *command, json_t *hosts,
	    const struct plan_counts *c);
/* One host as a JSON object (the plan --json schema). */
json_t	*report_plan_json(const struct host_plan *hp);

#endif
