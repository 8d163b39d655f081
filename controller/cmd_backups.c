/* cmd_backups.c - envctl backups: the backups each host keeps. */
#include <stdlib.h>

#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/opts.h"

static const char *const usage[] = {
	"envctl backups INVENTORY [-p PLAYBOOK] [-l LIMIT] [-j N] [--json]",
	NULL
};

int
cmd_backups(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + 1];
	struct context ctx = { 0 };
	struct engine_policy p;
	struct engine e = { 0 };
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	int nops, code;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (cmd_policy(&p, ENVCTL_CMD_BACKUPS, operands[0], &a, 0) != 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	/* Read only: the list comes on the session that read the host. */
	p.change = ENVCTL_CHANGE_BACKUPS;
	if ((code = cmd_load(&ctx, operands[0], &a)) == ENVCTL_EXIT_OK)
		code = cmd_run(&e, &p, &ctx);
out:
	engine_release(&e);
	context_release(&ctx);
	free(operands);
	return code;
}
