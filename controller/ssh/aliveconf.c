/*
 * aliveconf.c - the keepalive keywords of ssh_config (see aliveconf.h).
 *
 * Only what decides whether a line applies is parsed; a file that cannot
 * be read is skipped, as ssh(1) skips a missing ~/.ssh/config (libssh has
 * already refused a broken -F file by the time this runs).
 */
#include "controller/ssh/aliveconf.h"

#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xmalloc.h"

#define ENVCTL_ALIVECONF_DEPTH	16

struct alive {
	const char	*name;
	const char	*dir;		/* where relative Includes are */
	int		*interval;
	int		*count;
};

/* The next word of *p, cut at one of seps; NULL at the end. */
static char *
next_word(char **p, const char *seps)
{
	char *w;

	*p += strspn(*p, seps);
	if (**p == '\0')
		return NULL;
	w = *p;
	*p += strcspn(*p, seps);
	if (**p != '\0')
		*(*p)++ = '\0';
	return w;
}

/* A pattern list ("a,b" or "a b"): a match, and no !negated match. */
static int
list_match(const char *name, char *list)
{
	char *pat;
	int yes = 0;

	while ((pat = next_word(&list, ", \t")) != NULL) {
		if (*pat == '!') {
			if (fnmatch(pat + 1, name, 0) == 0)
				return 0;
		} else if (fnmatch(pat, name, 0) == 0)
			yes = 1;
	}
	return yes;
}

/* Match's criteria: all, host and originalhost only. */
static int
match_criteria(const char *name, char *args)
{
	char *crit, *val;

	crit = next_word(&args, " \t");
	if (crit != NULL && strcasecmp(crit, "all") == 0)
		return 1;
	for (; crit != NULL; crit = next_word(&args, " \t"))
		if ((strcasecmp(crit, "host") != 0 &&
		    strcasecmp(crit, "originalhost") != 0) ||
		    (val = next_word(&args, " \t")) == NULL ||
		    !list_match(name, val))
			return 0;
	return 1;
}

static void
set_first(int *v, const char *s, int min)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*v < 0 && end != s && n >= min && n <= INT_MAX)
		*v = (int)n;
}

static void read_file(struct alive *a, const char *path, int depth);

static void
include(struct alive *a, char *args, int depth)
{
	const char *home = getenv("HOME");
	char *arg, *pat;
	glob_t g;
	size_t i;

	while ((arg = next_word(&args, " \t")) != NULL) {
		if (strncmp(arg, "~/", 2) == 0 && home != NULL)
			pat = xasprintf("%s/%s", home, arg + 2);
		else if (*arg != '/')
			pat = xasprintf("%s/%s", a->dir, arg);
		else
			pat = xstrdup(arg);
		if (glob(pat, 0, NULL, &g) == 0) {
			for (i = 0; i < g.gl_pathc; i++)
				read_file(a, g.gl_pathv[i], depth + 1);
			globfree(&g);
		}
		free(pat);
	}
}

static void
read_file(struct alive *a, const char *path, int depth)
{
	char *line = NULL, *kw, *args;
	size_t cap = 0, n;
	int active = 1;
	FILE *f;

	if (depth > ENVCTL_ALIVECONF_DEPTH || (f = fopen(path, "re")) == NULL)
		return;
	while (getline(&line, &cap, f) != -1) {
		kw = line + strspn(line, " \t");
		n = strcspn(kw, " \t=\r\n");
		if (n == 0 || *kw == '#')
			continue;
		args = kw + n;
		args += strspn(args, " \t");
		if (*args == '=')
			args++;
		args += strspn(args, " \t");
		args[strcspn(args, "\r\n")] = '\0';
		kw[n] = '\0';
		if (strcasecmp(kw, "Host") == 0)
			active = list_match(a->name, args);
		else if (strcasecmp(kw, "Match") == 0)
			active = match_criteria(a->name, args);
		else if (!active)
			continue;
		else if (strcasecmp(kw, "Include") == 0)
			include(a, args, depth);
		else if (strcasecmp(kw, "ServerAliveInterval") == 0)
			set_first(a->interval, args, 0);
		else if (strcasecmp(kw, "ServerAliveCountMax") == 0)
			set_first(a->count, args, 1);
	}
	free(line);
	fclose(f);
}

void
aliveconf_read(const char *config, const char *name, int *interval,
    int *count)
{
	struct alive a = { name, NULL, interval, count };
	const char *home = getenv("HOME");
	char *dir = xasprintf("%s/.ssh", home != NULL ? home : "");
	char *user = xasprintf("%s/config", dir);

	/* ssh(1): relative Includes of a user file are in ~/.ssh. */
	a.dir = dir;
	read_file(&a, config != NULL ? config : user, 0);
	if (config == NULL) {
		a.dir = "/etc/ssh";
		read_file(&a, "/etc/ssh/ssh_config", 0);
	}
	free(user);
	free(dir);
}
