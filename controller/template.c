/* template.c - the Jinja subset of inventories (see template.h). */
#include "controller/template.h"

#include <math.h>	/* isnan, isinf, INFINITY, NAN: macros */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/pyvalue.h"
#include "controller/yamldoc.h"

/* Longest piece of template quoted in a message. */
#define SNIPPET_MAX	60
/* Variables may refer to variables, as in Ansible; this bounds loops. */
#define MAX_DEPTH	16
/* Nesting of brackets and filters inside one expression. */
#define MAX_NEST	64
/* Cap of a nested variable's expansion when out has none. */
#define NESTED_CAP	(1u << 20)
/* Most arguments a filter of the subset takes. */
#define MAX_ARGS	3

/* One template_expand() call. */
struct ev {
	const struct template_ops *ops;
	void		*ctx;
	struct ydoc	*doc;		/* nodes made while expanding */
	struct err	**whys;		/* why values are undefined */
	size_t		 nwhys, awhys;
	int		 depth;		/* nested templates being expanded */
	size_t		 root_at;	/* the env value's "{{" at work */
	size_t		 cap;
	struct err	*err;
};

/* One template text: the env value, or a variable's own value. */
struct tpl {
	struct ev	*ev;
	const char	*text;
	size_t		 len;
	struct template_pos pos;
	const void	*scope;
	const char	*var;		/* whose value this is; NULL: the env */
};

struct val {
	struct template_val v;
	const struct err *why;		/* UNDEFINED: the undefined use */
	const char	*name;		/* opaque's name, for messages */
};

enum tok {
	T_END,		/* the closing }} */
	T_NAME,
	T_STR,
	T_INT,
	T_DOT,
	T_LBRACK,
	T_RBRACK,
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_PIPE,
	T_TILDE,
	T_ASSIGN,
	T_MINUS,
	T_OTHER,	/* any other operator or character */
};

/* The parser of one {{ }}; eval 0 only checks syntax. */
struct px {
	struct tpl	*t;
	size_t		 at;		/* its "{{" */
	size_t		 end;		/* its "}}" */
	size_t		 p;
	int		 eval;
	int		 nest;
	/* The current token. */
	enum tok	 tok;
	size_t		 ts, te;	/* its text */
	struct buf	 tv;		/* T_STR value, T_INT digits */
};

static int resolve(struct ev *, struct val *, const char *, int);
static int parse_expr(struct px *, struct val *);

static const char *const str_attrs[] = {
	"capitalize", "casefold", "center", "count", "encode", "endswith",
	"expandtabs", "find", "format", "format_map", "index", "isalnum",
	"isalpha", "isascii", "isdecimal", "isdigit", "isidentifier",
	"islower", "isnumeric", "isprintable", "isspace", "istitle",
	"isupper", "join", "ljust", "lower", "lstrip", "maketrans",
	"partition", "removeprefix", "removesuffix", "replace", "rfind",
	"rindex", "rjust", "rpartition", "rsplit", "rstrip", "split",
	"splitlines", "startswith", "strip", "swapcase", "title",
	"translate", "upper", "zfill", "ansible_pos", NULL,
};
static const char *const list_attrs[] = {
	"append", "clear", "copy", "count", "extend", "index", "insert",
	"pop", "remove", "reverse", "sort", "ansible_pos", NULL,
};
static const char *const dict_attrs[] = {
	"clear", "copy", "fromkeys", "get", "items", "keys", "pop",
	"popitem", "setdefault", "update", "values", "ansible_pos", NULL,
};
static const char *const num_attrs[] = {
	"as_integer_ratio", "bit_count", "bit_length", "conjugate",
	"denominator", "from_bytes", "imag", "numerator", "real", "to_bytes",
	"fromhex", "hex", "is_integer", NULL,
};

