/* cmd_facts.c - envctl facts: what each host runs and what is in effect. */
#include <stdlib.h>

#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/discover.h"
#include "controller/engine.h"
#include "controller/opts.h"

static const char *const usage[] = {
	"envctl facts INVENTORY [-p PLAYBOOK] [-l LIMIT] [-j N] [--json]",
	"envctl facts --discover INVENTORY [-l LIMIT] [-j N] [--json]",
	NULL
};

int
cmd_facts(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + 2];
	struct context ctx = { 0 };
	struct engine_policy p;
	struct engine e = { 0 };
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	int nops, code, discover = 0;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 0, "discover",
	    ENVCTL_OPT_FLAG, &discover, NULL, "list every Python interpreter "
	    "on each host that may run workers (docs/worker-env.md)", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (cmd_policy(&p, ENVCTL_CMD_FACTS, operands[0], &a, 0) != 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if ((code = cmd_load(&ctx, operands[0], &a)) != ENVCTL_EXIT_OK)
		goto out;
	if (discover)
		code = discover_fleet(&p, &ctx) == 0 ? ENVCTL_EXIT_OK :
		    ENVCTL_EXIT_FAIL;
	else
		code = cmd_run(&e, &p, &ctx);
out:
	engine_release(&e);
	context_release(&ctx);
	free(operands);
	return code;
}
