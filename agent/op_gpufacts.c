/* op_gpufacts.c - the gpufacts op (see op_gpufacts.h). */
#include "op_gpufacts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "child.h"
#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "gpufacts.h"
#include "ops.h"
#include "policy.h"
#include "probe.h"
#include "request.h"

/* The script (agent/py/gpufacts.py), as gpufacts_py[]. */
#include "agent/py/gpufacts.py.h"

#define MARKER		"\n--envctl-gpufacts-v1--\n"
#define FILE_MAX	(64u * 1024)	/* /proc files, version.json */
#define MIN_RUN_MS	50		/* below this, a run is not started */
#define CHUNK		(1024u * 1024)

enum { F_GPU = 1, F_CUDA = 2, F_NCCL = 4, F_TRITON = 8 };

struct gf {
	const struct agent_ctx *ctx;
	struct policy	 pol;
	long long	 deadline;
	const char	*root;		/* test builds: a prefix, else "" */
};

static char *
rooted(const struct gf *g, const char *path)
{
	return xasprintf("%s%s", g->root, path);
}

/* A run's share: what is left, at most RUN_MS; 0 when too little. */
static int
run_ms(const struct gf *g)
{
	int left = deadline_left_ms(g->deadline, deadline_now_ms());

	if (left < MIN_RUN_MS)
		return 0;
	return left < ENVCTL_GPUFACTS_RUN_MS ? left : ENVCTL_GPUFACTS_RUN_MS;
}

/*
 * Runs argv (argv[0] absolute) to its end with LC_ALL=C and the probe's
 * PATH; its stdout in out.  ENVCTL_EPROBE when it exits non-zero (its
 * stderr's first line in the message).
 */
static int
run(struct gf *g, char *const argv[], const char *name, struct buf *out,
    struct err *err)
{
	static char *const envp[] = { "LC_ALL=C", "PATH=" ENVCTL_PROBE_PATH,
	    NULL };
	struct child_spec spec;
	struct child_result res;
	const char *nl;
	size_t n;
	int r, ms;

	if ((ms = run_ms(g)) == 0)
		return err_set(err, ENVCTL_ETIMEOUT, "%s: no time left of "
		    "the request's timeout_ms", name);
	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.argv = argv;
	spec.envp = envp;
	spec.path = ENVCTL_PROBE_PATH;
	spec.cwd = "/";
	spec.timeout_ms = ms;
	spec.out_keep = ENVCTL_GPUFACTS_OUT_KEEP;
	spec.err_keep = 4096;
	spec.stop = g->ctx != NULL ? g->ctx->stop : NULL;
	spec.waitmask = g->ctx != NULL ? g->ctx->waitmask : NULL;
	child_result_init(&res);
	if ((r = child_run(&res, &spec, err)) != 0)
		goto out;
	if (res.out_truncated) {
		r = err_set(err, ENVCTL_ETOOBIG, "%s printed more than %u "
		    "bytes", name, ENVCTL_GPUFACTS_OUT_KEEP);
		goto out;
	}
	if (res.status != 0) {
		nl = memchr(res.err.data, '\n', res.err.len);
		n = nl != NULL ? (size_t)(nl - res.err.data) : res.err.len;
		r = err_set(err, ENVCTL_EPROBE, "%s exited with status %d: "
		    "%.*s", name, res.status, (int)(n > 200 ? 200 : n),
		    res.err.data);
		goto out;
	}
	buf_add(out, res.out.data, res.out.len);
out:
	child_result_release(&res);
	return r;
}

/* Reads a small file; *missing set (and 0 returned) when it is absent. */
static int
read_small(struct gf *g, struct buf *b, const char *path, int *missing,
    struct err *err)
{
	struct err e = ENVCTL_ERR_INIT;
	int r;

	*missing = 0;
	if ((r = policy_program(&g->pol, path, err)) != 0)
		return r;
	buf_init(b, FILE_MAX);
	if ((r = buf_read_file(b, path, &e)) != 0) {
		if (e.cause == ENOENT || e.cause == ENOTDIR) {
			*missing = 1;
			r = 0;
		} else
			err_move(err, &e);
	}
	err_release(&e);
	return r;
}

