/*
 * valrules.h - the values NCCL and Triton really accept, checked offline.
 *
 * A read-only table of rules, one row per variable and version range, each
 * naming its source in NVIDIA/nccl or triton-lang/triton, plus the rules a
 * playbook adds with rule:.  valrules_check() judges one value: errors (the
 * library refuses it, or ignores it while it looks set) and warnings (it is
 * read otherwise than it reads), one line each, naming the variable.  No
 * I/O, no global state; thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_VALRULES_H
#define ENVCTL_CONTROLLER_VALRULES_H

#include <regex.h>
#include <stddef.h>

struct err;

/* A version as one number: 2.24.3 is 22403; 0 is "unknown". */
#define ENVCTL_VERNUM(maj, min, patch)				\
	((unsigned)(maj) * 10000u + (unsigned)(min) * 100u + (unsigned)(patch))
/*
 * The NCCL versions the CUDA 13 stacks in the field load (2.27 to 2.29;
 * 2.27.3 is the first 2.27 release): an unknown version is judged by every
 * rule that applies to one of them.
 */
#define ENVCTL_NCCL_FIELD_MIN	ENVCTL_VERNUM(2, 27, 3)
#define ENVCTL_NCCL_FIELD_END	ENVCTL_VERNUM(2, 30, 0)

#define ENVCTL_VALRULES_MAX_FINDINGS	16	/* per value */
#define ENVCTL_VALRULES_MAX_ALLOWED	256	/* rule: allowed: entries */
#define ENVCTL_VALRULES_MAX_PATTERN	1024	/* rule: pattern: bytes */

enum valrules_severity {
	ENVCTL_VALRULE_WARNING,
	ENVCTL_VALRULE_ERROR,
};

enum valrule_kind {
	ENVCTL_VALRULE_LIST_DROP,	/* parseList <= 2.23: unknown dropped */
	ENVCTL_VALRULE_LIST_STRICT,	/* parseList >= 2.24.3: prefixes */
	ENVCTL_VALRULE_LEVEL,		/* ncclGetLevel: names or 0-5 */
	ENVCTL_VALRULE_BUFFSIZE,	/* ncclLoadParam, used unchecked */
	ENVCTL_VALRULE_NTHREADS,	/* getNthreads: replaced */
	ENVCTL_VALRULE_NCHANNELS,	/* ncclMaxNchannels: capped */
	ENVCTL_VALRULE_REMOVED,		/* no longer read at all */
	ENVCTL_VALRULE_PTXAS,		/* Triton's ptxas for sm >= 100 */
};

enum valrule_product {
	ENVCTL_PRODUCT_NCCL,
	ENVCTL_PRODUCT_TRITON,
};

/* One row of the table. */
struct valrule {
	const char	*name;		/* the variable */
	enum valrule_kind kind;
	enum valrule_product product;	/* whose versions since/until are */
	unsigned	 since;		/* first version it applies to */
	unsigned	 until;		/* first it does not; 0: still does */
	enum valrules_severity severity; /* of a value it refuses */
	const char	*source;	/* repository file, function, tag */
	const char *const *words;	/* LIST, LEVEL: accepted names */
	const char	*noun;		/* LIST: "a protocol" */
	long long	 limit;		/* NTHREADS: max; NCHANNELS: cap */
	const char	*note;		/* REMOVED, PTXAS: what to do */
};

/* What is known of the host; every field may be 0 (unknown). */
struct valrules_ctx {
	unsigned	 nccl_version;	/* 0: every version in the field */
	unsigned	 triton_version;	/* 0: any */
	int		 gpu_sm;	/* compute capability x 10 (120); 0:
					   unknown, and the ptxas rule waits */
};

enum valrules_custom_kind {
	ENVCTL_VALRULE_ALLOWED,		/* one of a set of words */
	ENVCTL_VALRULE_RANGE,		/* a decimal integer in [min, max] */
	ENVCTL_VALRULE_PATTERN,		/* the whole value matches an ERE */
};

/*
 * A playbook's rule: for one variable, added to the table's.  The loader
 * fills it and compiles a pattern with valrules_custom_compile(); release
 * it with valrules_custom_release().
 */
struct valrules_custom {
	enum valrules_custom_kind kind;
	enum valrules_severity severity;
	char		*where;		/* "file:line:col" of the rule */
	char		**allowed;	/* ALLOWED */
	size_t		 nallowed;
	int		 icase;		/* ALLOWED, PATTERN: ignore case */
	long long	 min, max;	/* RANGE: inclusive */
	int		 has_min, has_max;
	char		*pattern;	/* PATTERN: as written */
	regex_t		 re;
	int		 compiled;
};

/* One value to judge. */
struct valrules_value {
	const char	*name;
	const char	*value;		/* NUL-terminated */
	int		 secret;	/* never quoted in a message */
	const struct valrules_custom *custom;	/* NULL: the table only */
};

struct valrules_finding {
	enum valrules_severity severity;
	char		*msg;		/* "NCCL_PROTO: 'LL129' is not ..." */
	const struct valrule *rule;	/* NULL for a playbook rule */
};

struct valrules_result {
	struct valrules_finding *items;
	size_t		 n, alloc;
	size_t		 nerrors;
};

#define ENVCTL_VALRULES_RESULT_INIT	{ NULL, 0, 0, 0 }

/*
 * Judges v with every rule that applies under c, appending findings to
 * res (at most ENVCTL_VALRULES_MAX_FINDINGS per call).  Returns 0, or
 * ENVCTL_EINVALID with each error message chained into err (no position:
 * the caller adds where the value comes from).
 */
int	valrules_check(struct valrules_result *res,
	    const struct valrules_ctx *c, const struct valrules_value *v,
	    struct err *err);
void	valrules_result_release(struct valrules_result *res);

/*
 * Compiles cr->pattern (POSIX extended, cr->icase) into cr->re.
 * ENVCTL_EINVALID with regerror()'s text, ENVCTL_ETOOBIG past
 * ENVCTL_VALRULES_MAX_PATTERN.
 */
int	valrules_custom_compile(struct valrules_custom *cr, struct err *err);
void	valrules_custom_release(struct valrules_custom *cr);

/* The table, in documentation order; *n gets its length. */
const struct valrule *valrules_table(size_t *n);
/* 1 when rule r applies to the version (or field) described by c. */
int	valrules_applies(const struct valrule *r,
	    const struct valrules_ctx *c);
/*
 * Reads "N.N" or "N.N.N" (a trailing "-1" or "+cuda" is ignored) into
 * *out; ENVCTL_EINVALID otherwise.
 */
int	valrules_parse_version(unsigned *out, const char *s, struct err *err);

#endif
