/*
 * cmd_apply.c - envctl apply: plan, ask, then change the hosts that need
 * it; or apply a saved plan exactly, host by host, where the file is still
 * what the plan read.
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

#define PLANFILE_MAX	(256u * 1024 * 1024)

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
	struct desired	 d;		/* planfile mode: values to verify */
	struct buf	 expect, data;	/* planfile mode: decoded bytes */
	char		 sha_old[ENVCTL_SHA256_HEX];
	char		 sha_new[ENVCTL_SHA256_HEX];
	struct apply_result ar;
};

struct run {
	struct job	*jobs;		/* used ones are applied */
	size_t		 njobs;
	int		 from_planfile;
	const struct playbook *pb;
	struct apply_opts ao;
	struct report_opts ro;
	int		 json;
};

static void
job_run(void *arg, size_t i)
{
	struct run *r = arg;
	struct job *j = &r->jobs[i];

	if (j->used)
		apply_host(&j->ar, j->host, r->pb, &j->in, &r->ao);
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
		buf_wipe(&r->jobs[i].expect);
		buf_wipe(&r->jobs[i].data);
	}
	free(r->jobs);
}

/* A plan file's outcome other than pending, or -1. */
static int
planned_outcome(const char *s)
{
	static const enum outcome known[] = { ENVCTL_OUT_OK,
	    ENVCTL_OUT_FAILED, ENVCTL_OUT_UNREACHABLE };
	size_t i;

	for (i = 0; s != NULL && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(s, outcome_name(known[i])) == 0)
			return (int)known[i];
	return -1;
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

static int
decode_member(struct buf *out, const json_t *o, const char *key,
    struct err *err)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return err_set(err, ENVCTL_EPARSE, "plan file: '%s' is "
		    "missing", key);
	return proto_b64_decode(out, json_string_value(v),
	    json_string_length(v), err);
}

/* Builds the job for one planned host; ENVCTL_EPARSE etc. on bad input. */
static int
plan_job(struct job *j, const json_t *ph, const struct context *ctx,
    struct err *err)
{
	const json_t *cur = json_object_get(ph, "current");
	const json_t *want = json_object_get(ph, "desired");
	const char *name = json_string_value(json_object_get(ph, "name"));
	const char *path = json_string_value(json_object_get(ph, "target"));
	int r;

	if (name == NULL || path == NULL || !json_is_object(cur) ||
	    !json_is_object(want))
		return err_set(err, ENVCTL_EPARSE, "plan file: a host entry "
		    "lacks name, target, current or desired");
	j->used = 1;
	if ((j->host = inventory_find(ctx->inv, name)) == NULL)
		return err_set(err, ENVCTL_ENOTFOUND, "plan file: host '%s' is "
		    "not in the inventory", name);
	buf_init(&j->expect, 0);
	buf_init(&j->data, 0);
	j->in.path = path;
	j->in.expect_exists = json_is_true(json_object_get(cur, "exists"));
	if (j->in.expect_exists &&
	    (r = decode_member(&j->expect, cur, "data_b64", err)) != 0)
		return r;
	if ((r = decode_member(&j->data, want, "data_b64", err)) != 0)
		return r;
	hash_sha256_hex(j->sha_old, j->expect.data, j->expect.len);
	hash_sha256_hex(j->sha_new, j->data.data, j->data.len);
	j->in.expect = j->expect.data;
	j->in.expect_len = j->expect.len;
	j->in.expect_sha256 = j->in.expect_exists ? j->sha_old : "";
	j->in.data = j->data.data;
	j->in.len = j->data.len;
	j->in.sha256 = j->sha_new;
	j->in.d = &j->d;
	if ((r = desired_values(&j->d, ctx->pb, j->host, err)) != 0)
		return r;
	return 0;
}

/* Refuses a plan made from other inputs than those on disk now. */
static int
check_digests(const json_t *plan, const struct context *ctx,
    struct err *err)
{
	char hex[ENVCTL_SHA256_HEX];
	const char *inv = json_string_value(json_object_get(json_object_get(
	    plan, "inventory"), "sha256"));
	const char *pb = json_string_value(json_object_get(json_object_get(
	    plan, "playbook"), "sha256"));
	int r;

