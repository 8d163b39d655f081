/*
 * metrics.h - a drift run as a Prometheus node_exporter textfile.
 *
 * Per host: envctl_host_in_sync, envctl_host_up and
 * envctl_host_drifted_variables, labelled {host, group}; per run:
 * envctl_drift_hosts, envctl_failed_hosts, envctl_last_run_timestamp_seconds
 * and envctl_run_duration_seconds; each with HELP and TYPE lines.  Label
 * values are escaped as the text format says; a shard's run adds
 * shard="K/N" to every series.  metrics_merge() reads such files back and
 * joins the shards of one run.  Pure: builds buffers.
 */
#ifndef ENVCTL_CONTROLLER_METRICS_H
#define ENVCTL_CONTROLLER_METRICS_H

#include <stddef.h>

struct buf;
struct err;
struct host_plan;

/* One textfile to merge: its name for messages, and its text. */
struct metrics_input {
	const char	*name;
	const char	*text;		/* NUL-terminated */
};

/* The run-level totals of a merge, for the exit status. */
struct metrics_totals {
	double		 drift_hosts, failed_hosts;
};

/*
 * Appends the textfile for the n plans of one run; shard ("K/N") labels
 * every series, NULL or "" for an unsharded run.
 */
void	metrics_textfile(struct buf *out, struct host_plan *const *hps,
	    size_t n, double started, double duration, const char *shard);
/*
 * Appends to out the textfile one unsharded run would have written, from
 * the n shards' files in: the same HELP and TYPE lines (which must agree),
 * the shard label dropped, per-host series ordered as the hosts named in
 * order (norder; others after, in shard order), drift and failed hosts
 * summed, the earliest start and the whole span as the run's.  0, or
 * ENVCTL_EPARSE (a line that is no text format), ENVCTL_EINVALID (HELP or
 * TYPE that differ, a series envctl cannot merge, shard_check_set()'s).
 */
int	metrics_merge(struct buf *out, struct metrics_totals *t,
	    const struct metrics_input *in, size_t n,
	    const char *const *order, size_t norder, struct err *err);
/* Managed variables whose effective value differs from the desired one. */
size_t	metrics_drifted_variables(const struct host_plan *hp);

#endif
