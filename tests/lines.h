/*
 * lines.h - a text cut into lines, for the diff tests (check_diff and the
 * diff fuzz target), kept apart from controller/diff.c so that the tests
 * do not judge diff.c by its own code.
 *
 * A line ends after '\n' or at the end of the text (so a last line without
 * '\n' differs from the same text with it); the text is borrowed.  off is
 * the caller's to free().
 */
#ifndef ENVCTL_TESTS_LINES_H
#define ENVCTL_TESTS_LINES_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

/* Line i is off[i] .. off[i + 1], its '\n' included; n lines. */
struct lines {
	const char	*s;
	size_t		 n;
	size_t		*off;
};

static inline void
lines_split(struct lines *l, const char *s, size_t len)
{
	const char *nl;
	size_t alloc = 0, at = 0;

	l->s = s;
	l->n = 0;
	l->off = NULL;
	while (at < len) {
		ENVCTL_GROW(l->off, l->n + 1, alloc);
		l->off[l->n++] = at;
		nl = memchr(s + at, '\n', len - at);
		at = nl != NULL ? (size_t)(nl - s) + 1 : len;
	}
	ENVCTL_GROW(l->off, l->n + 1, alloc);
	l->off[l->n] = len;
}

static inline size_t
line_len(const struct lines *l, size_t i)
{
	return l->off[i + 1] - l->off[i];
}

/* Whether line i of a and line j of b are the same bytes. */
static inline bool
lines_same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	size_t n = line_len(a, i);

	return n == line_len(b, j) &&
	    memcmp(a->s + a->off[i], b->s + b->off[j], n) == 0;
}

/*
 * diff.h's trivial bound: the lines of a and b between their common
 * leading and trailing lines, all deleted and inserted.
 */
static inline size_t
lines_trivial_bound(const char *a, size_t alen, const char *b, size_t blen)
{
	struct lines la, lb;
	size_t pre = 0, suf = 0, r;

	lines_split(&la, a, alen);
	lines_split(&lb, b, blen);
	while (pre < la.n && pre < lb.n && lines_same(&la, pre, &lb, pre))
		pre++;
	while (suf < la.n - pre && suf < lb.n - pre &&
	    lines_same(&la, la.n - 1 - suf, &lb, lb.n - 1 - suf))
		suf++;
	r = la.n + lb.n - 2 * (pre + suf);
	free(la.off);
	free(lb.off);
	return r;
}

#endif
