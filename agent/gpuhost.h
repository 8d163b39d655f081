/*
 * gpuhost.h - what GPU facts and CUDA checks read and run on this host.
 *
 * Shared by op_gpufacts.c and cudacheck.c: nvidia-smi from its fixed
 * places only, a toolkit's version (version.json, dist-info, nvcc, ptxas),
 * every program run under child.h with its own deadline and capped
 * output, never through a shell.  Privileged, each program and file must
 * pass policy_program() first.  A struct gpuhost belongs to one request.
 */
#ifndef ENVCTL_AGENT_GPUHOST_H
#define ENVCTL_AGENT_GPUHOST_H

#include <jansson.h>

struct agent_ctx;
struct buf;
struct err;
struct policy;

#define ENVCTL_GPUFACTS_RUN_MS		10000	/* one program run, at most */
#define ENVCTL_GPUFACTS_OUT_KEEP	(256u * 1024)	/* a program's stdout */
#define ENVCTL_GPUFACTS_FILE_MAX	(64u * 1024)	/* /proc, version.json */
#define ENVCTL_GPUFACTS_MIN_RUN_MS	50	/* below this, nothing starts */
/* The places nvidia-smi is looked for, in order; never $PATH. */
#define ENVCTL_GPUFACTS_SMI \
	"/usr/bin/nvidia-smi", "/usr/local/nvidia/bin/nvidia-smi", \
	"/usr/local/bin/nvidia-smi"
#define ENVCTL_GPUFACTS_DRIVER	"/proc/driver/nvidia/version"
#define ENVCTL_GPUFACTS_CMDLINE	"/proc/cmdline"
#define ENVCTL_GPUFACTS_CUDA	"/usr/local/cuda"

struct gpuhost {
	const struct agent_ctx *ctx;	/* NULL: no stop or wait mask */
	struct policy	*pol;		/* borrowed, open */
	long long	 deadline;	/* deadline.h, ms */
	const char	*root;		/* test builds: a prefix, else "" */
};

/*
 * Fills g for timeout_ms from now.  The test build (ENVCTL_FAULTS) takes
 * its root from ENVCTL_TEST_GPU_ROOT, a prefix for /proc files and the
 * nvidia-smi places; the shipped agent has none.
 */
void	gpuhost_init(struct gpuhost *g, const struct agent_ctx *ctx,
	    struct policy *pol, int timeout_ms);
/* path under g's root (caller frees). */
char	*gpuhost_rooted(const struct gpuhost *g, const char *path);
/*
 * Runs argv (argv[0] absolute) to its end with LC_ALL=C and the probe's
 * PATH, its stdout appended to out.  ENVCTL_EPROBE when it exits non-zero
 * (stderr's first line in the message), ETIMEOUT, ETOOBIG.
 */
int	gpuhost_run(struct gpuhost *g, char *const argv[], const char *name,
	    struct buf *out, struct err *err);
/*
 * Reads a small file into b (initialised here, capped; release it when 0
 * is returned and not *missing); *missing set and 0 when it is absent.
 */
int	gpuhost_read(struct gpuhost *g, struct buf *b, const char *path,
	    int *missing, struct err *err);
/*
 * The first nvidia-smi of the fixed places (under the root) in *out, or
 * NULL when there is none; caller frees.  A refusal of the policy is its
 * error, *out then NULL.
 */
int	gpuhost_smi(const struct gpuhost *g, char **out, struct err *err);
/* nvidia-smi's header, parsed: {"driver", "cuda"} (gpufacts.h). */
int	gpuhost_smi_header(struct gpuhost *g, const char *smi, json_t **out,
	    struct err *err);
/*
 * `path --version`, "release X.Y": {"path", "version", "full"} (a new
 * reference), or NULL with err set, or NULL with *missing when path is
 * not a regular file.
 */
json_t	*gpuhost_tool(struct gpuhost *g, const char *path, int *missing,
	    struct err *err);
/*
 * The toolkit at home: {"home", "from", "exists", "version", "full",
 * "source", "ptxas", "errors"} as docs/internals.md shows.  Never fails.
 */
json_t	*gpuhost_toolkit(struct gpuhost *g, const char *home,
	    const char *from);
/* Appends err's message to the array errs and releases err. */
void	gpuhost_note(json_t *errs, struct err *err);

#endif
