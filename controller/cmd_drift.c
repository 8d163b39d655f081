/*
 * cmd_drift.c - envctl drift: for cron.  Silent when the fleet is in sync;
 * a compact report and exit 2 on drift; failed hosts on stderr and exit 1;
 * optional JSON report and Prometheus textfile, both written atomically; a
 * run lock so that overlapping cron runs never pile up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/apply.h"
#include "controller/atomicfile.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/inventory.h"
#include "controller/metrics.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/playbook.h"
#include "controller/report.h"
#include "controller/runlock.h"

static const char *const usage[] = {
	"envctl drift INVENTORY [--report FILE] [--metrics-file FILE] "
	    "[--lock FILE] [--fix [--lock-timeout SECONDS]] [-q] [-v]",
	NULL
};

struct run {
	const struct playbook *pb;
	struct apply_result *fixes;	/* by inventory host, with --fix */
	unsigned char	*fixed;
	struct apply_opts ao;
	struct report_opts ro;
	int		 verbose, quiet;
};

/* --fix: apply to a drifted host on the session that read it. */
static void
fix(void *arg, struct host_plan *hp, struct agentlink *l)
{
	struct run *r = arg;
	struct apply_result *ar = &r->fixes[hp->host->index];
	struct apply_input in;

	if (hp->outcome != ENVCTL_OUT_PENDING)
		return;
	apply_input_from_plan(&in, hp);
	apply_on(ar, l, hp->host, r->pb, &in, &r->ao);
	r->fixed[hp->host->index] = 1;
}

/* "gpu-017: NCCL_PROTO effective (unset), want LL; sitecustomize raises
 * TypeError: ..." */
static void
drift_line(struct buf *b, const struct host_plan *hp)
{
	struct vis v = ENVCTL_VIS_INIT;
	const char *sep = "";
	size_t i;

	buf_addf(b, "%s: ", vis_str(&v, hp->host->name));
	for (i = 0; i < hp->neffects; i++) {
		const struct var_effect *e = &hp->effects[i];

		/* Where start-up fails, nothing is in effect: said once. */
		if (e->in_effect || hp->st.start_failed != NULL)
			continue;
		buf_addf(b, "%s%s effective %s, want %s", sep,
		    vis_str(&v, e->name), vis_str(&v, e->now == NULL ?
		    "(unset)" : e->secret ? ENVCTL_MASK : e->now),
		    vis_str(&v, e->secret ? ENVCTL_MASK : e->want));
		sep = "; ";
	}
	if (hp->st.startup_error != NULL) {
		buf_addf(b, "%ssitecustomize raises %s", sep,
		    vis_str(&v, hp->st.startup_error));
		sep = "; ";
	}
	if (hp->st.start_failed != NULL) {
		buf_addf(b, "%sstart-up fails: %s", sep,
		    vis_str(&v, hp->st.start_failed));
		sep = "; ";
	}
	if (!hp->file_matches && hp->st.exists)
		buf_addf(b, "%s%s differs from the playbook", sep,
		    vis_str(&v, hp->st.path));
	else if (!hp->file_matches)
		buf_addf(b, "%s%s is missing", sep, vis_str(&v, hp->st.path));
	buf_addch(b, '\n');
	vis_release(&v);
}

