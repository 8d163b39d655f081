/* template.c - the {{ var }} subset of Jinja (see template.h). */
#include "controller/template.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define SUPPORTED \
	"only {{ name }} and {{ name | default('value') }} are supported"

/* Longest piece of template quoted in a message. */
#define SNIPPET_MAX	60

struct tpl {
	const char			*text;
	size_t				 len;
	const struct template_pos	*pos;
	struct err			*err;
};

/* Jinja words that are not variables: literals and operators. */
static const char *const keywords[] = {
	"true", "false", "none", "True", "False", "None",
	"and", "or", "not", "in", "is", "if", "else",
};

static int
is_namestart(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int
is_namechar(int c)
{
	return is_namestart(c) || (c >= '0' && c <= '9');
}

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The byte at p, or -1 past the end. */
static int
peek(const struct tpl *t, size_t p)
{
	return p < t->len ? (unsigned char)t->text[p] : -1;
}

static size_t
skip_space(const struct tpl *t, size_t p)
{
	while (p < t->len && is_space((unsigned char)t->text[p]))
		p++;
	return p;
}

/* Offset of the first "ab" at or after p, or len when there is none. */
static size_t
find2(const struct tpl *t, size_t p, char a, char b)
{
	for (; p + 1 < t->len; p++)
		if (t->text[p] == a && t->text[p + 1] == b)
			return p;
	return t->len;
}

/*
 * Appends the construct starting at "at" for a message: up to its closing
 * delimiter (when on the same line), shortened, controls shown as '?'.
 */
static void
snippet(const struct tpl *t, size_t at, char close, struct buf *b)
{
	size_t end, i;
	int cut = 0;

	end = find2(t, at + 2, close, '}');
	end = end < t->len ? end + 2 : t->len;
	for (i = at; i < end; i++) {
		if (t->text[i] == '\n' || t->text[i] == '\r')
			break;
		if (i - at >= SNIPPET_MAX) {
			cut = 1;
			break;
		}
	}
	if (i < end)
		cut = 1;
	end = i;
	for (i = at; i < end; i++) {
		unsigned char c = (unsigned char)t->text[i];

		buf_addch(b, c < 0x20 || c == 0x7f ? '?' : c);
	}
	if (cut)
		buf_addstr(b, "...");
}

/*
 * Records an error about the construct starting at offset "at", positioned
 * by counting lines and bytes from t->pos; returns code.
 */
static int
fail(const struct tpl *t, int code, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
fail(const struct tpl *t, int code, size_t at, const char *fmt, ...)
{
	const struct template_pos *pos = t->pos;
	int line = pos != NULL ? pos->line : 1;
	int col = pos != NULL ? pos->col : 1;
	size_t i, bol = 0;
	int nl = 0;
	va_list ap;
	char *msg;

	for (i = 0; i < at; i++)
		if (t->text[i] == '\n') {
			nl++;
			bol = i + 1;
		}
	if (nl > 0) {
		line += nl;
		col = (int)(at - bol) + 1;
	} else
		col += (int)at;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	err_setat(t->err, code, pos != NULL ? pos->path : NULL, line, col,
	    "%s", msg);
	free(msg);
	return code;
}

/* Refuses the construct at "at" as beyond the subset; why may be NULL. */
static int
unsupported(const struct tpl *t, size_t at, char close, const char *why)
{
	struct buf s = ENVCTL_BUF_INIT;
	int r;

	snippet(t, at, close, &s);
	r = fail(t, ENVCTL_EUNSUPPORTED, at,
	    "unsupported template syntax '%s'%s%s%s: " SUPPORTED, s.data,
	    why != NULL ? " (" : "", why != NULL ? why : "",
	    why != NULL ? ")" : "");
	buf_release(&s);
	return r;
}

static int
unterminated(const struct tpl *t, size_t at)
{
	return fail(t, ENVCTL_EPARSE, at,
	    "unterminated '{{': no closing '}}' (" SUPPORTED ")");
}

/* Describes what follows a name where "}}" or "|" was expected. */
static const char *
describe(int c)
{
	switch (c) {
	case '.':
		return "attribute access";
	case '[':
		return "index access";
	case '(':
		return "function call";
	case '|':
		return "filter";
	}
	if (is_namestart(c) || (c >= '0' && c <= '9'))
		return "expected '}}' after the variable name";
	return "operators and expressions";
}

/*
 * Parses the quoted default value at *pp (on its opening quote) into def
 * and moves *pp past the closing quote.
 */
static int
parse_string(const struct tpl *t, size_t at, size_t *pp, struct buf *def)
{
	size_t p = *pp;
	int q = peek(t, p), c;
	char why[64];

	for (p++; (c = peek(t, p)) != q; p++) {
		if (c == -1)
			return unterminated(t, at);
		if (c == '\\') {
			c = peek(t, ++p);
			if (c == -1)
				return unterminated(t, at);
			if (c != '\\' && c != '\'' && c != '"') {
				snprintf(why, sizeof(why), "escape '\\%c' in "
				    "a default value; only \\\\, \\' and \\\" "
				    "are", c >= 0x20 && c < 0x7f ? c : '?');
				return unsupported(t, at, '}', why);
			}
		}
		buf_addch(def, c);
	}
	*pp = p + 1;
	return 0;
}

/*
 * Expands the expression whose "{{" is at "at"; *endp gets the offset just
 * past its "}}".
 */
static int
expand_one(const struct tpl *t, size_t at, size_t *endp, struct buf *out,
    const char *(*lookup)(void *, const char *), void *ctx)
{
	struct buf def = ENVCTL_BUF_INIT;
	const char *val;
	char *name = NULL, *fname = NULL, why[64];
	size_t p, n, i;
	int has_def = 0, r = 0, c;

	if (find2(t, at + 2, '}', '}') == t->len) {
		r = unterminated(t, at);
		goto out;
	}
	c = peek(t, at + 2);
	if (c == '-' || c == '+') {
		r = unsupported(t, at, '}', "whitespace control");
		goto out;
	}
	p = skip_space(t, at + 2);
	if (peek(t, p) == '}' && peek(t, p + 1) == '}') {
		r = fail(t, ENVCTL_EPARSE, at, "empty expression '{{ }}': "
		    "expected a variable name");
		goto out;
	}
	if (!is_namestart(peek(t, p))) {
		r = unsupported(t, at, '}', "expected a variable name");
		goto out;
	}
	for (n = p; is_namechar(peek(t, n)); n++)
		;
	name = xstrndup(t->text + p, n - p);
	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strcmp(name, keywords[i]) == 0) {
			snprintf(why, sizeof(why), "'%s' is a Jinja keyword",
			    name);
			r = unsupported(t, at, '}', why);
			goto out;
		}
	p = skip_space(t, n);
	if (peek(t, p) == '|') {
		p = skip_space(t, p + 1);
		for (n = p; is_namechar(peek(t, n)); n++)
			;
		fname = xstrndup(t->text + p, n - p);
		if (*fname == '\0') {
			r = fail(t, ENVCTL_EPARSE, at,
			    "expected a filter name after '|' (" SUPPORTED ")");
			goto out;
		}
		if (strcmp(fname, "default") != 0) {
			snprintf(why, sizeof(why), "filter '%.32s'", fname);
			r = unsupported(t, at, '}', why);
			goto out;
		}
		p = skip_space(t, n);
		if (peek(t, p) != '(') {
			r = unsupported(t, at, '}',
			    "default needs a quoted value in parentheses");
			goto out;
		}
		p = skip_space(t, p + 1);
		if (peek(t, p) != '\'' && peek(t, p) != '"') {
			r = unsupported(t, at, '}',
			    "the default value must be a quoted string");
			goto out;
		}
		if ((r = parse_string(t, at, &p, &def)) != 0)
			goto out;
		p = skip_space(t, p);
		if (peek(t, p) != ')') {
			r = unsupported(t, at, '}', peek(t, p) == ',' ?
			    "default takes one argument here" :
			    "expected ')' after the default value");
			goto out;
		}
		p = skip_space(t, p + 1);
		has_def = 1;
		if (peek(t, p) == '|') {
			r = unsupported(t, at, '}', "chained filters");
			goto out;
		}
	}
	if (peek(t, p) == -1) {
		r = unterminated(t, at);
		goto out;
	}
	if (peek(t, p) != '}' || peek(t, p + 1) != '}') {
		r = unsupported(t, at, '}', describe(peek(t, p)));
		goto out;
	}
	*endp = p + 2;
	if ((val = lookup(ctx, name)) != NULL)
		r = buf_addstr(out, val);
	else if (has_def)
		r = buf_add(out, def.data, def.len);
	else {
		r = fail(t, ENVCTL_EUNDEFINED, at, "undefined variable '%s'",
		    name);
		goto out;
	}
	if (r != 0)
		r = fail(t, ENVCTL_ETOOBIG, at, "expanded value exceeds the "
		    "%zu-byte limit", out->cap);
 out:
	free(name);
	free(fname);
	buf_release(&def);
	return r;
}

int
template_expand(struct buf *out, const char *text, size_t len,
    const struct template_pos *pos,
    const char *(*lookup)(void *ctx, const char *name), void *ctx,
    struct err *err)
{
	struct tpl t = { text, len, pos, err };
	size_t start = out->len, i = 0, next = 0;
	const char *brace;
	int r = 0;

	while (i < len) {
		if (text[i] == '{' && i + 1 < len) {
			switch (text[i + 1]) {
			case '{':
				if ((r = expand_one(&t, i, &next, out, lookup,
				    ctx)) != 0)
					goto out;
				i = next;
				continue;
			case '%':
				r = unsupported(&t, i, '%', "statement");
				goto out;
			case '#':
				r = unsupported(&t, i, '#', "comment");
				goto out;
			}
		}
		brace = memchr(text + i + 1, '{', len - i - 1);
		next = brace != NULL ? (size_t)(brace - text) : len;
		if ((r = buf_add(out, text + i, next - i)) != 0) {
			r = fail(&t, ENVCTL_ETOOBIG, i, "expanded text exceeds "
			    "the %zu-byte limit", out->cap);
			goto out;
		}
		i = next;
	}
 out:
	if (r != 0)
		buf_truncate(out, start);
	return r;
}

size_t
template_find_syntax(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (text[i] == '{' && (text[i + 1] == '{' ||
		    text[i + 1] == '%' || text[i + 1] == '#'))
			return i;
	return len;
}

int
template_has_syntax(const char *text, size_t len)
{
	return template_find_syntax(text, len) < len;
}
