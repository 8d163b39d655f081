/*
 * check_procenv.c - running workers' environments (agent/procenv.c).
 *
 * agent/procenv.c (and agent/account.c, which it needs) are compiled into
 * this suite directly, as check_policy.c does with agent/policy.c.  The
 * parsers meet the odd cases in a fake proc tree under a temp directory;
 * then the real /proc is scanned for real python3 processes this suite
 * starts (and kills and reaps, by PID) with environments of its choosing,
 * once as root and once from a child that dropped to nobody.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/account.c"	/* see above */
#include "agent/procenv.c"
#include "agent/pykind.c"
#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "testutil.h"

static const struct {
	const char	*name;
	int		 python;
} pythons[] = {
	{ "python", 1 }, { "python3", 1 }, { "python3.11", 1 },
	{ "python3.13t", 1 }, { "python2.7", 1 }, { "python3.", 0 },
	{ "python3.13td", 1 }, { "python3.7m", 1 }, { "python3.7dm", 1 },
	{ "python3.12d", 1 }, { "python3.11x", 0 }, { "python3.13dt", 0 },
	{ "python3.11-config", 0 }, { "pythonista", 0 }, { "ipython", 0 },
	{ "VLLM::Worker_TP0", 0 }, { "pytho", 0 }, { "", 0 },
};

START_TEST(test_is_python)
{
	ck_assert_msg(pykind_python_name(pythons[_i].name) ==
	    pythons[_i].python, "'%s'", pythons[_i].name);
}
END_TEST

/* ---- a fake proc tree ---- */

static void
fake_file(const char *root, long pid, const char *name, const char *data,
    size_t len)
{
	char *dir = xasprintf("%s/%ld", root, pid);

	mkdir(dir, 0755);
	free(tu_write(dir, name, data, len));
	free(dir);
}

/* A process: cmdline and environ hold NULs, so lengths are given. */
static void
fake_proc(const char *root, long pid, const char *exe, const char *cmd,
    size_t cmdlen, const char *env, size_t envlen, const char *cgroup)
{
	char *dir = xasprintf("%s/%ld", root, pid), *p, *stat;

	mkdir(dir, 0755);
	if (exe != NULL) {
		p = xasprintf("%s/exe", dir);
		ck_assert_int_eq(symlink(exe, p), 0);
		free(p);
	}
	fake_file(root, pid, "cmdline", cmd, cmdlen);
	if (env != NULL)
		fake_file(root, pid, "environ", env, envlen);
	/* comm with spaces and ')'; starttime 250 s after boot. */
	stat = xasprintf("%ld (a) b (c)) S 1 %ld 0 0 -1 4194560 0 0 0 0 0 0 "
	    "0 0 20 0 1 0 %ld 1000 100 18446744073709551615", pid, pid,
	    250L * sysconf(_SC_CLK_TCK));
	fake_file(root, pid, "stat", stat, strlen(stat));
	free(stat);
	p = "Name:\tpython3\nUid:\t4000000\t0\t0\t0\n";
	fake_file(root, pid, "status", p, strlen(p));
	if (cgroup != NULL)
		fake_file(root, pid, "cgroup", cgroup, strlen(cgroup));
	free(dir);
}

#define S(lit)	lit, sizeof(lit) - 1

static const struct procenv_proc *
find(const struct procenv *pe, long pid)
{
	size_t i;

	for (i = 0; i < pe->nprocs; i++)
		if (pe->procs[i].pid == pid)
			return &pe->procs[i];
	return NULL;
}

