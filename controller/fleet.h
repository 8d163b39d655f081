/*
 * fleet.h - run one job per host on a bounded pool of threads.
 *
 * fleet_run() calls job(ctx, i) for every index in idx[0..n), at most
 * forks at a time, and returns when all are done.  Results are reported in
 * the order of idx, as soon as a host and every host before it are done:
 * done(ctx, i) runs on one thread at a time, so it may print (a host's
 * block is printed whole and never interleaved).  progress(ctx, ndone, n),
 * if not NULL, runs under the same lock after every completion.
 */
#ifndef ENVCTL_CONTROLLER_FLEET_H
#define ENVCTL_CONTROLLER_FLEET_H

#include <stddef.h>

struct fleet_job {
	void		(*job)(void *ctx, size_t i);
	void		(*done)(void *ctx, size_t i);
	void		(*progress)(void *ctx, size_t ndone, size_t n);
	void		*ctx;
};

/* Returns 0, or ENVCTL_ESYS when no thread at all could be started. */
int	fleet_run(const struct fleet_job *fj, const size_t *idx, size_t n,
	    int forks);

#endif
