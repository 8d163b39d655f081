/* cudacheck.c - cuda-toolkit and ptxas checks (see cudacheck.h). */
#include "cudacheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "fscheck.h"
#include "gpufacts.h"
#include "gpuhost.h"
#include "ops.h"
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
	/* A privileged agent trusts nothing a user could have written. */
	if (g->ctx != NULL && (g->pol == NULL || !g->pol->privileged))
		c->cache = g->ctx->cache;
}

static void write_kept(struct cudacheck *c);

void
cudacheck_release(struct cudacheck *c)
{
	size_t i;

	if (c->dirty)
		write_kept(c);
	json_decref(c->kept);
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

/*
 * The toolkit's "X.Y" in *version, or the reason it has none; *ran is the
 * program that told it (bin/nvcc or bin/ptxas, the caller frees it), or
 * NULL when a file did (version.json, dist-info).
 */
static char *
toolkit_version(struct cudacheck *c, const char *path, char **version,
    char **ran)
{
	json_t *t = gpuhost_toolkit(c->g, path, "check"), *errs;
	const char *v, *first, *source;
	char *reason = NULL;

	*version = NULL;
	*ran = NULL;
	errs = json_object_get(t, "errors");
	source = json_string_value(json_object_get(t, "source"));
	if (source != NULL && (strcmp(source, "nvcc") == 0 ||
	    strcmp(source, "ptxas") == 0))
		*ran = xasprintf("%s/bin/%s", path, source);
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

/* ---- the answers kept in the agent's cache ---- */

/*
 * What the file at path is now, following links as a run or a read does:
 * [dev, ino, size, mtime s, ns, ctime s, ns, mode, uid, gid]; JSON null
 * when it is absent; NULL when it cannot be told (an error other than
 * absence).
 */
static json_t *
identity(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? json_null() :
		    NULL;
	return json_pack("[I,I,I,I,I,I,I,I,I,I]", (json_int_t)st.st_dev,
	    (json_int_t)st.st_ino, (json_int_t)st.st_size,
	    (json_int_t)st.st_mtim.tv_sec, (json_int_t)st.st_mtim.tv_nsec,
	    (json_int_t)st.st_ctim.tv_sec, (json_int_t)st.st_ctim.tv_nsec,
	    (json_int_t)st.st_mode, (json_int_t)st.st_uid,
	    (json_int_t)st.st_gid);
}

/*
 * The files the version of path depends on, with their identities:
 * [[PATH, ID], ...]; NULL when one cannot be told.  A ptxas is its own
 * file; a toolkit's version comes from version.json, else dist-info/'s
 * names, else bin/nvcc, else bin/ptxas (gpuhost_toolkit()), so all four
 * count, present or absent.
 */
static json_t *
dependencies(int ptxas, const char *path)
{
	static const char *const toolkit[] = { "version.json", "dist-info",
		"bin/nvcc", "bin/ptxas", NULL };
	json_t *a = json_array(), *id;
	char *p;
	size_t i;

	for (i = 0; ptxas ? i < 1 : toolkit[i] != NULL; i++) {
		p = ptxas ? xstrdup(path) : xasprintf("%s/%s", path,
		    toolkit[i]);
		id = identity(p);
		if (id != NULL)
			json_array_append_new(a, json_pack("[s,o]", p, id));
		free(p);
		if (id == NULL) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * A file changed within CUDACHECK_RACY_S of when its identity was taken
 * (seen): a change made after that in the same timestamp tick (or second,
 * on a coarse file system) would not show, so that identity does not
 * vouch for the content yet.  ctime is what counts: nobody can set it
 * back.
 */
static int
racy(const json_t *deps, time_t seen)
{
	const json_t *d, *id;
	size_t i;

	json_array_foreach(deps, i, d) {
		id = json_array_get(d, 1);
		if (json_is_array(id) && json_integer_value(json_array_get(id,
		    5)) >= (json_int_t)seen - CUDACHECK_RACY_S)
			return 1;
	}
	return 0;
}

/* path is an ELF file: its answer is its own, not that of a file it reads. */
static int
is_elf(const char *path)
{
	unsigned char m[4];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1)
		return 0;
	while ((n = read(fd, m, sizeof(m))) == -1 && errno == EINTR)
		;
	close(fd);
	return n == (ssize_t)sizeof(m) && memcmp(m, "\177ELF", 4) == 0;
}

/* path can be a JSON string: not every file name can. */
static int
utf8(const char *path)
{
	json_t *j = json_string(path);
	int ok = j != NULL;

	json_decref(j);
	return ok;
}

/* Reads the cache's answers once per request; an unusable file: none. */
static void
read_kept(struct cudacheck *c)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *o = NULL, *a;

	if (c->kept != NULL)
		return;
	c->kept = json_array();
	if (cache_data_read(c->cache, CUDACHECK_DATA, &b,
	    CUDACHECK_DATA_MAX) == 0 &&
	    (o = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES,
	    NULL)) != NULL &&
	    json_integer_value(json_object_get(o, "format")) == 1 &&
	    json_is_array(a = json_object_get(o, "answers")))
		json_array_extend(c->kept, a);
	json_decref(o);
	buf_release(&b);
}

/* Writes the answers back, the oldest left out until they fit. */
static void
write_kept(struct cudacheck *c)
{
	json_t *o = json_pack("{s:i,s:O}", "format", 1, "answers", c->kept);
	char *s;

	while ((s = json_dumps(o, JSON_COMPACT)) != NULL &&
	    strlen(s) > CUDACHECK_DATA_MAX &&
	    json_array_size(c->kept) > 0) {
		free(s);
		json_array_remove(c->kept, 0);
	}
	if (s != NULL && strlen(s) <= CUDACHECK_DATA_MAX)
		cache_data_write(c->cache, CUDACHECK_DATA, s, strlen(s));
	free(s);
	json_decref(o);
	c->dirty = 0;
}

/* The kept answer of kind and path, when made from deps as they are. */
static const char *
kept_version(const struct cudacheck *c, const char *kind, const char *path,
    const json_t *deps)
{
	const json_t *e;
	const char *k, *p;
	size_t i;

	json_array_foreach(c->kept, i, e) {
		k = json_string_value(json_object_get(e, "kind"));
		p = json_string_value(json_object_get(e, "path"));
		if (k != NULL && p != NULL && strcmp(k, kind) == 0 &&
		    strcmp(p, path) == 0)
			return json_equal(json_object_get(e, "files"), deps) ?
			    json_string_value(json_object_get(e, "version")) :
			    NULL;
	}
	return NULL;
}

/*
 * Keeps version for kind and path, learnt with deps as they were at time
 * seen: when they are still the same, old enough, and ran (the program
 * that told it, or NULL) is an ELF file.  The oldest answers make room.
 */
static void
keep(struct cudacheck *c, const char *kind, const char *path, json_t *deps,
    time_t seen, const char *version, const char *ran, int ptxas)
{
	json_t *now = dependencies(ptxas, path), *e;
	const char *k, *p;
	size_t i;
	int same = now != NULL && json_equal(now, deps);

	json_decref(now);
	if (!same || racy(deps, seen) || (ran != NULL && !is_elf(ran)))
		return;
	for (i = 0; i < json_array_size(c->kept); ) {
		e = json_array_get(c->kept, i);
		k = json_string_value(json_object_get(e, "kind"));
		p = json_string_value(json_object_get(e, "path"));
		if (k == NULL || p == NULL || (strcmp(k, kind) == 0 &&
		    strcmp(p, path) == 0))
			json_array_remove(c->kept, i);
		else
			i++;
	}
	while (json_array_size(c->kept) >= CUDACHECK_KEEP)
		json_array_remove(c->kept, 0);
	json_array_append_new(c->kept, json_pack("{s:s,s:s,s:O,s:s}", "kind",
	    kind, "path", path, "files", deps, "version", version));
	c->dirty = 1;
}

/*
 * The version of the ptxas or toolkit at path, or why there is none:
 * learnt once per request (TRITON_PTXAS_PATH and
 * TRITON_PTXAS_BLACKWELL_PATH name the same ptxas), then copied; from
 * the agent's cache when nothing it depends on changed.
 */
static void
learn_version(struct cudacheck *c, int ptxas, const char *path,
    char **version, char **reason)
{
	const char *kind = ptxas ? "ptxas" : "cuda-toolkit", *v;
	struct cudacheck_seen *s;
	json_t *deps = NULL;
	char *ran = NULL;
	time_t seen = time(NULL);
	size_t i;

	for (i = 0; i < c->nseen; i++) {
		s = &c->seen[i];
		if (s->ptxas == ptxas && strcmp(s->path, path) == 0) {
			*version = s->version ? xstrdup(s->version) : NULL;
			*reason = s->reason ? xstrdup(s->reason) : NULL;
			return;
		}
	}
	if (c->cache != NULL && strlen(path) <= CUDACHECK_PATH_MAX &&
	    utf8(path) && (deps = dependencies(ptxas, path)) != NULL) {
		read_kept(c);
		if ((v = kept_version(c, kind, path, deps)) != NULL) {
			*version = xstrdup(v);
			*reason = NULL;
			goto seen;
		}
	}
	if (ptxas) {
		*reason = ptxas_version(c, path, version);
		ran = xstrdup(path);
	} else
		*reason = toolkit_version(c, path, version, &ran);
	if (deps != NULL && *version != NULL && *reason == NULL)
		keep(c, kind, path, deps, seen, *version, ran, ptxas);
seen:
	json_decref(deps);
	free(ran);
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
