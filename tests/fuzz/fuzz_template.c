/*
 * fuzz_template.c - template_expand() and template_has_syntax() on
 * arbitrary playbook values, with a lookup that knows a few names; one
 * value is itself template syntax, to show values are not expanded again.
 *
 * Properties: template_has_syntax() is 1 exactly when the text holds "{{",
 * "{%" or "{#"; text without them expands to itself.  The expansion is
 * compared with the model below (the subset of template.h, written from
 * the grammar: {{ name }} and {{ name | default('...') }}, nothing else):
 * template_expand() succeeds exactly when the model does, appends the
 * model's text and calls lookup once per expression, so no value is
 * expanded twice.  On failure the code is ENVCTL_EUNDEFINED (exactly when
 * the model's first problem is an undefined name), _EUNSUPPORTED, _EPARSE
 * or _ETOOBIG, err is at the line:col of the model's offending construct,
 * and out holds what it held before.
 */
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/template.h"
#include "tests/fuzz/fuzz.h"

/* What out holds before the call. */
static const char marker[] = "before:";

static const struct {
	const char	*name;
	const char	*value;
} vars[] = {
	{ "cuda_home", "/usr/local/cuda-13.0" },
	{ "empty", "" },
	/* Expanded again, these would be /usr/local/cuda-13.0 or fail. */
	{ "braces", "{{ cuda_home }}" },
	{ "stmt", "{% if x %}{# c #}{{" },
};

/* Jinja words the subset refuses as names: literals and operators. */
static const char *const keywords[] = {
	"true", "false", "none", "True", "False", "None",
	"and", "or", "not", "in", "is", "if", "else",
};

/* The model's verdict, for the first construct that is refused. */
enum verdict {
	MODEL_OK,
	MODEL_UNDEFINED,	/* well-formed, name unknown, no default */
	MODEL_REFUSED,		/* malformed or beyond the subset */
};

static const char *
value_of(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strlen(vars[i].name) == len &&
		    memcmp(vars[i].name, name, len) == 0)
			return vars[i].value;
	return NULL;
}

static const char *
lookup(void *ctx, const char *name)
{
	(*(size_t *)ctx)++;
	return value_of(name, strlen(name));
}

static int
has_syntax(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (s[i] == '{' && (s[i + 1] == '{' || s[i + 1] == '%' ||
		    s[i + 1] == '#'))
			return 1;
	return 0;
}

static int
is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
is_name(int c, int first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	    (!first && c >= '0' && c <= '9');
}

static size_t
ws(const char *s, size_t len, size_t p)
{
	while (p < len && is_ws((unsigned char)s[p]))
		p++;
	return p;
}

/*
 * The expression whose "{{" is at s[at]: appends its value to out and sets
 * *endp past its "}}", or returns why not.
 */
static enum verdict
model_expr(const char *s, size_t len, size_t at, size_t *endp,
    struct buf *out, size_t *nexprp)
{
	struct buf def = ENVCTL_BUF_INIT;
	const char *val;
	size_t p, name, namelen, f, i;
	enum verdict v = MODEL_REFUSED;
	int has_def = 0, q;

	p = ws(s, len, at + 2);
	if (p == len || !is_name((unsigned char)s[p], 1))
		goto out;
	for (name = p; p < len && is_name((unsigned char)s[p], 0); p++)
		continue;
	namelen = p - name;
	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i]) == namelen &&
		    memcmp(keywords[i], s + name, namelen) == 0)
			goto out;
	p = ws(s, len, p);
	if (p < len && s[p] == '|') {
		p = ws(s, len, p + 1);
		for (f = p; p < len && is_name((unsigned char)s[p], 0); p++)
			continue;
		if (p - f != 7 || memcmp(s + f, "default", 7) != 0)
			goto out;
		p = ws(s, len, p);
		if (p == len || s[p] != '(')
			goto out;
		p = ws(s, len, p + 1);
		if (p == len || (s[p] != '\'' && s[p] != '"'))
			goto out;
		for (q = s[p++]; p < len && s[p] != q; p++) {
			if (s[p] == '\\' && (++p == len || (s[p] != '\\' &&
			    s[p] != '\'' && s[p] != '"')))
				goto out;
			buf_addch(&def, s[p]);
		}
		if (p == len)
			goto out;
		p = ws(s, len, p + 1);
		if (p == len || s[p] != ')')
			goto out;
		p = ws(s, len, p + 1);
		has_def = 1;
	}
	if (len - p < 2 || s[p] != '}' || s[p + 1] != '}')
		goto out;
	(*nexprp)++;
	if ((val = value_of(s + name, namelen)) != NULL)
		buf_addstr(out, val);
	else if (has_def)
		buf_add(out, def.data, def.len);
	else {
		v = MODEL_UNDEFINED;
		goto out;
	}
	*endp = p + 2;
	v = MODEL_OK;
 out:
	buf_release(&def);
	return v;
}

