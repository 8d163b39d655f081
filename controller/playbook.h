/*
 * playbook.h - a playbook: which file on each host, and what it must say.
 *
 * playbook_load() reads and strictly validates one playbook YAML file (an
 * unknown key is an error naming the closest valid one; every problem found
 * is reported, not only the first) and, for mode: file, its template.  The
 * result is read-only afterwards and may be shared by many host threads.
 * Values stay templates here; desired.h expands them for a host.
 */
#ifndef ENVCTL_CONTROLLER_PLAYBOOK_H
#define ENVCTL_CONTROLLER_PLAYBOOK_H

#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"
#include "controller/render.h"
#include "controller/valrules.h"

struct err;
struct host;
struct ydoc;
struct ynode;

enum playbook_mode {
	ENVCTL_MODE_BLOCK,	/* own one marked block, keep the rest */
	ENVCTL_MODE_FILE,	/* the whole file comes from the template */
};

enum playbook_check {
	ENVCTL_CHECK_NONE,
	ENVCTL_CHECK_DIR,
	ENVCTL_CHECK_FILE,
	ENVCTL_CHECK_EXECUTABLE,
	ENVCTL_CHECK_CUDA_TOOLKIT,	/* a CUDA toolkit directory */
	ENVCTL_CHECK_PTXAS,		/* a ptxas that tells its release */
};

struct playbook_env {
	char		*name;		/* environment variable */
	const struct ynode *value;	/* the value template (a scalar) */
	enum playbook_check check;
	int		 secret;	/* mask the value in every output */
	char		*comment;	/* NULL or one line */
	struct valrules_custom *rule;	/* rule:, added to the table's;
					   NULL when none */
};

struct playbook {
	char		*path;		/* as given or found */
	char		*name;		/* block marker owner; file stem default */
	char		*description;
	char		*interpreter;	/* default "python3" */
	char		**interpreters;	/* interpreters:, or NULL */
	size_t		 ninterpreters;
	char		**services;	/* services: that launch workers */
	size_t		 nservices;
	char		**processes;	/* processes: command-line patterns;
					   none: vllm, sglang,
					   torch.distributed */
	size_t		 nprocesses;
	unsigned	 facts;		/* facts: ENVCTL_GPUFACTS_* mask */
	int		 cuda_major;	/* cuda: "13", or 0 (any) */
	char		*target;	/* NULL: ask the interpreter ("auto") */
	enum playbook_mode mode;
	enum render_policy policy;
	char		*template_path;	/* mode: file */
	struct buf	 template;	/* its bytes */
	struct playbook_env *env;
	size_t		 nenv;
	const struct ynode *defaults;	/* mapping, or NULL */
	char		*backup_dir;
	int		 backup_keep;
	mode_t		 create_mode;	/* for a file envctl creates */
	char		*create_owner;
	char		*create_group;
	struct ydoc	*doc;		/* owns every ynode above */
};

#define ENVCTL_PLAYBOOK_MAX_INTERPRETERS	16
#define ENVCTL_PLAYBOOK_MAX_SERVICES	16
#define ENVCTL_PLAYBOOK_MAX_PATTERNS	64
#define ENVCTL_BACKUP_DIR	"/var/backups/envctl"
#define ENVCTL_BACKUP_KEEP	10
#define ENVCTL_TEMPLATE_MAX	(1024u * 1024)

/*
 * Loads the playbook at path into *out (caller frees with playbook_free).
 * Errors: those of ydoc_load_file, then ENVCTL_EINVALID / EUNSUPPORTED
 * chained for every problem, each with path:line:col.
 */
int	playbook_load(struct playbook **out, const char *path,
	    struct err *err);
void	playbook_free(struct playbook *pb);

/*
 * Finds a playbook by name or path: a value containing '/' or ending in
 * .yaml/.yml is a path (relative to base_dir when not absolute and base_dir
 * is not NULL); a bare name is looked up as NAME.yaml in
 * $ENVCTL_PLAYBOOK_PATH (colon-separated), then beside the running program
 * (../playbooks, for the build tree), then the installed data directory.
 * Returns a new string in *out; ENVCTL_ENOTFOUND lists where it looked.
 */
int	playbook_find(char **out, const char *name, const char *base_dir,
	    struct err *err);

/*
 * The interpreters whose sitecustomize h's workers import, in order:
 * the inventory's (envctl_interpreters, ansible_python_interpreter), else
 * the playbook's (interpreters:, interpreter:).  Sets *n (>= 1); the
 * strings are borrowed from h and pb.
 */
const char *const *playbook_interpreters(const struct playbook *pb,
	    const struct host *h, size_t *n);

/* "dir", "file", "executable", "cuda-toolkit", "ptxas" or "none". */
const char *playbook_check_name(enum playbook_check c);

#endif
