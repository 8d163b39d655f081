/* ops.c - request dispatch and the hello op (see ops.h). */
#include "ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "account.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "op_apply.h"
#include "op_rollback.h"
#include "op_backups.h"
#include "op_discover.h"
#include "op_gpufacts.h"
#include "op_layers.h"
#include "op_read.h"

#ifndef ENVCTL_VERSION
#define ENVCTL_VERSION	"unknown"
#endif

struct op {
	const char	*name;
	int		(*fn)(json_t *, const json_t *,
			    const struct agent_ctx *, struct err *);
};

static int	op_hello(json_t *, const json_t *, const struct agent_ctx *,
		    struct err *);

static const struct op ops[] = {
	{ "hello",	op_hello },
	{ "read",	op_read },
	{ "layers",	op_layers },
	{ "apply",	op_apply },
	{ "backups",	op_backups },
	{ "rollback",	op_rollback },
	{ "discover",	op_discover },
	{ "gpufacts",	op_gpufacts },
	{ NULL,		NULL },
};

/*
 * hello: {"protocol": 1} -> who and where the agent is.  The user is the
 * effective one, whose rights every later op has.
 */
static int
op_hello(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	const json_t *proto = json_object_get(req, "protocol");
	struct utsname u;
	char *user;

	(void)ctx;
	if (!json_is_integer(proto))
		return err_set(err, ENVCTL_EINVALID,
		    "hello: 'protocol' must be an integer");
	if (json_integer_value(proto) != ENVCTL_PROTO_VERSION)
		return err_set(err, ENVCTL_EUNSUPPORTED,
		    "protocol %" JSON_INTEGER_FORMAT " is not supported "
		    "(envctl-agent %s speaks protocol %d)",
		    json_integer_value(proto), ENVCTL_VERSION,
		    ENVCTL_PROTO_VERSION);
	if (uname(&u) == -1)
		return err_errno(err, ENVCTL_ESYS, errno, "uname");
	user = account_user(geteuid());
	json_object_set_new(reply, "agent", json_string(ENVCTL_VERSION));
	json_object_set_new(reply, "protocol",
	    json_integer(ENVCTL_PROTO_VERSION));
	json_object_set_new(reply, "arch", proto_text(u.machine,
	    strlen(u.machine)));
	json_object_set_new(reply, "uid", json_integer(getuid()));
	json_object_set_new(reply, "euid", json_integer(geteuid()));
	json_object_set_new(reply, "user", proto_text(user, strlen(user)));
	json_object_set_new(reply, "hostname", proto_text(u.nodename,
	    strlen(u.nodename)));
	json_object_set_new(reply, "pid", json_integer(getpid()));
	free(user);
	return 0;
}

json_t *
ops_error_reply(const json_t *id, const struct err *err)
{
	json_t *reply = proto_error_reply(0, err);

	json_object_set_new(reply, "id", json_is_integer(id) ?
	    json_integer(json_integer_value(id)) : json_null());
	return reply;
}

int
ops_handle(json_t **reply, const json_t *req, const struct agent_ctx *ctx)
{
	struct err err = ENVCTL_ERR_INIT;
	const json_t *id = json_object_get(req, "id");
	const json_t *op = json_object_get(req, "op");
	const struct op *o;
	json_t *rep, *detail;
	int r = 0;

	*reply = NULL;
	if (!json_is_integer(id)) {
		r = err_set(&err, ENVCTL_EPARSE,
		    "request has no integer 'id'");
		*reply = ops_error_reply(NULL, &err);
		goto out;
	}
	if (!json_is_string(op)) {
		r = err_set(&err, ENVCTL_EPARSE,
		    "request %" JSON_INTEGER_FORMAT " has no string 'op'",
		    json_integer_value(id));
		*reply = ops_error_reply(id, &err);
		goto out;
	}
	for (o = ops; o->name != NULL; o++)
		if (strcmp(o->name, json_string_value(op)) == 0)
			break;
	if (o->name == NULL) {
		err_set(&err, ENVCTL_EUNSUPPORTED, "unknown op '%s'",
		    json_string_value(op));
		*reply = ops_error_reply(id, &err);
		goto out;
	}
	rep = json_object();
	json_object_set_new(rep, "id", json_integer(json_integer_value(id)));
	json_object_set_new(rep, "ok", json_true());
	if (o->fn(rep, req, ctx, &err) != 0) {
		*reply = ops_error_reply(id, &err);
		if ((detail = json_object_get(rep, "detail")) != NULL)
			json_object_set(*reply, "detail", detail);
		json_decref(rep);
	} else
		*reply = rep;
out:
	err_release(&err);
	return r;
}
