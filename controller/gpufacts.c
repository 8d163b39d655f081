/* gpufacts.c - GPU host facts on the controller (see gpufacts.h). */
#include "controller/gpufacts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "common/xmalloc.h"

/* What a member must be. */
enum ftype {
	T_S,		/* string */
	T_SN,		/* string or null */
	T_B,		/* true or false */
	T_I,		/* integer, 0 or more */
	T_IN,		/* integer, 0 or more, or null */
	T_OBJ,		/* object of sub's members */
	T_OBJN,		/* that, or null */
	T_ARR,		/* array of objects of sub's members */
	T_STRS,		/* array of strings */
	T_MAP,		/* object of strings */
};

struct field {
	const char		*key;
	enum ftype		 type;
	const struct field	*sub;
};

static const struct field f_driver[] = {
	{ "version", T_S, NULL }, { "flavor", T_S, NULL }, { NULL, 0, NULL } };
static const struct field f_gpus[] = {
	{ "index", T_I, NULL }, { "name", T_S, NULL },
	{ "compute_cap", T_SN, NULL }, { "bus_id", T_S, NULL },
	{ "memory_mib", T_IN, NULL }, { NULL, 0, NULL } };
static const struct field f_pairs[] = {
	{ "a", T_I, NULL }, { "b", T_I, NULL }, { "link", T_S, NULL },
	{ "level", T_S, NULL }, { NULL, 0, NULL } };
static const struct field f_topo[] = {
	{ "gpus", T_I, NULL }, { "pairs", T_ARR, f_pairs },
	{ "nvlink", T_B, NULL }, { "worst_pcie", T_SN, NULL },
	{ NULL, 0, NULL } };
static const struct field f_iommu[] = {
	{ "mode", T_S, NULL }, { "args", T_MAP, NULL }, { NULL, 0, NULL } };
static const struct field f_gpu[] = {
	{ "driver", T_OBJN, f_driver }, { "nvidia_smi", T_SN, NULL },
	{ "driver_cuda", T_SN, NULL }, { "gpus", T_ARR, f_gpus },
	{ "topology", T_OBJN, f_topo }, { "iommu", T_OBJN, f_iommu },
	{ "errors", T_STRS, NULL }, { NULL, 0, NULL } };
static const struct field f_tool[] = {
	{ "path", T_S, NULL }, { "version", T_S, NULL },
	{ "full", T_SN, NULL }, { NULL, 0, NULL } };
static const struct field f_cuda[] = {
	{ "home", T_S, NULL }, { "from", T_S, NULL }, { "exists", T_B, NULL },
	{ "version", T_SN, NULL }, { "full", T_SN, NULL },
	{ "source", T_SN, NULL }, { "ptxas", T_OBJN, f_tool },
	{ "errors", T_STRS, NULL }, { NULL, 0, NULL } };
static const struct field f_tried[] = {
	{ "path", T_S, NULL }, { "error", T_S, NULL }, { NULL, 0, NULL } };
static const struct field f_triton[] = {
	{ "version", T_SN, NULL }, { "dir", T_SN, NULL },
	{ "tool", T_S, NULL }, { "variable", T_S, NULL },
	{ "value", T_SN, NULL }, { "bundled", T_SN, NULL },
	{ "ptxas", T_OBJN, f_tool }, { "fallback", T_B, NULL },
	{ "tried", T_ARR, f_tried }, { NULL, 0, NULL } };
static const struct field f_nccl[] = {
	{ "path", T_S, NULL }, { "how", T_S, NULL }, { "wheel", T_SN, NULL },
	{ "version", T_SN, NULL }, { "error", T_SN, NULL },
	{ NULL, 0, NULL } };
static const struct field f_interp[] = {
	{ "interpreter", T_S, NULL }, { "executable", T_SN, NULL },
	{ "python", T_SN, NULL }, { "error", T_SN, NULL },
	{ "triton", T_OBJN, f_triton }, { "nccl", T_OBJN, f_nccl },
	{ NULL, 0, NULL } };
