/* cmd_common.c - what every subcommand shares (see cmd.h). */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/agentlink.h"
#include "controller/apply.h"
#include "controller/context.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/rollout.h"
#include "controller/shard.h"
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
cmd_rollout_options(struct opt *opts, struct rollout_args *a)
{
	memset(a, 0, sizeof(*a));
	opts[0] = (struct opt){ 0, "serial", ENVCTL_OPT_STRING, &a->serial,
	    "LIST", "change the hosts in batches of these sizes, each a "
	    "count or a percentage (1,10%,100%); the last repeats", 0, 0 };
	opts[1] = (struct opt){ 0, "by-group", ENVCTL_OPT_STRING,
	    &a->by_group, "GROUPS", "change the hosts group by group, in "
	    "this order (rack1,rack2,all), each host with the first it is "
	    "in; --serial's batches apply within each group", 0, 0 };
	opts[2] = (struct opt){ 0, "max-fail", ENVCTL_OPT_STRING,
	    &a->max_fail, "N|P%", "with --serial or --by-group: stop after "
	    "the batch in which the failed hosts exceed N, or P% of the "
	    "hosts to change", 0, 0 };
}

int
cmd_rollout(struct engine_policy *p, struct rollout_spec *rs,
    const struct rollout_args *a, const char *cmd)
{
	struct err err = ENVCTL_ERR_INIT;

	memset(rs, 0, sizeof(*rs));
	if (a->max_fail != NULL && a->serial == NULL && a->by_group == NULL)
		err_set(&err, ENVCTL_EUSAGE, "--max-fail needs --serial or "
		    "--by-group: in one batch there is nothing left to stop");
	else if ((a->serial == NULL ||
	    rollout_parse_serial(rs, a->serial, &err) == 0) &&
	    (a->by_group == NULL ||
	    rollout_parse_groups(rs, a->by_group, &err) == 0) &&
	    a->max_fail != NULL)
		rollout_parse_max_fail(rs, a->max_fail, &err);
	if (err.code != 0) {
		out_note("envctl %s: %s\n", cmd, err.msg);
		err_release(&err);
		return -1;
	}
	if (a->serial != NULL || a->by_group != NULL)
		p->rollout = rs;
	return 0;
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
		{ 0, "max-startups", ENVCTL_OPT_INT, &a->max_startups, "N",
		    "SSH handshakes in flight per jump host or target "
		    "(default 10)", 1, 100000 },
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
	a->max_startups = ENVCTL_DEFAULT_MAX_STARTUPS;
	a->color = "auto";
	memcpy(opts, o, sizeof(o));
	/* Last, after the ones above: kept apart so that both lists grow. */
	cmd_shard_options(opts + ENVCTL_FLEET_NOPTS - ENVCTL_SHARD_NOPTS,
	    &a->shard, &a->shards);
}

void
cmd_shard_options(struct opt *opts, const char **spec, int *shards)
{
	opts[0] = (struct opt){ 0, "shard", ENVCTL_OPT_STRING, spec, "K/N",
	    "only shard K (0..N-1) of N of the hosts, by a stable hash of "
	    "their names; auto: from Slurm's or Kubernetes' task index", 0,
	    0 };
	opts[1] = (struct opt){ 0, "shards", ENVCTL_OPT_INT, shards, "N",
	    "with --shard auto in a Kubernetes Indexed Job: its completions",
	    1, ENVCTL_SHARD_MAX };
}

int
cmd_shard(struct context *ctx, const char *spec, int shards)
{
	struct err err = ENVCTL_ERR_INIT;

	if (shard_resolve(&ctx->shard, spec, shards, &err) != 0) {
		out_note("envctl: %s\n", err.msg);
		err_release(&err);
		return ENVCTL_EXIT_USAGE;
	}
	if (ctx->inv != NULL && ctx->selected != NULL)
		shard_select(&ctx->shard, ctx->inv, ctx->selected,
		    &ctx->nselected);
	return ENVCTL_EXIT_OK;
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

int
cmd_load(struct context *ctx, const char *inventory,
    const struct fleet_args *a)
{
	struct err err = ENVCTL_ERR_INIT;

	/* A bad --shard is a usage error, found before anything is read. */
	if (cmd_shard(ctx, a->shard, a->shards) != ENVCTL_EXIT_OK)
		return ENVCTL_EXIT_USAGE;
	if (context_load(ctx, inventory, a->playbook, a->limit, &err) == 0)
		return cmd_shard(ctx, a->shard, a->shards);
	out_errors_grouped(&err);
	err_release(&err);
	return ENVCTL_EXIT_FAIL;
}

int
cmd_run(struct engine *e, const struct engine_policy *p,
    const struct context *ctx)
{
	const struct plan_counts *c = &e->counts;
	int r;

	if ((r = engine_run(e, p, ctx)) != 0)
		return r == ENVCTL_EUSAGE ? ENVCTL_EXIT_USAGE :
		    ENVCTL_EXIT_FAIL;
	if (e->asked_no && !p->declined_summary)
		return ENVCTL_EXIT_OK;
	if (c->failed > 0 || c->unreachable > 0)
		return ENVCTL_EXIT_FAIL;
	if (c->pending > 0 && p->pending_exit)
		return ENVCTL_EXIT_PENDING;
	return ENVCTL_EXIT_OK;
}

int
cmd_policy(struct engine_policy *p, enum engine_cmd cmd,
    const char *inventory, const struct fleet_args *a, int lock_timeout)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->inventory = inventory;
	p->json = a->json;
	p->forks = a->forks;
	if ((p->ro.color = cmd_use_color(a->color, STDOUT_FILENO)) < 0)
		return -1;
	p->ro.color = p->ro.color && !a->json;
	p->progress = !a->quiet && isatty(STDERR_FILENO);
	p->link.ssh_config = a->ssh_config;
	p->link.known_hosts = a->known_hosts;
	p->link.accept_new = a->accept_new;
	p->link.timeout = a->timeout;
	p->link.max_startups = a->max_startups;
	if (gethostname(p->controller, sizeof(p->controller)) != 0)
		snprintf(p->controller, sizeof(p->controller), "unknown");
	p->controller[sizeof(p->controller) - 1] = '\0';
	p->ao.controller = p->controller;
	p->ao.lock_timeout = lock_timeout;
	/*
	 * The change may wait lock_timeout for the host's lock, then run the
	 * interpreter: its waits get that long; connecting and reading keep
	 * --timeout.
	 */
	p->ao.change_timeout = apply_change_timeout(a->timeout, lock_timeout);
	return 0;
}
