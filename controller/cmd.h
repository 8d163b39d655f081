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

struct agent_binary;
struct context;
struct err;
struct host_plan;
struct opt;
struct plan_then;

int	cmd_apply(int argc, char **argv);
int	cmd_backups(int argc, char **argv);
int	cmd_check(int argc, char **argv);
int	cmd_drift(int argc, char **argv);
int	cmd_facts(int argc, char **argv);
int	cmd_inventory(int argc, char **argv);
int	cmd_plan(int argc, char **argv);
int	cmd_render(int argc, char **argv);
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
	int		 accept_new;
	int		 json;
	int		 quiet;
	int		 verbose;
};

#define ENVCTL_FLEET_NOPTS	11
#define ENVCTL_DEFAULT_FORKS	50
#define ENVCTL_DEFAULT_TIMEOUT	30

/* Sets defaults in a and writes ENVCTL_FLEET_NOPTS entries into opts. */
void	cmd_fleet_options(struct opt *opts, struct fleet_args *a);
/* --lock-timeout SECONDS into *v (0..86400), for the commands that change
 * hosts; the caller sets the default, 30. */
struct opt cmd_lock_timeout_option(int *v);
/* Asks "VERB N hosts? [y/N] " on the terminal; 1 for yes. */
int	cmd_confirm(const char *verb, size_t n);
/*
 * 1 when output to fd should be coloured (--color, NO_COLOR, a TTY), 0
 * when not, -1 (after printing why) when WHEN is no valid --color value.
 */
int	cmd_use_color(const char *when, int fd);

/*
 * Loads inventory, --limit and playbook into ctx, printing every problem;
 * returns ENVCTL_EXIT_OK or ENVCTL_EXIT_FAIL.
 */
int	cmd_load(struct context *ctx, const char *inventory,
	    const struct fleet_args *a);
/*
 * Loads inventory, playbook (unless ctx is loaded already: cmd_load) and the agent program (into *ab, which the
 * caller releases with agent_binary_release, also on failure), then reads
 * every selected host in parallel, running then (may be NULL) on each
 * host's session after its read; *out gets one host_plan per selected host, in inventory order
 * (*nout of them; free with cmd_plans_free); done(arg, hp), if not NULL, is
 * called in inventory order as soon as each plan is complete.  Returns an exit code:
 * ENVCTL_EXIT_OK when the hosts could be tried (their own failures are in
 * the plans), else ENVCTL_EXIT_FAIL after printing why.
 */
int	cmd_run_plans(struct context *ctx, const char *inventory,
	    const struct fleet_args *a, struct agent_binary *ab,
	    const struct plan_then *then, struct host_plan ***out,
	    size_t *nout, void (*done)(void *, struct host_plan *),
	    void *arg);
void	cmd_plans_free(struct host_plan **hps, size_t n);

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
