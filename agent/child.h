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
	int		 deathsig;	/* when the agent dies; 0: SIGKILL */
	int		 direct;	/* the agent's own child: no waiter
					   between (see child_spawn()) */
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
void	child_result_init(struct child_result *res);
void	child_result_release(struct child_result *res);

/*
 * The parts child_run() is made of, for a program started some other way
 * (forkserver.h).  child_spawn() forks and execs spec's program in its own
 * process group with in, out and errfd as its 0, 1 and 2 and nothing else
 * open; on exec failure the child writes its errno to statfd (if >= 0)
 * and exits 127.  Unless spec->direct, the program runs under a waiter
 * that holds no descriptor and ends as the program ends, so that nothing
 * the program does to its parent reaches the agent; the pid returned is
 * the waiter's, and names the group.  Returns -1 with err set on failure.
 */
pid_t	child_spawn(const struct child_spec *spec, int in, int out, int errfd,
	    int statfd, struct err *err);

/* What child_collect() watches besides stdout and stderr. */
struct child_watch {
	int	 fd;		/* read by ready() when readable; -1: none */
	int	(*ready)(void *arg, struct err *err);	/* < 0: give up
				   (err set); 0: watch on; > 0: done with fd */
	int	(*gone)(void *arg);	/* 1 once the program has exited */
	void	*arg;
};

/*
 * Reads rd[0] (stdout) and rd[1] (stderr) into res, keeping spec's tails,
 * until both close, or GRACE (200 ms) after gone() for descendants that
 * hold them; closes them.  ENVCTL_ETIMEOUT at deadline (deadline_now_ms()
 * + timeout), ENVCTL_ESYS on the stop flag; ready()'s error.  It neither
 * kills nor reaps: the caller does, whatever the return.
 */
int	child_collect(struct child_result *res, int rd[2],
	    struct child_watch *w, const struct child_spec *spec,
	    const sigset_t *waitmask, long long deadline, struct err *err);
/*
 * n pipes with both ends close-on-exec, read ends in rd (below
 * FD_SETSIZE), write ends in wr; on failure none stays open and the
 * ENVCTL_ESYS code is returned.
 */
int	child_pipes(int rd[], int wr[], int n, struct err *err);
/* 1 once pid, a child of ours, has exited; it is not reaped. */
int	child_exited(pid_t pid);
/* SIGKILLs pid's group and pid, reaps pid; returns its wait status. */
int	child_kill(pid_t pid);
/* child_kill(), and sets res's status and signal from it. */
void	child_reap(struct child_result *res, pid_t pid);
/*
 * While held, SIGCHLD is blocked except in the wait of child_collect()
 * given h.waitmask (waitmask without SIGCHLD, or the mask held before),
 * which it interrupts.
 */
struct child_sigchld {
	struct sigaction oldsa;
	sigset_t	 oldmask;
	sigset_t	 waitmask;
};
void	child_sigchld_hold(struct child_sigchld *h, const sigset_t *waitmask);
void	child_sigchld_release(struct child_sigchld *h);

#endif
