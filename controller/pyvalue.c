/*
 * pyvalue.c - Python literals as ast.literal_eval() reads them, and values
 * as str() and repr() print them (see pyvalue.h).
 *
 * The reader is one recursive descent over the text that parses and
 * evaluates at once, in the order Python 3.11 does: the whole text is
 * parsed first (a SyntaxError wins over everything), then _convert() walks
 * the tree left to right, a dict converting each key and value and then
 * hashing the key, a set hashing each element as it comes.  So a
 * ValueError or TypeError is kept only when it is the first one Python
 * would raise, and a value envctl cannot hold (set, complex, Ellipsis...)
 * is only reported when Python would succeed.  Operands of unary and
 * binary + and - are never converted by Python when they are not number
 * literals, so whatever was recorded inside them is dropped again.
 *
 * Behaviour checked against /usr/bin/python3 (3.11.2) by
 * tests/unit/check_pyvalue.c; notes on what Python does:
 * - literal_eval() strips leading spaces and tabs only; a first non-blank
 *   line indented after a blank one is an IndentationError; "\f" resets
 *   the indentation; "\r\n" and "\r" are newlines; NUL is refused.
 * - the tokenizer allows 200 open brackets ("too many nested
 *   parentheses" past that), but the parser's stack may overflow at 200
 *   already (MemoryError, e.g. "(1, " 200 times); a few thousand chained
 *   + or - hit RecursionError.  Ansible catches neither, so from 200
 *   brackets or 1000 operators on the text is refused: ENVCTL_ETOOBIG.
 * - decimal int literals of more than 4300 digits are a SyntaxError
 *   (sys.int_info.default_max_str_digits); hex/octal/binary ones parse,
 *   but Python cannot print them past 4300 digits: refused here.
 * - "-" applies to one number literal only ("--1", "-True" are
 *   ValueErrors); "+"/"-" between numbers only make a complex
 *   ("1+2j"; "1+2" is a ValueError).
 * - dict keys are equal as Python compares them (1 == 1.0 == True): the
 *   first key is kept with the last value.
 * - a bytes literal at the top is decoded as UTF-8, as Ansible's
 *   to_text() does with what literal_eval() returns; ynodes cannot hold
 *   bytes, so non-UTF-8 bytes and bytes inside containers are refused.
 * - "\N{...}" needs Unicode's name table, which envctl does not carry:
 *   refused.  A tuple as a dict key is refused (keys are scalars).
 * A tuple is a sequence tagged PV_TUPLE_TAG ("!envctl-tuple") so that
 * repr() and str() print "(1, 2)" as Python does; floats are printed by
 * yfloat_repr() (yamldoc.h), as Python's repr().
 * A TypeError (unhashable key) is ENVCTL_EINVALID: Ansible does not catch
 * it, so the whole source fails.  When text this reader does not parse
 * (a name, another operator) follows such a key, Python's answer is either
 * that TypeError or a SyntaxError; ENVCTL_EINVALID refuses both.
 */
#include "controller/pyvalue.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/pylit.h"
#include "controller/yamldoc.h"

/*
 * Python's tokenizer refuses a 201st open bracket, but its parser's stack
 * can already overflow at 200 (MemoryError, which Ansible does not
 * catch), and chains of a few thousand + and - overflow Python's
 * recursion limit: beyond these, where Python's answer depends on its
 * parser's internals, the text is refused (ENVCTL_ETOOBIG).
 */
#define PV_MAX_NEST	199
#define PV_MAX_CHAIN	1000
/* sys.int_info.default_max_str_digits */
#define PV_MAX_DIGITS	4300
/* A tuple is a sequence with this tag, so that repr() prints "(1, 2)". */
#define PV_TUPLE_TAG	"!envctl-tuple"

/* What envctl cannot hold; they read after "is" and "holds". */
static const char PV_SET_VALUE[] = "a Python set";
static const char PV_COMPLEX_NUM[] = "a Python complex number";
static const char PV_BIGINT[] = "an integer of more than 4300 digits "
    "(Python cannot print it)";

enum pv_kind {
	PV_STR,
	PV_BYTES,
	PV_INT,
	PV_FLOAT,
	PV_COMPLEX,
	PV_BOOL,
	PV_NONE,
	PV_ELLIPSIS,
	PV_LIST,
	PV_TUPLE,
	PV_DICT,
	PV_SET,
};

enum pv_raised {
	PV_RAISED_NONE,
	PV_RAISED_VALUE,	/* ValueError: Ansible keeps the text */
	PV_RAISED_TYPE,		/* TypeError: unhashable */
};

/* What converting the text so far has done, in Python's order. */
struct pv_state {
	enum pv_raised	 raised;
	const char	*what;	/* ValueError, or the unhashable type */
	const char	*unsup;	/* first value envctl cannot hold */
};

struct pv {
	struct ydoc	*doc;
	const char	*s;		/* the text, newlines made "\n" */
	size_t		 len;
	size_t		 i;
	int		 line;
	int		 col;
	int		 depth;		/* open brackets */
	char		 open[PV_MAX_NEST];	/* ...which */
	const char	*abort;		/* parsing stopped: why */
	size_t		 aborti;	/* ...where */
	int		 definite;	/* what Python does (pv_stop) */
	struct pv_state	 st;
	struct buf	 tmp;
};

struct pv_val {
	struct ynode	*node;		/* NULL: none (or an error) */
	enum pv_kind	 kind;
	const char	*unhashable;	/* type name, NULL: hashable */
	int		 constant;	/* a number literal (parens too) */
	int		 signednum;	/* a number literal, or +/- one */
};

enum pv_stop {
	PV_MAYBE,	/* valid Python, or not: either way no literal */
	PV_SYNTAX,	/* surely a SyntaxError */
	PV_TOOBIG,	/* past what Python's parser surely handles */
};

/* Stops parsing; definite says what Python would do (enum pv_stop). */
static int
stop(struct pv *p, int definite, const char *why)
{
	if (p->abort == NULL) {
		p->abort = why;
		p->aborti = p->i;
		p->definite = definite;
	}
	return -1;
}

static void
raise_value(struct pv *p, const char *why)
{
	if (p->st.raised == PV_RAISED_NONE) {
		p->st.raised = PV_RAISED_VALUE;
		p->st.what = why;
	}
}

static void
raise_type(struct pv *p, const char *type)
{
	if (p->st.raised == PV_RAISED_NONE) {
		p->st.raised = PV_RAISED_TYPE;
		p->st.what = type;
	}
}

static void
unsupported(struct pv *p, const char *what)
{
	if (p->st.unsup == NULL)
		p->st.unsup = what;
}

static int
at(const struct pv *p, size_t off)
{
	return p->i + off < p->len ? (unsigned char)p->s[p->i + off] : -1;
}

static int
is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/*
 * Skips what separates tokens: blanks, comments, line continuations and,
 * inside brackets, newlines.
 */
static int
skip(struct pv *p)
{
	int c;

	while ((c = at(p, 0)) != -1) {
		if (c == ' ' || c == '\t' || c == '\f')
			p->i++;
		else if (c == '#') {
			while ((c = at(p, 0)) != -1 && c != '\n')
				p->i++;
		} else if (c == '\n' && p->depth > 0)
			p->i++;
		else if (c == '\\') {
			if (at(p, 1) != '\n')
				return stop(p, PV_SYNTAX, "unexpected "
				    "character after line continuation "
				    "character");
			p->i += 2;
			if (at(p, 0) == -1)
				return stop(p, PV_SYNTAX, "unexpected EOF "
				    "while parsing");
		} else
			break;
	}
	return 0;
}

static struct ynode *
scalar(struct pv *p, enum yscalar_kind kind, const char *s, size_t len)
{
	return ydoc_add_scalar(p->doc, kind, s, len, p->line, p->col);
}

/* --- numbers ----------------------------------------------------------- */

/*
 * Converts the digits of base (underscores skipped) to canonical decimal
 * text in out; ENVCTL_ETOOBIG past PV_MAX_DIGITS decimal digits.
 */
static int
to_decimal(struct buf *out, const char *s, size_t len, unsigned base)
{
	uint32_t *limb = NULL;	/* base 1e9, least significant first */
	size_t n = 0, alloc = 0, i, k, digits;
	const size_t maxlimbs = PV_MAX_DIGITS / 9 + 2;
	uint64_t carry;
	unsigned d;
	int r = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '_')
			continue;
		d = s[i] <= '9' ? (unsigned)(s[i] - '0') :
		    (unsigned)((s[i] | 0x20) - 'a' + 10);
		carry = d;
		for (k = 0; k < n; k++) {
			carry += (uint64_t)limb[k] * base;
			limb[k] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
		if (carry != 0) {
			if (n == maxlimbs) {
				r = ENVCTL_ETOOBIG;
				goto out;
			}
			ENVCTL_GROW(limb, n + 1, alloc);
			limb[n++] = (uint32_t)carry;
		}
	}
	if (n == 0) {
		buf_addch(out, '0');
		goto out;
	}
	buf_addf(out, "%u", (unsigned)limb[n - 1]);
	for (k = n - 1; k-- > 0;)
		buf_addf(out, "%09u", (unsigned)limb[k]);
	digits = out->len;
	if (digits > PV_MAX_DIGITS)
		r = ENVCTL_ETOOBIG;
out:
	free(limb);
	return r;
}

/* [0-9](_?[0-9])*: the length read; 0 and a stop when "_" is not so. */
static size_t
digitpart(struct pv *p, int *bad)
{
	size_t start = p->i;
	int c;

	*bad = 0;
	if ((c = at(p, 0)) < '0' || c > '9')
		return 0;
	p->i++;
	for (;;) {
		c = at(p, 0);
		if (c == '_') {
			c = at(p, 1);
			if (c < '0' || c > '9') {
				*bad = 1;
				return 0;
			}
			p->i += 2;
		} else if (c >= '0' && c <= '9')
			p->i++;
		else
			break;
	}
	return p->i - start;
}

static int
is_digit_of(int c, unsigned base)
{
	if (base == 16)
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		    (c >= 'A' && c <= 'F');
	return c >= '0' && c < '0' + (int)base;
}