START_TEST(test_fake_tree)
{
	struct procenv pe = PROCENV_INIT;
	struct err err = ENVCTL_ERR_INIT;
	const struct procenv_proc *pr;
	struct buf big = ENVCTL_BUF_INIT;
	char *root = tu_mkdtemp();
	char *names[] = { "NCCL_PROTO", "NCCL_ALGO" };
	size_t i;
	json_t *j;
	char *s;

	free(tu_writes(root, "stat", "cpu  1 2 3\nbtime 1700000000\n"));
	/* Matched; environ without its final NUL; systemd v2 with a
	 * delegated sub-cgroup. */
	fake_proc(root, 100, "/usr/bin/python3.11", S("python3\0-m\0"
	    "vllm.entrypoints.openai.api_server\0--tp\0002\0"),
	    S("A=1\0NCCL_PROTO=Simple\0NCCL_PROTO=LL\0NCCL_ALGO=Ring"),
	    "0::/system.slice/vllm-worker.service/payload\n");
	/* setproctitle's rename: exe still says python. */
	fake_proc(root, 101, "/opt/venv/bin/python3.12 (deleted)",
	    S("VLLM::Worker_TP0\0\0\0\0\0\0\0\0"), S("\0\0\0\0\0\0"),
	    "12:pids:/x\n1:name=systemd:/system.slice/sglang.service\n");
	/* No exe link (unreadable): argv[0] decides. */
	fake_proc(root, 102, NULL, S("/usr/bin/python3\0-m\0sglang.launch"),
	    S("NCCL_CONF_FILE=/etc/x.conf\0"), "0::/user.slice/user-1000."
	    "slice/user@1000.service/app.slice/vllm.service\n");
	fake_proc(root, 103, NULL, S("VLLM::Worker_TP1\0"), S(""), NULL);
	/* Not python; python without a pattern. */
	fake_proc(root, 104, "/bin/dash", S("sh\0-c\0vllm serve\0"), S(""),
	    NULL);
	fake_proc(root, 105, "/usr/bin/python3", S("python3\0app.py\0"),
	    S(""), NULL);
	/* No environ file (it exited), no stat; a scope, not a service. */
	fake_proc(root, 106, "/usr/bin/python3", S("python3\0-m\0"
	    "torch.distributed.run\0"), NULL, 0,
	    "0::/system.slice/docker-1.scope\n");
	s = xasprintf("%s/106/stat", root);
	unlink(s);
	free(s);
	/* An environ past its cap: the name at its end is not seen. */
	for (i = 0; big.len <= ENVCTL_PROCENV_ENVIRON_MAX; i++)
		buf_addf(&big, "FILLER_%zu=%0200d", i, 0), buf_addch(&big, 0);
	buf_addstr(&big, "NCCL_PROTO=LL128");
	fake_proc(root, 107, "/usr/bin/python3", S("python3\0vllm\0"),
	    big.data, big.len, NULL);
	/* Kernel thread: empty cmdline. */
	fake_proc(root, 108, NULL, S(""), S(""), NULL);

	ck_assert_int_eq(procenv_scan(&pe, root, NULL, 0, names, 2, &err), 0);
	ck_assert_uint_eq(pe.scanned, 9);
	ck_assert_uint_eq(pe.matched, 5);
	ck_assert_uint_eq(pe.unreadable, 1);
	ck_assert_uint_eq(pe.unidentified, 1);
	ck_assert_int_eq(pe.truncated, 0);
	ck_assert_uint_eq(pe.nnames, 3);

	pr = find(&pe, 100);
	ck_assert_ptr_nonnull(pr);
	ck_assert_int_eq(pr->ppid, 1);
	ck_assert_int_eq(pr->uid, 4000000);
	ck_assert_int_eq(pr->started, 1700000000LL + 250);
	ck_assert_str_eq(pr->exe, "/usr/bin/python3.11");
	ck_assert_str_eq(pr->cmdline, "python3 -m vllm.entrypoints.openai."
	    "api_server --tp 2");
	ck_assert_str_eq(pr->unit, "vllm-worker.service");
	ck_assert_str_eq(pr->values[0], "Simple");	/* the first wins */
	ck_assert_str_eq(pr->values[1], "Ring");	/* no final NUL */
	ck_assert_ptr_null(pr->values[2]);
	ck_assert_int_eq(pr->env_clobbered, 0);

	pr = find(&pe, 101);
	ck_assert_ptr_nonnull(pr);
	ck_assert_str_eq(pr->cmdline, "VLLM::Worker_TP0");
	ck_assert_str_eq(pr->unit, "sglang.service");
	ck_assert_int_eq(pr->env_clobbered, 1);
	ck_assert_ptr_null(pr->values[0]);

	pr = find(&pe, 102);
	ck_assert_ptr_nonnull(pr);
	ck_assert_ptr_null(pr->exe);
	ck_assert_str_eq(pr->exe_error, "the process exited");
	ck_assert_str_eq(pr->unit, "vllm.service");
	ck_assert_str_eq(pr->values[2], "/etc/x.conf");

	ck_assert_ptr_null(find(&pe, 103));
	ck_assert_ptr_null(find(&pe, 104));
	ck_assert_ptr_null(find(&pe, 105));

	pr = find(&pe, 106);
	ck_assert_ptr_nonnull(pr);
	ck_assert_str_eq(pr->error, "the process exited");
	ck_assert_int_eq(pr->started, -1);
	ck_assert_int_eq(pr->ppid, -1);
	ck_assert_ptr_null(pr->unit);

	pr = find(&pe, 107);
	ck_assert_ptr_nonnull(pr);
	ck_assert_int_eq(pr->env_truncated, 1);
	ck_assert_ptr_null(pr->values[0]);

	j = procenv_json(&pe);
	s = json_dumps(json_array_get(json_object_get(j, "processes"), 0),
	    JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s, "{\"cmdline\":\"python3 -m vllm.entrypoints."
	    "openai.api_server --tp 2\",\"env\":{\"NCCL_ALGO\":\"Ring\","
	    "\"NCCL_CONF_FILE\":null,\"NCCL_PROTO\":\"Simple\"},"
	    "\"env_clobbered\":false,\"env_truncated\":false,\"error\":null,"
	    "\"exe\":\"/usr/bin/python3.11\",\"exe_error\":null,\"pid\":100,"
	    "\"ppid\":1,\"started\":1700000250,\"uid\":4000000,"
	    "\"unit\":\"vllm-worker.service\",\"user\":\"4000000\"}");
	free(s);
	json_decref(j);
	procenv_release(&pe);
	buf_release(&big);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_caps_and_errors)
{
	struct procenv pe = PROCENV_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *root = tu_mkdtemp(), *p;
	char *bad[] = { "NCCL_PROTO", "" }, *badname[] = { "A-B" };
	char *one[] = { "NCCL_PROTO" };
	long pid;

	/* 300 matches: 256 reported. */
	for (pid = 1; pid <= 300; pid++)
		fake_proc(root, pid, "/usr/bin/python3", S("python3\0vllm\0"),
		    S("NCCL_PROTO=Simple\0"), NULL);
	ck_assert_int_eq(procenv_scan(&pe, root, NULL, 0, one, 1, &err), 0);
	ck_assert_uint_eq(pe.matched, 300);
	ck_assert_uint_eq(pe.nprocs, ENVCTL_PROCENV_MATCH_MAX);
	ck_assert_int_eq(pe.truncated, 1);
	ck_assert_int_lt(pe.procs[0].pid, pe.procs[1].pid);	/* by pid */
	ck_assert_str_eq(pe.procs[0].values[0], "Simple");
	procenv_release(&pe);

	/* 32768 entries looked at, then no more. */
	for (pid = 301; pid <= ENVCTL_PROCENV_SCAN_MAX + 1; pid++) {
		p = xasprintf("%s/%ld", root, pid);
		mkdir(p, 0755);
		free(p);
	}
	ck_assert_int_eq(procenv_scan(&pe, root, NULL, 0, NULL, 0, &err), 0);
	ck_assert_uint_eq(pe.scanned, ENVCTL_PROCENV_SCAN_MAX);
	ck_assert_int_eq(pe.truncated, 1);
	procenv_release(&pe);

	ck_assert_int_eq(procenv_scan(&pe, root, NULL, 0, bad, 2, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "processes: name 2 is empty");
	procenv_release(&pe);
	ck_assert_int_eq(procenv_scan(&pe, root, NULL, 0, badname, 1, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "processes: 'A-B' is not a variable name");
	procenv_release(&pe);
	ck_assert_int_eq(procenv_scan(&pe, "/nonexistent/proc", NULL, 0, NULL,
	    0, &err), ENVCTL_ESYS);
	ck_assert_str_eq(err.msg, "cannot list '/nonexistent/proc'");
	ck_assert_int_eq(err.cause, ENOENT);
	procenv_release(&pe);
	err_release(&err);
	tu_rmtree(root);
	free(root);
}
END_TEST

/* ---- real processes ---- */

/*
 * Starts argv with envp (and in, unless -1, as stdin); returns its pid once it has exec'd (a
 * close-on-exec pipe reads EOF) or, with ready set, once it wrote a line
 * to its stdout.
 */
static pid_t
spawn(char *const argv[], char *const envp[], int ready, int in)
{
	struct pollfd pfd;
	char c;
	pid_t pid;
	int p[2];

	ck_assert_int_eq(pipe2(p, ready ? 0 : O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		if (ready)
			dup2(p[1], 1);
		if (in != -1)
			dup2(in, 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		ck_assert_msg(poll(&pfd, 1, 20000) == 1, "%s did not start",
		    argv[0]);
		if (read(p[0], &c, 1) != 1 || c == '\n')
			break;
	}
	close(p[0]);
	return pid;
}

static void
stop(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Rewrites its argv in place (what setproctitle does), then says so. */
static const char retitle_py[] =
    "import os, time\n"
    "st = open('/proc/self/stat', 'rb').read()\n"
    "f = st[st.rindex(b')') + 2:].split()\n"
    "start, end = int(f[45]), int(f[46])\n"	/* fields 48 and 49 */
    "title = b'VLLM::Worker_TP0'\n"
    "fd = os.open('/proc/self/mem', os.O_RDWR)\n"
    "os.pwrite(fd, title + b'\\0' * (end - start - len(title)), start)\n"
    "os.close(fd)\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n";

#define SLEEP_PY	"import time; print('ready', flush=True); " \
	"time.sleep(60)"

START_TEST(test_real_processes)
{
	struct procenv pe = PROCENV_INIT;
	struct err err = ENVCTL_ERR_INIT;
	const struct procenv_proc *pr;
	char *py = (char *)tu_python();
	char *a1[] = { py, "-c", SLEEP_PY,
	    "vllm.entrypoints.openai.api_server", NULL };
	char *e1[] = { "NCCL_PROTO=Simple", "NCCL_CONF_FILE=/etc/x.conf",
	    "NCCL_ALGO=", NULL };
	char *a2[] = { py, "-c", SLEEP_PY, "--model", "SGLang-Test", NULL };
	char *e2[] = { "NCCL_ALGO=Ring", NULL };
	char *a3[] = { py, "-c", SLEEP_PY, "other_server", NULL };
	char *a4[] = { "/bin/cat", "-", "vllm", NULL };
	char *a5[] = { py, "-c", (char *)retitle_py, "vllm", NULL };
	char *names[] = { "NCCL_PROTO", "NCCL_ALGO" };
	pid_t p1, p2, p3, p4, p5;
	long long now = (long long)time(NULL);
	int in[2];

	if (access(py, X_OK) != 0) {
		tu_skip("test_real_processes", "no python3");
		return;
	}
	p1 = spawn(a1, e1, 1, -1);
	p2 = spawn(a2, e2, 1, -1);
	p3 = spawn(a3, e2, 1, -1);
	/* cat waits on a pipe nobody writes. */
	ck_assert_int_eq(pipe(in), 0);
	p4 = spawn(a4, e2, 0, in[0]);
	close(in[0]);
	p5 = spawn(a5, e2, 1, -1);

	ck_assert_int_eq(procenv_scan(&pe, "/proc", NULL, 0, names, 2, &err),
	    0);
	ck_assert_uint_ge(pe.scanned, 6);
	ck_assert_int_eq(pe.truncated, 0);

	pr = find(&pe, p1);
	ck_assert_msg(pr != NULL, "pid %ld not found", (long)p1);
	ck_assert_int_eq(pr->ppid, getpid());
	ck_assert_int_eq(pr->uid, (long)getuid());
	ck_assert_ptr_nonnull(pr->exe);
	ck_assert_msg(pykind_python_name(strrchr(pr->exe, '/') + 1),
	    "exe %s", pr->exe);
	ck_assert_msg(pr->started >= now - 5 && pr->started <= now + 5,
	    "started %lld, now %lld", pr->started, now);
	ck_assert_str_eq(pr->values[0], "Simple");
	ck_assert_str_eq(pr->values[1], "");		/* set, empty */
	ck_assert_str_eq(pr->values[2], "/etc/x.conf");
	ck_assert_ptr_null(pr->error);
	ck_assert_ptr_nonnull(strstr(pr->cmdline, "vllm.entrypoints"));

	pr = find(&pe, p2);				/* SGLang: any case */
	ck_assert_msg(pr != NULL, "pid %ld not found", (long)p2);
	ck_assert_ptr_null(pr->values[0]);		/* unset */
	ck_assert_str_eq(pr->values[1], "Ring");

	ck_assert_ptr_null(find(&pe, p3));		/* no pattern */
	ck_assert_ptr_null(find(&pe, p4));		/* not python */

	pr = find(&pe, p5);				/* renamed */
	ck_assert_msg(pr != NULL, "pid %ld not found", (long)p5);
	ck_assert_str_eq(pr->cmdline, "VLLM::Worker_TP0");
	ck_assert_ptr_nonnull(pr->exe);
	ck_assert_str_eq(pr->values[1], "Ring");
	procenv_release(&pe);

	/* As nobody: root's processes keep environ and exe to themselves. */
	if (getuid() == 0) {
		pid_t c;
		int status;

		if ((c = fork()) == 0) {
			int rc = 0;

			if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
			    setuid(65534) != 0)
				_exit(10);
			if (procenv_scan(&pe, "/proc", NULL, 0, names, 2,
			    &err) != 0)
				_exit(11);
			pr = find(&pe, p1);	/* argv[0] is python3 */
			if (pr == NULL)
				rc = 12;
			else if (pr->error == NULL || strcmp(pr->error,
			    "permission denied") != 0)
				rc = 13;
			else if (pr->exe != NULL || strcmp(pr->exe_error,
			    "permission denied") != 0)
				rc = 14;
			else if (pe.unreadable < 2 || pe.unidentified < 1)
				rc = 15;	/* p5: VLLM::Worker_TP0 */
			_exit(rc);
		}
		ck_assert_int_eq(waitpid(c, &status, 0), c);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "unprivileged scan: status %d", status);
	}
	stop(p1);
	stop(p2);
	stop(p3);
	close(in[1]);
	stop(p4);
	stop(p5);
	err_release(&err);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("procenv");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_is_python, 0,
	    sizeof(pythons) / sizeof(pythons[0]));
	tcase_add_test(tc, test_fake_tree);
	tcase_add_test(tc, test_caps_and_errors);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	tc = tcase_create("real");
	tcase_add_test(tc, test_real_processes);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
