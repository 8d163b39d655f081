/*
 * template.h - the {{ var }} subset of Jinja used in playbook values.
 *
 * Supported: {{ name }} and {{ name | default('value') }}; every other Jinja
 * construct is refused rather than misread.  Substituted values are copied
 * as they are, never expanded again.  Errors carry path:line:col of the
 * offending "{{" (or "{%", "{#"); on error out is left as it was.  No state;
 * thread-safe when lookup is.
 */
#ifndef ENVCTL_CONTROLLER_TEMPLATE_H
#define ENVCTL_CONTROLLER_TEMPLATE_H

#include <stddef.h>

struct buf;
struct err;

/* Where a template's text starts in its file: 1-based line and column. */
struct template_pos {
	const char	*path;
	int		 line;
	int		 col;
};

/*
 * Appends text with each {{ }} expanded; lookup returns a value (borrowed) or
 * NULL if undefined; pos may be NULL (1:1).  ENVCTL_EUNDEFINED, _EUNSUPPORTED
 * beyond the subset, _EPARSE malformed or unterminated, _ETOOBIG past cap.
 */
int	template_expand(struct buf *out, const char *text, size_t len,
	    const struct template_pos *pos,
	    const char *(*lookup)(void *ctx, const char *name), void *ctx,
	    struct err *err);
/* Offset of the first "{{", "{%" or "{#" in text, or len. */
size_t	template_find_syntax(const char *text, size_t len);
/* Returns 1 when text contains "{{", "{%" or "{#", else 0. */
int	template_has_syntax(const char *text, size_t len);

#endif
