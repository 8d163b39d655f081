/*
 * fuzz_report.c - what a host sends, all the way to the operator's screen.
 *
 * The input is a selector byte, an agent's hello reply, a NUL, and a
 * second reply (JSON), as they come off the SSH channel from a host that
 * may be broken or hostile.  The selector's bit 0 picks the playbook: the
 * shipped cuda13-nccl (mode file) or report-block.yaml (mode block, with
 * a secret); the rest, what the second reply answers:
 * - a read: both go through proto_reply_error(), plan_read() (hoststate,
 *   rendering against the host's file, diff) and every report of a host:
 *   text with and without colours, facts, JSON;
 * - an apply or rollback: apply_reply() and report_apply_result();
 * - a backups listing: backups_parse(), backups_text(), backups_pick().
 *
 * Properties: the text is valid UTF-8 with no control character but the
 * newlines between lines and tabs, and with colours no escape sequence but the
 * report's own, so a host cannot move the cursor, retitle the terminal
 * or forge a line; the first line names the host and every other line is
 * indented; the JSON document can be built and dumped; the secret value
 * is never shown, unless the host itself sent it outside the file.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/apply.h"
#include "controller/backups.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "controller/playbook.h"
#include "controller/pylit.h"
#include "controller/report.h"
#include "tests/fuzz/fuzz.h"

#define SECRET	"s3cr3t-T0ken-4711"

static const char inventory[] =
    "all:\n"
    "  vars:\n"
    "    cuda_home: /usr/local/cuda-13.0\n"
    "    token: " SECRET "\n"
    "  hosts:\n"
    "    gpu-01:\n"
    "      ansible_host: 127.0.0.1\n";

static struct inventory *inv;
static struct playbook *books[2];

static void
load_playbook(struct playbook **pb, const char *srcdir, const char *rel)
{
	struct err err = ENVCTL_ERR_INIT;
	char *path = xasprintf("%s/%s", srcdir, rel);

	if (playbook_load(pb, path, &err) != 0) {
		fprintf(stderr, "fuzz_report: cannot load %s: %s\n", path,
		    err.msg != NULL ? err.msg : "?");
		exit(1);
	}
	free(path);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *srcdir = getenv("ENVCTL_SRCDIR");
	struct err err = ENVCTL_ERR_INIT;

	(void)argc;
	(void)argv;
	if (srcdir == NULL)
		srcdir = ".";
	if (inventory_load_string(&inv, inventory, strlen(inventory),
	    "hosts.yaml", &err) != 0) {
		fprintf(stderr, "fuzz_report: bad inventory\n");
		exit(1);
	}
	load_playbook(&books[0], srcdir, "playbooks/cuda13-nccl.yaml");
	load_playbook(&books[1], srcdir, "tests/fuzz/report-block.yaml");
	return 0;
}

/* Whether the n bytes at hay hold needle. */
static int
holds(const char *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle), i;

	for (i = 0; i + m <= n; i++)
		if (memcmp(hay + i, needle, m) == 0)
			return 1;
	return 0;
}

/* Lines of a host's text report: named first line, the rest indented. */
static void
check_lines(const struct buf *b, const char *name)
{
	const char *p = b->data, *end = b->data + b->len, *nl;
	size_t len = strlen(name);
	int first = 1;

	FUZZ_ASSERT(pylit_utf8_valid(b->data, b->len, NULL));
	for (; p < end; p = nl + 1, first = 0) {
		nl = memchr(p, '\n', (size_t)(end - p));
		FUZZ_ASSERT(nl != NULL);
		if (first)
			FUZZ_ASSERT((size_t)(nl - p) > len &&
			    memcmp(p, name, len) == 0 && p[len] == ':');
		else
			FUZZ_ASSERT(nl - p >= 4 && memcmp(p, "    ", 4) == 0);
	}
}

/* No control character but '\n', a diff's tabs and the report's colours. */
static void
check_controls(const struct buf *b, int color)
{
	static const char *const own[] = { "\033[31m", "\033[32m",
		"\033[33m", "\033[36m", "\033[1m", "\033[m" };
	size_t i, k;

	for (i = 0; i < b->len; i++) {
		unsigned char c = (unsigned char)b->data[i];

		if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f))
			continue;
		FUZZ_ASSERT(color && c == 0x1b);
		for (k = 0; k < sizeof(own) / sizeof(own[0]); k++)
			if (strncmp(b->data + i, own[k], strlen(own[k])) == 0)
				break;
		FUZZ_ASSERT(k < sizeof(own) / sizeof(own[0]));
	}
	/* C1 controls and bidirectional overrides, as UTF-8. */
	FUZZ_ASSERT(!holds(b->data, b->len, "\xc2\x9b"));
	FUZZ_ASSERT(!holds(b->data, b->len, "\xe2\x80\xae"));
}

/* j is a document that dumps (what --json prints); takes j. */
static void
dumps(json_t *j)
{
	char *dump;

	FUZZ_ASSERT(j != NULL);
	dump = json_dumps(j, JSON_COMPACT);
	FUZZ_ASSERT(dump != NULL);
	free(dump);
	json_decref(j);
}