/* A number literal: int, float or imaginary. */
static int
number(struct pv *p, struct pv_val *v)
{
	size_t start = p->i, n;
	unsigned base = 10;
	int c, bad, isfloat = 0, imag = 0, r = 0;
	struct buf text = ENVCTL_BUF_INIT;
	double d;

	v->constant = v->signednum = 1;
	c = at(p, 1) | 0x20;
	if (at(p, 0) == '0' && (c == 'x' || c == 'o' || c == 'b')) {
		base = c == 'x' ? 16 : c == 'o' ? 8 : 2;
		p->i += 2;
		start = p->i;
		n = 0;
		for (;;) {
			int under = at(p, 0) == '_';

			if (!is_digit_of(at(p, (size_t)under), base)) {
				if (under || n == 0)
					return stop(p, PV_SYNTAX,
					    "invalid integer literal");
				break;
			}
			p->i += (size_t)under + 1;
			n++;
		}
		if (is_ident(at(p, 0)))
			return stop(p, is_digit_of(at(p, 0), 10),
			    "invalid integer literal");
		v->kind = PV_INT;
		r = to_decimal(&text, p->s + start, p->i - start, base);
		if (r != 0)
			unsupported(p, PV_BIGINT);
		else
			v->node = scalar(p, ENVCTL_YINT, text.data, text.len);
		r = 0;
		goto out;
	}
	n = digitpart(p, &bad);
	if (bad)
		return stop(p, PV_SYNTAX, "invalid decimal literal");
	if (at(p, 0) == '.') {
		p->i++;
		isfloat = 1;
		if (digitpart(p, &bad) == 0 && (bad || at(p, 0) == '_'))
			return stop(p, PV_SYNTAX, "invalid decimal literal");
	}
	if ((at(p, 0) | 0x20) == 'e') {
		size_t save = p->i;

		p->i++;
		if (at(p, 0) == '+' || at(p, 0) == '-')
			p->i++;
		if (digitpart(p, &bad) == 0) {
			/* "1else" is 1 and a keyword to Python. */
			c = p->s[save + 1 < p->len ? save + 1 : save];
			p->i = save;
			return stop(p, bad || !is_ident(c) ||
			    (c >= '0' && c <= '9'), "invalid decimal literal");
		}
		isfloat = 1;
	}
	if ((at(p, 0) | 0x20) == 'j') {
		p->i++;
		imag = 1;
	}
	if (is_ident(at(p, 0)))
		return stop(p, PV_MAYBE, "invalid decimal literal");
	if (imag) {
		v->kind = PV_COMPLEX;
		unsupported(p, PV_COMPLEX_NUM);
		goto out;
	}
	for (size_t k = start; k < p->i; k++)
		if (p->s[k] != '_')
			buf_addch(&text, p->s[k]);
	if (isfloat) {
		v->kind = PV_FLOAT;
		d = strtod(text.data, NULL);
		buf_reset(&text);
		yfloat_repr(&text, d);
		v->node = scalar(p, ENVCTL_YFLOAT, text.data, text.len);
		goto out;
	}
	(void)n;
	if (text.data[0] == '0' && text.data[strspn(text.data, "0")] != '\0') {
		r = stop(p, PV_SYNTAX, "leading zeros in decimal integer "
		    "literals are not permitted");
		goto out;
	}
	if (text.data[0] != '0' && text.len > PV_MAX_DIGITS) {
		r = stop(p, PV_SYNTAX, "exceeds the limit (4300 digits) for "
		    "integer string conversion");
		goto out;
	}
	v->kind = PV_INT;
	if (text.data[0] == '0')
		v->node = scalar(p, ENVCTL_YINT, "0", 1);
	else
		v->node = scalar(p, ENVCTL_YINT, text.data, text.len);
	r = 0;
out:
	buf_release(&text);
	return r;
}

/* --- strings ----------------------------------------------------------- */

/* Length of a string prefix at p->i followed by a quote, or -1. */
static int
string_prefix(const struct pv *p)
{
	int n, c, r = 0, b = 0, u = 0, f = 0;

	for (n = 0; n < 3; n++) {
		c = at(p, (size_t)n);
		if (c == '\'' || c == '"')
			break;
		switch (c | 0x20) {
		case 'r':
			r++;
			break;
		case 'b':
			b++;
			break;
		case 'u':
			u++;
			break;
		case 'f':
			f++;
			break;
		default:
			return -1;
		}
	}
	c = at(p, (size_t)n);
	if ((c != '\'' && c != '"') || r > 1 || b > 1 || u > 1 || f > 1)
		return -1;
	/* u stands alone; b and f do not go together. */
	if ((u && n > 1) || (b && f) || n > 2)
		return -1;
	return n;
}

/* Reads n hex digits at s[*k]; -1 when there are fewer. */
static long
hexdigits(const char *s, size_t end, size_t *k, int n)
{
	long v = 0;
	int h;

	for (; n > 0; n--) {
		if (*k >= end || (h = str_hexval((unsigned char)s[*k])) < 0)
			return -1;
		v = v * 16 + h;
		(*k)++;
	}
	return v;
}

/* Decodes the escapes of a str or bytes body s[from, end) into p->tmp. */
static int
unescape(struct pv *p, size_t from, size_t end, int bytes)
{
	const char *s = p->s;
	size_t k = from, q;
	long v;
	int c, n;

	while (k < end) {
		c = (unsigned char)s[k];
		if (c != '\\') {
			buf_addch(&p->tmp, c);
			k++;
			continue;
		}
		c = (unsigned char)s[k + 1];
		k += 2;
		switch (c) {
		case '\n':
			continue;
		case '\\': case '\'': case '"':
			buf_addch(&p->tmp, c);
			continue;
		case 'a':
			buf_addch(&p->tmp, '\a');
			continue;
		case 'b':
			buf_addch(&p->tmp, '\b');
			continue;
		case 'f':
			buf_addch(&p->tmp, '\f');
			continue;
		case 'n':
			buf_addch(&p->tmp, '\n');
			continue;
		case 'r':
			buf_addch(&p->tmp, '\r');
			continue;
		case 't':
			buf_addch(&p->tmp, '\t');
			continue;
		case 'v':
			buf_addch(&p->tmp, '\v');
			continue;
		case 'x':
			if ((v = hexdigits(s, end, &k, 2)) < 0)
				return stop(p, PV_SYNTAX, "truncated "
				    "\\xXX escape");
			goto codepoint;
		}
		if (c >= '0' && c <= '7') {
			v = c - '0';
			for (n = 1; n < 3 && k < end && s[k] >= '0' &&
			    s[k] <= '7'; n++)
				v = v * 8 + (s[k++] - '0');
			goto codepoint;
		}
		if (!bytes && (c == 'u' || c == 'U')) {
			if ((v = hexdigits(s, end, &k, c == 'u' ? 4 : 8)) < 0)
				return stop(p, PV_SYNTAX, "truncated "
				    "\\uXXXX escape");
			if (v > 0x10ffff)
				return stop(p, PV_SYNTAX, "illegal "
				    "Unicode character");
			goto codepoint;
		}
		if (!bytes && c == 'N') {
			/* A name of letters, digits, spaces and hyphens. */
			for (q = k + 1; q < end && s[q] != '}'; q++)
				if (!is_ident((unsigned char)s[q]) &&
				    s[q] != ' ' && s[q] != '-')
					break;
			if (k >= end || s[k] != '{' || q >= end ||
			    s[q] != '}' || q == k + 1)
				return stop(p, PV_SYNTAX, "malformed "
				    "\\N character escape");
			unsupported(p, "a string with a \\N{...} escape "
			    "(envctl has no Unicode name table)");
			k = q + 1;
			continue;
		}
		/* Not an escape: the backslash stays. */
		buf_addch(&p->tmp, '\\');
		k--;
		continue;
codepoint:
		if (bytes)
			buf_addch(&p->tmp, (int)(v & 0xff));
		else {
			if (v >= 0xd800 && v <= 0xdfff)
				unsupported(p, "a string with a lone "
				    "surrogate");
			str_addutf8(&p->tmp, (uint32_t)v);
		}
	}
	return 0;
}

/* One literal at p->i; *bytes and *fstr say what it was. */
static int
string_one(struct pv *p, int *bytes, int *fstr)
{
	int n = string_prefix(p), raw = 0, q, triple, c;
	size_t k, body;

	*bytes = *fstr = 0;
	for (k = 0; k < (size_t)n; k++) {
		c = p->s[p->i + k] | 0x20;
		raw |= c == 'r';
		*bytes |= c == 'b';
		*fstr |= c == 'f';
	}
	p->i += (size_t)n;
	q = at(p, 0);
	triple = at(p, 1) == q && at(p, 2) == q;
	p->i += triple ? 3 : 1;
	body = p->i;
	for (;;) {
		if ((c = at(p, 0)) == -1 || (c == '\n' && !triple))
			return stop(p, PV_SYNTAX, "unterminated string "
			    "literal");
		if (c == q && (!triple || (at(p, 1) == q && at(p, 2) == q)))
			break;
		if (c == '\\') {
			if (at(p, 1) == -1)
				return stop(p, PV_SYNTAX, "unterminated string "
				    "literal");
			p->i++;
		} else if (*bytes && c >= 0x80)
			return stop(p, PV_SYNTAX, "bytes can only contain "
			    "ASCII literal characters");
		p->i++;
	}
	k = p->i;
	p->i += triple ? 3 : 1;
	if (*fstr)
		return 0;
	if (raw) {
		buf_add(&p->tmp, p->s + body, k - body);
		return 0;
	}
	return unescape(p, body, k, *bytes);
}

