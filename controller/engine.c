/* engine.c - read a host, then change it (see engine.h). */
#include "engine.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/xmalloc.h"
#include "controller/context.h"
#include "controller/fleet.h"
#include "controller/gpufacts.h"
#include "controller/inventory.h"
#include "controller/output.h"
#include "controller/planfile.h"
#include "controller/playbook.h"
#include "controller/transport.h"

static const char *const cmd_names[] = { "plan", "facts", "apply", "drift",
	"rollback", "backups" };

/* The change waits for the whole fleet's read: to ask, or for batches. */
static int
deferred(const struct engine_policy *p)
{
	return p->ask || p->rollout != NULL;
}

/* Validation and verification follow the read on the same session. */
static int
wants_fork(const struct engine_policy *p)
{
	return !deferred(p) && (p->change == ENVCTL_CHANGE_APPLY ||
	    p->change == ENVCTL_CHANGE_ROLLBACK);
}

/* A row the rollout stopped before it was changed. */
static int
skipped(const struct engine *e, const struct engine_host *eh)
{
	return e->run.stopped_after > 0 && eh->batch > e->run.stopped_after;
}

/* Lists the host's backups and chooses the one to restore. */
static int
choose_backup(struct engine *e, struct engine_host *eh, struct agentlink *l)
{
	const struct host_plan *hp = &eh->hp;
	const struct backup_entry *b;
	const char *to = e->p->to;

	if (backups_get(&eh->bl, hp->backups, l, hp->st.path, e->ctx->pb,
	    &eh->err) != 0)
		goto fail;
	if ((b = backups_pick(&eh->bl, to, hp->st.exists ? hp->st.sha256 :
	    "")) == NULL) {
		err_set(&eh->err, ENVCTL_ENOTFOUND, strcmp(to, "latest") == 0 ?
		    "no backup differs from the current file" :
		    "no backup '%s' (see envctl backups)", to);
		goto fail;
	}
	eh->to = xstrdup(b->id);
	apply_input_from_plan(&eh->in, hp);
	eh->in.rollback_to = eh->to;
	return 0;
fail:
	err_sethost(&eh->err, eh->name);
	return -1;
}

/*
 * A plan's host is changed only where the host imports the file the plan
 * names, and where today's render of it still works; ar says why not.
 */
static int
check_planned(struct engine_host *eh)
{
	struct err err = ENVCTL_ERR_INIT;

	eh->tried = 1;
	eh->ar.host = eh->host;
	eh->ar.outcome = ENVCTL_OUT_FAILED;
	if (eh->hp.err.code != 0) {
		err_move(&eh->ar.err, &eh->hp.err);
		err_sethost(&eh->ar.err, eh->name);
		return -1;
	}
	if (planfile_check_read(eh->ph, &eh->hp.st, &err) != 0) {
		err_sethost(&err, eh->name);
		err_move(&eh->ar.err, &err);
		return -1;
	}
	eh->tried = 0;
	return 0;
}

/*
 * The change to send with the read, where the read cannot alter it: apply
 * or drift --fix host by host, one interpreter, a whole-file template
 * (bytes that do not depend on the file found).  The agent skips it where
 * the read fails or finds the file as wanted; decide() takes the reply.
 * NULL: none, the change waits for the read.
 */
static json_t *
change_with_read(struct engine *e, struct engine_host *eh)
{
	const struct engine_policy *p = e->p;
	struct host_plan *hp = &eh->hp;
	struct err err = ENVCTL_ERR_INIT;
	struct apply_input in;
	char sha[ENVCTL_SHA256_HEX];

	if ((p->change != ENVCTL_CHANGE_APPLY &&
	    p->change != ENVCTL_CHANGE_FIX) || p->plan != NULL ||
	    deferred(p) || eh->ninterps != 1 ||
	    e->ctx->pb->mode != ENVCTL_MODE_FILE || hp->err.code != 0)
		return NULL;
	/* A render that fails is plan_read()'s to report. */
	if (desired_content(&hp->d, e->ctx->pb, eh->host, NULL, 0, NULL,
	    &err) != 0) {
		err_release(&err);
		return NULL;
	}
	memset(&in, 0, sizeof(in));
	in.interps = eh->interps;
	in.ninterps = 1;
	in.data = hp->d.content.data;
	in.len = hp->d.content.len;
	hash_sha256_hex(sha, in.data, in.len);
	in.sha256 = sha;
	in.d = &hp->d;
	in.after_read = PLAN_READ_ID;
	/* After the read and the layers. */
	return apply_request_after_read(eh->host, e->ctx->pb, &in, &e->ao,
	    PLAN_READ_ID + 2);
}

