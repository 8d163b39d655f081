/*
 * cmd_apply.c - envctl apply: plan, ask, then change the hosts that need
 * it; or apply a saved plan exactly, host by host, where the file is still
 * what the plan read.  The plan file is read and checked by planfile.c:
 * here each pending host is re-rendered (refused when the bytes differ)
 * and read again on the session that changes it (refused when its path
 * is not the plan's target).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/apply.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/fleet.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/planfile.h"
#include "controller/playbook.h"
#include "controller/report.h"
#include "controller/transport.h"

static const char *const usage[] = {
	"envctl apply INVENTORY [--yes] [-p PLAYBOOK] [-l LIMIT] [-j N]",
	"envctl apply PLANFILE [-j N]",
	NULL
};

/*
 * One host of the run, wherever its input came from: used when it is to
 * be changed; else what the plan found (in sync, failed, or pending and
 * not applied), for the report.
 */
struct job {
	int		 used;
	int		 planned;	/* not used: plan_outcome is set */
	const char	*name;
	enum outcome	 plan_outcome;
	json_t		*plan_error;	/* why it failed, as --json says it */
	const struct host *host;
	struct apply_input in;
	/* planfile mode */
	struct run	*run;
	const struct planfile_host *ph;	/* borrowed from the plan */
	int		 refused;	/* ar says why; nothing to contact */
	int		 read_done;	/* the host's read came back */
	struct desired	 d;		/* re-rendered: the values to verify */
	struct host_plan hp;		/* the host's read at apply time */
	struct apply_result ar;
};

struct run {
	struct job	*jobs;		/* used ones are applied */
	const struct planfile *pf;	/* planfile mode */
	size_t		 njobs;
	int		 from_planfile;
	const struct playbook *pb;
	struct apply_opts ao;
	struct report_opts ro;
	int		 json;
};

static void apply_planned(void *arg, struct host_plan *hp,
    struct agentlink *l);

static void
job_run(void *arg, size_t i)
{
	struct run *r = arg;
	struct job *j = &r->jobs[i];
	struct plan_then then = { apply_planned, j, 1 };

	if (!j->used || j->refused)
		return;
	if (r->pf == NULL) {
		apply_host(&j->ar, j->host, r->pb, &j->in, &r->ao);
		return;
	}
	/*
	 * A plan is applied on a session that reads the host first, so that
	 * the path written is the one the host's interpreter imports.
	 */
	plan_host(&j->hp, j->host, r->pb, r->ao.link, &then);
	j->ar.stats = j->hp.stats;
	if (j->read_done)
		return;
	j->ar.host = j->host;
	j->ar.outcome = j->hp.outcome == ENVCTL_OUT_UNREACHABLE ?
	    ENVCTL_OUT_UNREACHABLE : ENVCTL_OUT_FAILED;
	err_move(&j->ar.err, &j->hp.err);
}

static void
job_done(void *arg, size_t i)
{
	struct run *r = arg;
	struct buf b = ENVCTL_BUF_INIT;

	if (r->json || !r->jobs[i].used)
		return;
	report_apply_result(&b, &r->jobs[i].ar, &r->ro);
	out_write(b.data, b.len);
	buf_release(&b);
}

static int
run_jobs(struct run *r, int forks)
{
	struct fleet_job fj;
	size_t *idx = xcalloc(r->njobs + 1, sizeof(*idx)), i;

	for (i = 0; i < r->njobs; i++)
		idx[i] = i;
	fj.job = job_run;
	fj.done = job_done;
	fj.progress = NULL;
	fj.ctx = r;
	transport_init();
	fleet_run(&fj, idx, r->njobs, forks);
	transport_finish();
	free(idx);
	return 0;
}

/* The apply input for a planned host: what plan read, what it rendered. */
static void
job_from_plan(struct job *j, const struct host_plan *hp)
{
	json_decref(j->plan_error);
	j->plan_error = NULL;
	j->planned = 0;
	j->used = 1;
	j->host = hp->host;
	apply_input_from_plan(&j->in, hp);
}

/* --yes: apply on the session that just read the host. */
static void
apply_then(void *arg, struct host_plan *hp, struct agentlink *l)
{
	struct run *r = arg;
	struct job *j = &r->jobs[hp->host->index];

	if (hp->outcome != ENVCTL_OUT_PENDING)
		return;
	job_from_plan(j, hp);
	apply_on(&j->ar, l, j->host, r->pb, &j->in, &r->ao);
}

