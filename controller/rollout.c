/* rollout.c - canary batches and a failure budget (see rollout.h). */
#include "rollout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define SERIAL_HINT	"give a count of hosts (1 or more) or a percentage " \
			"(1% to 100%)"
#define BUDGET_HINT	"give a count of hosts (0 or more) or a percentage " \
			"(0% to 100%)"

/* One size of len bytes at s: decimal digits, then an optional '%'. */
static int
parse_size(struct rollout_size *sz, const char *s, size_t len)
{
	unsigned long v = 0;
	size_t i, digits = len;

	sz->percent = len > 0 && s[len - 1] == '%';
	if (sz->percent)
		digits--;
	if (digits == 0 || digits > 7)
		return -1;
	for (i = 0; i < digits; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > (sz->percent ? 100 : ENVCTL_ROLLOUT_MAXCOUNT))
		return -1;
	sz->n = (unsigned)v;
	return 0;
}

int
rollout_parse_serial(struct rollout_spec *rs, const char *text,
    struct err *err)
{
	const char *p = text, *end;
	size_t len;

	rs->nsizes = 0;
	for (;;) {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len == 0)
			return err_set(err, ENVCTL_EUSAGE, "--serial: an empty "
			    "batch size in '%s': %s", text, SERIAL_HINT);
		if (rs->nsizes == ENVCTL_ROLLOUT_MAXSIZES)
			return err_set(err, ENVCTL_EUSAGE, "--serial: more "
			    "than %d batch sizes", ENVCTL_ROLLOUT_MAXSIZES);
		if (parse_size(&rs->sizes[rs->nsizes], p, len) != 0 ||
		    rs->sizes[rs->nsizes].n == 0)
			return err_set(err, ENVCTL_EUSAGE, "--serial: '%.*s' is "
			    "no batch size: %s", (int)len, p, SERIAL_HINT);
		rs->nsizes++;
		if (end == NULL)
			return 0;
		p = end + 1;
	}
}

int
rollout_parse_max_fail(struct rollout_spec *rs, const char *text,
    struct err *err)
{
	if (parse_size(&rs->max_fail, text, strlen(text)) != 0)
		return err_set(err, ENVCTL_EUSAGE, "--max-fail: '%s' is no "
		    "failure budget: %s", text, BUDGET_HINT);
	rs->has_budget = 1;
	return 0;
}

/* A size for total hosts: a percentage is rounded down. */
static size_t
of_total(const struct rollout_size *sz, size_t total)
{
	if (!sz->percent)
		return sz->n;
	return total / 100 * sz->n + total % 100 * sz->n / 100;
}

size_t *
rollout_split(const struct rollout_spec *rs, size_t total, size_t *n)
{
	size_t *out = xcalloc(total + 1, sizeof(*out)), left, s, k;

	*n = 0;
	for (left = total, k = 0; left > 0; k++) {
		if (rs->nsizes == 0)
			s = total;
		else
			s = of_total(&rs->sizes[k < rs->nsizes ? k :
			    rs->nsizes - 1], total);
		if (s == 0)
			s = 1;		/* however small the percentage */
		if (s > left)
			s = left;
		out[(*n)++] = s;
		left -= s;
	}
	return out;
}

size_t
rollout_budget(const struct rollout_spec *rs, size_t total)
{
	if (!rs->has_budget)
		return SIZE_MAX;
	return of_total(&rs->max_fail, total);
}

void
rollout_reason(struct buf *out, const struct rollout_run *run)
{
	buf_addf(out, "rollout stopped after batch %zu (%zu failure%s > "
	    "budget %zu)", run->stopped_after, run->failures,
	    run->failures == 1 ? "" : "s", run->budget);
}

void
rollout_batch_text(struct buf *out, const struct rollout_run *run, size_t i)
{
	const struct rollout_batch *b = &run->batches[i];
	const struct plan_counts *c = &b->counts;

	buf_addf(out, "batch %zu/%zu: %zu host%s: %zu changed", i + 1,
	    run->nbatches, b->nhosts, b->nhosts == 1 ? "" : "s", c->changed);
	if (c->ok > 0)
		buf_addf(out, ", %zu ok", c->ok);
	if (c->failed > 0)
		buf_addf(out, ", %zu failed", c->failed);
	if (c->unreachable > 0)
		buf_addf(out, ", %zu unreachable", c->unreachable);
	if (c->skipped > 0)
		buf_addf(out, ", %zu skipped", c->skipped);
	buf_addch(out, '\n');
}

static json_t *
size_json(const struct rollout_size *sz)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *j;

	buf_addf(&b, "%u%s", sz->n, sz->percent ? "%" : "");
	j = json_string(b.data);
	buf_release(&b);
	return j;
}

json_t *
rollout_json(const struct rollout_spec *rs, const struct rollout_run *run)
{
	json_t *serial = json_array(), *batches = json_array(), *names;
	struct buf why = ENVCTL_BUF_INIT;
	const struct rollout_batch *b;
	json_t *doc;
	size_t i, k;

	for (i = 0; i < rs->nsizes; i++)
		json_array_append_new(serial, size_json(&rs->sizes[i]));
	for (i = 0; i < run->nbatches; i++) {
		b = &run->batches[i];
		names = json_array();
		for (k = 0; k < b->nhosts; k++)
			json_array_append_new(names,
			    json_string(b->names[k]));
		json_array_append_new(batches, json_pack("{s:I, s:o, s:I, "
		    "s:I, s:I, s:I, s:I}", "index", (json_int_t)(i + 1),
		    "hosts", names, "ok", (json_int_t)b->counts.ok,
		    "changed", (json_int_t)b->counts.changed,
		    "failed", (json_int_t)b->counts.failed,
		    "unreachable", (json_int_t)b->counts.unreachable,
		    "skipped", (json_int_t)b->counts.skipped));
	}
	if (run->stopped_after > 0)
		rollout_reason(&why, run);
	doc = json_pack("{s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o}",
	    "serial", serial,
	    "max_fail", rs->has_budget ? size_json(&rs->max_fail) :
	    json_null(),
	    "budget", run->budget != SIZE_MAX ?
	    json_integer((json_int_t)run->budget) : json_null(),
	    "hosts", (json_int_t)run->total,
	    "failures", (json_int_t)run->failures,
	    "batches", batches,
	    "stopped_after", run->stopped_after > 0 ?
	    json_integer((json_int_t)run->stopped_after) : json_null(),
	    "reason", run->stopped_after > 0 ? json_string(why.data) :
	    json_null());
	buf_release(&why);
	return doc;
}

void
rollout_run_release(struct rollout_run *run)
{
	size_t i;

	for (i = 0; i < run->nbatches; i++)
		free(run->batches[i].names);
	free(run->batches);
	memset(run, 0, sizeof(*run));
}