/*
 * The reply of the change that went with the read, if one did: 1 when it
 * stands for the change (made, failed or found unneeded; eh->ar says
 * which), 0 when none went or the agent skipped it.  Taken whether the
 * controller wants the change or not: what the agent did is reported.
 */
static int
take_sent(struct engine *e, struct engine_host *eh, struct agentlink *l)
{
	if (!eh->sent)
		return 0;
	eh->sent = 0;
	if (apply_take_after_read(&eh->ar, l, eh->host, &e->ao) != 0)
		return 0;
	eh->tried = 1;
	return 1;
}

/* The host is read on session l: decide, and change it unless asking. */
static void
decide(struct engine *e, struct engine_host *eh, struct agentlink *l)
{
	const struct engine_policy *p = e->p;

	switch (p->change) {
	case ENVCTL_CHANGE_NONE:
		return;
	case ENVCTL_CHANGE_BACKUPS:
		if (backups_get(&eh->bl, eh->hp.backups, l, eh->hp.st.path,
		    e->ctx->pb, &eh->err) != 0)
			err_sethost(&eh->err, eh->name);
		return;
	case ENVCTL_CHANGE_ROLLBACK:
		if (choose_backup(e, eh, l) != 0)
			return;
		break;
	case ENVCTL_CHANGE_APPLY:
	case ENVCTL_CHANGE_FIX:
		if (p->plan != NULL) {
			if (check_planned(eh) != 0)
				return;
			break;
		}
		/* A launcher or a worker to restart: no file to change. */
		if (eh->hp.outcome != ENVCTL_OUT_PENDING ||
		    eh->hp.layer_only) {
			(void)take_sent(e, eh, l);
			return;
		}
		apply_input_from_plan(&eh->in, &eh->hp);
		break;
	}
	eh->chosen = 1;
	if (deferred(p)) {
		eh->waits = 1;
		return;
	}
	/* Skipped where the agent found nothing to do: ask now. */
	if (!take_sent(e, eh, l))
		apply_on(&eh->ar, l, eh->host, e->ctx->pb, &eh->in, &e->ao);
	eh->tried = 1;
}

static double
since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The host's rows were read on session l: decide each in turn. */
static void
rows_read(struct engine *e, struct engine_host *lead, size_t nused,
    struct agentlink *l, double seconds)
{
	size_t k;

	for (k = 0; k < lead->nrows; k++) {
		struct engine_host *eh = lead + k;
		struct host_plan *hp = &eh->hp;

		if (k >= nused) {
			eh->unused = 1;
			continue;
		}
		eh->read = 1;
		hp->several = nused > 1;
		eh->found = hp->outcome;
		/* Backups and rollback need only the host read, not its
		   render. */
		if (hp->have_state && l != NULL)
			decide(e, eh, l);
		if (hp->err.code != 0)
			err_sethost(&hp->err, eh->name);
		hp->seconds = seconds;
		if (e->p->plan != NULL && !eh->tried && !eh->waits) {
			/* A plan's host that could not be read is not
			   changed. */
			eh->tried = 1;
			eh->ar.host = eh->host;
			eh->ar.outcome = hp->outcome ==
			    ENVCTL_OUT_UNREACHABLE ? ENVCTL_OUT_UNREACHABLE :
			    ENVCTL_OUT_FAILED;
			err_move(&eh->ar.err, &hp->err);
		}
	}
}

/*
 * A plan's row was planned as one file: interpreters that now import
 * different files make it fail, with every row but the first released.
 */
static void
plan_one_file(struct engine_host *lead, size_t *nused)
{
	size_t k;

	if (lead->ph == NULL || *nused <= 1)
		return;
	for (k = 1; k < *nused; k++)
		plan_release(&lead[k].hp);
	*nused = 1;
	lead->hp.outcome = ENVCTL_OUT_FAILED;
	err_set(&lead->hp.err, ENVCTL_ECHANGED, "its interpreters import "
	    "different files than when %s was made: make a new plan",
	    "the plan");
}

