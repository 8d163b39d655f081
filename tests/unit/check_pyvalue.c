/*
 * check_pyvalue.c - pyvalue_parse() against ast.literal_eval() and
 * pyvalue_str()/pyvalue_repr() against str() and repr(), with python3 as
 * the oracle.
 *
 * Each input is sent to python3 (tu_python()) as hex; it answers with one
 * line per input: "VALUE <hex of repr>" when literal_eval() succeeds with a
 * value envctl can hold, "UNSUP" when it succeeds with one it cannot (set,
 * complex, Ellipsis, bytes inside a container or not UTF-8, a lone
 * surrogate, a tuple as a dict key, an int Python cannot print), "PARSE"
 * for ValueError and SyntaxError (Ansible then keeps the text) and "TYPE"
 * for TypeError (unhashable).  A top-level bytes value is decoded as
 * Ansible's to_text() does.  The one deviation the oracle allows for is
 * \N{...}: envctl refuses it (no name table) where Python gives a value
 * or a SyntaxError.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/pyvalue.h"
#include "controller/yamldoc.h"
#include "testutil.h"

static const char oracle_py[] =
"import ast, sys, warnings, binascii\n"
"warnings.simplefilter('ignore')\n"
"def unsup(v, top):\n"
"    if isinstance(v, (set, frozenset, complex)) or v is Ellipsis:\n"
"        return True\n"
"    if isinstance(v, bytes):\n"
"        if not top:\n"
"            return True\n"
"        try:\n"
"            v.decode('utf-8')\n"
"        except UnicodeError:\n"
"            return True\n"
"        return False\n"
"    if isinstance(v, str):\n"
"        return any(0xd800 <= ord(c) < 0xe000 for c in v)\n"
"    if isinstance(v, int) and not isinstance(v, bool):\n"
"        return abs(v) >= 10 ** 4300\n"
"    if isinstance(v, (list, tuple)):\n"
"        return any(unsup(x, False) for x in v)\n"
"    if isinstance(v, dict):\n"
"        return any(isinstance(k, tuple) or unsup(k, False) or\n"
"                   unsup(x, False) for k, x in v.items())\n"
"    return False\n"
"for line in open(sys.argv[1]):\n"
"    src = binascii.unhexlify(line.strip()).decode('utf-8',\n"
"                                                  'surrogateescape')\n"
"    try:\n"
"        v = ast.literal_eval(src)\n"
"    except (ValueError, SyntaxError):\n"
"        print('NAMED PARSE' if '\\\\N{' in src else 'PARSE')\n"
"        continue\n"
"    except TypeError:\n"
"        print('TYPE')\n"
"        continue\n"
"    except (MemoryError, RecursionError) as e:\n"
"        print('OTHER', type(e).__name__)\n"
"        continue\n"
"    if unsup(v, True):\n"
"        print('UNSUP')\n"
"    else:\n"
"        if isinstance(v, bytes):\n"
"            v = v.decode('utf-8')\n"
"        print('NAMED VALUE' if '\\\\N{' in src else 'VALUE',\n"
"              binascii.hexlify(repr(v).encode()).decode())\n"
"    sys.stdout.flush()\n";

struct input {
	const char	*s;
	size_t		 len;
	int		 toobig;	/* expect ENVCTL_ETOOBIG, whatever
					   Python does */
};

#define I(s)	{ s, sizeof(s) - 1, 0 }