/* Adjacent literals, concatenated. */
static int
string(struct pv *p, struct pv_val *v)
{
	int bytes, fstr, first = 1, isbytes = 0, anyf = 0;

	buf_reset(&p->tmp);
	do {
		if (string_one(p, &bytes, &fstr) != 0)
			return -1;
		if (!first && bytes != isbytes)
			return stop(p, PV_SYNTAX, "cannot mix bytes and "
			    "nonbytes literals");
		isbytes = bytes;
		anyf |= fstr;
		first = 0;
		if (skip(p) != 0)
			return -1;
	} while (string_prefix(p) >= 0);
	if (anyf)
		return stop(p, PV_MAYBE, "an f-string is no literal");
	v->kind = isbytes ? PV_BYTES : PV_STR;
	v->node = scalar(p, ENVCTL_YSTR, p->tmp.data, p->tmp.len);
	return 0;
}

/* --- containers and operators ------------------------------------------ */

static int expr(struct pv *, struct pv_val *);

/* An item put in a container (bytes cannot be held there). */
static void
contain(struct pv *p, struct ynode *seq, const struct pv_val *item)
{
	if (item->kind == PV_BYTES)
		unsupported(p, "bytes inside a list, tuple, set or dict");
	if (seq != NULL && item->node != NULL)
		yseq_append(seq, item->node);
}

static int
open_bracket(struct pv *p)
{
	if (p->depth >= PV_MAX_NEST)
		return stop(p, PV_TOOBIG, "more than 199 levels of nesting");
	p->open[p->depth++] = p->s[p->i++];
	return skip(p);
}

static int
close_bracket(struct pv *p)
{
	p->depth--;
	p->i++;
	return skip(p);
}

static struct ynode *
new_seq(struct pv *p, int tuple)
{
	struct ynode *n = ydoc_add_node(p->doc, ENVCTL_YSEQ, p->line, p->col);

	if (tuple)
		n->tag = xstrdup(PV_TUPLE_TAG);
	return n;
}

static int
closer(int c)
{
	return c == '(' ? ')' : c == '[' ? ']' : '}';
}

/*
 * Stops after a complete expression on what follows it: another atom
 * there ("1 2", "[] {}") or the end inside brackets is surely a
 * SyntaxError; a keyword or an operator may start valid Python.
 */
static int
stop_after(struct pv *p, const char *why)
{
	static const char *const keywords[] = { "if", "else", "for",
	    "async", "in", "not", "is", "and", "or", NULL };
	int c = at(p, 0), definite = PV_MAYBE;
	size_t n, k;

	/* No keyword is non-ASCII; a closer must match its opener. */
	if (c == -1 || (c >= '0' && c <= '9') || c == '{' || c == '\'' ||
	    c == '"' || c >= 0x80 || string_prefix(p) >= 0 ||
	    ((c == ')' || c == ']' || c == '}') && (p->depth == 0 ||
	    closer(p->open[p->depth - 1]) != c)))
		definite = PV_SYNTAX;
	else if (is_ident(c)) {
		for (n = 0; at(p, n) != -1 && is_ident(at(p, n)); n++)
			;
		definite = PV_SYNTAX;
		for (k = 0; keywords[k] != NULL; k++)
			if (strlen(keywords[k]) == n &&
			    memcmp(p->s + p->i, keywords[k], n) == 0)
				definite = PV_MAYBE;
	}
	return stop(p, definite, why);
}

/* At the closing bracket c; 0: at the end of the top-level line. */
static int
at_close(const struct pv *p, int c)
{
	if (c != 0)
		return at(p, 0) == c;
	return at(p, 0) == -1 || at(p, 0) == '\n';
}

/*
 * Items up to the closing bracket c, the first one already read into
 * *first (a tuple's, list's or set's); each is added to seq.
 */
static int
items(struct pv *p, int c, struct ynode *seq, struct pv_val *first,
    const char **unhashable, int hashing)
{
	struct pv_val it = *first;

	for (;;) {
		if (hashing && it.unhashable != NULL)
			raise_type(p, it.unhashable);
		if (unhashable != NULL && *unhashable == NULL)
			*unhashable = it.unhashable;
		contain(p, seq, &it);
		if (at_close(p, c))
			return 0;
		if (at(p, 0) != ',')
			return stop_after(p, "expected ','");
		p->i++;
		if (skip(p) != 0)
			return -1;
		if (at_close(p, c))
			return 0;
		memset(&it, 0, sizeof(it));
		if (expr(p, &it) != 0)
			return -1;
	}
}

/* The two scalars are equal as Python compares dict keys. */
static int
key_number(const struct ynode *k, char **text, double *d)
{
	enum yscalar_kind kind = yscalar_kind(k);

	*text = NULL;
	if (kind == ENVCTL_YBOOL) {
		*text = xstrdup(strcmp(k->str, "True") == 0 ? "1" : "0");
		return 1;
	}
	if (kind == ENVCTL_YINT) {
		*text = xstrdup(k->str);
		return 1;
	}
	if (kind != ENVCTL_YFLOAT)
		return 0;
	*d = strtod(k->str, NULL);
	if (isfinite(*d) && floor(*d) == *d) {
		*text = xasprintf("%.0f", fabs(*d));
		if (signbit(*d) && strcmp(*text, "0") != 0) {
			char *neg = xasprintf("-%s", *text);

			free(*text);
			*text = neg;
		}
	}
	return 1;
}

static int
key_eq(const struct ynode *a, const struct ynode *b)
{
	enum yscalar_kind ka = yscalar_kind(a), kb = yscalar_kind(b);
	char *ta, *tb;
	double da = 0, db = 0;
	int na, nb, eq = 0;

	if (ka == ENVCTL_YSTR || kb == ENVCTL_YSTR)
		return ka == kb && a->len == b->len &&
		    memcmp(a->str, b->str, a->len) == 0;
	if (ka == ENVCTL_YNULL || kb == ENVCTL_YNULL)
		return ka == kb;
	na = key_number(a, &ta, &da);
	nb = key_number(b, &tb, &db);
	if (na && nb) {
		if (ka == ENVCTL_YFLOAT && kb == ENVCTL_YFLOAT)
			eq = da == db;
		else if (ta != NULL && tb != NULL)
			eq = strcmp(ta, tb) == 0;
	}
	free(ta);
	free(tb);
	return eq;
}

/* Puts key: value in map; an equal key keeps its place, takes value. */
static void
dict_put(struct pv *p, struct ynode *map, const struct pv_val *k,
    const struct pv_val *v)
{
	size_t i;

	if (k->unhashable != NULL) {
		raise_type(p, k->unhashable);
		return;
	}
	if (k->kind == PV_TUPLE)
		unsupported(p, "a tuple as a dict key");
	contain(p, NULL, k);
	contain(p, NULL, v);
	if (k->node == NULL || v->node == NULL ||
	    k->node->type != ENVCTL_YSCALAR || k->kind == PV_BYTES ||
	    v->kind == PV_BYTES)
		return;
	for (i = 0; i < map->npairs; i++)
		if (key_eq(map->pairs[i].key, k->node)) {
			map->pairs[i].value = v->node;
			return;
		}
	ymap_append(map, k->node, v->node);
}

/* "{": a dict or a set. */
static int
braces(struct pv *p, struct pv_val *v)
{
	struct pv_val k, val;
	struct ynode *map;

	if (open_bracket(p) != 0)
		return -1;
	v->kind = PV_DICT;
	v->unhashable = "dict";
	map = ydoc_add_node(p->doc, ENVCTL_YMAP, p->line, p->col);
	if (at(p, 0) == '}') {
		v->node = map;
		return close_bracket(p);
	}
	memset(&k, 0, sizeof(k));
	if (expr(p, &k) != 0)
		return -1;
	if (at(p, 0) != ':') {
		v->kind = PV_SET;
		v->unhashable = "set";
		if (items(p, '}', NULL, &k, NULL, 1) != 0)
			return -1;
		return close_bracket(p);
	}
	for (;;) {
		if (at(p, 0) != ':')
			return stop_after(p, "expected ':'");
		p->i++;
		if (skip(p) != 0)
			return -1;
		memset(&val, 0, sizeof(val));
		if (expr(p, &val) != 0)
			return -1;
		dict_put(p, map, &k, &val);
		if (at(p, 0) == ',') {
			p->i++;
			if (skip(p) != 0)
				return -1;
		} else if (at(p, 0) != '}')
			return stop_after(p, "expected ',' or '}'");
		if (at(p, 0) == '}')
			break;
		memset(&k, 0, sizeof(k));
		if (expr(p, &k) != 0)
			return -1;
	}
	v->node = map;
	return close_bracket(p);
}

/* "(": a parenthesised value or a tuple. */
static int
parens(struct pv *p, struct pv_val *v)
{
	struct pv_val first;
	struct ynode *seq;

	if (open_bracket(p) != 0)
		return -1;
	if (at(p, 0) == ')') {
		v->kind = PV_TUPLE;
		v->node = new_seq(p, 1);
		return close_bracket(p);
	}
	memset(&first, 0, sizeof(first));
	if (expr(p, &first) != 0)
		return -1;
	if (at(p, 0) == ')') {
		*v = first;
		return close_bracket(p);
	}
	if (at(p, 0) != ',')
		return stop_after(p, "expected ',' or ')'");
	seq = new_seq(p, 1);
	v->kind = PV_TUPLE;
	v->node = seq;
	if (items(p, ')', seq, &first, &v->unhashable, 0) != 0)
		return -1;
	return close_bracket(p);
}

static int
brackets(struct pv *p, struct pv_val *v)
{
	struct pv_val first;

	if (open_bracket(p) != 0)
		return -1;
	v->kind = PV_LIST;
	v->unhashable = "list";
	v->node = new_seq(p, 0);
	if (at(p, 0) == ']')
		return close_bracket(p);
	memset(&first, 0, sizeof(first));
	if (expr(p, &first) != 0 ||
	    items(p, ']', v->node, &first, NULL, 0) != 0)
		return -1;
	return close_bracket(p);
}

static int
word_is(const struct pv *p, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(p->s + p->i, w, n) == 0;
}

