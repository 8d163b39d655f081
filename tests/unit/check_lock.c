/*
 * check_lock.c - lock directories and files no other user can hold
 * (common/lockfile), their holders, and the drift run lock
 * (controller/runlock).  Holders are real processes forked here; each
 * says it holds the lock through a pipe and holds it until the pipe's
 * other end closes.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "common/lockfile.h"
#include "common/xmalloc.h"
#include "controller/runlock.h"
#include "testutil.h"

#define NOBODY	65534

static mode_t
mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Opens the lock directory path: its code; err's message in *msg. */
static int
try_dir(const char *path, int parents, char **msg)
{
	struct err err = ENVCTL_ERR_INIT;
	int fd = -1, r = lockfile_dir(&fd, path, parents, &err);

	*msg = xstrdup(r != 0 ? err.msg : "");
	if (fd != -1)
		close(fd);
	err_release(&err);
	return r;
}

static void
assert_refused(const char *path, int parents, int code, const char *want)
{
	char *msg;

	ck_assert_int_eq(try_dir(path, parents, &msg), code);
	ck_assert_str_eq(msg, want);
	free(msg);
}

/* This process's cmdline as lockfile.h shows it. */
static char *
own_cmd(void)
{
	size_t n, i;
	char *s = tu_read("/proc/self/cmdline", &n);

	ck_assert_ptr_nonnull(s);
	while (n > 0 && s[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	s[n] = '\0';
	return s;
}

struct holder {
	pid_t	pid;
	int	release;	/* closing it ends the holder */
};

/*
 * Forks a process named comm (NULL: ours) that flocks path, writes
 * record into it (NULL: nothing; "SELF": "pid=ITS_PID time=..."), says
 * so, and holds it until released.
 */
static void
hold(struct holder *h, const char *path, const char *comm,
    const char *record)
{
	int ready[2], go[2], fd;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	if ((h->pid = fork()) == 0) {
		close(ready[0]);
		close(go[1]);
		if (comm != NULL)
			prctl(PR_SET_NAME, comm, 0, 0, 0);
		if ((fd = open(path, O_RDWR | O_CREAT, 0600)) == -1 ||
		    flock(fd, LOCK_EX) == -1)
			_exit(1);
		/* "SELF": a record of its own, as envctl writes it. */
		if (record != NULL && strcmp(record, "SELF") == 0)
			dprintf(fd, "pid=%ld time=2026-12-02T13:35:01Z\n",
			    (long)getpid());
		else if (record != NULL && (ftruncate(fd, 0) == -1 ||
		    pwrite(fd, record, strlen(record), 0) == -1))
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		(void)read(go[0], &c, 1);	/* EOF: released */
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	h->release = go[1];
}

static void
release(struct holder *h)
{
	int st;

	close(h->release);
	ck_assert_int_eq(waitpid(h->pid, &st, 0), h->pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

START_TEST(test_dir_made)
{
	char *d = xasprintf("%s/a/b/locks", tu_dir);
	char *a = xasprintf("%s/a", tu_dir);
	char *b = xasprintf("%s/a/b", tu_dir), *msg, *want;
	mode_t um = umask(077);

	/* Without parents, a missing parent is a system error. */
	want = xasprintf("cannot open the directory '%s'", b);
	assert_refused(d, 0, ENVCTL_ESYS, want);
	/* With them, each is made 0700, whatever the umask. */
	umask(0);
	ck_assert_int_eq(try_dir(d, 1, &msg), 0);
	ck_assert_uint_eq(mode_of(a), 0700);
	ck_assert_uint_eq(mode_of(b), 0700);
	ck_assert_uint_eq(mode_of(d), 0700);
	free(msg);
	/* Again: it is there, and fine. */
	ck_assert_int_eq(try_dir(d, 0, &msg), 0);
	umask(um);
	assert_refused("run/envctl", 1, ENVCTL_EINVALID, "lock directory "
	    "'run/envctl' must be an absolute path, without a trailing '/'");
	free(msg);
	free(want);
	free(d);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_dir_refused)
{
	char *d = xasprintf("%s/locks", tu_dir);
	char *sub = xasprintf("%s/open", tu_dir);
	char *real = xasprintf("%s/real", tu_dir), *want, *inner;

	/* A symlink, even to a good directory of ours: never followed. */
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink(real, d), 0);
	want = xasprintf("lock directory '%s' is a symlink: refusing it", d);
	assert_refused(d, 0, ENVCTL_EINVALID, want);
	ck_assert_int_eq(unlink(d), 0);
	free(want);
	/* A file. */
	free(tu_writes(tu_dir, "locks", "x"));
	want = xasprintf("lock directory '%s' is not a directory: refusing "
	    "it", d);
	assert_refused(d, 0, ENVCTL_EINVALID, want);
	ck_assert_int_eq(unlink(d), 0);
	free(want);
	/* Ours, but others may open what is in it. */
	ck_assert_int_eq(mkdir(d, 0700), 0);
	ck_assert_int_eq(chmod(d, 0711), 0);
	want = xasprintf("lock directory '%s' has mode 0711, which lets "
	    "others open its lock files (want 0700): refusing it", d);
	assert_refused(d, 0, ENVCTL_EINVALID, want);
	free(want);
	/* In a directory others may write to (and so rename it away). */
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(chmod(sub, 01777), 0);
	inner = xasprintf("%s/locks", sub);
	want = xasprintf("lock directory '%s' is in '%s' (mode 1777, uid %ld)"
	    ", which others may write to: refusing it", inner, sub,
	    (long)geteuid());
	assert_refused(inner, 0, ENVCTL_EINVALID, want);
	free(want);
	/* Another user's directory (only root can make one to test). */
	if (geteuid() != 0) {
		tu_skip("test_dir_refused", "not root: cannot chown a "
		    "directory to another user");
		goto out;
	}
	ck_assert_int_eq(chmod(d, 0700), 0);
	ck_assert_int_eq(chown(d, NOBODY, NOBODY), 0);
	want = xasprintf("lock directory '%s' is owned by uid %d, not by uid "
	    "0: refusing it", d, NOBODY);
	assert_refused(d, 0, ENVCTL_EINVALID, want);
	free(want);
	/* ... or a parent of another user's. */
	ck_assert_int_eq(chmod(sub, 0755), 0);
	ck_assert_int_eq(chown(sub, NOBODY, NOBODY), 0);
	want = xasprintf("lock directory '%s' is in '%s' (mode 0755, uid %d)"
	    ", which others may write to: refusing it", inner, sub, NOBODY);
	assert_refused(inner, 0, ENVCTL_EINVALID, want);
	free(want);
out:
	free(inner);
	free(d);
	free(sub);
	free(real);
}
END_TEST

START_TEST(test_file)
{
	struct err err = ENVCTL_ERR_INIT;
	char *d = xasprintf("%s/locks", tu_dir), *f, *victim, *want;
	int dfd, fd;

	ck_assert_int_eq(lockfile_dir(&dfd, d, 0, &err), 0);
	ck_assert_int_eq(lockfile_open(&fd, dfd, d, "a.lock", &err), 0);
	f = xasprintf("%s/a.lock", d);
	ck_assert_uint_eq(mode_of(f), 0600);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	/* A looser mode is tightened: only we can reach it anyway. */
	ck_assert_int_eq(chmod(f, 0644), 0);
	ck_assert_int_eq(lockfile_open(&fd, dfd, d, "a.lock", &err), 0);
	ck_assert_uint_eq(mode_of(f), 0600);
	close(fd);

	/* A symlink planted at the lock path is not followed. */
	victim = xasprintf("%s/victim", tu_dir);
	free(f);
	f = xasprintf("%s/b.lock", d);
	ck_assert_int_eq(symlink(victim, f), 0);
	ck_assert_int_eq(lockfile_open(&fd, dfd, d, "b.lock", &err),
	    ENVCTL_ESYS);
	want = xasprintf("cannot open the lock file '%s/b.lock'", d);
	ck_assert_str_eq(err.msg, want);
	ck_assert_int_eq(err.cause, ELOOP);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_ne(access(victim, F_OK), 0);
	err_release(&err);
	free(want);

	/* A second link, and a FIFO (which must not hang the open). */
	free(tu_writes(d, "d.lock", "x"));
	free(f);
	f = xasprintf("%s/d.lock", d);
	ck_assert_int_eq(link(f, victim), 0);
	ck_assert_int_eq(lockfile_open(&fd, dfd, d, "d.lock", &err),
	    ENVCTL_EINVALID);
	want = xasprintf("lock file '%s/d.lock' is not a regular file of uid "
	    "%ld with one link: refusing it", d, (long)geteuid());
	ck_assert_str_eq(err.msg, want);
	err_release(&err);
	free(want);
	free(f);
	f = xasprintf("%s/e.lock", d);
	ck_assert_int_eq(mkfifo(f, 0600), 0);
	ck_assert_int_eq(lockfile_open(&fd, dfd, d, "e.lock", &err),
	    ENVCTL_EINVALID);
	err_release(&err);
	if (geteuid() == 0) {
		free(f);
		f = xasprintf("%s/f.lock", d);
		free(tu_writes(d, "f.lock", ""));
		ck_assert_int_eq(chown(f, NOBODY, NOBODY), 0);
		ck_assert_int_eq(lockfile_open(&fd, dfd, d, "f.lock", &err),
		    ENVCTL_EINVALID);
		err_release(&err);
	}
	close(dfd);
	free(d);
	free(f);
	free(victim);
}
END_TEST

/* Another user can neither open a lock file nor enter its directory. */
START_TEST(test_unprivileged)
{
	struct err err = ENVCTL_ERR_INIT;
	char *d = xasprintf("%s/locks", tu_dir), *f = xasprintf("%s/a.lock", d);
	int dfd, fd, st;
	pid_t pid;

	if (geteuid() != 0) {
		tu_skip("test_unprivileged", "not root: cannot become "
		    "another user");
		free(d);
		free(f);
		return;
	}
	/* Make the test dir itself passable: only the lock dir stops them. */
	ck_assert_int_eq(chmod(tu_dir, 0711), 0);
	ck_assert_int_eq(lockfile_dir(&dfd, d, 0, &err), 0);
	ck_assert_int_eq(lockfile_open(&fd, dfd, d, "a.lock", &err), 0);
	if ((pid = fork()) == 0) {
		if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(10);
		/* flock(1) needs only a read-only descriptor. */
		if (open(f, O_RDONLY) != -1 || errno != EACCES)
			_exit(11);
		if (open(d, O_RDONLY | O_DIRECTORY) != -1 || errno != EACCES)
			_exit(12);
		/* Its own lock directory cannot be put inside ours. */
		if (lockfile_dir(&fd, f, 0, &err) != ENVCTL_ESYS)
			_exit(13);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	close(dfd);
	free(d);
	free(f);
}
END_TEST

START_TEST(test_holder)
{
	struct lockfile_holder h;
	struct holder hd;
	char *f = tu_writes(tu_dir, "x.lock", ""), *comm, *cmd = own_cmd(), *s;
	int fd = open(f, O_RDONLY);

	ck_assert_int_ne(fd, -1);
	/* Not held: nobody is named. */
	ck_assert_int_eq(lockfile_holder(&h, fd), -1);
	ck_assert_int_eq(h.pid, 0);
	lockfile_holder_release(&h);

	hold(&hd, f, NULL, "pid=1 controller=forged\n");
	ck_assert_int_eq(lockfile_holder(&h, fd), 0);
	ck_assert_int_eq(h.pid, hd.pid);
	ck_assert_int_eq(h.uid, (long)getuid());
	comm = tu_read("/proc/self/comm", NULL);
	comm[strcspn(comm, "\n")] = '\0';
	ck_assert_str_eq(h.comm, comm);
	ck_assert_str_eq(h.cmd, cmd);
	ck_assert_int_eq(lockfile_record_pid(fd), 1);
	s = lockfile_holder_str(&h, "mallory");
	free(comm);
	comm = xasprintf("pid %ld (user mallory: %s)", (long)hd.pid, cmd);
	ck_assert_str_eq(s, comm);
	free(s);
	lockfile_holder_release(&h);
	release(&hd);
	ck_assert_int_eq(lockfile_holder(&h, fd), -1);
	lockfile_holder_release(&h);
	close(fd);
	free(f);
	free(comm);
	free(cmd);
}
END_TEST

START_TEST(test_runlock)
{
	struct err err = ENVCTL_ERR_INIT;
	struct runlock rl, rl2;
	struct holder hd;
	struct passwd *pw = getpwuid(getuid());
	char *d = xasprintf("%s/run", tu_dir);
	char *f = xasprintf("%s/drift.lock", d);
	char *text, *want, *cmd = own_cmd();

	ck_assert_ptr_nonnull(pw);
	/* Free: taken, recorded, 0600 in a 0700 directory. */
	ck_assert_int_eq(runlock_acquire(&rl, f, &err), 0);
	text = tu_read(f, NULL);
	want = xasprintf("pid=%ld time=", (long)getpid());
	ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "%s", text);
	ck_assert_uint_eq(mode_of(f), 0600);
	ck_assert_uint_eq(mode_of(d), 0700);
	/* Held by ourselves (another descriptor): a previous run. */
	prctl(PR_SET_NAME, "envctl", 0, 0, 0);
	ck_assert_int_eq(runlock_acquire(&rl2, f, &err), ENVCTL_ELOCKED);
	runlock_release(&rl2);
	err_release(&err);
	runlock_release(&rl);
	free(want);
	free(text);

	/* Another envctl drift run, whose record is in the file. */
	hold(&hd, f, "envctl", "SELF");
	ck_assert_int_eq(runlock_acquire(&rl, f, &err), ENVCTL_ELOCKED);
	want = xasprintf("the previous drift run still holds '%s' (pid %ld); "
	    "not starting", f, (long)hd.pid);
	ck_assert_str_eq(err.msg, want);
	err_release(&err);
	runlock_release(&rl);
	release(&hd);
	free(want);

	/* Something else: named, and an error, not "busy". */
	prctl(PR_SET_NAME, "check_lock", 0, 0, 0);
	hold(&hd, f, NULL, NULL);
	ck_assert_int_eq(runlock_acquire(&rl, f, &err), ENVCTL_EINVALID);
	want = xasprintf("the drift run lock '%s' is held by pid %ld (user "
	    "%s: %s), not by envctl; not starting", f, (long)hd.pid,
	    pw->pw_name, cmd);
	ck_assert_str_eq(err.msg, want);
	err_release(&err);
	runlock_release(&rl);
	release(&hd);
	free(want);
	/* Named envctl, but the record names someone else: not a run. */
	hold(&hd, f, "envctl", "pid=1 time=2026-12-02T13:35:01Z\n");
	ck_assert_int_eq(runlock_acquire(&rl, f, &err), ENVCTL_EINVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, ", not by envctl; not "
	    "starting"));
	err_release(&err);
	runlock_release(&rl);
	release(&hd);

	/* A lock in a directory others may enter is refused. */
	ck_assert_int_eq(chmod(d, 0755), 0);
	ck_assert_int_eq(runlock_acquire(&rl, f, &err), ENVCTL_EINVALID);
	want = xasprintf("lock directory '%s' has mode 0755, which lets "
	    "others open its lock files (want 0700): refusing it", d);
	ck_assert_str_eq(err.msg, want);
	err_release(&err);
	runlock_release(&rl);
	free(want);
	free(cmd);
	free(d);
	free(f);
}
END_TEST

START_TEST(test_runlock_default)
{
	char *p, *want;

	if (geteuid() == 0) {
		p = runlock_default_path();
		ck_assert_str_eq(p, "/run/envctl/drift.lock");
		free(p);
		return;
	}
	setenv("XDG_RUNTIME_DIR", tu_dir, 1);
	p = runlock_default_path();
	want = xasprintf("%s/envctl/drift.lock", tu_dir);
	ck_assert_str_eq(p, want);
	free(p);
	free(want);
	unsetenv("XDG_RUNTIME_DIR");
	setenv("HOME", tu_dir, 1);
	p = runlock_default_path();
	want = xasprintf("%s/.cache/envctl/drift.lock", tu_dir);
	ck_assert_str_eq(p, want);
	free(p);
	free(want);
	unsetenv("HOME");
	ck_assert_ptr_null(runlock_default_path());
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
	tcase_add_test(tc, test_dir_made);
	tcase_add_test(tc, test_dir_refused);
	tcase_add_test(tc, test_file);
	tcase_add_test(tc, test_unprivileged);
	tcase_add_test(tc, test_holder);
	tcase_add_test(tc, test_runlock);
	tcase_add_test(tc, test_runlock_default);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
