/* shard.c - stable shards of the selected hosts (see shard.h). */
#include "shard.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "common/sha256.h"
#include "controller/inventory.h"

/* A decimal number without sign or spaces, at most max; -1 when not. */
static long
number(const char *s, long max)
{
	long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	return v;
}

int
shard_parse(struct shard *s, const char *text)
{
	const char *slash = strchr(text, '/');
	char k[16];
	long idx, cnt;

	if (slash == NULL || (size_t)(slash - text) >= sizeof(k))
		return ENVCTL_EINVALID;
	memcpy(k, text, (size_t)(slash - text));
	k[slash - text] = '\0';
	idx = number(k, ENVCTL_SHARD_MAX);
	cnt = number(slash + 1, ENVCTL_SHARD_MAX);
	if (idx < 0 || cnt < 1 || idx >= cnt)
		return ENVCTL_EINVALID;
	s->index = (unsigned)idx;
	s->count = (unsigned)cnt;
	return 0;
}

/* A Slurm array task's SLURM_ARRAY_TASK_* variable, or -1 (err set). */
static long
slurm_var(const char *name, int required, long dflt, struct err *err)
{
	const char *v = getenv(name);
	long n;

	if (v == NULL || *v == '\0') {
		if (!required)
			return dflt;
		return err_set(err, ENVCTL_EUSAGE, "--shard auto: "
		    "SLURM_ARRAY_TASK_ID is set but %s is not", name), -1;
	}
	if ((n = number(v, INT_MAX)) < 0)
		return err_set(err, ENVCTL_EUSAGE, "--shard auto: %s is '%s', "
		    "not a number", name, v), -1;
	return n;
}

static int
from_slurm(struct shard *s, int shards, struct err *err)
{
	long id, min, max, count, step;

	if ((id = slurm_var("SLURM_ARRAY_TASK_ID", 1, 0, err)) < 0 ||
	    (min = slurm_var("SLURM_ARRAY_TASK_MIN", 1, 0, err)) < 0 ||
	    (count = slurm_var("SLURM_ARRAY_TASK_COUNT", 1, 0, err)) < 0 ||
	    (step = slurm_var("SLURM_ARRAY_TASK_STEP", 0, 1, err)) < 0 ||
	    (max = slurm_var("SLURM_ARRAY_TASK_MAX", 0, -2, err)) == -1)
		return ENVCTL_EUSAGE;
	if (step < 1)
		step = 1;
	/* --array=0,3,7 has no index per task: only a range does. */
	if (count < 1 || count > ENVCTL_SHARD_MAX || id < min ||
	    (id - min) % step != 0 || (id - min) / step >= count ||
	    (max >= 0 && (max < min || (max - min) / step + 1 != count)))
		return err_set(err, ENVCTL_EUSAGE, "--shard auto: the Slurm "
		    "array is no range A-B[:S] (SLURM_ARRAY_TASK_ID %ld, _MIN "
		    "%ld, _MAX %ld, _STEP %ld, _COUNT %ld)", id, min, max, step,
		    count);
	if (shards > 0 && shards != count)
		return err_set(err, ENVCTL_EUSAGE, "--shard auto: --shards %d, "
		    "but the Slurm array has %ld tasks", shards, count);
	s->index = (unsigned)((id - min) / step);
	s->count = (unsigned)count;
	return 0;
}

int
shard_resolve(struct shard *s, const char *spec, int shards,
    struct err *err)
{
	const char *jci;
	long idx;