/* Inputs whose reading is compared with Python's; tricky ones first. */
static const struct input inputs[] = {
	/* the brief's list */
	I("0777"), I("1_000"), I("-0x10"), I("'a' 'b'"), I("(1,)"), I("()"),
	I("{'a': [1, (2, 3)]}"), I("1e400"), I("True"), I("true"), I(" 1"),
	I("b'\\xff'"), I("{1, 2}"), I("1+2j"),
	/* ints */
	I("0"), I("00"), I("0_0"), I("007"), I("1__0"), I("1_"), I("_1"),
	I("0x"), I("0x_1f"), I("0X1F"), I("0o17"), I("0O_7"), I("0b1010"),
	I("0b12"), I("0o8"), I("0xg"), I("0x1_"), I("-0"), I("+0"), I("-0x0"),
	I("123456789012345678901234567890"),
	I("-0xffffffffffffffffffffffffffffffff"), I("0b1_0_1"),
	I("1if 1 else 2"), I("0x1for"), I("1 .real"), I("1.real"),
	I("9223372036854775808"), I("-9223372036854775809"),
	/* floats */
	I("1.5"), I("1."), I(".5"), I("1.e5"), I("1e5"), I("1E-5"),
	I("1_000.0_1"), I("1._5"), I("1e"), I("1e+"), I("1e_5"), I("1e5_"),
	I("0777.5"), I("0777e1"), I("00.0"), I("1e-400"), I("-1e400"),
	I("-0.0"), I("+0.0"), I("1e16"), I("1e15"), I("123456789012345678.0"),
	I("0.0001"), I("0.00001"), I("1.5e-5"), I("2.5e300"), I("0.1"),
	I("1e22"), I("1e23"), I("5e-324"), I("1.7976931348623157e308"),
	I("1.7976931348623159e308"), I("7.120236347223045e-307"),
	I("3.14159265358979323846"), I("1else"), I("..."), I(". . ."),
	I("1..2"), I("1.5.3"),
	/* imaginary, binary operators */
	I("1j"), I("0777j"), I("1_0J"), I("-1j"), I("1-2j"), I("-1+2j"),
	I("+1.5-2j"), I("1+-2j"), I("1j+2j"), I("True+1j"), I("1+True"),
	I("1+2"), I("1-2"), I("(1+2j)+3j"), I("1+2j+3j"), I("1 + 2j"),
	I("[1+2j]"), I("1*2"), I("2**3"), I("~1"), I("1<2"),
	/* unary */
	I("-1"), I("+1"), I("- 1"), I("--1"), I("-+1"), I("-(1)"), I("-(-1)"),
	I("(-1)"), I("-True"), I("-None"), I("-'a'"), I("-[1]"), I("-(1,)"),
	I("-{[1]: 2}"), I("-{1, 2}"), I("-1.5"), I("-inf"), I("-(1e400)"),
	/* constants, names */
	I("False"), I("None"), I("none"), I("TRUE"), I("x"), I("set()"),
	I("set( )"), I("set(())"), I("set"), I("frozenset()"), I("dict()"),
	I("set()()"), I("Ellipsis"), I("[...]"), I("not 1"), I("lambda: 1"),
	I("[x for x in y]"), I("(x for x in y)"), I("{**{}}"), I("[*[1]]"),
	I("'a'[0]"), I("'a'.upper()"), I("__import__('os')"),
	/* strings */
	I("'a'"), I("\"a\""), I("'''a'''"), I("\"\"\"a\"\"\""), I("''"),
	I("\"\""), I("''''''"), I("'''a\nb'''"), I("'a\nb'"), I("'a"),
	I("'''a''"), I("'a\\'b'"), I("\"a'b\""), I("'a\"b'"),
	I("'a\\'b\"c'"), I("'\\\\'"), I("'\\n\\t\\r\\a\\b\\f\\v\\0'"),
	I("'\\x41\\x4a\\xff'"), I("'\\x4'"), I("'\\x'"), I("'\\u00e9'"),
	I("'\\u12'"), I("'\\U0001F600'"), I("'\\U00110000'"),
	I("'\\U0010ffff'"), I("'\\ud800'"), I("'\\udc80\\ud800'"),
	I("'\\101\\7\\777\\0011'"), I("'\\8'"), I("'\\d\\w'"), I("'\\\n'"),
	I("'a\\\nb'"), I("'''a\\\nb'''"), I("'\\N{DASH}'"),
	I("'\\N{EM DASH}'"), I("'\\N'"), I("'\\N{}'"), I("r'\\N{x}'"),
	I("b'\\N{x}'"), I("r'a\\nb'"), I("R'a\\'b'"), I("r'\\'"),
	I("r'a\\\nb'"), I("u'x'"), I("U'x'"), I("ur'x'"), I("ru'x'"),
	I("b'abc'"), I("B'abc'"), I("br'a\\x'"), I("Rb'a'"), I("bR'a'"),
	I("rB'\\xff'"), I("bb'a'"), I("rr'a'"), I("f'x'"), I("F'{1}'"),
	I("fr'a'"), I("bf'a'"), I("'a' f'b'"), I("b'\\xc3\\xa9'"),
	I("b'\\777'"), I("b'\\400'"), I("b'\\u1234'"), I("b'caf\xc3\xa9'"),
	I("'caf\xc3\xa9'"), I("'\xe2\x82\xac \xf0\x9f\x98\x80'"),
	I("'\xc2\xa0\xc2\xad\xe2\x80\x8b\xe2\x80\xa8'"), I("'a' 'b' 'c'"),
	I("'a' b'b'"), I("b'a' b'b'"), I("'a''b'"), I("'a' \\\n 'b'"),
	I("('a'\n'b')"), I("'a'\n'b'"), I("'a' # c\n"), I("'#'"),
	I("'a' u'b'"), I("[b'a']"), I("(b'a',)"), I("{b'a': 1}"),
	I("{'a': b'a'}"), I("b'a', 1"), I("'\\'"), I("'\\x00'"),
	I("'\x7f\x01'"), I("'\t'"), I("\"'\""), I("'\"'"), I("'\\''"),
	/* containers */
	I("[]"), I("[1]"), I("[1,]"), I("[,]"), I("[1,,2]"), I("[1 2]"),
	I("[1, [2, [3, []]]]"), I("(1)"), I("((1))"), I("(1, 2)"),
	I("(1, 2,)"), I("(,)"), I("((),)"), I("(((1,),),)"), I("1,"),
	I("1, 2"), I("1, 2,"), I("1,,"), I(","), I("{}"), I("{1: 2}"),
	I("{1: 2,}"), I("{,}"), I("{1: 2, 3}"), I("{1, 2: 3}"),
	I("{'a': 1, 'b': 2, 'a': 3}"), I("{1: 'a', True: 'b'}"),
	I("{1: 'a', 1.0: 'b', True: 'c'}"),
	I("{0: 'x', False: 'y', -0.0: 'z'}"),
	I("{1.5: 'a', 1.5: 'b'}"), I("{1e400: 1, 1e401: 2}"),
	I("{100000000000000000000: 1, 1e20: 2}"), I("{'1': 1, 1: 2}"),
	I("{None: 1, None: 2}"), I("{(1, 2): 3}"), I("{(): 1}"),
	I("{[1]: 2}"), I("{(1, [2]): 3}"), I("{{}: 1}"), I("{{1}: 2}"),
	I("{[1]: 2, 'a': -'b'}"), I("{1: -'b', [1]: 2}"), I("{[1]: 2, 3: 'a"),
	I("{[1]}"), I("{1, [2]}"), I("{(1, 2), 3}"), I("{1: {1, 2}}"),
	I("[{1}, 1+2]"), I("[1+2, {[1]: 2}]"), I("[{[1]: 2}, 1+2]"),
	I("{'a': [1, {'b': (None, True, 1.5)}]}"), I("[1, 'a', None]"),
	I("{'k': 'v'}"), I("[1j]"), I("[set()]"), I("[1, ...]"),
	I("(1\n,\n2)"), I("[1, # c\n 2]"), I("{\n'a':\n1\n}"),
	/* whitespace, lines */
	I(""), I(" "), I("\t"), I("#"), I("# c"), I("\n"), I("\n1"),
	I("\n 1"), I(" \n1"), I("\t 1"), I(" \f 1"), I("\f1"), I("\n\f1"),
	I("\n \f1"), I("1 "), I("1\t"), I("1\n"), I("1\n\n"), I("1\n \n"),
	I("1 # comment"), I("1#c"), I("1\n2"), I("1\n 2"), I("1\r"),
	I("1\r2"), I("1\r\n"), I("(1,\r2)"), I("'''a\r\nb'''"),
	I("'''a\rb'''"), I("\r\n1"), I("\v1"), I("1\v"), I("1\\\n"),
	I("1 \\\n"), I("[1, \\\n 2]"), I("1\\ 2"), I("\\\n1"), I("1\\"),
	I("1 2"), I("(1"), I("1)"), I("[1"), I("]"), I("{"), I("1\x00"),
	{ "'a\0'", 4, 0 }, I("\xff"), I("'\xff'"), I("'\xed\xa0\x80'"),
	I("\xef\xbb\xbf" "1"), I("\xc2\xa0" "1"), I("$"), I("?"), I("`1`"),
	I("1;"), I("1; 2"), I("x=1"), I("a=b"), I("{'a':1}#"),
	I("'03#pa33w0rd'"), I("03#pa33w0rd"), I("[1, 2] # x"),
	/* blank lines after the value; continuations; brackets */
	I("1\n "), I("1\n\t"), I("1\n #"), I("1\n  \n  "), I("1\n\f "),
	I("1\n \f"), I("[1]\n "), I("1\r "), I("\\\n 1.5"), I("\\\n1.5"),
	I("\n \\\n1"), I("\\\n\\\n1"), I("1\n\\\n"), I("1\\\n "),
	I("{[]]"), I("{{})"), I("{set():'a'),e"), I("{set()}()True#"),
	I("{[]\xc3\xa9" "e}"), I("{[]: x 1}"), I("{[]: x}"), I("{[]: (x}"),
	I("{[]: 'a}"), I("{[]: x}\n1"), I("{[]: x if 1 else 2}"),
};

