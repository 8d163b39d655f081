/* atomicfile.c - local atomic replacement (see atomicfile.h). */
#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fdio.h"
#include "common/xmalloc.h"

int
atomic_write_file(const char *path, const void *data, size_t len,
    mode_t mode, struct err *err)
{
	char *copy = xstrdup(path), *dir = dirname(copy), *tmp = NULL;
	struct timespec ts;
	int fd = -1, dfd = -1, r = 0, tries;

	for (tries = 0; tries < 100 && fd < 0; tries++) {
		free(tmp);
		clock_gettime(CLOCK_REALTIME, &ts);
		tmp = xasprintf("%s/.%s.envctl-tmp.%ld.%ld", dir,
		    strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path,
		    (long)getpid(), (long)(ts.tv_nsec + tries));
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot create a "
		    "temporary file in '%s'", dir);
		goto out;
	}
	if (fd_write_all(fd, data, len) != 0 || fchmod(fd, mode) != 0 ||
	    fsync(fd) != 0) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot write '%s'",
		    tmp);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot write '%s'",
		    tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot rename '%s' to "
		    "'%s'", tmp, path);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if (fsync(dfd) != 0)
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot fsync "
			    "directory '%s'", dir);
		close(dfd);
	}
out:
	if (fd >= 0)
		close(fd);
	if (tmp != NULL) {
		unlink(tmp);
		free(tmp);
	}
	free(copy);
	return r;
}
