/* pylit.c - Python 3 string literals and identifiers (see pylit.h). */
#include "controller/pylit.h"

#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"

int
pylit_utf8_valid(const char *s, size_t len, size_t *offp)
{
	const char *why;
	uint32_t cp;
	size_t off, n;

	for (off = 0; off < len; off += n) {
		if ((n = str_utf8_decode(s + off, len - off, &cp, &why)) == 0) {
			if (offp != NULL)
				*offp = off;
			return 0;
		}
	}
	return 1;
}

/* Appends the escaped form of one code point; buf's error code. */
static int
emit(struct buf *out, uint32_t cp)
{
	switch (cp) {
	case '\\':
		return buf_add(out, "\\\\", 2);
	case '"':
		return buf_add(out, "\\\"", 2);
	case '\n':
		return buf_add(out, "\\n", 2);
	case '\r':
		return buf_add(out, "\\r", 2);
	case '\t':
		return buf_add(out, "\\t", 2);
	}
	if (cp >= 0x20 && cp < 0x7f)
		return buf_addch(out, (int)cp);
	if (cp <= 0xff)
		return buf_addf(out, "\\x%02x", (unsigned)cp);
	if (cp <= 0xffff)
		return buf_addf(out, "\\u%04x", (unsigned)cp);
	return buf_addf(out, "\\U%08x", (unsigned)cp);
}

int
pylit_quote(struct buf *out, const char *s, size_t len, struct err *err)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = out->len, off, n;
	const char *why = NULL;
	uint32_t cp;
	int r;

	r = buf_addch(out, '"');
	for (off = 0; r == 0 && off < len; off += n) {
		if (u[off] == '\0') {
			r = err_set(err, ENVCTL_EINVALID, "value contains a "
			    "NUL byte (environment variables cannot hold "
			    "one)");
			goto out;
		}
		if ((n = str_utf8_decode(s + off, len - off, &cp, &why)) == 0) {
			r = err_set(err, ENVCTL_EINVALID, "value is not valid "
			    "UTF-8: byte 0x%02x at byte offset %zu (%s)",
			    u[off], off, why);
			goto out;
		}
		r = emit(out, cp);
	}
	if (r == 0)
		r = buf_addch(out, '"');
	if (r != 0)
		r = err_set(err, ENVCTL_ETOOBIG,
		    "quoted value exceeds the %zu-byte limit", out->cap);
 out:
	if (r != 0)
		buf_truncate(out, start);
	return r;
}

int
pylit_is_identifier(const char *name)
{
	const char *p;

	if (name == NULL || !((*name >= 'A' && *name <= 'Z') ||
	    (*name >= 'a' && *name <= 'z') || *name == '_'))
		return 0;
	for (p = name + 1; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}
