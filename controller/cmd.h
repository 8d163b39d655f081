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

struct err;
struct opt;

int	cmd_check(int argc, char **argv);
int	cmd_render(int argc, char **argv);

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
