/*
 * cmd_rollback.c - envctl rollback: put a backup back, through the same
 * locked, compare-and-swap, backed-up, atomic path as apply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/apply.h"
#include "controller/backups.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/fleet.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/playbook.h"
#include "controller/report.h"
#include "controller/transport.h"

static const char *const usage[] = {
	"envctl rollback INVENTORY [--to ID|latest] [--yes] [-l LIMIT]",
	NULL
};

struct job {
	int		 used;		/* a backup was chosen */
	struct backup_list bl;
	struct err	 err;		/* listing or choosing failed */
	char		*to;		/* the chosen backup's id */
	struct apply_input in;
	struct apply_result ar;
};

struct run {
	const struct playbook *pb;
	struct job	*jobs;		/* by inventory host */
	size_t		 njobs;
	const char	*to;
	int		 yes;
	int		 json;
	struct apply_opts ao;
	struct report_opts ro;
};

/* Lists the backups and chooses one; with --yes restores it too. */
static void
choose(void *arg, struct host_plan *hp, struct agentlink *l)
{
	struct run *r = arg;
	struct job *j = &r->jobs[hp->host->index];
	const struct backup_entry *b;

	if (backups_fetch(&j->bl, l, hp->st.path, r->pb, &j->err) != 0) {
		err_sethost(&j->err, hp->host->name);
		return;
	}
	if ((b = backups_pick(&j->bl, r->to, hp->st.exists ? hp->st.sha256 :
	    "")) == NULL) {
		err_set(&j->err, ENVCTL_ENOTFOUND, strcmp(r->to, "latest") == 0 ?
		    "no backup differs from the current file" :
		    "no backup '%s' (see envctl backups)", r->to);
		err_sethost(&j->err, hp->host->name);
		return;
	}
	j->used = 1;
	j->to = xstrdup(b->id);
	apply_input_from_plan(&j->in, hp);
	j->in.rollback_to = j->to;
	if (r->yes)
		apply_on(&j->ar, l, hp->host, r->pb, &j->in, &r->ao);
}

static void
print_host(void *arg, struct host_plan *hp)
{
	struct run *r = arg;
	struct job *j = &r->jobs[hp->host->index];
	struct buf b = ENVCTL_BUF_INIT;
	struct vis v = ENVCTL_VIS_INIT;

	if (r->json)
		return;
	if (!hp->have_state)
		report_plan_host(&b, hp, &r->ro);
	else if (j->err.code != 0)
		err_format(&j->err, &b);
	else if (!j->used)
		report_plan_host(&b, hp, &r->ro);
	else if (r->yes)
		report_apply_result(&b, &j->ar, &r->ro);
	else
		buf_addf(&b, "%s: restore %s over %s (%s)\n",
		    vis_str(&v, hp->host->name), vis_str(&v, j->to),
		    vis_str(&v, hp->st.real), hp->st.exists ? "present now" :
		    "absent now");
	out_write(b.data, b.len);
	buf_release(&b);
	vis_release(&v);
}

static void
job_run(void *arg, size_t i)
{
	struct run *r = arg;
	struct job *j = &r->jobs[i];

	if (j->used)
		apply_host(&j->ar, j->ar.host, r->pb, &j->in, &r->ao);
}

static void
job_done(void *arg, size_t i)
{
	struct run *r = arg;
	struct buf b = ENVCTL_BUF_INIT;

	if (!r->jobs[i].used || r->json)
		return;
	report_apply_result(&b, &r->jobs[i].ar, &r->ro);
	out_write(b.data, b.len);
	buf_release(&b);
}

/*
 * One host of rollback --json: what was restored (restored), the backup of
 * the file it replaced (backup), whether the restored file raises at
 * start-up (startup_error), or why nothing was restored (error).
 */
static json_t *
host_json(const struct host_plan *hp, const struct job *j,
    enum outcome o)
{
	const struct err *err = NULL;
	int done = hp->have_state && j->err.code == 0 && j->used;

	if (!hp->have_state)
		err = &hp->err;
	else if (j->err.code != 0)
		err = &j->err;
	else if (done)
		err = &j->ar.err;
	return json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:o}", "name",
	    hp->host->name, "outcome", outcome_name(o),
	    "restored", done && o == ENVCTL_OUT_CHANGED ? j->to : NULL,
	    "backup", done ? j->ar.backup_id : NULL,
	    "startup_error", done ? j->ar.startup_error : NULL,
	    "warning", done ? j->ar.warning : NULL,
	    "error", report_err_json(err));
}

