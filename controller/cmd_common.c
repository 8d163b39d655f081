/* cmd_common.c - what every subcommand shares (see cmd.h). */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/context.h"
#include "controller/fleet.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/transport.h"

int
cmd_parse(const char *const *usage, const struct opt *opts, int argc,
    char **argv, char **operands, int *noperands, int min_operands,
    int max_operands, int *exitcode)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	int r;

	r = opts_parse(opts, argc, argv, 1, operands, noperands, &err);
	if (r == 1) {
		opts_usage(&b, usage, opts);
		out_write(b.data, b.len);
		buf_release(&b);
		*exitcode = ENVCTL_EXIT_OK;
		return 0;
	}
	if (r == 0 && *noperands < min_operands)
		err_set(&err, ENVCTL_EUSAGE, "missing operand");
	else if (r == 0 && *noperands > max_operands)
		err_set(&err, ENVCTL_EUSAGE, "unexpected operand '%s'",
		    operands[max_operands]);
	if (err.code != 0) {
		out_note("envctl %s: %s\n", argv[0], err.msg);
		opts_usage(&b, usage, opts);
		out_note("%s", b.data);
		buf_release(&b);
		err_release(&err);
		*exitcode = ENVCTL_EXIT_USAGE;
		return 0;
	}
	return 1;
}

struct opt
cmd_lock_timeout_option(int *v)
{
	return (struct opt){ 0, "lock-timeout", ENVCTL_OPT_INT, v, "SECONDS",
	    "wait this long for another envctl's lock on a host (default "
	    "30)", 0, 86400 };
}

void
cmd_fleet_options(struct opt *opts, struct fleet_args *a)
{
	struct opt o[ENVCTL_FLEET_NOPTS] = {
		{ 'p', "playbook", ENVCTL_OPT_STRING, &a->playbook, "PLAYBOOK",
		    "playbook name or file (default: envctl_playbook, "
		    "else cuda13-nccl)", 0, 0 },
		{ 'l', "limit", ENVCTL_OPT_STRING, &a->limit, "PATTERN",
		    "only these hosts: names, groups, globs, !excl, &and", 0,
		    0 },
		{ 'j', "forks", ENVCTL_OPT_INT, &a->forks, "N",
		    "hosts at once (default 50)", 1, 4096 },
		{ 0, "timeout", ENVCTL_OPT_INT, &a->timeout, "SECONDS",
		    "bound for connecting and for each host (default 30)", 1,
		    86400 },
		{ 'F', NULL, ENVCTL_OPT_STRING, &a->ssh_config, "SSH_CONFIG",
		    "ssh_config file (default ~/.ssh/config)", 0, 0 },
		{ 0, "known-hosts", ENVCTL_OPT_STRING, &a->known_hosts,
		    "FILE", "known_hosts file (default ~/.ssh/known_hosts)",
		    0, 0 },
		{ 0, "accept-new-host-keys", ENVCTL_OPT_FLAG, &a->accept_new,
		    NULL, "trust and record unknown host keys (never changed "
		    "ones)", 0, 0 },
		{ 0, "json", ENVCTL_OPT_FLAG, &a->json, NULL,
		    "print one JSON document instead of text", 0, 0 },
		{ 0, "color", ENVCTL_OPT_STRING, &a->color, "WHEN",
		    "auto, always or never (NO_COLOR is honoured)", 0, 0 },
		{ 'q', "quiet", ENVCTL_OPT_FLAG, &a->quiet, NULL,
		    "print only problems and the summary", 0, 0 },
		{ 'v', "verbose", ENVCTL_OPT_COUNT, &a->verbose, NULL,
		    "more detail, also for hosts in sync", 0, 0 },
	};

	memset(a, 0, sizeof(*a));
	a->forks = ENVCTL_DEFAULT_FORKS;
	a->timeout = ENVCTL_DEFAULT_TIMEOUT;
	a->color = "auto";
	memcpy(opts, o, sizeof(o));
}

int
cmd_confirm(const char *verb, size_t n)
{
	char line[64];

	out_note("%s %zu host%s? [y/N] ", verb, n, n == 1 ? "" : "s");
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 0;
	line[strcspn(line, "\r\n")] = '\0';
	return strcmp(line, "y") == 0 || strcmp(line, "Y") == 0 ||
	    strcmp(line, "yes") == 0;
}

