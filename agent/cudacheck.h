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
 */
#ifndef ENVCTL_AGENT_CUDACHECK_H
#define ENVCTL_AGENT_CUDACHECK_H

#include <jansson.h>

struct gpuhost;

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
};

/* 1 when kind is "cuda-toolkit" or "ptxas". */
int	cudacheck_kind_valid(const char *kind);
void	cudacheck_init(struct cudacheck *c, struct gpuhost *g);
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
