/* lock.c - the per-file flock (see lock.h). */
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backup.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define WHO_MAX	512

char *
lock_name(const char *real)
{
	char *s = xasprintf("%s.lock", real), *p;

	for (p = s; *p != '\0'; p++)
		if (*p == '/')
			*p = '%';
	return s;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Makes dir (one level) when missing; 0 when it is a directory that only
 * root or we can change, -1 with errno otherwise.
 */
static int
trusted_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) == 0)
		chmod(dir, 0755);	/* whatever the umask */
	else if (errno != EEXIST)
		return -1;
	if (lstat(dir, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 &&
	    st.st_uid != geteuid()) || (st.st_mode & 022) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

static int
open_lock(const char *dir, const char *name, char **path)
{
	int fd;

	*path = xasprintf("%s/%s", dir, name);
	fd = open(*path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY, 0644);
	if (fd == -1) {
		free(*path);
		*path = NULL;
	}
	return fd;
}

/* What the lock file says about its holder, as one line. */
static char *
holder(int fd)
{
	char s[WHO_MAX];
	ssize_t n;
	size_t i;

	if ((n = pread(fd, s, sizeof(s) - 1, 0)) <= 0)
		return xstrdup("holder unknown");
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	for (i = 0; i < (size_t)n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = ' ';
	s[n] = '\0';
	return n > 0 ? xstrdup(s) : xstrdup("holder unknown");
}

/* Records who holds the lock; the content is only informative. */
static void
record(int fd, const char *controller)
{
	char when[32], *line;
	struct tm tm;
	time_t t = time(NULL);
	ssize_t n;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	line = xasprintf("pid=%ld controller=%s time=%s\n", (long)getpid(),
	    controller, when);
	/*
	 * Over the old text, then cut to length: truncating to 0 first would
	 * free the file's block and allocate it again, on a disk each time.
	 */
	while ((n = pwrite(fd, line, strlen(line), 0)) == -1 && errno == EINTR)
		;
	if (n >= 0 && ftruncate(fd, n) == -1)
		n = -1;		/* a longer old text stays; it is harmless */
	free(line);
}

int
lock_acquire(struct lock *lk, const struct lock_spec *s, struct err *err)
{
	const char *dir = s->dir != NULL ? s->dir : ENVCTL_LOCK_DIR;
	char *name = lock_name(s->real), *who;
	long long deadline, left;
	struct timespec ts;
	int r = 0, e;

	lk->fd = -1;
	lk->path = NULL;
	if (trusted_dir(dir) == 0)
		lk->fd = open_lock(dir, name, &lk->path);
	if (lk->fd == -1) {
		if ((r = backup_mkdirs(s->fallback, err)) != 0)
			goto out;
		if ((lk->fd = open_lock(s->fallback, name, &lk->path)) ==
		    -1) {
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot open "
			    "the lock file '%s/%s'", s->fallback, name);
			goto out;
		}
	}
	deadline = now_ms() + s->timeout_ms;
	for (;;) {
		if (flock(lk->fd, LOCK_EX | LOCK_NB) == 0)
			break;
		e = errno;
		if (e == EINTR)
			continue;
		if (e != EWOULDBLOCK) {
			r = err_errno(err, ENVCTL_ESYS, e,
			    "cannot lock '%s'", lk->path);
			goto out;
		}
		if (s->stop != NULL && *s->stop) {
			r = err_set(err, ENVCTL_ESYS, "stopped while waiting "
			    "for the lock on '%s': the agent is shutting down",
			    s->real);
			goto out;
		}
		if ((left = deadline - now_ms()) <= 0) {
			who = holder(lk->fd);
			r = err_set(err, ENVCTL_ELOCKED, "'%s' is locked by "
			    "another envctl (%s)", s->real, who);
			free(who);
			goto out;
		}
		if (left > ENVCTL_LOCK_POLL_MS)
			left = ENVCTL_LOCK_POLL_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000;
		/* The stop signals get through only here. */
		pselect(0, NULL, NULL, NULL, &ts, s->waitmask);
	}
	record(lk->fd, s->controller);
out:
	if (r != 0)
		lock_release(lk);
	free(name);
	return r;
}

void
lock_release(struct lock *lk)
{
	if (lk->fd >= 0)
		close(lk->fd);
	lk->fd = -1;
	free(lk->path);
	lk->path = NULL;
}
