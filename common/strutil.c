/* strutil.c - small string helpers (see strutil.h). */
#include "strutil.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xmalloc.h"

size_t
str_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev, tmp, best;
	size_t *row = xcalloc(lb + 1, sizeof(*row));

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			best = prev + (a[i - 1] == b[j - 1] ? 0 : 1);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

const char *
str_closest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	size_t d, bestd = (size_t)-1, len = strlen(word);

	for (; *candidates != NULL; candidates++) {
		d = str_distance(word, *candidates);
		if (d < bestd && d <= strlen(*candidates) / 2 && d < len) {
			bestd = d;
			best = *candidates;
		}
	}
	return best;
}

int
str_endswith(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

void
str_addutf8(struct buf *b, uint32_t cp)
{
	if (cp < 0x80)
		buf_addch(b, (int)cp);
	else if (cp < 0x800) {
		buf_addch(b, (int)(0xc0 | (cp >> 6)));
		buf_addch(b, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		buf_addch(b, (int)(0xe0 | (cp >> 12)));
		buf_addch(b, (int)(0x80 | ((cp >> 6) & 0x3f)));
		buf_addch(b, (int)(0x80 | (cp & 0x3f)));
	} else {
		buf_addch(b, (int)(0xf0 | (cp >> 18)));
		buf_addch(b, (int)(0x80 | ((cp >> 12) & 0x3f)));
		buf_addch(b, (int)(0x80 | ((cp >> 6) & 0x3f)));
		buf_addch(b, (int)(0x80 | (cp & 0x3f)));
	}
}

int
str_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t
str_utf8_decode(const char *s, size_t avail, uint32_t *cp, const char **why)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c;
	size_t n, i;

	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] < 0xc0) {
		*why = "unexpected continuation byte";
		return 0;
	}
	if (u[0] < 0xe0) {
		n = 2;
		c = u[0] & 0x1f;
	} else if (u[0] < 0xf0) {
		n = 3;
		c = u[0] & 0x0f;
	} else if (u[0] < 0xf8) {
		n = 4;
		c = u[0] & 0x07;
	} else {
		*why = "byte never valid in UTF-8";
		return 0;
	}
	for (i = 1; i < n; i++) {
		if (i >= avail || (u[i] & 0xc0) != 0x80) {
			*why = "truncated sequence";
			return 0;
		}
		c = (c << 6) | (u[i] & 0x3f);
	}
	if (c < min[n]) {
		*why = "overlong encoding";
		return 0;
	}
	if (c >= 0xd800 && c <= 0xdfff) {
		*why = "UTF-16 surrogate";
		return 0;
	}
	if (c > 0x10ffff) {
		*why = "code point above U+10FFFF";
		return 0;
	}
	*cp = c;
	return n;
}

/*
 * Code points a terminal acts on or that change how text around them
 * reads: C1 controls, the line and paragraph separators, and the
 * bidirectional marks and overrides that can make code read otherwise
 * than it runs (CVE-2021-42574).
 */
static int
vis_hidden(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x61c || c == 0x200e ||
	    c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
	    (c >= 0x2066 && c <= 0x2069);
}

void
str_addvis(struct buf *out, const char *s, size_t len, unsigned flags)
{
	const char *why, *run = s, *end = s + len;
	uint32_t c;
	size_t n;

	while (s < end) {
		n = str_utf8_decode(s, (size_t)(end - s), &c, &why);
		if (n > 0 && c >= 0x20 && c != 0x7f && !vis_hidden(c)) {
			s += n;
			continue;
		}
		if (n > 0 && c == '\t' && (flags & ENVCTL_VIS_TAB)) {
			s++;
			continue;
		}
		buf_add(out, run, (size_t)(s - run));
		if (n == 0) {
			buf_addf(out, "\\x%02x", (unsigned char)*s);
			n = 1;
		} else if (c == '\n')
			buf_addstr(out, "\\n");
		else if (c == '\r')
			buf_addstr(out, "\\r");
		else if (c == '\t')
			buf_addstr(out, "\\t");
		else if (c < 0x80)
			buf_addf(out, "\\x%02x", (unsigned)c);
		else
			buf_addf(out, "\\u%04x", (unsigned)c);
		s += n;
		run = s;
	}
	buf_add(out, run, (size_t)(s - run));
}

const char *
vis_str(struct vis *v, const char *s)
{
	struct buf b = ENVCTL_BUF_INIT;
	char **slot = &v->slot[v->next++ % ENVCTL_VIS_SLOTS];

	if (s != NULL)
		str_addvis(&b, s, strlen(s), 0);
	free(*slot);
	*slot = buf_detach(&b, NULL);
	return *slot;
}

void
vis_release(struct vis *v)
{
	size_t i;

	for (i = 0; i < ENVCTL_VIS_SLOTS; i++) {
		free(v->slot[i]);
		v->slot[i] = NULL;
	}
	v->next = 0;
}
