/* cmd_plan.c - envctl plan: read every host, show what apply would change. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/planfile.h"
#include "controller/playbook.h"
#include "controller/report.h"

static const char *const usage[] = {
	"envctl plan INVENTORY [-o PLANFILE] [-p PLAYBOOK] [-l LIMIT] "
	    "[-j N] [--json]",
	NULL
};

struct printer {
	struct report_opts ro;
	int		 json;
};

static void
print_host(void *arg, struct host_plan *hp)
{
	struct printer *p = arg;
	struct buf b = ENVCTL_BUF_INIT;

	if (p->json)
		return;
	if (p->ro.quiet && (hp->outcome == ENVCTL_OUT_OK ||
	    hp->outcome == ENVCTL_OUT_PENDING))
		return;
	report_plan_host(&b, hp, &p->ro);
	out_write(b.data, b.len);
	buf_wipe(&b);
}

/* The whole run as one JSON document on stdout. */
static void
print_json(const char *inventory, const struct context *ctx,
    struct host_plan **hps, size_t n, const struct plan_counts *c)
{
	json_t *root, *hosts;
	size_t i;

	hosts = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(hosts, report_plan_json(hps[i]));
	root = json_pack("{s:i, s:s, s:s, s:{s:s, s:s}, s:o, s:{s:I, s:I, "
	    "s:I, s:I}}", "format", 1, "command", "plan", "inventory",
	    inventory, "playbook", "name", ctx->pb->name, "path",
	    ctx->pb->path, "hosts", hosts, "summary",
	    "ok", (json_int_t)c->ok, "pending", (json_int_t)c->pending,
	    "failed", (json_int_t)c->failed,
	    "unreachable", (json_int_t)c->unreachable);
	out_json(root);
}

int
cmd_plan(int argc, char **argv)
{
	struct fleet_args a;
	const char *planfile = NULL;
	struct opt opts[ENVCTL_FLEET_NOPTS + 2];
	struct context ctx = { 0 };
	struct agent_binary ab = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct plan_counts c = { 0 };
	struct printer p;
	struct host_plan **hps = NULL;
	struct buf b = ENVCTL_BUF_INIT;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	size_t n = 0, i;
	int nops, code;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 'o', "out",
	    ENVCTL_OPT_STRING, &planfile, "PLANFILE",
	    "also save the plan for 'envctl apply PLANFILE' (mode 0600)",
	    0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	memset(&p, 0, sizeof(p));
	p.json = a.json;
	p.ro.quiet = a.quiet;
	p.ro.verbose = a.verbose;
	p.ro.show_diff = 1;
	if ((p.ro.color = cmd_use_color(a.color, STDOUT_FILENO)) < 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	p.ro.color = p.ro.color && !a.json;
	code = cmd_run_plans(&ctx, operands[0], &a, &ab, NULL, &hps, &n,
	    print_host, &p);
	if (code != ENVCTL_EXIT_OK)
		goto out;
	for (i = 0; i < n; i++)
		report_count(&c, hps[i]);
	if (a.json)
		print_json(operands[0], &ctx, hps, n, &c);
	else {
		report_summary(&b, &c, &p.ro);
		out_write(b.data, b.len);
	}
	if (planfile != NULL && planfile_write(planfile, ctx.inv, ctx.pb,
	    hps, n, &err) != 0) {
		out_errors(&err);
		code = ENVCTL_EXIT_FAIL;
		goto out;
	}
	if (c.failed > 0 || c.unreachable > 0)
		code = ENVCTL_EXIT_FAIL;
	else if (c.pending > 0)
		code = ENVCTL_EXIT_PENDING;
	else
		code = ENVCTL_EXIT_OK;
out:
	cmd_plans_free(hps, n);
	agent_binary_release(&ab);
	context_release(&ctx);
	err_release(&err);
	buf_release(&b);
	free(operands);
	return code;
}
