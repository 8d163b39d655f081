/*
 * shard.h - split the selected hosts into N stable shards (--shard K/N).
 *
 * A host belongs to shard jump(key, N) (Lamping & Veach 2014, "A Fast,
 * Minimal Memory, Consistent Hash Algorithm"), key being the first 8 bytes
 * of SHA-256(inventory hostname) read big-endian: independent of inventory
 * order, the same on every rerun and machine, and growing N moves only
 * 1/N of the hosts.  K is 0-based (0..N-1), as Slurm's --array=0-3 and
 * Kubernetes' JOB_COMPLETION_INDEX count.  Pure; thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_SHARD_H
#define ENVCTL_CONTROLLER_SHARD_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct inventory;

#define ENVCTL_SHARD_MAX	65536	/* largest N */
#define ENVCTL_SHARD_LABEL	24	/* "65535/65536" and a NUL, with room */

struct shard {
	unsigned	 index;		/* 0..count-1 */
	unsigned	 count;		/* 0: not sharded */
};

/*
 * Fills s from --shard SPEC ("K/N", or "auto": from SLURM_ARRAY_TASK_ID,
 * _MIN, _COUNT (and _STEP, _MAX), else JOB_COMPLETION_INDEX with shards,
 * --shards N; 0 when not given).  spec NULL: not sharded.  Returns 0 or
 * ENVCTL_EUSAGE with a message naming the option or the variable.
 */
int	shard_resolve(struct shard *s, const char *spec, int shards,
	    struct err *err);
/* The shard (0..count-1) of the host named name; count >= 1. */
unsigned shard_of(const char *name, unsigned count);
/* Jump consistent hash of key into buckets (>= 1) buckets. */
unsigned shard_jump(uint64_t key, unsigned buckets);
/*
 * Clears selected[i] of every inventory host outside shard s (nothing
 * when s is not sharded) and recounts *nselected.
 */
void	shard_select(const struct shard *s, const struct inventory *inv,
	    unsigned char *selected, size_t *nselected);
/* "K/N" into buf (ENVCTL_SHARD_LABEL bytes); "" when not sharded. */
const char *shard_label(char *buf, const struct shard *s);
/*
 * The n inputs' shards (s[i] of the input named names[i]) must be all N of
 * one run, each once: 0, or ENVCTL_EINVALID naming the input not sharded
 * ("'a.json' is not from a sharded run"), the count that differs ("'b'
 * is shard 1/3, but 'a' is 0/4"), a shard given twice ("shard 2/4 twice:
 * 'a' and 'b'") or the missing ones ("missing shards 1/4, 3/4 of 4").
 */
int	shard_check_set(const struct shard *s, const char *const *names,
	    size_t n, struct err *err);
/*
 * Parses "K/N" (0 <= K < N <= ENVCTL_SHARD_MAX) into s: 0, or
 * ENVCTL_EINVALID without a message (the caller says where).
 */
int	shard_parse(struct shard *s, const char *text);

#endif
