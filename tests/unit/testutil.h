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
/* Writes len bytes to dir/name (dir may be NULL); returns the full path. */
char	*tu_write(const char *dir, const char *name, const char *data,
	    size_t len);
/* Writes a NUL-terminated string; as tu_write. */
char	*tu_writes(const char *dir, const char *name, const char *s);
/* Reads a whole file; *lenp gets its length; NULL when it cannot. */
char	*tu_read(const char *path, size_t *lenp);

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

#endif
