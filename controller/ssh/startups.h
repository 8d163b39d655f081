/*
 * startups.h - how many SSH handshakes are in flight, per hop (--max-startups).
 *
 * A counting semaphore per key (the first hop of a ProxyJump, the target of
 * a ProxyCommand, or "address:port" without a proxy): at most max holders
 * per key, waiters sleep on the key's condition variable until a slot frees
 * or their deadline passes, never polling.  A key lives only while it has
 * holders or waiters.  Thread-safe; one per run, shared by all host jobs.
 */
#ifndef ENVCTL_CONTROLLER_SSH_STARTUPS_H
#define ENVCTL_CONTROLLER_SSH_STARTUPS_H

#include <stddef.h>

struct err;
struct startups;

#define ENVCTL_DEFAULT_MAX_STARTUPS	10	/* sshd: MaxStartups 10:30:100 */

/* At most max (>= 1) holders per key; freed with startups_free(). */
struct startups *startups_new(int max);
/* No holder or waiter may remain; startups_free(NULL) is a no-op. */
void	startups_free(struct startups *s);
/* The cap given to startups_new(). */
int	startups_max(const struct startups *s);
/*
 * Takes one of key's slots, waiting until deadline (CLOCK_MONOTONIC ms; 0:
 * forever) when all are held.  0, or ENVCTL_ETIMEOUT (err says nothing:
 * the caller knows what it waited for).  *waited_ms gets the time spent.
 */
int	startups_acquire(struct startups *s, const char *key,
	    long long deadline, long long *waited_ms, struct err *err);
/* Gives back a slot that startups_acquire() took for key. */
void	startups_release(struct startups *s, const char *key);
/* How many slots of key are held now (0 for an unknown key). */
int	startups_held(struct startups *s, const char *key);
/* How many wait for a slot of key now. */
int	startups_waiting(struct startups *s, const char *key);
/* How many keys are alive (held or waited for): 0 once all is released. */
size_t	startups_nkeys(struct startups *s);

#endif
