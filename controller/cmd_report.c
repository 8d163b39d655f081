/*
 * cmd_report.c - envctl report merge: the reports and metrics files of a
 * sharded run (--shard) joined into the ones an unsharded run writes, with
 * its exit status.  The joining is repmerge.c's and metrics.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/atomicfile.h"
#include "controller/cmd.h"
#include "controller/metrics.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/report.h"
#include "controller/repmerge.h"

/* The largest report or metrics file read (a plan of 10000 hosts fits). */
#define INPUT_MAX	(256u * 1024 * 1024)

static const char *const usage[] = {
	"envctl report merge [-o OUT.json] [--metrics-file OUT.prom] "
	    "IN.json... IN.prom... [-q]",
	NULL
};

struct inputs {
	struct repmerge_input *rep;
	size_t		 nrep;
	struct metrics_input *met;
	size_t		 nmet;
	json_t		**docs;
	struct buf	*text;
	size_t		 n;
};

static void
inputs_release(struct inputs *in)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		json_decref(in->docs[i]);
		buf_release(&in->text[i]);
	}
	free(in->rep);
	free(in->met);
	free(in->docs);
	free(in->text);
}

/*
 * Reads every operand; one that starts with '{' is a report (JSON), any
 * other a metrics textfile.
 */
static int
inputs_read(struct inputs *in, char **paths, int n, struct err *err)
{
	json_error_t je;
	const char *p;
	int i;

	in->n = (size_t)n;
	in->docs = xcalloc((size_t)n + 1, sizeof(*in->docs));
	in->text = xcalloc((size_t)n + 1, sizeof(*in->text));
	in->rep = xcalloc((size_t)n + 1, sizeof(*in->rep));
	in->met = xcalloc((size_t)n + 1, sizeof(*in->met));
	for (i = 0; i < n; i++)
		buf_init(&in->text[i], INPUT_MAX);
	for (i = 0; i < n; i++) {
		if (buf_read_file(&in->text[i], paths[i], err) != 0)
			return err->code;
		for (p = in->text[i].data; *p == ' ' || *p == '\n' ||
		    *p == '\t' || *p == '\r'; p++)
			;
		if (*p != '{') {
			in->met[in->nmet].name = paths[i];
			in->met[in->nmet++].text = in->text[i].data;
			continue;
		}
		in->docs[i] = json_loadb(in->text[i].data, in->text[i].len, 0,
		    &je);
		if (in->docs[i] == NULL)
			return err_setat(err, ENVCTL_EPARSE, paths[i], je.line,
			    je.column, "not a JSON report: %s", je.text);
		in->rep[in->nrep].name = paths[i];
		in->rep[in->nrep++].doc = in->docs[i];
	}
	return 0;
}

/* The hosts of a merged report by name, in order, for the metrics. */
static const char **
host_order(const json_t *doc, size_t *n)
{
	const json_t *hosts = json_object_get(doc, "hosts"), *h;
	const char **names = xcalloc(json_array_size(hosts) + 1,
	    sizeof(*names));
	size_t i;

	*n = 0;
	json_array_foreach(hosts, i, h)
		names[(*n)++] = json_string_value(json_object_get(h, "name"));
	return names;
}

/* Says what was merged: "drift, 4 shards: 1 to change, 99 in sync". */
static void
summary_line(const json_t *doc, size_t nshards)
{
	const json_t *s = json_object_get(doc, "summary");
	struct plan_counts c;
	struct report_opts ro = { 0 };
	struct buf b = ENVCTL_BUF_INIT;

	c.ok = (size_t)json_integer_value(json_object_get(s, "ok"));
	c.changed = (size_t)json_integer_value(json_object_get(s, "changed"));
	c.pending = (size_t)json_integer_value(json_object_get(s, "pending"));
	c.failed = (size_t)json_integer_value(json_object_get(s, "failed"));
	c.unreachable = (size_t)json_integer_value(json_object_get(s,
	    "unreachable"));
	c.skipped = (size_t)json_integer_value(json_object_get(s, "skipped"));
	buf_addf(&b, "%s, %zu shard%s: ", json_string_value(
	    json_object_get(doc, "command")), nshards,
	    nshards == 1 ? "" : "s");
	report_summary(&b, &c, &ro);
	out_write(b.data, b.len);
	buf_release(&b);
}