/*
 * The expansion of s into out and the number of expressions; on a refusal
 * *atp has the offset of the construct refused.
 */
static enum verdict
model(const char *s, size_t len, struct buf *out, size_t *nexprp,
    size_t *atp)
{
	enum verdict v;
	size_t i = 0, end;

	while (i < len) {
		if (s[i] == '{' && i + 1 < len &&
		    (s[i + 1] == '%' || s[i + 1] == '#')) {
			*atp = i;
			return MODEL_REFUSED;
		}
		if (s[i] == '{' && i + 1 < len && s[i + 1] == '{') {
			if ((v = model_expr(s, len, i, &end, out, nexprp)) !=
			    MODEL_OK) {
				*atp = i;
				return v;
			}
			i = end;
			continue;
		}
		buf_addch(out, s[i++]);
	}
	return MODEL_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct template_pos pos = { "f.yaml", 3, 5 };
	const char *s = (const char *)data;
	struct buf out, want = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	size_t ncalls = 0, nexpr = 0, at = 0, i, bol = 0;
	enum verdict v;
	int r, line = pos.line, col;

	FUZZ_ASSERT(template_has_syntax(s, size) == has_syntax(s, size));
	buf_init(&out, 1 << 20);
	buf_addstr(&out, marker);
	r = template_expand(&out, s, size, &pos, lookup, &ncalls, &err);
	v = model(s, size, &want, &nexpr, &at);
	FUZZ_ASSERT(out.len >= sizeof(marker) - 1 &&
	    memcmp(out.data, marker, sizeof(marker) - 1) == 0);
	if (!has_syntax(s, size))
		FUZZ_ASSERT(r == 0 && out.len == sizeof(marker) - 1 + size &&
		    memcmp(out.data + sizeof(marker) - 1, s, size) == 0);
	if (r == 0) {
		FUZZ_ASSERT(v == MODEL_OK && err.code == 0);
		FUZZ_ASSERT(out.len == sizeof(marker) - 1 + want.len &&
		    memcmp(out.data + sizeof(marker) - 1, want.data,
		    want.len) == 0);
		FUZZ_ASSERT(ncalls == nexpr);
	} else {
		FUZZ_ASSERT(r == ENVCTL_EUNDEFINED ||
		    r == ENVCTL_EUNSUPPORTED || r == ENVCTL_EPARSE ||
		    r == ENVCTL_ETOOBIG);
		FUZZ_ASSERT(err.code == r && out.len == sizeof(marker) - 1);
		FUZZ_ASSERT(v != MODEL_OK);
		FUZZ_ASSERT((r == ENVCTL_EUNDEFINED) ==
		    (v == MODEL_UNDEFINED));
		/* Where the construct starts, counted from pos. */
		col = pos.col + (int)at;
		for (i = 0; i < at; i++)
			if (s[i] == '\n') {
				line++;
				bol = i + 1;
			}
		if (line > pos.line)
			col = (int)(at - bol) + 1;
		FUZZ_ASSERT(err.path != NULL &&
		    strcmp(err.path, pos.path) == 0);
		FUZZ_ASSERT(err.line == line && err.col == col);
		err_release(&err);
	}
	buf_release(&out);
	buf_release(&want);
	return 0;
}
