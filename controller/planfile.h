/*
 * planfile.h - the plan saved by `envctl plan -o FILE`, written and read.
 *
 * A JSON document (format 1) holding the inventory's and the playbook's
 * SHA-256, and per host: the address, the resolved target, the exact bytes
 * read (or that the file was absent) with their SHA-256, mode and owner,
 * and the exact bytes apply is to write.  It may hold secret values, so it
 * is written atomically with mode 0600 and wiped when released.  A plan is
 * trusted for nothing: the reader checks every field and digest, and
 * apply re-renders each host and compares (planfile_verify_host()) and
 * compares the target with the host's own read (planfile_check_read()).
 * jansson's errors are mapped here only.  Schema: docs/internals.md.
 */
#ifndef ENVCTL_CONTROLLER_PLANFILE_H
#define ENVCTL_CONTROLLER_PLANFILE_H

#include <stddef.h>

#include "common/buf.h"
#include "controller/hash.h"
#include "controller/plan.h"

struct desired;
struct err;
struct host;
struct host_plan;
struct host_state;
struct inventory;
struct playbook;

#define ENVCTL_PLANFILE_FORMAT	1
#define ENVCTL_PLANFILE_KIND	"envctl-plan"

/* One host of a plan; the fields after outcome only when it is pending. */
struct planfile_host {
	char		*name;
	enum outcome	 outcome;	/* ok, pending, failed, unreachable */
	char		*target;	/* the file the interpreter imports */
	char		**interpreters;	/* those that import it; none in
					   older plans: the inventory's */
	size_t		 ninterpreters;
	char		*real;		/* after every symlink */
	int		 cur_exists;
	struct buf	 cur;		/* bytes read; empty when absent */
	char		 cur_sha256[ENVCTL_SHA256_HEX];	/* "" when absent */
	struct buf	 want;		/* bytes to install */
	char		 want_sha256[ENVCTL_SHA256_HEX];
};

struct planfile {
	char		*inventory_path;
	char		*inventory_sha256;
	char		*playbook_path;
	char		*playbook_sha256;
	struct planfile_host *hosts;	/* in plan order */
	size_t		 nhosts;
};

/* SHA-256 of the playbook file followed by its template. */
int	planfile_playbook_digest(char *hex, const struct playbook *pb,
	    struct err *err);
/*
 * Writes the plan of the n hosts in hps to path, with inventory_digest()
 * of inv: apply refuses the plan when the inventory reads differently.
 */
int	planfile_write(const char *path, const struct inventory *inv,
	    const struct playbook *pb, struct host_plan *const *hps, size_t n,
	    struct err *err);
/*
 * Decides from its content whether text (named label in messages) is a
 * plan file and reads it into pf (zeroed by the caller).  *is_plan is 0,
 * and 0 returned with pf empty, for text that is no plan (an inventory,
 * JSON ones included); else 1.  A plan that does not parse or lacks a
 * field is ENVCTL_EPARSE ("label:12:5: not a valid plan file: ..."), one
 * whose data does not match its recorded SHA-256 ENVCTL_EINVALID, a
 * format other than 1 ENVCTL_EUNSUPPORTED.  Release pf in every case.
 */
int	planfile_parse(struct planfile *pf, int *is_plan, const char *label,
	    const char *text, size_t len, struct err *err);
/*
 * planfile_parse() of the file at path.  A file that cannot be read is no
 * plan (*is_plan 0, returns 0): the inventory reader reports it.
 */
int	planfile_read(struct planfile *pf, int *is_plan, const char *path,
	    struct err *err);
/*
 * ENVCTL_ECHANGED when inv or pb (as loaded today from the plan's paths)
 * do not have the digests the plan recorded.
 */
int	planfile_check_inputs(const struct planfile *pf,
	    const struct inventory *inv, const struct playbook *pb,
	    struct err *err);
/*
 * Renders host h's desired file into d (zeroed by the caller; release it
 * in every case) from today's inventory and playbook, with the plan's
 * recorded current file, as plan did.  ENVCTL_EINVALID when the bytes
 * differ from those the plan would install; render errors as they are.
 */
int	planfile_verify_host(struct desired *d, const struct planfile_host *ph,
	    const struct playbook *pb, const struct host *h, struct err *err);
/*
 * Compares the host's read at apply time with the plan: ENVCTL_EINVALID
 * when st's path is not the plan's target (a plan cannot redirect the
 * write), ENVCTL_ECHANGED when the path now leads to another real file.
 * The bytes are compared and swapped by the agent, under its lock.
 */
int	planfile_check_read(const struct planfile_host *ph,
	    const struct host_state *st, struct err *err);
/* Frees pf's memory, wiping the file contents; pf is left zeroed. */
void	planfile_release(struct planfile *pf);

#endif
