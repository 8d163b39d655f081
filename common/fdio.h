/*
 * fdio.h - whole writes to a file descriptor.
 *
 * For blocking descriptors only (a non-blocking one may need a wait loop,
 * as agent/session.c has).  No allocation, no global state.
 */
#ifndef ENVCTL_COMMON_FDIO_H
#define ENVCTL_COMMON_FDIO_H

#include <stddef.h>

/* Writes all len bytes, retrying on EINTR; 0, or -1 with errno set. */
int	fd_write_all(int fd, const void *data, size_t len);

#endif