int
cmd_rollback(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + 4];
	struct context ctx = { 0 };
	struct agent_binary ab = { 0 };
	struct agentlink_opts lo;
	struct host_plan **hps = NULL;
	struct plan_then then;
	struct plan_counts c = { 0 };
	struct fleet_job fj;
	struct run r;
	struct buf b = ENVCTL_BUF_INIT;
	char host[256];
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	const char *to = "latest";
	size_t n = 0, i, chosen = 0, *idx = NULL;
	int nops, code, yes = 0, lock_timeout = 30;
	json_t *hosts;

	memset(&r, 0, sizeof(r));
	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 0, "to", ENVCTL_OPT_STRING,
	    &to, "ID", "the backup to restore (default: latest, the newest "
	    "that differs from the current file)", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = (struct opt){ 'y', "yes",
	    ENVCTL_OPT_FLAG, &yes, NULL, "roll back without asking", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 2] = cmd_lock_timeout_option(&lock_timeout);
	opts[ENVCTL_FLEET_NOPTS + 3] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if ((r.ro.color = cmd_use_color(a.color, STDOUT_FILENO)) < 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (a.json && !yes) {
		out_note("envctl rollback: --json needs --yes\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (!yes && !isatty(STDIN_FILENO)) {
		out_note("envctl rollback: stdin is not a terminal to ask: add "
		    "--yes\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if ((code = cmd_load(&ctx, operands[0], &a)) != ENVCTL_EXIT_OK)
		goto out;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	memset(&lo, 0, sizeof(lo));
	lo.ssh_config = a.ssh_config;
	lo.known_hosts = a.known_hosts;
	lo.accept_new = a.accept_new;
	lo.timeout = a.timeout;
	lo.agent = &ab;
	r.pb = ctx.pb;
	r.to = to;
	r.yes = yes;
	r.json = a.json;
	r.ro.color = r.ro.color && !a.json;
	r.ao.link = &lo;
	r.ao.lock_timeout = lock_timeout;
	/* The restore may wait for the lock, then run the interpreter. */
	r.ao.change_timeout = apply_change_timeout(a.timeout, lock_timeout);
	r.ao.controller = host;
	r.njobs = inventory_nhosts(ctx.inv);
	r.jobs = xcalloc(r.njobs + 1, sizeof(*r.jobs));
	then.fn = choose;
	then.arg = &r;
	then.runs_follow = yes;	/* the verification */
	code = cmd_run_plans(&ctx, operands[0], &a, &ab, &then, &hps, &n,
	    print_host, &r);
	if (code != ENVCTL_EXIT_OK)
		goto out;
	for (i = 0; i < r.njobs; i++)
		if (r.jobs[i].used) {
			r.jobs[i].ar.host = inventory_host(ctx.inv, i);
			chosen++;
		}
	if (!yes && chosen > 0) {
		if (!cmd_confirm("Roll back", chosen)) {
			out_note("envctl rollback: nothing changed\n");
			goto count;
		}
		idx = xcalloc(r.njobs + 1, sizeof(*idx));
		for (i = 0; i < r.njobs; i++)
			idx[i] = i;
		fj.job = job_run;
		fj.done = job_done;
		fj.progress = NULL;
		fj.ctx = &r;
		transport_init();
		fleet_run(&fj, idx, r.njobs, a.forks);
		transport_finish();
	}
count:
	hosts = json_array();
	for (i = 0; i < n; i++) {
		struct job *j = &r.jobs[hps[i]->host->index];
		enum outcome o;

		if (!hps[i]->have_state)
			o = hps[i]->outcome;
		else if (j->err.code != 0 || !j->used)
			o = ENVCTL_OUT_FAILED;
		else if (!yes && idx == NULL)
			o = ENVCTL_OUT_PENDING;	/* chosen, but the answer was no */
		else if (j->ar.outcome == ENVCTL_OUT_CHANGED ||
		    j->ar.outcome == ENVCTL_OUT_OK)
			o = j->ar.outcome;
		else
			o = ENVCTL_OUT_FAILED;
		report_count_outcome(&c, o);
		if (r.json)
			json_array_append_new(hosts, host_json(hps[i], j, o));
	}
	if (r.json)
		out_json(report_result_json("rollback", hosts, &c));
	else {
		json_decref(hosts);
		report_summary(&b, &c, &r.ro);
		out_write(b.data, b.len);
	}
	code = c.failed > 0 || c.unreachable > 0 ? ENVCTL_EXIT_FAIL :
	    ENVCTL_EXIT_OK;
out:
	for (i = 0; i < r.njobs; i++) {
		backup_list_release(&r.jobs[i].bl);
		err_release(&r.jobs[i].err);
		free(r.jobs[i].to);
		apply_result_release(&r.jobs[i].ar);
	}
	free(r.jobs);
	free(idx);
	cmd_plans_free(hps, n);
	agent_binary_release(&ab);
	context_release(&ctx);
	buf_release(&b);
	free(operands);
	return code;
}
