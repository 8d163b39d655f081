/* gpuhost.c - GPU programs and files, read and run (see gpuhost.h). */
#include "gpuhost.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

void
gpuhost_init(struct gpuhost *g, const struct agent_ctx *ctx,
    struct policy *pol, int timeout_ms)
{
	memset(g, 0, sizeof(*g));
	g->ctx = ctx;
	g->pol = pol;
	g->deadline = deadline_now_ms() + timeout_ms;
	g->root = "";
#ifdef ENVCTL_FAULTS
	/* The test-only build (never shipped) reads planted files. */
	if (getenv("ENVCTL_TEST_GPU_ROOT") != NULL)
		g->root = getenv("ENVCTL_TEST_GPU_ROOT");
#endif
}

char *
gpuhost_rooted(const struct gpuhost *g, const char *path)
{
	return xasprintf("%s%s", g->root, path);
}

/* A run's share: what is left, at most RUN_MS; 0 when too little. */
static int
run_ms(const struct gpuhost *g)
{
	int left = deadline_left_ms(g->deadline, deadline_now_ms());

	if (left < ENVCTL_GPUFACTS_MIN_RUN_MS)
		return 0;
	return left < ENVCTL_GPUFACTS_RUN_MS ? left : ENVCTL_GPUFACTS_RUN_MS;
}

int
gpuhost_run(struct gpuhost *g, char *const argv[], const char *name,
    struct buf *out, struct err *err)
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

int
gpuhost_read(struct gpuhost *g, struct buf *b, const char *path,
    int *missing, struct err *err)
{
	struct err e = ENVCTL_ERR_INIT;
	int r;

	*missing = 0;
	if ((r = policy_program(g->pol, path, err)) != 0)
		return r;
	buf_init(b, ENVCTL_GPUFACTS_FILE_MAX);
	if ((r = buf_read_file(b, path, &e)) != 0) {
		if (e.cause == ENOENT || e.cause == ENOTDIR) {
			*missing = 1;
			r = 0;
		} else
			err_move(err, &e);
		buf_release(b);
	}
	err_release(&e);
	return r;
}

void
gpuhost_note(json_t *errs, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;

	err_format(err, &b);
	json_array_append_new(errs, proto_text(b.data, b.len));
	buf_release(&b);
	err_release(err);
}

int
gpuhost_smi(const struct gpuhost *g, char **out, struct err *err)
{
	static const char *const places[] = { ENVCTL_GPUFACTS_SMI, NULL };
	struct stat st;
	char *p;
	int i, r;

	*out = NULL;
	for (i = 0; places[i] != NULL; i++) {
		p = gpuhost_rooted(g, places[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			if ((r = policy_program(g->pol, p, err)) != 0) {
				free(p);
				return r;
			}
			*out = p;
			return 0;
		}
		free(p);
	}
	return 0;
}

int
gpuhost_smi_header(struct gpuhost *g, const char *smi, json_t **out,
    struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	char *argv[2];
	int r;

	*out = NULL;
	argv[0] = (char *)smi;
	argv[1] = NULL;
	if ((r = gpuhost_run(g, argv, "nvidia-smi", &b, err)) == 0)
		r = gpufacts_smi_header(out, b.data, b.len, err);
	buf_release(&b);
	return r;
}

json_t *
gpuhost_tool(struct gpuhost *g, const char *path, int *missing,
    struct err *err)
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
	if (policy_program(g->pol, path, err) != 0)
		return NULL;
	argv[0] = (char *)path;
	argv[1] = "--version";
	argv[2] = NULL;
	if (gpuhost_run(g, argv, path, &b, err) == 0 &&
	    gpufacts_release(&v, b.data, b.len, err) == 0)
		json_object_set_new(v, "path", proto_text(path,
		    strlen(path)));
	else if (err != NULL)
		err_context(err, "%s --version", path);
	buf_release(&b);
	return v;
}

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

json_t *
gpuhost_toolkit(struct gpuhost *g, const char *home, const char *from)
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
	if (gpuhost_read(g, &b, path, &missing, &e) != 0)
		gpuhost_note(errs, &e);
	else if (!missing) {
		if (gpufacts_version_json(&v, b.data, b.len, &e) != 0) {
			err_context(&e, "%s", path);
			gpuhost_note(errs, &e);
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
	t = gpuhost_tool(g, path, &missing, &e);
	if (t == NULL && !missing)
		gpuhost_note(errs, &e);
	free(path);
	if (t != NULL)
		json_object_set_new(o, "ptxas", t);
	if (v == NULL) {
		path = xasprintf("%s/bin/nvcc", home);
		t = gpuhost_tool(g, path, &missing, &e);
		if (t == NULL && !missing)
			gpuhost_note(errs, &e);
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
