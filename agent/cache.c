/* cache.c - the agent's upload cache: scripts, tidying (see cache.h). */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fdio.h"
#include "common/selfexe.h"
#include "common/xmalloc.h"
#include "install.h"

#define PREFIX		"envctl-agent-"
#define PREFIX_LEN	(sizeof(PREFIX) - 1)
#define SHA_HEX		64
#define AGENT_LEN	(PREFIX_LEN + SHA_HEX)
#define TMP_TAG		".tmp-"
#define TMP_TAG_LEN	(sizeof(TMP_TAG) - 1)
#define TMP_RAND	12
#define SCRIPT_NAME_MAX	16
#define DAY		(24 * 60 * 60)

static int
is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The first n bytes of s are "envctl-agent-" + 64 hex digits. */
static int
agent_namen(const char *s, size_t n)
{
	return n == AGENT_LEN && strncmp(s, PREFIX, PREFIX_LEN) == 0 &&
	    is_hex(s + PREFIX_LEN, SHA_HEX);
}

static int
agent_name(const char *s)
{
	return agent_namen(s, strlen(s));
}

/* The first n bytes of s are an agent name + "." + [a-z]{1,16} + ".py". */
static int
script_namen(const char *s, size_t n)
{
	size_t i;

	if (n < AGENT_LEN + 5 || !agent_namen(s, AGENT_LEN) ||
	    s[AGENT_LEN] != '.' || n - AGENT_LEN - 4 > SCRIPT_NAME_MAX ||
	    memcmp(s + n - 3, ".py", 3) != 0)
		return 0;
	for (i = AGENT_LEN + 1; i < n - 3; i++)
		if (s[i] < 'a' || s[i] > 'z')
			return 0;
	return 1;
}

/* The first n bytes of s are an agent name + "." + [a-z]{1,16}: data. */
static int
data_namen(const char *s, size_t n)
{
	size_t i;

	if (n < AGENT_LEN + 2 || !agent_namen(s, AGENT_LEN) ||
	    s[AGENT_LEN] != '.' || n - AGENT_LEN - 1 > SCRIPT_NAME_MAX)
		return 0;
	for (i = AGENT_LEN + 1; i < n; i++)
		if (s[i] < 'a' || s[i] > 'z')
			return 0;
	return 1;
}

/* "." + an agent, script or data name + ".tmp-" + 12 hex digits: a temp. */
static int
temp_name(const char *s)
{
	size_t n = strlen(s), core;

	if (n < 1 + AGENT_LEN + TMP_TAG_LEN + TMP_RAND || s[0] != '.')
		return 0;
	core = n - 1 - TMP_TAG_LEN - TMP_RAND;
	return strncmp(s + 1 + core, TMP_TAG, TMP_TAG_LEN) == 0 &&
	    is_hex(s + n - TMP_RAND, TMP_RAND) &&
	    (agent_namen(s + 1, core) || script_namen(s + 1, core) ||
	    data_namen(s + 1, core));
}

/* Ours to remove: a regular file of the cache's owner. */
static int
owned_file(int dfd, const char *name, uid_t uid, struct stat *st)
{
	return fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st->st_mode) && st->st_uid == uid;
}

/* Looks for the cache the running agent was started from. */
static void
cache_find(struct cache *c)
{
	char *self, *base;
	struct stat st;
	int dfd;

	c->looked = 1;
	if ((self = selfexe_path()) == NULL)
		return;
	/* A deleted file reads "NAME (deleted)": no match, no cache. */
	base = strrchr(self, '/');
	if (!agent_name(base + 1))
		goto out;
	*base++ = '\0';
	dfd = open(self[0] != '\0' ? self : "/", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (dfd == -1)
		goto out;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(st.st_mode)) {
		close(dfd);
		goto out;
	}
	c->dfd = dfd;
	c->dir = xstrdup(self[0] != '\0' ? self : "/");
	c->self = xstrdup(base);
	c->uid = st.st_uid;
out:
	free(self);
}

