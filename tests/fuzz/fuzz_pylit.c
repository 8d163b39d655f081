/*
 * fuzz_pylit.c - pylit_quote(), pylit_utf8_valid() and
 * pylit_is_identifier() on arbitrary bytes, as values and names reach the
 * generated sitecustomize.py.
 *
 * Properties: pylit_utf8_valid() agrees, first bad offset included, with
 * the independent validator below (the well-formed byte sequences of
 * Unicode's table 3-7).  pylit_quote() succeeds exactly when the input has
 * no NUL and is valid UTF-8; it then appends a literal of printable ASCII
 * only, in double quotes, that the decoder below (Python 3's escapes \\ \"
 * \n \r \t \xHH \uHHHH \UHHHHHHHH, code points written as UTF-8) turns
 * back into the input byte for byte; it otherwise fails with
 * ENVCTL_EINVALID and leaves out as it was.  pylit_is_identifier() on the
 * input up to its first NUL agrees with [A-Za-z_][A-Za-z0-9_]*.
 */
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/pylit.h"
#include "tests/fuzz/fuzz.h"

/* What out holds before the call: the literal must be appended to it. */
static const char marker[] = "x = ";

/*
 * Returns 1 when s is well-formed UTF-8 (NUL included), else 0 with the
 * offset of the first ill-formed sequence in *offp.  Each lead byte allows
 * one range for the byte after it (table 3-7 of the Unicode standard),
 * which is what rules out overlongs, surrogates and U+110000 and up.
 */
static int
utf8_ok(const unsigned char *s, size_t len, size_t *offp)
{
	size_t i = 0, n, k;
	unsigned char lo, hi;

	while (i < len) {
		lo = 0x80;
		hi = 0xbf;
		if (s[i] <= 0x7f)
			n = 1;
		else if (s[i] >= 0xc2 && s[i] <= 0xdf)
			n = 2;
		else if (s[i] == 0xe0) {
			n = 3;
			lo = 0xa0;
		} else if (s[i] == 0xed) {
			n = 3;
			hi = 0x9f;
		} else if (s[i] >= 0xe1 && s[i] <= 0xef)
			n = 3;
		else if (s[i] == 0xf0) {
			n = 4;
			lo = 0x90;
		} else if (s[i] == 0xf4) {
			n = 4;
			hi = 0x8f;
		} else if (s[i] >= 0xf1 && s[i] <= 0xf3)
			n = 4;
		else
			goto bad;
		if (n > len - i)
			goto bad;
		for (k = 1; k < n; k++) {
			if (s[i + k] < lo || s[i + k] > hi)
				goto bad;
			lo = 0x80;
			hi = 0xbf;
		}
		i += n;
	}
	return 1;
 bad:
	*offp = i;
	return 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Appends code point cp as UTF-8. */
static void
put_utf8(struct buf *b, unsigned long cp)
{
	FUZZ_ASSERT(cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff));
	if (cp < 0x80)
		buf_addch(b, (int)cp);
	else if (cp < 0x800) {
		buf_addch(b, (int)(0xc0 | cp >> 6));
		buf_addch(b, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		buf_addch(b, (int)(0xe0 | cp >> 12));
		buf_addch(b, (int)(0x80 | (cp >> 6 & 0x3f)));
		buf_addch(b, (int)(0x80 | (cp & 0x3f)));
	} else {
		buf_addch(b, (int)(0xf0 | cp >> 18));
		buf_addch(b, (int)(0x80 | (cp >> 12 & 0x3f)));
		buf_addch(b, (int)(0x80 | (cp >> 6 & 0x3f)));
		buf_addch(b, (int)(0x80 | (cp & 0x3f)));
	}
}

/*
 * Decodes the Python 3 literal lit (quotes included) into dec, as the
 * interpreter would; any other escape or a bare quote inside is broken.
 */
static void
decode(const char *lit, size_t len, struct buf *dec)
{
	unsigned long cp;
	size_t i, k, ndig;
	int h;

	FUZZ_ASSERT(len >= 2 && lit[0] == '"' && lit[len - 1] == '"');
	for (i = 1; i < len - 1; i++) {
		FUZZ_ASSERT(lit[i] != '"');
		if (lit[i] != '\\') {
			buf_addch(dec, lit[i]);
			continue;
		}
		FUZZ_ASSERT(++i < len - 1);
		ndig = 0;
		switch (lit[i]) {
		case '\\':
		case '"':
			buf_addch(dec, lit[i]);
			continue;
		case 'n':
			buf_addch(dec, '\n');
			continue;
		case 'r':
			buf_addch(dec, '\r');
			continue;
		case 't':
			buf_addch(dec, '\t');
			continue;
		case 'x':
			ndig = 2;
			break;
		case 'u':
			ndig = 4;
			break;
		case 'U':
			ndig = 8;
			break;
		}
		FUZZ_ASSERT(ndig > 0);
		FUZZ_ASSERT(len - 1 - (i + 1) >= ndig);
		for (cp = 0, k = 0; k < ndig; k++) {
			h = hexval((unsigned char)lit[++i]);
			FUZZ_ASSERT(h >= 0);
			cp = cp << 4 | (unsigned long)h;
		}
		put_utf8(dec, cp);
	}
}

static int
is_alpha_(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static void
identifier(const uint8_t *data, size_t size)
{
	/* Up to the first NUL, as a C string holds it. */
	char *s = xstrndup((const char *)data, size);
	size_t i;
	int want;

	want = is_alpha_((unsigned char)s[0]);
	for (i = 1; want && s[i] != '\0'; i++)
		want = is_alpha_((unsigned char)s[i]) ||
		    (s[i] >= '0' && s[i] <= '9');
	FUZZ_ASSERT(pylit_is_identifier(s) == want);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct buf out = ENVCTL_BUF_INIT, dec = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	size_t off = (size_t)-1, myoff = (size_t)-1, i;
	int valid, nul, r;

	valid = utf8_ok(data, size, &myoff);
	FUZZ_ASSERT(pylit_utf8_valid(s, size, &off) == valid);
	FUZZ_ASSERT(off == myoff);
	nul = memchr(data, '\0', size) != NULL;

	buf_addstr(&out, marker);
	r = pylit_quote(&out, s, size, &err);
	FUZZ_ASSERT(out.len >= sizeof(marker) - 1 &&
	    memcmp(out.data, marker, sizeof(marker) - 1) == 0);
	if (r == 0) {
		FUZZ_ASSERT(!nul && valid && err.code == 0);
		for (i = sizeof(marker) - 1; i < out.len; i++)
			FUZZ_ASSERT(out.data[i] >= 0x20 && out.data[i] <= 0x7e);
		decode(out.data + sizeof(marker) - 1,
		    out.len - (sizeof(marker) - 1), &dec);
		FUZZ_ASSERT(dec.len == size && memcmp(dec.data, s, size) == 0);
	} else {
		FUZZ_ASSERT(r == ENVCTL_EINVALID && err.code == r);
		FUZZ_ASSERT(nul || !valid);
		FUZZ_ASSERT(out.len == sizeof(marker) - 1);
		err_release(&err);
	}
	identifier(data, size);
	buf_release(&out);
	buf_release(&dec);
	return 0;
}
