/* cudacheck.c - cuda-toolkit and ptxas checks (see cudacheck.h). */
#include "cudacheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "fscheck.h"
#include "gpufacts.h"
#include "gpuhost.h"
#include "policy.h"

int
cudacheck_kind_valid(const char *kind)
{
	return strcmp(kind, "cuda-toolkit") == 0 || strcmp(kind, "ptxas") == 0;
}

void
cudacheck_init(struct cudacheck *c, struct gpuhost *g)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
}

void
cudacheck_release(struct cudacheck *c)
{
	size_t i;

	for (i = 0; i < c->nseen; i++) {
		free(c->seen[i].path);
		free(c->seen[i].version);
		free(c->seen[i].reason);
	}
	free(c->seen);
	free(c->driver);
	free(c->driver_cuda);
	free(c->unchecked);
	memset(c, 0, sizeof(*c));
}

/*
 * NVIDIA's CUDA Toolkit release notes, "CUDA Driver" (Table 3, minor
 * version compatibility): CUDA 13.x needs R580, 12.x R525, 11.x R450.
 */
int
cudacheck_min_driver(int cuda_major)
{
	switch (cuda_major) {
	case 13:
		return 580;
	case 12:
		return 525;
	case 11:
		return 450;
	}
	return 0;
}

/* Asks nvidia-smi's header once: the driver and its CUDA version. */
static void
ask_driver(struct cudacheck *c)
{
	struct err e = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	json_t *h = NULL;
	const char *s;
	char *smi = NULL;

	if (c->asked)
		return;
	c->asked = 1;
	if (gpuhost_smi(c->g, &smi, &e) != 0 ||
	    (smi != NULL && gpuhost_smi_header(c->g, smi, &h, &e) != 0)) {
		err_format(&e, &b);
		b.data[strcspn(b.data, "\n")] = '\0';
		c->unchecked = xasprintf("not checked against the driver: %s",
		    b.data);
		goto out;
	}
	if (smi == NULL) {
		c->unchecked = xstrdup("not checked against the driver: no "
		    "nvidia-smi (no driver)");
		goto out;
	}
	if ((s = json_string_value(json_object_get(h, "driver"))) != NULL)
		c->driver = xstrdup(s);
	if ((s = json_string_value(json_object_get(h, "cuda"))) != NULL)
		c->driver_cuda = xstrdup(s);
	else
		c->unchecked = xstrdup("not checked against the driver: "
		    "nvidia-smi tells no CUDA version");
out:
	json_decref(h);
	free(smi);
	buf_release(&b);
	err_release(&e);
}

/* "X.Y..." as X * 1000 + Y; -1 when it is not that. */
static int
version_num(const char *v, int *major)
{
	int maj, min, n = 0;

	if (v == NULL || sscanf(v, "%d.%d%n", &maj, &min, &n) != 2 ||
	    n == 0 || maj < 0 || maj > 999 || min < 0 || min > 999)
		return -1;
	if (major != NULL)
		*major = maj;
	return maj * 1000 + min;
}

/* The reason a version fails, or NULL (caller frees). */
static char *
judge(struct cudacheck *c, const char *what, const char *version,
    int want)
{
	int maj, have, drv, need, dmaj = 0;

	if ((have = version_num(version, &maj)) < 0)
		return xasprintf("has no version this check can read ('%s')",
		    version);
	if (want > 0 && maj != want)
		return xasprintf("is %s %s, want %d", what, version, want);
	if (c->driver_cuda == NULL ||
	    (drv = version_num(c->driver_cuda, NULL)) < 0 || have <= drv)
		return NULL;
	need = cudacheck_min_driver(maj);
	if (c->driver == NULL)
		return xasprintf("is %s %s but the driver supports %s", what,
		    version, c->driver_cuda);
	if (need > 0 && sscanf(c->driver, "%d", &dmaj) == 1 && dmaj < need)
		return xasprintf("is %s %s but the driver supports %s "
		    "(driver %s; CUDA %d needs %d or later)", what, version,
		    c->driver_cuda, c->driver, maj, need);
	return xasprintf("is %s %s but the driver supports %s (driver %s)",
	    what, version, c->driver_cuda, c->driver);
}

