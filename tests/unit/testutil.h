/*
 * testutil.h - helpers shared by the Check suites.
 *
 * Paths come from the environment the Makefile sets (ENVCTL_SRCDIR,
 * ENVCTL_BIN, ENVCTL_FIXTURES).  Everything returned is heap memory the
 * caller frees.  Temporary directories live under $TMPDIR (or /tmp) and are
 * removed by tu_rmtree(); tests never write anywhere else.
 */
#ifndef ENVCTL_TESTS_TESTUTIL_H
#define ENVCTL_TESTS_TESTUTIL_H

#include <stddef.h>

/* $ENVCTL_SRCDIR/rel (the source tree), or ./rel when unset. */
char	*tu_srcpath(const char *rel);
/* $ENVCTL_FIXTURES/name: the shared fixtures directory. */
char	*tu_fixture(const char *name);
/* Creates a fresh private directory; returns its path. */
char	*tu_mkdtemp(void);
/* Removes a directory made by tu_mkdtemp() and everything in it. */
void	 tu_rmtree(const char *dir);
/*
 * A fresh temp directory for every test of a TCase that has tu_dir_setup
 * and tu_dir_teardown as its checked fixture: tu_dir is its path during
 * the test (tu_mkdtemp()); it is removed afterwards, even when the test
 * left it without its write bit.
 */
extern char *tu_dir;
void	 tu_dir_setup(void);
void	 tu_dir_teardown(void);
/* Writes len bytes to dir/name (dir may be NULL); returns the full path. */
char	*tu_write(const char *dir, const char *name, const char *data,
	    size_t len);
/* Writes a NUL-terminated string; as tu_write. */
char	*tu_writes(const char *dir, const char *name, const char *s);
/* Reads a whole file; *lenp gets its length; NULL when it cannot. */
char	*tu_read(const char *path, size_t *lenp);
/*
 * Readiness without a sleep.  tu_wait_file() returns 0 once path exists
 * and, when a regular file, is not empty (it watches path's directory with
 * inotify: a write closed, a rename into place, a socket bound); -1 after
 * timeout_ms.  tu_wait_gone() returns 0 once process pid (any process, not
 * only a child) has ended, a zombie included (pidfd); -1 after timeout_ms.
 */
int	 tu_wait_file(const char *path, int timeout_ms);
int	 tu_wait_gone(int pid, int timeout_ms);

struct tu_run {
	int	 status;	/* exit code, or 128 + signal */
	char	*out;		/* stdout, NUL-terminated */
	size_t	 outlen;
	char	*errout;	/* stderr, NUL-terminated */
	size_t	 errlen;
};

/*
 * Runs argv (argv[0] searched in PATH) with envp (NULL: inherit), feeding
 * stdin from in (NULL: /dev/null).  Fills r; release with tu_run_free().
 */
void	 tu_run(struct tu_run *r, char *const argv[], char *const envp[],
	    const char *in, size_t inlen);
void	 tu_run_free(struct tu_run *r);
/* The built envctl: $ENVCTL_BIN, else build/envctl. */
const char *tu_envctl(void);
/*
 * The python3 the tests run: $ENVCTL_TEST_PYTHON (to try other versions),
 * else /usr/bin/python3 when present, else "python3".
 */
const char *tu_python(void);
/*
 * Reports that test cannot run here (a prerequisite such as ansible is
 * missing): under CI=true the test fails; elsewhere it prints "SKIP test:
 * why", which tests/run-unit counts as skipped, and the caller returns.
 */
void	 tu_skip(const char *test, const char *why);
/*
 * Runs one of Ansible's programs (argv[0] an absolute path) with the extra
 * environment entries (NULL-ended; may be NULL) in a private HOME and
 * temp dir with an empty ansible.cfg, so that nothing of this machine's
 * changes what it reads.  Returns 0 with r filled (tu_run_free() it), or
 * 1 after tu_skip(test, ...) when Ansible is not installed.
 */
int	 tu_ansible(struct tu_run *r, const char *test, char *const argv[],
	    char *const *extra);

#endif
