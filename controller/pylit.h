/*
 * pylit.h - Python 3 string literals and identifiers for generated code.
 *
 * Every value envctl writes into a sitecustomize.py goes through
 * pylit_quote(): the literal is pure printable ASCII and evaluates to exactly
 * the given UTF-8 text, so no value can end the string or inject code.  On
 * error the output buffer is left as it was and err says why.  Pure
 * functions, no state; thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_PYLIT_H
#define ENVCTL_CONTROLLER_PYLIT_H

#include <stddef.h>

struct buf;
struct err;

/*
 * Appends a double-quoted Python 3 literal for the UTF-8 text s (len bytes).
 * ENVCTL_EINVALID for a NUL byte or invalid UTF-8 (message names the byte
 * offset), ENVCTL_ETOOBIG when out's cap is reached.
 */
int	pylit_quote(struct buf *out, const char *s, size_t len,
	    struct err *err);
/* Returns 1 when name matches [A-Za-z_][A-Za-z0-9_]*, else 0. */
int	pylit_is_identifier(const char *name);
/*
 * Returns 1 when s is valid UTF-8 (no overlongs, surrogates or code points
 * past U+10FFFF; NUL allowed), else 0 with the first bad offset in *offp.
 */
int	pylit_utf8_valid(const char *s, size_t len, size_t *offp);

#endif