static void
print_plan_host(void *arg, struct host_plan *hp)
{
	struct run *r = arg;
	struct buf b = ENVCTL_BUF_INIT;
	const struct job *j = r->jobs != NULL ? &r->jobs[hp->host->index] :
	    NULL;

	if (r->json)
		return;
	if (!r->ro.quiet || hp->outcome == ENVCTL_OUT_FAILED ||
	    hp->outcome == ENVCTL_OUT_UNREACHABLE)
		report_plan_host(&b, hp, &r->ro);
	if (j != NULL && j->used)
		report_apply_result(&b, &j->ar, &r->ro);
	out_write(b.data, b.len);
	buf_wipe(&b);
}

/* A host as apply --json lists it: applied, or as the plan found it. */
static json_t *
job_json(const struct job *j)
{
	const struct apply_result *ar = &j->ar;

	if (j->planned)
		return json_pack("{s:s, s:s, s:n, s:b, s:n, s:O}", "name",
		    j->name, "outcome", outcome_name(j->plan_outcome),
		    "backup", "restored", 0, "warning", "error",
		    j->plan_error);
	return json_pack("{s:s, s:s, s:s?, s:b, s:s?, s:o}", "name",
	    ar->host->name, "outcome", outcome_name(ar->outcome), "backup",
	    ar->backup_id, "restored", ar->restored, "warning", ar->warning,
	    "error", report_err_json(&ar->err));
}

/* A plan file's host that failed when planned: said, not skipped quietly. */
static void
planned_line(struct buf *b, const struct job *j)
{
	struct vis v = ENVCTL_VIS_INIT;

	if (!j->planned || (j->plan_outcome != ENVCTL_OUT_FAILED &&
	    j->plan_outcome != ENVCTL_OUT_UNREACHABLE))
		return;
	buf_addf(b, "%s: %s when the plan was made; not applied\n",
	    vis_str(&v, j->name), outcome_name(j->plan_outcome));
	vis_release(&v);
}

/* Records what the plan found on a host that is not applied. */
static void
job_planned(struct job *j, const char *name, enum outcome o,
    const struct err *err)
{
	j->planned = 1;
	j->name = name;
	j->plan_outcome = o;
	j->plan_error = report_err_json(err);
}

static void
finish(struct run *r, struct plan_counts *c, int *code)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *hosts;
	size_t i;

	for (i = 0; i < r->njobs; i++)
		if (r->jobs[i].used)
			report_count_outcome(c, r->jobs[i].ar.outcome);
	if (r->json) {
		hosts = json_array();
		for (i = 0; i < r->njobs; i++)
			if (r->jobs[i].used || r->jobs[i].planned)
				json_array_append_new(hosts,
				    job_json(&r->jobs[i]));
		out_json(report_result_json("apply", hosts, c));
	} else {
		buf_reset(&b);
		for (i = 0; r->from_planfile && i < r->njobs; i++)
			planned_line(&b, &r->jobs[i]);
		report_summary(&b, c, &r->ro);
		out_write(b.data, b.len);
	}
	buf_release(&b);
	*code = c->failed > 0 || c->unreachable > 0 ? ENVCTL_EXIT_FAIL :
	    ENVCTL_EXIT_OK;
}

static void
jobs_free(struct run *r)
{
	size_t i;

	for (i = 0; i < r->njobs; i++) {
		json_decref(r->jobs[i].plan_error);
		if (!r->jobs[i].used)
			continue;
		apply_result_release(&r->jobs[i].ar);
		desired_release(&r->jobs[i].d);
		if (r->pf != NULL)
			plan_release(&r->jobs[i].hp);
	}
	free(r->jobs);
}

/* --- envctl apply INVENTORY ------------------------------------------ */

static int
apply_inventory(const char *inventory, const struct fleet_args *a, int yes,
    struct run *r, struct agentlink_opts *lo)
{
	struct context ctx = { 0 };
	struct agent_binary ab = { 0 };
	struct host_plan **hps = NULL;
	struct plan_counts c = { 0 };
	/* Validation and verification follow the read on the session. */
	struct plan_then then = { apply_then, r, 1 };
	struct buf b = ENVCTL_BUF_INIT;
	size_t n = 0, i, pending = 0;
	int code;

