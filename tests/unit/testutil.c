/* testutil.c - helpers shared by the Check suites (see testutil.h). */
#include "testutil.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deadline.h"
#include "common/xmalloc.h"

char *
tu_srcpath(const char *rel)
{
	const char *s = getenv("ENVCTL_SRCDIR");

	return xasprintf("%s/%s", s != NULL ? s : ".", rel);
}

char *
tu_fixture(const char *name)
{
	const char *s = getenv("ENVCTL_FIXTURES");

	return xasprintf("%s/%s", s != NULL ? s : "tests/fixtures", name);
}

char *
tu_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *p = xasprintf("%s/envctl-test.XXXXXX", t != NULL ? t : "/tmp");

	if (mkdtemp(p) == NULL) {
		perror("mkdtemp");
		abort();
	}
	return p;
}

void
tu_rmtree(const char *dir)
{
	char *argv[] = { "rm", "-rf", "--", (char *)dir, NULL };
	struct tu_run r;

	if (dir == NULL || strstr(dir, "envctl-test.") == NULL)
		return;
	tu_run(&r, argv, NULL, NULL, 0);
	tu_run_free(&r);
}

char *tu_dir;

void
tu_dir_setup(void)
{
	tu_dir = tu_mkdtemp();
}

void
tu_dir_teardown(void)
{
	chmod(tu_dir, 0700);
	tu_rmtree(tu_dir);
	free(tu_dir);
	tu_dir = NULL;
}

char *
tu_write(const char *dir, const char *name, const char *data, size_t len)
{
	char *p = dir != NULL ? xasprintf("%s/%s", dir, name) : xstrdup(name);
	FILE *f;

	if ((f = fopen(p, "wb")) == NULL ||
	    fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(p);
		abort();
	}
	return p;
}

char *
tu_writes(const char *dir, const char *name, const char *s)
{
	return tu_write(dir, name, s, strlen(s));
}

char *
tu_read(const char *path, size_t *lenp)
{
	struct buf b = ENVCTL_BUF_INIT;

	if (buf_read_file(&b, path, NULL) != 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, lenp);
}

void
tu_run(struct tu_run *r, char *const argv[], char *const envp[],
    const char *in, size_t inlen)
{
	int inp[2], outp[2], errp[2], st;
	struct buf o = ENVCTL_BUF_INIT, e = ENVCTL_BUF_INIT;
	struct pollfd pf[3];
	size_t off = 0;
	pid_t pid;
	char chunk[4096];
	ssize_t n;

	memset(r, 0, sizeof(*r));
	signal(SIGPIPE, SIG_IGN);
	if (pipe(inp) || pipe(outp) || pipe(errp)) {
		perror("pipe");
		abort();
	}
	if ((pid = fork()) == 0) {
		dup2(inp[0], 0);
		dup2(outp[1], 1);
		dup2(errp[1], 2);
		close(inp[1]);
		close(outp[0]);
		close(errp[0]);
		if (envp != NULL)
			execve(argv[0], argv, envp);
		else
			execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(inp[0]);
	close(outp[1]);
	close(errp[1]);
	if (in == NULL || inlen == 0) {
		close(inp[1]);
		inp[1] = -1;
	}
	pf[0].fd = outp[0];
	pf[1].fd = errp[0];
	pf[2].fd = inp[1];
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		pf[0].events = pf[1].events = POLLIN;
		pf[2].events = POLLOUT;
		if (poll(pf, 3, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || pf[i].revents == 0)
				continue;
			n = read(pf[i].fd, chunk, sizeof(chunk));
			if (n <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
			} else
				buf_add(i == 0 ? &o : &e, chunk, (size_t)n);
		}
		if (pf[2].fd >= 0 && pf[2].revents != 0) {
			n = write(pf[2].fd, in + off, inlen - off);
			if (n > 0)
				off += (size_t)n;
			if (n <= 0 || off == inlen) {
				close(pf[2].fd);
				pf[2].fd = -1;
			}
		}
	}
	if (pf[2].fd >= 0)
		close(pf[2].fd);
	waitpid(pid, &st, 0);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = buf_detach(&o, &r->outlen);
	r->errout = buf_detach(&e, &r->errlen);
}