/* Phase 1: one session per host for the read, the decision, the change. */
static void
read_job(void *arg, size_t i)
{
	struct engine *e = arg;
	struct engine_host *eh = &e->hosts[i];
	struct host_plan *hp = &eh->hp;
	struct host_plan **rows;
	struct agentlink *l = NULL;
	struct timespec t0;
	size_t k, nused = 1;
	unsigned facts;
	json_t *then;

	if (eh->host == NULL || eh->tried)
		return;		/* a plan's host not to change, or refused */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rows = xcalloc(eh->nrows + 1, sizeof(*rows));
	for (k = 0; k < eh->nrows; k++)
		rows[k] = &eh[k].hp;
	facts = e->p->cmd == ENVCTL_CMD_FACTS ? ENVCTL_GPUFACTS_ALL :
	    e->ctx->pb->facts;
	/* Values that use facts are expanded once the facts are in. */
	if (facts == 0 && plan_begin(hp, eh->host, e->ctx->pb) != 0)
		goto out;
	if (agentlink_open(&l, eh->host, &e->link, &hp->err) != 0) {
		hp->outcome = ENVCTL_OUT_UNREACHABLE;
		goto out;
	}
	if (facts != 0 && plan_facts(hp, l, eh->host, e->ctx->pb, facts,
	    eh->interps, eh->ninterps) != 0)
		goto out;
	then = change_with_read(e, eh);
	eh->sent = then != NULL;
	plan_fetch(rows, &nused, l, e->ctx->pb, eh->interps, eh->ninterps,
	    wants_fork(e->p), e->p->change == ENVCTL_CHANGE_ROLLBACK ||
	    e->p->change == ENVCTL_CHANGE_BACKUPS ? e->ctx->pb->backup_dir :
	    NULL, then);
	json_decref(then);
	plan_one_file(eh, &nused);
out:
	rows_read(e, eh, nused, l, since(&t0));
	if (l != NULL) {
		/* A read the controller could not use: what did the change
		   do? */
		(void)take_sent(e, eh, l);
		/* The whole session's counts, the change's included. */
		agentlink_stats(l, &hp->stats);
		for (k = 0; k < nused; k++)
			eh[k].hp.stats = eh[k].ar.stats = hp->stats;
		agentlink_close(l);
	}
	free(rows);
}

/* Phase 2, after a yes: each row of the batch on a fresh session. */
static void
change_job(void *arg, size_t i)
{
	struct engine *e = arg;
	struct engine_host *lead = &e->hosts[i], *eh;
	size_t k;

	for (k = 0; k < lead->nrows; k++) {
		eh = lead + k;
		if (eh->batch != e->cur_batch || eh->tried)
			continue;
		apply_host(&eh->ar, eh->host, e->ctx->pb, &eh->in, &e->ao);
		eh->tried = 1;
	}
}

/* The host's block after phase 1, as the command shows it. */
static void
host_text(struct buf *b, const struct engine *e, const struct engine_host *eh)
{
	const struct engine_policy *p = e->p;
	const struct host_plan *hp = &eh->hp;
	int bad = eh->found == ENVCTL_OUT_FAILED ||
	    eh->found == ENVCTL_OUT_UNREACHABLE;

	switch (p->cmd) {
	case ENVCTL_CMD_PLAN:
		if (!p->ro.quiet || bad)
			report_plan_host(b, hp, &p->ro);
		return;
	case ENVCTL_CMD_FACTS:
		report_facts_host(b, hp, &p->ro);
		return;
	case ENVCTL_CMD_APPLY:
		if (p->plan == NULL && (!p->ro.quiet || bad))
			report_plan_host(b, hp, &p->ro);
		if (eh->tried)
			report_apply_result(b, &eh->ar, &p->ro);
		return;
	case ENVCTL_CMD_DRIFT:
		return;		/* all at the end */
	case ENVCTL_CMD_ROLLBACK:
		if (hp->have_state && eh->err.code != 0)
			err_format(&eh->err, b);
		else if (!hp->have_state || !eh->chosen)
			report_plan_host(b, hp, &p->ro);
		else if (eh->tried)
			report_apply_result(b, &eh->ar, &p->ro);
		else
			report_restore_line(b, eh->name, eh->to, &hp->st);
		return;
	case ENVCTL_CMD_BACKUPS:
		if (!hp->have_state)
			report_plan_host(b, hp, &p->ro);
		else if (eh->err.code != 0)
			err_format(&eh->err, b);
		else
			backups_host_text(b, eh->name, &eh->bl, hp->st.real);
		return;
	}
}

static void
host_done(void *arg, size_t i)
{
	struct engine *e = arg;
	const struct engine_host *eh;
	struct buf b = ENVCTL_BUF_INIT;
	size_t k;

	if (e->phase == 1 && e->p->progress)
		out_note("\r\033[K");
	/* drift prints its changed hosts with the drifted ones, at the end. */
	if (e->p->json || (e->phase == 2 && e->p->cmd == ENVCTL_CMD_DRIFT))
		return;
	for (k = 0; k < e->hosts[i].nrows; k++) {
		eh = &e->hosts[i + k];
		if (eh->unused)
			continue;
		if (e->phase == 1)
			host_text(&b, e, eh);
		else if (eh->batch == e->cur_batch)
			report_apply_result(&b, &eh->ar, &e->p->ro);
	}
	out_write(b.data, b.len);
	buf_wipe(&b);
}

