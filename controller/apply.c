/* apply.c - the controller's half of apply and rollback (see apply.h). */
#include "apply.h"

#include <stdlib.h>
#include <string.h>

#include "common/deadline.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/planfile.h"
#include "controller/playbook.h"

/*
 * The ms the whole change may take on the host: what the link leaves the
 * agent (host_ms), so that whatever hangs there is reported by the agent,
 * as such, before the controller's deadline.  The agent divides what is
 * left after the host's lock wait among its interpreter runs (change.h).
 */
static int
change_ms(int host_ms)
{
	/* The agent takes at most an hour (ENVCTL_APPLY_TIMEOUT_MAX). */
	return host_ms > 3600000 ? 3600000 : host_ms < 1000 ? 1000 : host_ms;
}

static json_t *
request(const struct host *h, const struct playbook *pb,
    const struct apply_input *in, const struct apply_opts *o, int host_ms,
    json_int_t id)
{
	json_t *req, *expect, *vars, *secret, *also;
	const char *const *interps;
	size_t i, n;
	int rollback = in->rollback_to != NULL;

	if (in->ninterps > 0) {
		interps = in->interps;
		n = in->ninterps;
	} else
		interps = playbook_interpreters(pb, h, &n);
	req = json_pack("{s:s, s:i, s:s, s:{s:s, s:i}, s:s, s:s, s:i, s:i}",
	    "op", rollback ? "rollback" : "apply", "id", id,
	    "interpreter", interps[0],
	    "backup", "dir", pb->backup_dir, "keep", pb->backup_keep,
	    "playbook", pb->name, "controller", o->controller,
	    "lock_timeout_ms", o->lock_timeout * 1000,
	    "timeout_ms", change_ms(host_ms));
	if (n > 1) {
		/* Each validates the new file and verifies it. */
		also = json_array();
		for (i = 1; i < n; i++)
			json_array_append_new(also, json_string(interps[i]));
		json_object_set_new(req, "also", also);
	}
	if (in->after_read != 0)
		json_object_set_new(req, "after_read",
		    json_integer(in->after_read));
	else {
		expect = json_pack("{s:b}", "exists", in->expect_exists);
		if (in->expect_exists)
			json_object_set_new(expect, "data", proto_b64_json(
			    in->expect, in->expect_len));
		json_object_set_new(req, "path", json_string(in->path));
		json_object_set_new(req, "expect", expect);
		json_object_set_new(req, "sha256_old", in->expect_exists ?
		    json_string(in->expect_sha256) : json_null());
	}
	/* Only an agent built with -DENVCTL_FAULTS accepts this. */
	if (o->fault != NULL)
		json_object_set_new(req, "fault", json_string(o->fault));
	if (rollback) {
		json_object_set_new(req, "to", json_string(in->rollback_to));
		return req;
	}
	vars = json_object();
	secret = json_array();
	for (i = 0; i < in->d->nvars; i++) {
		json_object_set_new(vars, in->d->vars[i].name,
		    json_string(in->d->vars[i].value));
		/* The agent masks these in its messages. */
		if (in->d->vars[i].secret)
			json_array_append_new(secret,
			    json_string(in->d->vars[i].name));
	}
	json_object_set_new(req, "secret", secret);
	json_object_set_new(req, "data", proto_b64_json(in->data, in->len));
	json_object_set_new(req, "sha256_new", json_string(in->sha256));
	json_object_set_new(req, "vars", vars);
	json_object_set_new(req, "create", json_pack("{s:i, s:s, s:s}",
	    "mode", (int)pb->create_mode, "owner", pb->create_owner,
	    "group", pb->create_group));
	return req;
}

static char *
dup_member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? xstrdup(s) : NULL;
}

/* The agent's warnings (the change is done regardless), "; "-joined. */
static void
warnings_text(struct apply_result *ar, const json_t *w)
{
	struct buf b = ENVCTL_BUF_INIT;
	const json_t *v;
	size_t i;

	json_array_foreach(w, i, v) {
		if (!json_is_string(v))
			continue;
		if (b.len > 0)
			buf_addstr(&b, "; ");
		buf_addstr(&b, json_string_value(v));
	}
	if (b.len > 0)
		ar->warning = buf_detach(&b, NULL);
	buf_release(&b);
}