static int
atom(struct pv *p, struct pv_val *v)
{
	int c = at(p, 0), r;
	size_t n;

	memset(v, 0, sizeof(*v));
	if (c == '(')
		r = parens(p, v);
	else if (c == '[')
		r = brackets(p, v);
	else if (c == '{')
		r = braces(p, v);
	else
		r = 1;
	if (r == 0 && v->kind == PV_SET)
		unsupported(p, PV_SET_VALUE);
	if (r != 1)
		return r;
	if ((c >= '0' && c <= '9') ||
	    (c == '.' && at(p, 1) >= '0' && at(p, 1) <= '9'))
		r = number(p, v);
	else if (c == '.' && at(p, 1) == '.' && at(p, 2) == '.') {
		p->i += 3;
		v->kind = PV_ELLIPSIS;
		unsupported(p, "Python's Ellipsis (...)");
		r = 0;
	} else if (string_prefix(p) >= 0)
		return string(p, v);
	else if (c != -1 && is_ident(c)) {
		for (n = 0; is_ident(at(p, n)); n++)
			;
		if (word_is(p, n, "True") || word_is(p, n, "False")) {
			v->kind = PV_BOOL;
			v->node = scalar(p, ENVCTL_YBOOL, p->s + p->i, n);
		} else if (word_is(p, n, "None")) {
			v->kind = PV_NONE;
			v->node = scalar(p, ENVCTL_YNULL, "None", 4);
		} else if (word_is(p, n, "set")) {
			/* set() is the one call literal_eval() knows. */
			p->i += n;
			if (skip(p) != 0 || at(p, 0) != '(')
				return stop(p, PV_MAYBE, "a name is no "
				    "literal");
			if (open_bracket(p) != 0)
				return -1;
			if (at(p, 0) != ')')
				return stop(p, PV_MAYBE, "set() takes no "
				    "arguments in a literal");
			v->kind = PV_SET;
			v->unhashable = "set";
			unsupported(p, PV_SET_VALUE);
			return close_bracket(p);
		} else
			return stop(p, PV_MAYBE, "a name is no literal");
		p->i += n;
		r = 0;
	} else if (c == -1)
		return stop(p, PV_SYNTAX, "unexpected EOF while parsing");
	else
		return stop(p, PV_MAYBE, "invalid syntax");
	return r != 0 ? r : skip(p);
}

/* An atom and what may follow it: no call, subscript or attribute. */
static int
primary(struct pv *p, struct pv_val *v)
{
	int c;

	if (atom(p, v) != 0)
		return -1;
	c = at(p, 0);
	if (c == '(' || c == '[' || (c == '.' && at(p, 1) != '.'))
		return stop(p, PV_MAYBE, "a call, subscript or attribute is no "
		    "literal");
	return 0;
}

/* Unary + and -: on a number literal only; chain counts them. */
static int
factor(struct pv *p, struct pv_val *v, int chain)
{
	struct pv_state save = p->st;
	struct ynode *n;
	char *text;
	int c = at(p, 0), neg;

	if (c != '+' && c != '-')
		return primary(p, v);
	neg = c == '-';
	p->i++;
	if (chain >= PV_MAX_CHAIN)
		return stop(p, PV_TOOBIG, "more than 1000 operators in a row");
	if (skip(p) != 0 || factor(p, v, chain + 1) != 0)
		return -1;
	if (!v->constant) {
		p->st = save;
		raise_value(p, "malformed node or string");
		memset(v, 0, sizeof(*v));
		return 0;
	}
	v->constant = 0;
	if (!neg || v->node == NULL)
		return 0;
	n = v->node;
	if (strcmp(n->str, "0") == 0)
		return 0;
	if (n->str[0] == '-')
		text = xstrdup(n->str + 1);
	else
		text = xasprintf("-%s", n->str);
	v->node = scalar(p, yscalar_kind(n), text, strlen(text));
	free(text);
	return 0;
}

/* Binary + and -: a signed int or float and an imaginary literal. */
static int
expr(struct pv *p, struct pv_val *v)
{
	struct pv_state save = p->st;
	struct pv_val right;
	int ok, chain = 0;

	if (factor(p, v, 0) != 0)
		return -1;
	while (at(p, 0) == '+' || at(p, 0) == '-') {
		p->i++;
		if (++chain > PV_MAX_CHAIN)
			return stop(p, PV_TOOBIG, "more than 1000 operators "
			    "in a row");
		memset(&right, 0, sizeof(right));
		if (skip(p) != 0 || factor(p, &right, 0) != 0)
			return -1;
		ok = v->signednum && (v->kind == PV_INT ||
		    v->kind == PV_FLOAT) && right.constant &&
		    right.kind == PV_COMPLEX;
		p->st = save;
		memset(v, 0, sizeof(*v));
		if (ok) {
			v->kind = PV_COMPLEX;
			unsupported(p, PV_COMPLEX_NUM);
		} else
			raise_value(p, "malformed node or string");
	}
	return 0;
}

/* --- the whole text ---------------------------------------------------- */

/* Blank lines before the value; its line must not be indented. */
static int
prelude(struct pv *p)
{
	int indent, c;

	for (;;) {
		indent = 0;
		for (;;) {
			c = at(p, 0);
			if (c == ' ' || c == '\t' || c == '\f') {
				indent = c != '\f';
				p->i++;
			} else if (c == '\\' && at(p, 1) == '\n')
				/* "\\\n 1": the next line's blanks indent. */
				p->i += 2;
			else
				break;
		}
		if (c == '#')
			while ((c = at(p, 0)) != -1 && c != '\n')
				p->i++;
		if (c == -1)
			return stop(p, PV_SYNTAX, "invalid syntax");
		if (c != '\n')
			break;
		p->i++;
	}
	return indent ? stop(p, PV_SYNTAX, "unexpected indent") : 0;
}

/*
 * Lines after the value's: blank or comments.  A last line of blanks
 * with no newline is indentation to Python (IndentationError).
 */
static int
trailer(struct pv *p)
{
	int indent, c;

	while (at(p, 0) == '\n') {
		p->i++;
		indent = 0;
		while ((c = at(p, 0)) == ' ' || c == '\t' || c == '\f') {
			indent = c != '\f';
			p->i++;
		}
		if (c == -1 && indent)
			return stop(p, PV_SYNTAX, "unexpected indent");
		if (c == '#')
			while ((c = at(p, 0)) != -1 && c != '\n')
				p->i++;
		if (c != -1 && c != '\n')
			return stop(p, PV_SYNTAX, "invalid syntax");
	}
	return 0;
}

/* The value, a bare tuple ("1, 2") included, then nothing but blanks. */
static int
toplevel(struct pv *p, struct pv_val *v)
{
	struct pv_val first;
	struct ynode *seq;
	int c;

	if (prelude(p) != 0 || skip(p) != 0 || expr(p, v) != 0)
		return -1;
	if (at(p, 0) == ',') {
		first = *v;
		memset(v, 0, sizeof(*v));
		seq = new_seq(p, 1);
		v->kind = PV_TUPLE;
		v->node = seq;
		if (items(p, 0, seq, &first, &v->unhashable, 0) != 0)
			return -1;
	}
	if ((c = at(p, 0)) != -1 && c != '\n')
		return stop_after(p, "invalid syntax");
	return trailer(p);
}

static int
is_keyword(const char *s, size_t n)
{
	static const char *const kw[] = { "and", "as", "assert", "async",
	    "await", "break", "class", "continue", "def", "del", "elif",
	    "else", "except", "finally", "for", "from", "global", "if",
	    "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",
	    "raise", "return", "try", "while", "with", "yield", NULL };
	size_t k;

	for (k = 0; kw[k] != NULL; k++)
		if (strlen(kw[k]) == n && memcmp(s, kw[k], n) == 0)
			return 1;
	return 0;
}

/*
 * After a stop that may be valid Python, whether the rest surely is a
 * SyntaxError, by its tokens: a string left open, brackets that do not
 * match, a character Python's tokenizer refuses, two operands side by
 * side ("x 1", "() True"), or a second line.
 */
static int
rest_broken(const struct pv *p)
{
	const char *s = p->s;
	size_t i = p->aborti, n = p->len, k;
	char open[PV_MAX_NEST + 64];
	int depth = p->depth, q, triple, c, operand = 0, wasstr = 0;

	memcpy(open, p->open, (size_t)depth);
	while (i < n) {
		c = (unsigned char)s[i];
		if (c == ' ' || c == '\t' || c == '\f' ||
		    (c == '\n' && depth > 0) ||
		    (c == '\\' && i + 1 < n && s[i + 1] == '\n')) {
			i += c == '\\' ? 2 : 1;
			continue;
		}
		if (c == '#') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '\n') {
			/* At depth 0: only blank lines may follow. */
			while (i < n && strchr(" \t\f\n", s[i]) != NULL)
				i++;
			if (i < n && s[i] != '#')
				return 1;
			continue;
		}
		for (k = i; k < n && is_ident((unsigned char)s[k]); k++)
			;
		if (k < n && (s[k] == '\'' || s[k] == '"') && k - i <= 2) {
			/* A string, its prefix letters first. */
			i = k;
			q = (unsigned char)s[i];
			triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
			i += triple ? 3 : 1;
			for (;;) {
				if (i >= n || (!triple && s[i] == '\n'))
					return 1;
				if (s[i] == '\\') {
					i += 2;
					continue;
				}
				if (s[i] == q && (!triple || (i + 2 < n &&
				    s[i + 1] == q && s[i + 2] == q)))
					break;
				i++;
			}
			i += triple ? 3 : 1;
			if (operand && !wasstr)
				return 1;
			operand = wasstr = 1;
			continue;
		}
		if (k > i || (c == '.' && i + 1 < n && s[i + 1] >= '0' &&
		    s[i + 1] <= '9')) {
			/* A name or a number ("1.5e3" read whole). */
			if (c >= '0' && c <= '9')
				while (k < n && (s[k] == '.' ||
				    is_ident((unsigned char)s[k])))
					k++;
			if (c == '.')
				for (k = i + 1; k < n &&
				    (is_ident((unsigned char)s[k]) ||
				    s[k] == '.'); k++)
					;
			if (c < '0' || c > '9' ? c != '.' &&
			    is_keyword(s + i, k - i) : 0)
				operand = 0;
			else {
				if (operand)
					return 1;
				operand = 1;
			}
			i = k;
			wasstr = 0;
			continue;
		}
		wasstr = 0;
		if (c == '(' || c == '[' || c == '{') {
			if (c == '{' && operand)
				return 1;
			if (depth >= (int)sizeof(open))
				return 0;
			open[depth++] = (char)c;
			operand = 0;
		} else if (c == ')' || c == ']' || c == '}') {
			if (depth == 0 || closer(open[--depth]) != c)
				return 1;
			operand = 1;
		} else if (c == '$' || c == '?' || c == '`' || (c == '!' &&
		    (i + 1 >= n || s[i + 1] != '=')) || c == '\\' || c < 0x20)
			return 1;
		else
			operand = 0;
		i++;
	}
	return depth > 0;
}

