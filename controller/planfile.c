/* planfile.c - the saved plan (see planfile.h). */
#include "planfile.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/atomicfile.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "controller/playbook.h"

#define INPUT_MAX	(64u * 1024 * 1024)

int
planfile_playbook_digest(char *hex, const struct playbook *pb,
    struct err *err)
{
	struct buf b;
	int r;

	buf_init(&b, INPUT_MAX);
	if ((r = buf_read_file(&b, pb->path, err)) == 0) {
		buf_add(&b, pb->template.data, pb->template.len);
		hash_sha256_hex(hex, b.data, b.len);
	}
	buf_release(&b);
	return r;
}

static json_t *
host_json(const struct host_plan *hp)
{
	const struct host_state *st = &hp->st;
	json_t *h, *cur;

	h = json_pack("{s:s, s:s, s:i, s:s}", "name", hp->host->name,
	    "address", hp->host->address, "port", hp->host->port,
	    "outcome", outcome_name(hp->outcome));
	if (!hp->have_state || hp->err.code != 0)
		return h;
	cur = json_pack("{s:b}", "exists", st->exists);
	if (st->exists) {
		json_object_set_new(cur, "sha256", json_string(st->sha256));
		json_object_set_new(cur, "mode", json_integer(st->mode));
		json_object_set_new(cur, "uid", json_integer(st->uid));
		json_object_set_new(cur, "gid", json_integer(st->gid));
		json_object_set_new(cur, "data_b64", proto_b64_json(st->content.data,
		    st->content.len));
	}
	json_object_set_new(h, "target", json_string(st->path));
	json_object_set_new(h, "real", json_string(st->real));
	json_object_set_new(h, "current", cur);
	json_object_set_new(h, "desired", json_pack("{s:s, s:o}", "sha256",
	    hp->want_sha256, "data_b64", proto_b64_json(hp->d.content.data,
	    hp->d.content.len)));
	return h;
}

int
planfile_write(const char *path, const struct inventory *inv,
    const struct playbook *pb, struct host_plan *const *hps, size_t n,
    struct err *err)
{
	char pb_hex[ENVCTL_SHA256_HEX], when[32];
	json_t *root, *hosts;
	char *text = NULL;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int r;

	if ((r = planfile_playbook_digest(pb_hex, pb, err)) != 0)
		return r;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	hosts = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(hosts, host_json(hps[i]));
	root = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, "
	    "s:s}, s:o}", "format", ENVCTL_PLANFILE_FORMAT, "kind",
	    "envctl-plan", "envctl", ENVCTL_VERSION, "created", when,
	    "inventory", "path", inventory_path(inv), "sha256",
	    inventory_digest(inv),
	    "playbook", "path", pb->path, "name", pb->name, "sha256", pb_hex,
	    "hosts", hosts);
	text = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(root);
	if (text == NULL)
		return err_set(err, ENVCTL_EINVALID, "cannot encode the plan "
		    "as JSON");
	r = atomic_write_file(path, text, strlen(text), 0600, err);
	explicit_wipe(text, strlen(text));
	free(text);
	return r;
}
