/*
 * install.h - the atomic replacement of one file: apply, restore, rollback.
 *
 * Everything goes through a descriptor of the real target's directory: a
 * temp file ".BASE.envctl-tmp.PID.RAND" is made there (O_EXCL, O_NOFOLLOW,
 * 0600), written, given the owner and mode (and a newer mtime when it
 * would share the old file's size and mtime second: see
 * install_drop_pycache), fsynced and renamed over BASE; then the directory
 * is fsynced.  Until the rename the target is untouched
 * and a failure unlinks the temp.  Callers hold the target's lock (lock.h),
 * so a temp of that pattern found by install_clean_temps() is stale.  The
 * test-only fault points (ENVCTL_FAULTS builds) are declared here too.
 */
#ifndef ENVCTL_AGENT_INSTALL_H
#define ENVCTL_AGENT_INSTALL_H

#include <stddef.h>
#include <sys/types.h>

struct err;

#define ENVCTL_INSTALL_TMP	".envctl-tmp."
/* The status a fault point exits with. */
#define ENVCTL_FAULT_EXIT	99

/* The directory of a real target, open; release with install_dir_close(). */
struct install_dir {
	int	 fd;	/* O_DIRECTORY descriptor, or -1 */
	char	*dir;	/* its path, for messages */
	char	*base;	/* the target's name in it */
	char	*real;	/* the target's full real path */
};

/*
 * Opens the directory of real (an absolute path, normally target.real).
 * ENVCTL_ESYS "cannot open the directory 'D'" with errno as cause.
 */
int	install_dir_open(struct install_dir *d, const char *real,
	    struct err *err);
void	install_dir_close(struct install_dir *d);
/*
 * Unlinks every non-directory ".BASE.envctl-tmp.*" in d; *removed gets
 * how many (may be NULL).  ENVCTL_ESYS naming the one that stays.
 */
int	install_clean_temps(const struct install_dir *d, size_t *removed,
	    struct err *err);
/*
 * Replaces d's target with len bytes of data, mode (07777 bits) and
 * uid:gid (fchown only when they differ from the temp's).  *renamed is 1
 * once the rename happened: a later failure (the directory fsync) leaves
 * the new file in place.  ENVCTL_ESYS naming the target, errno as cause.
 * fault: the requested fault point, or NULL (after-temp-write,
 * after-fsync, after-rename, after-dirsync are here).
 */
int	install_replace(const struct install_dir *d, const void *data,
	    size_t len, mode_t mode, uid_t uid, gid_t gid, const char *fault,
	    int *renamed, struct err *err);
/*
 * Removes d's target (restoring "did not exist") and fsyncs the directory;
 * an absent target is fine.  *removed as *renamed above; the unlink is
 * the after-rename fault point.
 */
int	install_remove(const struct install_dir *d, const char *fault,
	    int *removed, struct err *err);
/*
 * Removes the bytecode Python cached for the module file at path: the
 * "STEM.*.pyc" in the __pycache__ beside it (STEM: the name without
 * ".py").  Python checks a timestamp .pyc only against the source's mtime
 * (whole seconds) and size, which install_replace() makes differ, and an
 * unchecked-hash .pyc not at all.  With an owner other than
 * ENVCTL_INSTALL_ANY_OWNER, only regular files of that owner in a
 * __pycache__ of that owner go (the agent's cache, cache.h).  Best
 * effort, not fsynced: returns how many went; a .pyc that stays is caught
 * by verification.
 */
#define ENVCTL_INSTALL_ANY_OWNER	((uid_t)-1)
size_t	install_drop_pycache(const char *path, uid_t owner);

/* 1 when step names a fault point. */
int	install_fault_known(const char *step);
/* 1 when this build has fault points (-DENVCTL_FAULTS). */
int	install_faults_compiled(void);
/* _exit(ENVCTL_FAULT_EXIT) when want is step, in an ENVCTL_FAULTS build. */
void	install_fault(const char *want, const char *step);
/* 1 when this build has fault points and want is step (a fault that
   alters what the agent answers rather than ending it). */
int	install_fault_is(const char *want, const char *step);

#endif
