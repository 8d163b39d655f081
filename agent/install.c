/* install.c - temp file, fsync, rename, directory fsync (see install.h). */
#include "install.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fdio.h"
#include "common/xmalloc.h"

#define TMP_TRIES	100

static const char *const fault_steps[] = {
	"after-lock", "after-cas", "after-validate", "after-backup",
	"after-temp-write", "after-fsync", "after-rename", "after-dirsync",
	"after-verify", "with-read", "skip-with-read", NULL,
};

int
install_fault_known(const char *step)
{
	size_t i;

	for (i = 0; fault_steps[i] != NULL; i++)
		if (strcmp(fault_steps[i], step) == 0)
			return 1;
	return 0;
}

int
install_faults_compiled(void)
{
#ifdef ENVCTL_FAULTS
	return 1;
#else
	return 0;
#endif
}

void
install_fault(const char *want, const char *step)
{
#ifdef ENVCTL_FAULTS
	if (want != NULL && strcmp(want, step) == 0)
		_exit(ENVCTL_FAULT_EXIT);
#else
	(void)want;
	(void)step;
#endif
}

int
install_fault_is(const char *want, const char *step)
{
#ifdef ENVCTL_FAULTS
	return want != NULL && strcmp(want, step) == 0;
#else
	(void)want;
	(void)step;
	return 0;
#endif
}

int
install_dir_open(struct install_dir *d, const char *real, struct err *err)
{
	const char *slash = strrchr(real, '/');

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (real[0] != '/' || slash[1] == '\0')
		return err_set(err, ENVCTL_EINVALID,
		    "'%s' is not an absolute path to a file", real);
	d->dir = slash == real ? xstrdup("/") :
	    xstrndup(real, (size_t)(slash - real));
	d->base = xstrdup(slash + 1);
	d->real = xstrdup(real);
	d->fd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd == -1)
		return err_errno(err, ENVCTL_ESYS, errno,
		    "cannot open the directory '%s'", d->dir);
	return 0;
}

void
install_dir_close(struct install_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->dir);
	free(d->base);
	free(d->real);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

/* A fresh descriptor on the same directory, with its own read offset. */
static DIR *
reopen_dir(int dirfd, const char *name)
{
	DIR *dp;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return NULL;
	if ((dp = fdopendir(fd)) == NULL)
		close(fd);
	return dp;
}

int
install_clean_temps(const struct install_dir *d, size_t *removed,
    struct err *err)
{
	struct dirent *de;
	struct stat st;
	char *prefix = xasprintf(".%s" ENVCTL_INSTALL_TMP, d->base);
	size_t plen = strlen(prefix), n = 0;
	DIR *dp;
	int r = 0;

	if ((dp = reopen_dir(d->fd, ".")) == NULL) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot list the directory '%s'", d->dir);
		goto out;
	}
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, prefix, plen) != 0)
			continue;
		if (fstatat(d->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1 || S_ISDIR(st.st_mode))
			continue;
		if (unlinkat(d->fd, de->d_name, 0) == -1 && errno != ENOENT) {
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot remove "
			    "the stale temp file '%s/%s'",
			    strcmp(d->dir, "/") == 0 ? "" : d->dir,
			    de->d_name);
			goto out;
		}
		n++;
	}
	if (errno != 0)
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot list the directory '%s'", d->dir);
	else if (n > 0 && fsync(d->fd) == -1 && errno != EINVAL)
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot sync the directory '%s'", d->dir);
out:
	if (dp != NULL)
		closedir(dp);
	if (removed != NULL)
		*removed = n;
	free(prefix);
	return r;
}

static unsigned long long
random_bits(void)
{
	unsigned long long v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_nsec * 2654435761ULL ^
	    (unsigned long long)ts.tv_sec;
}

/*
 * Python takes a timestamp .pyc as current when the source has the mtime
 * (in whole seconds) and the size it recorded.  When the file being
 * replaced has the temp's size and mtime second, the temp gets the next
 * second: no bytecode of the old file can pass for the new one, even if
 * a crash undoes install_drop_pycache()'s unlink or comes before it.
 */
static int
newer_mtime(const struct install_dir *d, int fd, const struct stat *st,
    struct err *err)
{
	struct timespec ts[2];
	struct stat old;

	if (fstatat(d->fd, d->base, &old, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISREG(old.st_mode) || old.st_size != st->st_size ||
	    old.st_mtim.tv_sec != st->st_mtim.tv_sec)
		return 0;
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = old.st_mtim.tv_sec + 1;
	ts[1].tv_nsec = 0;
	if (futimens(fd, ts) == -1)
		return err_errno(err, ENVCTL_ESYS, errno, "cannot set the "
		    "modification time of a temp file beside '%s'", d->real);
	return 0;
}

int
install_replace(const struct install_dir *d, const void *data, size_t len,
    mode_t mode, uid_t uid, gid_t gid, const char *fault, int *renamed,
    struct err *err)
{
	struct stat st;
	char *tmp = NULL;
	int fd = -1, r = 0, i, e;

