/*
 * cmd.h - the subcommands, one file each (controller/cmd_NAME.c).
 *
 * A command gets argv with argv[0] being its own name, parses its options
 * from one table (opts.h), calls into the modules and returns the process
 * exit code below.  Commands print only through output.h.
 */
#ifndef ENVCTL_CONTROLLER_CMD_H
#define ENVCTL_CONTROLLER_CMD_H

#define ENVCTL_EXIT_OK		0	/* success, nothing to change */
#define ENVCTL_EXIT_FAIL	1	/* a host failed, or bad input */
#define ENVCTL_EXIT_PENDING	2	/* changes pending / drift found */
#define ENVCTL_EXIT_USAGE	64	/* usage error (sysexits EX_USAGE) */
#define ENVCTL_EXIT_BUSY	75	/* drift: the previous run still holds
					   the lock (sysexits EX_TEMPFAIL) */

#include <stddef.h>

#include "controller/engine.h"

struct context;
struct opt;
struct rollout_spec;

int	cmd_apply(int argc, char **argv);
int	cmd_backups(int argc, char **argv);
int	cmd_check(int argc, char **argv);
int	cmd_drift(int argc, char **argv);
int	cmd_facts(int argc, char **argv);
int	cmd_inventory(int argc, char **argv);
int	cmd_plan(int argc, char **argv);
int	cmd_render(int argc, char **argv);
int	cmd_report(int argc, char **argv);
int	cmd_rollback(int argc, char **argv);

/* The options every command that reaches hosts shares. */
struct fleet_args {
	const char	*playbook;
	const char	*limit;
	const char	*ssh_config;
	const char	*known_hosts;
	const char	*color;
	int		 forks;
	int		 timeout;
	int		 max_startups;
	int		 accept_new;
	int		 json;
	int		 quiet;
	int		 verbose;
	const char	*shard;		/* --shard K/N|auto, NULL: none */
	int		 shards;	/* --shards N, 0: not given */
};

#define ENVCTL_FLEET_NOPTS	(12 + ENVCTL_SHARD_NOPTS)
#define ENVCTL_SHARD_NOPTS	2
#define ENVCTL_DEFAULT_FORKS	50
#define ENVCTL_DEFAULT_TIMEOUT	30

/* Sets defaults in a and writes ENVCTL_FLEET_NOPTS entries into opts. */
void	cmd_fleet_options(struct opt *opts, struct fleet_args *a);
/* --lock-timeout SECONDS into *v (0..86400), for the commands that change
 * hosts; the caller sets the default, 30. */
struct opt cmd_lock_timeout_option(int *v);
/* --serial, --by-group and --max-fail, for the commands that change
 * hosts. */
struct rollout_args {
	const char	*serial;
	const char	*by_group;
	const char	*max_fail;
};

#define ENVCTL_ROLLOUT_NOPTS	3

/* Clears a and writes ENVCTL_ROLLOUT_NOPTS entries into opts. */
void	cmd_rollout_options(struct opt *opts, struct rollout_args *a);
/*
 * Parses a into rs and points p->rollout at it when --serial or
 * --by-group was given.  -1 (after printing "envctl CMD: why") on a bad
 * value, or --max-fail without either.
 */
int	cmd_rollout(struct engine_policy *p, struct rollout_spec *rs,
	    const struct rollout_args *a, const char *cmd);
/*
 * 1 when output to fd should be coloured (--color, NO_COLOR, a TTY), 0
 * when not, -1 (after printing why) when WHEN is no valid --color value.
 */
int	cmd_use_color(const char *when, int fd);

/* --shard into *spec and --shards into *shards: ENVCTL_SHARD_NOPTS entries
 * written into opts, for the commands without the fleet options. */
void	cmd_shard_options(struct opt *opts, const char **spec, int *shards);
/*
 * Resolves --shard and --shards into ctx->shard and keeps only that
 * shard's hosts of ctx->selected; ENVCTL_EXIT_OK, or ENVCTL_EXIT_USAGE
 * after printing why.
 */
int	cmd_shard(struct context *ctx, const char *spec, int shards);
/*
 * Loads inventory, --limit, --shard and playbook into ctx, printing every
 * problem; returns ENVCTL_EXIT_OK, ENVCTL_EXIT_FAIL, or ENVCTL_EXIT_USAGE
 * for a bad --shard.
 */
int	cmd_load(struct context *ctx, const char *inventory,
	    const struct fleet_args *a);
/*
 * Fills p (all of it) for a run of cmd over inventory with the shared
 * options: --json, -j, colour, progress, the link's options, this
 * machine's name and the change's timeouts (lock_timeout: --lock-timeout,
 * for the commands that change hosts).  -1 (after printing why) on a bad
 * --color.
 */
int	cmd_policy(struct engine_policy *p, enum engine_cmd cmd,
	    const char *inventory, const struct fleet_args *a,
	    int lock_timeout);
/*
 * engine_run() and its exit code: 64 when it had to ask and could not, 1
 * when it could not start or a host failed or is unreachable, 2 when
 * hosts are left pending and p->pending_exit, else 0 (also after a "no"
 * to the question).
 */
int	cmd_run(struct engine *e, const struct engine_policy *p,
	    const struct context *ctx);

/*
 * Shared by the commands: parses options (argv[1..]); on --help prints the
 * usage to stdout and returns ENVCTL_EXIT_OK through *exitcode; on a usage
 * error prints it with a hint and sets ENVCTL_EXIT_USAGE.  Returns 1 when
 * the command should go on, 0 when it should return *exitcode.
 */
int	cmd_parse(const char *const *usage, const struct opt *opts, int argc,
	    char **argv, char **operands, int *noperands, int min_operands,
	    int max_operands, int *exitcode);

#endif