int
pyvalue_parse(struct ydoc *doc, const char *s, size_t len, int line,
    int col, struct ynode **out, struct err *err)
{
	struct pv p;
	struct buf text = ENVCTL_BUF_INIT;
	struct pv_val v;
	const char *what;
	size_t i, off;
	int r = 0;

	memset(&p, 0, sizeof(p));
	memset(&v, 0, sizeof(v));
	buf_init(&p.tmp, 0);
	*out = NULL;
	p.doc = doc;
	p.line = line;
	p.col = col;
	/* literal_eval() strips spaces and tabs, compile() reads "\r". */
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	if (memchr(s, '\0', len) != NULL) {
		r = err_setat(err, ENVCTL_EPARSE, doc->path, line, col,
		    "not a Python literal: source code string cannot contain "
		    "null bytes");
		goto out;
	}
	if (!pylit_utf8_valid(s, len, &off)) {
		r = err_setat(err, ENVCTL_EPARSE, doc->path, line, col,
		    "not a Python literal: not valid UTF-8 at byte %zu", off);
		goto out;
	}
	for (i = 0; i < len; i++) {
		if (s[i] != '\r')
			buf_addch(&text, s[i]);
		else if (i + 1 == len || s[i + 1] != '\n')
			buf_addch(&text, '\n');
	}
	p.s = text.data;
	p.len = text.len;
	if (toplevel(&p, &v) != 0) {
		if (p.definite == PV_TOOBIG)
			r = err_setat(err, ENVCTL_ETOOBIG, doc->path, line,
			    col, "Python literal too deep: %s", p.abort);
		else if (p.definite == PV_MAYBE &&
		    p.st.raised == PV_RAISED_TYPE && !rest_broken(&p))
			r = err_setat(err, ENVCTL_EINVALID, doc->path, line,
			    col, "not a Python literal envctl can read: "
			    "unhashable type: '%s' (or a syntax error after "
			    "it)", p.st.what);
		else
			r = err_setat(err, ENVCTL_EPARSE, doc->path, line,
			    col, "not a Python literal: %s", p.abort);
		goto out;
	}
	if (v.kind == PV_BYTES && v.node != NULL &&
	    !pylit_utf8_valid(v.node->str, v.node->len, NULL))
		unsupported(&p, "bytes that are not UTF-8");
	if (p.st.raised == PV_RAISED_VALUE) {
		r = err_setat(err, ENVCTL_EPARSE, doc->path, line, col,
		    "not a Python literal: %s", p.st.what);
		goto out;
	}
	if (p.st.raised == PV_RAISED_TYPE) {
		r = err_setat(err, ENVCTL_EINVALID, doc->path, line, col,
		    "unhashable type: '%s'", p.st.what);
		goto out;
	}
	if ((what = p.st.unsup) != NULL) {
		int holds = v.kind == PV_LIST || v.kind == PV_TUPLE ||
		    v.kind == PV_DICT || (v.kind == PV_SET &&
		    what != PV_SET_VALUE);

		r = err_setat(err, ENVCTL_EUNSUPPORTED, doc->path, line, col,
		    "%s%s, which envctl cannot use",
		    holds ? "a value holding " : "", what);
		goto out;
	}
	*out = v.node;
out:
	buf_release(&text);
	buf_release(&p.tmp);
	return r;
}

/* --- str() and repr() -------------------------------------------------- */

/*
 * Code points from U+0080 that str.isprintable() calls unprintable, and
 * repr() escapes: Unicode 14.0.0, Python 3.11's unicodedata.  Generated:
 *   [c for c in range(0x80, 0x110000) if not chr(c).isprintable()]
 * as ranges; check_pyvalue compares every code point with python3.
 */
