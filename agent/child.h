/*
 * child.h - run a program with a deadline and capped output capture.
 *
 * child_run() starts the program in its own process group with stdin on
 * /dev/null, the environment and working directory given, and every other
 * descriptor closed; it keeps the last out_keep / err_keep bytes of stdout
 * and stderr (the rest is drained and dropped).  However it ends - exit,
 * deadline, stop flag - the whole process group gets SIGKILL and the child
 * is reaped: nothing is left running or unreaped.  It changes the SIGCHLD
 * disposition while it runs, so it is not for threaded programs.
 */
#ifndef ENVCTL_AGENT_CHILD_H
#define ENVCTL_AGENT_CHILD_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"

struct err;

struct child_spec {
	const char	*name;	/* for messages, as the user gave it */
	char *const	*argv;	/* argv[0]: absolute path or name */
	char *const	*envp;
	const char	*path;	/* dirs searched for a bare argv[0] */
	const char	*cwd;	/* NULL: inherit */
	int		 timeout_ms;
	size_t		 out_keep;	/* last bytes of stdout kept */
	size_t		 err_keep;	/* last bytes of stderr kept */
	const volatile sig_atomic_t *stop; /* NULL, or set: give up */
	const sigset_t	*waitmask;	/* NULL: the current mask */
};

struct child_result {
	struct buf	 out;
	struct buf	 err;
	int		 out_truncated;	/* out_keep was exceeded */
	int		 err_truncated;
	int		 status;	/* exit code, or 128 + signal */
	int		 signal;	/* what killed it, or 0 */
	int		 exec_errno;	/* why it did not run, or 0 */
	pid_t		 pid;
};

/*
 * Runs spec's program to completion and fills res (release it with
 * child_result_release() whatever the return).  Returns 0 when it ran and
 * exited, whatever its status; ENVCTL_ENOTFOUND / ENVCTL_ESYS "cannot run
 * 'NAME'" with exec_errno set; ENVCTL_ETIMEOUT "NAME did not finish within
 * N s"; ENVCTL_ESYS when the stop flag rose or a system call failed.
 */
int	child_run(struct child_result *res, const struct child_spec *spec,
	    struct err *err);
void	child_result_release(struct child_result *res);

#endif
