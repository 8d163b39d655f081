/*
 * unitenv.h - the environment a systemd service's processes start with,
 * read from its unit files the way systemd does, without systemd running.
 *
 * unitenv_load() finds the unit's fragment and drop-ins in the system unit
 * search path, parses their [Service] sections and reads the
 * EnvironmentFile= files, every file bounded (UNITENV_FILE_MAX bytes,
 * UNITENV_FILES_MAX files); what would make systemd warn or the service
 * fail is recorded in the struct, not returned.  A struct unitenv owns
 * all its memory: unitenv_release() it whatever a call returned.  The
 * files are found by unitpath.h, their syntax read by unitsyntax.h.  The
 * rules and the man pages they come from: docs/worker-env.md.
 */
#ifndef ENVCTL_AGENT_UNITENV_H
#define ENVCTL_AGENT_UNITENV_H

#include <stddef.h>

#include <jansson.h>

struct err;
struct policy;

#define UNITENV_FILE_MAX	(1024u * 1024)	/* bytes of one file */
#define UNITENV_FILES_MAX	64	/* fragment, drop-ins, env files */
#define UNITENV_VARS_MAX	4096	/* distinct variable names */
#define UNITENV_ARGV_MAX	64	/* ExecStart= words kept */
#define UNITENV_SYSTEMCTL_MS	5000	/* systemctl show's deadline */

/* One assignment of a variable, and where it was made. */
struct unitenv_assign {
	char		*value;		/* NULL when unknown (or unset) */
	char		*unknown;	/* why the value is not known, or NULL */
	char		*file;		/* without the root prefix */
	int		 line;
	const char	*directive;	/* "Environment", "EnvironmentFile",
					   "ExecStart" (an env(1) wrapper) */
};

/* A variable the service gets: the assignment that wins, and the
 * earlier ones it overrode, oldest first. */
struct unitenv_var {
	char			*name;
	struct unitenv_assign	 now;
	struct unitenv_assign	*over;
	size_t			 nover;
};

struct unitenv_exec {
	char	*command;	/* what systemd runs (maybe env(1)) */
	char	*path;		/* the program, past prefixes and env(1) */
	int	 python;	/* its name is python, python3, python3.N */
	char	**argv;		/* the words after it, as written */
	size_t	 argc;
	char	*file;		/* where ExecStart= was */
	int	 line;
};

struct unitenv {
	char	*unit;		/* "name.service", NULL before a valid name */
	char	*root;		/* prefixed to every path read */
	int	 found;		/* a fragment exists */
	int	 masked;	/* it is empty or a link to /dev/null */
	char	*fragment;	/* without the root prefix; NULL: none */
	char	**dropins;	/* applied, in order, without root */
	size_t	 ndropins;
	char	*user, *group;	/* User=, Group=; NULL when not set */
	char	*type;		/* Type=; NULL when not set */
	struct unitenv_exec *exec;	/* NULL: no ExecStart= */
	struct unitenv_var *vars;	/* the final environment */
	size_t	 nvars;
	char	**unset;	/* UnsetEnvironment= entries */
	size_t	 nunset;
	char	**pass;		/* PassEnvironment= names */
	size_t	 npass;
	char	**envfiles;	/* EnvironmentFile= as in effect ("-" kept) */
	size_t	 nenvfiles;
	char	**envlist;	/* Environment= alone: NAME=VALUE, in order */
	size_t	 nenvlist;
	char	**errors;	/* what would stop the service from starting */
	size_t	 nerrors;
	char	**warnings;	/* what systemd would log and ignore */
	size_t	 nwarnings;
	/* unitenv_systemctl()'s cross-check. */
	int	 sc_checked, sc_agrees;
	char	*sc_reason;	/* why not checked */
	char	**sc_diffs;
	size_t	 sc_ndiffs;
};

#define UNITENV_INIT	{ 0 }

/*
 * Reads unit (a service name; a bare name gets ".service") under root
 * ("" for the real system, else a directory prefixed to every path) into
 * u.  pol (NULL: unprivileged) must list the service when privileged, and
 * then EnvironmentFile= is read only from files only root can change.
 * ENVCTL_EINVALID for a bad name or root, the policy's refusal,
 * ENVCTL_ETOOBIG past a bound, ENVCTL_ESYS when a unit file cannot be
 * read; a unit that is not found is not an error (u->found is 0).
 */
int	unitenv_load(struct unitenv *u, const char *root, const char *unit,
	    struct policy *pol, struct err *err);
/*
 * Compares u with what `systemctl show` reports, when systemd runs
 * (/run/systemd/system exists) and u's root is "": fills u->sc_*.  Not
 * running is not an error (sc_checked 0, sc_reason says why);
 * ENVCTL_ETIMEOUT / ENVCTL_ESYS when systemctl cannot be run.
 */
int	unitenv_systemctl(struct unitenv *u, struct err *err);
/*
 * Fills u's sc_* from text, the output of `systemctl show
 * --property=...` for u's unit (exposed for tests).  ENVCTL_EPARSE on a
 * line that is not PROPERTY=VALUE.
 */
int	unitenv_systemctl_parse(struct unitenv *u, const char *text,
	    size_t len, struct err *err);
/*
 * A new JSON object describing u (docs/worker-env.md), whose "env" holds
 * only the nnames names asked for and the ones that change how Python
 * and NCCL start (NCCL_CONF_FILE, PYTHONPATH, PYTHONHOME, ...).
 */
json_t	*unitenv_json(const struct unitenv *u, char *const *names,
	    size_t nnames);
/* The variable name in u's final environment, or NULL (borrowed). */
const struct unitenv_var *unitenv_get(const struct unitenv *u,
	    const char *name);
void	unitenv_release(struct unitenv *u);

#endif