/* ---- text ---- */

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
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Python's \s and str.isspace() for ASCII. */
static int
is_pyspace(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int
in_words(const char *const *words, const char *s)
{
	for (; *words != NULL; words++)
		if (strcmp(*words, s) == 0)
			return 1;
	return 0;
}

/* Length of the UTF-8 sequence at s[i] (< len), 0 when invalid. */
static size_t
u8len(const char *s, size_t len, size_t i)
{
	unsigned char c = (unsigned char)s[i];
	size_t n, k;

	if (c < 0x80)
		return 1;
	n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
	if (n == 0 || c >= 0xf5 || i + n > len)
		return 0;
	for (k = 1; k < n; k++)
		if (((unsigned char)s[i + k] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* The code point at s[i] of length n (u8len). */
static uint32_t
u8cp(const char *s, size_t i, size_t n)
{
	static const unsigned char mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = (unsigned char)s[i] & mask[n];
	size_t k;

	for (k = 1; k < n; k++)
		cp = cp << 6 | ((unsigned char)s[i + k] & 0x3f);
	return cp;
}

/* str.isspace() of one code point. */
static int
cp_space(uint32_t cp)
{
	if (cp < 0x80)
		return is_pyspace((int)cp) || (cp >= 0x1c && cp <= 0x1f);
	return cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
	    (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
	    cp == 0x202f || cp == 0x205f || cp == 0x3000;
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
 * Offset just past the quoted string starting at p, with Jinja's lexer's
 * escape pairs, or 0 when it does not end.
 */
static size_t
skip_string(const struct tpl *t, size_t p)
{
	char q = t->text[p];

	for (p++; p < t->len; p++) {
		if (t->text[p] == '\\')
			p++;
		else if (t->text[p] == q)
			return p + 1;
	}
	return 0;
}

/* The "}}" closing the "{{" at at, outside string literals; len if none. */
static size_t
find_close(const struct tpl *t, size_t at)
{
	size_t p = at + 2, n;

	while (p + 1 < t->len) {
		if (t->text[p] == '\'' || t->text[p] == '"') {
			if ((n = skip_string(t, p)) == 0)
				return t->len;
			p = n;
			continue;
		}
		if (t->text[p] == '}' && t->text[p + 1] == '}')
			return p;
		p++;
	}
	return t->len;
}

/*
 * Appends the construct starting at "at" for a message: up to its closing
 * delimiter (when on the same line), shortened, controls shown as '?'.
 */
static void
snippet(const struct tpl *t, size_t at, struct buf *b)
{
	size_t end, i;
	int cut = 0;

	if (t->text[at + 1] == '{')
		end = find_close(t, at);
	else
		end = find2(t, at + 2, t->text[at + 1] == '%' ? '%' : '#',
		    '}');
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
 * Records an error about offset "at" of t's text, positioned by counting
 * lines and bytes from t->pos, prefixed with the variable it is in;
 * returns code.
 */
static int
fail(const struct tpl *t, int code, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
fail(const struct tpl *t, int code, size_t at, const char *fmt, ...)
{
	int line = t->pos.line, col = t->pos.col;
	size_t i, bol = 0;
	int nl = 0;
	va_list ap;
	char *msg;

	for (i = 0; i < at && i < t->len; i++)
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
	if (t->var != NULL)
		err_setat(t->ev->err, code, t->pos.path, line, col,
		    "variable '%s': %s", t->var, msg);
	else
		err_setat(t->ev->err, code, t->pos.path, line, col, "%s",
		    msg);
	free(msg);
	return code;
}

/* Refuses the construct at "at" as beyond the subset. */
static int
unsupported(const struct tpl *t, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
unsupported(const struct tpl *t, size_t at, const char *fmt, ...)
{
	struct buf s = ENVCTL_BUF_INIT;
	va_list ap;
	char *why;
	int r;

	snippet(t, at, &s);
	va_start(ap, fmt);
	why = xvasprintf(fmt, ap);
	va_end(ap);
	r = fail(t, ENVCTL_EUNSUPPORTED, at,
	    "unsupported template syntax '%s' (%s)", s.data, why);
	free(why);
	buf_release(&s);
	return r;
}

/* ---- values ---- */

static void
set_node(struct val *v, const struct ynode *n, const void *scope)
{
	memset(v, 0, sizeof(*v));
	v->v.kind = ENVCTL_TVAL_NODE;
	v->v.node = n;
	v->v.scope = scope;
}

static const struct ynode *
mk_scalar(struct ev *ev, enum yscalar_kind kind, const char *s, size_t len)
{
	return ydoc_add_scalar(ev->doc, kind, s, len, 0, 0);
}

static void
set_str(struct ev *ev, struct val *v, const char *s, size_t len)
{
	set_node(v, mk_scalar(ev, ENVCTL_YSTR, s, len), NULL);
}

static int
has_tag(const struct ynode *n, const char *tag)
{
	return n->tag != NULL && strcmp(n->tag, tag) == 0;
}

/* A scalar Ansible holds as a string that envctl cannot read. */
static int
is_opaque_scalar(const struct ynode *n)
{
	return n->type == ENVCTL_YSCALAR && (has_tag(n, "!vault") ||
	    has_tag(n, ENVCTL_YTAG_UNUSABLE));
}

static enum yscalar_kind
kind_of(const struct ynode *n)
{
	if (has_tag(n, "!unsafe"))
		return ENVCTL_YSTR;
	return yscalar_kind(n);
}

/* Python's type name of a node, for TypeError messages. */
static const char *
pytype(const struct ynode *n)
{
	if (n->type == ENVCTL_YSEQ)
		return "list";
	if (n->type == ENVCTL_YMAP)
		return "dict";
	switch (kind_of(n)) {
	case ENVCTL_YINT:
		return "int";
	case ENVCTL_YFLOAT:
		return "float";
	case ENVCTL_YBOOL:
		return "bool";
	case ENVCTL_YNULL:
		return "NoneType";
	default:
		return "str";
	}
}

/*
 * Refuses a value envctl cannot use: vault-encrypted or unusable scalars,
 * found anywhere in n.  what names it.
 */
static int
check_usable(struct ev *ev, const struct ynode *n, const char *what)
{
	size_t i;
	int r;

	if (n->type == ENVCTL_YSEQ) {
		for (i = 0; i < n->nitems; i++)
			if ((r = check_usable(ev, n->items[i], what)) != 0)
				return r;
		return 0;
	}
	if (n->type == ENVCTL_YMAP) {
		for (i = 0; i < n->npairs; i++)
			if ((r = check_usable(ev, n->pairs[i].value,
			    what)) != 0)
				return r;
		return 0;
	}
	if (has_tag(n, "!vault"))
		return err_setat(ev->err, ENVCTL_EUNSUPPORTED, n->path,
		    n->line, n->col, "variable '%s' is vault-encrypted, which "
		    "envctl cannot decrypt", what);
	if (has_tag(n, ENVCTL_YTAG_UNUSABLE))
		return err_setat(ev->err, ENVCTL_EUNSUPPORTED, n->path,
		    n->line, n->col, "variable '%s': %s", what, n->str);
	return 0;
}

/* The message of an undefined value used where a value is needed. */
static int
undefined_use(struct px *x, const struct val *v)
{
	struct err *e = x->t->ev->err;
	const struct err *w = v->why;

	if (w == NULL)
		return fail(x->t, ENVCTL_EUNDEFINED, x->at, "undefined value");
	err_setat(e, ENVCTL_EUNDEFINED, w->path, w->line, w->col, "%s",
	    w->msg);
	return ENVCTL_EUNDEFINED;
}

/*
 * Appends str(v) (finalize: Ansible's output of an expression, where None
 * prints nothing) to b.  An undefined value or hostvars cannot print.
 */
static int
val_str(struct px *x, const struct val *v, struct buf *b, int finalize)
{
	struct ev *ev = x->t->ev;
	const struct ynode *n = v->v.node;
	struct buf tmp = ENVCTL_BUF_INIT;
	int r;

	if (v->v.kind == ENVCTL_TVAL_UNDEFINED)
		return undefined_use(x, v);
	if (v->v.kind == ENVCTL_TVAL_OPAQUE)
		return unsupported(x->t, x->at, "'%s' as a whole", v->name);
	if ((r = check_usable(ev, n, v->name != NULL ? v->name : "?")) != 0)
		return r;
	if (n->type == ENVCTL_YSCALAR && kind_of(n) == ENVCTL_YNULL) {
		if (!finalize)
			r = buf_addstr(b, "None");
	} else if (n->type == ENVCTL_YSCALAR && memchr(n->str, '\0',
	    n->len) != NULL && kind_of(n) == ENVCTL_YSTR) {
		/* A C string, and so an environment, cannot carry it. */
		if (n->path != NULL && n->line > 0)
			return err_setat(ev->err, ENVCTL_EINVALID, n->path,
			    n->line, n->col, "variable '%s' contains a NUL "
			    "byte, which no environment variable can hold",
			    v->name != NULL ? v->name : "?");
		return fail(x->t, ENVCTL_EINVALID, x->at, "a value contains a "
		    "NUL byte, which no environment variable can hold");
	} else if (n->type == ENVCTL_YSCALAR && has_tag(n, "!unsafe"))
		r = buf_add(b, n->str, n->len);
	else if (n->type == ENVCTL_YSCALAR) {
		if ((r = yscalar_text(&tmp, n, ev->err)) != 0)
			goto out;
		r = buf_add(b, tmp.data, tmp.len);
	} else if ((r = pyvalue_str(b, n, ev->err)) != 0)
		goto out;
	if (r != 0)
		r = fail(x->t, ENVCTL_ETOOBIG, x->at, "expanded value exceeds "
		    "the %zu-byte limit", b->cap);
 out:
	buf_release(&tmp);
	return r;
}

/* Python truthiness of a defined value into *out. */
static int
truthy(struct px *x, const struct val *v, int *out)
{
	struct ev *ev = x->t->ev;
	const struct ynode *n = v->v.node;
	struct buf tmp = ENVCTL_BUF_INIT;
	int r = 0;

	if (v->v.kind == ENVCTL_TVAL_UNDEFINED)
		return undefined_use(x, v);
	if (v->v.kind == ENVCTL_TVAL_OPAQUE) {
		*out = 1;
		return 0;
	}
	if (n->type == ENVCTL_YSEQ) {
		*out = n->nitems > 0;
		return 0;
	}
	if (n->type == ENVCTL_YMAP) {
		*out = n->npairs > 0;
		return 0;
	}
	if ((r = check_usable(ev, n, v->name != NULL ? v->name : "?")) != 0)
		return r;
	switch (kind_of(n)) {
	case ENVCTL_YNULL:
		*out = 0;
		break;
	case ENVCTL_YBOOL:
		r = yscalar_bool(n, out);
		break;
	case ENVCTL_YINT:
		if ((r = yscalar_text(&tmp, n, ev->err)) == 0)
			*out = strcmp(tmp.data, "0") != 0;
		break;
	case ENVCTL_YFLOAT:
		if ((r = yscalar_text(&tmp, n, ev->err)) == 0)
			*out = strtod(tmp.data, NULL) != 0.0 ||
			    strcmp(tmp.data, "nan") == 0;
		break;
	default:
		*out = n->len > 0;
	}
	buf_release(&tmp);
	return r;
}

/* Keeps err (moved) as the reason of an undefined value; returns it. */
static const struct err *
keep_why(struct ev *ev, struct err *e)
{
	struct err *w = xcalloc(1, sizeof(*w));

	err_move(w, e);
	ENVCTL_GROW(ev->whys, ev->nwhys + 1, ev->awhys);
	ev->whys[ev->nwhys++] = w;
	return w;
}

/* ---- nested templates ---- */

/* Returns 1 when expanding n would change it: it holds a template. */
static int
needs_expand(const struct ynode *n)
{
	size_t i;

	if (n->type == ENVCTL_YSEQ) {
		for (i = 0; i < n->nitems; i++)
			if (needs_expand(n->items[i]))
				return 1;
		return 0;
	}
	if (n->type == ENVCTL_YMAP) {
		for (i = 0; i < n->npairs; i++)
			if (needs_expand(n->pairs[i].value))
				return 1;
		return 0;
	}
	return kind_of(n) == ENVCTL_YSTR && !has_tag(n, "!unsafe") &&
	    !is_opaque_scalar(n) && template_has_syntax(n->str, n->len);
}

/*
 * Ansible's shortcut for a value that is only "{{ name }}" (\s around,
 * one optional trailing newline): sets *ns and *nl to the name.
 */
static int
single_var(const char *s, size_t len, size_t *ns, size_t *nl)
{
	size_t p = 2, q;

	if (len > 0 && s[len - 1] == '\n')
		len--;
	if (len < 4 || s[0] != '{' || s[1] != '{' || s[len - 1] != '}' ||
	    s[len - 2] != '}')
		return 0;
	len -= 2;
	while (p < len && is_pyspace((unsigned char)s[p]))
		p++;
	for (q = p; q < len && is_namechar((unsigned char)s[q]); q++)
		;
	*ns = p;
	*nl = q - p;
	while (q < len && is_pyspace((unsigned char)s[q]))
		q++;
	return q == len;
}

static int run(struct tpl *t, struct buf *out, int top);

/*
 * Expands the string node n of variable var (scope, keep_raw as in
 * template_val) into *v: 0, ENVCTL_EUNDEFINED when its expansion used an
 * undefined value (err set), or another code.
 */
static int
expand_string(struct ev *ev, const struct ynode *n, const char *var,
    const void *scope, struct val *v)
{
	struct tpl t;
	struct template_val tv;
	struct buf b;
	struct ynode *parsed = NULL;
	struct err pe = ENVCTL_ERR_INIT;
	size_t ns, nl;
	char *name;
	int r;

	if (ev->depth >= MAX_DEPTH)
		return err_setat(ev->err, ENVCTL_EINVALID, n->path, n->line,
		    n->col, "variable '%s' refers to itself, or nests more "
		    "than %d deep", var, MAX_DEPTH);
	if (single_var(n->str, n->len, &ns, &nl)) {
		name = xstrndup(n->str + ns, nl);
		memset(&tv, 0, sizeof(tv));
		r = ev->ops->lookup(ev->ctx, scope, name, ev->doc, &tv,
		    ev->err);
		free(name);
		if (r != 0)
			return r;
		if (tv.kind == ENVCTL_TVAL_NODE &&
		    tv.node->type == ENVCTL_YSCALAR &&
		    !is_opaque_scalar(tv.node) && kind_of(tv.node) !=
		    ENVCTL_YSTR) {
			set_node(v, tv.node, scope);
			return 0;
		}
	}
	memset(&t, 0, sizeof(t));
	t.ev = ev;
	t.text = n->str;
	t.len = n->len;
	t.pos.path = n->path;
	t.pos.line = n->line;
	t.pos.col = n->col + (n->plain || n->tag != NULL ? 0 : 1);
	t.scope = scope;
	t.var = var;
	buf_init(&b, ev->cap);
	ev->depth++;
	r = run(&t, &b, 0);
	ev->depth--;
	if (r != 0)
		goto out;
	/* Ansible's non-native concat: literal_eval what looks like one. */
	if (b.len > 0 && (b.data[0] == '[' || b.data[0] == '{')) {
		/* Its nodes are no definition: positioned nowhere. */
		r = pyvalue_parse(ev->doc, b.data, b.len, 0, 0, &parsed, &pe);
		if (r == 0) {
			set_node(v, parsed, scope);
			goto out;
		}
		if (r != ENVCTL_EPARSE) {
			err_setat(ev->err, r, n->path, n->line, n->col,
			    "variable '%s': Ansible reads its value as a "
			    "Python literal: %s", var, pe.msg);
			goto out;
		}
		r = 0;
	}
	if (strcmp(b.data, "True") == 0 || strcmp(b.data, "False") == 0)
		set_node(v, mk_scalar(ev, ENVCTL_YBOOL, b.data, b.len), scope);
	else
		set_str(ev, v, b.data, b.len);
 out:
	err_release(&pe);
	buf_release(&b);
	return r;
}

/*
 * Expands every template in n (a copy is made when one changes), as
 * Ansible templates a variable whole when it is looked up.  Returns 0,
 * ENVCTL_EUNDEFINED (err set) or another code.
 */
static int
expand_tree(struct ev *ev, const struct ynode *n, const char *var,
    const void *scope, const struct ynode **out)
{
	struct ynode *c;
	const struct ynode *item;
	struct val v;
	size_t i;
	int r;

	memset(&v, 0, sizeof(v));

	*out = n;
	if (!needs_expand(n))
		return 0;
	if (n->type == ENVCTL_YSCALAR) {
		if ((r = expand_string(ev, n, var, scope, &v)) != 0)
			return r;
		*out = v.v.node;
		return 0;
	}
	c = ydoc_add_node(ev->doc, n->type, n->line, n->col);
	c->path = n->path;
	for (i = 0; i < (n->type == ENVCTL_YSEQ ? n->nitems : n->npairs);
	    i++) {
		r = expand_tree(ev, n->type == ENVCTL_YSEQ ? n->items[i] :
		    n->pairs[i].value, var, scope, &item);
		if (r != 0)
			return r;
		if (n->type == ENVCTL_YSEQ)
			yseq_append(c, (struct ynode *)item);
		else
			ymap_append(c, n->pairs[i].key, (struct ynode *)item);
	}
	*out = c;
	return 0;
}

/*
 * Turns a looked-up value into what Ansible holds for it: its templates
 * expanded; a use of an undefined value in them makes it undefined (with
 * why), or is refused for keep_raw.  shown names it in messages; errors
 * from its templates carry their own positions.
 */
static int
resolve(struct ev *ev, struct val *v, const char *shown, int keep_raw)
{
	struct err e = ENVCTL_ERR_INIT, *saved = ev->err;
	const struct ynode *n;
	int r;

	if (v->v.kind != ENVCTL_TVAL_NODE)
		return 0;
	ev->err = &e;
	r = expand_tree(ev, v->v.node, shown, v->v.scope, &n);
	ev->err = saved;
	if (r == 0) {
		v->v.node = n;
		return 0;
	}
	if (r == ENVCTL_EUNDEFINED && keep_raw) {
		r = err_setat(ev->err, ENVCTL_EUNSUPPORTED, e.path, e.line,
		    e.col, "%s; through hostvars Ansible would keep the "
		    "template's text unexpanded", e.msg);
		err_release(&e);
		return r;
	}
	if (r == ENVCTL_EUNDEFINED) {
		/* Ansible: a variable whose template fails so is undefined. */
		v->v.kind = ENVCTL_TVAL_UNDEFINED;
		v->why = keep_why(ev, &e);
		return 0;
	}
	err_move(ev->err, &e);
	return r;
}

/* ---- the lexer ---- */

/* Reads the token at x->p into x->tok; may refuse what Jinja lexes. */
static int
next(struct px *x)
{
	const struct tpl *t = x->t;
	const char *s = t->text;
	size_t p = x->p, q;
	int c, r = 0;

	while (p < x->end && is_pyspace((unsigned char)s[p]))
		p++;
	x->ts = p;
	buf_reset(&x->tv);
	if (p >= x->end) {
		x->tok = T_END;
		x->te = p;
		goto out;
	}
	c = (unsigned char)s[p];
	if (is_namestart(c)) {
		for (q = p; q < x->end && is_namechar((unsigned char)s[q]);
		    q++)
			;
		x->tok = T_NAME;
		x->te = q;
	} else if (is_digit(c)) {
		for (q = p; q < x->end && (is_digit((unsigned char)s[q]) ||
		    s[q] == '_'); q++)
			;
		x->tok = T_INT;
		x->te = q;
		if (q < x->end && ((s[q] == '.' && q + 1 < x->end &&
		    is_digit((unsigned char)s[q + 1]) && s[p - 1] != '.') ||
		    s[q] == 'e' || s[q] == 'E' || (s[p] == '0' &&
		    q == p + 1 && strchr("xXoObB", s[q]) != NULL))) {
			while (q < x->end && (is_namechar((unsigned char)s[q])
			    || s[q] == '.' || ((s[q] == '+' || s[q] == '-') &&
			    (s[q - 1] | 0x20) == 'e')))
				q++;
			r = unsupported(t, x->at, "number literal '%.*s'; only "
			    "decimal integers are", (int)(q - p), s + p);
			goto out;
		}
		/* Jinja: [1-9](_?\d)* or 0(_?0)*. */
		for (q = p; q < x->te; q++) {
			if (s[q] == '_' && (q + 1 == x->te || s[q + 1] == '_'))
				break;
			if (s[q] != '_')
				buf_addch(&x->tv, s[q]);
		}
		if (q < x->te || (s[p] == '0' &&
		    strspn(x->tv.data, "0") != x->tv.len)) {
			r = unsupported(t, x->at, "integer literal '%.*s'",
			    (int)(x->te - p), s + p);
			goto out;
		}
		if (s[p] == '0')
			buf_truncate(&x->tv, 1);
	} else if (c == '\'' || c == '"') {
		q = skip_string(t, p);
		x->tok = T_STR;
		x->te = q;
		for (q = p + 1; q + 1 < x->te; q++) {
			/*
			 * Ansible doubles every backslash inside an
			 * expression's strings: they are literal, and one
			 * before the quote would end the string early.
			 */
			if (s[q] == '\\' && q + 2 < x->te &&
			    (unsigned char)s[q + 1] == c) {
				r = unsupported(t, x->at, "a backslash before "
				    "%c in a string literal", c);
				goto out;
			}
			if (s[q] == '\\') {
				buf_add(&x->tv, s + q, 2);
				q++;
				continue;
			}
			/* Jinja normalises newlines in literals. */
			if (s[q] == '\r' && s[q + 1] == '\n')
				continue;
			buf_addch(&x->tv, s[q] == '\r' ? '\n' : s[q]);
		}
	} else {
		x->te = p + 1;
		switch (c) {
		case '.':
			x->tok = T_DOT;
			break;
		case '[':
			x->tok = T_LBRACK;
			break;
		case ']':
			x->tok = T_RBRACK;
			break;
		case '(':
			x->tok = T_LPAREN;
			break;
		case ')':
			x->tok = T_RPAREN;
			break;
		case ',':
			x->tok = T_COMMA;
			break;
		case '|':
			x->tok = T_PIPE;
			break;
		case '~':
			x->tok = T_TILDE;
			break;
		case '=':
			x->tok = p + 1 < x->end && s[p + 1] == '=' ?
			    T_OTHER : T_ASSIGN;
			break;
		case '-':
			x->tok = T_MINUS;
			break;
		default:
			x->tok = T_OTHER;
		}
		if (x->tok == T_OTHER && p + 1 < x->end &&
		    strchr("*/=!<>", s[p + 1]) != NULL &&
		    strchr("*/=!<>", c) != NULL)
			x->te = p + 2;
	}
 out:
	x->p = x->te;
	return r;
}

/* Describes the current token for "unsupported" messages. */
static char *printable(const char *, size_t);

static int
refuse_tok(struct px *x, const char *where)
{
	const char *s = x->t->text + x->ts;
	int n = (int)(x->te - x->ts), r;
	char *shown;

	switch (x->tok) {
	case T_END:
		return unsupported(x->t, x->at, "expected %s before '}}'",
		    where);
	case T_NAME:
		if ((n == 2 && memcmp(s, "is", 2) == 0))
			return unsupported(x->t, x->at, "test 'is'");
		if ((n == 2 && memcmp(s, "if", 2) == 0) ||
		    (n == 4 && memcmp(s, "else", 4) == 0))
			return unsupported(x->t, x->at,
			    "conditional expression");
		if ((n == 3 && (memcmp(s, "and", 3) == 0 ||
		    memcmp(s, "not", 3) == 0)) ||
		    (n == 2 && (memcmp(s, "or", 2) == 0 ||
		    memcmp(s, "in", 2) == 0)))
			return unsupported(x->t, x->at, "operator '%.*s'", n,
			    s);
		break;
	case T_LPAREN:
		return unsupported(x->t, x->at, "call");
	case T_LBRACK:
		return unsupported(x->t, x->at, "list literal");
	case T_MINUS:
	case T_OTHER:
		if (*s == '{')
			return unsupported(x->t, x->at, "dict literal");
		if ((unsigned char)*s < 0x20 || *s == 0x7f ||
		    (unsigned char)*s >= 0x80)
			return unsupported(x->t, x->at, "character 0x%02x",
			    (unsigned char)*s);
		return unsupported(x->t, x->at, "operator '%.*s'", n, s);
	default:
		break;
	}
	shown = printable(s, (size_t)(n > 20 ? 20 : n));
	r = unsupported(x->t, x->at, "unexpected '%s' where %s was expected",
	    shown, where);
	free(shown);
	return r;
}

/* ---- subscripts ---- */

/* Python's == between two scalar nodes, as dict keys compare. */
static int
key_equal(struct ev *ev, const struct ynode *a, const struct ynode *b)
{
	struct buf x = ENVCTL_BUF_INIT, y = ENVCTL_BUF_INIT;
	enum yscalar_kind ka, kb;
	int eq = 0;

	if (a->type != ENVCTL_YSCALAR || b->type != ENVCTL_YSCALAR ||
	    is_opaque_scalar(a) || is_opaque_scalar(b))
		return 0;
	ka = kind_of(a);
	kb = kind_of(b);
	if (ka == ENVCTL_YSTR || kb == ENVCTL_YSTR)
		return ka == kb && a->len == b->len &&
		    memcmp(a->str, b->str, a->len) == 0;
	if (ka == ENVCTL_YNULL || kb == ENVCTL_YNULL)
		return ka == kb;
	if (yscalar_text(&x, a, NULL) != 0 || yscalar_text(&y, b, NULL) != 0)
		goto out;
	/* Numbers: bools are 0 and 1. */
	if (ka == ENVCTL_YFLOAT || kb == ENVCTL_YFLOAT) {
		double da = strcmp(x.data, "True") == 0 ? 1 :
		    strcmp(x.data, "False") == 0 ? 0 : strtod(x.data, NULL);
		double db = strcmp(y.data, "True") == 0 ? 1 :
		    strcmp(y.data, "False") == 0 ? 0 : strtod(y.data, NULL);

		eq = da == db;
		goto out;
	}
	eq = strcmp(strcmp(x.data, "True") == 0 ? "1" :
	    strcmp(x.data, "False") == 0 ? "0" : x.data,
	    strcmp(y.data, "True") == 0 ? "1" :
	    strcmp(y.data, "False") == 0 ? "0" : y.data) == 0;
 out:
	(void)ev;
	buf_release(&x);
	buf_release(&y);
	return eq;
}

/* The attribute names of n's Python type. */
static const char *const *
attrs_of(const struct val *v)
{
	const struct ynode *n = v->v.node;

	if (v->v.kind == ENVCTL_TVAL_OPAQUE || n->type == ENVCTL_YMAP)
		return dict_attrs;
	if (n->type == ENVCTL_YSEQ)
		return list_attrs;
	switch (kind_of(n)) {
	case ENVCTL_YSTR:
		return str_attrs;
	case ENVCTL_YNULL:
		return NULL;
	default:
		return num_attrs;
	}
}

/* Refuses name when it is a Python attribute of v (Jinja would use it). */
static int
check_attr(struct px *x, const struct val *v, const char *name)
{
	const char *const *attrs = attrs_of(v);

	if (name[0] == '_' || (attrs != NULL && in_words(attrs, name)))
		return unsupported(x->t, x->at, "'%s' is a Python attribute "
		    "of %s", name, v->v.kind == ENVCTL_TVAL_OPAQUE ? "dict" :
		    pytype(v->v.node));
	return 0;
}

static void
set_undefined(struct px *x, struct val *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_undefined(struct px *x, struct val *v, const char *fmt, ...)
{
	struct err e = ENVCTL_ERR_INIT;
	struct ev *ev = x->t->ev;
	struct err *saved = ev->err;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	ev->err = &e;
	fail(x->t, ENVCTL_EUNDEFINED, x->at, "%s", msg);
	ev->err = saved;
	free(msg);
	memset(v, 0, sizeof(*v));
	v->v.kind = ENVCTL_TVAL_UNDEFINED;
	v->why = keep_why(ev, &e);
}

/* A copy of s for a message: controls shown as '?', at most 60 bytes. */
static char *
printable(const char *s, size_t len)
{
	char *p = xstrndup(s, len > SNIPPET_MAX ? SNIPPET_MAX : len);
	size_t i;

	for (i = 0; p[i] != '\0'; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			p[i] = '?';
	return p;
}

/* Names the subscript base[key], for messages. */
static char *
sub_name(const char *base, const struct ynode *key)
{
	char *k = printable(key->str, key->len), *r;

	if (key->type == ENVCTL_YSCALAR && kind_of(key) == ENVCTL_YSTR)
		r = xasprintf("%s['%s']", base, k);
	else
		r = xasprintf("%s[%s]", base, k);
	free(k);
	return r;
}

/* Keeps a string for as long as the expansion: in the node arena. */
static const char *
keep_str(struct ev *ev, char *s)
{
	const struct ynode *n = mk_scalar(ev, ENVCTL_YSTR, s, strlen(s));

	free(s);
	return n->str;
}

/* obj[key] (attr: obj.key) with Jinja's getattr / getitem rules. */
static int
subscript(struct px *x, struct val *obj, const struct val *key, int attr)
{
	struct ev *ev = x->t->ev;
	const struct ynode *n = obj->v.node, *k = key->v.node;
	const char *base = obj->name != NULL ? obj->name : "value";
	struct buf idx = ENVCTL_BUF_INIT;
	struct template_val tv;
	struct val res;
	long long i, len, cnt;
	size_t j, off, l;
	int r = 0, isstr;

	if (obj->v.kind == ENVCTL_TVAL_UNDEFINED)
		return 0;	/* Ansible's undefined absorbs subscripts */
	if (key->v.kind == ENVCTL_TVAL_UNDEFINED)
		return undefined_use(x, key);
	if (key->v.kind == ENVCTL_TVAL_OPAQUE)
		return unsupported(x->t, x->at, "'%s' as a key", key->name);
	if ((r = check_usable(ev, k, "key")) != 0)
		return r;
	isstr = k->type == ENVCTL_YSCALAR && kind_of(k) == ENVCTL_YSTR;
	memset(&res, 0, sizeof(res));
	if (attr || isstr) {
		if (attr || obj->v.kind == ENVCTL_TVAL_OPAQUE ||
		    n->type != ENVCTL_YMAP || ymap_get(n, k->str) == NULL)
			if ((r = check_attr(x, obj, k->str)) != 0)
				goto out;
	}
	if (obj->v.kind == ENVCTL_TVAL_OPAQUE) {
		if (!isstr) {
			set_undefined(x, obj, "'%s' has no item %s", base,
			    k->str);
			goto out;
		}
		memset(&tv, 0, sizeof(tv));
		if ((r = ev->ops->getitem(ev->ctx, obj->v.opaque, k->str,
		    ev->doc, &tv, ev->err)) != 0)
			goto out;
		res.v = tv;
		res.name = keep_str(ev, sub_name(base, k));
		if (tv.kind == ENVCTL_TVAL_UNDEFINED) {
			set_undefined(x, obj, "'%s' is undefined", res.name);
			goto out;
		}
		if ((r = resolve(ev, &res, res.name, tv.keep_raw)) != 0)
			goto out;
		*obj = res;
		goto out;
	}
	res.name = keep_str(ev, sub_name(base, k));
	if (n->type == ENVCTL_YMAP) {
		for (j = 0; j < n->npairs; j++)
			if (key_equal(ev, n->pairs[j].key, k))
				break;
		if (j == n->npairs) {
			set_undefined(x, obj, "'%s' is undefined", res.name);
			goto out;
		}
		set_node(obj, n->pairs[j].value, obj->v.scope);
		obj->name = res.name;
		goto out;
	}
	/* Sequences and strings take integer indexes (bools are ints). */
	if (attr || k->type != ENVCTL_YSCALAR || (kind_of(k) != ENVCTL_YINT &&
	    kind_of(k) != ENVCTL_YBOOL) || (n->type == ENVCTL_YSCALAR &&
	    kind_of(n) != ENVCTL_YSTR)) {
		set_undefined(x, obj, "'%s' is undefined", res.name);
		goto out;
	}
	if ((r = yscalar_text(&idx, k, ev->err)) != 0)
		goto out;
	i = strcmp(idx.data, "True") == 0 ? 1 : strcmp(idx.data, "False") ==
	    0 ? 0 : strlen(idx.data) > 18 ? INT64_MAX / 2 :
	    strtoll(idx.data, NULL, 10);
	if (n->type == ENVCTL_YSEQ) {
		len = (long long)n->nitems;
		if (i < 0)
			i += len;
		if (i < 0 || i >= len) {
			set_undefined(x, obj, "'%s' is undefined (the list "
			    "has %lld items)", res.name, len);
			goto out;
		}
		set_node(obj, n->items[i], obj->v.scope);
		obj->name = res.name;
		goto out;
	}
	if ((r = check_usable(ev, n, base)) != 0)
		goto out;
	/* A string: code points. */
	for (len = 0, off = 0; off < n->len; len++, off += l)
		if ((l = u8len(n->str, n->len, off)) == 0) {
			r = unsupported(x->t, x->at, "indexing a string that "
			    "is not UTF-8");
			goto out;
		}
	if (i < 0)
		i += len;
	if (i < 0 || i >= len) {
		set_undefined(x, obj, "'%s' is undefined (the string has %lld "
		    "characters)", res.name, len);
		goto out;
	}
	for (cnt = 0, off = 0; cnt < i; cnt++)
		off += u8len(n->str, n->len, off);
	set_str(ev, obj, n->str + off, u8len(n->str, n->len, off));
	obj->name = res.name;
 out:
	buf_release(&idx);
	return r;
}

/* ---- int ---- */

/*
 * Python's int(s, base) for ASCII text into out (canonical decimal):
 * 0, 1 for ValueError.
 */
static int
py_int(const char *s, size_t len, int base, struct buf *out)
{
	uint32_t *limb = NULL;
	size_t nl = 0, i, p = 0, q, start;
	uint64_t carry;
	int neg = 0, d, r = 1, prev_us;
	char dig[16];

	while (p < len && is_pyspace((unsigned char)s[p]))
		p++;
	while (len > p && is_pyspace((unsigned char)s[len - 1]))
		len--;
	if (p < len && (s[p] == '+' || s[p] == '-'))
		neg = s[p++] == '-';
	prev_us = 0;
	if (p + 1 < len && s[p] == '0') {
		int c = s[p + 1] | 0x20, pb = c == 'x' ? 16 : c == 'o' ? 8 :
		    c == 'b' ? 2 : 0;

		if (pb != 0 && (base == 0 || base == pb)) {
			base = pb;
			p += 2;
			prev_us = 1;	/* an underscore may follow */
		}
	}
	start = p;
	if (base == 0) {
		/* No prefix: decimal, and no leading zero but in "0". */
		base = 10;
		for (q = p; q < len && (s[q] == '0' || s[q] == '_'); q++)
			;
		if (p < len && s[p] == '0' && q < len)
			goto out;
	}
	if (p == len)
		goto out;
	limb = xcalloc(len - p + 1, sizeof(*limb));
	for (; p < len; p++) {
		if (s[p] == '_') {
			if ((p == start && !prev_us) || p + 1 == len ||
			    s[p + 1] == '_')
				goto out;
			continue;
		}
		d = is_digit((unsigned char)s[p]) ? s[p] - '0' :
		    (s[p] | 0x20) >= 'a' && (s[p] | 0x20) <= 'z' ?
		    (s[p] | 0x20) - 'a' + 10 : 99;
		if (d >= base)
			goto out;
		carry = (uint64_t)d;
		for (i = 0; i < nl; i++) {
			carry += (uint64_t)limb[i] * (uint64_t)base;
			limb[i] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
		while (carry > 0) {
			limb[nl++] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
	}
	while (nl > 0 && limb[nl - 1] == 0)
		nl--;
	if (nl == 0) {
		buf_addch(out, '0');
		r = 0;
		goto out;
	}
	if (neg)
		buf_addch(out, '-');
	buf_addf(out, "%u", limb[nl - 1]);
	for (i = nl - 1; i-- > 0;) {
		snprintf(dig, sizeof(dig), "%09u", limb[i]);
		buf_addstr(out, dig);
	}
	r = 0;
 out:
	free(limb);
	return r;
}

/*
 * Python's float(s) for ASCII text: 0 with *d set, 1 for ValueError.
 */
static int
py_float(const char *s, size_t len, double *d)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t p = 0, q;
	int r = 1, digits = 0, c;
	const char *w;

	while (p < len && is_pyspace((unsigned char)s[p]))
		p++;
	while (len > p && is_pyspace((unsigned char)s[len - 1]))
		len--;
	q = p;
	if (q < len && (s[q] == '+' || s[q] == '-'))
		buf_addch(&b, s[q++]);
	w = s + q;
	if ((len - q == 3 && strncasecmp(w, "inf", 3) == 0) ||
	    (len - q == 8 && strncasecmp(w, "infinity", 8) == 0)) {
		*d = b.len > 0 && b.data[0] == '-' ? -INFINITY : INFINITY;
		r = 0;
		goto out;
	}
	if (len - q == 3 && strncasecmp(w, "nan", 3) == 0) {
		*d = NAN;
		r = 0;
		goto out;
	}
	/* digitpart: digits with single underscores between them. */
	for (; q < len; q++) {
		c = (unsigned char)s[q];
		if (c == '_') {
			if (q == p || !is_digit((unsigned char)s[q - 1]) ||
			    q + 1 == len || !is_digit((unsigned char)s[q + 1]))
				goto out;
			continue;
		}
		if (is_digit(c))
			digits++;
		else if (c == '.' || c == 'e' || c == 'E' || c == '+' ||
		    c == '-')
			;
		else
			goto out;
		buf_addch(&b, c);
	}
	if (digits == 0 || b.len == 0)
		goto out;
	{
		char *end;

		*d = strtod(b.data, &end);
		if (*end != '\0' || strpbrk(b.data, "xXpP") != NULL)
			goto out;
		/* strtod takes "1." and ".5" as Python does; not "1e". */
	}
	r = 0;
 out:
	buf_release(&b);
	return r;
}

static int
is_ascii(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] >= 0x80)
			return 0;
	return 1;
}

/* ---- filters ---- */

struct fargs {
	struct val	 a[MAX_ARGS];
	int		 set[MAX_ARGS];
	int		 n;		/* positional given */
};

/* The string value of a filter argument (str() of it). */
static int
arg_str(struct px *x, const struct val *v, struct buf *b)
{
	return val_str(x, v, b, 0);
}

/* An int argument (count, base): sets *out; refuses other types. */
static int
arg_int(struct px *x, const struct val *v, const char *filter,
    const char *what, long long *out)
{
	struct buf b = ENVCTL_BUF_INIT;
	const struct ynode *n = v->v.node;
	int r = 0;

	if (v->v.kind == ENVCTL_TVAL_UNDEFINED)
		return undefined_use(x, v);
	if (v->v.kind != ENVCTL_TVAL_NODE || n->type != ENVCTL_YSCALAR ||
	    (kind_of(n) != ENVCTL_YINT && kind_of(n) != ENVCTL_YBOOL))
		return unsupported(x->t, x->at, "%s of filter '%s' that is "
		    "not an integer", what, filter);
	if ((r = yscalar_text(&b, n, x->t->ev->err)) == 0)
		*out = strcmp(b.data, "True") == 0 ? 1 :
		    strcmp(b.data, "False") == 0 ? 0 :
		    strlen(b.data) > 15 ? (b.data[0] == '-' ? -1000000000000LL :
		    1000000000000LL) : strtoll(b.data, NULL, 10);
	buf_release(&b);
	return r;
}

/* A TypeError Ansible raises: refused as an error. */
static int
type_error(struct px *x, const char *filter, const struct ynode *n,
    const char *why)
{
	const char *d = ynode_describe(n);

	return fail(x->t, ENVCTL_EINVALID, x->at, "filter '%s' of %s: "
	    "Ansible fails ('%s' %s)", filter, d, pytype(n), why);
}

/* Iterates v as Python does: items, a mapping's keys, code points. */
static int
iter_items(struct px *x, const struct val *v, const char *filter,
    const struct ynode ***items, size_t *nitems)
{
	struct ev *ev = x->t->ev;
	const struct ynode *n = v->v.node;
	size_t i, l;
	int r;

	*items = NULL;
	*nitems = 0;
	if (v->v.kind == ENVCTL_TVAL_UNDEFINED)
		return undefined_use(x, v);
	if (v->v.kind == ENVCTL_TVAL_OPAQUE)
		return unsupported(x->t, x->at, "'%s' as a whole", v->name);
	if (n->type == ENVCTL_YSEQ) {
		*items = xcalloc(n->nitems + 1, sizeof(**items));
		for (i = 0; i < n->nitems; i++)
			(*items)[i] = n->items[i];
		*nitems = n->nitems;
		return 0;
	}
	if (n->type == ENVCTL_YMAP) {
		*items = xcalloc(n->npairs + 1, sizeof(**items));
		for (i = 0; i < n->npairs; i++)
			(*items)[i] = n->pairs[i].key;
		*nitems = n->npairs;
		return 0;
	}
	if ((r = check_usable(ev, n, v->name != NULL ? v->name : "?")) != 0)
		return r;
	if (kind_of(n) != ENVCTL_YSTR)
		return type_error(x, filter, n, "object is not iterable");
	*items = xcalloc(n->len + 1, sizeof(**items));
	for (i = 0; i < n->len; i += l) {
		if ((l = u8len(n->str, n->len, i)) == 0) {
			free(*items);
			*items = NULL;
			return unsupported(x->t, x->at, "filter '%s' of a "
			    "string that is not UTF-8", filter);
		}
		(*items)[(*nitems)++] = mk_scalar(ev, ENVCTL_YSTR, n->str + i,
		    l);
	}
	return 0;
}

/* lower, upper: ASCII only (Python's Unicode case rules are not here). */
static int
f_case(struct px *x, struct val *v, int upper)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;
	int r;

	if ((r = arg_str(x, v, &b)) != 0)
		goto out;
	if (!is_ascii(b.data, b.len)) {
		r = unsupported(x->t, x->at, "filter '%s' of non-ASCII text",
		    upper ? "upper" : "lower");
		goto out;
	}
	for (i = 0; i < b.len; i++)
		if (upper && b.data[i] >= 'a' && b.data[i] <= 'z')
			b.data[i] -= 32;
		else if (!upper && b.data[i] >= 'A' && b.data[i] <= 'Z')
			b.data[i] += 32;
	set_str(x->t->ev, v, b.data, b.len);
 out:
	buf_release(&b);
	return r;
}

/* Returns 1 when the code point at s[i] (length l) is in chars. */
static int
in_chars(const char *s, size_t i, size_t l, const struct buf *chars)
{
	size_t j, m;

	if (chars == NULL)
		return cp_space(u8cp(s, i, l));
	for (j = 0; j < chars->len; j += m) {
		m = u8len(chars->data, chars->len, j);
		if (m == l && memcmp(chars->data + j, s + i, l) == 0)
			return 1;
	}
	return 0;
}

/* Returns 0 when s holds UTF-8 only. */
static int
check_utf8(struct px *x, const struct buf *b, const char *filter)
{
	size_t i, l;

	for (i = 0; i < b->len; i += l)
		if ((l = u8len(b->data, b->len, i)) == 0)
			return unsupported(x->t, x->at, "filter '%s' of text "
			    "that is not UTF-8", filter);
	return 0;
}

static int
f_trim(struct px *x, struct val *v, struct fargs *fa)
{
	struct buf b = ENVCTL_BUF_INIT, chars = ENVCTL_BUF_INIT;
	const struct buf *set = fa->set[0] ? &chars : NULL;
	size_t s, e, i, l;
	int r;

	if ((r = arg_str(x, v, &b)) != 0 ||
	    (fa->set[0] && (r = arg_str(x, &fa->a[0], &chars)) != 0) ||
	    (r = check_utf8(x, &b, "trim")) != 0 ||
	    (r = check_utf8(x, &chars, "trim")) != 0)
		goto out;
	for (s = 0; s < b.len; s += l) {
		l = u8len(b.data, b.len, s);
		if (!in_chars(b.data, s, l, set))
			break;
	}
	/* The end of the last code point that stays. */
	for (e = s, i = s; i < b.len; i += l) {
		l = u8len(b.data, b.len, i);
		if (!in_chars(b.data, i, l, set))
			e = i + l;
	}
	set_str(x->t->ev, v, b.data + s, e - s);
 out:
	buf_release(&b);
	buf_release(&chars);
	return r;
}

/* The first occurrence of needle (nlen > 0) in hay, or NULL. */
static const char *
find_bytes(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	const char *p;

	while (hlen >= nlen) {
		if ((p = memchr(hay, needle[0], hlen - nlen + 1)) == NULL)
			return NULL;
		if (memcmp(p, needle, nlen) == 0)
			return p;
		hlen -= (size_t)(p - hay) + 1;
		hay = p + 1;
	}
	return NULL;
}

static int
f_replace(struct px *x, struct val *v, struct fargs *fa)
{
	struct buf s = ENVCTL_BUF_INIT, o = ENVCTL_BUF_INIT;
	struct buf n = ENVCTL_BUF_INIT, res = ENVCTL_BUF_INIT;
	long long count = -1, done = 0;
	size_t i, l;
	const char *hit;
	int r;

	if (!fa->set[0] || !fa->set[1]) {
		r = unsupported(x->t, x->at, "filter 'replace' needs old and "
		    "new");
		goto out;
	}
	if ((r = arg_str(x, v, &s)) != 0 ||
	    (r = arg_str(x, &fa->a[0], &o)) != 0 ||
	    (r = arg_str(x, &fa->a[1], &n)) != 0)
		goto out;
	if (fa->set[2] && fa->a[2].v.kind == ENVCTL_TVAL_NODE &&
	    fa->a[2].v.node->type == ENVCTL_YSCALAR &&
	    kind_of(fa->a[2].v.node) == ENVCTL_YNULL)
		count = -1;
	else if (fa->set[2] && (r = arg_int(x, &fa->a[2], "replace",
	    "a count", &count)) != 0)
		goto out;
	if (o.len == 0) {
		/* Python puts new before every code point and at the end. */
		for (i = 0; i <= s.len; i += l) {
			if (count < 0 || done < count) {
				buf_add(&res, n.data, n.len);
				done++;
			}
			if (i == s.len)
				break;
			if ((l = u8len(s.data, s.len, i)) == 0) {
				r = unsupported(x->t, x->at, "filter 'replace' "
				    "of text that is not UTF-8");
				goto out;
			}
			buf_add(&res, s.data + i, l);
		}
	} else {
		for (i = 0; i < s.len;) {
			hit = count >= 0 && done >= count ? NULL :
			    find_bytes(s.data + i, s.len - i, o.data, o.len);
			if (hit == NULL) {
				buf_add(&res, s.data + i, s.len - i);
				break;
			}
			buf_add(&res, s.data + i, (size_t)(hit - s.data) - i);
			buf_add(&res, n.data, n.len);
			i = (size_t)(hit - s.data) + o.len;
			done++;
		}
	}
	if (x->t->ev->cap > 0 && res.len > x->t->ev->cap) {
		r = fail(x->t, ENVCTL_ETOOBIG, x->at, "expanded value exceeds "
		    "the %zu-byte limit", x->t->ev->cap);
		goto out;
	}
	set_str(x->t->ev, v, res.data, res.len);
 out:
	buf_release(&s);
	buf_release(&o);
	buf_release(&n);
	buf_release(&res);
	return r;
}

/* Jinja's int(value, default=0, base=10). */
static int
f_int(struct px *x, struct val *v, struct fargs *fa)
{
	struct ev *ev = x->t->ev;
	const struct ynode *n = v->v.node;
	struct buf b = ENVCTL_BUF_INIT, res = ENVCTL_BUF_INIT;
	long long base = 10;
	double d;
	int r = 0, k;

	if (fa->set[1] && (r = arg_int(x, &fa->a[1], "int", "a base",
	    &base)) != 0)
		goto out;
	if (base != 0 && (base < 2 || base > 36)) {
		r = unsupported(x->t, x->at, "int base %lld", base);
		goto out;
	}
	if (v->v.kind == ENVCTL_TVAL_UNDEFINED) {
		r = undefined_use(x, v);
		goto out;
	}
	if (v->v.kind == ENVCTL_TVAL_OPAQUE || n->type != ENVCTL_YSCALAR)
		goto dflt;	/* int() of a container: TypeError */
	if ((r = check_usable(ev, n, v->name != NULL ? v->name : "?")) != 0)
		goto out;
	k = kind_of(n);
	if (k == ENVCTL_YNULL)
		goto dflt;
	if (k == ENVCTL_YSTR && !is_ascii(n->str, n->len)) {
		r = unsupported(x->t, x->at, "filter 'int' of non-ASCII text");
		goto out;
	}
	if (k == ENVCTL_YSTR && py_int(n->str, n->len, (int)base, &res) == 0)
		goto done;
	if (k == ENVCTL_YINT || k == ENVCTL_YBOOL) {
		if ((r = yscalar_text(&b, n, ev->err)) != 0)
			goto out;
		buf_addstr(&res, strcmp(b.data, "True") == 0 ? "1" :
		    strcmp(b.data, "False") == 0 ? "0" : b.data);
		goto done;
	}
	if (k == ENVCTL_YFLOAT) {
		if ((r = yscalar_text(&b, n, ev->err)) != 0)
			goto out;
		d = strtod(b.data, NULL);
		if (strcmp(b.data, "nan") == 0)
			d = NAN;
	} else if (py_float(n->str, n->len, &d) != 0)
		goto dflt;
	if (isnan(d))
		goto dflt;
	if (isinf(d)) {
		r = fail(x->t, ENVCTL_EINVALID, x->at, "filter 'int' of "
		    "infinity: Ansible fails (cannot convert float infinity "
		    "to integer)");
		goto out;
	}
	/* Past 2^62 every double is an integer already. */
	if (d > -4.6e18 && d < 4.6e18)
		d = (double)(long long)d;
	buf_addf(&res, "%.0f", d);
	if (strcmp(res.data, "-0") == 0) {
		buf_reset(&res);
		buf_addch(&res, '0');
	}
 done:
	set_node(v, mk_scalar(ev, ENVCTL_YINT, res.data, res.len), NULL);
	goto out;
 dflt:
	if (fa->set[0])
		*v = fa->a[0];
	else
		set_node(v, mk_scalar(ev, ENVCTL_YINT, "0", 1), NULL);
 out:
	buf_release(&b);
	buf_release(&res);
	return r;
}

static int
f_join(struct px *x, struct val *v, struct fargs *fa)
{
	const struct ynode **items = NULL;
	struct buf sep = ENVCTL_BUF_INIT, res;
	struct val item;
	size_t n, i;
	int r;

	buf_init(&res, x->t->ev->cap);
	if ((r = iter_items(x, v, "join", &items, &n)) != 0)
		goto out;
	if (fa->set[0] && (r = arg_str(x, &fa->a[0], &sep)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (i > 0 && buf_add(&res, sep.data, sep.len) != 0) {
			r = fail(x->t, ENVCTL_ETOOBIG, x->at, "expanded value "
			    "exceeds the %zu-byte limit", res.cap);
			goto out;
		}
		set_node(&item, items[i], v->v.scope);
		item.name = v->name;
		if ((r = val_str(x, &item, &res, 0)) != 0)
			goto out;
	}
	set_str(x->t->ev, v, res.data, res.len);
 out:
	free(items);
	buf_release(&sep);
	buf_release(&res);
	return r;
}

static int
f_firstlast(struct px *x, struct val *v, int last)
{
	const struct ynode **items = NULL;
	const char *name = last ? "last" : "first";
	size_t n;
	int r;

	if ((r = iter_items(x, v, name, &items, &n)) != 0)
		goto out;
	if (n == 0)
		set_undefined(x, v, "filter '%s' of an empty %s: no %s item",
		    name, pytype(v->v.node), name);
	else {
		set_node(v, items[last ? n - 1 : 0], v->v.scope);
	}
 out:
	free(items);
	return r;
}

/* The filters: name, positional parameters' names (NULL-ended). */
static const struct filter {
	const char	*name;
	const char	*params[MAX_ARGS + 1];
} filters[] = {
	{ "default", { "default_value", "boolean", NULL } },
	{ "d", { "default_value", "boolean", NULL } },
	{ "lower", { NULL } },
	{ "upper", { NULL } },
	{ "trim", { "chars", NULL } },
	{ "replace", { "old", "new", "count", NULL } },
	{ "int", { "default", "base", NULL } },
	{ "string", { NULL } },
	{ "join", { "d", NULL } },
	{ "first", { NULL } },
	{ "last", { NULL } },
};

static int
apply(struct px *x, const struct filter *f, struct val *v, struct fargs *fa)
{
	struct buf b = ENVCTL_BUF_INIT;
	int r = 0, t;

	switch (f->name[0] == 'd' ? 'D' : f->name[0]) {
	case 'D':
		if (v->v.kind == ENVCTL_TVAL_UNDEFINED)
			goto dflt;
		if (!fa->set[1])
			break;
		if ((r = truthy(x, &fa->a[1], &t)) != 0 || !t)
			break;
		if ((r = truthy(x, v, &t)) != 0 || t)
			break;
 dflt:
		if (fa->set[0])
			*v = fa->a[0];
		else
			set_str(x->t->ev, v, "", 0);
		break;
	case 'l':
		if (strcmp(f->name, "last") == 0)
			r = f_firstlast(x, v, 1);
		else
			r = f_case(x, v, 0);
		break;
	case 'u':
		r = f_case(x, v, 1);
		break;
	case 't':
		r = f_trim(x, v, fa);
		break;
	case 'r':
		r = f_replace(x, v, fa);
		break;
	case 'i':
		r = f_int(x, v, fa);
		break;
	case 's':
		if ((r = val_str(x, v, &b, 0)) == 0)
			set_str(x->t->ev, v, b.data, b.len);
		break;
	case 'j':
		r = f_join(x, v, fa);
		break;
	case 'f':
		r = f_firstlast(x, v, 0);
		break;
	}
	buf_release(&b);
	return r;
}

/* ---- the parser ---- */

/* Parses "| name(args)" after the value in *v, applying it when eval. */
static int
parse_filter(struct px *x, struct val *v)
{
	const struct filter *f = NULL;
	struct fargs fa;
	char *kw = NULL;
	size_t i, fs = x->ts, fe = x->te;
	int r, j, pos = 0, kwseen = 0;

	memset(&fa, 0, sizeof(fa));
	if (x->tok != T_NAME) {
		r = x->tok == T_END ? fail(x->t, ENVCTL_EPARSE, x->at,
		    "expected a filter name after '|'") :
		    refuse_tok(x, "a filter name");
		goto out;
	}
	for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		if (strlen(filters[i].name) == fe - fs &&
		    memcmp(filters[i].name, x->t->text + fs, fe - fs) == 0)
			f = &filters[i];
	if ((r = next(x)) != 0)
		goto out;
	if (x->tok == T_DOT) {
		r = unsupported(x->t, x->at, "filter '%.*s.'", (int)(fe - fs),
		    x->t->text + fs);
		goto out;
	}
	if (f == NULL) {
		r = unsupported(x->t, x->at, "filter '%.*s'",
		    (int)(fe - fs > 32 ? 32 : fe - fs), x->t->text + fs);
		goto out;
	}
	if (x->tok == T_LPAREN) {
		if ((r = next(x)) != 0)
			goto out;
		while (x->tok != T_RPAREN) {
			free(kw);
			kw = NULL;
			j = pos;
			if (x->tok == T_NAME) {
				size_t back = x->ts;

				kw = xstrndup(x->t->text + x->ts,
				    x->te - x->ts);
				if ((r = next(x)) != 0)
					goto out;
				if (x->tok != T_ASSIGN) {
					/* Not a keyword: read it again. */
					free(kw);
					kw = NULL;
					x->p = back;
				}
				if ((r = next(x)) != 0)
					goto out;
			}
			if (kw != NULL) {
				for (j = 0; f->params[j] != NULL; j++)
					if (strcmp(f->params[j], kw) == 0)
						break;
				if (f->params[j] == NULL) {
					r = unsupported(x->t, x->at, "argument "
					    "'%s' of filter '%s'", kw,
					    f->name);
					goto out;
				}
				kwseen = 1;
			} else if (kwseen) {
				r = fail(x->t, ENVCTL_EPARSE, x->at,
				    "positional argument after a keyword "
				    "argument");
				goto out;
			} else
				pos++;
			if (j >= MAX_ARGS || f->params[j] == NULL) {
				r = unsupported(x->t, x->at, "filter '%s' "
				    "takes %d argument%s", f->name, j,
				    j == 1 ? "" : "s");
				goto out;
			}
			if (fa.set[j]) {
				r = unsupported(x->t, x->at, "argument '%s' "
				    "of filter '%s' given twice",
				    f->params[j], f->name);
				goto out;
			}
			if ((r = parse_expr(x, &fa.a[j])) != 0)
				goto out;
			fa.set[j] = 1;
			if (x->tok == T_COMMA) {
				if ((r = next(x)) != 0)
					goto out;
			} else if (x->tok != T_RPAREN) {
				r = x->tok == T_END ? unsupported(x->t, x->at,
				    "expected ')'") : refuse_tok(x, "')'");
				goto out;
			}
		}
		if ((r = next(x)) != 0)
			goto out;
	}
	if (strcmp(f->name, "replace") == 0 && (!fa.set[0] || !fa.set[1])) {
		r = unsupported(x->t, x->at, "filter 'replace' needs old and "
		    "new");
		goto out;
	}
	if (x->eval)
		r = apply(x, f, v, &fa);
 out:
	free(kw);
	return r;
}

/* A name or literal, (expr), and its subscripts. */
static int
parse_postfix(struct px *x, struct val *v)
{
	struct ev *ev = x->t->ev;
	const char *s = x->t->text + x->ts;
	struct template_val tv;
	struct val key;
	size_t n = x->te - x->ts;
	char *name = NULL;
	int r = 0;

	memset(v, 0, sizeof(*v));
	if (++x->nest > MAX_NEST) {
		r = unsupported(x->t, x->at, "more than %d levels of nesting",
		    MAX_NEST);
		goto out;
	}
	switch (x->tok) {
	case T_NAME:
		name = xstrndup(s, n);
		if (in_words((const char *const[]){ "true", "True", NULL },
		    name))
			set_node(v, mk_scalar(ev, ENVCTL_YBOOL, "True", 4),
			    NULL);
		else if (in_words((const char *const[]){ "false", "False",
		    NULL }, name))
			set_node(v, mk_scalar(ev, ENVCTL_YBOOL, "False", 5),
			    NULL);
		else if (in_words((const char *const[]){ "none", "None",
		    NULL }, name))
			set_node(v, mk_scalar(ev, ENVCTL_YNULL, "", 0), NULL);
		else if (in_words((const char *const[]){ "and", "or", "not",
		    "in", "is", "if", "else", NULL }, name)) {
			r = refuse_tok(x, "a value");
			goto out;
		} else if (x->eval) {
			memset(&tv, 0, sizeof(tv));
			if ((r = ev->ops->lookup(ev->ctx, x->t->scope, name,
			    ev->doc, &tv, ev->err)) != 0)
				goto out;
			v->v = tv;
			v->name = keep_str(ev, xstrdup(name));
			if (tv.kind == ENVCTL_TVAL_UNDEFINED)
				set_undefined(x, v, "undefined variable '%s'",
				    name);
			else if ((r = resolve(ev, v, v->name,
			    tv.keep_raw)) != 0)
				goto out;
		}
		break;
	case T_STR:
		set_str(ev, v, x->tv.data, x->tv.len);
		break;
	case T_INT:
		set_node(v, mk_scalar(ev, ENVCTL_YINT, x->tv.data, x->tv.len),
		    NULL);
		break;
	case T_MINUS:
		if ((r = next(x)) != 0)
			goto out;
		if (x->tok != T_INT) {
			r = unsupported(x->t, x->at, "operator '-'");
			goto out;
		}
		name = xasprintf("-%s", x->tv.data);
		set_node(v, mk_scalar(ev, ENVCTL_YINT, strcmp(name, "-0") ==
		    0 ? "0" : name, strcmp(name, "-0") == 0 ? 1 :
		    strlen(name)), NULL);
		if ((r = next(x)) != 0)
			goto out;
		if (x->tok == T_DOT || x->tok == T_LBRACK ||
		    x->tok == T_LPAREN)
			r = unsupported(x->t, x->at, "operator '-'");
		goto out;
	case T_LPAREN:
		if ((r = next(x)) != 0 || (r = parse_expr(x, v)) != 0)
			goto out;
		if (x->tok == T_COMMA) {
			r = unsupported(x->t, x->at, "tuple");
			goto out;
		}
		if (x->tok != T_RPAREN) {
			r = x->tok == T_END ? unsupported(x->t, x->at,
			    "expected ')'") : refuse_tok(x, "')'");
			goto out;
		}
		break;
	case T_END:
		r = fail(x->t, ENVCTL_EPARSE, x->at, "expected a value before "
		    "'}}'");
		goto out;
	default:
		r = refuse_tok(x, "a value");
		goto out;
	}
	if ((r = next(x)) != 0)
		goto out;
	for (;;) {
		int attr = x->tok == T_DOT;

		if (x->tok == T_LPAREN) {
			r = unsupported(x->t, x->at, "call");
			goto out;
		}
		if (x->tok != T_DOT && x->tok != T_LBRACK)
			break;
		if ((r = next(x)) != 0)
			goto out;
		if (attr) {
			if (x->tok != T_NAME && x->tok != T_INT) {
				r = refuse_tok(x, "an attribute name");
				goto out;
			}
			if (x->tok == T_NAME)
				set_str(ev, &key, x->t->text + x->ts,
				    x->te - x->ts);
			else {
				set_node(&key, mk_scalar(ev, ENVCTL_YINT,
				    x->tv.data, x->tv.len), NULL);
				attr = 0;
			}
			if ((r = next(x)) != 0)
				goto out;
		} else {
			if (x->tok == T_RBRACK) {
				r = refuse_tok(x, "an index");
				goto out;
			}
			if ((r = parse_expr(x, &key)) != 0)
				goto out;
			if (x->tok == T_OTHER && x->t->text[x->ts] == ':') {
				r = unsupported(x->t, x->at, "slice");
				goto out;
			}
			if (x->tok != T_RBRACK) {
				r = x->tok == T_END ? unsupported(x->t, x->at,
				    "expected ']'") : refuse_tok(x, "']'");
				goto out;
			}
			if ((r = next(x)) != 0)
				goto out;
		}
		if (x->eval && (r = subscript(x, v, &key, attr)) != 0)
			goto out;
	}
 out:
	x->nest--;
	free(name);
	return r;
}

/* postfix ("|" filter)* */
static int
parse_filtered(struct px *x, struct val *v)
{
	int r;

	if ((r = parse_postfix(x, v)) != 0)
		return r;
	while (x->tok == T_PIPE) {
		if ((r = next(x)) != 0 || (r = parse_filter(x, v)) != 0)
			return r;
	}
	return 0;
}

/* filtered ("~" filtered)* */
static int
parse_expr(struct px *x, struct val *v)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct val rhs;
	int r, cat = 0;

	if ((r = parse_filtered(x, v)) != 0)
		goto out;
	while (x->tok == T_TILDE) {
		if (x->eval && !cat && (r = val_str(x, v, &b, 0)) != 0)
			goto out;
		cat = 1;
		if ((r = next(x)) != 0 || (r = parse_filtered(x, &rhs)) != 0)
			goto out;
		if (x->eval && (r = val_str(x, &rhs, &b, 0)) != 0)
			goto out;
	}
	if (cat && x->eval)
		set_str(x->t->ev, v, b.data, b.len);
 out:
	buf_release(&b);
	return r;
}

/*
 * The "{{" at "at": its value into *v (eval) or its syntax checked; *endp
 * gets the offset past its "}}".
 */
static int
parse_one(struct tpl *t, size_t at, int eval, struct val *v, size_t *endp)
{
	struct px x;
	int r, c;

	memset(&x, 0, sizeof(x));
	buf_init(&x.tv, 0);
	x.t = t;
	x.at = at;
	x.eval = eval;
	x.end = find_close(t, at);
	if (x.end == t->len) {
		r = fail(t, ENVCTL_EPARSE, at, "unterminated '{{': no closing "
		    "'}}'");
		goto out;
	}
	c = at + 2 < t->len ? t->text[at + 2] : 0;
	if (c == '-' || c == '+' || t->text[x.end - 1] == '-' ||
	    t->text[x.end - 1] == '+') {
		r = unsupported(t, at, "whitespace control");
		goto out;
	}
	x.p = at + 2;
	if ((r = next(&x)) != 0)
		goto out;
	if (x.tok == T_END) {
		r = fail(t, ENVCTL_EPARSE, at, "empty expression '{{ }}'");
		goto out;
	}
	if ((r = parse_expr(&x, v)) != 0)
		goto out;
	if (x.tok != T_END) {
		r = refuse_tok(&x, "'}}'");
		goto out;
	}
	*endp = x.end + 2;
 out:
	buf_release(&x.tv);
	return r;
}

/* Refuses a list or mapping printed into an environment value. */
static int
check_whole(struct tpl *t, size_t at, const struct val *v)
{
	const struct ynode *n = v->v.node;

	if (v->v.kind != ENVCTL_TVAL_NODE || n->type == ENVCTL_YSCALAR)
		return 0;
	/* Where it is defined, as its other problems are. */
	if (v->name != NULL && n->path != NULL && n->line > 0)
		return err_setat(t->ev->err, ENVCTL_EINVALID, n->path,
		    n->line, n->col, "variable '%s' is %s; only strings, "
		    "numbers and booleans can be used", v->name,
		    ynode_describe(n));
	if (v->name != NULL)
		return fail(t, ENVCTL_EINVALID, at, "variable '%s' is %s; only "
		    "strings, numbers and booleans can be used", v->name,
		    ynode_describe(v->v.node));
	return fail(t, ENVCTL_EINVALID, at, "a value that is %s; only "
	    "strings, numbers and booleans can be used",
	    ynode_describe(v->v.node));
}

/*
 * Runs template t into out: syntax first (Jinja compiles the whole
 * template before it runs it), then each piece in order.  top: the env
 * value, where lists and mappings are refused.
 */
static int
run(struct tpl *t, struct buf *out, int top)
{
	struct val v;
	size_t start = out->len, i, next_at, end = 0;
	const char *brace;
	int pass, r = 0;

	for (pass = 0; pass < 2; pass++) {
		i = 0;
		while (i < t->len) {
			if (t->text[i] == '{' && i + 1 < t->len &&
			    t->text[i + 1] == '{') {
				if (top)
					t->ev->root_at = i;
				if ((r = parse_one(t, i, pass, &v, &end)) != 0)
					goto out;
				if (pass == 1 && top &&
				    (r = check_whole(t, i, &v)) != 0)
					goto out;
				if (pass == 1 && (r = val_str(&(struct px){
				    .t = t, .at = i }, &v, out, 1)) != 0)
					goto out;
				i = end;
				continue;
			}
			if (t->text[i] == '{' && i + 1 < t->len &&
			    (t->text[i + 1] == '%' || t->text[i + 1] == '#')) {
				r = unsupported(t, i, t->text[i + 1] == '%' ?
				    "statement" : "comment");
				goto out;
			}
			brace = memchr(t->text + i + 1, '{', t->len - i - 1);
			next_at = brace != NULL ? (size_t)(brace - t->text) :
			    t->len;
			if (pass == 0) {
				i = next_at;
				continue;
			}
			/* Jinja normalises the newlines of the text. */
			for (; i < next_at && r == 0; i++)
				if (t->text[i] == '\r')
					r = buf_addch(out, '\n'), i +=
					    i + 1 < next_at &&
					    t->text[i + 1] == '\n';
				else
					r = buf_addch(out, t->text[i]);
			if (r != 0) {
				r = fail(t, ENVCTL_ETOOBIG, i, "expanded text "
				    "exceeds the %zu-byte limit", out->cap);
				goto out;
			}
		}
	}
 out:
	if (r != 0)
		buf_truncate(out, start);
	return r;
}


/*
 * The template a variable's error came through, for the message: its
 * line holding offset at, shortened, controls as '?' (caller frees).
 */
static char *
used_in(const char *text, size_t len, size_t at)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i, bol = at < len ? at : len;

	while (bol > 0 && text[bol - 1] != '\n')
		bol--;
	for (i = bol; i < len && text[i] != '\n' && i - bol < SNIPPET_MAX;
	    i++)
		buf_addch(&b, (unsigned char)text[i] < 0x20 ||
		    text[i] == 0x7f ? '?' : text[i]);
	if (i < len && text[i] != '\n')
		buf_addstr(&b, "...");
	return buf_detach(&b, NULL);
}

int
template_expand(struct buf *out, const char *text, size_t len,
    const struct template_pos *pos, const struct template_ops *ops,
    void *ctx, const void *scope, struct err *err)
{
	struct err e = ENVCTL_ERR_INIT;
	struct template_val tv;
	struct ev ev;
	struct tpl t;
	struct ynode *parsed = NULL;
	size_t start = out->len, ns, nl, i;
	char *name = NULL, *msg, *snip;
	int r;

	memset(&ev, 0, sizeof(ev));
	ev.ops = ops;
	ev.ctx = ctx;
	ev.doc = ydoc_new("(template)");
	ev.cap = out->cap > 0 ? out->cap : NESTED_CAP;
	ev.err = &e;
	memset(&t, 0, sizeof(t));
	t.ev = &ev;
	t.text = text;
	t.len = len;
	t.pos.path = pos != NULL ? pos->path : NULL;
	t.pos.line = pos != NULL ? pos->line : 1;
	t.pos.col = pos != NULL ? pos->col : 1;
	t.scope = scope;
	if (!template_has_syntax(text, len)) {
		if ((r = buf_add(out, text, len)) != 0)
			r = fail(&t, ENVCTL_ETOOBIG, 0, "expanded text exceeds "
			    "the %zu-byte limit", out->cap);
		goto out;
	}
	if ((r = run(&t, out, 1)) != 0)
		goto out;
	/* Ansible's value of exactly "{{ x }}" with x null is None. */
	if (single_var(text, len, &ns, &nl)) {
		name = xstrndup(text + ns, nl);
		memset(&tv, 0, sizeof(tv));
		if ((r = ops->lookup(ctx, scope, name, ev.doc, &tv, &e)) != 0)
			goto out;
		if (tv.kind == ENVCTL_TVAL_NODE &&
		    tv.node->type == ENVCTL_YSCALAR &&
		    !is_opaque_scalar(tv.node) &&
		    kind_of(tv.node) == ENVCTL_YNULL) {
			r = fail(&t, ENVCTL_EINVALID, 0, "variable '%s' is "
			    "null, and Ansible's value for '{{ %s }}' is "
			    "None, not a string ('{{ %s | default(\"\", "
			    "true) }}' gives an empty one)", name, name,
			    name);
			goto out;
		}
	}
	/* A result Ansible would read as a list or a dict. */
	if (out->len > start && (out->data[start] == '[' ||
	    out->data[start] == '{')) {
		struct err pe = ENVCTL_ERR_INIT;

		struct buf again = ENVCTL_BUF_INIT;

		r = pyvalue_parse(ev.doc, out->data + start, out->len - start,
		    1, 1, &parsed, &pe);
		err_release(&pe);
		if (r == 0 && parsed->type != ENVCTL_YSCALAR &&
		    (pyvalue_str(&again, parsed, NULL) != 0 ||
		    again.len != out->len - start || memcmp(again.data,
		    out->data + start, again.len) != 0)) {
			r = fail(&t, ENVCTL_EINVALID, 0, "the value reads as "
			    "a Python %s, which Ansible would make of it and "
			    "print as '%.40s%s'; only strings, numbers and "
			    "booleans can be used", parsed->type ==
			    ENVCTL_YSEQ ? "list" : "dict", again.data,
			    again.len > 40 ? "..." : "");
			buf_release(&again);
			goto out;
		}
		buf_release(&again);
		r = 0;
	}
 out:
	if (r != 0) {
		/* An error in a variable's template: say where it was used. */
		if (e.path != NULL && (t.pos.path == NULL ||
		    strcmp(e.path, t.pos.path) != 0 ||
		    e.line < t.pos.line)) {
			int line = t.pos.line;

			for (i = 0; i < ev.root_at && i < len; i++)
				line += text[i] == '\n';
			snip = used_in(text, len, ev.root_at);
			msg = xasprintf("%s (used at %s:%d in '%s')", e.msg,
			    t.pos.path != NULL ? t.pos.path : "(template)",
			    line, snip);
			free(snip);
			free(e.msg);
			e.msg = msg;
		}
		buf_truncate(out, start);
		if (err != NULL) {
			err_release(err);
			err_move(err, &e);
		}
	}
	err_release(&e);
	for (i = 0; i < ev.nwhys; i++) {
		err_release(ev.whys[i]);
		free(ev.whys[i]);
	}
	free(ev.whys);
	ydoc_free(ev.doc);
	free(name);
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