/* Per variable: "NCCL_PROTO: 97 hosts LL, 3 hosts (unset): a, b, c". */
static void
fleet_summary(struct buf *b, struct host_plan *const *hps, size_t n)
{
	size_t v, i, k, nvals, drifted;
	const char **vals;
	size_t *counts;

	const struct host_plan *first = NULL;
	struct vis vs = ENVCTL_VIS_INIT;

	for (i = 0; i < n && first == NULL; i++)
		if (hps[i]->have_state && hps[i]->neffects > 0)
			first = hps[i];
	if (first == NULL)
		return;
	vals = xcalloc(n + 1, sizeof(*vals));
	counts = xcalloc(n + 1, sizeof(*counts));
	for (v = 0; v < first->neffects; v++) {
		drifted = 0;
		nvals = 0;
		for (i = 0; i < n; i++) {
			const struct var_effect *e;
			const char *now;

			if (!hps[i]->have_state || v >= hps[i]->neffects)
				continue;
			e = &hps[i]->effects[v];
			drifted += !e->in_effect;
			now = e->now == NULL ? "(unset)" : e->secret ?
			    ENVCTL_MASK : e->now;
			for (k = 0; k < nvals; k++)
				if (strcmp(vals[k], now) == 0)
					break;
			if (k == nvals)
				vals[nvals++] = now;
			counts[k]++;
		}
		if (drifted == 0)
			goto next;
		buf_addf(b, "%s:", vis_str(&vs, first->effects[v].name));
		for (k = 0; k < nvals; k++) {
			buf_addf(b, "%s %zu host%s %s", k > 0 ? "," : "",
			    counts[k], counts[k] == 1 ? "" : "s",
			    vis_str(&vs, vals[k]));
			/* Name the hosts of every value that is not wanted. */
			for (i = 0, drifted = 0; i < n; i++) {
				const struct var_effect *e;
				const char *now;

				if (!hps[i]->have_state ||
				    v >= hps[i]->neffects)
					continue;
				e = &hps[i]->effects[v];
				now = e->now == NULL ? "(unset)" : e->secret ?
				    ENVCTL_MASK : e->now;
				if (e->in_effect || strcmp(now, vals[k]) != 0)
					continue;
				buf_addf(b, "%s %s", drifted++ == 0 ? ":" : ",",
				    vis_str(&vs, hps[i]->host->name));
			}
		}
		buf_addch(b, '\n');
next:
		memset(counts, 0, (n + 1) * sizeof(*counts));
	}
	free(vals);
	free(counts);
	vis_release(&vs);
}

