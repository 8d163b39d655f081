/* cmd_render.c - envctl render: one host's desired file, offline. */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/playbook.h"
#include "controller/report.h"

#define CURRENT_MAX	(16u * 1024 * 1024)

static const char *const usage[] = {
	"envctl render INVENTORY --host HOST [-p PLAYBOOK] [--current FILE] "
	    "[--show-secrets]",
	NULL
};

int
cmd_render(int argc, char **argv)
{
	const char *playbook = NULL, *hostname = NULL, *current = NULL;
	int show_secrets = 0;
	struct opt opts[] = {
		{ 'p', "playbook", ENVCTL_OPT_STRING, &playbook, "PLAYBOOK",
		    "playbook name or file (default: envctl_playbook, "
		    "else cuda13-nccl)", 0, 0 },
		{ 0, "host", ENVCTL_OPT_STRING, &hostname, "HOST",
		    "the inventory host to render for (required)", 0, 0 },
		{ 0, "current", ENVCTL_OPT_STRING, &current, "FILE",
		    "splice the block into FILE (mode: block; default: "
		    "an empty file)", 0, 0 },
		{ 0, "show-secrets", ENVCTL_OPT_FLAG, &show_secrets, NULL,
		    "print secret: true values instead of ********", 0, 0 },
		ENVCTL_OPT_END_ENTRY
	};
	struct context ctx = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct desired d = { 0 };
	struct buf cur;
	const struct host *h;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	size_t i;
	int n, r, code = ENVCTL_EXIT_FAIL;

	buf_init(&cur, CURRENT_MAX);
	if (!cmd_parse(usage, opts, argc, argv, operands, &n, 1, 1, &code))
		goto out;
	if (hostname == NULL) {
		out_note("envctl render: --host HOST is required\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	/* Only this host counts, for envctl_playbook too. */
	if (context_load(&ctx, operands[0], playbook, hostname, &err) != 0)
		goto fail;
	if ((h = inventory_find(ctx.inv, hostname)) == NULL) {
		err_set(&err, ENVCTL_ENOTFOUND, "host '%s' is not in '%s'",
		    hostname, operands[0]);
		goto fail;
	}
	if (current != NULL && buf_read_file(&cur, current, &err) != 0)
		goto fail;
	r = desired_values(&d, ctx.pb, h, &err);
	/* What NCCL or Triton would misread, on stderr, before the file. */
	out_errors(&d.warnings);
	if (r != 0)
		goto fail;
	for (i = 0; i < d.nvars && !show_secrets; i++) {
		if (!d.vars[i].secret)
			continue;
		explicit_wipe(d.vars[i].value, strlen(d.vars[i].value));
		free(d.vars[i].value);
		d.vars[i].value = xstrdup(ENVCTL_MASK);
	}
	if (desired_content(&d, ctx.pb, h, current != NULL ? cur.data : NULL,
	    cur.len, current != NULL ? current : "(empty file)", &err) != 0)
		goto fail;
	if (out_write(d.content.data, d.content.len) == 0)
		code = ENVCTL_EXIT_OK;
	goto out;
fail:
	out_errors(&err);
out:
	desired_release(&d);
	context_release(&ctx);
	err_release(&err);
	buf_release(&cur);
	free(operands);
	return code;
}
