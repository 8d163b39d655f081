/*
 * fuzz_template.c - template_expand() and template_has_syntax() on
 * arbitrary playbook values, over variables that are themselves templates
 * (nested, self-referring, unusable), with a hostvars-like opaque.
 *
 * Properties: template_has_syntax() is 1 exactly when the text holds "{{",
 * "{%" or "{#"; text without them expands to itself.  For text whose only
 * constructs are "{{ name }}" with plain string variables (the model
 * below), the expansion is the model's.  Any other expansion succeeds or
 * fails with a code template.h names, the same way twice; on failure err
 * carries that code, a path (the value's or a variable's file) with a
 * line and column, one printable line per error, and out holds what it
 * held before.
 */
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/template.h"
#include "controller/yamldoc.h"
#include "tests/fuzz/fuzz.h"

/* What out holds before the call. */
static const char marker[] = "before:";

static const char vars_yaml[] =
    "cuda_home: /usr/local/cuda-13.0\n"
    "empty: \"\"\n"
    "n: 42\n"
    "nul: ~\n"
    "lst: [a, 1, {k: v}]\n"
    "mp: {k: v, n: 5}\n"
    "braces: \"{{ cuda_home }}/bin\"\n"
    "self: \"{{ self }}\"\n"
    "undef: \"{{ nope }}\"\n"
    "bad: \"{{ x | regex_replace('a') }}\"\n"
    "listy: \"{{ '[1, 2]' }}\"\n"
    "unsafe: !unsafe \"{{ cuda_home }}\"\n"
    "vault: !vault \"$ANSIBLE_VAULT;1.1;AES256\"\n";

/* Plain string variables the model knows. */
static const char *const plain[][2] = {
	{ "cuda_home", "/usr/local/cuda-13.0" },
	{ "empty", "" },
};

static struct ydoc *doc;
static const char opaque_all[] = "hv";

static int
lookup(void *ctx, const void *scope, const char *name, struct ydoc *d,
    struct template_val *out, struct err *err)
{
	(void)d;
	(void)err;
	(*(size_t *)ctx)++;
	memset(out, 0, sizeof(*out));
	if (strcmp(name, "hv") == 0) {
		out->kind = ENVCTL_TVAL_OPAQUE;
		out->opaque = opaque_all;
		return 0;
	}
	out->node = ymap_get(scope, name);
	out->kind = out->node != NULL ? ENVCTL_TVAL_NODE :
	    ENVCTL_TVAL_UNDEFINED;
	out->scope = scope;
	return 0;
}

/* hv[anything] is this same scope, as through hostvars. */
static int
getitem(void *ctx, const void *opaque, const char *key, struct ydoc *d,
    struct template_val *out, struct err *err)
{
	(void)opaque;
	(void)d;
	(void)err;
	(void)ctx;
	memset(out, 0, sizeof(*out));
	out->node = ymap_get(doc->root, key);
	out->kind = out->node != NULL ? ENVCTL_TVAL_NODE :
	    ENVCTL_TVAL_UNDEFINED;
	out->scope = doc->root;
	out->keep_raw = 1;
	return 0;
}

static const struct template_ops ops = { lookup, getitem };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (ydoc_load_string(&doc, vars_yaml, sizeof(vars_yaml) - 1,
	    "v.yaml", NULL) != 0)
		abort();
	return 0;
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

/*
 * The model: text with only "{{ name }}" for plain variables, no CR (Jinja
 * normalises newlines) and no other brace syntax, whose result does not
 * start like a Python list or dict; 1 with the expansion in out when s is
 * such text, else 0.
 */
static int
model(const char *s, size_t len, struct buf *out)
{
	size_t i = 0, p, q, k;

	while (i < len) {
		if (s[i] == '\r')
			return 0;
		if (s[i] != '{' || i + 1 == len || (s[i + 1] != '{' &&
		    s[i + 1] != '%' && s[i + 1] != '#')) {
			buf_addch(out, s[i++]);
			continue;
		}
		if (s[i + 1] != '{')
			return 0;
		for (p = i + 2; p < len && is_ws((unsigned char)s[p]); p++)
			;
		for (q = p; q < len && ((s[q] >= 'a' && s[q] <= 'z') ||
		    s[q] == '_'); q++)
			;
		for (k = 0; k < sizeof(plain) / sizeof(plain[0]); k++)
			if (strlen(plain[k][0]) == q - p &&
			    memcmp(plain[k][0], s + p, q - p) == 0)
				break;
		if (k == sizeof(plain) / sizeof(plain[0]) || p == 2 + i)
			return 0;	/* Jinja's {{- is whitespace control */
		while (q < len && is_ws((unsigned char)s[q]))
			q++;
		if (q + 1 >= len || s[q] != '}' || s[q + 1] != '}' ||
		    s[q - 1] == '-')
			return 0;
		buf_addstr(out, plain[k][1]);
		i = q + 2;
	}
	/* Ansible would read such a result back as a list or dict. */
	return out->len == 0 || (out->data[0] != '[' && out->data[0] != '{');
}

static int
expand(const char *s, size_t size, struct buf *out, struct err *err)
{
	const struct template_pos pos = { "f.yaml", 3, 5 };
	size_t ncalls = 0;

	buf_init(out, 1 << 20);
	buf_addstr(out, marker);
	return template_expand(out, s, size, &pos, &ops, &ncalls, doc->root,
	    err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct buf out, again, want = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT, err2 = ENVCTL_ERR_INIT;
	int r, r2;

	if (doc == NULL)
		LLVMFuzzerInitialize(NULL, NULL);
	FUZZ_ASSERT(template_has_syntax(s, size) == has_syntax(s, size));
	r = expand(s, size, &out, &err);
	r2 = expand(s, size, &again, &err2);
	FUZZ_ASSERT(r == r2 && out.len == again.len &&
	    memcmp(out.data, again.data, out.len) == 0);
	FUZZ_ASSERT(out.len >= sizeof(marker) - 1 &&
	    memcmp(out.data, marker, sizeof(marker) - 1) == 0);
	if (!has_syntax(s, size))
		FUZZ_ASSERT(r == 0 && out.len == sizeof(marker) - 1 + size &&
		    memcmp(out.data + sizeof(marker) - 1, s, size) == 0);
	if (model(s, size, &want))
		FUZZ_ASSERT(r == 0 && out.len == sizeof(marker) - 1 +
		    want.len && memcmp(out.data + sizeof(marker) - 1,
		    want.data, want.len) == 0);
	if (r == 0)
		FUZZ_ASSERT(err.code == 0);
	else {
		FUZZ_ASSERT(r == ENVCTL_EUNDEFINED ||
		    r == ENVCTL_EUNSUPPORTED || r == ENVCTL_EPARSE ||
		    r == ENVCTL_EINVALID || r == ENVCTL_ETOOBIG);
		FUZZ_ASSERT(err.code == r && err.next == NULL);
		FUZZ_ASSERT(out.len == sizeof(marker) - 1);
		FUZZ_ASSERT(err.path != NULL && (strcmp(err.path,
		    "f.yaml") == 0 || strcmp(err.path, "v.yaml") == 0));
		FUZZ_ASSERT(err.line >= 1 && err.col >= 1);
		FUZZ_ASSERT(err2.code == r && strcmp(err.msg, err2.msg) == 0);
		fuzz_check_errors(&err, NULL);
	}
	err_release(&err);
	err_release(&err2);
	buf_release(&out);
	buf_release(&again);
	buf_release(&want);
	return 0;
}
