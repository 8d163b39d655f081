/*
 * cmd_drift.c - envctl drift: for cron.  Silent when the fleet is in sync;
 * a compact report and exit 2 on drift; failed hosts on stderr and exit 1;
 * optional JSON report and Prometheus textfile, both written atomically; a
 * run lock so that overlapping cron runs never pile up.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/atomicfile.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/metrics.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/report.h"
#include "controller/rollout.h"
#include "controller/runlock.h"

static const char *const usage[] = {
	"envctl drift INVENTORY [--report FILE] [--metrics-file FILE] "
	    "[--lock FILE] [--fix [--lock-timeout SECONDS] [--serial LIST] "
	    "[--by-group GROUPS] [--max-fail N|P%]] [-q] [-v]",
	NULL
};

static double
now_seconds(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The report (--json's envelope and the run) and the metrics files. */
static int
write_files(const struct engine *e, const char *report, const char *metrics,
    double started, double t0, struct err *err)
{
	char shard[ENVCTL_SHARD_LABEL];
	struct buf b = ENVCTL_BUF_INIT;
	struct err e2 = ENVCTL_ERR_INIT;
	json_t *doc;

	if (report != NULL) {
		doc = engine_json(e);
		json_object_set_new(doc, "run", json_pack("{s:f, s:f}",
		    "timestamp", started, "duration_seconds",
		    now_seconds(CLOCK_MONOTONIC) - t0));
		if (report_write_json(report, doc, &e2) != 0)
			err_move(err, &e2);
		json_decref(doc);
	}
	if (metrics != NULL) {
		metrics_textfile(&b, e->plans, e->nplans, started,
		    now_seconds(CLOCK_MONOTONIC) - t0,
		    shard_label(shard, &e->ctx->shard));
		if (atomic_write_file(metrics, b.data, b.len, 0644, &e2) != 0)
			err_move(err, &e2);
	}
	buf_release(&b);
	return err->code;
}

int
cmd_drift(int argc, char **argv)
{
	struct fleet_args a;
	const char *report = NULL, *metrics = NULL, *lock = NULL;
	char *deflock = NULL, *shardlock = NULL;
	struct opt opts[ENVCTL_FLEET_NOPTS + ENVCTL_ROLLOUT_NOPTS + 6];
	struct rollout_args ra;
	struct rollout_spec rs;
	struct context ctx = { 0 };
	struct engine_policy p;
	struct engine e = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct runlock rl = { -1, NULL };
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	double started, t0;
	int nops, code, dofix = 0;
	int lock_timeout = -1;		/* -1: not given (30) */

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 0, "report",
	    ENVCTL_OPT_STRING, &report, "FILE", "write the full result as "
	    "JSON (--json's document, plus run time), atomically", 0, 0 };
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
	cmd_rollout_options(&opts[ENVCTL_FLEET_NOPTS + 5], &ra);
	opts[ENVCTL_FLEET_NOPTS + ENVCTL_ROLLOUT_NOPTS + 5] =
	    (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (lock_timeout >= 0 && !dofix) {
		out_note("envctl drift: --lock-timeout is for --fix: a drift "
		    "check takes no lock on a host\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if ((ra.serial != NULL || ra.by_group != NULL ||
	    ra.max_fail != NULL) && !dofix) {
		out_note("envctl drift: --serial, --by-group and --max-fail "
		    "are for --fix: a drift check changes no host\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (cmd_policy(&p, ENVCTL_CMD_DRIFT, operands[0], &a,
	    lock_timeout < 0 ? 30 : lock_timeout) != 0 ||
	    cmd_rollout(&p, &rs, &ra, argv[0]) != 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	/* Most hosts are in sync: a fix starts the fork server itself. */
	p.change = dofix ? ENVCTL_CHANGE_FIX : ENVCTL_CHANGE_NONE;
	p.pending_exit = 1;
	p.ro.quiet = a.quiet;
	p.ro.show_diff = 1;
	p.verbose = a.verbose;
	/*
	 * Shards may run side by side on one machine: by default each has
	 * a lock of its own, drift.K-of-N.lock beside drift.lock.
	 */
	if ((code = cmd_shard(&ctx, a.shard, a.shards)) != ENVCTL_EXIT_OK)
		goto out;
	if (lock == NULL && ctx.shard.count > 0 &&
	    (deflock = runlock_default_path()) != NULL) {
		shardlock = xasprintf("%.*s.%u-of-%u.lock",
		    (int)(strlen(deflock) - strlen(".lock")), deflock,
		    ctx.shard.index, ctx.shard.count);
		lock = shardlock;
	}
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
	code = cmd_run(&e, &p, &ctx);
	if (e.hosts == NULL)
		goto out;	/* the run did not start */
	if (write_files(&e, report, metrics, started, t0, &err) != 0) {
		if (!a.quiet)
			out_errors(&err);
		code = ENVCTL_EXIT_FAIL;
	}
out:
	runlock_release(&rl);
	engine_release(&e);
	context_release(&ctx);
	err_release(&err);
	free(deflock);
	free(shardlock);
	free(operands);
	return code;
}