static const struct {
	uint32_t lo, hi;
} unprintable[] = {
	{ 0x0080, 0x00a0 }, { 0x00ad, 0x00ad }, { 0x0378, 0x0379 },
	{ 0x0380, 0x0383 }, { 0x038b, 0x038b }, { 0x038d, 0x038d },
	{ 0x03a2, 0x03a2 }, { 0x0530, 0x0530 }, { 0x0557, 0x0558 },
	{ 0x058b, 0x058c }, { 0x0590, 0x0590 }, { 0x05c8, 0x05cf },
	{ 0x05eb, 0x05ee }, { 0x05f5, 0x0605 }, { 0x061c, 0x061c },
	{ 0x06dd, 0x06dd }, { 0x070e, 0x070f }, { 0x074b, 0x074c },
	{ 0x07b2, 0x07bf }, { 0x07fb, 0x07fc }, { 0x082e, 0x082f },
	{ 0x083f, 0x083f }, { 0x085c, 0x085d }, { 0x085f, 0x085f },
	{ 0x086b, 0x086f }, { 0x088f, 0x0897 }, { 0x08e2, 0x08e2 },
	{ 0x0984, 0x0984 }, { 0x098d, 0x098e }, { 0x0991, 0x0992 },
	{ 0x09a9, 0x09a9 }, { 0x09b1, 0x09b1 }, { 0x09b3, 0x09b5 },
	{ 0x09ba, 0x09bb }, { 0x09c5, 0x09c6 }, { 0x09c9, 0x09ca },
	{ 0x09cf, 0x09d6 }, { 0x09d8, 0x09db }, { 0x09de, 0x09de },
	{ 0x09e4, 0x09e5 }, { 0x09ff, 0x0a00 }, { 0x0a04, 0x0a04 },
	{ 0x0a0b, 0x0a0e }, { 0x0a11, 0x0a12 }, { 0x0a29, 0x0a29 },
	{ 0x0a31, 0x0a31 }, { 0x0a34, 0x0a34 }, { 0x0a37, 0x0a37 },
	{ 0x0a3a, 0x0a3b }, { 0x0a3d, 0x0a3d }, { 0x0a43, 0x0a46 },
	{ 0x0a49, 0x0a4a }, { 0x0a4e, 0x0a50 }, { 0x0a52, 0x0a58 },
	{ 0x0a5d, 0x0a5d }, { 0x0a5f, 0x0a65 }, { 0x0a77, 0x0a80 },
	{ 0x0a84, 0x0a84 }, { 0x0a8e, 0x0a8e }, { 0x0a92, 0x0a92 },
	{ 0x0aa9, 0x0aa9 }, { 0x0ab1, 0x0ab1 }, { 0x0ab4, 0x0ab4 },
	{ 0x0aba, 0x0abb }, { 0x0ac6, 0x0ac6 }, { 0x0aca, 0x0aca },
	{ 0x0ace, 0x0acf }, { 0x0ad1, 0x0adf }, { 0x0ae4, 0x0ae5 },
	{ 0x0af2, 0x0af8 }, { 0x0b00, 0x0b00 }, { 0x0b04, 0x0b04 },
	{ 0x0b0d, 0x0b0e }, { 0x0b11, 0x0b12 }, { 0x0b29, 0x0b29 },
	{ 0x0b31, 0x0b31 }, { 0x0b34, 0x0b34 }, { 0x0b3a, 0x0b3b },
	{ 0x0b45, 0x0b46 }, { 0x0b49, 0x0b4a }, { 0x0b4e, 0x0b54 },
	{ 0x0b58, 0x0b5b }, { 0x0b5e, 0x0b5e }, { 0x0b64, 0x0b65 },
	{ 0x0b78, 0x0b81 }, { 0x0b84, 0x0b84 }, { 0x0b8b, 0x0b8d },
	{ 0x0b91, 0x0b91 }, { 0x0b96, 0x0b98 }, { 0x0b9b, 0x0b9b },
	{ 0x0b9d, 0x0b9d }, { 0x0ba0, 0x0ba2 }, { 0x0ba5, 0x0ba7 },
	{ 0x0bab, 0x0bad }, { 0x0bba, 0x0bbd }, { 0x0bc3, 0x0bc5 },
	{ 0x0bc9, 0x0bc9 }, { 0x0bce, 0x0bcf }, { 0x0bd1, 0x0bd6 },
	{ 0x0bd8, 0x0be5 }, { 0x0bfb, 0x0bff }, { 0x0c0d, 0x0c0d },
	{ 0x0c11, 0x0c11 }, { 0x0c29, 0x0c29 }, { 0x0c3a, 0x0c3b },
	{ 0x0c45, 0x0c45 }, { 0x0c49, 0x0c49 }, { 0x0c4e, 0x0c54 },
	{ 0x0c57, 0x0c57 }, { 0x0c5b, 0x0c5c }, { 0x0c5e, 0x0c5f },
	{ 0x0c64, 0x0c65 }, { 0x0c70, 0x0c76 }, { 0x0c8d, 0x0c8d },
	{ 0x0c91, 0x0c91 }, { 0x0ca9, 0x0ca9 }, { 0x0cb4, 0x0cb4 },
	{ 0x0cba, 0x0cbb }, { 0x0cc5, 0x0cc5 }, { 0x0cc9, 0x0cc9 },
	{ 0x0cce, 0x0cd4 }, { 0x0cd7, 0x0cdc }, { 0x0cdf, 0x0cdf },
	{ 0x0ce4, 0x0ce5 }, { 0x0cf0, 0x0cf0 }, { 0x0cf3, 0x0cff },
	{ 0x0d0d, 0x0d0d }, { 0x0d11, 0x0d11 }, { 0x0d45, 0x0d45 },
	{ 0x0d49, 0x0d49 }, { 0x0d50, 0x0d53 }, { 0x0d64, 0x0d65 },
	{ 0x0d80, 0x0d80 }, { 0x0d84, 0x0d84 }, { 0x0d97, 0x0d99 },
	{ 0x0db2, 0x0db2 }, { 0x0dbc, 0x0dbc }, { 0x0dbe, 0x0dbf },
	{ 0x0dc7, 0x0dc9 }, { 0x0dcb, 0x0dce }, { 0x0dd5, 0x0dd5 },
	{ 0x0dd7, 0x0dd7 }, { 0x0de0, 0x0de5 }, { 0x0df0, 0x0df1 },
	{ 0x0df5, 0x0e00 }, { 0x0e3b, 0x0e3e }, { 0x0e5c, 0x0e80 },
	{ 0x0e83, 0x0e83 }, { 0x0e85, 0x0e85 }, { 0x0e8b, 0x0e8b },
	{ 0x0ea4, 0x0ea4 }, { 0x0ea6, 0x0ea6 }, { 0x0ebe, 0x0ebf },
	{ 0x0ec5, 0x0ec5 }, { 0x0ec7, 0x0ec7 }, { 0x0ece, 0x0ecf },
	{ 0x0eda, 0x0edb }, { 0x0ee0, 0x0eff }, { 0x0f48, 0x0f48 },
	{ 0x0f6d, 0x0f70 }, { 0x0f98, 0x0f98 }, { 0x0fbd, 0x0fbd },
	{ 0x0fcd, 0x0fcd }, { 0x0fdb, 0x0fff }, { 0x10c6, 0x10c6 },
	{ 0x10c8, 0x10cc }, { 0x10ce, 0x10cf }, { 0x1249, 0x1249 },
	{ 0x124e, 0x124f }, { 0x1257, 0x1257 }, { 0x1259, 0x1259 },
	{ 0x125e, 0x125f }, { 0x1289, 0x1289 }, { 0x128e, 0x128f },
	{ 0x12b1, 0x12b1 }, { 0x12b6, 0x12b7 }, { 0x12bf, 0x12bf },
	{ 0x12c1, 0x12c1 }, { 0x12c6, 0x12c7 }, { 0x12d7, 0x12d7 },
	{ 0x1311, 0x1311 }, { 0x1316, 0x1317 }, { 0x135b, 0x135c },
	{ 0x137d, 0x137f }, { 0x139a, 0x139f }, { 0x13f6, 0x13f7 },
	{ 0x13fe, 0x13ff }, { 0x1680, 0x1680 }, { 0x169d, 0x169f },
	{ 0x16f9, 0x16ff }, { 0x1716, 0x171e }, { 0x1737, 0x173f },
	{ 0x1754, 0x175f }, { 0x176d, 0x176d }, { 0x1771, 0x1771 },
	{ 0x1774, 0x177f }, { 0x17de, 0x17df }, { 0x17ea, 0x17ef },
	{ 0x17fa, 0x17ff }, { 0x180e, 0x180e }, { 0x181a, 0x181f },
	{ 0x1879, 0x187f }, { 0x18ab, 0x18af }, { 0x18f6, 0x18ff },
	{ 0x191f, 0x191f }, { 0x192c, 0x192f }, { 0x193c, 0x193f },
	{ 0x1941, 0x1943 }, { 0x196e, 0x196f }, { 0x1975, 0x197f },
	{ 0x19ac, 0x19af }, { 0x19ca, 0x19cf }, { 0x19db, 0x19dd },
	{ 0x1a1c, 0x1a1d }, { 0x1a5f, 0x1a5f }, { 0x1a7d, 0x1a7e },
	{ 0x1a8a, 0x1a8f }, { 0x1a9a, 0x1a9f }, { 0x1aae, 0x1aaf },
	{ 0x1acf, 0x1aff }, { 0x1b4d, 0x1b4f }, { 0x1b7f, 0x1b7f },
	{ 0x1bf4, 0x1bfb }, { 0x1c38, 0x1c3a }, { 0x1c4a, 0x1c4c },
	{ 0x1c89, 0x1c8f }, { 0x1cbb, 0x1cbc }, { 0x1cc8, 0x1ccf },
	{ 0x1cfb, 0x1cff }, { 0x1f16, 0x1f17 }, { 0x1f1e, 0x1f1f },
	{ 0x1f46, 0x1f47 }, { 0x1f4e, 0x1f4f }, { 0x1f58, 0x1f58 },
	{ 0x1f5a, 0x1f5a }, { 0x1f5c, 0x1f5c }, { 0x1f5e, 0x1f5e },
	{ 0x1f7e, 0x1f7f }, { 0x1fb5, 0x1fb5 }, { 0x1fc5, 0x1fc5 },
	{ 0x1fd4, 0x1fd5 }, { 0x1fdc, 0x1fdc }, { 0x1ff0, 0x1ff1 },
	{ 0x1ff5, 0x1ff5 }, { 0x1fff, 0x200f }, { 0x2028, 0x202f },
	{ 0x205f, 0x206f }, { 0x2072, 0x2073 }, { 0x208f, 0x208f },
	{ 0x209d, 0x209f }, { 0x20c1, 0x20cf }, { 0x20f1, 0x20ff },
	{ 0x218c, 0x218f }, { 0x2427, 0x243f }, { 0x244b, 0x245f },
	{ 0x2b74, 0x2b75 }, { 0x2b96, 0x2b96 }, { 0x2cf4, 0x2cf8 },
	{ 0x2d26, 0x2d26 }, { 0x2d28, 0x2d2c }, { 0x2d2e, 0x2d2f },
	{ 0x2d68, 0x2d6e }, { 0x2d71, 0x2d7e }, { 0x2d97, 0x2d9f },
	{ 0x2da7, 0x2da7 }, { 0x2daf, 0x2daf }, { 0x2db7, 0x2db7 },
	{ 0x2dbf, 0x2dbf }, { 0x2dc7, 0x2dc7 }, { 0x2dcf, 0x2dcf },
	{ 0x2dd7, 0x2dd7 }, { 0x2ddf, 0x2ddf }, { 0x2e5e, 0x2e7f },
	{ 0x2e9a, 0x2e9a }, { 0x2ef4, 0x2eff }, { 0x2fd6, 0x2fef },
	{ 0x2ffc, 0x3000 }, { 0x3040, 0x3040 }, { 0x3097, 0x3098 },
	{ 0x3100, 0x3104 }, { 0x3130, 0x3130 }, { 0x318f, 0x318f },
	{ 0x31e4, 0x31ef }, { 0x321f, 0x321f }, { 0xa48d, 0xa48f },
	{ 0xa4c7, 0xa4cf }, { 0xa62c, 0xa63f }, { 0xa6f8, 0xa6ff },
	{ 0xa7cb, 0xa7cf }, { 0xa7d2, 0xa7d2 }, { 0xa7d4, 0xa7d4 },
	{ 0xa7da, 0xa7f1 }, { 0xa82d, 0xa82f }, { 0xa83a, 0xa83f },
	{ 0xa878, 0xa87f }, { 0xa8c6, 0xa8cd }, { 0xa8da, 0xa8df },
	{ 0xa954, 0xa95e }, { 0xa97d, 0xa97f }, { 0xa9ce, 0xa9ce },
	{ 0xa9da, 0xa9dd }, { 0xa9ff, 0xa9ff }, { 0xaa37, 0xaa3f },
	{ 0xaa4e, 0xaa4f }, { 0xaa5a, 0xaa5b }, { 0xaac3, 0xaada },
	{ 0xaaf7, 0xab00 }, { 0xab07, 0xab08 }, { 0xab0f, 0xab10 },
	{ 0xab17, 0xab1f }, { 0xab27, 0xab27 }, { 0xab2f, 0xab2f },
	{ 0xab6c, 0xab6f }, { 0xabee, 0xabef }, { 0xabfa, 0xabff },
	{ 0xd7a4, 0xd7af }, { 0xd7c7, 0xd7ca }, { 0xd7fc, 0xf8ff },
	{ 0xfa6e, 0xfa6f }, { 0xfada, 0xfaff }, { 0xfb07, 0xfb12 },
	{ 0xfb18, 0xfb1c }, { 0xfb37, 0xfb37 }, { 0xfb3d, 0xfb3d },
	{ 0xfb3f, 0xfb3f }, { 0xfb42, 0xfb42 }, { 0xfb45, 0xfb45 },
	{ 0xfbc3, 0xfbd2 }, { 0xfd90, 0xfd91 }, { 0xfdc8, 0xfdce },
	{ 0xfdd0, 0xfdef }, { 0xfe1a, 0xfe1f }, { 0xfe53, 0xfe53 },
	{ 0xfe67, 0xfe67 }, { 0xfe6c, 0xfe6f }, { 0xfe75, 0xfe75 },
	{ 0xfefd, 0xff00 }, { 0xffbf, 0xffc1 }, { 0xffc8, 0xffc9 },
	{ 0xffd0, 0xffd1 }, { 0xffd8, 0xffd9 }, { 0xffdd, 0xffdf },
	{ 0xffe7, 0xffe7 }, { 0xffef, 0xfffb }, { 0xfffe, 0xffff },
	{ 0x1000c, 0x1000c }, { 0x10027, 0x10027 }, { 0x1003b, 0x1003b },
	{ 0x1003e, 0x1003e }, { 0x1004e, 0x1004f }, { 0x1005e, 0x1007f },
	{ 0x100fb, 0x100ff }, { 0x10103, 0x10106 }, { 0x10134, 0x10136 },
	{ 0x1018f, 0x1018f }, { 0x1019d, 0x1019f }, { 0x101a1, 0x101cf },
	{ 0x101fe, 0x1027f }, { 0x1029d, 0x1029f }, { 0x102d1, 0x102df },
	{ 0x102fc, 0x102ff }, { 0x10324, 0x1032c }, { 0x1034b, 0x1034f },
	{ 0x1037b, 0x1037f }, { 0x1039e, 0x1039e }, { 0x103c4, 0x103c7 },
	{ 0x103d6, 0x103ff }, { 0x1049e, 0x1049f }, { 0x104aa, 0x104af },
	{ 0x104d4, 0x104d7 }, { 0x104fc, 0x104ff }, { 0x10528, 0x1052f },
	{ 0x10564, 0x1056e }, { 0x1057b, 0x1057b }, { 0x1058b, 0x1058b },
	{ 0x10593, 0x10593 }, { 0x10596, 0x10596 }, { 0x105a2, 0x105a2 },
	{ 0x105b2, 0x105b2 }, { 0x105ba, 0x105ba }, { 0x105bd, 0x105ff },
	{ 0x10737, 0x1073f }, { 0x10756, 0x1075f }, { 0x10768, 0x1077f },
	{ 0x10786, 0x10786 }, { 0x107b1, 0x107b1 }, { 0x107bb, 0x107ff },
	{ 0x10806, 0x10807 }, { 0x10809, 0x10809 }, { 0x10836, 0x10836 },
	{ 0x10839, 0x1083b }, { 0x1083d, 0x1083e }, { 0x10856, 0x10856 },
	{ 0x1089f, 0x108a6 }, { 0x108b0, 0x108df }, { 0x108f3, 0x108f3 },
	{ 0x108f6, 0x108fa }, { 0x1091c, 0x1091e }, { 0x1093a, 0x1093e },
	{ 0x10940, 0x1097f }, { 0x109b8, 0x109bb }, { 0x109d0, 0x109d1 },
	{ 0x10a04, 0x10a04 }, { 0x10a07, 0x10a0b }, { 0x10a14, 0x10a14 },
	{ 0x10a18, 0x10a18 }, { 0x10a36, 0x10a37 }, { 0x10a3b, 0x10a3e },
	{ 0x10a49, 0x10a4f }, { 0x10a59, 0x10a5f }, { 0x10aa0, 0x10abf },
	{ 0x10ae7, 0x10aea }, { 0x10af7, 0x10aff }, { 0x10b36, 0x10b38 },
	{ 0x10b56, 0x10b57 }, { 0x10b73, 0x10b77 }, { 0x10b92, 0x10b98 },
	{ 0x10b9d, 0x10ba8 }, { 0x10bb0, 0x10bff }, { 0x10c49, 0x10c7f },
	{ 0x10cb3, 0x10cbf }, { 0x10cf3, 0x10cf9 }, { 0x10d28, 0x10d2f },
	{ 0x10d3a, 0x10e5f }, { 0x10e7f, 0x10e7f }, { 0x10eaa, 0x10eaa },
	{ 0x10eae, 0x10eaf }, { 0x10eb2, 0x10eff }, { 0x10f28, 0x10f2f },
	{ 0x10f5a, 0x10f6f }, { 0x10f8a, 0x10faf }, { 0x10fcc, 0x10fdf },
	{ 0x10ff7, 0x10fff }, { 0x1104e, 0x11051 }, { 0x11076, 0x1107e },
	{ 0x110bd, 0x110bd }, { 0x110c3, 0x110cf }, { 0x110e9, 0x110ef },
	{ 0x110fa, 0x110ff }, { 0x11135, 0x11135 }, { 0x11148, 0x1114f },
	{ 0x11177, 0x1117f }, { 0x111e0, 0x111e0 }, { 0x111f5, 0x111ff },
	{ 0x11212, 0x11212 }, { 0x1123f, 0x1127f }, { 0x11287, 0x11287 },
	{ 0x11289, 0x11289 }, { 0x1128e, 0x1128e }, { 0x1129e, 0x1129e },
	{ 0x112aa, 0x112af }, { 0x112eb, 0x112ef }, { 0x112fa, 0x112ff },
	{ 0x11304, 0x11304 }, { 0x1130d, 0x1130e }, { 0x11311, 0x11312 },
	{ 0x11329, 0x11329 }, { 0x11331, 0x11331 }, { 0x11334, 0x11334 },
	{ 0x1133a, 0x1133a }, { 0x11345, 0x11346 }, { 0x11349, 0x1134a },
	{ 0x1134e, 0x1134f }, { 0x11351, 0x11356 }, { 0x11358, 0x1135c },
	{ 0x11364, 0x11365 }, { 0x1136d, 0x1136f }, { 0x11375, 0x113ff },
	{ 0x1145c, 0x1145c }, { 0x11462, 0x1147f }, { 0x114c8, 0x114cf },
	{ 0x114da, 0x1157f }, { 0x115b6, 0x115b7 }, { 0x115de, 0x115ff },
	{ 0x11645, 0x1164f }, { 0x1165a, 0x1165f }, { 0x1166d, 0x1167f },
	{ 0x116ba, 0x116bf }, { 0x116ca, 0x116ff }, { 0x1171b, 0x1171c },
	{ 0x1172c, 0x1172f }, { 0x11747, 0x117ff }, { 0x1183c, 0x1189f },
	{ 0x118f3, 0x118fe }, { 0x11907, 0x11908 }, { 0x1190a, 0x1190b },
	{ 0x11914, 0x11914 }, { 0x11917, 0x11917 }, { 0x11936, 0x11936 },
	{ 0x11939, 0x1193a }, { 0x11947, 0x1194f }, { 0x1195a, 0x1199f },
	{ 0x119a8, 0x119a9 }, { 0x119d8, 0x119d9 }, { 0x119e5, 0x119ff },
	{ 0x11a48, 0x11a4f }, { 0x11aa3, 0x11aaf }, { 0x11af9, 0x11bff },
	{ 0x11c09, 0x11c09 }, { 0x11c37, 0x11c37 }, { 0x11c46, 0x11c4f },
	{ 0x11c6d, 0x11c6f }, { 0x11c90, 0x11c91 }, { 0x11ca8, 0x11ca8 },
	{ 0x11cb7, 0x11cff }, { 0x11d07, 0x11d07 }, { 0x11d0a, 0x11d0a },
	{ 0x11d37, 0x11d39 }, { 0x11d3b, 0x11d3b }, { 0x11d3e, 0x11d3e },
	{ 0x11d48, 0x11d4f }, { 0x11d5a, 0x11d5f }, { 0x11d66, 0x11d66 },
	{ 0x11d69, 0x11d69 }, { 0x11d8f, 0x11d8f }, { 0x11d92, 0x11d92 },
	{ 0x11d99, 0x11d9f }, { 0x11daa, 0x11edf }, { 0x11ef9, 0x11faf },
	{ 0x11fb1, 0x11fbf }, { 0x11ff2, 0x11ffe }, { 0x1239a, 0x123ff },
	{ 0x1246f, 0x1246f }, { 0x12475, 0x1247f }, { 0x12544, 0x12f8f },
	{ 0x12ff3, 0x12fff }, { 0x1342f, 0x143ff }, { 0x14647, 0x167ff },
	{ 0x16a39, 0x16a3f }, { 0x16a5f, 0x16a5f }, { 0x16a6a, 0x16a6d },
	{ 0x16abf, 0x16abf }, { 0x16aca, 0x16acf }, { 0x16aee, 0x16aef },
	{ 0x16af6, 0x16aff }, { 0x16b46, 0x16b4f }, { 0x16b5a, 0x16b5a },
	{ 0x16b62, 0x16b62 }, { 0x16b78, 0x16b7c }, { 0x16b90, 0x16e3f },
	{ 0x16e9b, 0x16eff }, { 0x16f4b, 0x16f4e }, { 0x16f88, 0x16f8e },
	{ 0x16fa0, 0x16fdf }, { 0x16fe5, 0x16fef }, { 0x16ff2, 0x16fff },
	{ 0x187f8, 0x187ff }, { 0x18cd6, 0x18cff }, { 0x18d09, 0x1afef },
	{ 0x1aff4, 0x1aff4 }, { 0x1affc, 0x1affc }, { 0x1afff, 0x1afff },
	{ 0x1b123, 0x1b14f }, { 0x1b153, 0x1b163 }, { 0x1b168, 0x1b16f },
	{ 0x1b2fc, 0x1bbff }, { 0x1bc6b, 0x1bc6f }, { 0x1bc7d, 0x1bc7f },
	{ 0x1bc89, 0x1bc8f }, { 0x1bc9a, 0x1bc9b }, { 0x1bca0, 0x1ceff },
	{ 0x1cf2e, 0x1cf2f }, { 0x1cf47, 0x1cf4f }, { 0x1cfc4, 0x1cfff },
	{ 0x1d0f6, 0x1d0ff }, { 0x1d127, 0x1d128 }, { 0x1d173, 0x1d17a },
	{ 0x1d1eb, 0x1d1ff }, { 0x1d246, 0x1d2df }, { 0x1d2f4, 0x1d2ff },
	{ 0x1d357, 0x1d35f }, { 0x1d379, 0x1d3ff }, { 0x1d455, 0x1d455 },
	{ 0x1d49d, 0x1d49d }, { 0x1d4a0, 0x1d4a1 }, { 0x1d4a3, 0x1d4a4 },
	{ 0x1d4a7, 0x1d4a8 }, { 0x1d4ad, 0x1d4ad }, { 0x1d4ba, 0x1d4ba },
	{ 0x1d4bc, 0x1d4bc }, { 0x1d4c4, 0x1d4c4 }, { 0x1d506, 0x1d506 },
	{ 0x1d50b, 0x1d50c }, { 0x1d515, 0x1d515 }, { 0x1d51d, 0x1d51d },
	{ 0x1d53a, 0x1d53a }, { 0x1d53f, 0x1d53f }, { 0x1d545, 0x1d545 },
	{ 0x1d547, 0x1d549 }, { 0x1d551, 0x1d551 }, { 0x1d6a6, 0x1d6a7 },
	{ 0x1d7cc, 0x1d7cd }, { 0x1da8c, 0x1da9a }, { 0x1daa0, 0x1daa0 },
	{ 0x1dab0, 0x1deff }, { 0x1df1f, 0x1dfff }, { 0x1e007, 0x1e007 },
	{ 0x1e019, 0x1e01a }, { 0x1e022, 0x1e022 }, { 0x1e025, 0x1e025 },
	{ 0x1e02b, 0x1e0ff }, { 0x1e12d, 0x1e12f }, { 0x1e13e, 0x1e13f },
	{ 0x1e14a, 0x1e14d }, { 0x1e150, 0x1e28f }, { 0x1e2af, 0x1e2bf },
	{ 0x1e2fa, 0x1e2fe }, { 0x1e300, 0x1e7df }, { 0x1e7e7, 0x1e7e7 },
	{ 0x1e7ec, 0x1e7ec }, { 0x1e7ef, 0x1e7ef }, { 0x1e7ff, 0x1e7ff },
	{ 0x1e8c5, 0x1e8c6 }, { 0x1e8d7, 0x1e8ff }, { 0x1e94c, 0x1e94f },
	{ 0x1e95a, 0x1e95d }, { 0x1e960, 0x1ec70 }, { 0x1ecb5, 0x1ed00 },
	{ 0x1ed3e, 0x1edff }, { 0x1ee04, 0x1ee04 }, { 0x1ee20, 0x1ee20 },
	{ 0x1ee23, 0x1ee23 }, { 0x1ee25, 0x1ee26 }, { 0x1ee28, 0x1ee28 },
	{ 0x1ee33, 0x1ee33 }, { 0x1ee38, 0x1ee38 }, { 0x1ee3a, 0x1ee3a },
	{ 0x1ee3c, 0x1ee41 }, { 0x1ee43, 0x1ee46 }, { 0x1ee48, 0x1ee48 },
	{ 0x1ee4a, 0x1ee4a }, { 0x1ee4c, 0x1ee4c }, { 0x1ee50, 0x1ee50 },
	{ 0x1ee53, 0x1ee53 }, { 0x1ee55, 0x1ee56 }, { 0x1ee58, 0x1ee58 },
	{ 0x1ee5a, 0x1ee5a }, { 0x1ee5c, 0x1ee5c }, { 0x1ee5e, 0x1ee5e },
	{ 0x1ee60, 0x1ee60 }, { 0x1ee63, 0x1ee63 }, { 0x1ee65, 0x1ee66 },
	{ 0x1ee6b, 0x1ee6b }, { 0x1ee73, 0x1ee73 }, { 0x1ee78, 0x1ee78 },
	{ 0x1ee7d, 0x1ee7d }, { 0x1ee7f, 0x1ee7f }, { 0x1ee8a, 0x1ee8a },
	{ 0x1ee9c, 0x1eea0 }, { 0x1eea4, 0x1eea4 }, { 0x1eeaa, 0x1eeaa },
	{ 0x1eebc, 0x1eeef }, { 0x1eef2, 0x1efff }, { 0x1f02c, 0x1f02f },
	{ 0x1f094, 0x1f09f }, { 0x1f0af, 0x1f0b0 }, { 0x1f0c0, 0x1f0c0 },
	{ 0x1f0d0, 0x1f0d0 }, { 0x1f0f6, 0x1f0ff }, { 0x1f1ae, 0x1f1e5 },
	{ 0x1f203, 0x1f20f }, { 0x1f23c, 0x1f23f }, { 0x1f249, 0x1f24f },
	{ 0x1f252, 0x1f25f }, { 0x1f266, 0x1f2ff }, { 0x1f6d8, 0x1f6dc },
	{ 0x1f6ed, 0x1f6ef }, { 0x1f6fd, 0x1f6ff }, { 0x1f774, 0x1f77f },
	{ 0x1f7d9, 0x1f7df }, { 0x1f7ec, 0x1f7ef }, { 0x1f7f1, 0x1f7ff },
	{ 0x1f80c, 0x1f80f }, { 0x1f848, 0x1f84f }, { 0x1f85a, 0x1f85f },
	{ 0x1f888, 0x1f88f }, { 0x1f8ae, 0x1f8af }, { 0x1f8b2, 0x1f8ff },
	{ 0x1fa54, 0x1fa5f }, { 0x1fa6e, 0x1fa6f }, { 0x1fa75, 0x1fa77 },
	{ 0x1fa7d, 0x1fa7f }, { 0x1fa87, 0x1fa8f }, { 0x1faad, 0x1faaf },
	{ 0x1fabb, 0x1fabf }, { 0x1fac6, 0x1facf }, { 0x1fada, 0x1fadf },
	{ 0x1fae8, 0x1faef }, { 0x1faf7, 0x1faff }, { 0x1fb93, 0x1fb93 },
	{ 0x1fbcb, 0x1fbef }, { 0x1fbfa, 0x1ffff }, { 0x2a6e0, 0x2a6ff },
	{ 0x2b739, 0x2b73f }, { 0x2b81e, 0x2b81f }, { 0x2cea2, 0x2ceaf },
	{ 0x2ebe1, 0x2f7ff }, { 0x2fa1e, 0x2ffff }, { 0x3134b, 0xe00ff },
	{ 0xe01f0, 0x10ffff },
};

