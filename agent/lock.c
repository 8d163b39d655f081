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

#include "account.h"
#include "backup.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/lockfile.h"
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

/* What the lock file says about its holder, as one line. */
static char *
record_text(int fd)
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

/* The lock directory of this agent; NULL when it has none. */
static char *
default_dir(void)
{
	const char *home = getenv("HOME");
	struct stat st;

	if (geteuid() == 0)
		return xstrdup(ENVCTL_LOCK_DIR);
	/* Not our home (sudo -u keeps the login user's): the fallback. */
	if (home == NULL || home[0] != '/' || home[1] == '\0' ||
	    stat(home, &st) == -1 || st.st_uid != geteuid())
		return NULL;
	return xasprintf("%s/" ENVCTL_LOCK_USER_DIR, home);
}

/* Opens the lock file in dir (made when missing), else in the fallback. */
static int
open_lock(struct lock *lk, const struct lock_spec *s, const char *name,
    struct err *err)
{
	struct err e = ENVCTL_ERR_INIT;
	char *dir = s->dir != NULL ? xstrdup(s->dir) : default_dir();
	int dfd = -1, r = ENVCTL_ESYS;

	if (dir != NULL)
		r = lockfile_dir(&dfd, dir, s->dir == NULL, &e);
	if (r == ENVCTL_ESYS) {
		/* It cannot be made (no parent, a read-only /var...). */
		free(dir);
		dir = xstrdup(s->fallback);
		if ((r = backup_mkdirs(dir, err)) != 0)
			goto out;
		r = lockfile_dir(&dfd, dir, 0, err);
	} else if (r != 0)
		err_move(err, &e);
	if (r == 0 && (r = lockfile_open(&lk->fd, dfd, dir, name, err)) == 0)
		lk->path = xasprintf("%s/%s", dir, name);
out:
	if (dfd != -1)
		close(dfd);
	err_release(&e);
	free(dir);
	return r;
}

/*
 * Who holds the lock, from /proc/locks: ENVCTL_ELOCKED with "'REAL' is
 * locked by another envctl (RECORD)" when it is an agent whose record is
 * in the file, else with its pid, user and command.
 */
static int
held(const struct lock *lk, const char *real, struct err *err)
{
	struct lockfile_holder h;
	char *rec = record_text(lk->fd), *user, *who;
	int r;

	if (lockfile_holder(&h, lk->fd) != 0)
		r = err_set(err, ENVCTL_ELOCKED, "'%s' is locked by a "
		    "process that /proc/locks does not show (its lock file "
		    "says: %s)", real, rec);
	else if (h.pid == lockfile_record_pid(lk->fd) &&
	    strncmp(h.comm, "envctl-agent", 12) == 0)
		r = err_set(err, ENVCTL_ELOCKED, "'%s' is locked by another "
		    "envctl (%s)", real, rec);
	else {
		user = h.uid >= 0 ? account_user((uid_t)h.uid) : NULL;
		who = lockfile_holder_str(&h, user);
		r = err_set(err, ENVCTL_ELOCKED, "the lock of '%s' is held by "
		    "%s, not by envctl", real, who);
		free(user);
		free(who);
	}
	lockfile_holder_release(&h);
	free(rec);
	return r;
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
	char *name = lock_name(s->real);
	long long deadline, left;
	struct timespec ts;
	int r = 0, e;

	lk->fd = -1;
	lk->path = NULL;
	if ((r = open_lock(lk, s, name, err)) != 0)
		goto out;
	deadline = deadline_now_ms() + s->timeout_ms;
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
		if ((left = deadline - deadline_now_ms()) <= 0) {
			r = held(lk, s->real, err);
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
