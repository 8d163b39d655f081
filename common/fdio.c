/* fdio.c - whole writes to a file descriptor (see fdio.h). */
#define _GNU_SOURCE	/* pipe2 */
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int
fd_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
fd_cloexec_pipe(int p[2])
{
	return pipe2(p, O_CLOEXEC);
}
