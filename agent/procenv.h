/*
 * procenv.h - the environment running Python workers were started with.
 *
 * Scans proc_root ("/proc", or a test's fake tree) read-only for Python
 * processes (pykind_python_name() of their exe, else of argv[0]) whose
 * command line holds a pattern, and reports for each the
 * values of the requested names in /proc/PID/environ (the environment at
 * execve, see proc(5)).  Every read is capped; a process that cannot be
 * read or exits meanwhile is reported or skipped, never an error.  A
 * struct procenv is owned by its caller; release it with procenv_release().
 */
#ifndef ENVCTL_AGENT_PROCENV_H
#define ENVCTL_AGENT_PROCENV_H

#include <jansson.h>
#include <stddef.h>

struct err;

#define ENVCTL_PROCENV_SCAN_MAX		32768	/* /proc entries looked at */
#define ENVCTL_PROCENV_MATCH_MAX	256	/* processes reported */
#define ENVCTL_PROCENV_CMDLINE_MAX	(64u * 1024)	/* read and matched */
#define ENVCTL_PROCENV_CMDLINE_SHOW	512	/* bytes reported */
#define ENVCTL_PROCENV_ENVIRON_MAX	(256u * 1024)
#define ENVCTL_PROCENV_FILE_MAX		(64u * 1024)	/* stat, status, cgroup */
#define ENVCTL_PROCENV_NAMES_MAX	256
#define ENVCTL_PROCENV_PATTERNS_MAX	64

struct procenv_proc {
	long	 pid, ppid;	/* ppid -1: unknown */
	long	 uid;		/* real uid, -1: unknown */
	char	*user;		/* account_user(uid), or NULL */
	char	*exe;		/* readlink of exe, or NULL */
	char	*exe_error;	/* why exe is NULL */
	char	*cmdline;	/* argv joined by spaces, at most
				   ENVCTL_PROCENV_CMDLINE_SHOW bytes */
	long long started;	/* Unix time, -1: unknown */
	char	*unit;		/* systemd service, or NULL */
	char	**values;	/* one per procenv.names; NULL: unset */
	int	 env_truncated;	/* environ was longer than its cap */
	int	 env_clobbered;	/* environ no longer holds NAME=VALUE
				   entries (setproctitle wrote over it) */
	char	*error;		/* why environ was not read, or NULL */
};

struct procenv {
	size_t			 scanned;	/* /proc/PID entries looked at */
	size_t			 matched;	/* all matches, reported or not */
	size_t			 unreadable;	/* reported, environ unread */
	size_t			 unidentified;	/* pattern matched, exe unread,
						   argv[0] not python */
	int			 truncated;	/* a cap stopped the scan */
	char			**names;	/* requested + NCCL_CONF_FILE */
	size_t			 nnames;
	struct procenv_proc	*procs;		/* by pid */
	size_t			 nprocs, aprocs;
};

#define PROCENV_INIT	{ 0, 0, 0, 0, 0, NULL, 0, NULL, 0, 0 }

/*
 * Fills pe from proc_root.  patterns (none: "vllm", "sglang",
 * "torch.distributed") are matched case-insensitively against the command
 * line; names are the variables wanted (NCCL_CONF_FILE is always added).
 * ENVCTL_EINVALID for an empty pattern or name, or past the _MAX counts;
 * ENVCTL_ESYS when proc_root cannot be listed.  Release pe whatever the
 * return.
 */
int	 procenv_scan(struct procenv *pe, const char *proc_root,
	    char *const *patterns, size_t npatterns, char *const *names,
	    size_t nnames, struct err *err);
/*
 * {"scanned","matched","truncated","unreadable","unidentified",
 * "processes":[{"pid","ppid","uid","user","exe","exe_error","cmdline",
 * "started","unit","env":{NAME:s|null},"env_truncated","env_clobbered",
 * "error"}]}; a new reference.
 */
json_t	*procenv_json(const struct procenv *pe);
void	 procenv_release(struct procenv *pe);

#endif