/* Whether any string of v (keys too), the file's base64 aside, holds s. */
static int
sent(const json_t *v, const char *s)
{
	const char *key;
	json_t *m;
	size_t i;

	if (json_is_string(v))
		return strstr(json_string_value(v), s) != NULL;
	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			if (sent(m, s))
				return 1;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, m)
			if (strstr(key, s) != NULL ||
			    (strcmp(key, "data") != 0 && sent(m, s)))
				return 1;
	}
	return 0;
}

static void
report_all(const struct host_plan *hp, int check_secret)
{
	struct report_opts ro = { 0, 1, 0, 1 };
	struct buf b = ENVCTL_BUF_INIT;
	json_t *j;
	char *dump;

	for (ro.color = 0; ro.color <= 1; ro.color++) {
		buf_reset(&b);
		report_plan_host(&b, hp, &ro);
		check_controls(&b, ro.color);
		if (!ro.color)
			check_lines(&b, hp->host->name);
		if (check_secret)
			FUZZ_ASSERT(!holds(b.data, b.len, SECRET));
		buf_reset(&b);
		report_facts_host(&b, hp, &ro);
		check_controls(&b, ro.color);
		if (check_secret)
			FUZZ_ASSERT(!holds(b.data, b.len, SECRET));
	}
	j = report_plan_json(hp);
	FUZZ_ASSERT(j != NULL);
	dump = json_dumps(j, JSON_COMPACT);
	FUZZ_ASSERT(dump != NULL);
	if (check_secret)
		FUZZ_ASSERT(strstr(dump, SECRET) == NULL);
	free(dump);
	json_decref(j);
	buf_release(&b);
}

static void
apply_answer(const json_t *reply)
{
	struct report_opts ro = { 0, 1, 0, 1 };
	struct buf b = ENVCTL_BUF_INIT;
	struct apply_result ar;

	memset(&ar, 0, sizeof(ar));
	ar.host = inventory_host(inv, 0);
	apply_reply(&ar, reply);
	FUZZ_ASSERT(ar.outcome == ENVCTL_OUT_FAILED ? ar.err.code != 0 :
	    ar.err.code == 0);
	for (ro.color = 0; ro.color <= 1; ro.color++) {
		buf_reset(&b);
		report_apply_result(&b, &ar, &ro);
		check_controls(&b, ro.color);
		if (!ro.color)
			check_lines(&b, ar.host->name);
	}
	/* The host objects of apply --json and rollback --json. */
	dumps(report_apply_json(ar.host->name, ar.outcome, &ar, &ar.err,
	    &ar.stats));
	dumps(report_rollback_json(ar.host->name, ar.outcome, ar.restored_id,
	    &ar, &ar.err));
	apply_result_release(&ar);
	buf_release(&b);
}

static void
backups_answer(const json_t *reply)
{
	const struct backup_entry *e;
	struct buf b = ENVCTL_BUF_INIT;
	struct backup_list bl;
	size_t i;

	backups_parse(&bl, reply);
	/* The host's block as the command prints it. */
	backups_host_text(&b, "gpu-01", &bl, "/etc/python3/sitecustomize.py");
	check_controls(&b, 0);
	check_lines(&b, "gpu-01");
	dumps(backups_json("gpu-01", "/etc/python3/sitecustomize.py", &bl,
	    NULL));
	for (i = 0; i < bl.n; i++)
		FUZZ_ASSERT(bl.v[i].id != NULL);
	if (bl.n > 0)
		FUZZ_ASSERT(backups_pick(&bl, bl.v[bl.n - 1].id, "") != NULL);
	e = backups_pick(&bl, "latest", "");
	FUZZ_ASSERT(e == NULL || (e >= bl.v && e < bl.v + bl.n));
	e = backups_pick(&bl, "latest", "ada22e26fcb9");
	FUZZ_ASSERT(e == NULL || (e >= bl.v && e < bl.v + bl.n));
	backup_list_release(&bl);
	buf_release(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct playbook *pb;
	struct host_plan hp;
	const uint8_t *nul;
	json_t *hello = NULL, *read = NULL;
	int check_secret, what;

	if (size < 1)
		return 0;
	pb = books[data[0] & 1];
	what = (data[0] >> 1) % 3;
	data++;
	size--;
	if ((nul = memchr(data, '\0', size)) == NULL)
		return 0;
	hello = json_loadb((const char *)data, (size_t)(nul - data), 0, NULL);
	read = json_loadb((const char *)nul + 1, size - (size_t)(nul - data) -
	    1, 0, NULL);
	if (what == 1 && json_is_object(read))
		apply_answer(read);
	if (what == 2 && json_is_object(read))
		backups_answer(read);
	if (what != 0 || !json_is_object(hello) || !json_is_object(read))
		goto out;
	/* Only report-block.yaml says the value is a secret. */
	check_secret = pb == books[1] && !sent(hello, SECRET) &&
	    !sent(read, SECRET);
	memset(&hp, 0, sizeof(hp));
	FUZZ_ASSERT(plan_begin(&hp, inventory_host(inv, 0), pb) == 0);
	if (proto_reply_error(hello, &hp.err) == 0 &&
	    proto_reply_error(read, &hp.err) == 0)
		plan_read(&hp, pb, hello, (const json_t *const *)&read, 1);
	report_all(&hp, check_secret);
	plan_release(&hp);
out:
	json_decref(hello);
	json_decref(read);
	return 0;
}