/* Adds err's message to the array errs and clears it. */
static void
note(json_t *errs, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;

	err_format(err, &b);
	json_array_append_new(errs, proto_text(b.data, b.len));
	buf_release(&b);
	err_release(err);
}

/* ---- gpu ---- */

/* The first nvidia-smi of the fixed list that exists, or NULL. */
static char *
find_smi(const struct gf *g)
{
	static const char *const places[] = { ENVCTL_GPUFACTS_SMI, NULL };
	struct stat st;
	char *p;
	int i;

	for (i = 0; places[i] != NULL; i++) {
		p = rooted(g, places[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			return p;
		free(p);
	}
	return NULL;
}

static json_t *
gather_gpu(struct gf *g)
{
	static const char query[] = "--query-gpu=index,name,compute_cap,"
	    "pci.bus_id,memory.total";
	struct err e = ENVCTL_ERR_INIT;
	struct buf b;
	json_t *o, *errs = json_array(), *v;
	char *path, *smi, *argv[5];
	int missing;

	o = json_pack("{s:n,s:n,s:n,s:[],s:n}", "driver", "nvidia_smi",
	    "driver_cuda", "gpus", "topology");
	path = rooted(g, ENVCTL_GPUFACTS_DRIVER);
	if (read_small(g, &b, path, &missing, &e) != 0)
		note(errs, &e);
	else if (!missing) {
		if (gpufacts_driver(&v, b.data, b.len, &e) == 0)
			json_object_set_new(o, "driver", v);
		else {
			err_context(&e, "%s", ENVCTL_GPUFACTS_DRIVER);
			note(errs, &e);
		}
		buf_release(&b);
	}
	free(path);

	path = rooted(g, ENVCTL_GPUFACTS_CMDLINE);
	if (read_small(g, &b, path, &missing, &e) != 0)
		note(errs, &e);
	else if (!missing) {
		json_object_set_new(o, "iommu", gpufacts_iommu(b.data,
		    b.len));
		buf_release(&b);
	}
	free(path);
	if (json_object_get(o, "iommu") == NULL)
		json_object_set_new(o, "iommu", json_null());

	if ((smi = find_smi(g)) == NULL)
		goto out;
	if (policy_program(&g->pol, smi, &e) != 0) {
		note(errs, &e);
		goto out;
	}
	json_object_set_new(o, "nvidia_smi", proto_text(smi, strlen(smi)));
	argv[0] = smi;
	argv[1] = NULL;
	buf_init(&b, 0);
	if (run(g, argv, "nvidia-smi", &b, &e) != 0 ||
	    gpufacts_smi_header(&v, b.data, b.len, &e) != 0)
		note(errs, &e);
	else {
		json_object_set(o, "driver_cuda", json_object_get(v, "cuda"));
		json_decref(v);
	}
	buf_release(&b);
	argv[1] = (char *)query;
	argv[2] = "--format=csv,noheader";
	argv[3] = NULL;
	buf_init(&b, 0);
	if (run(g, argv, "nvidia-smi --query-gpu", &b, &e) != 0 ||
	    gpufacts_smi_query(&v, b.data, b.len, &e) != 0)
		note(errs, &e);
	else
		json_object_set_new(o, "gpus", v);
	buf_release(&b);
	argv[1] = "topo";
	argv[2] = "-m";
	argv[3] = NULL;
	buf_init(&b, 0);
	if (run(g, argv, "nvidia-smi topo -m", &b, &e) != 0 ||
	    gpufacts_topo(&v, b.data, b.len, &e) != 0)
		note(errs, &e);
	else
		json_object_set_new(o, "topology", v);
	buf_release(&b);
out:
	free(smi);
	json_object_set_new(o, "errors", errs);
	return o;
}

/* Triton's architecture number of the highest compute capability. */
static int
highest_arch(const json_t *gpu)
{
	const json_t *gpus = json_object_get(gpu, "gpus"), *x;
	const char *cc;
	size_t i;
	int best = -1, maj, min;

	json_array_foreach(gpus, i, x) {
		cc = json_string_value(json_object_get(x, "compute_cap"));
		if (cc != NULL && sscanf(cc, "%d.%d", &maj, &min) == 2 &&
		    maj >= 0 && maj < 100 && min >= 0 && min < 10 &&
		    maj * 10 + min > best)
			best = maj * 10 + min;
	}
	return best;
}

/* ---- programs' versions ---- */

/*
 * `PATH --version`, "release X.Y": {"path", "version", "full"}.  NULL
 * with *missing when there is no such file.
 */
static json_t *
tool_version(struct gf *g, const char *path, int *missing, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct stat st;
	char *argv[3];
	json_t *v = NULL;

	*missing = 0;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		*missing = 1;
		return NULL;
	}
	if (policy_program(&g->pol, path, err) != 0)
		return NULL;
	argv[0] = (char *)path;
	argv[1] = "--version";
	argv[2] = NULL;
	if (run(g, argv, path, &b, err) == 0 &&
	    gpufacts_release(&v, b.data, b.len, err) == 0)
		json_object_set_new(v, "path", proto_text(path,
		    strlen(path)));
	else if (err != NULL)
		err_context(err, "%s --version", path);
	buf_release(&b);
	return v;
}

/* ---- cuda ---- */

/* dist-info: the newest record of the compiler, else of the runtime. */
static char *
distinfo(const char *home, const char **which)
{
	static const char *const prefixes[] = { "nvidia_cuda_nvcc",
	    "nvidia_cuda_runtime", NULL };
	struct dirent *de;
	char *dir = xasprintf("%s/dist-info", home), *v, *best = NULL;
	DIR *d;
	int i, n = 0;

	*which = NULL;
	if ((d = opendir(dir)) == NULL)
		goto out;
	for (i = 0; prefixes[i] != NULL && best == NULL; i++) {
		rewinddir(d);
		while ((de = readdir(d)) != NULL && n++ < 4096) {
			v = gpufacts_distinfo_version(de->d_name, prefixes[i]);
			if (v == NULL)
				continue;
			if (best == NULL) {
				best = v;
				*which = prefixes[i];
			} else
				free(v);
		}
	}
	closedir(d);
out:
	free(dir);
	return best;
}

/* "13.0" of "13.0.88". */
static json_t *
major_minor(const char *full)
{
	const char *dot = strchr(full, '.');
	size_t n;

	if (dot == NULL)
		return json_string(full);
	n = strcspn(dot + 1, ".");
	return proto_text(full, (size_t)(dot + 1 - full) + n);
}

static json_t *
gather_cuda(struct gf *g, const char *home, const char *from)
{
	struct err e = ENVCTL_ERR_INIT;
	struct buf b;
	struct stat st;
	json_t *o, *errs = json_array(), *t;
	const char *which;
	char *path, *v = NULL;
	int missing;

	o = json_pack("{s:s,s:s,s:b,s:n,s:n,s:n,s:n}", "home", home, "from",
	    from, "exists", stat(home, &st) == 0 && S_ISDIR(st.st_mode),
	    "version", "full", "source", "ptxas");
	if (!json_is_true(json_object_get(o, "exists")))
		goto out;
	path = xasprintf("%s/version.json", home);
	if (read_small(g, &b, path, &missing, &e) != 0)
		note(errs, &e);
	else if (!missing) {
		if (gpufacts_version_json(&v, b.data, b.len, &e) != 0) {
			err_context(&e, "%s", path);
			note(errs, &e);
		} else
			json_object_set_new(o, "source",
			    json_string("version.json"));
		buf_release(&b);
	}
	free(path);
	if (v == NULL && (v = distinfo(home, &which)) != NULL)
		json_object_set_new(o, "source", json_sprintf("dist-info "
		    "%s", which));
	path = xasprintf("%s/bin/ptxas", home);
	t = tool_version(g, path, &missing, &e);
	if (t == NULL && !missing)
		note(errs, &e);
	free(path);
	if (t != NULL)
		json_object_set_new(o, "ptxas", t);
	if (v == NULL) {
		path = xasprintf("%s/bin/nvcc", home);
		t = tool_version(g, path, &missing, &e);
		if (t == NULL && !missing)
			note(errs, &e);
		free(path);
		if (t == NULL)
			t = json_incref(json_object_get(o, "ptxas"));
		if (json_is_object(t)) {
			json_object_set(o, "full", json_object_get(t, "full"));
			json_object_set(o, "version", json_object_get(t,
			    "version"));
			json_object_set_new(o, "source", json_string(
			    strstr(json_string_value(json_object_get(t,
			    "path")), "nvcc") != NULL ? "nvcc" : "ptxas"));
		}
		json_decref(t);
	} else {
		json_object_set_new(o, "full", json_string(v));
		json_object_set_new(o, "version", major_minor(v));
	}
out:
	free(v);
	json_object_set_new(o, "errors", errs);
	return o;
}

/* ---- per interpreter ---- */

/* libnccl's "NCCL version X.Y.Z", read from its bytes. */
static int
nccl_version(struct gf *g, char **out, const char *path, struct err *err)
{
	struct stat st;
	char *buf = NULL;
	size_t have = 0, keep, total = 0;
	ssize_t n;
	int fd = -1, r = 0;

	*out = NULL;
	if ((r = policy_program(&g->pol, path, err)) != 0)
		return r;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return err_errno(err, ENVCTL_ESYS, errno, "cannot open '%s'",
		    path);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		r = err_set(err, ENVCTL_EINVALID, "'%s' is not a regular "
		    "file", path);
		goto out;
	}
	buf = xmalloc(CHUNK + 64);
	for (;;) {
		if (deadline_left_ms(g->deadline, deadline_now_ms()) <= 0) {
			r = err_set(err, ENVCTL_ETIMEOUT, "reading '%s' took "
			    "all of the request's timeout_ms", path);
			goto out;
		}
		if (total >= ENVCTL_GPUFACTS_LIB_MAX) {
			r = err_set(err, ENVCTL_ETOOBIG, "no NCCL version in "
			    "the first %lu MiB of '%s'",
			    ENVCTL_GPUFACTS_LIB_MAX >> 20, path);
			goto out;
		}
		if ((n = read(fd, buf + have, CHUNK)) == -1) {
			if (errno == EINTR)
				continue;
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot read "
			    "'%s'", path);
			goto out;
		}
		total += (size_t)n;
		have += (size_t)n;
		if ((*out = gpufacts_nccl_scan(buf, have, &keep)) != NULL)
			goto out;
		if (n == 0) {
			r = err_set(err, ENVCTL_ENOTFOUND, "no 'NCCL version' "
			    "string in '%s'", path);
			goto out;
		}
		if (keep > 64)
			keep = 64;
		memmove(buf, buf + have - keep, keep);
		have = keep;
	}
