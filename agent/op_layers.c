/* op_layers.c - the layers op (see op_layers.h). */
#include "op_layers.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "account.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "ncclconf.h"
#include "ops.h"
#include "policy.h"
#include "procenv.h"
#include "request.h"
#include "unitenv.h"

/*
 * The NCCL files a service's workers read: its User='s home (root's when
 * unset) and the NCCL_CONF_FILE its unit sets.
 */
static json_t *
service_nccl(const struct unitenv *u)
{
	const struct unitenv_var *v = unitenv_get(u, "NCCL_CONF_FILE");
	struct ncclconf c;
	struct err err = ENVCTL_ERR_INIT;
	uid_t uid = 0;
	char *home;
	json_t *o;

	memset(&c, 0, sizeof(c));
	if (u->user != NULL && account_uid(&uid, u->user) != 0)
		uid = (uid_t)-1;
	home = uid != (uid_t)-1 ? account_home(uid) : NULL;
	ncclconf_read(&c, "", home, v != NULL ? v->now.value : NULL,
	    uid != (uid_t)-1 ? (long)uid : -1, 0, &err);
	o = ncclconf_json(&c);
	ncclconf_release(&c);
	err_release(&err);
	free(home);
	return o;
}

/* Privileged: only processes of the services root listed are shown. */
static void
withhold(json_t *procs, const struct policy *pol)
{
	json_t *a = json_object_get(procs, "processes"), *p;
	struct err e = ENVCTL_ERR_INIT;
	const char *unit;
	size_t i, n = 0;

	if (!pol->privileged || !json_is_array(a))
		return;
	for (i = 0; i < json_array_size(a); ) {
		p = json_array_get(a, i);
		unit = json_string_value(json_object_get(p, "unit"));
		if (unit != NULL && policy_service(pol, unit, &e) == 0) {
			i++;
			continue;
		}
		err_release(&e);
		json_array_remove(a, i);
		n++;
	}
	json_object_set_new(procs, "withheld", json_integer((json_int_t)n));
}

int
op_layers(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct policy pol = POLICY_INIT;
	struct procenv pe = PROCENV_INIT;
	struct ncclconf c;
	char **names = NULL, **units = NULL, **pats = NULL;
	size_t nnames = 0, nunits = 0, npats = 0, i;
	const json_t *pv = json_object_get(req, "processes");
	json_t *svcs = json_array(), *o;
	int r;

	(void)ctx;
	memset(&c, 0, sizeof(c));
	if ((r = req_names(&names, &nnames, json_object_get(req, "vars"),
	    "layers", "vars", err)) != 0 ||
	    (r = req_names(&units, &nunits, json_object_get(req, "services"),
	    "layers", "services", err)) != 0 ||
	    (r = req_names(&pats, &npats, pv, "layers", "processes",
	    err)) != 0)
		goto out;
	if (nunits > ENVCTL_LAYERS_MAX_SERVICES) {
		r = err_set(err, ENVCTL_EINVALID, "layers: at most %d "
		    "services", ENVCTL_LAYERS_MAX_SERVICES);
		goto out;
	}
	if ((r = policy_open(&pol, err)) != 0)
		goto out;
	for (i = 0; i < nunits; i++) {
		struct unitenv u = UNITENV_INIT;
		struct err e2 = ENVCTL_ERR_INIT;

		if ((r = unitenv_load(&u, "", units[i], &pol, err)) != 0) {
			unitenv_release(&u);
			err_context(err, "service '%s'", units[i]);
			goto out;
		}
		unitenv_systemctl(&u, &e2);
		err_release(&e2);
		o = unitenv_json(&u, names, nnames);
		json_object_set_new(o, "nccl", service_nccl(&u));
		json_array_append_new(svcs, o);
		unitenv_release(&u);
	}
	json_object_set(reply, "services", svcs);
	ncclconf_read(&c, "", NULL, NULL, -1, 0, err);
	json_object_set_new(reply, "nccl", ncclconf_json(&c));
	if (pv == NULL || json_is_null(pv)) {
		json_object_set_new(reply, "processes", json_null());
		goto out;
	}
	if ((r = procenv_scan(&pe, "/proc", pats, npats, names, nnames,
	    err)) != 0)
		goto out;
	o = procenv_json(&pe);
	withhold(o, &pol);
	json_object_set_new(reply, "processes", o);
out:
	json_decref(svcs);
	ncclconf_release(&c);
	procenv_release(&pe);
	policy_release(&pol);
	free(names);
	free(units);
	free(pats);
	return r;
}
