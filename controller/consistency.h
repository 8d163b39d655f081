/*
 * consistency.h - NCCL settings that differ inside an inventory group.
 *
 * All ranks of one NCCL job must see the same NCCL settings (NVIDIA/nccl
 * issues #260 and #1136): a group whose hosts would end up with different
 * NCCL_* values, or whose hosts differ now while they are meant to agree
 * (a half-done rollout), is a hang waiting to happen.  consistency_find()
 * looks at the rows a run read (a host counts once, by its first row) and
 * lists one warning per group and variable; secret values are masked.
 * Pure; the struct owns its memory.
 */
#ifndef ENVCTL_CONTROLLER_CONSISTENCY_H
#define ENVCTL_CONTROLLER_CONSISTENCY_H

#include <jansson.h>
#include <stddef.h>

struct buf;
struct host_plan;

struct consistency_warning {
	char	*group;
	char	*variable;
	int	 now;		/* 0: the desired values differ; 1: they
				   agree, but the effective ones do not */
	char	*text;		/* "gpu-a100: NCCL_ALGO Ring on 6 hosts, ..." */
};

/* One host's value of one variable in one of its groups. */
struct consistency_obs {
	const char	*group;
	const char	*var;
	const char	*want;		/* NULL: unset */
	const char	*now;
	int		 secret;
	const char	*host;
};

struct consistency {
	struct consistency_warning *w;
	size_t	 n;
};

/* Fills c from the n rows in hps. */
void	consistency_find(struct consistency *c, struct host_plan *const *hps,
	    size_t n);
/*
 * Fills c from n observations (of every group and variable: others are
 * left out here), reordering o; for `report merge`, which has no plans.
 */
void	consistency_find_obs(struct consistency *c,
	    struct consistency_obs *o, size_t n);
/* "warning: TEXT" lines. */
void	consistency_text(struct buf *out, const struct consistency *c);
/* [{"group","variable","kind":"desired|now","text"}]; a new reference. */
json_t	*consistency_json(const struct consistency *c);
void	consistency_release(struct consistency *c);

#endif
