/*
 * cmd_rollback.c - envctl rollback: put a backup back, through the same
 * locked, compare-and-swap, backed-up, atomic path as apply.  The engine
 * reads each host, lists its backups and chooses (engine.h).
 */
#include <stdlib.h>
#include <unistd.h>

#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/rollout.h"

static const char *const usage[] = {
	"envctl rollback INVENTORY [--to ID|latest] [--yes] [-l LIMIT] "
	    "[--serial LIST] [--by-group GROUPS] [--max-fail N|P%]",
	NULL
};

int
cmd_rollback(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + ENVCTL_ROLLOUT_NOPTS + 4];
	struct rollout_args ra;
	struct rollout_spec rs;
	struct context ctx = { 0 };
	struct engine_policy p;
	struct engine e = { 0 };
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	const char *to = "latest";
	int nops, code, yes = 0, lock_timeout = 30;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt){ 0, "to", ENVCTL_OPT_STRING,
	    &to, "ID", "the backup to restore (default: latest, the newest "
	    "that differs from the current file)", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 1] = (struct opt){ 'y', "yes",
	    ENVCTL_OPT_FLAG, &yes, NULL, "roll back without asking", 0, 0 };
	opts[ENVCTL_FLEET_NOPTS + 2] = cmd_lock_timeout_option(&lock_timeout);
	cmd_rollout_options(&opts[ENVCTL_FLEET_NOPTS + 3], &ra);
	opts[ENVCTL_FLEET_NOPTS + ENVCTL_ROLLOUT_NOPTS + 3] =
	    (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if (cmd_policy(&p, ENVCTL_CMD_ROLLBACK, operands[0], &a,
	    lock_timeout) != 0 || cmd_rollout(&p, &rs, &ra, argv[0]) != 0) {
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
	p.change = ENVCTL_CHANGE_ROLLBACK;
	p.to = to;
	/* With --yes each host is restored on the session that read it. */
	p.ask = !yes;
	p.verb = "Roll back";
	p.declined_summary = 1;
	if ((code = cmd_load(&ctx, operands[0], &a)) == ENVCTL_EXIT_OK)
		code = cmd_run(&e, &p, &ctx);
out:
	engine_release(&e);
	context_release(&ctx);
	free(operands);
	return code;
}