out:
	free(buf);
	if (fd != -1)
		close(fd);
	return r;
}

/* The ptxas Triton would use: the variable's, else the bundled one. */
static void
triton_ptxas(struct gf *g, json_t *t)
{
	const char *cand[2];
	json_t *tried = json_array(), *v = NULL;
	struct err e = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	int i, n = 0, missing;

	if ((cand[n] = json_string_value(json_object_get(t, "value"))) !=
	    NULL)
		n++;
	if ((cand[n] = json_string_value(json_object_get(t, "bundled"))) !=
	    NULL)
		n++;
	for (i = 0; i < n && v == NULL; i++) {
		if (cand[i][0] != '/') {
			json_array_append_new(tried, json_pack("{s:s,s:s}",
			    "path", cand[i], "error", "not an absolute path "
			    "(Triton runs it as given)"));
			continue;
		}
		v = tool_version(g, cand[i], &missing, &e);
		if (v != NULL)
			break;
		if (missing)
			json_array_append_new(tried, json_pack("{s:s,s:s}",
			    "path", cand[i], "error", "no such file"));
		else {
			err_format(&e, &b);
			json_array_append_new(tried, json_pack("{s:s,s:o}",
			    "path", cand[i], "error", proto_text(b.data,
			    b.len)));
			buf_reset(&b);
			err_release(&e);
		}
	}
	json_object_set_new(t, "ptxas", v != NULL ? v : json_null());
	json_object_set_new(t, "fallback", json_boolean(v != NULL && i > 0 &&
	    json_string_value(json_object_get(t, "value")) != NULL));
	json_object_set_new(t, "tried", tried);
	buf_release(&b);
}