/* Hex of len bytes of s, then a newline, appended to b. */
static void
addhex(struct buf *b, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf_addf(b, "%02x", (unsigned char)s[i]);
	buf_addch(b, '\n');
}

static char *
unhex(const char *s, size_t *lenp)
{
	size_t n = strlen(s) / 2, i;
	char *out = xmalloc(n + 1);
	unsigned v;

	for (i = 0; i < n; i++) {
		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (char)v;
	}
	out[n] = '\0';
	*lenp = n;
	return out;
}

/*
 * Runs the oracle on n inputs; returns its answer lines (n of them,
 * asserted), which the caller frees with free(lines[0]) and free(lines).
 */
static char **
oracle(const struct input *in, size_t n)
{
	char *dir = tu_mkdtemp(), *file;
	char *argv[] = { (char *)tu_python(), "-I", "-c", (char *)oracle_py,
	    NULL, NULL };
	struct buf req = ENVCTL_BUF_INIT;
	struct tu_run r;
	char **lines = xcalloc(n + 1, sizeof(*lines)), *p, *nl;
	size_t i;

	/* A file, not stdin: tu_run() writes stdin before it reads. */
	for (i = 0; i < n; i++)
		addhex(&req, in[i].s, in[i].len);
	file = tu_write(dir, "in.hex", req.data, req.len);
	argv[4] = file;
	tu_run(&r, argv, NULL, NULL, 0);
	tu_rmtree(dir);
	free(dir);
	free(file);
	ck_assert_msg(r.status == 0, "%s failed (%d): %s", tu_python(),
	    r.status, r.errout);
	p = r.out;
	for (i = 0; i < n; i++) {
		nl = strchr(p, '\n');
		ck_assert_msg(nl != NULL, "oracle gave %zu of %zu answers", i,
		    n);
		*nl = '\0';
		lines[i] = p;
		p = nl + 1;
	}
	/* lines[0] owns the output. */
	r.out = NULL;
	tu_run_free(&r);
	buf_release(&req);
	return lines;
}

