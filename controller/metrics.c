/* metrics.c - a drift run as a Prometheus textfile (see metrics.h). */
#include "metrics.h"

#include <string.h>

#include "common/buf.h"
#include "controller/inventory.h"
#include "controller/plan.h"

static void
label(struct buf *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			buf_addch(out, '\\');
		if (*s == '\n')
			buf_addstr(out, "\\n");
		else
			buf_addch(out, *s);
	}
}

static void
labels(struct buf *out, const struct host_plan *hp)
{
	const struct host *h = hp->host;

	buf_addstr(out, "{host=\"");
	label(out, h->name);
	buf_addstr(out, "\",group=\"");
	label(out, host_ngroups(h) > 0 ? host_group(h, 0) : "");
	/* A host with several files has a series per file. */
	if (hp->several && hp->have_state) {
		buf_addstr(out, "\",file=\"");
		label(out, hp->st.path);
	}
	buf_addstr(out, "\"}");
}

size_t
metrics_drifted_variables(const struct host_plan *hp)
{
	size_t i, n = 0;

	for (i = 0; i < hp->neffects; i++)
		if (!hp->effects[i].in_effect)
			n++;
	return n;
}

static int
up(const struct host_plan *hp)
{
	return hp->have_state;
}

static int
in_sync(const struct host_plan *hp)
{
	return hp->outcome == ENVCTL_OUT_OK ||
	    hp->outcome == ENVCTL_OUT_CHANGED;
}

static void
family(struct buf *out, const char *name, const char *help)
{
	buf_addf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void
metrics_textfile(struct buf *out, struct host_plan *const *hps, size_t n,
    double started, double duration)
{
	size_t i, drift = 0, failed = 0;

	family(out, "envctl_host_in_sync", "1 when the host's "
	    "sitecustomize.py and its effective environment match the "
	    "playbook.");
	for (i = 0; i < n; i++) {
		buf_addstr(out, "envctl_host_in_sync");
		labels(out, hps[i]);
		buf_addf(out, " %d\n", in_sync(hps[i]));
	}
	family(out, "envctl_host_up", "1 when envctl could read the host.");
	for (i = 0; i < n; i++) {
		buf_addstr(out, "envctl_host_up");
		labels(out, hps[i]);
		buf_addf(out, " %d\n", up(hps[i]));
	}
	family(out, "envctl_host_drifted_variables", "Managed variables "
	    "whose effective value differs from the playbook's.");
	for (i = 0; i < n; i++) {
		if (!up(hps[i]))
			continue;
		buf_addstr(out, "envctl_host_drifted_variables");
		labels(out, hps[i]);
		buf_addf(out, " %zu\n", metrics_drifted_variables(hps[i]));
	}
	family(out, "envctl_host_stale_processes", "Running workers that "
	    "must be restarted to get the playbook's values: started before "
	    "the file last changed, or started with other values.");
	for (i = 0; i < n; i++) {
		if (!hps[i]->ly.read)
			continue;
		buf_addstr(out, "envctl_host_stale_processes");
		labels(out, hps[i]);
		buf_addf(out, " %zu\n", hps[i]->ly.stale);
	}
	for (i = 0; i < n; i++) {
		if (hps[i]->outcome == ENVCTL_OUT_PENDING)
			drift++;
		else if (!in_sync(hps[i]))
			failed++;
	}
	family(out, "envctl_drift_hosts", "Hosts out of sync in the last "
	    "run.");
	buf_addf(out, "envctl_drift_hosts %zu\n", drift);
	family(out, "envctl_failed_hosts", "Hosts that could not be read "
	    "(or fixed) in the last run.");
	buf_addf(out, "envctl_failed_hosts %zu\n", failed);
	family(out, "envctl_last_run_timestamp_seconds", "When the last "
	    "drift run started, in seconds since the epoch.");
	buf_addf(out, "envctl_last_run_timestamp_seconds %.3f\n", started);
	family(out, "envctl_run_duration_seconds", "How long the last drift "
	    "run took.");
	buf_addf(out, "envctl_run_duration_seconds %.3f\n", duration);
}