/* Takes the script's report apart; EPROBE when it is not its shape. */
static int
parse_report(json_t **out, const char *interp, const struct buf *o,
    struct err *err)
{
	static const char m[] = MARKER;
	json_error_t jerr;
	const char *p = NULL, *q;
	json_t *r;

	*out = NULL;
	for (q = o->data; q + sizeof(m) - 1 <= o->data + o->len; q++)
		if (*q == '\n' && memcmp(q, m, sizeof(m) - 1) == 0)
			p = q + sizeof(m) - 1;
	if (p == NULL)
		return err_set(err, ENVCTL_EPROBE, "%s printed no gpufacts "
		    "report", interp);
	if ((r = json_loadb(p, o->len - (size_t)(p - o->data),
	    JSON_DISABLE_EOF_CHECK, &jerr)) == NULL)
		return err_set(err, ENVCTL_EPROBE, "%s printed a malformed "
		    "gpufacts report: %s", interp, jerr.text);
	if (!json_is_object(r) || !json_is_string(json_object_get(r,
	    "executable")) || !json_is_string(json_object_get(r, "python"))) {
		json_decref(r);
		return err_set(err, ENVCTL_EPROBE, "%s printed a gpufacts "
		    "report with missing or wrong fields", interp);
	}
	*out = r;
	return 0;
}

