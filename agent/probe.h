/*
 * probe.h - what an interpreter does at start-up, learnt from one run.
 *
 * probe_run() runs `INTERP -c SCRIPT NAME...` once with a clean environment
 * (ENVCTL_PROBE_PATH only, plus what the caller adds: apply validates a
 * candidate with PYTHONPATH), from /, stdin on /dev/null, so that site
 * initialisation runs as for a fresh service: exec'd, or forked from the
 * session's fork server (forkserver.h) when the caller gives one.  The
 * script reports, after the last ENVCTL_PROBE_MARKER line on stdout, the
 * interpreter, the sitecustomize it imports and the values of the named
 * variables; Python's "Error in sitecustomize" lines come from stderr.  A
 * struct probe owns all it holds; strings are valid UTF-8 (invalid bytes
 * become U+FFFD).
 */
#ifndef ENVCTL_AGENT_PROBE_H
#define ENVCTL_AGENT_PROBE_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#include "common/buf.h"

struct cache;
struct err;
struct forkserver;

#define ENVCTL_PROBE_MARKER	"--envctl-probe-v1-3f9c2a61--"
#define ENVCTL_PROBE_PATH \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define ENVCTL_PROBE_OUT_KEEP	(1024u * 1024)
#define ENVCTL_PROBE_ERR_KEEP	(64u * 1024)

struct probe_args {
	const char	*interp;	/* a command name or absolute path */
	char *const	*names;		/* variables to report */
	size_t		 nnames;
	char *const	*env_extra;	/* NULL, or "NAME=value"s, NULL */
	int		 timeout_ms;
	const volatile sig_atomic_t *stop;	/* see child.h */
	const sigset_t	*waitmask;
	struct cache	*cache;		/* keeps the script, or NULL */
	struct forkserver *fs;		/* the session's, or NULL */
	int		 start_fs;	/* more runs follow: start fs for
					   this one (else only use it when
					   it is already up) */
	int		 prestart_fs;	/* more runs follow: spawn fs now,
					   but run this one afresh meanwhile
					   (forkserver_prestart()) */
	int		 last;		/* the session's last run: fs (if
					   up) does it itself and ends */
	int		 locate;	/* run `INTERP -S`: learn where
					   sitecustomize is, import nothing
					   (no names, no fork server) */
};

struct probe {
	char	*executable;	/* sys.executable */
	char	*version;	/* "3.11.2" */
	char	*origin;	/* find_spec("sitecustomize").origin */
	char	*dangling;	/* no origin: a sitecustomize.py symlink on
				   sys.path whose target is missing */
	char	*imported;	/* sitecustomize.__file__, NULL: failed */
	json_t	*site_packages;	/* site.getsitepackages() */
	json_t	*values;	/* name -> string or null, in order */
	char	*startup_message;	/* "Error in sitecustomize;..." */
	char	*startup_exception;	/* "TypeError: ...", or NULL */
	struct buf errtext;	/* the last ERR_KEEP bytes of stderr */
	int	 truncated;	/* stdout or stderr was cut */
	int	 exit;		/* exit status, or 128 + signal */
	int	 forked;	/* the fork server served it (a child, or
				   the server itself for a last run) */
	int	 startup_failed;	/* it ran but never reached the
					   report: exited, killed, hung */
	char	*failed;	/* probe_find(): why start-up failed; the
				   fields above then come from -S */
};

/*
 * Runs the probe and fills p (release it with probe_release() whatever the
 * return; errtext and exit are set whenever the interpreter ran).
 * ENVCTL_EPROBE when it cannot be run or prints no valid report,
 * ENVCTL_ETIMEOUT past the deadline, ENVCTL_ESYS.
 */
int	probe_run(struct probe *p, const struct probe_args *a,
	    struct err *err);
/*
 * probe_run() for a read: where start-up itself failed (startup_failed),
 * runs the interpreter again with -S, which imports neither site nor
 * sitecustomize and runs no .pth file, to learn which file start-up
 * would import (agent/py/probe.py: sys.path, a venv's, the user's and the
 * other site-packages, in site's order), so that a host whose
 * sitecustomize exits, hangs or kills its parent can still be read and
 * repaired.  Not -I: a wrapper's PYTHONPATH counts, as at start-up.  Then
 * it returns 0, p->failed holds the first run's error, errtext and exit
 * are the first run's, executable, version, origin, dangling and
 * site_packages the second's, and values is empty.
 * The first run gets a->timeout_ms less a reserve for the second (a
 * fifth, 0.5 to 2 s, at most half).  Otherwise as probe_run(), with its
 * error.
 */
int	probe_find(struct probe *p, const struct probe_args *a,
	    struct err *err);
void	probe_release(struct probe *p);

#endif
