/* fleet.c - one job per host on a bounded thread pool (see fleet.h). */
#include "fleet.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xmalloc.h"

struct pool {
	const struct fleet_job *fj;
	const size_t	*idx;
	size_t		 n;
	size_t		 next;		/* next job to start */
	size_t		 flushed;	/* jobs reported, in order */
	size_t		 ndone;
	unsigned char	*finished;
	pthread_mutex_t	 lock;
};

static void *
worker(void *arg)
{
	struct pool *p = arg;
	size_t k;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		k = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (k == p->n)
			return NULL;
		p->fj->job(p->fj->ctx, p->idx[k]);
		pthread_mutex_lock(&p->lock);
		p->finished[k] = 1;
		p->ndone++;
		while (p->flushed < p->n && p->finished[p->flushed]) {
			if (p->fj->done != NULL)
				p->fj->done(p->fj->ctx, p->idx[p->flushed]);
			p->flushed++;
		}
		if (p->fj->progress != NULL)
			p->fj->progress(p->fj->ctx, p->ndone, p->n);
		pthread_mutex_unlock(&p->lock);
	}
}

int
fleet_run(const struct fleet_job *fj, const size_t *idx, size_t n, int forks)
{
	struct pool p;
	pthread_t *threads;
	pthread_attr_t attr;
	size_t nthreads, started = 0, i;

	memset(&p, 0, sizeof(p));
	p.fj = fj;
	p.idx = idx;
	p.n = n;
	p.finished = xcalloc(n + 1, 1);
	pthread_mutex_init(&p.lock, NULL);
	nthreads = forks < 1 ? 1 : (size_t)forks;
	if (nthreads > n)
		nthreads = n;
	threads = xcalloc(nthreads + 1, sizeof(*threads));
	/* Bounded stacks: a thousand hosts at -j 1000 must fit in memory. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&threads[started], &attr, worker, &p) == 0)
			started++;
	pthread_attr_destroy(&attr);
	if (started == 0 && n > 0)
		worker(&p);	/* no thread at all: do it here, one by one */
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&p.lock);
	free(threads);
	free(p.finished);
	return 0;
}
