/*
 * op_layers.h - the "layers" op: what decides a worker's values besides
 * the managed file (docs/worker-env.md).
 *
 * Read-only and bounded: for each service named, its unit's launch
 * environment (unitenv.h) and the NCCL config files its user's workers
 * read (ncclconf.h); NCCL's /etc/nccl.conf on its own; and, when patterns
 * are given, the running worker processes (procenv.h) with the values of
 * the variables asked for.  Privileged (policy.h), services must be
 * listed in the policy file, and processes of other units are counted,
 * never shown.
 */
#ifndef ENVCTL_AGENT_OP_LAYERS_H
#define ENVCTL_AGENT_OP_LAYERS_H

#include <jansson.h>

struct agent_ctx;
struct err;

#define ENVCTL_LAYERS_MAX_SERVICES	16

/*
 * {"op":"layers","vars":[NAME...],"services":[UNIT...],"processes":
 * [PATTERN...]} -> {"services":[UNIT-JSON + "nccl"],"nccl":NCCL-JSON,
 * "processes":PROCS-JSON|null}.  ENVCTL_EINVALID for a malformed request
 * or a service the policy refuses.
 */
int	op_layers(json_t *reply, const json_t *req,
	    const struct agent_ctx *ctx, struct err *err);

#endif
