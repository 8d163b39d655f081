/*
 * forkserver.h - fresh interpreters forked from one that ran site-packages.
 *
 * A change runs the host's interpreter up to three times (the read, the
 * validation, the verification), and most of a fresh start is Python's
 * own start-up.  The fork server pays most of it once per session: it
 * runs `INTERP -S -c SERVER SCRIPT` in the probe's environment without its
 * PYTHON* variables, from /, in its own process group, on a socket (fd 0);
 * with a cache (cache.h), SERVER and SCRIPT are files whose bytecode
 * Python keeps, and runs may be `INTERP -c CACHE_SCRIPT_BOOT FILE ...`.
 * Started with -S, it then does what site does at start-up (site-packages
 * directories, .pth files) except the two imports a change is about:
 * sitecustomize and usercustomize.  For each run it forks a child
 * that takes the caller's stdout and stderr pipes (passed over the
 * socket), its own process group and stdin on /dev/null, and the run's
 * argv and environment (as start-up and the .pth files left it, plus
 * PYTHONPATH and PYTHONDONTWRITEBYTECODE applied as start-up applies
 * them, which it does only when the server honours the environment (no
 * -E or -I) and no wrapper script set a PYTHON* variable of its own); the
 * child writes what the .pth files printed to its own stdout and stderr,
 * imports sitecustomize (and usercustomize) from disk, and runs SCRIPT.
 * What sitecustomize could tell apart: sys.flags.no_site is 1,
 * sys.orig_argv, gc.get_freeze_count() (the server freezes its objects
 * (3.7+), so that no collection in a child writes to, and copies, their
 * pages), and that the .pth files ran once per session, in another
 * process.  Forking after third-party .pth code is safe only while it
 * left no thread behind (a fork copies none, and their locks could be
 * held): when /proc/self/task shows one, the server is started again
 * "classic", never importing site, and each child does all of site.main()
 * itself; so it is without os.memfd_create() (Python before 3.8).
 * A file that ends start-up itself (SystemExit, KeyboardInterrupt) is run
 * again afresh: Python versions report that differently; a .pth file
 * that does so ends the server, and runs start afresh.
 *
 * The server dies with the agent: its death signal is SIGTERM, on which it
 * SIGKILLs the run in progress (and that run's group) before it exits.
 *
 * forkserver_run() fills a child_result as child_run() does, with the same
 * deadline, stop flag and output caps, and kills the run's process group
 * before it returns.  With last set (no run follows in the session: the
 * verification of an apply or a rollback) the server does the run itself
 * instead of forking - no fork, no copy-on-write, one exit less - and is
 * gone afterwards; a server that is not up is not started for it.  Such a
 * run resets SIGTERM to its default (or to what a .pth file set), so the
 * agent's death ends it too.
 * ENVCTL_EUNSUPPORTED, with err untouched and nothing run, when the run
 * cannot be served (another PYTHON* variable, argv not `INTERP -c SCRIPT
 * ...`, last without a server) or the server cannot start or breaks (not
 * CPython 3, a wrapper that drops -S, killed): the caller runs the
 * interpreter afresh, and a broken server is not tried again.
 */
#ifndef ENVCTL_AGENT_FORKSERVER_H
#define ENVCTL_AGENT_FORKSERVER_H

#include <sys/types.h>

#include "common/buf.h"

struct cache;
struct child_result;
struct child_spec;
struct err;

struct forkserver {
	struct cache	*cache;	/* keeps the server's script, or NULL */
	pid_t		 pid;	/* > 0 serving; 0 not started; -1 broken */
	int		 starting;	/* spawned, "ready" not read yet */
	int		 sock;
	int		 extras_ok;	/* it may apply PYTHONPATH... */
	struct buf	 key;	/* interpreter, script, environment */
};

#define FORKSERVER_INIT	{ NULL, 0, 0, -1, 0, ENVCTL_BUF_INIT }

int	forkserver_run(struct forkserver *fs, struct child_result *res,
	    const struct child_spec *spec, int last, struct err *err);
/*
 * Spawns a server for spec's run (the first of several) without waiting
 * for it, so that it starts while the caller runs that one afresh; the
 * next forkserver_run() with the same key waits for its "ready".  0 when
 * spawned or already up; ENVCTL_EUNSUPPORTED when spec cannot be served
 * or the spawn failed (the server is then broken, as in forkserver_run()).
 */
int	forkserver_prestart(struct forkserver *fs,
	    const struct child_spec *spec);
/* 1 while a server is up (or starting): a run is cheaper through it. */
int	forkserver_serving(const struct forkserver *fs);
/* Ends the server and reaps it; fs can start one again. */
void	forkserver_stop(struct forkserver *fs);

#endif
