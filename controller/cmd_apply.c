/*
 * cmd_apply.c - envctl apply: plan, ask, then change the hosts that need
 * it; or apply a saved plan exactly, host by host, where the file is still
 * what the plan read.  The plan file is read and checked by planfile.c,
 * each host re-rendered, read and changed by the engine (engine.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/planfile.h"
#include "controller/rollout.h"

static const char *const usage[] = {
	"envctl apply INVENTORY [--yes] [-p PLAYBOOK] [-l LIMIT] [-j N] "
	    "[--serial LIST] [--by-group GROUPS] [--max-fail N|P%]",
	"envctl apply PLANFILE [-j N] [--serial LIST] [--by-group GROUPS] "
	    "[--max-fail N|P%]",
	NULL
};

/*
 * apply PLANFILE: today's inventory and playbook, from the plan's paths,
 * must have the plan's digests, or nothing is applied.
 */
static int
load_plan(struct context *ctx, const struct planfile *pf)
{
	struct err err = ENVCTL_ERR_INIT;

	if (context_load(ctx, pf->inventory_path, pf->playbook_path, NULL,
	    &err) == 0 && planfile_check_inputs(pf, ctx->inv, ctx->pb,
	    &err) == 0)
		return ENVCTL_EXIT_OK;
	out_errors(&err);
	err_release(&err);
	return ENVCTL_EXIT_FAIL;
}

int
cmd_apply(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + ENVCTL_ROLLOUT_NOPTS + 3];
	struct rollout_args ra;
	struct rollout_spec rs;
	struct context ctx = { 0 };
	struct engine_policy p;
	struct engine e = { 0 };
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	int nops, code, yes = 0, lock_timeout = 30, is_plan = 0;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 'y', "yes",
	    ENVCTL_OPT_FLAG, &yes, NULL,
	    "apply without asking (needed when stdin is not a terminal)",
	    0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = cmd_lock_timeout_option(&lock_timeout);
	cmd_rollout_options(&opts[ENVCTL_FLEET_NOPTS + 2], &ra);
	opts[ENVCTL_FLEET_NOPTS + ENVCTL_ROLLOUT_NOPTS + 2] =
	    (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (cmd_policy(&p, ENVCTL_CMD_APPLY, operands[0], &a,
	    lock_timeout) != 0 || cmd_rollout(&p, &rs, &ra, argv[0]) != 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	p.change = ENVCTL_CHANGE_APPLY;
	p.ro.quiet = a.quiet;
	p.ro.verbose = a.verbose;
	/*
	 * Test-only: ask the agent to die at one step of apply.  Refused by
	 * every agent but the test build (envctl-agent-faults).
	 */
	p.ao.fault = getenv("ENVCTL_TEST_FAULT");
	code = ENVCTL_EXIT_FAIL;
	if (planfile_read(&pf, &is_plan, operands[0], &err) != 0) {
		out_errors(&err);
		goto out;
	}
	if (is_plan && (a.shard != NULL || a.shards > 0)) {
		out_note("envctl apply: --shard splits an inventory; shard "
		    "the plan instead (envctl plan --shard K/N -o FILE)\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (is_plan) {
		/* Applied exactly, host by host: nothing to ask. */
		p.plan = &pf;
		p.plan_path = operands[0];
		p.inventory = pf.inventory_path;
		p.progress = 0;
		if ((code = load_plan(&ctx, &pf)) == ENVCTL_EXIT_OK)
			code = cmd_run(&e, &p, &ctx);
		goto out;
	}
	/* With --yes each host changes on the session that read it. */
	p.ask = !yes;
	p.verb = "Apply to";
	p.ro.show_diff = 1;
	if ((code = cmd_load(&ctx, operands[0], &a)) == ENVCTL_EXIT_OK)
		code = cmd_run(&e, &p, &ctx);
out:
	engine_release(&e);
	context_release(&ctx);
	planfile_release(&pf);
	err_release(&err);
	free(operands);
	return code;
}
