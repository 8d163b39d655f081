/*
 * strutil.h - small string helpers shared by both programs.
 *
 * Pure functions on NUL-terminated strings; nothing here allocates except
 * where the comment says the caller frees.
 */
#ifndef ENVCTL_COMMON_STRUTIL_H
#define ENVCTL_COMMON_STRUTIL_H

#include <stddef.h>

/* Levenshtein distance between a and b (bytes). */
size_t	 str_distance(const char *a, const char *b);
/*
 * Returns the candidate (NULL-terminated list) closest to word when it is
 * close enough to be a likely typo (distance <= 2, or <= len/3), else NULL.
 */
const char *str_closest(const char *word, const char *const *candidates);
/* 1 when s ends with suffix. */
int	 str_endswith(const char *s, const char *suffix);

#endif