static const struct field f_reply[] = {
	{ "facts", T_STRS, NULL }, { "gpu", T_OBJN, f_gpu }, { "cuda", T_OBJN, f_cuda },
	{ "arch", T_IN, NULL }, { "interpreters", T_ARR, f_interp },
	{ NULL, 0, NULL } };

static const char *const var_names[] = {
	"envctl_gpu_count", "envctl_gpu_name", "envctl_gpu_compute_cap",
	"envctl_gpu_arch", "envctl_gpu_nvlink", "envctl_gpu_pcie_level",
	"envctl_driver_version", "envctl_driver_cuda", "envctl_iommu",
	"envctl_cuda_version", "envctl_ptxas_version", "envctl_nccl_version",
	"envctl_triton_version", "envctl_triton_ptxas",
};
#define NVARS	(sizeof(var_names) / sizeof(var_names[0]))

struct gpufacts {
	json_t	*reply;		/* checked, a copy */
	char	*vars[NVARS];	/* NULL: undefined */
};

/* ---- request ---- */

json_t *
gpufacts_request(json_int_t id, unsigned facts, const char *const *interps,
    size_t n, const char *cuda_home, int timeout_ms)
{
	static const char *const names[] = { "gpu", "cuda", "nccl",
	    "triton" };
	json_t *req, *f = json_array(), *a;
	size_t i;

	for (i = 0; i < 4; i++)
		if (facts & (1u << i))
			json_array_append_new(f, json_string(names[i]));
	req = json_pack("{s:s,s:I,s:o,s:i}", "op", "gpufacts", "id", id,
	    "facts", f, "timeout_ms", timeout_ms);
	json_object_set_new(req, "cuda_home", cuda_home != NULL ?
	    json_string(cuda_home) : json_null());
	if (n > 0) {
		a = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(a, json_string(interps[i]));
		json_object_set_new(req, "interpreters", a);
	}
	return req;
}

int
gpufacts_fact(const char *name)
{
	static const char *const names[] = { "gpu", "cuda", "nccl",
	    "triton", NULL };
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(name, names[i]) == 0)
			return 1 << i;
	return -1;
}

/* ---- checking ---- */

static int
bad(struct err *err, const struct buf *path, const char *want)
{
	return err_set(err, ENVCTL_EPARSE, "gpufacts reply: '%s' must be %s",
	    path->data, want);
}

static int
str_ok(const json_t *v)
{
	return json_is_string(v) &&
	    json_string_length(v) <= ENVCTL_GPUFACTS_STR_MAX;
}

static int	check(const json_t *o, const struct field *f, struct buf *path,
		    struct err *err);

static int
check_one(const json_t *v, const struct field *f, struct buf *path,
    struct err *err)
{
	const json_t *x;
	const char *k;
	size_t i, len = path->len;
	int r = 0;

