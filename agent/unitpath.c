/* unitpath.c - a service's name and where its unit files are (see
 * unitpath.h). */
#include "unitpath.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"

#define UP_LINK_MAX	4096		/* bytes of a link read */

/*
 * The system unit search path, highest priority first: systemd.unit(5)
 * "UNIT FILE LOAD PATH", with the .attached dirs and /lib/systemd/system
 * that `systemd-analyze unit-paths` lists on Debian 12 (systemd 252).
 */
static const char *const up_search[] = {
	"/etc/systemd/system.control",
	"/run/systemd/system.control",
	"/run/systemd/transient",
	"/run/systemd/generator.early",
	"/etc/systemd/system",
	"/etc/systemd/system.attached",
	"/run/systemd/system",
	"/run/systemd/system.attached",
	"/run/systemd/generator",
	"/usr/local/lib/systemd/system",
	"/lib/systemd/system",
	"/usr/lib/systemd/system",
	"/run/systemd/generator.late",
};
#define UP_NSEARCH	(sizeof(up_search) / sizeof(up_search[0]))

/* ---- names ---- */

/* systemd.unit(5): ASCII letters, digits, ":", "-", "_", ".", "\". */
static int
up_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == ':' || c == '-' || c == '_' ||
	    c == '.' || c == '\\';
}

int
unitpath_name(char **out, char **prefix, char **instance,
    const char *name, struct err *err)
{
	static const char *const other[] = { ".socket", ".target",
	    ".device", ".mount", ".automount", ".swap", ".path", ".timer",
	    ".slice", ".scope" };
	const char *at, *p;
	char *full;
	size_t i, plen;

	*out = *prefix = *instance = NULL;
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (str_endswith(name, other[i]))
			return err_set(err, ENVCTL_EINVALID, "unit '%s' is "
			    "not a service", name);
	full = str_endswith(name, UNITPATH_SUFFIX) ? xstrdup(name) :
	    xasprintf("%s" UNITPATH_SUFFIX, name);
	plen = strlen(full) - strlen(UNITPATH_SUFFIX);
	if (strlen(full) > UNITPATH_NAME_MAX) {
		err_set(err, ENVCTL_EINVALID, "unit name '%.64s...' is longer "
		    "than %d characters", name, UNITPATH_NAME_MAX);
		goto bad;
	}
	at = memchr(full, '@', plen);
	if (plen == 0 || at == full) {
		err_set(err, ENVCTL_EINVALID, "unit name '%s' has an empty "
		    "prefix", name);
		goto bad;
	}
	for (p = full; p < full + plen; p++)
		if (!up_name_char((unsigned char)*p) && !(at != NULL &&
		    p >= at)) {
			err_set(err, ENVCTL_EINVALID, "unit name '%s' holds "
			    "a character systemd does not allow in unit "
			    "names", name);
			goto bad;
		}
	for (p = at != NULL ? at + 1 : full + plen; p < full + plen; p++)
		if (!up_name_char((unsigned char)*p) && *p != '@') {
			err_set(err, ENVCTL_EINVALID, "unit name '%s' holds "
			    "a character systemd does not allow in unit "
			    "names", name);
			goto bad;
		}
	if (at != NULL && at + 1 == full + plen) {
		err_set(err, ENVCTL_EINVALID, "unit '%s' is a template: name "
		    "an instance (NAME@INSTANCE.service)", name);
		goto bad;
	}
	*out = full;
	*prefix = xstrndup(full, at != NULL ? (size_t)(at - full) : plen);
	if (at != NULL)
		*instance = xstrndup(at + 1, (size_t)(full + plen - at - 1));
	return 0;
bad:
	free(full);
	return err->code;
}

/* "name@.service" for "name@inst.service". */
static char *
up_template(const char *unit)
{
	const char *at = strchr(unit, '@');

	return xasprintf("%.*s@" UNITPATH_SUFFIX, (int)(at - unit), unit);
}

/*
 * The drop-in directory names for unit, most specific first: the name,
 * its template, then each "-" prefix (systemd.unit(5): "foo-bar-baz"
 * also searches "foo-bar-" and "foo-"), as systemd's dropin.c walks them.
 */
static void
up_dropin_names(char ***v, size_t *n, const char *unit)
{
	const char *at = strchr(unit, '@'), *inst = NULL;
	char *prefix, *dash, *next;
	size_t plen, i;
	int chopped = 0;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], unit) == 0)
			return;
	strv_push(v, n, xstrdup(unit));
	plen = strlen(unit) - strlen(UNITPATH_SUFFIX);
	if (at != NULL && at[1] != '.') {
		inst = at + 1;
		next = up_template(unit);
		up_dropin_names(v, n, next);
		free(next);
	}
	prefix = xstrndup(unit, at != NULL ? (size_t)(at - unit) : plen);
	for (;;) {
		if ((dash = strrchr(prefix, '-')) == NULL || dash == prefix)
			goto out;
		if (dash[1] != '\0' || chopped) {
			dash[1] = '\0';
			break;
		}
		*dash = '\0';
		chopped = 1;
	}
	/* An instance keeps its instance; a template becomes plain. */
	if (inst != NULL)
		next = xasprintf("%s@%.*s" UNITPATH_SUFFIX, prefix,
		    (int)(unit + plen - inst), inst);
	else
		next = xasprintf("%s" UNITPATH_SUFFIX, prefix);
	up_dropin_names(v, n, next);
	free(next);