static void
host_progress(void *arg, size_t ndone, size_t n)
{
	struct engine *e = arg;

	if (e->phase == 1 && e->p->progress && ndone < n)
		out_note("\r\033[K%zu/%zu hosts done", ndone, n);
}

/* The leader at i has a row in the batch that runs. */
static int
in_batch(const struct engine *e, size_t i)
{
	size_t k;

	for (k = 0; k < e->hosts[i].nrows; k++)
		if (e->hosts[i + k].batch == e->cur_batch)
			return 1;
	return 0;
}

/*
 * Runs one phase over hosts [from, to), printed in order as they finish:
 * phase 1 reads every host, phase 2 changes the hosts of e->cur_batch.
 */
static void
run_phase(struct engine *e, int phase, size_t from, size_t to)
{
	struct fleet_job fj;
	size_t *idx = xcalloc(to - from + 1, sizeof(*idx)), i, n = 0;

	/* The leaders: each job reads and changes its own rows. */
	for (i = from; i < to; i++)
		if (!e->hosts[i].follower && (phase == 1 || in_batch(e, i)))
			idx[n++] = i;
	e->phase = phase;
	fj.job = phase == 1 ? read_job : change_job;
	fj.done = host_done;
	fj.progress = host_progress;
	fj.ctx = e;
	e->link.startups = startups_new(e->link.max_startups);
	transport_init();
	fleet_run(&fj, idx, n, e->p->forks);
	transport_finish();
	startups_free(e->link.startups);
	e->link.startups = NULL;
	free(idx);
}

/* What every output says of the host, once the run is over. */
static enum outcome
final_outcome(const struct engine *e, const struct engine_host *eh)
{
	enum engine_change c = e->p->change;
	int ok = eh->ar.outcome == ENVCTL_OUT_OK ||
	    eh->ar.outcome == ENVCTL_OUT_CHANGED;

	if (skipped(e, eh))
		return ENVCTL_OUT_SKIPPED;
	if (eh->tried && c == ENVCTL_CHANGE_FIX)
		return ok ? ENVCTL_OUT_CHANGED : ENVCTL_OUT_FAILED;
	if (eh->tried && c == ENVCTL_CHANGE_ROLLBACK)
		return ok ? eh->ar.outcome : ENVCTL_OUT_FAILED;
	if (eh->tried)
		return eh->ar.outcome;
	if (!eh->read)
		return eh->outcome;	/* as the plan found it */
	if (c != ENVCTL_CHANGE_ROLLBACK && c != ENVCTL_CHANGE_BACKUPS)
		return eh->hp.outcome;
	if (!eh->hp.have_state)
		return eh->hp.outcome;
	if (eh->err.code != 0)
		return ENVCTL_OUT_FAILED;
	if (c == ENVCTL_CHANGE_BACKUPS)
		return ENVCTL_OUT_OK;
	return eh->chosen ? ENVCTL_OUT_PENDING : ENVCTL_OUT_FAILED;
}

/* The leader at i has a row whose change waits for phase 2. */
static int
to_change(const struct engine *e, size_t i)
{
	const struct engine_host *eh;
	size_t k;

	for (k = 0; k < e->hosts[i].nrows; k++) {
		eh = &e->hosts[i + k];
		if (eh->chosen && !eh->tried && !eh->unused)
			return 1;
	}
	return 0;
}

/*
 * Splits the hosts to change into the rollout's batches (one without
 * --serial or --by-group), in run order, a host with all its rows in one
 * batch; a batch spans the rows from its first host to its last.
 */
