/*
 * target.h - the managed file: its symlink chain, metadata and bytes.
 *
 * target_read() follows the chain from an absolute path with lstat() and
 * readlink(), then opens the real path with O_NOFOLLOW and takes mode,
 * owner and bytes through that one descriptor, so they describe the same
 * file.  A missing file is a normal answer (exists 0, no data).  A struct
 * target owns what it holds; release it with target_release().
 */
#ifndef ENVCTL_AGENT_TARGET_H
#define ENVCTL_AGENT_TARGET_H

#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"

struct err;

#define ENVCTL_TARGET_MAX	(8u * 1024 * 1024)
#define ENVCTL_TARGET_HOPS	40

/*
 * chain: the path, then each link's target.  real: realpath of the last
 * entry, or of its directory plus its name when it does not exist.
 */
struct target {
	char		**chain;
	size_t		  nchain;
	char		 *real;
	int		  exists;
	mode_t		  mode;		/* permission bits only */
	uid_t		  uid;
	gid_t		  gid;
	long long	  mtime;	/* seconds since the epoch */
	struct buf	  data;		/* the bytes, when it exists */
};

/*
 * Fills t for path (release t whatever the return).  ENVCTL_EINVALID when
 * path is not absolute, for a symlink loop (more than ENVCTL_TARGET_HOPS
 * links) or a file that is not regular; ENVCTL_ETOOBIG past
 * ENVCTL_TARGET_MAX; ENVCTL_ESYS with errno as cause.
 */
int	target_read(struct target *t, const char *path, struct err *err);
void	target_release(struct target *t);

#endif
