/* strutil.c - small string helpers (see strutil.h). */
#include "strutil.h"

#include <stdlib.h>
#include <string.h>

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
	size_t d, bestd = (size_t)-1, limit = strlen(word) / 3;

	if (limit < 2)
		limit = 2;
	for (; *candidates != NULL; candidates++) {
		d = str_distance(word, *candidates);
		if (d < bestd) {
			bestd = d;
			best = *candidates;
		}
	}
	return bestd <= limit ? best : NULL;
}

int
str_endswith(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}
