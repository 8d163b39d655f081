/*
 * report.h - every command's results as text for people and JSON for tools.
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
struct host_state;
struct inventory;
struct playbook;
struct shard;

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
 * The one --json envelope of every command: format 1, command, inventory
 * (as given; null when unknown), playbook {name, path}, summary (ok,
 * changed, pending, failed, unreachable, skipped) and hosts (taken).
 */
json_t	*report_envelope(const char *command, const char *inventory,
	    const struct playbook *pb, const struct plan_counts *c,
	    json_t *hosts);
/*
 * Adds what lets `envctl report merge` join the envelopes of a sharded run
 * (repmerge.h): inventory_sha256, playbook.sha256 (null when the file
 * cannot be read again), shard ({index, count}, null when not sharded),
 * and to each host its inventory_index and groups (by its name in inv).
 */
void	report_envelope_shard(json_t *doc, const struct inventory *inv,
	    const struct playbook *pb, const struct shard *s);
/*
 * One host of apply --json: name, outcome, backup, restored, warning,
 * error, stats; ar NULL for a host not changed (err: why it failed when
 * read); stats NULL for a host not reached.
 */
json_t	*report_apply_json(const char *name, enum outcome o,
	    const struct apply_result *ar, const struct err *err,
	    const struct conn_stats *stats);
/*
 * One host of rollback --json: name, outcome, restored (to, when it
 * changed), backup, startup_error, warning, error; ar NULL when nothing
 * was restored.
 */
json_t	*report_rollback_json(const char *name, enum outcome o,
	    const char *to, const struct apply_result *ar,
	    const struct err *err);
/* Writes doc to path atomically (0644), indented as --json prints it. */
int	report_write_json(const char *path, const json_t *doc,
	    struct err *err);
/* rollback's question: "NAME: restore ID over REAL (present now)". */
void	report_restore_line(struct buf *out, const char *name,
	    const char *to, const struct host_state *st);
/* "NAME: failed when the plan was made; not applied" (failed and
 * unreachable only). */
void	report_planned_line(struct buf *out, const char *name,
	    enum outcome o);
/* drift: "gpu-017: NCCL_PROTO effective (unset), want LL; ..." */
void	report_drift_line(struct buf *out, const struct host_plan *hp);
/* drift: per drifted variable "NCCL_PROTO: 97 hosts LL, 3 hosts (unset):
 * a, b, c". */
void	report_drift_summary(struct buf *out, struct host_plan *const *hps,
	    size_t n);
/* One host as a JSON object (the plan --json schema). */
json_t	*report_plan_json(const struct host_plan *hp);

#endif
