/*
 * context.h - what every command loads first: inventory, --limit, playbook.
 *
 * context_load() reads the inventory, selects hosts with the --limit
 * pattern, then finds and loads the playbook: -p, else the inventory
 * variable envctl_playbook (relative to the inventory file; it must be the
 * same for every selected host), else the installed default cuda13-nccl.
 * Every problem found is chained into err.  Release with context_release().
 */
#ifndef ENVCTL_CONTROLLER_CONTEXT_H
#define ENVCTL_CONTROLLER_CONTEXT_H

#include <stddef.h>

#include "controller/shard.h"

struct err;
struct inventory;
struct playbook;

#define ENVCTL_DEFAULT_PLAYBOOK	"cuda13-nccl"

struct context {
	struct inventory *inv;
	struct playbook	*pb;		/* NULL when it failed to load */
	unsigned char	*selected;	/* one flag per inventory host */
	size_t		 nselected;
	struct shard	 shard;		/* --shard, applied to selected by
					   cmd_shard() */
};

/*
 * Loads into ctx (zeroed by the caller).  playbook and limit may be NULL.
 * Returns 0 or the first error's code; on error ctx holds whatever loaded.
 */
int	context_load(struct context *ctx, const char *inventory,
	    const char *playbook, const char *limit, struct err *err);
void	context_release(struct context *ctx);

#endif
