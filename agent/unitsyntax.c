/* unitsyntax.c - systemd's unit and environment file syntax (see
 * unitsyntax.h). */
#include "unitsyntax.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "common/xmalloc.h"

/* ---- names and text ---- */

int
unitsyntax_env_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_'))
			return 0;
	return 1;
}

int
unitsyntax_utf8(const char *s, size_t n)
{
	const char *why;
	uint32_t cp;
	size_t k;

	while (n > 0) {
		if ((k = str_utf8_decode(s, n, &cp, &why)) == 0 || cp == 0)
			return 0;
		s += k;
		n -= k;
	}
	return 1;
}

int
unitsyntax_unescape(struct buf *out, const char *s)
{
	unsigned v;

	for (; *s != '\0'; s++) {
		if (*s == '-')
			buf_addch(out, '/');
		else if (*s == '\\') {
			if (s[1] != 'x' ||
			    str_hexval((unsigned char)s[2]) < 0 ||
			    str_hexval((unsigned char)s[3]) < 0)
				return -1;
			v = (unsigned)(str_hexval((unsigned char)s[2]) << 4 |
			    str_hexval((unsigned char)s[3]));
			if (v == 0)
				return -1;
			buf_addch(out, (int)v);
			s += 3;
		} else
			buf_addch(out, *s);
	}
	return 0;
}

/* ---- words (systemd.syntax(7) "QUOTING") ---- */

/*
 * One C-style escape at s (after the backslash), as the table of
 * systemd.syntax(7): appends it to b and returns the characters used, or
 * 0 for an escape systemd does not know (or one that makes a NUL).
 */
static size_t
us_escape(const char *s, struct buf *b)
{
	static const char from[] = "abfnrtv\\\"'s", to[] = "\a\b\f\n\r\t\v"
	    "\\\"' ";
	const char *f;
	uint32_t cp = 0;
	size_t n, k;
	int d;

	if (*s != '\0' && (f = strchr(from, *s)) != NULL)
		return buf_addch(b, to[f - from]), 1;
	if (*s == 'x' || *s == 'u' || *s == 'U') {
		n = *s == 'x' ? 2 : *s == 'u' ? 4 : 8;
		for (k = 1; k <= n; k++) {
			if ((d = str_hexval((unsigned char)s[k])) < 0)
				return 0;
			cp = cp << 4 | (uint32_t)d;
		}
		if (cp == 0 || (*s != 'x' && (cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))))
			return 0;
		if (*s == 'x')
			buf_addch(b, (int)cp);
		else
			str_addutf8(b, cp);
		return n + 1;
	}
	if (*s >= '0' && *s <= '3') {
		for (k = 0; k < 3; k++) {
			if (s[k] < '0' || s[k] > '7')
				return 0;
			cp = cp << 3 | (uint32_t)(s[k] - '0');
		}
		if (cp == 0)
			return 0;
		buf_addch(b, (int)cp);
		return 3;
	}
	return 0;
}

int
unitsyntax_word(const char **p, struct buf *w)
{
	const char *s = *p + strspn(*p, UNITSYNTAX_WS);
	char quote = 0;
	size_t k;

	buf_reset(w);
	if (*s == '\0') {
		*p = s;
		return 0;
	}
	for (; *s != '\0'; s++) {
		if (*s == '\\') {
			if ((k = us_escape(s + 1, w)) == 0)
				return -1;
			s += k;
		} else if (quote != 0) {
			if (*s == quote)
				quote = 0;
			else
				buf_addch(w, *s);
		} else if (*s == '"' || *s == '\'')
			quote = *s;
		else if (strchr(UNITSYNTAX_WS, *s) != NULL)
			break;
		else
			buf_addch(w, *s);
	}
	if (quote != 0)
		return -1;
	*p = s;
	return 1;
}

/* ---- environment files (systemd.exec(5) "EnvironmentFile=") ---- */

/* The states of env-file.c's parser. */
enum us_state {
	US_PRE_KEY, US_KEY, US_PRE_VALUE, US_VALUE, US_VALUE_ESC, US_SQ,
	US_DQ, US_DQ_ESC, US_COMMENT, US_COMMENT_ESC
};

void
unitsyntax_pairs_free(struct unitsyntax_pair *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].value);
	}
	free(v);
}

