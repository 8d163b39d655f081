/* lockfile.c - lock directories and lock files of one user (see lockfile.h). */
#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "err.h"
#include "xmalloc.h"

#define DEPTH_MAX	16	/* parents made at most */
#define STATUS_MAX	8192	/* bytes of /proc/PID/status read */

static int
dir_open(int *dfd, const char *dir, int parents, int depth, struct err *err)
{
	const char *slash = strrchr(dir, '/');
	char *parent = NULL, *base;
	struct stat st;
	int pfd = -1, fd = -1, made = 0, r = 0, e;
	uid_t me = geteuid();

	*dfd = -1;
	if (dir[0] != '/' || slash == NULL || slash[1] == '\0')
		return err_set(err, ENVCTL_EINVALID, "lock directory '%s' "
		    "must be an absolute path, without a trailing '/'", dir);
	parent = slash == dir ? xstrdup("/") :
	    xstrndup(dir, (size_t)(slash - dir));
	base = (char *)slash + 1;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd == -1 && errno == ENOENT && parents && depth < DEPTH_MAX) {
		if ((r = dir_open(&pfd, parent, 1, depth + 1, err)) != 0)
			goto out;
	} else if (pfd == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot open the "
		    "directory '%s'", parent);
		goto out;
	}
	if (fstat(pfd, &st) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot stat '%s'",
		    parent);
		goto out;
	}
	/* Whoever may write the parent may swap the directory itself. */
	if ((st.st_uid != 0 && st.st_uid != me) || (st.st_mode & 022) != 0) {
		r = err_set(err, ENVCTL_EINVALID, "lock directory '%s' is in "
		    "'%s' (mode %04o, uid %ld), which others may write to: "
		    "refusing it", dir, parent, (unsigned)st.st_mode & 07777,
		    (long)st.st_uid);
		goto out;
	}
	if (mkdirat(pfd, base, 0700) == 0)
		made = 1;
	else if (errno != EEXIST) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot make the lock "
		    "directory '%s'", dir);
		goto out;
	}
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1) {
		e = errno;
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			r = err_set(err, ENVCTL_EINVALID, "lock directory '%s' "
			    "is a symlink: refusing it", dir);
		else if (e == ENOTDIR)
			r = err_set(err, ENVCTL_EINVALID, "lock directory '%s' "
			    "is not a directory: refusing it", dir);
		else
			r = err_errno(err, ENVCTL_ESYS, e, "cannot open the "
			    "lock directory '%s'", dir);
		goto out;
	}
	if (made && fchmod(fd, 0700) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot chmod '%s'",
		    dir);
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot stat '%s'",
		    dir);
		goto out;
	}
	if (st.st_uid != me)
		r = err_set(err, ENVCTL_EINVALID, "lock directory '%s' is "
		    "owned by uid %ld, not by uid %ld: refusing it", dir,
		    (long)st.st_uid, (long)me);
	else if ((st.st_mode & 077) != 0)
		r = err_set(err, ENVCTL_EINVALID, "lock directory '%s' has "
		    "mode %04o, which lets others open its lock files (want "
		    "0700): refusing it", dir, (unsigned)st.st_mode & 07777);
out:
	if (r == 0) {
		*dfd = fd;
		fd = -1;
	}
	if (fd != -1)
		close(fd);
	if (pfd != -1)
		close(pfd);
	free(parent);
	return r;
}

int
lockfile_dir(int *dfd, const char *dir, int parents, struct err *err)
{
	return dir_open(dfd, dir, parents, 0, err);
}

int
lockfile_open(int *fd, int dfd, const char *dir, const char *name,
    struct err *err)
{
	struct stat st;
	uid_t me = geteuid();