/* Appends s, escaped and cut at 120 bytes (Check's messages are short). */
static void
show(struct buf *msg, const char *s, size_t len)
{
	size_t i;

	if (len > 120) {
		show(msg, s, 100);
		buf_addf(msg, "...(%zu bytes)", len);
		return;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf_addch(msg, c);
		else
			buf_addf(msg, "\\x%02x", c);
	}
}

/* Compares our reading of in with the oracle's answer; 0 when equal. */
static int
compare(const struct input *in, const char *answer, struct buf *msg)
{
	struct ydoc *doc = ydoc_new("t");
	struct err err = ENVCTL_ERR_INIT;
	struct buf got = ENVCTL_BUF_INIT;
	struct ynode *v = NULL;
	char *want = NULL;
	size_t wantlen = 0;
	const char *ours;
	int r, bad = 0;

	r = pyvalue_parse(doc, in->s, in->len, 3, 7, &v, &err);
	if (r == 0) {
		ck_assert_ptr_nonnull(v);
		ck_assert_int_eq(pyvalue_repr(&got, v, &err), 0);
		ours = "VALUE";
	} else {
		ck_assert_ptr_null(v);
		ck_assert_int_eq(err.code, r);
		ck_assert_int_eq(err.line, 3);
		ck_assert_int_eq(err.col, 7);
		ours = r == ENVCTL_EPARSE ? "PARSE" : r == ENVCTL_EUNSUPPORTED ?
		    "UNSUP" : r == ENVCTL_EINVALID ? "TYPE" : r ==
		    ENVCTL_ETOOBIG ? "TOOBIG" : "OTHER";
	}
	/* \N{...}: refused, or read as Python does. */
	if (strncmp(answer, "NAMED ", 6) == 0) {
		answer += 6;
		if (r == ENVCTL_EUNSUPPORTED)
			goto out;
	}
	if (in->toobig)
		bad = r != ENVCTL_ETOOBIG;
	else if (strncmp(answer, "VALUE ", 6) == 0) {
		want = unhex(answer + 6, &wantlen);
		bad = r != 0 || got.len != wantlen ||
		    memcmp(got.data, want, wantlen) != 0;
	} else
		bad = strcmp(answer, ours) != 0;
	if (bad) {
		buf_addstr(msg, "input '");
		show(msg, in->s, in->len);
		buf_addf(msg, "': python %s", answer);
		if (want != NULL) {
			buf_addstr(msg, " = ");
			show(msg, want, wantlen);
		}
		buf_addf(msg, "; envctl %s", ours);
		if (r == 0) {
			buf_addstr(msg, " = ");
			show(msg, got.data, got.len);
		} else
			buf_addf(msg, " (%s)", err.msg);
		buf_addch(msg, '\n');
	}
out:
	free(want);
	buf_release(&got);
	err_release(&err);
	ydoc_free(doc);
	return bad;
}

static void
run_all(const struct input *in, size_t n)
{
	char **lines = oracle(in, n);
	struct buf msg = ENVCTL_BUF_INIT;
	size_t i, nbad = 0;

	for (i = 0; i < n; i++)
		nbad += (size_t)compare(&in[i], lines[i], &msg);
	if (msg.len > 3000)
		buf_truncate(&msg, 3000);
	ck_assert_msg(nbad == 0, "%zu of %zu inputs read unlike Python:\n%s",
	    nbad, n, msg.data);
	buf_release(&msg);
	free(lines[0]);
	free(lines);
}

