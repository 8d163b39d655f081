/*
 * hoststate.h - what one host has: its file, its interpreter, its effect.
 *
 * hoststate_request() builds the agent's "read" request from a playbook and
 * the host's desired values (which variables to probe, which check:s to
 * run); hoststate_parse() turns the agent's hello and read replies into a
 * struct host_state, validating every field it uses.  A missing file is a
 * state (exists = 0), not an error.  The struct owns all its memory.
 */
#ifndef ENVCTL_CONTROLLER_HOSTSTATE_H
#define ENVCTL_CONTROLLER_HOSTSTATE_H

#include <jansson.h>
#include <stddef.h>

#include "common/buf.h"
#include "controller/hash.h"

struct desired;
struct err;
struct host;
struct playbook;

struct hs_value {
	char		*name;
	char		*value;		/* NULL when unset */
};

struct hs_check {
	char		*name;
	char		*kind;
	char		*path;
	int		 ok;
	char		*reason;	/* NULL when ok */
};

struct host_state {
	/* hello */
	char		*agent_version;
	char		*arch;
	char		*user;
	char		*hostname;
	/* interpreter */
	char		*interp_path;
	char		*interp_version;
	/* the managed file */
	char		*path;		/* as the interpreter sees it */
	char		*source;	/* auto, explicit, site-packages */
	char		*real;		/* after every symlink */
	char		**chain;	/* path, then each link's target */
	size_t		 nchain;
	int		 exists;
	unsigned	 mode;		/* permission bits */
	long		 uid, gid;
	char		*owner, *group;
	struct buf	 content;
	char		 sha256[ENVCTL_SHA256_HEX];	/* "" when absent */
	/* the effect, from one fresh interpreter */
	char		*imported;	/* NULL: the import failed or none */
	int		 shadowed;
	char		*startup_error;	/* "TypeError: ...", or NULL */
	char		*start_failed;	/* why start-up exited, hung or was
					   killed before the probe's report
					   (path then found with -S -I), or
					   NULL */
	char		*probe_stderr;
	struct hs_value	*values;
	size_t		 nvalues;
	struct hs_check	*checks;
	size_t		 nchecks;
};

/* Builds {"op":"read",...} for h into *out (a new reference). */
json_t	*hoststate_request(const struct playbook *pb, const struct host *h,
	    const struct desired *d, json_int_t id, int timeout_ms);
/*
 * Fills st from the agent's replies (both ok:true, already checked).
 * ENVCTL_EPARSE names the first missing or mistyped field; st then holds
 * nothing to release.
 */
int	hoststate_parse(struct host_state *st, const json_t *hello,
	    const json_t *read, struct err *err);
/* The effective value of name, or NULL when unset or not probed. */
const char *hoststate_value(const struct host_state *st, const char *name);
void	hoststate_release(struct host_state *st);

#endif