	/* O_NONBLOCK: a FIFO in its place must not hang us. */
	*fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY | O_NONBLOCK, 0600);
	if (*fd == -1)
		return err_errno(err, ENVCTL_ESYS, errno, "cannot open the "
		    "lock file '%s/%s'", dir, name);
	if (fstat(*fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != me || st.st_nlink != 1) {
		close(*fd);
		*fd = -1;
		return err_set(err, ENVCTL_EINVALID, "lock file '%s/%s' is "
		    "not a regular file of uid %ld with one link: refusing it",
		    dir, name, (long)me);
	}
	if ((st.st_mode & 07777) != 0600)
		(void)fchmod(*fd, 0600);
	return 0;
}

/* Up to cap - 1 bytes of a small file, NUL-terminated; their count. */
static size_t
read_small(const char *path, char *s, size_t cap)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	s[0] = '\0';
	if (fd == -1)
		return 0;
	while (len < cap - 1 && (n = read(fd, s + len, cap - 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		len += (size_t)n;
	}
	close(fd);
	s[len] = '\0';
	return len;
}

static void
describe(struct lockfile_holder *h)
{
	char path[64], *s = xmalloc(STATUS_MAX), *p;
	size_t n, i;

	snprintf(path, sizeof(path), "/proc/%ld/status", h->pid);
	read_small(path, s, STATUS_MAX);
	if ((p = strstr(s, "\nUid:")) != NULL)
		h->uid = strtol(p + 5, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%ld/comm", h->pid);
	read_small(path, h->comm, sizeof(h->comm));
	h->comm[strcspn(h->comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", h->pid);
	n = read_small(path, s, ENVCTL_LOCKFILE_CMD_MAX + 1);
	while (n > 0 && s[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
		else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
	s[n] = '\0';
	free(h->cmd);
	if (n == 0)
		h->cmd = xasprintf("[%s]", h->comm[0] != '\0' ? h->comm :
		    "unknown");
	else if (n == ENVCTL_LOCKFILE_CMD_MAX)
		h->cmd = xasprintf("%s...", s);
	else
		h->cmd = xstrdup(s);
	free(s);
}

int
lockfile_holder(struct lockfile_holder *h, int fd)
{
	struct stat st;
	char *line = NULL, type[16];
	size_t cap = 0;
	unsigned maj, min;
	unsigned long long ino;
	long pid, by_ino = 0;
	FILE *f;

	h->pid = 0;
	h->uid = -1;
	h->comm[0] = '\0';
	h->cmd = xstrdup("unknown");
	if (fstat(fd, &st) == -1 || (f = fopen("/proc/locks", "re")) == NULL)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		/* "1: FLOCK  ADVISORY  WRITE 4242 00:1a:1234 0 EOF"; waiters
		 * ("1: -> FLOCK ...") do not hold it. */
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", type,
		    &pid, &maj, &min, &ino) != 5 ||
		    strcmp(type, "FLOCK") != 0 || pid <= 0 ||
		    ino != (unsigned long long)st.st_ino)
			continue;
		if (maj == major(st.st_dev) && minor(st.st_dev) == min) {
			h->pid = pid;
			break;
		}
		/* Some file systems show another device to stat(). */
		if (by_ino == 0)
			by_ino = pid;
	}
	free(line);
	fclose(f);
	if (h->pid == 0)
		h->pid = by_ino;
	if (h->pid == 0)
		return -1;
	describe(h);
	return 0;
}

void
lockfile_holder_release(struct lockfile_holder *h)
{
	free(h->cmd);
	h->cmd = NULL;
}

char *
lockfile_holder_str(const struct lockfile_holder *h, const char *user)
{
	if (user != NULL)
		return xasprintf("pid %ld (user %s: %s)", h->pid, user,
		    h->cmd);
	if (h->uid >= 0)
		return xasprintf("pid %ld (uid %ld: %s)", h->pid, h->uid,
		    h->cmd);
	return xasprintf("pid %ld (%s)", h->pid, h->cmd);
}

long
lockfile_record_pid(int fd)
{
	char s[64];
	ssize_t n;

	if ((n = pread(fd, s, sizeof(s) - 1, 0)) <= 4)
		return 0;
	s[n] = '\0';
	if (strncmp(s, "pid=", 4) != 0)
		return 0;
	return strtol(s + 4, NULL, 10);
}
