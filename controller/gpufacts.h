/*
 * gpufacts.h - GPU host facts: the agent's "gpufacts" request and reply,
 * their text and JSON, and the template variables they give.
 *
 * gpufacts_parse() checks every member of a reply (a malformed one is
 * ENVCTL_EPARSE naming the member, as "gpu.gpus[1].compute_cap") and
 * keeps a copy; a struct gpufacts owns all it holds and is read-only
 * afterwards, so threads may share it.  Strings from the host are kept
 * as sent; gpufacts_text() makes them safe for a terminal.
 */
#ifndef ENVCTL_CONTROLLER_GPUFACTS_H
#define ENVCTL_CONTROLLER_GPUFACTS_H

#include <jansson.h>
#include <stddef.h>

struct buf;
struct err;

/* Which facts a request asks for (playbook `facts: [gpu, ...]`). */
#define ENVCTL_GPUFACTS_GPU	1u
#define ENVCTL_GPUFACTS_CUDA	2u
#define ENVCTL_GPUFACTS_NCCL	4u
#define ENVCTL_GPUFACTS_TRITON	8u
#define ENVCTL_GPUFACTS_ALL	15u
#define ENVCTL_GPUFACTS_MAX_INTERP	16	/* the agent's cap */
#define ENVCTL_GPUFACTS_STR_MAX		4096	/* bytes of one string */

struct gpufacts;

/*
 * The request (a new reference): facts a mask of ENVCTL_GPUFACTS_*,
 * interps (n <= MAX_INTERP; NULL/0: the agent's "python3"), cuda_home
 * NULL for the interpreter's CUDA_HOME or /usr/local/cuda, timeout_ms
 * what the host may spend (deadline_host_ms()).
 */
json_t	*gpufacts_request(json_int_t id, unsigned facts,
	    const char *const *interps, size_t n, const char *cuda_home,
	    int timeout_ms);
/* A mask from the names "gpu", "cuda", "nccl", "triton"; -1: unknown. */
int	 gpufacts_fact(const char *name);
/*
 * Checks an ok reply and fills *out (caller frees with gpufacts_free()).
 * ENVCTL_EPARSE "gpufacts reply: 'MEMBER' must be ..." for the first
 * member that is missing or wrong; an error reply's own code and message.
 */
int	 gpufacts_parse(struct gpufacts **out, const json_t *reply,
	    struct err *err);
void	 gpufacts_free(struct gpufacts *gf);
/*
 * Appends the facts as text lines, each starting with indent, for
 * `envctl facts`: GPUs, topology, IOMMU, toolkit, then per interpreter.
 */
void	 gpufacts_text(struct buf *out, const struct gpufacts *gf,
	    const char *indent);
/* The facts as the `--json` host object's "gpufacts" (a new reference). */
json_t	*gpufacts_json(const struct gpufacts *gf);

/*
 * Template variables, as Ansible facts: the name of variable i (0 ..
 * gpufacts_nvars() - 1) in *name and its value, or NULL when the host
 * did not tell it (leave the variable undefined).  Borrowed from gf.
 */
size_t	 gpufacts_nvars(void);
const char *gpufacts_var(const struct gpufacts *gf, size_t i,
	    const char **name);

#endif
