/*
 * hoststate.h - what one host has: its file, its interpreter, its effect.
 *
 * hoststate_request() builds the agent's "read" request for one interpreter
 * from a playbook and the host's desired values (which variables to probe,
 * which check:s to run); hoststate_parse() turns the agent's hello and the
 * read replies of every interpreter that imports one file into a struct
 * host_state, validating every field it uses.  A missing file is a state
 * (exists = 0), not an error.  The struct owns all its memory.
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
	char		*reason;	/* why it failed; NULL when ok, but
					   for cuda-toolkit / ptxas why the
					   driver was not checked */
	char		*version;	/* cuda-toolkit, ptxas: "13.0" */
	char		*driver_cuda;	/* the driver's CUDA, or NULL */
};

/* A further interpreter that imports the same file, and its effect. */
struct hs_interp {
	char		*path;
	char		*version;
	char		*imported;
	int		 shadowed;
	char		*startup_error;
	char		*start_failed;
	char		*probe_stderr;
	struct hs_value	*values;
	size_t		 nvalues;
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
	long long	 mtime;		/* 0 when unknown */
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
	/*
	 * The fields above hold the first interpreter's effect; also[] those
	 * of the others that import this same file, in the order listed.
	 */
	struct hs_interp *also;
	size_t		 nalso;
};

/* {"op":"read",...} of interp on h (a new reference). */
json_t	*hoststate_request(const struct playbook *pb, const char *interp,
	    const struct desired *d, json_int_t id, int timeout_ms);
/*
 * Fills st from the agent's hello and the n >= 1 read replies (all
 * ok:true, already checked) of interpreters that import one file: the
 * file, the checks and the first effect from reads[0].  ENVCTL_EPARSE
 * names the first missing or mistyped field; st then holds nothing to
 * release.
 */
int	hoststate_parse(struct host_state *st, const json_t *hello,
	    const json_t *const *reads, size_t n, struct err *err);
/* The real path of the file a read reply names, or NULL (borrowed). */
const char *hoststate_read_real(const json_t *read);
/*
 * The effective value of name in interpreter i (0: the first, then
 * also[i - 1]), or NULL when unset or not probed.
 */
const char *hoststate_value(const struct host_state *st, const char *name);
const char *hoststate_value_in(const struct host_state *st, size_t i,
	    const char *name);
/* 1 + nalso. */
size_t	hoststate_ninterps(const struct host_state *st);
/* Interpreter i's path, start-up error and start failure (borrowed). */
const char *hoststate_interp(const struct host_state *st, size_t i);
const char *hoststate_startup_error(const struct host_state *st, size_t i);
const char *hoststate_start_failed(const struct host_state *st, size_t i);
void	hoststate_release(struct host_state *st);

#endif
