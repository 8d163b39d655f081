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
#include "gpuhost.h"
#include "ops.h"
#include "policy.h"
#include "probe.h"
#include "request.h"

/* The script (agent/py/gpufacts.py), as gpufacts_py[]. */
#include "agent/py/gpufacts.py.h"

#define MARKER		"\n--envctl-gpufacts-v1--\n"
#define CHUNK		(1024u * 1024)

enum { F_GPU = 1, F_CUDA = 2, F_NCCL = 4, F_TRITON = 8 };

/* ---- gpu ---- */

static json_t *
gather_gpu(struct gpuhost *g)
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
	path = gpuhost_rooted(g, ENVCTL_GPUFACTS_DRIVER);
	if (gpuhost_read(g, &b, path, &missing, &e) != 0)
		gpuhost_note(errs, &e);
	else if (!missing) {
		if (gpufacts_driver(&v, b.data, b.len, &e) == 0)
			json_object_set_new(o, "driver", v);
		else {
			err_context(&e, "%s", ENVCTL_GPUFACTS_DRIVER);
			gpuhost_note(errs, &e);
		}
		buf_release(&b);
	}
	free(path);

	path = gpuhost_rooted(g, ENVCTL_GPUFACTS_CMDLINE);
	if (gpuhost_read(g, &b, path, &missing, &e) != 0)
		gpuhost_note(errs, &e);
	else if (!missing) {
		json_object_set_new(o, "iommu", gpufacts_iommu(b.data,
		    b.len));
		buf_release(&b);
	}
	free(path);
	if (json_object_get(o, "iommu") == NULL)
		json_object_set_new(o, "iommu", json_null());

	if (gpuhost_smi(g, &smi, &e) != 0) {
		gpuhost_note(errs, &e);
		goto out;
	}
	if (smi == NULL)
		goto out;
	json_object_set_new(o, "nvidia_smi", proto_text(smi, strlen(smi)));
	argv[0] = smi;
	if (gpuhost_smi_header(g, smi, &v, &e) != 0)
		gpuhost_note(errs, &e);
	else {
		json_object_set(o, "driver_cuda", json_object_get(v, "cuda"));
		json_decref(v);
	}
	argv[1] = (char *)query;
	argv[2] = "--format=csv,noheader";
	argv[3] = NULL;
	buf_init(&b, 0);
	if (gpuhost_run(g, argv, "nvidia-smi --query-gpu", &b, &e) != 0 ||
	    gpufacts_smi_query(&v, b.data, b.len, &e) != 0)
		gpuhost_note(errs, &e);
	else
		json_object_set_new(o, "gpus", v);
	buf_release(&b);
	argv[1] = "topo";
	argv[2] = "-m";
	argv[3] = NULL;
	buf_init(&b, 0);
	if (gpuhost_run(g, argv, "nvidia-smi topo -m", &b, &e) != 0 ||
	    gpufacts_topo(&v, b.data, b.len, &e) != 0)
		gpuhost_note(errs, &e);
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

/* ---- per interpreter ---- */

/* libnccl's "NCCL version X.Y.Z", read from its bytes. */
static int
nccl_version(struct gpuhost *g, char **out, const char *path, struct err *err)
{
	struct stat st;
	char *buf = NULL;
	size_t have = 0, keep, total = 0;
	ssize_t n;
	int fd = -1, r = 0;

	*out = NULL;
	if ((r = policy_program(g->pol, path, err)) != 0)
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
triton_ptxas(struct gpuhost *g, json_t *t)
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
		v = gpuhost_tool(g, cand[i], &missing, &e);
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
gather_interp(struct gpuhost *g, const char *interp, int facts, int arch,
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
	if (policy_interpreter(g->pol, &checked, &e) != 0)
		goto fail;
	snprintf(archs, sizeof(archs), "%d", arch);
	argv[k++] = (char *)checked;
	argv[k++] = "-c";
	k = cache_script_args(argv, k, NULL, "gpufacts", gpufacts_py);
	argv[k++] = arch >= 0 ? archs : "";
	argv[k] = NULL;
	if (gpuhost_run(g, argv, interp, &b, &e) != 0 ||
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
	struct gpuhost g;
	struct policy pol = POLICY_INIT;
	const json_t *iv = json_object_get(req, "interpreters"), *x;
	json_t *gpu = NULL, *interps = json_array(), *o, *rep, *first = NULL;
	json_t *fv;
	const char *home = NULL, *from = "request", *s;
	const char **names = NULL;
	size_t n = 0, i;
	int facts, timeout, arch, r;

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
	if ((r = policy_open(&pol, err)) != 0)
		goto out;
	gpuhost_init(&g, ctx, &pol, timeout);
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
		json_object_set_new(reply, "cuda", gpuhost_toolkit(&g, home,
		    from));
	} else
		json_object_set_new(reply, "cuda", json_null());
	json_object_set(reply, "interpreters", interps);
out:
	json_decref(gpu);
	json_decref(interps);
	json_decref(first);
	free(names);
	policy_release(&pol);
	return r;
}
