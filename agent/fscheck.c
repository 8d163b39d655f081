/* fscheck.c - dir / file / executable checks (see fscheck.h). */
#include "fscheck.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
fscheck_kind_valid(const char *kind)
{
	return strcmp(kind, "dir") == 0 || strcmp(kind, "file") == 0 ||
	    strcmp(kind, "executable") == 0;
}

int
fscheck_run(const char *kind, const char *path, const char **reason)
{
	struct stat st;

	*reason = NULL;
	if (path[0] != '/') {
		*reason = "not an absolute path";
		return 0;
	}
	if (stat(path, &st) == -1) {
		*reason = errno == ENOENT || errno == ENOTDIR ?
		    "does not exist" : strerror(errno);
		return 0;
	}
	if (strcmp(kind, "dir") == 0) {
		if (!S_ISDIR(st.st_mode))
			*reason = "not a directory";
		return *reason == NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*reason = "not a regular file";
		return 0;
	}
	if (strcmp(kind, "executable") == 0 &&
	    faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == -1) {
		*reason = errno == EACCES ? "not executable" : strerror(errno);
		return 0;
	}
	return 1;
}