START_TEST(test_oracle_inputs)
{
	run_all(inputs, sizeof(inputs) / sizeof(inputs[0]));
}
END_TEST

/* Marsaglia's xorshift64: the same numbers on every libc. */
static uint64_t
xs_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Generated inputs; their texts are freed by free_inputs(). */
static void
free_inputs(struct input *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free((char *)in[i].s);
	free(in);
}

static struct input
gen(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct input
gen(const char *fmt, ...)
{
	struct input in;
	va_list ap;
	struct buf b = ENVCTL_BUF_INIT;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	in.s = buf_detach(&b, &in.len);
	in.toobig = 0;
	return in;
}

/*
 * Floats: every power of two (where the shortest digits are hardest),
 * random bit patterns, printed with 17 digits and then shorter.
 */
START_TEST(test_oracle_floats)
{
	size_t n = 0, max = 2100 + 3 * 3000;
	struct input *in = xcalloc(max, sizeof(*in));
	uint64_t s = 0x9e3779b97f4a7c15ull, bits;
	double d;
	int k;

	for (k = -1074; k <= 1023; k++)
		in[n++] = gen("%.17g", ldexp(1.0, k));
	while (n + 3 <= max) {
		bits = xs_next(&s) & 0x7fffffffffffffffull;
		memcpy(&d, &bits, sizeof(d));
		if (!isfinite(d))
			continue;
		in[n++] = gen("%.17g", d);
		in[n++] = gen("%.*e", (int)(xs_next(&s) % 16), d);
		in[n++] = gen("-%.3f", fmod(d, 1e6));
	}
	run_all(in, n);
	free_inputs(in, n);
}
END_TEST

/* Ints in every base, to hundreds of digits, and past 4300 digits. */
START_TEST(test_oracle_ints)
{
	static const char *const prefix[] = { "", "0x", "0o", "0b" };
	static const char *const digits[] = { "0123456789",
	    "0123456789abcdefABCDEF", "01234567", "01" };
	size_t n = 0, max = 1200, len, i;
	struct input *in = xcalloc(max, sizeof(*in));
	uint64_t s = 42;
	struct buf b = ENVCTL_BUF_INIT;
	int base;

	while (n < max - 8) {
		base = (int)(xs_next(&s) % 4);
		len = 1 + xs_next(&s) % 300;
		buf_reset(&b);
		if (xs_next(&s) % 3 == 0)
			buf_addch(&b, '-');
		buf_addstr(&b, prefix[base]);
		for (i = 0; i < len; i++) {
			const char *d = digits[base];
			char c = d[xs_next(&s) % strlen(d)];

			if (base == 0 && i == 0 && c == '0')
				c = '7';
			buf_addch(&b, c);
			if (xs_next(&s) % 17 == 0 && i + 1 < len)
				buf_addch(&b, '_');
		}
		in[n++] = gen("%s", b.data);
	}
	/* The 4300 digit limit: decimal text, and what hex makes. */
	buf_reset(&b);
	for (i = 0; i < 4300; i++)
		buf_addch(&b, '9');
	in[n++] = gen("%s", b.data);
	in[n++] = gen("%s9", b.data);
	in[n++] = gen("-%s", b.data);
	buf_reset(&b);
	for (i = 0; i < 5000; i++)
		buf_addch(&b, '0');
	in[n++] = gen("%s", b.data);
	buf_reset(&b);
	for (i = 0; i < 3571; i++)
		buf_addch(&b, 'f');
	in[n++] = gen("0x%s", b.data);
	in[n++] = gen("0x%sf", b.data);
	in[n++] = gen("0x%sfffff", b.data);
	in[n++] = gen("[0x%sfffff]", b.data);
	run_all(in, n);
	free_inputs(in, n);
	buf_release(&b);
}
END_TEST

/* Nesting: Python's tokenizer stops at 200 open brackets. */
START_TEST(test_oracle_nesting)
{
	static const char *const open[] = { "[", "(", "{'k': ", "(1, " };
	static const char *const close[] = { "]", ")", "}", ")" };
	static const int depths[] = { 1, 100, 199, 200, 201, 250, 1000 };
	size_t n = 0, max = 4 * 7 + 5, i, j;
	struct input *in = xcalloc(max, sizeof(*in));
	struct buf b = ENVCTL_BUF_INIT;
	int d, k;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 7; j++) {
			buf_reset(&b);
			d = depths[j];
			for (k = 0; k < d; k++)
				buf_addstr(&b, open[i]);
			buf_addch(&b, '1');
			for (k = 0; k < d; k++)
				buf_addstr(&b, close[i]);
			in[n] = gen("%s", b.data);
			in[n++].toobig = d >= 200;
		}
	buf_reset(&b);
	for (k = 0; k < 1000; k++)
		buf_addstr(&b, "-");
	in[n++] = gen("%s1", b.data);
	in[n] = gen("-%s1", b.data);
	in[n++].toobig = 1;
	buf_reset(&b);
	for (k = 0; k < 1000; k++)
		buf_addstr(&b, "+1");
	in[n++] = gen("1%s", b.data);
	in[n] = gen("1%s+1", b.data);
	in[n++].toobig = 1;
	in[n++] = gen("-(((((((1)))))))");
	run_all(in, n);
	free_inputs(in, n);
	buf_release(&b);
}
END_TEST

