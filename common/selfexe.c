/* selfexe.c - where the running program's file is (see selfexe.h). */
#include "selfexe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"

char *
selfexe_path(void)
{
	size_t size = 256;
	char *p = NULL;
	ssize_t n;

	for (;;) {
		p = xreallocarray(p, size, 1);
		if ((n = readlink("/proc/self/exe", p, size)) == -1) {
			free(p);
			return NULL;
		}
		if ((size_t)n < size)
			break;
		size *= 2;	/* it filled the buffer: it may be longer */
	}
	p[n] = '\0';
	if (p[0] != '/') {
		free(p);
		errno = ENOENT;
		return NULL;
	}
	return p;
}

char *
selfexe_dir(void)
{
	char *p = selfexe_path(), *slash;

	if (p == NULL)
		return NULL;
	slash = strrchr(p, '/');
	if (slash == p)
		slash[1] = '\0';
	else
		*slash = '\0';
	return p;
}
