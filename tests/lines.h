/*
 * lines.h - a text cut into lines, for the diff tests (check_diff and the
 * diff fuzz target), kept apart from controller/diff.c so that the tests
 * do not judge diff.c by its own code.
 *
 * A line ends after '\n' or at the end of the text; the text is borrowed.
 * off is the caller's to free().
 */
#ifndef ENVCTL_TESTS_LINES_H
#define ENVCTL_TESTS_LINES_H

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

#endif
