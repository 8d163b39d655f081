/* cmd_check.c - envctl check: validate inventory and playbook offline. */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/playbook.h"

static const char *const usage[] = {
	"envctl check INVENTORY [-p PLAYBOOK] [-l LIMIT] [--shard K/N] [-q] "
	    "[-v]",
	NULL
};

/*
 * Renders every selected host; chains every problem into err and every
 * value-rule warning into warn.
 */
static void
check_hosts(const struct context *ctx, int verbose, struct err *err,
    struct err *warn)
{
	struct err e = ENVCTL_ERR_INIT;
	struct desired d;
	struct buf line = ENVCTL_BUF_INIT;
	struct vis v = ENVCTL_VIS_INIT;
	const struct host *h;
	size_t i, j;

	for (i = 0; i < inventory_nhosts(ctx->inv); i++) {
		if (!ctx->selected[i])
			continue;
		h = inventory_host(ctx->inv, i);
		if (desired_render(&d, ctx->pb, h, NULL, 0, "(empty file)",
		    &e) != 0)
			err_move(err, &e);
		else if (verbose) {
			buf_reset(&line);
			buf_addf(&line, "%s:", vis_str(&v, h->name));
			for (j = 0; j < d.nvars; j++)
				buf_addf(&line, " %s=%s",
				    vis_str(&v, d.vars[j].name),
				    vis_str(&v, d.vars[j].secret ? "********" :
				    d.vars[j].value));
			out_printf("%s\n", line.data);
		}
		err_move(warn, &d.warnings);
		desired_release(&d);
	}
	buf_release(&line);
	vis_release(&v);
}

int
cmd_check(int argc, char **argv)
{
	const char *playbook = NULL, *limit = NULL, *shard = NULL;
	int quiet = 0, verbose = 0, shards = 0;
	struct opt opts[] = {
		{ 'p', "playbook", ENVCTL_OPT_STRING, &playbook, "PLAYBOOK",
		    "playbook name or file (default: envctl_playbook, "
		    "else cuda13-nccl)", 0, 0 },
		{ 'l', "limit", ENVCTL_OPT_STRING, &limit, "PATTERN",
		    "only these hosts: names, groups, globs, !excl, &and", 0,
		    0 },
		{ 'q', "quiet", ENVCTL_OPT_FLAG, &quiet, NULL,
		    "print only problems", 0, 0 },
		{ 'v', "verbose", ENVCTL_OPT_COUNT, &verbose, NULL,
		    "also print each host's values (secrets masked)", 0, 0 },
		/* --shard and --shards: cmd_shard_options() fills them. */
		ENVCTL_OPT_END_ENTRY, ENVCTL_OPT_END_ENTRY,
		ENVCTL_OPT_END_ENTRY
	};
	struct context ctx = { 0 };
	struct err err = ENVCTL_ERR_INIT, warn = ENVCTL_ERR_INIT;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	int n, code = ENVCTL_EXIT_FAIL, problems, warnings;

	cmd_shard_options(opts + 4, &shard, &shards);
	if (!cmd_parse(usage, opts, argc, argv, operands, &n, 1, 1, &code))
		goto out;
	if ((code = cmd_shard(&ctx, shard, shards)) != ENVCTL_EXIT_OK)
		goto out;
	code = ENVCTL_EXIT_FAIL;
	if (context_load(&ctx, operands[0], playbook, limit, &err) == 0)
		(void)cmd_shard(&ctx, shard, shards);
	if (ctx.pb != NULL && ctx.nselected > 0)
		check_hosts(&ctx, verbose, &err, &warn);
	/* Warnings first: what NCCL misreads, grouped across hosts. */
	out_errors_grouped(&warn);
	warnings = err_count(&warn);
	problems = err_count(&err);
	if (problems > 0) {
		out_errors_grouped(&err);
		out_note("check: %d problem%s found\n", problems,
		    problems == 1 ? "" : "s");
		goto out;
	}
	if (!quiet) {
		out_printf("%s: %zu host%s, %zu selected\n", operands[0],
		    inventory_nhosts(ctx.inv),
		    inventory_nhosts(ctx.inv) == 1 ? "" : "s", ctx.nselected);
		out_printf("%s: playbook '%s', mode %s, policy %s, "
		    "%zu variable%s\n", ctx.pb->path, ctx.pb->name,
		    ctx.pb->mode == ENVCTL_MODE_FILE ? "file" : "block",
		    ctx.pb->policy == ENVCTL_POLICY_OVERRIDE ? "override" :
		    "setdefault", ctx.pb->nenv, ctx.pb->nenv == 1 ? "" : "s");
		if (warnings > 0)
			out_printf("check: ok, %d warning%s\n", warnings,
			    warnings == 1 ? "" : "s");
		else
			out_printf("check: ok\n");
	}
	code = ENVCTL_EXIT_OK;
out:
	context_release(&ctx);
	err_release(&err);
	err_release(&warn);
	free(operands);
	return code;
}