static void
make_batches(struct engine *e)
{
	static const struct rollout_spec one;
	struct rollout_run *run = &e->run;
	struct rollout_batch *b;
	const struct host **hosts = xcalloc(e->nhosts + 1, sizeof(*hosts));
	size_t *lead = xcalloc(e->nhosts + 1, sizeof(*lead));
	size_t *batch = xcalloc(e->nhosts + 1, sizeof(*batch));
	size_t i, k, n = 0;
	struct engine_host *eh;

	for (i = 0; i < e->nhosts; i++)
		if (!e->hosts[i].follower && to_change(e, i)) {
			lead[n] = i;
			hosts[n++] = e->hosts[i].host;
		}
	rollout_batches(run, e->p->rollout != NULL ? e->p->rollout : &one,
	    hosts, n, batch);
	for (i = 0; i < n; i++) {
		if (batch[i] == 0)
			continue;
		eh = &e->hosts[lead[i]];
		b = &run->batches[batch[i] - 1];
		if (b->to == 0)
			b->from = lead[i];
		b->to = lead[i] + eh->nrows;
		for (k = 0; k < eh->nrows; k++)
			if (eh[k].chosen && !eh[k].tried)
				eh[k].batch = batch[i];
	}
	free(hosts);
	free(lead);
	free(batch);
}

/*
 * --by-group: its groups, and each host the rollout may change in one of
 * them, checked before any host is contacted.
 */
static int
check_groups(struct engine *e, struct err *err)
{
	const struct host **hosts = xcalloc(e->nhosts + 1, sizeof(*hosts));
	size_t i, n = 0;
	int r;

	for (i = 0; i < e->nhosts; i++)
		if (!e->hosts[i].follower && e->hosts[i].host != NULL &&
		    !e->hosts[i].tried)
			hosts[n++] = e->hosts[i].host;
	r = rollout_groups(&e->run, e->p->rollout, e->ctx->inv, hosts, n,
	    err);
	free(hosts);
	return r;
}

/* How the batch went for the leader at i: a failed row fails the host. */
static enum outcome
batch_outcome(const struct engine *e, size_t i)
{
	enum outcome o = ENVCTL_OUT_OK, r;
	size_t k;

	for (k = 0; k < e->hosts[i].nrows; k++) {
		if (e->hosts[i + k].batch != e->cur_batch)
			continue;
		r = final_outcome(e, &e->hosts[i + k]);
		if (r == ENVCTL_OUT_UNREACHABLE || (r == ENVCTL_OUT_FAILED &&
		    o != ENVCTL_OUT_UNREACHABLE) || (r == ENVCTL_OUT_CHANGED &&
		    o == ENVCTL_OUT_OK))
			o = r;
	}
	return o;
}

/* The batch that ran: its counts, the failures so far, its line. */
static void
batch_done(struct engine *e, struct rollout_batch *b)
{
	struct buf line = ENVCTL_BUF_INIT;
	enum outcome o;
	size_t i;

	for (i = b->from; i < b->to; i++) {
		if (e->hosts[i].follower || !in_batch(e, i))
			continue;
		o = batch_outcome(e, i);
		report_count_outcome(&b->counts, o);
		if (o == ENVCTL_OUT_FAILED || o == ENVCTL_OUT_UNREACHABLE)
			e->run.failures++;
	}
	b->ran = 1;
	/* drift -q prints nothing; apply -q and rollback -q keep these. */
	if (e->p->rollout == NULL || e->p->json || (e->p->ro.quiet &&
	    e->p->cmd == ENVCTL_CMD_DRIFT))
		return;
	rollout_batch_text(&line, &e->run, (size_t)(b - e->run.batches));
	out_write(line.data, line.len);
	buf_release(&line);
}

/* Asks "VERB N hosts? [y/N] " on the terminal; 1 for yes. */
static int
confirm(const char *verb, size_t n, const struct rollout_run *run)
{
	struct buf b = ENVCTL_BUF_INIT;
	char line[64];

	buf_addf(&b, "%s %zu host%s", verb, n, n == 1 ? "" : "s");
	if (run != NULL)
		rollout_plan_text(&b, run);
	out_note("%s? [y/N] ", b.data);
	buf_release(&b);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 0;
	line[strcspn(line, "\r\n")] = '\0';
	return strcmp(line, "y") == 0 || strcmp(line, "Y") == 0 ||
	    strcmp(line, "yes") == 0;
}

/* Between the phases: ask; ENVCTL_EUSAGE when there is no terminal. */
static int
ask(struct engine *e)
{
	const char *name = cmd_names[e->p->cmd];
	size_t i, n = 0;

	for (i = 0; i < e->nhosts; i++)
		n += e->hosts[i].chosen && !e->hosts[i].tried;
	if (!isatty(STDIN_FILENO)) {
		out_note("envctl %s: %zu host%s to change, but stdin is not "
		    "a terminal to ask: add --yes\n", name, n,
		    n == 1 ? "" : "s");
		return ENVCTL_EUSAGE;
	}
	if (!confirm(e->p->verb, e->p->rollout != NULL ? e->run.total : n,
	    e->p->rollout != NULL ? &e->run : NULL)) {
		out_note("envctl %s: nothing changed\n", name);
		e->asked_no = 1;
	}
	return 0;
}