void
apply_reply(struct apply_result *ar, const json_t *reply)
{
	const json_t *v;

	ar->outcome = ENVCTL_OUT_FAILED;
	if (proto_reply_error(reply, &ar->err) != 0) {
		v = json_object_get(reply, "detail");
		ar->restored = json_is_true(json_object_get(v, "restored"));
		return;
	}
	ar->outcome = json_is_true(json_object_get(reply, "changed")) ?
	    ENVCTL_OUT_CHANGED : ENVCTL_OUT_OK;
	ar->backup_id = dup_member(json_object_get(reply, "backup"), "id");
	ar->restored_id = dup_member(reply, "restored");
	ar->note = dup_member(reply, "note");
	warnings_text(ar, json_object_get(reply, "warnings"));
	v = json_object_get(json_object_get(reply, "verify"), "startup_error");
	if (json_is_object(v))
		ar->startup_error = dup_member(v, "exception");
	else if (json_is_string(v))
		ar->startup_error = xstrdup(json_string_value(v));
	else	/* a restored file whose start-up exits, hangs, is killed */
		ar->startup_error = dup_member(json_object_get(reply,
		    "verify"), "error");
}

int
apply_change_timeout(int timeout, int lock_timeout)
{
	return timeout > lock_timeout + 10 ? timeout : lock_timeout + 10;
}

void
apply_input_from_plan(struct apply_input *in, const struct host_plan *hp)
{
	memset(in, 0, sizeof(*in));
	in->path = hp->st.path;
	in->expect_exists = hp->st.exists;
	in->expect = hp->st.content.data;
	in->expect_len = hp->st.content.len;
	in->expect_sha256 = hp->st.sha256;
	in->data = hp->d.content.data;
	in->len = hp->d.content.len;
	in->sha256 = hp->want_sha256;
	in->d = &hp->d;
	in->interps = hp->interps;
	in->ninterps = hp->ninterps;
}

void
apply_input_from_planfile(struct apply_input *in,
    const struct planfile_host *ph, const struct desired *d)
{
	memset(in, 0, sizeof(*in));
	in->path = ph->target;
	in->interps = (const char *const *)ph->interpreters;
	in->ninterps = ph->ninterpreters;
	in->expect_exists = ph->cur_exists;
	in->expect = ph->cur.data;
	in->expect_len = ph->cur.len;
	in->expect_sha256 = ph->cur_sha256;
	in->data = ph->want.data;
	in->len = ph->want.len;
	in->sha256 = ph->want_sha256;
	in->d = d;
}

void
apply_on(struct apply_result *ar, struct agentlink *l, const struct host *h,
    const struct playbook *pb, const struct apply_input *in,
    const struct apply_opts *o)
{
	json_t *req, *reply = NULL;

	ar->host = h;
	ar->outcome = ENVCTL_OUT_FAILED;
	/* Connecting and reading keep --timeout; the change may take longer. */
	agentlink_set_timeout(l, o->change_timeout);
	req = request(h, pb, in, o, agentlink_host_ms(l), 1);
	if (agentlink_send(l, req, &ar->err) == 0 &&
	    agentlink_recv(l, &reply, &ar->err) == 0)
		apply_reply(ar, reply);
	if (ar->err.code != 0)
		err_sethost(&ar->err, h->name);
	json_decref(req);
	json_decref(reply);
}

json_t *
apply_request_after_read(const struct host *h, const struct playbook *pb,
    const struct apply_input *in, const struct apply_opts *o, long long id)
{
	/* What agentlink_extend(change_timeout) will leave the host. */
	return request(h, pb, in, o, deadline_host_ms((long long)
	    o->change_timeout * 1000), (json_int_t)id);
}

int
apply_take_after_read(struct apply_result *ar, struct agentlink *l,
    const struct host *h, const struct apply_opts *o)
{
	json_t *reply = NULL;
	int skipped = 0;

	ar->host = h;
	ar->outcome = ENVCTL_OUT_FAILED;
	/* The agent took it no earlier than now, with this much time. */
	agentlink_extend(l, o->change_timeout);
	if (agentlink_recv(l, &reply, &ar->err) != 0) {
		err_context(&ar->err, "no reply to the change sent with the "
		    "read");
		err_sethost(&ar->err, h->name);
	} else if (json_is_string(json_object_get(reply, "skipped")))
		skipped = 1;
	else {
		apply_reply(ar, reply);
		if (ar->err.code != 0)
			err_sethost(&ar->err, h->name);
	}
	json_decref(reply);
	return skipped;
}

void
apply_host(struct apply_result *ar, const struct host *h,
    const struct playbook *pb, const struct apply_input *in,
    const struct apply_opts *o)
{
	struct agentlink *l = NULL;

	ar->host = h;
	if (agentlink_open(&l, h, o->link, &ar->err) != 0) {
		ar->outcome = ENVCTL_OUT_UNREACHABLE;
		err_sethost(&ar->err, h->name);
		return;
	}
	apply_on(ar, l, h, pb, in, o);
	agentlink_stats(l, &ar->stats);
	agentlink_close(l);
}

void
apply_result_release(struct apply_result *ar)
{
	err_release(&ar->err);
	free(ar->backup_id);
	free(ar->restored_id);
	free(ar->startup_error);
	free(ar->warning);
	free(ar->note);
	memset(ar, 0, sizeof(*ar));
}