	*renamed = 0;
	for (i = 0; i < TMP_TRIES; i++) {
		free(tmp);
		tmp = xasprintf(".%s" ENVCTL_INSTALL_TMP "%ld.%016llx",
		    d->base, (long)getpid(), random_bits());
		fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd == -1) {
		e = errno;
		free(tmp);
		return err_errno(err, ENVCTL_ESYS, e,
		    "cannot create a temp file beside '%s'", d->real);
	}
	if (fd_write_all(fd, data, len) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot write a temp file beside '%s'", d->real);
		goto fail;
	}
	install_fault(fault, "after-temp-write");
	if (fstat(fd, &st) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot stat a temp file beside '%s'", d->real);
		goto fail;
	}
	/* Owner first: chown clears set-id bits that fchmod then sets. */
	if ((st.st_uid != uid || st.st_gid != gid) &&
	    fchown(fd, uid, gid) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot give the new "
		    "'%s' the owner %lu:%lu", d->real, (unsigned long)uid,
		    (unsigned long)gid);
		goto fail;
	}
	if (fchmod(fd, mode & 07777) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot give the new "
		    "'%s' the mode %04o", d->real, (unsigned)(mode & 07777));
		goto fail;
	}
	if ((r = newer_mtime(d, fd, &st, err)) != 0)
		goto fail;
	if (fsync(fd) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot sync a temp file beside '%s'", d->real);
		goto fail;
	}
	install_fault(fault, "after-fsync");
	e = close(fd);
	fd = -1;
	if (e == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot write a temp file beside '%s'", d->real);
		goto fail;
	}
	if (renameat(d->fd, tmp, d->fd, d->base) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot rename a temp file over '%s'", d->real);
		goto fail;
	}
	*renamed = 1;
	install_fault(fault, "after-rename");
	if (fsync(d->fd) == -1 && errno != EINVAL)
		r = err_errno(err, ENVCTL_ESYS, errno, "'%s' was replaced, "
		    "but the directory '%s' cannot be synced", d->real,
		    d->dir);
	else
		install_fault(fault, "after-dirsync");
	free(tmp);
	return r;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(d->fd, tmp, 0);
	errno = e;
	free(tmp);
	return r;
}

int
install_remove(const struct install_dir *d, const char *fault,
    int *removed, struct err *err)
{
	*removed = 0;
	if (unlinkat(d->fd, d->base, 0) == -1 && errno != ENOENT)
		return err_errno(err, ENVCTL_ESYS, errno,
		    "cannot remove '%s'", d->real);
	*removed = 1;
	install_fault(fault, "after-rename");
	if (fsync(d->fd) == -1 && errno != EINVAL)
		return err_errno(err, ENVCTL_ESYS, errno, "'%s' was removed, "
		    "but the directory '%s' cannot be synced", d->real,
		    d->dir);
	install_fault(fault, "after-dirsync");
	return 0;
}

size_t
install_drop_pycache(const char *path, uid_t owner)
{
	const char *slash = strrchr(path, '/'), *name;
	struct dirent *de;
	struct stat st;
	char *dir, *stem;
	size_t slen, nlen, n = 0;
	DIR *dp;
	int dfd;

	if (slash == NULL)
		return 0;
	name = slash + 1;
	nlen = strlen(name);
	slen = nlen > 3 && strcmp(name + nlen - 3, ".py") == 0 ? nlen - 3 :
	    nlen;
	stem = xasprintf("%.*s.", (int)slen, name);
	slen++;
	dir = xasprintf("%.*s/__pycache__", (int)(slash - path), path);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1)
		goto out;
	if (owner != ENVCTL_INSTALL_ANY_OWNER &&
	    (fstat(dfd, &st) != 0 || st.st_uid != owner))
		goto done;
	if ((dp = reopen_dir(dfd, ".")) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			nlen = strlen(de->d_name);
			if (nlen <= slen + 4 ||
			    strncmp(de->d_name, stem, slen) != 0 ||
			    strcmp(de->d_name + nlen - 4, ".pyc") != 0)
				continue;
			if (owner != ENVCTL_INSTALL_ANY_OWNER &&
			    (fstatat(dfd, de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
			    st.st_uid != owner))
				continue;
			if (unlinkat(dfd, de->d_name, 0) == 0)
				n++;
		}
		closedir(dp);
	}
done:
	/*
	 * No fsync: an unlink lost in a crash leaves bytecode that no longer
	 * matches the file (install_replace gave it another mtime or size).
	 */
	close(dfd);
out:
	free(dir);
	free(stem);
	return n;
}
