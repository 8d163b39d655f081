/*
 * xmalloc.h - allocation that never returns NULL.
 *
 * Running out of memory is not an error envctl can report usefully, so every
 * allocator here aborts with a message instead (OpenSSH's xmalloc).  Sizes
 * are checked for overflow.  Everything returned is freed with free(); a
 * list of strings grown with strv_push() with strv_free().
 */
#ifndef ENVCTL_COMMON_XMALLOC_H
#define ENVCTL_COMMON_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>

void	*xmalloc(size_t size);
void	*xcalloc(size_t nmemb, size_t size);
/* Resizes ptr to nmemb * size bytes; aborts on overflow. */
void	*xreallocarray(void *ptr, size_t nmemb, size_t size);
char	*xstrdup(const char *s);
/* Copies at most n bytes of s and NUL-terminates. */
char	*xstrndup(const char *s, size_t n);
/* Returns a newly allocated formatted string. */
char	*xasprintf(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
char	*xvasprintf(const char *fmt, va_list ap)
	    __attribute__((format(printf, 1, 0)));

/*
 * Grows array ptr (of *alloc elements) so that it holds at least n elements,
 * like git's ALLOC_GROW.  ptr may be NULL with *alloc == 0.
 */
#define ENVCTL_GROW(ptr, n, alloc) do {					\
	if ((n) > (alloc)) {						\
		size_t grow_ = (alloc) < 8 ? 8 : (alloc) * 2;		\
		if (grow_ < (n))					\
			grow_ = (n);					\
		(ptr) = xreallocarray((ptr), grow_, sizeof(*(ptr)));	\
		(alloc) = grow_;					\
	}								\
} while (0)

/* Appends s (taken, not copied) to the list *v of *n strings. */
void	 strv_push(char ***v, size_t *n, char *s);
/* Frees the n strings of v, then v. */
void	 strv_free(char **v, size_t n);

/* Overwrites n bytes with zeros in a way the compiler may not elide. */
void	 explicit_wipe(void *p, size_t n);

#endif
