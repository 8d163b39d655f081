/* pykind.c - the kind of an interpreter from its layout (see pykind.h). */
#include "pykind.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/xmalloc.h"

int
pykind_python_name(const char *name)
{
	/* CPython's ABIFLAGS letters, in the order configure adds them. */
	static const char abi[] = "tdmu";
	const char *s, *f;

	if (strncmp(name, "python", 6) != 0)
		return 0;
	s = name + 6;
	if (*s == '\0')
		return 1;
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
	}
	for (f = abi; *s != '\0' && *f != '\0'; f++)
		if (*s == *f)
			s++;
	return *s == '\0';
}

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dirname(path) as a new string ("/" for "/x"). */
static char *
parent(const char *path)
{
	const char *s = strrchr(path, '/');

	if (s == NULL)
		return xstrdup(".");
	if (s == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(s - path), path);
}

char *
pykind_venv_dir(const char *path)
{
	char *d1 = parent(path), *d2 = parent(d1), *cfg, *out = NULL;

	cfg = xasprintf("%s/pyvenv.cfg", d1);
	if (is_file(cfg))
		out = realpath(d1, NULL);
	free(cfg);
	if (out == NULL) {
		cfg = xasprintf("%s/pyvenv.cfg", d2);
		if (is_file(cfg))
			out = realpath(d2, NULL);
		free(cfg);
	}
	free(d1);
	free(d2);
	return out;
}

/* 1 when the pyvenv.cfg in dir has a "uv" key (uv writes "uv = 0.4.1"). */
static int
made_by_uv(const char *dir)
{
	struct buf b;
	char *cfg = xasprintf("%s/pyvenv.cfg", dir);
	const char *s, *e, *k;
	int uv = 0;

	buf_init(&b, ENVCTL_PYKIND_CFG_MAX);
	if (buf_read_file(&b, cfg, NULL) != 0)
		goto out;
	for (s = b.data; s < b.data + b.len && !uv; s = e + 1) {
		if ((e = memchr(s, '\n', (size_t)(b.data + b.len - s))) ==
		    NULL)
			e = b.data + b.len;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		for (k = s; k < e && *k != '=' && *k != ' ' && *k != '\t';
		    k++)
			;
		if (k - s != 2 || strncasecmp(s, "uv", 2) != 0)
			continue;
		while (k < e && (*k == ' ' || *k == '\t'))
			k++;
		uv = k < e && *k == '=';
	}
out:
	buf_release(&b);
	free(cfg);
	return uv;
}

static int
under(const char *path, const char *part)
{
	return path != NULL && strstr(path, part) != NULL;
}

static int
system_dir(const char *path)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/local/bin",
		"/bin", NULL };
	char *d;
	size_t i;
	int r = 0;

	if (path == NULL)
		return 0;
	d = parent(path);
	for (i = 0; dirs[i] != NULL && !r; i++)
		r = strcmp(d, dirs[i]) == 0;
	free(d);
	return r;
}

const char *
pykind_classify(const char *path, const char *real)
{
	char *venv, *bin, *prefix, *meta;
	const char *kind = NULL;

	if ((venv = pykind_venv_dir(path)) != NULL) {
		kind = made_by_uv(venv) ? "uv-venv" : "venv";
		free(venv);
		return kind;
	}
	bin = parent(path);
	prefix = parent(bin);
	meta = xasprintf("%s/conda-meta", prefix);
	if (is_dir(meta))
		kind = "conda";
	free(meta);
	free(prefix);
	free(bin);
	if (kind != NULL)
		return kind;
	if (under(path, "/.pyenv/") || under(real, "/.pyenv/"))
		return "pyenv";
	if (under(path, "/uv/python/") || under(real, "/uv/python/"))
		return "uv";
	if (system_dir(path) && (real == NULL || system_dir(real)))
		return "system";
	return "other";
}