	memset(s, 0, sizeof(*s));
	if (spec == NULL) {
		if (shards > 0)
			return err_set(err, ENVCTL_EUSAGE, "--shards is for "
			    "--shard auto (Kubernetes Indexed Jobs)");
		return 0;
	}
	if (strcmp(spec, "auto") != 0) {
		if (shards > 0)
			return err_set(err, ENVCTL_EUSAGE, "--shards is for "
			    "--shard auto, not --shard %s", spec);
		if (shard_parse(s, spec) != 0)
			return err_set(err, ENVCTL_EUSAGE, "--shard expects "
			    "K/N (0 <= K < N <= %d) or auto, not '%s'",
			    ENVCTL_SHARD_MAX, spec);
		return 0;
	}
	if (getenv("SLURM_ARRAY_TASK_ID") != NULL)
		return from_slurm(s, shards, err);
	if ((jci = getenv("JOB_COMPLETION_INDEX")) != NULL) {
		if (shards <= 0)
			return err_set(err, ENVCTL_EUSAGE, "--shard auto: "
			    "JOB_COMPLETION_INDEX is set: give the Indexed "
			    "Job's completions as --shards N");
		if ((idx = number(jci, INT_MAX)) < 0 || idx >= shards)
			return err_set(err, ENVCTL_EUSAGE, "--shard auto: "
			    "JOB_COMPLETION_INDEX is '%s', not 0..%d", jci,
			    shards - 1);
		s->index = (unsigned)idx;
		s->count = (unsigned)shards;
		return 0;
	}
	return err_set(err, ENVCTL_EUSAGE, "--shard auto: neither "
	    "SLURM_ARRAY_TASK_ID (a Slurm array job) nor JOB_COMPLETION_INDEX "
	    "(a Kubernetes Indexed Job) is set; give --shard K/N");
}

unsigned
shard_jump(uint64_t key, unsigned buckets)
{
	int64_t b = -1, j = 0;

	while (j < (int64_t)buckets) {
		b = j;
		key = key * 2862933555777941757ULL + 1;
		j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) /
		    (double)((key >> 33) + 1)));
	}
	return (unsigned)b;
}

unsigned
shard_of(const char *name, unsigned count)
{
	struct sha256 s;
	unsigned char d[ENVCTL_SHA256_LEN];
	uint64_t key = 0;
	int i;

	sha256_init(&s);
	sha256_update(&s, name, strlen(name));
	sha256_final(&s, d);
	for (i = 0; i < 8; i++)
		key = key << 8 | d[i];
	return shard_jump(key, count);
}

void
shard_select(const struct shard *s, const struct inventory *inv,
    unsigned char *selected, size_t *nselected)
{
	size_t i, n = 0;

	if (s->count == 0)
		return;
	for (i = 0; i < inventory_nhosts(inv); i++) {
		if (selected[i] && shard_of(inventory_host(inv, i)->name,
		    s->count) != s->index)
			selected[i] = 0;
		n += selected[i];
	}
	*nselected = n;
}

const char *
shard_label(char *buf, const struct shard *s)
{
	if (s->count == 0)
		buf[0] = '\0';
	else
		snprintf(buf, ENVCTL_SHARD_LABEL, "%u/%u", s->index, s->count);
	return buf;
}

int
shard_check_set(const struct shard *s, const char *const *names, size_t n,
    struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t *seen = NULL, i, missing = 0;
	unsigned k, count;
	int r = 0;

	if (n == 0)
		return err_set(err, ENVCTL_EUSAGE, "no input to merge");
	for (i = 0; i < n; i++)
		if (s[i].count == 0)
			return err_set(err, ENVCTL_EINVALID, "'%s' is not from "
			    "a sharded run (no --shard)", names[i]);
	count = s[0].count;
	seen = xcalloc(count, sizeof(*seen));
	for (i = 0; i < n; i++) {
		if (s[i].count != count) {
			r = err_set(err, ENVCTL_EINVALID, "'%s' is shard %u/%u, "
			    "but '%s' is %u/%u", names[i], s[i].index,
			    s[i].count, names[0], s[0].index, count);
			goto out;
		}
		if (seen[s[i].index] != 0) {
			r = err_set(err, ENVCTL_EINVALID, "shard %u/%u twice: "
			    "'%s' and '%s'", s[i].index, count,
			    names[seen[s[i].index] - 1], names[i]);
			goto out;
		}
		seen[s[i].index] = i + 1;
	}
	for (k = 0; k < count; k++)
		if (seen[k] == 0) {
			buf_addf(&b, "%s%u/%u", missing++ > 0 ? ", " : "", k,
			    count);
			if (missing == 8 && k + 1 < count) {
				buf_addstr(&b, ", ...");
				break;
			}
		}
	if (missing > 0)
		r = err_set(err, ENVCTL_EINVALID, "missing shard%s %s (%zu of "
		    "%u inputs given)", missing == 1 ? "" : "s", b.data, n,
		    count);
out:
	buf_release(&b);
	free(seen);
	return r;
}
