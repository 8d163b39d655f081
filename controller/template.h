/*
 * template.h - the subset of Jinja that inventories use, as Ansible 2.14
 * evaluates it.
 *
 * Expressions: names, string / integer / True False None literals, a.k,
 * a['k'], a[0], a[-1], (e), ~, and the filters default (d), lower, upper,
 * trim, replace, int, string, join, first, last; everything else (statements,
 * tests, other operators and filters, calls, whitespace control) is refused
 * by name, never guessed.  Values are ynodes; a string value holding {{ }}
 * is expanded when it is used, in the scope it came from, as Ansible's
 * templar does (its single-variable shortcut, its literal_eval of results
 * that look like lists, dicts or booleans).  default() applies only to an
 * undefined value, never to one that failed.  Errors carry path:line:col.
 * No global state; thread-safe when the ops are.
 */
#ifndef ENVCTL_CONTROLLER_TEMPLATE_H
#define ENVCTL_CONTROLLER_TEMPLATE_H

#include <stddef.h>

struct buf;
struct err;
struct ydoc;
struct ynode;

/* Where a template's text starts in its file: 1-based line and column. */
struct template_pos {
	const char	*path;
	int		 line;
	int		 col;
};

enum template_kind {
	ENVCTL_TVAL_UNDEFINED,
	ENVCTL_TVAL_NODE,
	ENVCTL_TVAL_OPAQUE,	/* hostvars, groups: only subscripted */
};

/* What a lookup yields. */
struct template_val {
	enum template_kind kind;
	const struct ynode *node;	/* NODE: as stored, not yet expanded */
	const void	*scope;		/* NODE: where its templates expand */
	/*
	 * NODE reached through hostvars, where Ansible keeps a template
	 * whose variables are undefined as its text: refused instead.
	 */
	int		 keep_raw;
	const void	*opaque;	/* OPAQUE: the handle getitem takes */
};

/*
 * How names resolve.  lookup: the variable name in scope; getitem:
 * opaque[key].  Each returns 0 with *out set (kind UNDEFINED when there
 * is no such variable or key) or an ENVCTL_E* code with err filled.  Nodes
 * they build (lists of names) go in doc, which lives as long as the
 * expansion.
 */
struct template_ops {
	int	(*lookup)(void *ctx, const void *scope, const char *name,
		    struct ydoc *doc, struct template_val *out,
		    struct err *err);
	int	(*getitem)(void *ctx, const void *opaque, const char *key,
		    struct ydoc *doc, struct template_val *out,
		    struct err *err);
};

/*
 * Appends the environment value text (len bytes) makes in scope: each
 * {{ }} expanded.  A list or mapping cannot be an environment value, nor
 * a value that is only "{{ x }}" with x null (Ansible's value is None).
 * pos may be NULL (1:1).  ENVCTL_EUNDEFINED, _EUNSUPPORTED beyond the
 * subset or for a value envctl cannot use, _EINVALID (self-reference,
 * type errors Ansible raises), _EPARSE malformed, _ETOOBIG past out's
 * cap; an error in a variable's own template is positioned there and
 * says where it was used.  On error out is left as it was.
 */
int	template_expand(struct buf *out, const char *text, size_t len,
	    const struct template_pos *pos, const struct template_ops *ops,
	    void *ctx, const void *scope, struct err *err);
/* Offset of the first "{{", "{%" or "{#" in text, or len. */
size_t	template_find_syntax(const char *text, size_t len);
/* Returns 1 when text contains "{{", "{%" or "{#", else 0. */
int	template_has_syntax(const char *text, size_t len);

#endif