/*
 * Phase 2: after one question for the whole rollout, each batch in turn;
 * once the failures so far exceed the budget, the batches left are
 * skipped.  ENVCTL_EUSAGE when it had to ask and could not.
 */
static int
change_hosts(struct engine *e)
{
	struct rollout_run *run = &e->run;
	size_t i, k;
	int r;

	make_batches(e);
	if (run->total == 0)
		return 0;
	if (e->p->ask && ((r = ask(e)) != 0 || e->asked_no))
		return r;
	for (i = 0; i < run->nbatches; i++) {
		e->cur_batch = i + 1;
		run_phase(e, 2, run->batches[i].from, run->batches[i].to);
		batch_done(e, &run->batches[i]);
		if (run->failures > run->budget && i + 1 < run->nbatches) {
			run->stopped_after = i + 1;
			break;
		}
	}
	for (k = run->stopped_after; k > 0 && k < run->nbatches; k++)
		run->batches[k].counts.skipped = run->batches[k].nhosts;
	return 0;
}

/* The host whose leader is at i has rows the rollout skipped. */
static int
host_skipped(const struct engine *e, size_t i)
{
	size_t k;

	for (k = 0; k < e->hosts[i].nrows; k++)
		if (skipped(e, &e->hosts[i + k]))
			return 1;
	return 0;
}

/* "NAME: skipped: rollout stopped after batch 2 (...)" for the host. */
static void
skipped_line(struct buf *b, const struct engine *e, const char *name)
{
	buf_addf(b, "%s: skipped: ", name);
	rollout_reason(b, &e->run);
	buf_addch(b, '\n');
}

static json_t *
host_json1(const struct engine *e, const struct engine_host *eh)
{
	const struct host_plan *hp = &eh->hp;
	const struct err *err = NULL;

	switch (e->p->cmd) {
	case ENVCTL_CMD_PLAN:
	case ENVCTL_CMD_FACTS:
	case ENVCTL_CMD_DRIFT:
		break;
	case ENVCTL_CMD_APPLY:
		if (eh->tried)
			return report_apply_json(eh->name, eh->outcome,
			    &eh->ar, &eh->ar.err, &eh->ar.stats);
		return report_apply_json(eh->name, eh->outcome, NULL,
		    eh->read ? &hp->err : NULL, eh->read ? &hp->stats : NULL);
	case ENVCTL_CMD_ROLLBACK:
		if (!hp->have_state)
			err = &hp->err;
		else if (eh->err.code != 0)
			err = &eh->err;
		else if (eh->tried)
			err = &eh->ar.err;
		return report_rollback_json(eh->name, eh->outcome,
		    eh->tried ? eh->to : NULL, eh->tried ? &eh->ar : NULL,
		    err);
	case ENVCTL_CMD_BACKUPS:
		return backups_json(eh->name, hp->st.real, &eh->bl,
		    hp->have_state ? &eh->err : &hp->err);
	}
	return report_plan_json(hp);
}

/* A host's --json object; a skipped one says why in "reason". */
static json_t *
host_json(const struct engine *e, const struct engine_host *eh)
{
	struct buf why = ENVCTL_BUF_INIT;
	json_t *j = host_json1(e, eh);

	if (skipped(e, eh)) {
		rollout_reason(&why, &e->run);
		json_object_set_new(j, "reason", json_string(why.data));
		buf_release(&why);
	}
	return j;
}

json_t *
engine_json(const struct engine *e)
{
	json_t *hosts = json_array(), *doc;
	size_t i;

	for (i = 0; i < e->nhosts; i++)
		if (!e->hosts[i].unused)
			json_array_append_new(hosts,
			    host_json(e, &e->hosts[i]));
	doc = report_envelope(cmd_names[e->p->cmd], e->p->inventory,
	    e->ctx->pb, &e->counts, hosts);
	if (e->p->cmd == ENVCTL_CMD_PLAN || e->p->cmd == ENVCTL_CMD_DRIFT)
		json_object_set_new(doc, "groups",
		    consistency_json(&e->groups));
	if (e->p->rollout != NULL)
		json_object_set_new(doc, "rollout",
		    rollout_json(e->p->rollout, &e->run));
	report_envelope_shard(doc, e->ctx->inv, e->ctx->pb, &e->ctx->shard);
	return doc;
}