static int
merge(const char *out, const char *metrics, int quiet, struct inputs *in,
    struct err *err)
{
	struct metrics_totals t;
	struct buf mb = ENVCTL_BUF_INIT;
	const char **order = NULL;
	json_t *doc = NULL;
	size_t norder = 0;
	int status = ENVCTL_EXIT_FAIL;

	if (in->nrep > 0) {
		if (repmerge_reports(&doc, &status, in->rep, in->nrep,
		    err) != 0)
			goto fail;
		order = host_order(doc, &norder);
	}
	if (in->nmet > 0) {
		if (metrics_merge(&mb, &t, in->met, in->nmet, order, norder,
		    err) != 0)
			goto fail;
		if (doc == NULL)
			status = t.failed_hosts > 0 ? ENVCTL_EXIT_FAIL :
			    t.drift_hosts > 0 ? ENVCTL_EXIT_PENDING :
			    ENVCTL_EXIT_OK;
	}
	/* Nothing is written unless everything merged. */
	if (doc != NULL && report_write_json(out, doc, err) != 0)
		goto fail;
	if (in->nmet > 0 && atomic_write_file(metrics, mb.data, mb.len, 0644,
	    err) != 0)
		goto fail;
	if (doc != NULL && !quiet)
		summary_line(doc, in->nrep);
	goto out;
fail:
	status = ENVCTL_EXIT_FAIL;
out:
	json_decref(doc);
	buf_release(&mb);
	free(order);
	return status;
}

int
cmd_report(int argc, char **argv)
{
	const char *out = NULL, *metrics = NULL;
	int quiet = 0;
	struct opt opts[] = {
		{ 'o', "out", ENVCTL_OPT_STRING, &out, "OUT.json",
		    "write the merged report here, atomically (needs the "
		    "shards' reports)", 0, 0 },
		{ 0, "metrics-file", ENVCTL_OPT_STRING, &metrics, "OUT.prom",
		    "write the merged node_exporter textfile here, "
		    "atomically (needs the shards' metrics files)", 0, 0 },
		{ 'q', "quiet", ENVCTL_OPT_FLAG, &quiet, NULL,
		    "print only problems; the exit status tells the rest", 0,
		    0 },
		ENVCTL_OPT_END_ENTRY
	};
	char name[] = "report merge";
	struct err err = ENVCTL_ERR_INIT;
	struct inputs in = { 0 };
	char **operands = xcalloc((size_t)argc + 1, sizeof(char *));
	int nops, code = ENVCTL_EXIT_USAGE;

	/* "envctl report --help" teaches "report merge". */
	if (argc >= 2 && strcmp(argv[1], "merge") == 0) {
		argv++;
		argc--;
	} else if (argc < 2 || (strcmp(argv[1], "--help") != 0 &&
	    strcmp(argv[1], "-h") != 0)) {
		out_note("envctl report: expected 'merge'%s%s%s\n",
		    argc >= 2 ? ", not '" : "", argc >= 2 ? argv[1] : "",
		    argc >= 2 ? "'" : "");
		goto out;
	}
	argv[0] = name;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, argc,
	    &code))
		goto out;
	code = ENVCTL_EXIT_USAGE;
	if (out == NULL && metrics == NULL) {
		out_note("envctl report merge: give -o OUT.json, "
		    "--metrics-file OUT.prom or both\n");
		goto out;
	}
	code = ENVCTL_EXIT_FAIL;
	if (inputs_read(&in, operands, nops, &err) != 0)
		goto fail;
	code = ENVCTL_EXIT_USAGE;
	if (in.nrep > 0 && out == NULL) {
		out_note("envctl report merge: '%s' is a report: give -o "
		    "OUT.json\n", in.rep[0].name);
		goto out;
	}
	if (in.nmet > 0 && metrics == NULL) {
		out_note("envctl report merge: '%s' is a metrics file: give "
		    "--metrics-file OUT.prom\n", in.met[0].name);
		goto out;
	}
	if (out != NULL && in.nrep == 0) {
		out_note("envctl report merge: -o, but no report among the "
		    "inputs\n");
		goto out;
	}
	if (metrics != NULL && in.nmet == 0) {
		out_note("envctl report merge: --metrics-file, but no metrics "
		    "file among the inputs\n");
		goto out;
	}
	code = merge(out, metrics, quiet, &in, &err);
	if (err.code == 0)
		goto out;
fail:
	out_note("envctl report merge: ");
	out_errors(&err);
	code = ENVCTL_EXIT_FAIL;
out:
	inputs_release(&in);
	err_release(&err);
	free(operands);
	return code;
}
