/*
 * lock.h - one envctl at a time per managed file, for as long as it lives.
 *
 * The lock is flock(LOCK_EX) on DIR/NAME.lock, NAME the real target path
 * with every '/' made '%'.  DIR is ENVCTL_LOCK_DIR for a root agent and
 * $HOME/ENVCTL_LOCK_USER_DIR for any other, a directory of the agent's
 * euid, 0700, that nobody else can enter, so that no other local user can
 * open, let alone flock, a lock file (common/lockfile.h checks it, and
 * each lock file: O_NOFOLLOW, 0600, ours).  Only when DIR cannot be made
 * does the lock file go into the backup directory instead (held to the
 * same checks); a DIR that exists but fails them is an error.  The
 * kernel drops the lock when the process dies, so a dropped connection
 * never leaves a stale lock; the file itself stays and only says who held
 * it last ("pid=P controller=C time=T").  A holder is named from
 * /proc/locks: another envctl agent by that record, anything else by its
 * pid, user and command.  Lock files are never unlinked, which keeps
 * flock() sound.
 */
#ifndef ENVCTL_AGENT_LOCK_H
#define ENVCTL_AGENT_LOCK_H

#include <signal.h>

struct err;

#define ENVCTL_LOCK_DIR		"/var/lib/envctl/locks"
#define ENVCTL_LOCK_USER_DIR	".cache/envctl/locks"	/* under $HOME */
#define ENVCTL_LOCK_POLL_MS	50

struct lock_spec {
	const char	*real;		/* the real target path */
	const char	*dir;		/* NULL: the default (above) */
	const char	*fallback;	/* the backup directory */
	const char	*controller;	/* recorded in the lock file */
	int		 timeout_ms;	/* 0: try once */
	const volatile sig_atomic_t *stop;	/* see child.h */
	const sigset_t	*waitmask;
};

struct lock {
	int	 fd;	/* -1 when not held */
	char	*path;	/* the lock file */
};

/*
 * Takes the lock for s->real, trying every ENVCTL_LOCK_POLL_MS until
 * timeout_ms passed; fills lk (release it with lock_release() whatever the
 * return).  ENVCTL_ELOCKED "'REAL' is locked by another envctl (WHO)" or
 * "the lock of 'REAL' is held by pid P (user U: CMD), not by envctl",
 * ENVCTL_EINVALID when the lock directory or file is not safe to use,
 * ENVCTL_ESYS when the lock file cannot be made or the agent is stopping.
 */
int	lock_acquire(struct lock *lk, const struct lock_spec *s,
	    struct err *err);
/* Releases the lock (closes the file); a no-op when not held. */
void	lock_release(struct lock *lk);
/* The lock file's name for real: "%etc%python3.11%sitecustomize.py.lock";
 * the caller frees it. */
char	*lock_name(const char *real);

#endif
