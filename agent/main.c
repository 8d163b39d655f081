/*
 * main.c - envctl-agent: runs on a managed host for one SSH session and
 * answers envctl's requests, read from stdin, on stdout.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/selfexe.h"

#include "cache.h"
#include "forkserver.h"
#include "ops.h"
#include "policy.h"
#include "readmemo.h"
#include "session.h"

#ifndef ENVCTL_VERSION
#define ENVCTL_VERSION	"unknown"
#endif

/* The signal that asked the agent to stop, or 0. */
static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/*
 * Before a privileged session (policy.h): the program must be the one its
 * name (or --sha256) gives the digest of, and $TMPDIR, which the caller
 * may have kept through sudo, is not used.  0, or the exit status.
 */
static int
self_check(const char *digest)
{
	struct policy_ids ids;
	struct err err = ENVCTL_ERR_INIT;
	char *self;
	int mismatch, r = 0;

	policy_ids_self(&ids);
	if (!policy_privileged(&ids))
		return 0;
	unsetenv("TMPDIR");
	if ((self = selfexe_path()) == NULL) {
		fprintf(stderr, "envctl-agent: cannot read /proc/self/exe, "
		    "so a privileged agent cannot check its digest\n");
		return 1;
	}
	if (policy_check_digest(&mismatch, "/proc/self/exe", self, digest,
	    &err) != 0) {
		fprintf(stderr, "envctl-agent: %s%s%s\n", err.msg,
		    err.cause != 0 ? ": " : "", err.cause != 0 ?
		    strerror(err.cause) : "");
		r = mismatch ? ENVCTL_POLICY_EXIT_DIGEST : 1;
	}
	err_release(&err);
	free(self);
	return r;
}

static int
usage(void)
{
	fprintf(stderr, "usage: envctl-agent [--version | [--sha256 HEX] "
	    "[--requests BASE64]]\nServes envctl's requests (frames given "
	    "with --requests first, then stdin)\non stdout.\n");
	return 64;
}

/*
 * --requests: the frames that came with the exec, base64.  The argument
 * is wiped once decoded, so that the process list shows it only for the
 * moment the shell that started us ran.
 */
static int
take_requests(struct buf *first, char *arg)
{
	struct err err = ENVCTL_ERR_INIT;
	size_t len = strlen(arg);
	int r;

	buf_init(first, 256 * 1024);
	r = proto_b64_decode(first, arg, len, &err);
	memset(arg, 0, len);
	if (r != 0)
		fprintf(stderr, "envctl-agent: --requests: %s\n", err.msg);
	err_release(&err);
	return r;
}

int
main(int argc, char *argv[])
{
	const char *digest = NULL, *requests = NULL;
	struct buf first = ENVCTL_BUF_INIT;
	struct forkserver fs = FORKSERVER_INIT;
	struct cache cache = CACHE_INIT;
	struct read_memo memo = READ_MEMO_INIT;
	struct agent_ctx ctx;
	struct sigaction sa;
	sigset_t block, waitmask;
	int fd, i, out, r;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("envctl-agent %s\n", ENVCTL_VERSION);
		return 0;
	}
	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return usage();
		if (strcmp(argv[i], "--sha256") == 0 && digest == NULL)
			digest = argv[i + 1];
		else if (strcmp(argv[i], "--requests") == 0 &&
		    requests == NULL) {
			requests = argv[i + 1];
			if (take_requests(&first, argv[i + 1]) != 0)
				return 2;
		} else
			return usage();
	}
	if ((r = self_check(digest)) != 0) {
		buf_release(&first);
		return r;
	}
	/* Pipes made later must not land on a closed 0, 1 or 2. */
	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
	/*
	 * Replies go out on a private descriptor and fd 1 becomes stderr,
	 * so that nothing printed by mistake can corrupt the stream.
	 */
	if ((out = fcntl(1, F_DUPFD_CLOEXEC, 3)) == -1 || dup2(2, 1) == -1) {
		perror("envctl-agent: stdout");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Blocked except while waiting, where pselect() sees them at once. */
	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	ctx.stop = &stop_signal;
	ctx.waitmask = &waitmask;
	ctx.fs = &fs;
	ctx.cache = &cache;
	ctx.memo = &memo;
	fs.cache = &cache;
	r = session_run(0, out, first.data, first.len, &ctx);
	buf_release(&first);
	forkserver_stop(&fs);
	/* After the last reply, so that no request waits for it. */
	cache_tidy(&cache);
	cache_release(&cache);
	readmemo_release(&memo);
	return r;
}