static json_t *
gather_interp(struct gf *g, const char *interp, int facts, int arch,
    json_t **report)
{
	struct err e = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	json_t *o, *rep = NULL, *t, *n;
	const char *checked = interp;
	char *argv[6], archs[16], *v;
	size_t k = 0;

	*report = NULL;
	o = json_pack("{s:s,s:n,s:n,s:n,s:n,s:n}", "interpreter", interp,
	    "executable", "python", "triton", "nccl", "error");
	if (policy_interpreter(&g->pol, &checked, &e) != 0)
		goto fail;
	snprintf(archs, sizeof(archs), "%d", arch);
	argv[k++] = (char *)checked;
	argv[k++] = "-c";
	k = cache_script_args(argv, k, NULL, "gpufacts", gpufacts_py);
	argv[k++] = arch >= 0 ? archs : "";
	argv[k] = NULL;
	if (run(g, argv, interp, &b, &e) != 0 ||
	    parse_report(&rep, interp, &b, &e) != 0)
		goto fail;
	json_object_set(o, "executable", json_object_get(rep, "executable"));
	json_object_set(o, "python", json_object_get(rep, "python"));
	if ((facts & F_TRITON) && json_is_object(t = json_object_get(rep,
	    "triton"))) {
		t = json_deep_copy(t);
		json_object_del(t, "split");
		json_object_del(t, "arch");
		triton_ptxas(g, t);
		json_object_set_new(o, "triton", t);
	}
	if ((facts & F_NCCL) && json_is_object(n = json_object_get(rep,
	    "nccl")) && json_is_string(json_object_get(n, "path"))) {
		n = json_deep_copy(n);
		json_object_del(n, "torch");
		if (nccl_version(g, &v, json_string_value(json_object_get(n,
		    "path")), &e) == 0) {
			json_object_set_new(n, "version", json_string(v));
			json_object_set_new(n, "error", json_null());
			free(v);
		} else {
			json_object_set_new(n, "version", json_null());
			err_format(&e, &b);
			json_object_set_new(n, "error", proto_text(b.data,
			    b.len));
			err_release(&e);
		}
		json_object_set_new(o, "nccl", n);
	}
	*report = rep;
	buf_release(&b);
	return o;
fail:
	buf_reset(&b);
	err_format(&e, &b);
	json_object_set_new(o, "error", proto_text(b.data, b.len));
	err_release(&e);
	buf_release(&b);
	json_decref(rep);
	return o;
}

/* ---- the request ---- */

static const char *const fact_names[] = { "gpu", "cuda", "nccl", "triton",
	NULL };

static int
parse_facts(int *out, const json_t *v, struct err *err)
{
	const char *const *names = fact_names;
	const json_t *x;
	const char *s;
	size_t i;
	int j;

	*out = F_GPU | F_CUDA | F_NCCL | F_TRITON;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > 4)
		goto bad;
	*out = 0;
	json_array_foreach(v, i, x) {
		if ((s = json_string_value(x)) == NULL)
			goto bad;
		for (j = 0; names[j] != NULL; j++)
			if (strcmp(s, names[j]) == 0)
				break;
		if (names[j] == NULL)
			goto bad;
		*out |= 1 << j;
	}
	return 0;
bad:
	return err_set(err, ENVCTL_EINVALID, "gpufacts: 'facts' must be an "
	    "array of gpu, cuda, nccl and triton");
}

