/*
 * fortify.c - the _FORTIFY_SOURCE entry points Debian's libjansson.a calls.
 *
 * The shipped agent is linked with musl, which has no fortified functions,
 * while Debian compiles libjansson.a for glibc with _FORTIFY_SOURCE=2.
 * These do what glibc's do: check the size the compiler knew of the
 * destination, abort on overflow, then call the plain function.  Only
 * the musl build of the agent links this file (see the Makefile).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	__vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen,
	    const char *fmt, va_list ap);
int	__snprintf_chk(char *s, size_t maxlen, int flag, size_t slen,
	    const char *fmt, ...);
char	*__strncpy_chk(char *dst, const char *src, size_t len, size_t dstlen);

int
__vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen,
    const char *fmt, va_list ap)
{
	(void)flag;
	if (maxlen > slen)
		abort();
	return vsnprintf(s, maxlen, fmt, ap);
}

int
__snprintf_chk(char *s, size_t maxlen, int flag, size_t slen,
    const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = __vsnprintf_chk(s, maxlen, flag, slen, fmt, ap);
	va_end(ap);
	return r;
}

char *
__strncpy_chk(char *dst, const char *src, size_t len, size_t dstlen)
{
	if (len > dstlen)
		abort();
	return strncpy(dst, src, len);
}
