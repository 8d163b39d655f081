/*
 * cudacheck.h - the cuda-toolkit and ptxas checks of a playbook's values.
 *
 * "cuda-toolkit": the value is a directory holding a CUDA toolkit, its
 * version as gpuhost_toolkit() learns it; "ptxas": an executable whose
 * `--version` says "release X.Y".  Both want the major the request names
 * (0: any), and no newer than the CUDA version the host's driver supports
 * (nvidia-smi's header, asked once per struct cudacheck; without it that
 * half is not checked, and the answer says so); a path is run once per
 * struct, however many values name it.  A failed check is an
 * answer with a reason, never an error.  One struct per request.
 *
 * A version learnt is kept in the agent's cache (cache.h, data file
 * "checks") with the identity of every file it came from or depends on
 * (device, inode, size, mtime and ctime to the nanosecond, mode, owner,
 * group; or that the file is absent): a later request that finds them all
 * the same takes the version from there and runs nothing.  Any change to
 * one of those files (replaced, written, touched, chmod, chown, created,
 * removed) makes the check run again.  Only versions are kept, never a
 * failure; not when a file changed while it was read, or within
 * CUDACHECK_RACY_S of the request (a change in the same timestamp tick
 * would not show), nor when the version came from a program that is not
 * an ELF file (a script's answer may come from files it reads).  Not
 * used by a privileged agent (policy.h): its answers are made afresh.
 */
#ifndef ENVCTL_AGENT_CUDACHECK_H
#define ENVCTL_AGENT_CUDACHECK_H

#include <jansson.h>

struct cache;
struct gpuhost;

#define CUDACHECK_DATA		"checks"	/* the cache's data file */
#define CUDACHECK_DATA_MAX	(64u * 1024)	/* bytes of it */
#define CUDACHECK_KEEP		32		/* versions kept in it */
#define CUDACHECK_PATH_MAX	1024		/* longer paths: not kept */
#define CUDACHECK_RACY_S	2		/* see above */

/* A version a request already learnt: a path is run once per request. */
struct cudacheck_seen {
	int		 ptxas;		/* kind: ptxas, else cuda-toolkit */
	char		*path;
	char		*version;	/* or NULL */
	char		*reason;	/* why there is none, or NULL */
};

struct cudacheck {
	struct gpuhost	*g;		/* borrowed */
	struct cudacheck_seen *seen;
	size_t		 nseen;
	int		 asked;		/* nvidia-smi was asked */
	char		*driver;	/* "570.133.07", or NULL */
	char		*driver_cuda;	/* "12.8", or NULL: not checked */
	char		*unchecked;	/* why not, when driver_cuda is NULL */
	struct cache	*cache;		/* the agent's, or NULL: none used */
	json_t		*kept;		/* what it keeps; NULL: not read yet */
	int		 dirty;		/* kept changed: written on release */
};

/* 1 when kind is "cuda-toolkit" or "ptxas". */
int	cudacheck_kind_valid(const char *kind);
/* For g's request; the cache is g's agent's (g->ctx), if any. */
void	cudacheck_init(struct cudacheck *c, struct gpuhost *g);
/* Writes what the request learnt to the cache, then frees c. */
void	cudacheck_release(struct cudacheck *c);
/*
 * Checks path as kind wants, major the wanted CUDA major (0: any), and
 * sets res's "ok", "reason" (why it failed; for a passed check, why the
 * driver was not checked, or null), "version" ("13.0" or null) and
 * "driver_cuda" ("12.8" or null).
 */
void	cudacheck_run(struct cudacheck *c, json_t *res, const char *kind,
	    const char *path, int major);
/* The driver major a CUDA major needs (Linux), or 0 when not known. */
int	cudacheck_min_driver(int cuda_major);

#endif
