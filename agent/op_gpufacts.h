/*
 * op_gpufacts.h - the "gpufacts" op: the host's GPUs, driver, CUDA
 * toolkit, and per interpreter the Triton ptxas and libnccl its workers
 * would use (docs/gpufacts.md).
 *
 * Read-only and bounded: every program runs under child.h with its own
 * deadline (at most ENVCTL_GPUFACTS_RUN_MS, never past the request's
 * timeout_ms) and capped output; files are read with caps.  A host
 * without a GPU or a toolkit has empty facts, not an error; what failed
 * is named in the facts' "errors" / "error" members.  Privileged
 * (policy.h), nvidia-smi, ptxas, nvcc and the files read must be
 * root-owned on root-only paths, and interpreters pass the usual check.
 */
#ifndef ENVCTL_AGENT_OP_GPUFACTS_H
#define ENVCTL_AGENT_OP_GPUFACTS_H

#include <jansson.h>

struct agent_ctx;
struct err;

#define ENVCTL_GPUFACTS_MAX_INTERP	16
#define ENVCTL_GPUFACTS_LIB_MAX		(1024ul * 1024 * 1024)	/* libnccl */

/*
 * {"op":"gpufacts","facts":["gpu","cuda","nccl","triton"],
 * "interpreters":[...],"cuda_home":PATH|null,"arch":N|null,
 * "timeout_ms":N} -> {"gpu","cuda","arch","interpreters"} as
 * docs/internals.md shows.  ENVCTL_EINVALID for a malformed request; an
 * interpreter the policy refuses is that interpreter's "error".
 */
int	op_gpufacts(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