static int
printable(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(unprintable) / sizeof(unprintable[0]), m;

	if (cp < 0x80)
		return cp >= 0x20 && cp < 0x7f;
	while (lo < hi) {
		m = (lo + hi) / 2;
		if (cp > unprintable[m].hi)
			lo = m + 1;
		else if (cp < unprintable[m].lo)
			hi = m;
		else
			return 0;
	}
	return 1;
}

/* repr() of a str: Python's choice of quote and its escapes. */
static int
repr_str(struct buf *out, const struct ynode *n, struct err *err)
{
	const char *s = n->str, *why;
	size_t len = n->len, off, k;
	uint32_t cp;
	int quote = '\'', r;

	if (memchr(s, '\'', len) != NULL && memchr(s, '"', len) == NULL)
		quote = '"';
	if ((r = buf_addch(out, quote)) != 0)
		return r;
	for (off = 0; r == 0 && off < len; off += k) {
		if ((k = str_utf8_decode(s + off, len - off, &cp, &why)) == 0)
			return err_setat(err, ENVCTL_EINVALID, n->path,
			    n->line, n->col, "string is not valid UTF-8 at "
			    "byte %zu (%s)", off, why);
		if (cp == (uint32_t)quote || cp == '\\')
			r = buf_addf(out, "\\%c", (int)cp);
		else if (cp == '\t')
			r = buf_addstr(out, "\\t");
		else if (cp == '\n')
			r = buf_addstr(out, "\\n");
		else if (cp == '\r')
			r = buf_addstr(out, "\\r");
		else if (printable(cp))
			r = buf_add(out, s + off, k);
		else if (cp <= 0xff)
			r = buf_addf(out, "\\x%02x", (unsigned)cp);
		else if (cp <= 0xffff)
			r = buf_addf(out, "\\u%04x", (unsigned)cp);
		else
			r = buf_addf(out, "\\U%08x", (unsigned)cp);
	}
	return r != 0 ? r : buf_addch(out, quote);
}