/* 1: file holds exactly text; 0: it differs; -1: it cannot be read. */
static int
same_script(const struct cache *c, const char *file, const char *text,
    size_t len)
{
	struct stat st;
	char *data;
	ssize_t n;
	int fd, r = 0;

	fd = openat(c->dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != c->uid) {
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size == len) {
		data = xmalloc(len + 1);
		while ((n = read(fd, data, len + 1)) == -1 && errno == EINTR)
			;
		r = n == (ssize_t)len && memcmp(data, text, len) == 0;
		free(data);
	}
	/* Used: cache_tidy() leaves it alone for a day (see tidy_scripts). */
	if (r == 1 && time(NULL) - st.st_mtime > DAY)
		futimens(fd, NULL);
	close(fd);
	return r;
}

/*
 * Writes text as file (0600) through a temp named after our pid (no live
 * agent shares it; a dead one's makes this fail, and cache_tidy removes it
 * after a day); 0, or -1.
 */
static int
write_file(const struct cache *c, const char *file, const char *text,
    size_t len)
{
	char *tmp;
	int fd, r = -1;

	tmp = xasprintf(".%s" TMP_TAG "%012lx", file, (long)getpid());
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd != -1) {
		if (fd_write_all(fd, text, len) == 0 && close(fd) == 0)
			r = renameat(c->dfd, tmp, c->dfd, file);
		else
			close(fd);
		if (r != 0)
			unlinkat(c->dfd, tmp, 0);
	}
	free(tmp);
	return r;
}

const char *
cache_dir(struct cache *c)
{
	if (c == NULL)
		return NULL;
	if (!c->looked)
		cache_find(c);
	/* root running a user's cache: its files would be root's. */
	return c->dfd != -1 && c->uid == geteuid() ? c->dir : NULL;
}

const char *
cache_script(struct cache *c, const char *name, const char *text)
{
	struct cache_script *s = NULL;
	size_t i, len = strlen(text);
	char *file, *path = NULL;
	int same;

	if (cache_dir(c) == NULL)
		return NULL;
	for (i = 0; i < CACHE_SCRIPTS && s == NULL; i++) {
		if (c->scripts[i].name == NULL)
			s = &c->scripts[i];
		else if (strcmp(c->scripts[i].name, name) == 0)
			return c->scripts[i].path;
	}
	if (s == NULL)
		return NULL;
	s->name = name;
	file = xasprintf("%s.%s.py", c->self, name);
	if (!script_namen(file, strlen(file)))
		goto out;
	path = xasprintf("%s/%s", strcmp(c->dir, "/") != 0 ? c->dir : "",
	    file);
	if ((same = same_script(c, file, text, len)) != 1) {
		if (write_file(c, file, text, len) != 0)
			goto out;
		/* The old bytecode could pass Python's mtime check. */
		if (same == 0)
			install_drop_pycache(path, c->uid);
	}
	s->path = path;
	path = NULL;
out:
	free(path);
	free(file);
	return s->path;
}

size_t
cache_script_args(char **argv, size_t k, struct cache *c, const char *name,
    const char *text)
{
	const char *file = cache_script(c, name, text);

	if (file != NULL) {
		argv[k++] = CACHE_SCRIPT_BOOT;
		argv[k++] = (char *)file;
	} else
		argv[k++] = (char *)text;
	return k;
}

/*
 * The name of data file name (the caller frees it) when the cache may
 * hold data: cache_dir()'s, and its directory the effective user's and
 * not writable by group or others; else NULL.
 */
static char *
data_file(struct cache *c, const char *name)
{
	struct stat st;
	char *file;

	if (cache_dir(c) == NULL || fstat(c->dfd, &st) != 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) != 0)
		return NULL;
	file = xasprintf("%s.%s", c->self, name);
	if (!data_namen(file, strlen(file))) {
		free(file);
		return NULL;
	}
	return file;
}

/* A data file the agent may trust: ours alone (see cache.h). */
static int
trusted(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	    (st->st_mode & 022) == 0 && st->st_nlink == 1;
}