out:
	free(prefix);
}

/* ---- the fragment ---- */

void
unitpath_fragment(char **full, char **shown, char **alias, const char *root,
    const char *unit)
{
	struct stat st;
	const char *names[2];
	char *tmpl, link[UP_LINK_MAX], *b;
	size_t i, k, hit = 0;
	ssize_t n;

	*full = *shown = *alias = NULL;
	tmpl = strchr(unit, '@') != NULL ? up_template(unit) : NULL;
	names[0] = unit;
	names[1] = tmpl;
	for (k = 0; k < 2 && *full == NULL && names[k] != NULL; k++)
		for (i = 0; i < UP_NSEARCH && *full == NULL; i++) {
			*full = xasprintf("%s%s/%s", root, up_search[i],
			    names[k]);
			if (lstat(*full, &st) == 0) {
				*shown = xasprintf("%s/%s", up_search[i],
				    names[k]);
				hit = k;
				break;
			}
			free(*full);
			*full = NULL;
		}
	if (*full != NULL && (n = readlink(*full, link, sizeof(link) - 1)) > 0) {
		link[n] = '\0';
		b = strrchr(link, '/') != NULL ? strrchr(link, '/') + 1 : link;
		if (strcmp(link, "/dev/null") != 0 && strcmp(b, names[hit]) != 0)
			*alias = xstrdup(b);
	}
	free(tmpl);
}

int
unitpath_is_mask(const char *full)
{
	struct stat st;
	char target[16];
	ssize_t n;

	if ((n = readlink(full, target, sizeof(target) - 1)) > 0) {
		target[n] = '\0';
		if (strcmp(target, "/dev/null") == 0)
			return 1;
	}
	if (stat(full, &st) != 0)
		return 0;
	return (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) ||
	    (S_ISREG(st.st_mode) && st.st_size == 0);
}

/* ---- drop-ins ---- */

static int
up_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct unitpath_file *)a)->base,
	    ((const struct unitpath_file *)b)->base);
}

/*
 * Adds the *.conf files of dir (under root) that no earlier directory
 * named already: the same file name higher up masks it.
 */
static int
up_scan(const char *root, const char *dir, struct unitpath_file **v,
    size_t *n, char ***seen, size_t *nseen, struct err *err)
{
	struct dirent *de;
	DIR *d;
	char *full = xasprintf("%s%s", root, dir), *real;
	size_t i, count = 0, rl = strlen(root);
	int r = 0;

	if ((real = realpath(full, NULL)) == NULL) {
		free(full);
		return 0;
	}
	for (i = 0; i < *nseen; i++)
		if (strcmp((*seen)[i], real) == 0) {
			free(real);
			free(full);
			return 0;
		}
	strv_push(seen, nseen, real);
	if ((d = opendir(real)) == NULL) {
		free(full);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !str_endswith(de->d_name, ".conf"))
			continue;
		if (++count > UNITPATH_DIR_MAX) {
			r = err_set(err, ENVCTL_ETOOBIG, "'%s' holds more than "
			    "%d entries", dir, UNITPATH_DIR_MAX);
			break;
		}
		for (i = 0; i < *n; i++)
			if (strcmp((*v)[i].base, de->d_name) == 0)
				break;
		if (i < *n)
			continue;
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		(*v)[*n].base = xstrdup(de->d_name);
		/* Shown as systemd shows it: the canonical directory. */
		(*v)[*n].full = xasprintf("%s/%s", real, de->d_name);
		(*v)[*n].shown = xstrdup(strncmp(real, root, rl) == 0 ?
		    (*v)[*n].full + rl : (*v)[*n].full);
		(*n)++;
	}
	closedir(d);
	free(full);
	return r;
}

int
unitpath_dropins(struct unitpath_file **v, size_t *n, const char *root,
    const char *unit, struct err *err)
{
	char **names = NULL, **seen = NULL, *dir;
	size_t nnames = 0, nseen = 0, i, k;
	int r = 0;

	*v = NULL;
	*n = 0;
	up_dropin_names(&names, &nnames, unit);
	for (i = 0; i < UP_NSEARCH && r == 0; i++)
		for (k = 0; k < nnames && r == 0; k++) {
			dir = xasprintf("%s/%s.d", up_search[i], names[k]);
			r = up_scan(root, dir, v, n, &seen, &nseen, err);
			free(dir);
		}
	for (i = 0; i < UP_NSEARCH && r == 0; i++) {
		dir = xasprintf("%s/service.d", up_search[i]);
		r = up_scan(root, dir, v, n, &seen, &nseen, err);
		free(dir);
	}
	if (r != 0) {
		unitpath_files_free(*v, *n);
		*v = NULL;
		*n = 0;
	} else if (*n > 1)
		qsort(*v, *n, sizeof(**v), up_file_cmp);
	strv_free(names, nnames);
	strv_free(seen, nseen);
	return r;
}

void
unitpath_files_free(struct unitpath_file *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].base);
		free(v[i].full);
		free(v[i].shown);
	}
	free(v);
}
