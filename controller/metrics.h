/*
 * metrics.h - a drift run as a Prometheus node_exporter textfile.
 *
 * Per host: envctl_host_in_sync, envctl_host_up and
 * envctl_host_drifted_variables, labelled {host, group}; per run:
 * envctl_drift_hosts, envctl_failed_hosts, envctl_last_run_timestamp_seconds
 * and envctl_run_duration_seconds; each with HELP and TYPE lines.  Label
 * values are escaped as the text format says.  Pure: builds a buffer.
 */
#ifndef ENVCTL_CONTROLLER_METRICS_H
#define ENVCTL_CONTROLLER_METRICS_H

#include <stddef.h>

struct buf;
struct host_plan;

/* Appends the textfile for the n plans of one run. */
void	metrics_textfile(struct buf *out, struct host_plan *const *hps,
	    size_t n, double started, double duration);
/* Managed variables whose effective value differs from the desired one. */
size_t	metrics_drifted_variables(const struct host_plan *hp);

#endif
