/*
 * runlock.h - the drift run lock: one `envctl drift` at a time.
 *
 * flock(LOCK_EX | LOCK_NB) on a lock file in a directory only this user
 * can enter (common/lockfile.h checks it, and the file): by default
 * ENVCTL_RUNLOCK_ROOT_DIR for root, else $XDG_RUNTIME_DIR/envctl or
 * $HOME/.cache/envctl.  The file records "pid=P time=T"; a holder is
 * found in /proc/locks, and only an envctl whose record is in the file
 * counts as a previous run (ENVCTL_ELOCKED): any other holder is named by
 * pid, user and command, and is an error.  The lock dies with the process.
 */
#ifndef ENVCTL_CONTROLLER_RUNLOCK_H
#define ENVCTL_CONTROLLER_RUNLOCK_H

struct err;

#define ENVCTL_RUNLOCK_ROOT_DIR	"/run/envctl"
#define ENVCTL_RUNLOCK_NAME	"drift.lock"

struct runlock {
	int	 fd;	/* -1 when not held */
	char	*path;
};

/* The default lock file of this user; NULL when it has none (no
 * $XDG_RUNTIME_DIR nor $HOME).  The caller frees it. */
char	*runlock_default_path(void);
/*
 * Takes the run lock path (NULL: the default) into rl; release it with
 * runlock_release() whatever the return.  ENVCTL_ELOCKED "the previous
 * drift run still holds 'PATH' (pid P); not starting"; ENVCTL_EINVALID
 * when it is held by something else ("... held by pid P (user U: CMD),
 * not by envctl") or its directory or file is not safe; ENVCTL_ESYS.
 */
int	runlock_acquire(struct runlock *rl, const char *path,
	    struct err *err);
void	runlock_release(struct runlock *rl);

#endif