	switch (f->type) {
	case T_S:
		return str_ok(v) ? 0 : bad(err, path, "a string");
	case T_SN:
		return json_is_null(v) || str_ok(v) ? 0 :
		    bad(err, path, "a string or null");
	case T_B:
		return json_is_boolean(v) ? 0 : bad(err, path, "true or false");
	case T_I:
		return json_is_integer(v) && json_integer_value(v) >= 0 ? 0 :
		    bad(err, path, "an integer, 0 or more");
	case T_IN:
		return json_is_null(v) || (json_is_integer(v) &&
		    json_integer_value(v) >= 0) ? 0 :
		    bad(err, path, "an integer, 0 or more, or null");
	case T_OBJN:
		if (json_is_null(v))
			return 0;
		/* FALLTHROUGH */
	case T_OBJ:
		if (!json_is_object(v))
			return bad(err, path, f->type == T_OBJN ?
			    "an object or null" : "an object");
		return check(v, f->sub, path, err);
	case T_ARR:
	case T_STRS:
		if (!json_is_array(v) || json_array_size(v) > 65536)
			return bad(err, path, f->type == T_ARR ?
			    "an array of objects" : "an array of strings");
		json_array_foreach(v, i, x) {
			buf_truncate(path, len);
			buf_addf(path, "[%zu]", i);
			if (f->type == T_STRS && !str_ok(x))
				r = bad(err, path, "a string");
			else if (f->type == T_ARR && !json_is_object(x))
				r = bad(err, path, "an object");
			else if (f->type == T_ARR)
				r = check(x, f->sub, path, err);
			if (r != 0)
				return r;
		}
		buf_truncate(path, len);
		return 0;
	case T_MAP:
		if (!json_is_object(v))
			return bad(err, path, "an object of strings");
		json_object_foreach((json_t *)v, k, x) {
			if (str_ok(x))
				continue;
			buf_addf(path, ".%s", k);
			return bad(err, path, "a string");
		}
		return 0;
	}
	return bad(err, path, "known");
}

static int
check(const json_t *o, const struct field *f, struct buf *path,
    struct err *err)
{
	size_t len = path->len;
	int r;

	for (; f->key != NULL; f++) {
		buf_truncate(path, len);
		buf_addf(path, "%s%s", len > 0 ? "." : "", f->key);
		if ((r = check_one(json_object_get(o, f->key), f, path,
		    err)) != 0)
			return r;
	}
	buf_truncate(path, len);
	return 0;
}

