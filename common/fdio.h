/*
 * fdio.h - whole writes to a file descriptor, and pipes for children.
 *
 * For blocking descriptors only (a non-blocking one may need a wait loop,
 * as agent/session.c has).  No allocation, no global state.
 */
#ifndef ENVCTL_COMMON_FDIO_H
#define ENVCTL_COMMON_FDIO_H

#include <stddef.h>

/* Writes all len bytes, retrying on EINTR; 0, or -1 with errno set. */
int	fd_write_all(int fd, const void *data, size_t len);
/*
 * A pipe whose two ends are close-on-exec from the start (pipe2), so that
 * a child another thread starts meanwhile never inherits them; 0, or -1
 * with errno set.
 */
int	fd_cloexec_pipe(int p[2]);

#endif
