/*
 * atomicfile.h - write a local file so that readers see old or new, whole.
 *
 * The data goes to a temporary file created with O_EXCL in the target's
 * directory, is fsynced, gets its mode, and is renamed over the target;
 * then the directory is fsynced.  On any failure the target is untouched
 * and the temporary file is removed.  For plan files, reports and metrics.
 */
#ifndef ENVCTL_CONTROLLER_ATOMICFILE_H
#define ENVCTL_CONTROLLER_ATOMICFILE_H

#include <stddef.h>
#include <sys/types.h>

struct err;

/* Replaces path with data; ENVCTL_ESYS names the step and path. */
int	atomic_write_file(const char *path, const void *data, size_t len,
	    mode_t mode, struct err *err);

#endif