static int
scalar_out(struct buf *out, const struct ynode *n, int repr, struct err *err)
{
	struct buf tmp = ENVCTL_BUF_INIT;
	int r;

	if (n->tag != NULL && strcmp(n->tag, ENVCTL_YTAG_UNUSABLE) == 0)
		return err_setat(err, ENVCTL_EUNSUPPORTED, n->path, n->line,
		    n->col, "%s", n->str);
	if (n->tag != NULL && strcmp(n->tag, "!vault") == 0)
		return err_setat(err, ENVCTL_EUNSUPPORTED, n->path, n->line,
		    n->col, "vault-encrypted values are not supported");
	switch (yscalar_kind(n)) {
	case ENVCTL_YSTR:
		if (repr)
			return repr_str(out, n, err);
		return buf_add(out, n->str, n->len);
	case ENVCTL_YFLOAT:
		/* yscalar_text() reads every YAML form; printed here again
		 * with the shortest digits. */
		if ((r = yscalar_text(&tmp, n, err)) == 0)
			r = yfloat_repr(out, strtod(tmp.data, NULL));
		buf_release(&tmp);
		return r;
	default:
		return yscalar_text(out, n, err);
	}
}

static int
node_out(struct buf *out, const struct ynode *v, int repr, struct err *err)
{
	const char *open = "[", *close = "]";
	size_t i;
	int r = 0;

	switch (v->type) {
	case ENVCTL_YSCALAR:
		return scalar_out(out, v, repr, err);
	case ENVCTL_YSEQ:
		if (v->tag != NULL && strcmp(v->tag, PV_TUPLE_TAG) == 0) {
			open = "(";
			close = v->nitems == 1 ? ",)" : ")";
		}
		r = buf_addstr(out, open);
		for (i = 0; r == 0 && i < v->nitems; i++) {
			if (i > 0)
				r = buf_addstr(out, ", ");
			if (r == 0)
				r = node_out(out, v->items[i], 1, err);
		}
		return r != 0 ? r : buf_addstr(out, close);
	case ENVCTL_YMAP:
		r = buf_addch(out, '{');
		for (i = 0; r == 0 && i < v->npairs; i++) {
			if (i > 0)
				r = buf_addstr(out, ", ");
			if (r == 0)
				r = node_out(out, v->pairs[i].key, 1, err);
			if (r == 0)
				r = buf_addstr(out, ": ");
			if (r == 0)
				r = node_out(out, v->pairs[i].value, 1, err);
		}
		return r != 0 ? r : buf_addch(out, '}');
	}
	return r;
}

static int
value_out(struct buf *out, const struct ynode *v, int repr, struct err *err)
{
	size_t start = out->len;
	int r;

	r = node_out(out, v, repr, err);
	if (r != 0)
		buf_truncate(out, start);
	if (r == ENVCTL_ETOOBIG)
		return err_setat(err, r, v->path, v->line, v->col,
		    "value longer than %zu bytes", out->cap);
	return r;
}

int
pyvalue_str(struct buf *out, const struct ynode *v, struct err *err)
{
	return value_out(out, v, 0, err);
}

int
pyvalue_repr(struct buf *out, const struct ynode *v, struct err *err)
{
	return value_out(out, v, 1, err);
}