	if (inv == NULL || strcmp(inventory_digest(ctx->inv), inv) != 0)
		return err_set(err, ENVCTL_ECHANGED, "the inventory '%s' has "
		    "changed since the plan was made; run envctl plan again",
		    inventory_path(ctx->inv));
	if ((r = planfile_playbook_digest(hex, ctx->pb, err)) != 0)
		return r;
	if (pb == NULL || strcmp(hex, pb) != 0)
		return err_set(err, ENVCTL_ECHANGED, "the playbook '%s' has "
		    "changed since the plan was made; run envctl plan again",
		    ctx->pb->path);
	return 0;
}

static int
apply_planfile(const char *path, const json_t *plan,
    const struct fleet_args *a, struct run *r)
{
	struct context ctx = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct plan_counts c = { 0 };
	const json_t *hosts = json_object_get(plan, "hosts"), *ph;
	const char *inv = json_string_value(json_object_get(json_object_get(
	    plan, "inventory"), "path"));
	const char *pbp = json_string_value(json_object_get(json_object_get(
	    plan, "playbook"), "path"));
	const char *outcome, *name;
	size_t i;
	int code = ENVCTL_EXIT_FAIL, o;

	if (json_integer_value(json_object_get(plan, "format")) !=
	    ENVCTL_PLANFILE_FORMAT || inv == NULL || pbp == NULL ||
	    !json_is_array(hosts)) {
		err_set(&err, ENVCTL_EPARSE, "'%s' is not an envctl plan of "
		    "format %d", path, ENVCTL_PLANFILE_FORMAT);
		goto fail;
	}
	if (context_load(&ctx, inv, pbp, NULL, &err) != 0 ||
	    check_digests(plan, &ctx, &err) != 0)
		goto fail;
	r->pb = ctx.pb;
	r->jobs = xcalloc(json_array_size(hosts) + 1, sizeof(*r->jobs));
	r->from_planfile = 1;
	json_array_foreach(hosts, i, ph) {
		outcome = json_string_value(json_object_get(ph, "outcome"));
		if (outcome == NULL || strcmp(outcome, "pending") != 0) {
			if ((o = planned_outcome(outcome)) < 0 || (name =
			    json_string_value(json_object_get(ph, "name"))) ==
			    NULL) {
				err_set(&err, ENVCTL_EPARSE, "%s: host %zu has "
				    "no name or an unknown outcome", path, i);
				goto fail;
			}
			report_count_outcome(&c, (enum outcome)o);
			job_planned(&r->jobs[r->njobs++], name,
			    (enum outcome)o, NULL);
			continue;
		}
		if (plan_job(&r->jobs[r->njobs], ph, &ctx, &err) != 0) {
			err_context(&err, "%s", path);
			r->njobs++;
			goto fail;
		}
		r->njobs++;
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

/* A JSON plan file, or NULL when path is something else (an inventory). */
static json_t *
load_planfile(const char *path)
{
	struct buf b;
	json_t *doc = NULL, *kind;

	buf_init(&b, PLANFILE_MAX);
	if (buf_read_file(&b, path, NULL) == 0 && b.len > 0 &&
	    b.data[strspn(b.data, " \t\r\n")] == '{') {
		doc = json_loadb(b.data, b.len, 0, NULL);
		kind = json_object_get(doc, "kind");
		if (!json_is_string(kind) ||
		    strcmp(json_string_value(kind), "envctl-plan") != 0) {
			json_decref(doc);
			doc = NULL;
		}
	}
	buf_wipe(&b);
	return doc;
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
	json_t *plan;
	int nops, code, yes = 0, lock_timeout = 30;

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
	if ((plan = load_planfile(operands[0])) != NULL) {
		struct agent_binary ab;
		struct err err = ENVCTL_ERR_INIT;

		if (agent_binary_load(&ab, NULL, &err) != 0) {
			out_errors(&err);
			err_release(&err);
			json_decref(plan);
			code = ENVCTL_EXIT_FAIL;
			goto out;
		}
		lo.agent = &ab;
		code = apply_planfile(operands[0], plan, &a, &r);
		agent_binary_release(&ab);
		json_decref(plan);
	} else {
		code = apply_inventory(operands[0], &a, yes, &r, &lo);
	}
out:
	free(operands);
	return code;
}
