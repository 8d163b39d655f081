/*
 * policy.h - what a privileged agent may touch: root's word, never the
 * request's (docs/security.md, "The agent as a privilege boundary").
 *
 * The agent is privileged when it runs with more rights than, or as
 * another user than, whoever started it: real and effective ids differ,
 * the kernel marks it AT_SECURE (setuid, setgid, file capabilities), or
 * sudo, pkexec or doas started it for another user (SUDO_UID and
 * PKEXEC_UID other than the effective uid or not a number, DOAS_USER set
 * while euid is 0).  Then, and only then, every request handler asks this
 * module before it runs an interpreter or touches a path: interpreters,
 * targets and the policy file must lie on paths that only root can change
 * (every directory on the way and each symlink's target included), targets
 * must be the interpreter's own sitecustomize or listed in the policy file
 * ENVCTL_POLICY_FILE, backups stay in its backup_dir.  Unprivileged, every
 * check passes and nothing is read.  A struct policy is owned by one
 * request; release it with policy_release().  Refusals are
 * ENVCTL_EINVALID (ENVCTL_EPARSE for a malformed policy file, ENVCTL_ESYS
 * when a path cannot be looked at) and name the rule.
 */
#ifndef ENVCTL_AGENT_POLICY_H
#define ENVCTL_AGENT_POLICY_H

#include <stddef.h>
#include <sys/types.h>

struct err;
struct probe;

#define ENVCTL_POLICY_FILE	"/etc/envctl/agent.conf"
#define ENVCTL_POLICY_BACKUP_DIR	"/var/backups/envctl"
#define ENVCTL_POLICY_MAX	(64u * 1024)	/* bytes of the policy file */
/* The agent's exit status when its program does not match its digest. */
#define ENVCTL_POLICY_EXIT_DIGEST	96

/* Who the process is, and who started it (NULL: not in the environment). */
struct policy_ids {
	uid_t		 ruid, euid;
	gid_t		 rgid, egid;
	int		 secure;	/* getauxval(AT_SECURE) */
	const char	*sudo_uid;
	const char	*pkexec_uid;
	const char	*doas_user;
};

struct policy {
	int		 privileged;
	const char	*file;		/* the policy file's path */
	int		 loaded;	/* it exists and was read */
	char		**interps;	/* "interpreter" lines, as written */
	size_t		  ninterps;
	char		**targets;	/* "target" lines, as written */
	size_t		  ntargets;
	char		*backup_dir;	/* NULL: ENVCTL_POLICY_BACKUP_DIR */
	char		*interp;	/* the interpreter checked last */
	char		**kept;		/* those checked before it */
	size_t		  nkept;
	char		**services;	/* "service" lines, as NAME.service */
	size_t		  nservices;
};

#define POLICY_INIT	{ 0, ENVCTL_POLICY_FILE, 0, NULL, 0, NULL, 0, NULL, \
	NULL, NULL, 0, NULL, 0 }

/* This process's ids and environment. */
void	policy_ids_self(struct policy_ids *ids);
/* 1 when ids describe a privileged agent (see above), else 0. */
int	policy_privileged(const struct policy_ids *ids);
/*
 * Fills pol for this process: privileged or not, and when privileged the
 * policy file, which may be missing (the defaults) but, when present, must
 * be a regular file that only root can change.  Release pol whatever the
 * return.
 */
int	policy_open(struct policy *pol, struct err *err);
/* As policy_open, with the privilege and the file given (for tests). */
int	policy_load(struct policy *pol, int privileged, const char *file,
	    struct err *err);
/*
 * Checks the request's interpreter (a command name is looked up in
 * ENVCTL_PROBE_PATH, as the probe does) and, privileged, points *interp at
 * the absolute path that was checked (borrowed from pol): root-owned, only
 * root can change it or any directory or link on its way, and either listed
 * in the policy file or, when the file lists none, named python*.
 */
int	policy_interpreter(struct policy *pol, const char **interp,
	    struct err *err);
/*
 * 1 when path's last component is a name a Python is installed under, the
 * "named python*" of policy_interpreter(): "python" followed only by
 * digits and dots (python, python3, python3.11); python3-config,
 * python3.13t, ipython and a path ending in '/' are not.
 */
int	policy_python_name(const char *path);
/*
 * Checks the target path for the interpreter p describes: only root can
 * change any directory or link on its way, and it is what that interpreter
 * imports as sitecustomize (or, when it imports none, the file read's
 * auto mode would create) or one of the policy file's targets, all
 * compared after resolving symlinks.
 */
int	policy_target(const struct policy *pol, const char *path,
	    const struct probe *p, struct err *err);
/*
 * Checks a systemd service whose unit files a request reads (unit is
 * "NAME.service"): privileged, it must be listed on a "service" line of
 * the policy file.
 */
int	policy_service(const struct policy *pol, const char *unit,
	    struct err *err);
/*
 * Checks a file a privileged agent reads on a unit's behalf (an
 * EnvironmentFile=): it and every directory and link on its way only root
 * can change.  A missing file passes (the caller finds it missing).
 */
int	policy_root_file(const struct policy *pol, const char *path,
	    struct err *err);
/*
 * Checks a program a privileged agent runs or a file it reads for facts
 * (nvidia-smi, ptxas, a library): root-owned, and only root can change
 * it or any directory and link on its way.  A missing one passes.
 */
int	policy_program(const struct policy *pol, const char *path,
	    struct err *err);
/* Checks a backup directory: exactly the policy's (trailing '/' aside). */
int	policy_backup_dir(const struct policy *pol, const char *dir,
	    struct err *err);
/* Checks a request's lock directory: NULL or the default one. */
int	policy_lock_dir(const struct policy *pol, const char *dir,
	    struct err *err);
/*
 * The running program's own check, before it serves a privileged session:
 * the SHA-256 of exe (the bytes, normally "/proc/self/exe") must equal the
 * digest in name's file name (envctl-agent-SHA256) and given (--sha256),
 * where there is one; with neither, name must be a file only root can
 * change.  ENVCTL_EINVALID "the agent 'NAME' does not match its digest..."
 * on a mismatch (main() then exits ENVCTL_POLICY_EXIT_DIGEST).  *mismatch
 * is set to 1 for a mismatch, 0 for any other outcome.
 */
int	policy_check_digest(int *mismatch, const char *exe, const char *name,
	    const char *given, struct err *err);
void	policy_release(struct policy *pol);
/*
 * The file path: auto manages for interpreter interp after probe p, the
 * one rule read, apply and this policy share: the sitecustomize it
 * imports, a dangling sitecustomize.py link on its path, else one in its
 * first site-packages directory.  *out is the caller's; *source says
 * which ("auto", "site-packages").  ENVCTL_EPROBE when there is none.
 */
int	policy_auto_target(char **out, const char **source,
	    const struct probe *p, const char *interp, struct err *err);

#endif
