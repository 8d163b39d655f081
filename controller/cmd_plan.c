/* cmd_plan.c - envctl plan: read every host, show what apply would change. */
#include <stdlib.h>

#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/planfile.h"

static const char *const usage[] = {
	"envctl plan INVENTORY [-o PLANFILE] [-p PLAYBOOK] [-l LIMIT] "
	    "[-j N] [--json]",
	NULL
};

int
cmd_plan(int argc, char **argv)
{
	struct fleet_args a;
	const char *planfile = NULL;
	struct opt opts[ENVCTL_FLEET_NOPTS + 2];
	struct context ctx = { 0 };
	struct engine_policy p;
	struct engine e = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	int nops, code;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 'o', "out",
	    ENVCTL_OPT_STRING, &planfile, "PLANFILE",
	    "also save the plan for 'envctl apply PLANFILE' (mode 0600)",
	    0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (cmd_policy(&p, ENVCTL_CMD_PLAN, operands[0], &a, 0) != 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	p.ro.quiet = a.quiet;
	p.ro.verbose = a.verbose;
	p.ro.show_diff = 1;
	p.pending_exit = 1;
	if ((code = cmd_load(&ctx, operands[0], &a)) != ENVCTL_EXIT_OK)
		goto out;
	code = cmd_run(&e, &p, &ctx);
	if (code != ENVCTL_EXIT_OK && code != ENVCTL_EXIT_PENDING &&
	    e.nplans == 0)
		goto out;
	if (planfile != NULL && planfile_write(planfile, ctx.inv, ctx.pb,
	    e.plans, e.nplans, &err) != 0) {
		out_errors(&err);
		code = ENVCTL_EXIT_FAIL;
	}
out:
	engine_release(&e);
	context_release(&ctx);
	err_release(&err);
	free(operands);
	return code;
}