/* The string at a dotted path of o, or NULL. */
static const char *
sget(const json_t *o, const char *a, const char *b, const char *c)
{
	o = json_object_get(o, a);
	if (b != NULL)
		o = json_object_get(o, b);
	if (c != NULL)
		o = json_object_get(o, c);
	return json_string_value(o);
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* The template variables (see var_names[]). */
static void
make_vars(struct gpufacts *gf)
{
	const json_t *gpu = json_object_get(gf->reply, "gpu"), *gpus, *g,
	    *topo, *i0;
	const char *cc, *best = NULL, *name = NULL;
	int maj, min, arch = -1;
	size_t i;

	if (json_is_object(gpu)) {
		gpus = json_object_get(gpu, "gpus");
		gf->vars[0] = xasprintf("%zu", json_array_size(gpus));
		json_array_foreach(gpus, i, g) {
			if (name == NULL)
				name = sget(g, "name", NULL, NULL);
			cc = sget(g, "compute_cap", NULL, NULL);
			if (cc != NULL && sscanf(cc, "%d.%d", &maj, &min) ==
			    2 && maj >= 0 && maj < 100 && min >= 0 &&
			    min < 10 && maj * 10 + min > arch) {
				arch = maj * 10 + min;
				best = cc;
			}
		}
		gf->vars[1] = dup_or_null(name);
		gf->vars[2] = dup_or_null(best);
		gf->vars[3] = arch >= 0 ? xasprintf("sm_%d", arch) : NULL;
		topo = json_object_get(gpu, "topology");
		if (json_is_object(topo)) {
			gf->vars[4] = xstrdup(json_is_true(json_object_get(
			    topo, "nvlink")) ? "true" : "false");
			gf->vars[5] = dup_or_null(sget(topo, "worst_pcie",
			    NULL, NULL));
		}
		gf->vars[6] = dup_or_null(sget(gpu, "driver", "version",
		    NULL));
		gf->vars[7] = dup_or_null(sget(gpu, "driver_cuda", NULL,
		    NULL));
		gf->vars[8] = dup_or_null(sget(gpu, "iommu", "mode", NULL));
	}
	gf->vars[9] = dup_or_null(sget(gf->reply, "cuda", "version", NULL));
	gf->vars[10] = dup_or_null(sget(gf->reply, "cuda", "ptxas",
	    "version"));
	i0 = json_array_get(json_object_get(gf->reply, "interpreters"), 0);
	gf->vars[11] = dup_or_null(sget(i0, "nccl", "version", NULL));
	gf->vars[12] = dup_or_null(sget(i0, "triton", "version", NULL));
	gf->vars[13] = dup_or_null(sget(i0, "triton", "ptxas", "path"));
}

int
gpufacts_parse(struct gpufacts **out, const json_t *reply, struct err *err)
{
	struct buf path = ENVCTL_BUF_INIT;
	struct gpufacts *gf;
	const json_t *x;
	size_t i;
	int r;

	*out = NULL;
	if (!json_is_object(reply))
		return err_set(err, ENVCTL_EPARSE, "gpufacts reply: not an "
		    "object");
	if ((r = proto_reply_error(reply, err)) != 0)
		return r;
	r = check(reply, f_reply, &path, err);
	buf_release(&path);
	if (r != 0)
		return r;
	json_array_foreach(json_object_get(reply, "facts"), i, x)
		if (gpufacts_fact(json_string_value(x)) < 0)
			return err_set(err, ENVCTL_EPARSE, "gpufacts reply: "
			    "'facts[%zu]' must be one of gpu, cuda, nccl, "
			    "triton", i);
	gf = xcalloc(1, sizeof(*gf));
	gf->reply = json_deep_copy(reply);
	json_object_del(gf->reply, "id");
	json_object_del(gf->reply, "ok");
	make_vars(gf);
	*out = gf;
	return 0;
}

void
gpufacts_free(struct gpufacts *gf)
{
	size_t i;

	if (gf == NULL)
		return;
	for (i = 0; i < NVARS; i++)
		free(gf->vars[i]);
	json_decref(gf->reply);
	free(gf);
}

/* ---- output ---- */

static void
errors_text(struct buf *out, struct vis *v, const json_t *errs,
    const char *indent)
{
	const json_t *e;
	size_t i;

	json_array_foreach(errs, i, e)
		buf_addf(out, "%s  could not learn: %s\n", indent,
		    vis_str(v, json_string_value(e)));
}

static void
tool_text(struct buf *out, struct vis *v, const json_t *t)
{
	const char *full = sget(t, "full", NULL, NULL);

	buf_addf(out, "%s (release %s%s%s)", vis_str(v, sget(t, "path", NULL,
	    NULL)), vis_str(v, sget(t, "version", NULL, NULL)),
	    full != NULL ? ", V" : "", full != NULL ? vis_str(v, full) : "");
}

static void
gpu_text(struct buf *out, struct vis *v, const json_t *gpu,
    const char *ind)
{
	const json_t *gpus = json_object_get(gpu, "gpus"), *g, *topo, *p,
	    *args, *x;
	const char *s, *k;
	size_t i, n = json_array_size(gpus);
	int maj, min;

	s = sget(gpu, "driver", "version", NULL);
	buf_addf(out, "%sgpu: ", ind);
	if (s == NULL && n == 0 && sget(gpu, "nvidia_smi", NULL, NULL) ==
	    NULL)
		buf_addstr(out, "none (no NVIDIA driver, no nvidia-smi)\n");
	else {
		buf_addf(out, "driver %s", s != NULL ? vis_str(v, s) :
		    "unknown");
		if (s != NULL)
			buf_addf(out, " (%s module)", vis_str(v, sget(gpu,
			    "driver", "flavor", NULL)));
		s = sget(gpu, "driver_cuda", NULL, NULL);
		buf_addf(out, ", supports CUDA %s, %zu GPU%s\n",
		    s != NULL ? vis_str(v, s) : "unknown", n,
		    n == 1 ? "" : "s");
	}
	json_array_foreach(gpus, i, g) {
		s = sget(g, "compute_cap", NULL, NULL);
		buf_addf(out, "%s  GPU%d: %s, compute capability %s",
		    ind, (int)json_integer_value(json_object_get(g, "index")),
		    vis_str(v, sget(g, "name", NULL, NULL)),
		    s != NULL ? vis_str(v, s) : "unknown");
		/* Triton's and nvcc's name for it: 12.0 is sm_120. */
		if (s != NULL && sscanf(s, "%d.%d", &maj, &min) == 2 &&
		    maj >= 0 && maj < 100 && min >= 0 && min < 10)
			buf_addf(out, " (sm_%d)", maj * 10 + min);
		buf_addf(out, ", %s", vis_str(v, sget(g, "bus_id", NULL,
		    NULL)));
		x = json_object_get(g, "memory_mib");
		if (json_is_integer(x))
			buf_addf(out, ", %" JSON_INTEGER_FORMAT " MiB",
			    json_integer_value(x));
		buf_addch(out, '\n');
	}
	topo = json_object_get(gpu, "topology");
	if (json_is_object(topo)) {
		s = sget(topo, "worst_pcie", NULL, NULL);
		buf_addf(out, "%s  topology: NVLink %s, worst PCIe path %s\n",
		    ind, json_is_true(json_object_get(topo, "nvlink")) ?
		    "yes" : "no", s != NULL ? vis_str(v, s) : "none");
		json_array_foreach(json_object_get(topo, "pairs"), i, p)
			buf_addf(out, "%s    GPU%d-GPU%d: %s (%s)\n", ind,
			    (int)json_integer_value(json_object_get(p, "a")),
			    (int)json_integer_value(json_object_get(p, "b")),
			    vis_str(v, sget(p, "link", NULL, NULL)),
			    vis_str(v, sget(p, "level", NULL, NULL)));
	}
	if (json_is_object(json_object_get(gpu, "iommu"))) {
		buf_addf(out, "%s  iommu: %s", ind, vis_str(v, sget(gpu,
		    "iommu", "mode", NULL)));
		args = json_object_get(json_object_get(gpu, "iommu"), "args");
		json_object_foreach((json_t *)args, k, x)
			buf_addf(out, " %s=%s", vis_str(v, k), vis_str(v,
			    json_string_value(x)));
		buf_addch(out, '\n');
	}
	errors_text(out, v, json_object_get(gpu, "errors"), ind);
}

static void
cuda_text(struct buf *out, struct vis *v, const json_t *c, const char *ind)
{
	const char *s = sget(c, "version", NULL, NULL);

	buf_addf(out, "%scuda: %s (%s)", ind, vis_str(v, sget(c, "home", NULL,
	    NULL)), vis_str(v, sget(c, "from", NULL, NULL)));
	if (!json_is_true(json_object_get(c, "exists")))
		buf_addstr(out, ": no such directory");
	else if (s != NULL)
		buf_addf(out, ": %s, from %s", vis_str(v, sget(c, "full",
		    NULL, NULL) != NULL ? sget(c, "full", NULL, NULL) : s),
		    vis_str(v, sget(c, "source", NULL, NULL)));
	else
		buf_addstr(out, ": version unknown");
	buf_addch(out, '\n');
	if (json_is_object(json_object_get(c, "ptxas"))) {
		buf_addf(out, "%s  ptxas: ", ind);
		tool_text(out, v, json_object_get(c, "ptxas"));
		buf_addch(out, '\n');
	}
	errors_text(out, v, json_object_get(c, "errors"), ind);
}

/* 1 when facts (the reply's) names fact name. */
static int
asked(const json_t *facts, const char *name)
{
	const json_t *x;
	size_t i;

	json_array_foreach(facts, i, x)
		if (strcmp(json_string_value(x), name) == 0)
			return 1;
	return 0;
}

static void
interp_text(struct buf *out, struct vis *v, const json_t *it,
    const json_t *facts, const char *ind)
{
	const json_t *t = json_object_get(it, "triton"),
	    *n = json_object_get(it, "nccl"), *x;
	const char *s;
	size_t i;

	buf_addf(out, "%s%s", ind, vis_str(v, sget(it, "interpreter", NULL,
	    NULL)));
	if ((s = sget(it, "executable", NULL, NULL)) != NULL)
		buf_addf(out, " (%s, Python %s)", vis_str(v, s),
		    vis_str(v, sget(it, "python", NULL, NULL)));
	if ((s = sget(it, "error", NULL, NULL)) != NULL) {
		buf_addf(out, ": %s\n", vis_str(v, s));
		return;
	}
	buf_addstr(out, ":\n");
	if (json_is_object(t)) {
		s = sget(t, "version", NULL, NULL);
		buf_addf(out, "%s  triton %s: %s ", ind, s != NULL ?
		    vis_str(v, s) : "(no version)", vis_str(v, sget(t,
		    "tool", NULL, NULL)));
		if (json_is_object(json_object_get(t, "ptxas")))
			tool_text(out, v, json_object_get(t, "ptxas"));
		else
			buf_addstr(out, "none that works");
		s = sget(t, "value", NULL, NULL);
		buf_addf(out, "; %s %s%s%s\n", vis_str(v, sget(t, "variable",
		    NULL, NULL)), s != NULL ? "= " : "unset",
		    s != NULL ? vis_str(v, s) : "",
		    json_is_true(json_object_get(t, "fallback")) ?
		    " (fails: Triton falls back to its own)" : "");
		json_array_foreach(json_object_get(t, "tried"), i, x)
			buf_addf(out, "%s    passed over %s: %s\n", ind,
			    vis_str(v, sget(x, "path", NULL, NULL)),
			    vis_str(v, sget(x, "error", NULL, NULL)));
	} else if (asked(facts, "triton"))
		buf_addf(out, "%s  triton: not installed\n", ind);
	if (json_is_object(n)) {
		s = sget(n, "version", NULL, NULL);
		buf_addf(out, "%s  nccl %s: %s (%s", ind, s != NULL ?
		    vis_str(v, s) : "(version unknown)", vis_str(v, sget(n,
		    "path", NULL, NULL)), vis_str(v, sget(n, "how", NULL,
		    NULL)));
		if ((s = sget(n, "wheel", NULL, NULL)) != NULL)
			buf_addf(out, ", %s", vis_str(v, s));
		buf_addstr(out, ")\n");
		if ((s = sget(n, "error", NULL, NULL)) != NULL)
			buf_addf(out, "%s    could not learn: %s\n", ind,
			    vis_str(v, s));
	} else if (asked(facts, "nccl"))
		buf_addf(out, "%s  nccl: no nvidia-nccl wheel\n", ind);
}

void
gpufacts_text(struct buf *out, const struct gpufacts *gf,
    const char *indent)
{
	struct vis v = ENVCTL_VIS_INIT;
	const json_t *x;
	size_t i;

	if (json_is_object(x = json_object_get(gf->reply, "gpu")))
		gpu_text(out, &v, x, indent);
	if (json_is_object(x = json_object_get(gf->reply, "cuda")))
		cuda_text(out, &v, x, indent);
	json_array_foreach(json_object_get(gf->reply, "interpreters"), i, x)
		interp_text(out, &v, x, json_object_get(gf->reply, "facts"),
		    indent);
	vis_release(&v);
}

json_t *
gpufacts_json(const struct gpufacts *gf)
{
	json_t *o = json_deep_copy(gf->reply), *vars = json_object();
	size_t i;

	for (i = 0; i < NVARS; i++)
		json_object_set_new(vars, var_names[i], gf->vars[i] != NULL ?
		    json_string(gf->vars[i]) : json_null());
	json_object_set_new(o, "vars", vars);
	return o;
}

size_t
gpufacts_nvars(void)
{
	return NVARS;
}

const char *
gpufacts_var(const struct gpufacts *gf, size_t i, const char **name)
{
	*name = i < NVARS ? var_names[i] : NULL;
	return i < NVARS ? gf->vars[i] : NULL;
}