/* Random texts from literal fragments, for what the lists miss. */
START_TEST(test_oracle_fragments)
{
	static const char *const frag[] = { "1", "0", "-", "+", "j", ".",
	    "e", "_", "x", "'", "\"", "b", "r", "u", "\\", "n", "(", ")",
	    "[", "]", "{", "}", ",", ":", " ", "\n", "#", "True", "None",
	    "set()", "1.5", "'a'", "0x1f", "2j", "...", "\\x41", "'''",
	    "\t", "\xc3\xa9", "0777", "1e5", "[]", "{}", "()" };
	const size_t nfrag = sizeof(frag) / sizeof(frag[0]);
	size_t n = 0, max = 4000, k, len;
	struct input *in = xcalloc(max, sizeof(*in));
	uint64_t s = 7;
	struct buf b = ENVCTL_BUF_INIT;

	while (n < max) {
		buf_reset(&b);
		len = 1 + xs_next(&s) % 8;
		for (k = 0; k < len; k++)
			buf_addstr(&b, frag[xs_next(&s) % nfrag]);
		in[n++] = gen("%s", b.data);
	}
	run_all(in, n);
	free_inputs(in, n);
	buf_release(&b);
}
END_TEST

/*
 * repr() of every code point from U+0080 (surrogates aside) against
 * Python's: the printable table and the escapes.
 */
START_TEST(test_repr_codepoints)
{
	char *argv[] = { (char *)tu_python(), "-I", "-c",
	    "import sys\n"
	    "s = ''.join(chr(c) for c in range(0x80, 0x110000)\n"
	    "            if not 0xd800 <= c < 0xe000)\n"
	    "sys.stdout.buffer.write(repr(s + '\\'\"\\\\ \\x00\\x1f\\x7f')"
	    ".encode())\n", NULL };
	struct ydoc *doc = ydoc_new("t");
	struct buf text = ENVCTL_BUF_INIT, got = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	struct ynode *n;
	struct tu_run r;
	uint32_t c;
	size_t i;

	for (c = 0x80; c < 0x110000; c++) {
		if (c >= 0xd800 && c < 0xe000)
			continue;
		if (c < 0x800) {
			buf_addch(&text, (int)(0xc0 | (c >> 6)));
		} else if (c < 0x10000) {
			buf_addch(&text, (int)(0xe0 | (c >> 12)));
			buf_addch(&text, (int)(0x80 | ((c >> 6) & 0x3f)));
		} else {
			buf_addch(&text, (int)(0xf0 | (c >> 18)));
			buf_addch(&text, (int)(0x80 | ((c >> 12) & 0x3f)));
			buf_addch(&text, (int)(0x80 | ((c >> 6) & 0x3f)));
		}
		buf_addch(&text, (int)(0x80 | (c & 0x3f)));
	}
	buf_add(&text, "'\"\\ \0\x1f\x7f", 7);
	n = ydoc_add_scalar(doc, ENVCTL_YSTR, text.data, text.len, 1, 1);
	ck_assert_int_eq(pyvalue_repr(&got, n, &err), 0);
	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 0, "python: %s", r.errout);
	for (i = 0; i < got.len && i < r.outlen; i++)
		if (got.data[i] != r.out[i])
			break;
	ck_assert_msg(i == got.len && i == r.outlen,
	    "repr differs from Python's at byte %zu of %zu/%zu: ours "
	    "'%.40s', Python's '%.40s'", i, got.len, r.outlen,
	    got.data + (i > 10 ? i - 10 : 0), r.out + (i > 10 ? i - 10 : 0));
	/* str() is the text itself. */
	buf_reset(&got);
	ck_assert_int_eq(pyvalue_str(&got, n, &err), 0);
	ck_assert_uint_eq(got.len, text.len);
	ck_assert_mem_eq(got.data, text.data, text.len);
	tu_run_free(&r);
	buf_release(&text);
	buf_release(&got);
	ydoc_free(doc);
}
END_TEST

