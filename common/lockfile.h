/*
 * lockfile.h - lock files that no other user can hold, and their holders.
 *
 * A flock() needs only a descriptor, and any user who can open a file,
 * even read only, can flock it.  So lock files live in a directory that
 * only the caller's euid can enter: lockfile_dir() makes it (0700) or
 * opens it, never through a symlink, and refuses one that is not a
 * directory of the euid with no group or other bits, or whose parent
 * others may write to.  lockfile_open() opens a lock file in it
 * (O_NOFOLLOW, 0600, a regular file of the euid with one link).
 * lockfile_holder() says which process holds a flock (from /proc/locks)
 * and what it is (/proc/PID/status, comm and cmdline).  No global state.
 */
#ifndef ENVCTL_COMMON_LOCKFILE_H
#define ENVCTL_COMMON_LOCKFILE_H

#include <sys/types.h>

struct err;

#define ENVCTL_LOCKFILE_CMD_MAX	256	/* bytes of a holder's cmdline */

struct lockfile_holder {
	long	 pid;		/* 0: not found */
	long	 uid;		/* real uid; -1 when unknown */
	char	 comm[32];	/* /proc/PID/comm; "" when unknown */
	char	*cmd;		/* its arguments joined by spaces; never NULL */
};

/*
 * Opens the lock directory dir (absolute) into *dfd, making it 0700 when
 * missing (and, with parents, each missing parent 0700 too).  ENVCTL_ESYS
 * (cause errno) when it cannot be made or opened; ENVCTL_EINVALID "lock
 * directory 'DIR' is ...: refusing it" when it is a symlink, not a
 * directory, not the euid's, open to others, or in a directory that
 * others may write to.
 */
int	lockfile_dir(int *dfd, const char *dir, int parents,
	    struct err *err);
/*
 * Opens (creating, 0600) the lock file name in the directory dfd (dir is
 * its path, for messages) into *fd, O_CLOEXEC.  ENVCTL_ESYS when it cannot
 * be opened (a symlink: ELOOP), ENVCTL_EINVALID when it is not a regular
 * file of the euid with one link.
 */
int	lockfile_open(int *fd, int dfd, const char *dir, const char *name,
	    struct err *err);
/*
 * Fills h with the process holding a flock on the open file fd: 0, or -1
 * when /proc/locks names none (h->pid 0).  Release h either way.
 */
int	lockfile_holder(struct lockfile_holder *h, int fd);
void	lockfile_holder_release(struct lockfile_holder *h);
/* "pid 4242 (user mallory: flock /x sleep 1000)"; user is the name of
 * h->uid (NULL: the number); the caller frees it. */
char	*lockfile_holder_str(const struct lockfile_holder *h,
	    const char *user);
/* The pid a lock file's record "pid=P ..." names, read from fd; 0 when
 * there is none. */
long	lockfile_record_pid(int fd);

#endif