int
op_gpufacts(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct gf g;
	const json_t *iv = json_object_get(req, "interpreters"), *x;
	json_t *gpu = NULL, *interps = json_array(), *o, *rep, *first = NULL;
	json_t *fv;
	const char *home = NULL, *from = "request", *s;
	const char **names = NULL;
	size_t n = 0, i;
	int facts, timeout, arch, r;

	memset(&g, 0, sizeof(g));
	g.ctx = ctx;
	g.pol = (struct policy)POLICY_INIT;
	g.root = "";
#ifdef ENVCTL_FAULTS
	/* The test-only build (never shipped) reads planted files. */
	if (getenv("ENVCTL_TEST_GPU_ROOT") != NULL)
		g.root = getenv("ENVCTL_TEST_GPU_ROOT");
#endif
	if ((r = parse_facts(&facts, json_object_get(req, "facts"),
	    err)) != 0 ||
	    (r = req_int(&timeout, req, "timeout_ms", 30000, 1, 600000,
	    "gpufacts", err)) != 0 ||
	    (r = req_int(&arch, req, "arch", -1, 10, 1000, "gpufacts",
	    err)) != 0 ||
	    (r = req_path(&home, json_object_get(req, "cuda_home"), 1,
	    "gpufacts", "cuda_home", err)) != 0)
		goto out;
	if (iv != NULL && !json_is_null(iv)) {
		if (!json_is_array(iv) || json_array_size(iv) == 0 ||
		    json_array_size(iv) > ENVCTL_GPUFACTS_MAX_INTERP) {
			r = err_set(err, ENVCTL_EINVALID, "gpufacts: "
			    "'interpreters' must be an array of 1 to %d "
			    "interpreters", ENVCTL_GPUFACTS_MAX_INTERP);
			goto out;
		}
		names = xcalloc(json_array_size(iv), sizeof(*names));
		json_array_foreach(iv, i, x) {
			json_t *one = json_pack("{s:O}", "interpreter", x);

			r = req_interpreter(&s, one, "gpufacts", err);
			json_decref(one);
			if (r != 0)
				goto out;
			names[n++] = json_string_value(x);
		}
	} else {
		names = xcalloc(1, sizeof(*names));
		names[n++] = "python3";
	}
	if ((r = policy_open(&g.pol, err)) != 0)
		goto out;
	g.deadline = deadline_now_ms() + timeout;
	fv = json_array();
	for (i = 0; i < 4; i++)
		if (facts & (1 << i))
			json_array_append_new(fv, json_string(fact_names[i]));
	json_object_set_new(reply, "facts", fv);

	if (facts & F_GPU) {
		gpu = gather_gpu(&g);
		if (arch < 0)
			arch = highest_arch(gpu);
	}
	json_object_set_new(reply, "arch", arch >= 0 ? json_integer(arch) :
	    json_null());
	if ((facts & (F_NCCL | F_TRITON)) || ((facts & F_CUDA) &&
	    home == NULL)) {
		for (i = 0; i < n; i++) {
			o = gather_interp(&g, names[i], facts, arch, &rep);
			if (first == NULL && rep != NULL)
				first = json_incref(rep);
			json_decref(rep);
			if (facts & (F_NCCL | F_TRITON))
				json_array_append_new(interps, o);
			else
				json_decref(o);
			if (!(facts & (F_NCCL | F_TRITON)))
				break;
		}
	}
	json_object_set_new(reply, "gpu", gpu != NULL ? gpu : json_null());
	gpu = NULL;
	if (facts & F_CUDA) {
		if (home == NULL && (s = json_string_value(json_object_get(
		    first, "cuda_home"))) != NULL && s[0] == '/') {
			home = s;
			from = "CUDA_HOME";
		}
		if (home == NULL) {
			home = ENVCTL_GPUFACTS_CUDA;
			from = "default";
		}
		json_object_set_new(reply, "cuda", gather_cuda(&g, home,
		    from));
	} else
		json_object_set_new(reply, "cuda", json_null());
	json_object_set(reply, "interpreters", interps);
out:
	json_decref(gpu);
	json_decref(interps);
	json_decref(first);
	free(names);
	policy_release(&g.pol);
	return r;
}