/* Appends s as Python's unicode_escape codec shows it (BMP, no NUL). */
static void
unicode_escape(struct buf *esc, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k;
	unsigned cp;

	for (k = 0; k < len; k++) {
		cp = u[k];
		if (cp >= 0xe0) {
			cp = (cp & 0x0f) << 12 | (u[k + 1] & 0x3fu) << 6 |
			    (u[k + 2] & 0x3fu);
			k += 2;
		} else if (cp >= 0xc0) {
			cp = (cp & 0x1f) << 6 | (u[k + 1] & 0x3fu);
			k++;
		}
		if (cp == '\\')
			buf_addstr(esc, "\\\\");
		else if (cp == '\t')
			buf_addstr(esc, "\\t");
		else if (cp == '\n')
			buf_addstr(esc, "\\n");
		else if (cp >= 0x20 && cp < 0x7f)
			buf_addch(esc, (int)cp);
		else if (cp < 0x100)
			buf_addf(esc, "\\x%02x", cp);
		else
			buf_addf(esc, "\\u%04x", cp);
	}
}

/*
 * str() and repr() of YAML values (plain scalars typed as PyYAML does)
 * against Python's str() and repr() of yaml.safe_load()'s result.
 */
START_TEST(test_yaml_values)
{
	static const char yaml[] =
	    "a: hello\n"
	    "b: 'it''s'\n"
	    "c: 42\n"
	    "d: 0x1F\n"
	    "e: 1.5\n"
	    "f: 1e3\n"
	    "g: .inf\n"
	    "h: -.inf\n"
	    "i: yes\n"
	    "j: off\n"
	    "k: ~\n"
	    "l: [1, 'two', 3.0, null, true]\n"
	    "m: {x: 1, 'y': [a, b], 3: z}\n"
	    "n: \"tab\\there\"\n"
	    "o: 1_000\n"
	    "p: 0777\n"
	    "q: 190:20:30\n"
	    "r: 123456789012345678901234567890\n"
	    "s: []\n"
	    "t: {}\n"
	    "u: \"caf\xc3\xa9 \\u00a0\"\n"
	    "v: 6.8523015e+5\n"
	    "w: 1.0e+16\n"
	    "x: !!str 12\n"
	    "y: !!float 3\n"
	    "z: [[1, [2]], {k: [x]}]\n";
	char *argv[] = { (char *)tu_python(), "-I", "-c",
	    "import sys, yaml\n"
	    "d = yaml.safe_load(sys.stdin.read())\n"
	    "for k in sorted(d):\n"
	    "    print(k, str(d[k]).encode('unicode_escape').decode())\n"
	    "    print(k, repr(d[k]).encode('unicode_escape').decode())\n",
	    NULL };
	struct ydoc *doc = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf got = ENVCTL_BUF_INIT, line = ENVCTL_BUF_INIT;
	struct buf esc = ENVCTL_BUF_INIT;
	struct tu_run r;
	char *p, *nl;
	size_t i;
	int repr;

	ck_assert_int_eq(ydoc_load_string(&doc, yaml, sizeof(yaml) - 1,
	    "t.yaml", &err), 0);
	tu_run(&r, argv, NULL, yaml, sizeof(yaml) - 1);
	ck_assert_msg(r.status == 0, "python: %s", r.errout);
	p = r.out;
	for (i = 0; i < doc->root->npairs; i++) {
		const struct ypair *pr = &doc->root->pairs[i];

		for (repr = 0; repr < 2; repr++) {
			nl = strchr(p, '\n');
			ck_assert_ptr_nonnull(nl);
			*nl = '\0';
			buf_reset(&got);
			buf_reset(&esc);
			ck_assert_int_eq(repr ? pyvalue_repr(&got, pr->value,
			    &err) : pyvalue_str(&got, pr->value, &err), 0);
			unicode_escape(&esc, got.data, got.len);
			buf_reset(&line);
			buf_addf(&line, "%s %s", pr->key->str, esc.data);
			ck_assert_str_eq(line.data, p);
			p = nl + 1;
		}
	}
	tu_run_free(&r);
	buf_release(&got);
	buf_release(&line);
	buf_release(&esc);
	ydoc_free(doc);
}
END_TEST

/* Messages and positions of the errors. */
START_TEST(test_errors)
{
	struct ydoc *doc = ydoc_new("hosts.ini");
	struct err err = ENVCTL_ERR_INIT;
	struct ynode *v;

	ck_assert_int_eq(pyvalue_parse(doc, "{1, 2}", 6, 4, 9, &v, &err),
	    ENVCTL_EUNSUPPORTED);
	ck_assert_str_eq(err.msg, "a Python set, which envctl cannot use");
	ck_assert_str_eq(err.path, "hosts.ini");
	ck_assert_int_eq(err.line, 4);
	ck_assert_int_eq(err.col, 9);
	err_release(&err);
	ck_assert_int_eq(pyvalue_parse(doc, "[1, 2j]", 7, 1, 1, &v, &err),
	    ENVCTL_EUNSUPPORTED);
	ck_assert_str_eq(err.msg, "a value holding a Python complex number, "
	    "which envctl cannot use");
	err_release(&err);
	ck_assert_int_eq(pyvalue_parse(doc, "0777", 4, 1, 1, &v, &err),
	    ENVCTL_EPARSE);
	ck_assert_str_eq(err.msg, "not a Python literal: leading zeros in "
	    "decimal integer literals are not permitted");
	err_release(&err);
	ck_assert_int_eq(pyvalue_parse(doc, "{[1]: 2}", 8, 1, 1, &v, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "unhashable type: 'list'");
	err_release(&err);
	ck_assert_int_eq(pyvalue_parse(doc, "'\\N{DASH}'", 10, 1, 1, &v,
	    &err), ENVCTL_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "\\N{...}"));
	err_release(&err);
	ydoc_free(doc);
}
END_TEST