static double
now_seconds(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
write_report(const char *path, const struct context *ctx,
    struct host_plan *const *hps, size_t n, double started, double took,
    struct err *err)
{
	json_t *root, *hosts;
	char *text;
	size_t i;
	int r;

	hosts = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(hosts, report_plan_json(hps[i]));
	root = json_pack("{s:i, s:s, s:{s:s, s:s}, s:o, s:{s:f, s:f}}",
	    "format", 1, "command", "drift", "playbook", "name",
	    ctx->pb->name, "path", ctx->pb->path, "hosts", hosts, "run",
	    "timestamp", started, "duration_seconds", took);
	text = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	r = atomic_write_file(path, text, strlen(text), 0644, err);
	free(text);
	return r;
}

int
cmd_drift(int argc, char **argv)
{
	struct fleet_args a;
	const char *report = NULL, *metrics = NULL, *lock = NULL;
	struct opt opts[ENVCTL_FLEET_NOPTS + 6];
	struct context ctx = { 0 };
	struct agent_binary ab = { 0 };
	struct agentlink_opts lo;
	struct host_plan **hps = NULL;
	struct plan_then then;
	struct err err = ENVCTL_ERR_INIT, e2 = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT, bad = ENVCTL_BUF_INIT;
	struct run r;
	struct runlock rl = { -1, NULL };
	char host[256];
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	double started, t0;
	size_t n = 0, i, nh = 0, drifted = 0, failed = 0;
	int nops, code, dofix = 0;
	int lock_timeout = -1;		/* -1: not given (30) */

	memset(&r, 0, sizeof(r));
	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 0, "report",
	    ENVCTL_OPT_STRING, &report, "FILE", "write the full result as "
	    "JSON (plan --json's schema, plus run time), atomically", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = (struct opt){ 0, "metrics-file",
	    ENVCTL_OPT_STRING, &metrics, "FILE", "write a Prometheus "
	    "node_exporter textfile, atomically", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 2] = (struct opt){ 0, "lock",
	    ENVCTL_OPT_STRING, &lock, "FILE", "run lock, in a directory only "
	    "you can enter (default /run/envctl/drift.lock for root, else "
	    "in $XDG_RUNTIME_DIR/envctl or ~/.cache/envctl)", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 3] = (struct opt){ 0, "fix",
	    ENVCTL_OPT_FLAG, &dofix, NULL, "apply to the drifted hosts, as "
	    "apply --yes does", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 4] = cmd_lock_timeout_option(&lock_timeout);
	opts[ENVCTL_FLEET_NOPTS + 5] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (lock_timeout >= 0 && !dofix) {
		out_note("envctl drift: --lock-timeout is for --fix: a drift "
		    "check takes no lock on a host\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (lock_timeout < 0)
		lock_timeout = 30;
	if ((r.ro.color = cmd_use_color(a.color, STDOUT_FILENO)) < 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	r.quiet = a.quiet;
	r.verbose = a.verbose;
	r.ro.show_diff = 1;
	r.ro.verbose = 0;
	/* Only another drift run is "busy" (75); any other holder fails. */
	if (runlock_acquire(&rl, lock, &err) != 0) {
		if (!a.quiet)
			out_errors(&err);
		code = err.code == ENVCTL_ELOCKED ? ENVCTL_EXIT_BUSY :
		    ENVCTL_EXIT_FAIL;
		goto out;
	}
	started = now_seconds(CLOCK_REALTIME);
	t0 = now_seconds(CLOCK_MONOTONIC);
	if ((code = cmd_load(&ctx, operands[0], &a)) != ENVCTL_EXIT_OK)
		goto out;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	memset(&lo, 0, sizeof(lo));
	lo.agent = &ab;
	lo.ssh_config = a.ssh_config;
	lo.known_hosts = a.known_hosts;
	lo.accept_new = a.accept_new;
	lo.timeout = a.timeout;
	r.pb = ctx.pb;
	r.ao.link = &lo;
	r.ao.lock_timeout = lock_timeout;
	r.ao.change_timeout = apply_change_timeout(a.timeout, lock_timeout);
	r.ao.controller = host;
	nh = inventory_nhosts(ctx.inv);
	r.fixes = xcalloc(nh + 1, sizeof(*r.fixes));
	r.fixed = xcalloc(nh + 1, 1);
	then.fn = fix;
	then.arg = &r;
	/* Most hosts are in sync: a fix starts the fork server itself. */
	then.runs_follow = 0;
	code = cmd_run_plans(&ctx, operands[0], &a, &ab, dofix ? &then : NULL,
	    &hps, &n, NULL, NULL);
	if (code != ENVCTL_EXIT_OK)
		goto out;
	for (i = 0; i < n; i++) {
		struct host_plan *hp = hps[i];
		struct apply_result *ar = &r.fixes[hp->host->index];

		if (hp->outcome == ENVCTL_OUT_PENDING) {
			drifted++;
			drift_line(&out, hp);
			if (r.verbose)
				report_plan_host(&out, hp, &r.ro);
			if (r.fixed[hp->host->index]) {
				report_apply_result(&out, ar, &r.ro);
				if (ar->outcome == ENVCTL_OUT_CHANGED ||
				    ar->outcome == ENVCTL_OUT_OK)
					hp->outcome = ENVCTL_OUT_CHANGED;
				else {
					hp->outcome = ENVCTL_OUT_FAILED;
					failed++;
				}
			}
		} else if (hp->outcome != ENVCTL_OUT_OK) {
			failed++;
			report_plan_host(&bad, hp, &r.ro);
		}
	}
	if (drifted > 0)
		fleet_summary(&out, hps, n);
	if (!a.quiet) {
		out_write(out.data, out.len);
		out_note("%s", bad.data);
	}
	if (report != NULL && write_report(report, &ctx, hps, n, started,
	    now_seconds(CLOCK_MONOTONIC) - t0, &e2) != 0) {
		err_move(&err, &e2);
		failed++;
	}
	if (metrics != NULL) {
		buf_reset(&out);
		metrics_textfile(&out, hps, n, started,
		    now_seconds(CLOCK_MONOTONIC) - t0);
		if (atomic_write_file(metrics, out.data, out.len, 0644,
		    &e2) != 0) {
			err_move(&err, &e2);
			failed++;
		}
	}
	if (err.code != 0 && !a.quiet)
		out_errors(&err);
	if (failed > 0)
		code = ENVCTL_EXIT_FAIL;
	else if (drifted > 0 && !dofix)
		code = ENVCTL_EXIT_PENDING;
	else
		code = ENVCTL_EXIT_OK;
out:
	runlock_release(&rl);
	for (i = 0; i < nh; i++)
		apply_result_release(&r.fixes[i]);
	free(r.fixes);
	free(r.fixed);
	cmd_plans_free(hps, n);
	agent_binary_release(&ab);
	context_release(&ctx);
	err_release(&err);
	buf_release(&out);
	buf_release(&bad);
	free(operands);
	return code;
}