/* drift: a line per drifted host, the fleet's summary; failures apart. */
static void
drift_text(const struct engine *e)
{
	struct buf out = ENVCTL_BUF_INIT, bad = ENVCTL_BUF_INIT;
	const struct report_opts *ro = &e->p->ro;
	size_t i, drifted = 0;

	for (i = 0; i < e->nhosts; i++) {
		const struct engine_host *eh = &e->hosts[i];

		if (eh->unused)
			continue;
		if (eh->found == ENVCTL_OUT_PENDING) {
			drifted++;
			report_drift_line(&out, &eh->hp);
			if (e->p->verbose)
				report_plan_host(&out, &eh->hp, ro);
			if (eh->tried)
				report_apply_result(&out, &eh->ar, ro);
			else if (skipped(e, eh))
				skipped_line(&out, e, eh->name);
		} else if (eh->found != ENVCTL_OUT_OK)
			report_plan_host(&bad, &eh->hp, ro);
	}
	if (drifted > 0) {
		report_drift_summary(&out, e->plans, e->nplans);
		/* In sync, drift prints nothing: --report has them all. */
		consistency_text(&out, &e->groups);
	}
	if (e->run.stopped_after > 0) {
		rollout_reason(&out, &e->run);
		buf_addch(&out, '\n');
	}
	out_write(out.data, out.len);
	out_note("%s", bad.data);
	buf_wipe(&out);
	buf_release(&bad);
}

static void
finish(struct engine *e)
{
	const struct engine_policy *p = e->p;
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < e->nhosts; i++) {
		struct engine_host *eh = &e->hosts[i];

		if (eh->unused)
			continue;
		eh->outcome = final_outcome(e, eh);
		report_count_outcome(&e->counts, eh->outcome);
		/* The report and metrics of drift --fix say what is now. */
		if (eh->read && p->change == ENVCTL_CHANGE_FIX)
			eh->hp.outcome = eh->outcome;
	}
	if (p->cmd == ENVCTL_CMD_PLAN || p->cmd == ENVCTL_CMD_DRIFT)
		consistency_find(&e->groups, e->plans, e->nplans);
	if (e->asked_no && !p->declined_summary)
		return;
	if (p->json) {
		out_json(engine_json(e));
		return;
	}
	switch (p->cmd) {
	case ENVCTL_CMD_DRIFT:
		if (!p->ro.quiet)
			drift_text(e);
		return;
	case ENVCTL_CMD_FACTS:
	case ENVCTL_CMD_BACKUPS:
		return;
	default:
		break;
	}
	for (i = 0; p->plan != NULL && i < e->nhosts; i++)
		if (!e->hosts[i].read && e->hosts[i].host == NULL &&
		    !e->hosts[i].follower)
			report_planned_line(&b, e->hosts[i].name,
			    e->hosts[i].outcome);
	for (i = 0; i < e->nhosts; i++)
		if (!e->hosts[i].follower && host_skipped(e, i))
			skipped_line(&b, e, e->hosts[i].name);
	consistency_text(&b, &e->groups);
	report_summary(&b, &e->counts, &p->ro);
	if (e->run.stopped_after > 0) {
		/* The summary line names the stop. */
		buf_truncate(&b, b.len - 1);
		buf_addstr(&b, "; ");
		rollout_reason(&b, &e->run);
		buf_addch(&b, '\n');
	}
	out_write(b.data, b.len);
	buf_release(&b);
}

/* A leader at e->hosts[e->nhosts] with a slot per interpreter. */
static void
add_host(struct engine *e, const struct host *h, const char *name,
    const char *const *interps, size_t n)
{
	struct engine_host *eh = &e->hosts[e->nhosts];
	size_t k;

	for (k = 0; k < n; k++) {
		eh[k].host = h;
		eh[k].name = name;
		eh[k].follower = k > 0;
	}
	eh->interps = interps;
	eh->ninterps = n;
	eh->nrows = n;
	e->nhosts += n;
}

/* The interpreters a plan's row reads: those it names, else today's. */
static const char *const *
plan_interps(const struct engine *e, const struct planfile_host *ph,
    const struct host *h, size_t *n)
{
	if (ph->ninterpreters > 0) {
		*n = ph->ninterpreters;
		return (const char *const *)ph->interpreters;
	}
	return playbook_interpreters(e->ctx->pb, h, n);
}

