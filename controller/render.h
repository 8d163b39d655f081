/*
 * render.h - builds the content of a host's sitecustomize.py.
 *
 * render_env_code() turns variables into Python that sets them; values go
 * through pylit_quote() and are never pasted into code.  render_file() and
 * render_block() place that code into a template or into one owned, marked
 * block of the current file, keeping every other byte.  LF is the internal
 * line ending.  Functions append to out; on error (ENVCTL_ETOOBIG past its
 * cap included) out is left as it was.  Block owners are playbook names:
 * letters, digits and ._+@- only.  No state; thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_RENDER_H
#define ENVCTL_CONTROLLER_RENDER_H

#include <stddef.h>

struct buf;
struct err;

struct render_var {
	const char	*name;
	const char	*value;		/* UTF-8 */
	const char	*comment;	/* NULL or one line */
};

enum render_policy {
	ENVCTL_POLICY_SETDEFAULT,	/* a value already set wins */
	ENVCTL_POLICY_OVERRIDE,
};

/* The lines that delimit the block owned by a playbook, before its name. */
#define ENVCTL_BLOCK_BEGIN	"# BEGIN envctl managed block: "
#define ENVCTL_BLOCK_END	"# END envctl managed block: "

/*
 * Appends LF-ended Python setting the n vars in order under policy.
 * ENVCTL_EINVALID: bad or duplicate name, value not UTF-8, comment not one
 * printable UTF-8 line.
 */
int	render_env_code(struct buf *out, const struct render_var *vars,
	    size_t n, enum render_policy policy, struct err *err);
/*
 * Mode "file": tmpl with its "{{ envctl_env }}" line replaced by envcode,
 * indented alike; CRLF if tmpl's first line is.  ENVCTL_EINVALID for zero or
 * several such lines, ENVCTL_EUNSUPPORTED at path:line:col for other syntax.
 */
int	render_file(struct buf *out, const char *tmpl, size_t len,
	    const char *tmpl_path, const char *envcode, size_t envlen,
	    struct err *err);
/*
 * Mode "block": cur with owner's BEGIN/body/END block replaced, or appended
 * after a blank line; CRLF if cur's first line is.  ENVCTL_EPARSE at
 * cur_path:line for markers; ENVCTL_EINVALID for owner or body.
 */
int	render_block(struct buf *out, const char *cur, size_t curlen,
	    const char *cur_path, const char *owner, const char *body,
	    size_t bodylen, struct err *err);
/*
 * Returns 1 and owner's block as [*begin, *end) (BEGIN line start to past
 * the END line), 0 when absent, or render_block's negative codes.
 */
int	render_find_block(const char *cur, size_t curlen, const char *cur_path,
	    const char *owner, size_t *begin, size_t *end, struct err *err);

#endif