/*
 * Ends an assignment: the key loses trailing blanks (kws: where they
 * start, or SIZE_MAX), the value too when it was unquoted (vws).
 */
static void
us_pair_end(struct unitsyntax_pair **v, size_t *n, struct buf *key,
    struct buf *val, size_t kws, size_t vws, int line)
{
	if (kws != SIZE_MAX)
		buf_truncate(key, kws);
	if (vws != SIZE_MAX)
		buf_truncate(val, vws);
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].key = xstrndup(key->data, key->len);
	(*v)[*n].value = xstrndup(val->data, val->len);
	(*v)[*n].line = line;
	(*n)++;
	buf_reset(key);
	buf_reset(val);
}

void
unitsyntax_envfile(struct unitsyntax_pair **v, size_t *n, const char *text)
{
	struct buf key = ENVCTL_BUF_INIT, val = ENVCTL_BUF_INIT;
	enum us_state st = US_PRE_KEY;
	size_t kws = SIZE_MAX, vws = SIZE_MAX;
	int line = 1, kline = 1;
	const char *p;
	char c;

	for (p = text; (c = *p) != '\0'; p++) {
		switch (st) {
		case US_PRE_KEY:
			if (c == '#' || c == ';')
				st = US_COMMENT;
			else if (strchr(UNITSYNTAX_WS, c) == NULL) {
				st = US_KEY;
				kws = SIZE_MAX;
				kline = line;
				buf_addch(&key, c);
			}
			break;
		case US_KEY:
			if (c == '\n') {
				st = US_PRE_KEY;
				buf_reset(&key);
			} else if (c == '=') {
				st = US_PRE_VALUE;
				vws = SIZE_MAX;
			} else {
				if (strchr(UNITSYNTAX_WS, c) == NULL)
					kws = SIZE_MAX;
				else if (kws == SIZE_MAX)
					kws = key.len;
				buf_addch(&key, c);
			}
			break;
		case US_PRE_VALUE:
			if (c == '\n') {
				st = US_PRE_KEY;
				us_pair_end(v, n, &key, &val, kws, SIZE_MAX,
				    kline);
			} else if (c == '\'')
				st = US_SQ;
			else if (c == '"')
				st = US_DQ;
			else if (c == '\\')
				st = US_VALUE_ESC;
			else if (strchr(UNITSYNTAX_WS, c) == NULL) {
				st = US_VALUE;
				buf_addch(&val, c);
			}
			break;
		case US_VALUE:
			if (c == '\n') {
				st = US_PRE_KEY;
				us_pair_end(v, n, &key, &val, kws, vws, kline);
			} else if (c == '\\') {
				st = US_VALUE_ESC;
				vws = SIZE_MAX;
			} else {
				if (strchr(UNITSYNTAX_WS, c) == NULL)
					vws = SIZE_MAX;
				else if (vws == SIZE_MAX)
					vws = val.len;
				buf_addch(&val, c);
			}
			break;
		case US_VALUE_ESC:
			st = US_VALUE;
			if (c != '\n')
				buf_addch(&val, c);
			break;
		case US_SQ:
			if (c == '\'')
				st = US_PRE_VALUE;
			else
				buf_addch(&val, c);
			break;
		case US_DQ:
			if (c == '"')
				st = US_PRE_VALUE;
			else if (c == '\\')
				st = US_DQ_ESC;
			else
				buf_addch(&val, c);
			break;
		case US_DQ_ESC:
			st = US_DQ;
			if (strchr("\"\\`$", c) != NULL)
				buf_addch(&val, c);
			else if (c != '\n') {
				buf_addch(&val, '\\');
				buf_addch(&val, c);
			}
			break;
		case US_COMMENT:
			if (c == '\\')
				st = US_COMMENT_ESC;
			else if (c == '\n')
				st = US_PRE_KEY;
			break;
		case US_COMMENT_ESC:
			st = c == '\n' ? US_PRE_KEY : US_COMMENT;
			break;
		}
		if (c == '\n')
			line++;
	}
	if (st == US_PRE_VALUE || st == US_VALUE || st == US_VALUE_ESC ||
	    st == US_SQ || st == US_DQ || st == US_DQ_ESC)
		us_pair_end(v, n, &key, &val, kws, st == US_VALUE ? vws :
		    SIZE_MAX, kline);
	buf_release(&key);
	buf_release(&val);
}

