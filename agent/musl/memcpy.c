/*
 * memcpy.c - short copies for the musl build of the agent.
 *
 * musl's x86_64 memcpy starts every copy with `rep movsq`, which costs
 * about 45 ns here even for one byte (glibc's: 3 ns), and jansson's
 * parser and printer copy JSON a byte or a few at a time: some 10,000
 * calls per apply session.  The musl build links with --wrap=memcpy, so
 * every call, jansson's and musl's own included, comes here first;
 * copies of 32 bytes and more go on to musl's.  Built with
 * -fno-tree-loop-distribute-patterns, so that the loop below is not made
 * into a call to memcpy itself (see the Makefile).
 */
#include <stddef.h>

void	*__real_memcpy(void *restrict, const void *restrict, size_t);
void	*__wrap_memcpy(void *restrict, const void *restrict, size_t);

void *
__wrap_memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n >= 32)
		return __real_memcpy(dst, src, n);
	while (n-- > 0)
		*d++ = *s++;
	return dst;
}