/* The plan's hosts, every one checked before any host is contacted. */
static int
plan_hosts(struct engine *e, struct err *err)
{
	const struct planfile *pf = e->p->plan;
	struct err e2 = ENVCTL_ERR_INIT;
	const struct host *h;
	const char *const *in;
	size_t i, n, total = 0;

	for (i = 0; i < pf->nhosts; i++) {
		h = inventory_find(e->ctx->inv, pf->hosts[i].name);
		if (pf->hosts[i].outcome != ENVCTL_OUT_PENDING || h == NULL)
			n = 1;
		else
			plan_interps(e, &pf->hosts[i], h, &n);
		total += n;
	}
	e->hosts = xcalloc(total + 1, sizeof(*e->hosts));
	for (i = 0; i < pf->nhosts; i++) {
		const struct planfile_host *ph = &pf->hosts[i];
		struct engine_host *eh = &e->hosts[e->nhosts];

		if (ph->outcome != ENVCTL_OUT_PENDING) {
			eh->name = ph->name;
			eh->outcome = ph->outcome;
			eh->nrows = 1;
			e->nhosts++;
			continue;
		}
		if ((h = inventory_find(e->ctx->inv, ph->name)) == NULL) {
			err_set(err, ENVCTL_ENOTFOUND, "host '%s' is not in "
			    "the inventory '%s'", ph->name,
			    inventory_path(e->ctx->inv));
			err_context(err, "%s", e->p->plan_path);
			return ENVCTL_ENOTFOUND;
		}
		in = plan_interps(e, ph, h, &n);
		add_host(e, h, ph->name, in, n);
		eh->outcome = ph->outcome;
		eh->ph = ph;
		eh->chosen = 1;
		if (planfile_verify_host(&eh->d, ph, e->ctx->pb, h,
		    &e2) != 0) {
			/* Refused: nothing to contact; ar says why. */
			eh->tried = 1;
			eh->ar.host = h;
			eh->ar.outcome = ENVCTL_OUT_FAILED;
			err_sethost(&e2, ph->name);
			err_move(&eh->ar.err, &e2);
			for (n = 1; n < eh->nrows; n++)
				eh[n].unused = 1;
			continue;
		}
		apply_input_from_planfile(&eh->in, ph, &eh->d);
	}
	return 0;
}

static void
inventory_hosts(struct engine *e)
{
	const struct context *ctx = e->ctx;
	const struct host *h;
	const char *const *in;
	size_t i, n, total = 0;

	for (i = 0; i < inventory_nhosts(ctx->inv); i++)
		if (ctx->selected[i]) {
			playbook_interpreters(ctx->pb,
			    inventory_host(ctx->inv, i), &n);
			total += n;
		}
	e->hosts = xcalloc(total + 1, sizeof(*e->hosts));
	for (i = 0; i < inventory_nhosts(ctx->inv); i++) {
		if (!ctx->selected[i])
			continue;
		h = inventory_host(ctx->inv, i);
		in = playbook_interpreters(ctx->pb, h, &n);
		add_host(e, h, h->name, in, n);
	}
}

int
engine_run(struct engine *e, const struct engine_policy *p,
    const struct context *ctx)
{
	struct err err = ENVCTL_ERR_INIT;
	size_t i;
	int r;

	e->p = p;
	e->ctx = ctx;
	e->link = p->link;
	e->link.agent = &e->ab;
	e->ao = p->ao;
	e->ao.link = &e->link;
	if ((r = agent_binary_load(&e->ab, NULL, &err)) != 0)
		goto fail;
	if (p->plan == NULL)
		inventory_hosts(e);
	else if ((r = plan_hosts(e, &err)) != 0)
		goto fail;
	if (p->rollout != NULL && (r = check_groups(e, &err)) != 0)
		goto fail;
	run_phase(e, 1, 0, e->nhosts);
	e->plans = xcalloc(e->nhosts + 1, sizeof(*e->plans));
	for (i = 0; i < e->nhosts; i++)
		if (e->hosts[i].read && !e->hosts[i].unused)
			e->plans[e->nplans++] = &e->hosts[i].hp;
	if (deferred(p) && (r = change_hosts(e)) != 0)
		goto out;
	finish(e);
	goto out;
fail:
	out_errors(&err);
out:
	err_release(&err);
	return r;
}

void
engine_release(struct engine *e)
{
	size_t i;

	for (i = 0; i < e->nhosts; i++) {
		struct engine_host *eh = &e->hosts[i];

		if (eh->read)
			plan_release(&eh->hp);
		apply_result_release(&eh->ar);
		backup_list_release(&eh->bl);
		free(eh->to);
		err_release(&eh->err);
		desired_release(&eh->d);
	}
	free(e->hosts);
	free(e->plans);
	consistency_release(&e->groups);
	rollout_run_release(&e->run);
	agent_binary_release(&e->ab);
	memset(e, 0, sizeof(*e));
}
