/*
 * startups.c - a counting semaphore per hop (see startups.h).
 *
 * Keys hash into a fixed table of chains under one mutex: a run has at
 * most --forks keys alive at once, and a direct fleet takes a free slot of
 * its own key on every acquire, so the lock is held for a lookup and a
 * malloc, never for a wait.  Each key has its own condition variable, so
 * a release wakes only the waiters of that hop.  A waiter that gives up at
 * its deadline passes a wake-up it may have swallowed on to the next one.
 */
#include "controller/ssh/startups.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define ENVCTL_STARTUPS_BUCKETS	256

struct startup_key {
	struct startup_key *next;
	char		*key;
	int		 held;
	int		 waiting;
	pthread_cond_t	 cv;		/* on CLOCK_MONOTONIC */
};

struct startups {
	pthread_mutex_t	 mu;
	int		 max;
	size_t		 nkeys;
	struct startup_key *bucket[ENVCTL_STARTUPS_BUCKETS];
};

static size_t
key_hash(const char *key)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h % ENVCTL_STARTUPS_BUCKETS;
}

/* The key's entry, made when create and missing; the caller holds mu. */
static struct startup_key *
key_find(struct startups *s, const char *key, int create)
{
	struct startup_key **pp = &s->bucket[key_hash(key)], *k;
	pthread_condattr_t ca;

	for (k = *pp; k != NULL; k = k->next)
		if (strcmp(k->key, key) == 0)
			return k;
	if (!create)
		return NULL;
	k = xcalloc(1, sizeof(*k));
	k->key = xstrdup(key);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cv, &ca);
	pthread_condattr_destroy(&ca);
	k->next = *pp;
	*pp = k;
	s->nkeys++;
	return k;
}

/* Frees k once nobody holds or waits for it; the caller holds mu. */
static void
key_drop_idle(struct startups *s, struct startup_key *k)
{
	struct startup_key **pp = &s->bucket[key_hash(k->key)];

	if (k->held > 0 || k->waiting > 0)
		return;
	while (*pp != k)
		pp = &(*pp)->next;
	*pp = k->next;
	pthread_cond_destroy(&k->cv);
	free(k->key);
	free(k);
	s->nkeys--;
}

struct startups *
startups_new(int max)
{
	struct startups *s = xcalloc(1, sizeof(*s));

	pthread_mutex_init(&s->mu, NULL);
	s->max = max > 0 ? max : 1;
	return s;
}

void
startups_free(struct startups *s)
{
	struct startup_key *k, *next;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < ENVCTL_STARTUPS_BUCKETS; i++)
		for (k = s->bucket[i]; k != NULL; k = next) {
			next = k->next;
			pthread_cond_destroy(&k->cv);
			free(k->key);
			free(k);
		}
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int
startups_max(const struct startups *s)
{
	return s->max;
}

int
startups_acquire(struct startups *s, const char *key, long long deadline,
    long long *waited_ms, struct err *err)
{
	struct startup_key *k;
	struct timespec ts;
	long long t0 = deadline_now_ms();
	int rc = 0, e = 0;

	pthread_mutex_lock(&s->mu);
	k = key_find(s, key, 1);
	k->waiting++;
	ts.tv_sec = (time_t)(deadline / 1000);
	ts.tv_nsec = (long)(deadline % 1000) * 1000000;
	while (k->held >= s->max && e != ETIMEDOUT) {
		if (deadline == 0)
			pthread_cond_wait(&k->cv, &s->mu);
		else
			e = pthread_cond_timedwait(&k->cv, &s->mu, &ts);
	}
	k->waiting--;
	if (k->held < s->max)
		k->held++;
	else {
		rc = err_set(err, ENVCTL_ETIMEOUT, "no handshake slot for "
		    "'%s'", key);
		/* A wake-up this waiter took, if any, belongs to another. */
		if (k->waiting > 0)
			pthread_cond_signal(&k->cv);
		key_drop_idle(s, k);
	}
	pthread_mutex_unlock(&s->mu);
	if (waited_ms != NULL)
		*waited_ms = deadline_now_ms() - t0;
	return rc;
}

void
startups_release(struct startups *s, const char *key)
{
	struct startup_key *k;

	pthread_mutex_lock(&s->mu);
	if ((k = key_find(s, key, 0)) != NULL && k->held > 0) {
		k->held--;
		if (k->waiting > 0)
			pthread_cond_signal(&k->cv);
		key_drop_idle(s, k);
	}
	pthread_mutex_unlock(&s->mu);
}

int
startups_held(struct startups *s, const char *key)
{
	struct startup_key *k;
	int n;

	pthread_mutex_lock(&s->mu);
	k = key_find(s, key, 0);
	n = k != NULL ? k->held : 0;
	pthread_mutex_unlock(&s->mu);
	return n;
}

int
startups_waiting(struct startups *s, const char *key)
{
	struct startup_key *k;
	int n;

	pthread_mutex_lock(&s->mu);
	k = key_find(s, key, 0);
	n = k != NULL ? k->waiting : 0;
	pthread_mutex_unlock(&s->mu);
	return n;
}

size_t
startups_nkeys(struct startups *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nkeys;
	pthread_mutex_unlock(&s->mu);
	return n;
}