	r->ro.show_diff = 1;
	if ((code = cmd_load(&ctx, inventory, a)) != ENVCTL_EXIT_OK)
		goto out;
	/*
	 * Jobs are indexed by inventory host.  With --yes each host is
	 * applied on the session that read it: one connection per host.
	 */
	r->pb = ctx.pb;
	r->njobs = inventory_nhosts(ctx.inv);
	r->jobs = xcalloc(r->njobs + 1, sizeof(*r->jobs));
	code = cmd_run_plans(&ctx, inventory, a, &ab, yes ? &then : NULL,
	    &hps, &n, print_plan_host, r);
	if (code != ENVCTL_EXIT_OK)
		goto out;
	lo->agent = &ab;
	for (i = 0; i < n; i++) {
		if (hps[i]->outcome == ENVCTL_OUT_PENDING)
			pending++;
		else
			report_count(&c, hps[i]);
	}
	/* What --json lists for the hosts it does not change. */
	for (i = 0; i < n; i++)
		if (!r->jobs[hps[i]->host->index].used)
			job_planned(&r->jobs[hps[i]->host->index],
			    hps[i]->host->name, hps[i]->outcome, &hps[i]->err);
	if (yes) {
		finish(r, &c, &code);
		goto out;
	}
	if (pending == 0) {
		finish(r, &c, &code);
		goto out;
	}
	if (!isatty(STDIN_FILENO)) {
		out_note("envctl apply: %zu host%s to change, but stdin is not "
		    "a terminal to ask: add --yes\n", pending,
		    pending == 1 ? "" : "s");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (!cmd_confirm("Apply to", pending)) {
		out_note("envctl apply: nothing changed\n");
		code = ENVCTL_EXIT_OK;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (hps[i]->outcome == ENVCTL_OUT_PENDING)
			job_from_plan(&r->jobs[hps[i]->host->index], hps[i]);
	run_jobs(r, a->forks);
	finish(r, &c, &code);
out:
	jobs_free(r);
	cmd_plans_free(hps, n);
	agent_binary_release(&ab);
	context_release(&ctx);
	buf_release(&b);
	return code;
}

/* --- envctl apply PLANFILE ---------------------------------------------- */

/* Refuses a job before any host is contacted: ar says why. */
static void
job_refuse(struct job *j, struct err *err)
{
	j->refused = 1;
	j->ar.host = j->host;
	j->ar.outcome = ENVCTL_OUT_FAILED;
	err_sethost(err, j->host->name);
	err_move(&j->ar.err, err);
}

/*
 * The read of a planned host came back on session l: the plan is applied
 * there only when the host imports the file the plan names.
 */
static void
apply_planned(void *arg, struct host_plan *hp, struct agentlink *l)
{
	struct job *j = arg;
	struct err err = ENVCTL_ERR_INIT;

	j->read_done = 1;
	j->ar.host = j->host;
	j->ar.outcome = ENVCTL_OUT_FAILED;
	if (hp->err.code != 0) {
		/* Rendering against today's file or a check: failed. */
		err_move(&j->ar.err, &hp->err);
		err_sethost(&j->ar.err, j->host->name);
		return;
	}
	if (planfile_check_read(j->ph, &hp->st, &err) != 0) {
		err_sethost(&err, j->host->name);
		err_move(&j->ar.err, &err);
		return;
	}
	apply_on(&j->ar, l, j->host, j->run->pb, &j->in, &j->run->ao);
}

/*
 * The job of one pending host of the plan: its bytes re-rendered from
 * today's inventory and playbook must be the plan's, or it is refused.
 * ENVCTL_ENOTFOUND (the whole plan is refused) for a host the inventory
 * no longer has.
 */
static int
plan_job(struct job *j, const struct planfile_host *ph,
    const struct context *ctx, struct err *err)
{
	struct err e = ENVCTL_ERR_INIT;

	if ((j->host = inventory_find(ctx->inv, ph->name)) == NULL)
		return err_set(err, ENVCTL_ENOTFOUND, "host '%s' is not in "
		    "the inventory '%s'", ph->name, inventory_path(ctx->inv));
	j->used = 1;
	j->ph = ph;
	if (planfile_verify_host(&j->d, ph, ctx->pb, j->host, &e) != 0) {
		job_refuse(j, &e);
		return 0;
	}
	j->in.path = ph->target;
	j->in.expect_exists = ph->cur_exists;
	j->in.expect = ph->cur.data;
	j->in.expect_len = ph->cur.len;
	j->in.expect_sha256 = ph->cur_sha256;
	j->in.data = ph->want.data;
	j->in.len = ph->want.len;
	j->in.sha256 = ph->want_sha256;
	j->in.d = &j->d;
	return 0;
}

static int
apply_planfile(const char *path, const struct planfile *pf,
    const struct fleet_args *a, struct run *r)
{
	struct context ctx = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct plan_counts c = { 0 };
	const struct planfile_host *ph;
	size_t i;
	int code = ENVCTL_EXIT_FAIL;

	if (context_load(&ctx, pf->inventory_path, pf->playbook_path, NULL,
	    &err) != 0 || planfile_check_inputs(pf, ctx.inv, ctx.pb,
	    &err) != 0)
		goto fail;
	r->pb = ctx.pb;
	r->pf = pf;
	r->jobs = xcalloc(pf->nhosts + 1, sizeof(*r->jobs));
	r->from_planfile = 1;
	/* Every host is checked before any is contacted. */
	for (i = 0; i < pf->nhosts; i++) {
		ph = &pf->hosts[i];
		r->jobs[i].run = r;
		r->njobs++;
		if (ph->outcome != ENVCTL_OUT_PENDING) {
			report_count_outcome(&c, ph->outcome);
			job_planned(&r->jobs[i], ph->name, ph->outcome, NULL);
			continue;
		}
		if (plan_job(&r->jobs[i], ph, &ctx, &err) != 0) {
			err_context(&err, "%s", path);
			goto fail;
		}
	}
	if (r->njobs > 0)
		run_jobs(r, a->forks);
	finish(r, &c, &code);
	goto out;
fail:
	out_errors(&err);
out:
	jobs_free(r);
	context_release(&ctx);
	err_release(&err);
	return code;
}

int
cmd_apply(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + 3];
	struct agentlink_opts lo;
	struct run r;
	char host[256];
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	struct planfile pf = { 0 };
	struct agent_binary ab;
	struct err err = ENVCTL_ERR_INIT;
	int nops, code, yes = 0, lock_timeout = 30, is_plan = 0;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 'y', "yes",
	    ENVCTL_OPT_FLAG, &yes, NULL,
	    "apply without asking (needed when stdin is not a terminal)",
	    0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = cmd_lock_timeout_option(&lock_timeout);
	opts[ENVCTL_FLEET_NOPTS + 2] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	memset(&r, 0, sizeof(r));
	memset(&lo, 0, sizeof(lo));
	r.json = a.json;
	r.ro.quiet = a.quiet;
	r.ro.verbose = a.verbose;
	if ((r.ro.color = cmd_use_color(a.color, STDOUT_FILENO)) < 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	r.ro.color = r.ro.color && !a.json;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	r.ao.controller = host;
	r.ao.lock_timeout = lock_timeout;
	/*
	 * Test-only: ask the agent to die at one step of apply.  Refused by
	 * every agent but the test build (envctl-agent-faults).
	 */
	r.ao.fault = getenv("ENVCTL_TEST_FAULT");
	r.ao.link = &lo;
	lo.ssh_config = a.ssh_config;
	lo.known_hosts = a.known_hosts;
	lo.accept_new = a.accept_new;
	lo.timeout = a.timeout;
	/*
	 * The change may wait lock_timeout for the host's lock, then run the
	 * interpreter twice: its waits get that long; connecting and reading
	 * keep --timeout.
	 */
	r.ao.change_timeout = apply_change_timeout(a.timeout, lock_timeout);
	if (planfile_load(&pf, &is_plan, operands[0], &err) != 0) {
		out_errors(&err);
		code = ENVCTL_EXIT_FAIL;
	} else if (is_plan) {
		if (agent_binary_load(&ab, NULL, &err) != 0) {
			out_errors(&err);
			code = ENVCTL_EXIT_FAIL;
			goto out;
		}
		lo.agent = &ab;
		code = apply_planfile(operands[0], &pf, &a, &r);
		agent_binary_release(&ab);
	} else {
		code = apply_inventory(operands[0], &a, yes, &r, &lo);
	}
out:
	planfile_release(&pf);
	err_release(&err);
	free(operands);
	return code;
}
