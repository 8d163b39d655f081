/* runlock.c - the drift run lock (see runlock.h). */
#include "controller/runlock.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/lockfile.h"
#include "common/xmalloc.h"

#define PW_BUF	4096

char *
runlock_default_path(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");

	if (geteuid() == 0)
		return xstrdup(ENVCTL_RUNLOCK_ROOT_DIR "/" ENVCTL_RUNLOCK_NAME);
	if (x != NULL && x[0] == '/' && x[1] != '\0')
		return xasprintf("%s/envctl/" ENVCTL_RUNLOCK_NAME, x);
	if (home != NULL && home[0] == '/' && home[1] != '\0')
		return xasprintf("%s/.cache/envctl/" ENVCTL_RUNLOCK_NAME,
		    home);
	return NULL;
}

/* The name of uid, or NULL; the caller frees it. */
static char *
user_name(long uid)
{
	struct passwd pw, *res = NULL;
	char *buf = xmalloc(PW_BUF), *name = NULL;

	if (uid >= 0 && getpwuid_r((uid_t)uid, &pw, buf, PW_BUF, &res) == 0 &&
	    res != NULL)
		name = xstrdup(pw.pw_name);
	free(buf);
	return name;
}

static int
busy(const struct runlock *rl, struct err *err)
{
	struct lockfile_holder h;
	char *user, *who;
	int r;

	if (lockfile_holder(&h, rl->fd) != 0)
		r = err_set(err, ENVCTL_EINVALID, "the drift run lock '%s' is "
		    "held by a process that /proc/locks does not show; not "
		    "starting", rl->path);
	else if (h.pid == lockfile_record_pid(rl->fd) &&
	    strcmp(h.comm, "envctl") == 0)
		r = err_set(err, ENVCTL_ELOCKED, "the previous drift run "
		    "still holds '%s' (pid %ld); not starting", rl->path,
		    h.pid);
	else {
		user = user_name(h.uid);
		who = lockfile_holder_str(&h, user);
		r = err_set(err, ENVCTL_EINVALID, "the drift run lock '%s' is "
		    "held by %s, not by envctl; not starting", rl->path, who);
		free(user);
		free(who);
	}
	lockfile_holder_release(&h);
	return r;
}

static void
record(int fd)
{
	char when[32], *line;
	struct tm tm;
	time_t t = time(NULL);
	ssize_t n;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	line = xasprintf("pid=%ld time=%s\n", (long)getpid(), when);
	if ((n = pwrite(fd, line, strlen(line), 0)) >= 0)
		(void)ftruncate(fd, n);
	free(line);
}

int
runlock_acquire(struct runlock *rl, const char *path, struct err *err)
{
	const char *slash;
	char *dir = NULL;
	int dfd = -1, r;

	rl->fd = -1;
	rl->path = path != NULL ? xstrdup(path) : runlock_default_path();
	if (rl->path == NULL)
		return err_set(err, ENVCTL_EINVALID, "no place for the run "
		    "lock: neither XDG_RUNTIME_DIR nor HOME is set (use "
		    "--lock FILE)");
	if (rl->path[0] != '/' || (slash = strrchr(rl->path, '/')) ==
	    rl->path || slash[1] == '\0') {
		r = err_set(err, ENVCTL_EINVALID, "the run lock '%s' must be "
		    "an absolute path in a directory of its own", rl->path);
		goto out;
	}
	dir = xstrndup(rl->path, (size_t)(slash - rl->path));
	if ((r = lockfile_dir(&dfd, dir, path == NULL, err)) != 0 ||
	    (r = lockfile_open(&rl->fd, dfd, dir, slash + 1, err)) != 0)
		goto out;
	while (flock(rl->fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK)
			r = busy(rl, err);
		else
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot lock "
			    "'%s'", rl->path);
		goto out;
	}
	record(rl->fd);
out:
	if (r != 0 && rl->fd != -1) {
		close(rl->fd);
		rl->fd = -1;
	}
	if (dfd != -1)
		close(dfd);
	free(dir);
	return r;
}

void
runlock_release(struct runlock *rl)
{
	if (rl->fd >= 0)
		close(rl->fd);
	rl->fd = -1;
	free(rl->path);
	rl->path = NULL;
}