/* Nodes keep their types and positions; tuples print as tuples. */
START_TEST(test_nodes)
{
	struct ydoc *doc = ydoc_new("t");
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	struct ynode *v;

	ck_assert_int_eq(pyvalue_parse(doc, "[1, '1', 1.0, True, None, (2,)]",
	    31, 5, 6, &v, &err), 0);
	ck_assert_int_eq(v->type, ENVCTL_YSEQ);
	ck_assert_uint_eq(v->nitems, 6);
	ck_assert_int_eq(yscalar_kind(v->items[0]), ENVCTL_YINT);
	ck_assert_int_eq(yscalar_kind(v->items[1]), ENVCTL_YSTR);
	ck_assert_int_eq(yscalar_kind(v->items[2]), ENVCTL_YFLOAT);
	ck_assert_str_eq(v->items[2]->str, "1.0");
	ck_assert_int_eq(yscalar_kind(v->items[3]), ENVCTL_YBOOL);
	ck_assert_int_eq(yscalar_kind(v->items[4]), ENVCTL_YNULL);
	ck_assert_int_eq(v->items[5]->type, ENVCTL_YSEQ);
	ck_assert_int_eq(v->line, 5);
	ck_assert_int_eq(v->items[1]->col, 6);
	ck_assert_int_eq(pyvalue_str(&b, v, &err), 0);
	ck_assert_str_eq(b.data, "[1, '1', 1.0, True, None, (2,)]");
	buf_reset(&b);
	ck_assert_int_eq(pyvalue_str(&b, v->items[1], &err), 0);
	ck_assert_str_eq(b.data, "1");
	buf_reset(&b);
	ck_assert_int_eq(pyvalue_parse(doc, "-0x10", 5, 1, 1, &v, &err), 0);
	ck_assert_str_eq(v->str, "-16");
	ck_assert_int_eq(pyvalue_parse(doc, "1e400", 5, 1, 1, &v, &err), 0);
	ck_assert_str_eq(v->str, "inf");
	ck_assert_int_eq(yscalar_kind(v), ENVCTL_YFLOAT);
	buf_release(&b);
	ydoc_free(doc);
}
END_TEST

/* The cap: ENVCTL_ETOOBIG, the buffer as it was; unusable values. */
START_TEST(test_cap_and_unusable)
{
	struct ydoc *doc = ydoc_new("t");
	struct err err = ENVCTL_ERR_INIT;
	struct buf b;
	struct ynode *v, *u;

	buf_init(&b, 16);
	buf_addstr(&b, "ab");
	ck_assert_int_eq(pyvalue_parse(doc, "['abcdef', 'ghijkl']", 20, 1, 1,
	    &v, &err), 0);
	ck_assert_int_eq(pyvalue_repr(&b, v, &err), ENVCTL_ETOOBIG);
	ck_assert_int_eq(err.code, ENVCTL_ETOOBIG);
	ck_assert_str_eq(b.data, "ab");
	err_release(&err);
	u = ydoc_add_scalar(doc, ENVCTL_YSTR, "'x' is a Python set", 19, 2, 3);
	free(u->tag);
	u->tag = xstrdup(ENVCTL_YTAG_UNUSABLE);
	v = ydoc_add_node(doc, ENVCTL_YSEQ, 1, 1);
	yseq_append(v, u);
	ck_assert_int_eq(pyvalue_str(&b, v, &err), ENVCTL_EUNSUPPORTED);
	ck_assert_str_eq(err.msg, "'x' is a Python set");
	ck_assert_int_eq(err.line, 2);
	ck_assert_str_eq(b.data, "ab");
	err_release(&err);
	buf_release(&b);
	ydoc_free(doc);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pyvalue");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_oracle_inputs);
	tcase_add_test(tc, test_oracle_floats);
	tcase_add_test(tc, test_oracle_ints);
	tcase_add_test(tc, test_oracle_nesting);
	tcase_add_test(tc, test_oracle_fragments);
	tcase_add_test(tc, test_repr_codepoints);
	tcase_add_test(tc, test_yaml_values);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_nodes);
	tcase_add_test(tc, test_cap_and_unusable);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
