/*
 * lock.h - one envctl at a time per managed file, for as long as it lives.
 *
 * The lock is flock(LOCK_EX) on DIR/NAME.lock, NAME the real target path
 * with every '/' made '%', DIR /run/lock/envctl (made 0755 when missing).
 * When that directory cannot be made or written, or is not a directory
 * owned by root or by us and writable by no one else, the lock file goes
 * into the backup directory instead.  The kernel drops the lock when the
 * process dies, so a dropped connection never leaves a stale lock; the
 * file itself stays and only says who held it last ("pid=P controller=C
 * time=T").  Lock files are never unlinked, which keeps flock() sound.
 */
#ifndef ENVCTL_AGENT_LOCK_H
#define ENVCTL_AGENT_LOCK_H

#include <signal.h>

struct err;

#define ENVCTL_LOCK_DIR		"/run/lock/envctl"
#define ENVCTL_LOCK_POLL_MS	50

struct lock_spec {
	const char	*real;		/* the real target path */
	const char	*dir;		/* NULL: ENVCTL_LOCK_DIR */
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
 * return).  ENVCTL_ELOCKED "'REAL' is locked by another envctl (WHO)",
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