/* ptxas --version's "X.Y" in *version, or the reason it has none. */
static char *
ptxas_version(struct cudacheck *c, const char *path, char **version)
{
	struct err e = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT, m = ENVCTL_BUF_INIT;
	char *argv[3], *reason = NULL;
	json_t *v = NULL;

	*version = NULL;
	argv[0] = (char *)path;
	argv[1] = "--version";
	argv[2] = NULL;
	if (policy_program(c->g->pol, path, &e) != 0) {
		err_format(&e, &m);
		reason = xasprintf("is not run: %s", m.data);
		goto out;
	}
	if (gpuhost_run(c->g, argv, "its --version", &b, &e) != 0 ||
	    gpufacts_release(&v, b.data, b.len, &e) != 0) {
		err_format(&e, &m);
		reason = xasprintf("reports no release: %s", m.data);
		goto out;
	}
	*version = xstrdup(json_string_value(json_object_get(v, "version")));
out:
	json_decref(v);
	buf_release(&b);
	buf_release(&m);
	err_release(&e);
	return reason;
}

/* The toolkit's "X.Y" in *version, or the reason it has none. */
static char *
toolkit_version(struct cudacheck *c, const char *path, char **version)
{
	json_t *t = gpuhost_toolkit(c->g, path, "check"), *errs;
	const char *v, *first;
	char *reason = NULL;

	*version = NULL;
	errs = json_object_get(t, "errors");
	if ((v = json_string_value(json_object_get(t, "version"))) != NULL)
		*version = xstrdup(v);
	else if ((first = json_string_value(json_array_get(errs, 0))) != NULL)
		reason = xasprintf("is not a CUDA toolkit: %s", first);
	else
		reason = xstrdup("is not a CUDA toolkit (no version.json, "
		    "dist-info, bin/nvcc or bin/ptxas tells its version)");
	json_decref(t);
	return reason;
}

/*
 * The version of the ptxas or toolkit at path, or why there is none:
 * learnt once per request (TRITON_PTXAS_PATH and
 * TRITON_PTXAS_BLACKWELL_PATH name the same ptxas), then copied.
 */
static void
learn_version(struct cudacheck *c, int ptxas, const char *path,
    char **version, char **reason)
{
	struct cudacheck_seen *s;
	size_t i;

	for (i = 0; i < c->nseen; i++) {
		s = &c->seen[i];
		if (s->ptxas == ptxas && strcmp(s->path, path) == 0) {
			*version = s->version ? xstrdup(s->version) : NULL;
			*reason = s->reason ? xstrdup(s->reason) : NULL;
			return;
		}
	}
	*reason = ptxas ? ptxas_version(c, path, version) :
	    toolkit_version(c, path, version);
	c->seen = xreallocarray(c->seen, c->nseen + 1, sizeof(*c->seen));
	s = &c->seen[c->nseen++];
	s->ptxas = ptxas;
	s->path = xstrdup(path);
	s->version = *version ? xstrdup(*version) : NULL;
	s->reason = *reason ? xstrdup(*reason) : NULL;
}

void
cudacheck_run(struct cudacheck *c, json_t *res, const char *kind,
    const char *path, int major)
{
	int ptxas = strcmp(kind, "ptxas") == 0;
	const char *why;
	char *version = NULL, *reason = NULL;

	ask_driver(c);
	if (!fscheck_run(ptxas ? "executable" : "dir", path, &why))
		reason = xstrdup(why);
	else
		learn_version(c, ptxas, path, &version, &reason);
	if (reason == NULL)
		reason = judge(c, ptxas ? "release" : "CUDA", version, major);
	/* err_format() ends each error with a newline: one line here. */
	while (reason != NULL && *reason != '\0' &&
	    reason[strlen(reason) - 1] == '\n')
		reason[strlen(reason) - 1] = '\0';
	json_object_set_new(res, "ok", json_boolean(reason == NULL));
	if (reason == NULL && version != NULL && c->driver_cuda == NULL &&
	    c->unchecked != NULL)
		json_object_set_new(res, "reason", json_string(c->unchecked));
	else
		json_object_set_new(res, "reason", proto_text_or_null(reason));
	json_object_set_new(res, "version", proto_text_or_null(version));
	json_object_set_new(res, "driver_cuda",
	    proto_text_or_null(c->driver_cuda));
	free(version);
	free(reason);
}