int
cache_data_read(struct cache *c, const char *name, struct buf *out,
    size_t max)
{
	struct stat st;
	char *file;
	ssize_t n;
	int fd, r = -1;

	if ((file = data_file(c, name)) == NULL)
		return -1;
	fd = openat(c->dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	free(file);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) != 0 || !trusted(&st) || st.st_size < 0 ||
	    (unsigned long long)st.st_size > max)
		goto out;
	buf_reset(out);
	if (buf_grow(out, (size_t)st.st_size + 1) != 0)
		goto out;
	while ((n = read(fd, out->data, (size_t)st.st_size + 1)) == -1 &&
	    errno == EINTR)
		;
	if (n != (ssize_t)st.st_size)
		goto out;
	out->len = (size_t)n;
	out->data[n] = '\0';
	r = 0;
out:
	if (r != 0)
		buf_reset(out);
	close(fd);
	return r;
}

int
cache_data_write(struct cache *c, const char *name, const void *data,
    size_t len)
{
	struct stat st;
	char *file;
	int r = -1;

	if ((file = data_file(c, name)) == NULL)
		return -1;
	/* Someone else's file, or one open to others: left alone. */
	if (fstatat(c->dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 ?
	    trusted(&st) : errno == ENOENT)
		r = write_file(c, file, data, len);
	free(file);
	return r;
}

/*
 * Removes the scripts (and their bytecode) and the data files of versions
 * that are gone (a second pass, after the versions removed now).  A file
 * written or used within a day is kept: an old version that is running
 * while another session removes its agent file still needs it.
 */
static void
tidy_scripts(const struct cache *c, DIR *dp)
{
	char agent[AGENT_LEN + 1], *path;
	struct dirent *de;
	struct stat st;
	time_t now = time(NULL);
	int script;

	rewinddir(dp);
	while ((de = readdir(dp)) != NULL) {
		script = script_namen(de->d_name, strlen(de->d_name));
		if (!script && !data_namen(de->d_name, strlen(de->d_name)))
			continue;
		memcpy(agent, de->d_name, AGENT_LEN);
		agent[AGENT_LEN] = '\0';
		if (fstatat(dirfd(dp), agent, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		    errno != ENOENT ||
		    !owned_file(dirfd(dp), de->d_name, c->uid, &st) ||
		    now - st.st_mtime <= DAY ||
		    unlinkat(dirfd(dp), de->d_name, 0) != 0 || !script)
			continue;
		path = xasprintf("%s/%s", strcmp(c->dir, "/") != 0 ? c->dir :
		    "", de->d_name);
		install_drop_pycache(path, c->uid);
		free(path);
	}
}

void
cache_tidy(struct cache *c)
{
	struct stat me, st;
	struct dirent *de;
	time_t now = time(NULL), keep;
	DIR *dp;
	int fd;

	if (!c->looked)
		cache_find(c);
	if (c->dfd == -1 || fstatat(c->dfd, c->self, &me,
	    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(me.st_mode))
		return;
	if ((fd = dup(c->dfd)) == -1)
		return;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	if (now - me.st_mtime > DAY)
		utimensat(dirfd(dp), c->self, NULL, AT_SYMLINK_NOFOLLOW);
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, c->self) == 0)
			continue;
		if (agent_name(de->d_name))
			keep = (time_t)CACHE_KEEP_DAYS * DAY;
		else if (temp_name(de->d_name))
			keep = DAY;
		else
			continue;
		if (owned_file(dirfd(dp), de->d_name, me.st_uid, &st) &&
		    now - st.st_mtime > keep)
			unlinkat(dirfd(dp), de->d_name, 0);
	}
	tidy_scripts(c, dp);
	closedir(dp);
}

void
cache_release(struct cache *c)
{
	size_t i;

	if (c->dfd != -1)
		close(c->dfd);
	c->dfd = -1;
	free(c->dir);
	free(c->self);
	c->dir = c->self = NULL;
	for (i = 0; i < CACHE_SCRIPTS; i++) {
		free(c->scripts[i].path);
		c->scripts[i].path = NULL;
		c->scripts[i].name = NULL;
	}
}