int
cmd_use_color(const char *when, int fd)
{
	const char *nc = getenv("NO_COLOR");

	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	if (strcmp(when, "auto") != 0) {
		out_note("envctl: --color expects auto, always or never, not "
		    "'%s'\n", when);
		return -1;
	}
	if (nc != NULL && nc[0] != '\0')
		return 0;
	return isatty(fd);
}

struct run {
	struct context	*ctx;
	const struct fleet_args *a;
	struct agentlink_opts lo;
	struct host_plan **hps;
	const struct plan_then *then;
	size_t		*slot;		/* inventory index -> hps index */
	void		(*done)(void *, struct host_plan *);
	void		*arg;
	int		 progress;
};

static void
run_job(void *arg, size_t i)
{
	struct run *r = arg;

	plan_host(r->hps[r->slot[i]], inventory_host(r->ctx->inv, i),
	    r->ctx->pb, &r->lo, r->then);
}

static void
run_done(void *arg, size_t i)
{
	struct run *r = arg;

	if (r->progress)
		out_note("\r\033[K");
	if (r->done != NULL)
		r->done(r->arg, r->hps[r->slot[i]]);
}

static void
run_progress(void *arg, size_t ndone, size_t n)
{
	struct run *r = arg;

	if (r->progress && ndone < n)
		out_note("\r\033[K%zu/%zu hosts done", ndone, n);
}

int
cmd_load(struct context *ctx, const char *inventory,
    const struct fleet_args *a)
{
	struct err err = ENVCTL_ERR_INIT;

	if (context_load(ctx, inventory, a->playbook, a->limit, &err) == 0)
		return ENVCTL_EXIT_OK;
	out_errors_grouped(&err);
	err_release(&err);
	return ENVCTL_EXIT_FAIL;
}

int
cmd_run_plans(struct context *ctx, const char *inventory,
    const struct fleet_args *a, struct agent_binary *ab,
    const struct plan_then *then, struct host_plan ***out, size_t *nout,
    void (*done)(void *, struct host_plan *), void *arg)
{
	struct err err = ENVCTL_ERR_INIT;
	struct fleet_job fj;
	struct run r;
	size_t *idx, i, n = 0;
	int code = ENVCTL_EXIT_FAIL;

	*out = NULL;
	*nout = 0;
	memset(&r, 0, sizeof(r));
	if (ctx->inv == NULL && cmd_load(ctx, inventory, a) != ENVCTL_EXIT_OK)
		return ENVCTL_EXIT_FAIL;
	if (agent_binary_load(ab, NULL, &err) != 0) {
		out_errors(&err);
		err_release(&err);
		return ENVCTL_EXIT_FAIL;
	}
	idx = xcalloc(ctx->nselected + 1, sizeof(*idx));
	r.slot = xcalloc(inventory_nhosts(ctx->inv) + 1, sizeof(*r.slot));
	r.hps = xcalloc(ctx->nselected + 1, sizeof(*r.hps));
	for (i = 0; i < inventory_nhosts(ctx->inv); i++) {
		if (!ctx->selected[i])
			continue;
		r.slot[i] = n;
		r.hps[n] = xcalloc(1, sizeof(**r.hps));
		idx[n++] = i;
	}
	r.ctx = ctx;
	r.a = a;
	r.then = then;
	r.lo.agent = ab;
	r.lo.ssh_config = a->ssh_config;
	r.lo.known_hosts = a->known_hosts;
	r.lo.accept_new = a->accept_new;
	r.lo.timeout = a->timeout;
	r.done = done;
	r.arg = arg;
	r.progress = !a->quiet && isatty(STDERR_FILENO);
	fj.job = run_job;
	fj.done = run_done;
	fj.progress = run_progress;
	fj.ctx = &r;
	transport_init();
	if (fleet_run(&fj, idx, n, a->forks) == 0)
		code = ENVCTL_EXIT_OK;
	transport_finish();
	*out = r.hps;
	*nout = n;
	free(idx);
	free(r.slot);
	return code;
}

void
cmd_plans_free(struct host_plan **hps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		plan_release(hps[i]);
		free(hps[i]);
	}
	free(hps);
}