void
tu_run_free(struct tu_run *r)
{
	free(r->out);
	free(r->errout);
	memset(r, 0, sizeof(*r));
}

const char *
tu_envctl(void)
{
	const char *s = getenv("ENVCTL_BIN");

	return s != NULL ? s : "build/envctl";
}

const char *
tu_python(void)
{
	const char *s = getenv("ENVCTL_TEST_PYTHON");

	if (s != NULL && s[0] != '\0')
		return s;
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" :
	    "python3";
}

void
tu_skip(const char *test, const char *why)
{
	const char *ci = getenv("CI");

	if (ci != NULL && strcmp(ci, "true") == 0)
		ck_abort_msg("%s: a prerequisite is missing under CI=true: %s",
		    test, why);
	/* tests/run-unit counts these lines as skipped, never as passed. */
	printf("SKIP %s: %s\n", test, why);
	fflush(stdout);
}

int
tu_ansible(struct tu_run *r, const char *test, char *const argv[],
    char *const *extra)
{
	char *tmp, *cfg, *envp[24];
	size_t i, n;

	memset(r, 0, sizeof(*r));
	if (access(argv[0], X_OK) != 0) {
		tu_skip(test, "no Ansible (Debian's ansible-core) to compare "
		    "with");
		return 1;
	}
	tmp = tu_mkdtemp();
	/* Ansible keeps state under $HOME: give it ours, not /root. */
	envp[0] = "PATH=/usr/bin:/bin";
	envp[1] = "LANG=C.UTF-8";
	envp[2] = xasprintf("HOME=%s", tmp);
	envp[3] = xasprintf("ANSIBLE_HOME=%s/ansible", tmp);
	envp[4] = xasprintf("ANSIBLE_LOCAL_TEMP=%s/tmp", tmp);
	cfg = tu_writes(tmp, "ansible.cfg", "# empty\n");
	envp[5] = xasprintf("ANSIBLE_CONFIG=%s", cfg);
	free(cfg);
	n = 6;
	for (i = 0; extra != NULL && extra[i] != NULL && n < 23; i++)
		envp[n++] = extra[i];
	envp[n] = NULL;
	tu_run(r, argv, envp, NULL, 0);
	for (i = 2; i < 6; i++)
		free(envp[i]);
	tu_rmtree(tmp);
	free(tmp);
	return 0;
}

static int
file_ready(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0);
}

int
tu_wait_file(const char *path, int timeout_ms)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	char ev[4096];
	long long deadline = deadline_now_ms() + timeout_ms;
	struct pollfd pfd;
	int r = -1;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	pfd.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	pfd.events = POLLIN;
	ck_assert_int_ge(pfd.fd, 0);
	/* Watch first, then look: nothing falls between the two. */
	ck_assert_msg(inotify_add_watch(pfd.fd, slash != NULL ? dir : ".",
	    IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO) >= 0,
	    "cannot watch the directory of %s", path);
	for (;;) {
		if (file_ready(path)) {
			r = 0;
			break;
		}
		if (poll(&pfd, 1, deadline_left_ms(deadline,
		    deadline_now_ms())) <= 0)
			break;
		while (read(pfd.fd, ev, sizeof(ev)) > 0)
			;
	}
	close(pfd.fd);
	free(dir);
	return r;
}

int
tu_wait_gone(int pid, int timeout_ms)
{
	struct pollfd pfd;
	int r;

	pfd.fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pfd.fd == -1) {
		ck_assert_msg(errno == ESRCH, "pidfd_open %d: %s", pid,
		    strerror(errno));
		return 0;
	}
	pfd.events = POLLIN;
	r = poll(&pfd, 1, timeout_ms) == 1 ? 0 : -1;
	close(pfd.fd);
	return r;
}
