/* target.c - the managed file, its chain and bytes (see target.h). */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xmalloc.h"

#define LINK_MAX_LEN	65536

static void
chain_add(struct target *t, char *path)
{
	t->chain = xreallocarray(t->chain, t->nchain + 1, sizeof(*t->chain));
	t->chain[t->nchain++] = path;
}

/* Reads the link at path into *out; the caller frees it. */
static int
read_link(char **out, const char *path, size_t hint, struct err *err)
{
	size_t size = hint + 1 < 256 ? 256 : hint + 1;
	char *s = NULL;
	ssize_t n;

	for (;;) {
		s = xreallocarray(s, size, 1);
		if ((n = readlink(path, s, size)) == -1) {
			free(s);
			return err_errno(err, ENVCTL_ESYS, errno,
			    "cannot read link '%s'", path);
		}
		if ((size_t)n < size)
			break;
		if (size >= LINK_MAX_LEN) {
			free(s);
			return err_set(err, ENVCTL_EINVALID,
			    "link '%s' is longer than %d bytes", path,
			    LINK_MAX_LEN);
		}
		size *= 2;
	}
	s[n] = '\0';
	*out = s;
	return 0;
}

/* The entry a link at from pointing to dest names: dest resolved
 * against from's directory when relative. */
static char *
link_next(const char *from, const char *dest)
{
	const char *slash = strrchr(from, '/');

	while (dest[0] == '.' && dest[1] == '/')
		dest += 2;
	if (dest[0] == '/')
		return xstrdup(dest);
	return xasprintf("%.*s/%s", (int)(slash - from), from, dest);
}

/* realpath of path, or of its directory plus its name when it is absent. */
static int
resolve_real(char **out, const char *path, int exists, struct err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir, *rdir;

	if (exists) {
		if ((*out = realpath(path, NULL)) == NULL)
			return err_errno(err, ENVCTL_ESYS, errno,
			    "cannot resolve '%s'", path);
		return 0;
	}
	dir = slash == path ? xstrdup("/") :
	    xstrndup(path, (size_t)(slash - path));
	rdir = realpath(dir, NULL);
	free(dir);
	if (rdir == NULL) {
		/* The directory is missing too: the path is all we have. */
		if (errno == ENOENT || errno == ENOTDIR) {
			*out = xstrdup(path);
			return 0;
		}
		return err_errno(err, ENVCTL_ESYS, errno,
		    "cannot resolve the directory of '%s'", path);
	}
	*out = xasprintf("%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir,
	    slash + 1);
	free(rdir);
	return 0;
}

/* Reads the regular file at t->real through one descriptor. */
static int
read_real(struct target *t, struct err *err)
{
	struct stat st;
	char chunk[65536];
	ssize_t n;
	int fd, r = 0;

	/* O_NONBLOCK: opening a FIFO planted there must not hang. */
	fd = open(t->real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK);
	if (fd == -1) {
		if (errno == ENOENT) {	/* gone since lstat() */
			t->exists = 0;
			return 0;
		}
		return err_errno(err, ENVCTL_ESYS, errno, "cannot open '%s'",
		    t->real);
	}
	if (fstat(fd, &st) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot stat '%s'",
		    t->real);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		r = err_set(err, ENVCTL_EINVALID,
		    "'%s' is a directory, not a regular file", t->real);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = err_set(err, ENVCTL_EINVALID,
		    "'%s' is not a regular file", t->real);
		goto out;
	}
	if (st.st_size > (off_t)ENVCTL_TARGET_MAX) {
		r = err_set(err, ENVCTL_ETOOBIG, "'%s' is larger than %u MiB",
		    t->real, ENVCTL_TARGET_MAX >> 20);
		goto out;
	}
	t->mode = st.st_mode & 07777;
	t->uid = st.st_uid;
	t->gid = st.st_gid;
	t->mtime = (long long)st.st_mtime;
	for (;;) {
		if ((n = read(fd, chunk, sizeof(chunk))) == 0)
			break;
		if (n == -1) {
			if (errno == EINTR)
				continue;
			r = err_errno(err, ENVCTL_ESYS, errno,
			    "cannot read '%s'", t->real);
			goto out;
		}
		if (buf_add(&t->data, chunk, (size_t)n) != 0) {
			r = err_set(err, ENVCTL_ETOOBIG,
			    "'%s' is larger than %u MiB", t->real,
			    ENVCTL_TARGET_MAX >> 20);
			goto out;
		}
	}
out:
	close(fd);
	return r;
}

int
target_read(struct target *t, const char *path, struct err *err)
{
	struct stat st;
	const char *cur;
	char *dest = NULL;
	int r;

	memset(t, 0, sizeof(*t));
	buf_init(&t->data, ENVCTL_TARGET_MAX);
	if (path[0] != '/')
		return err_set(err, ENVCTL_EINVALID,
		    "'%s' is not an absolute path", path);
	chain_add(t, xstrdup(path));
	for (;;) {
		cur = t->chain[t->nchain - 1];
		if (lstat(cur, &st) == -1) {
			if (errno != ENOENT)
				return err_errno(err, ENVCTL_ESYS, errno,
				    "cannot stat '%s'", cur);
			t->exists = 0;
			break;
		}
		if (!S_ISLNK(st.st_mode)) {
			t->exists = 1;
			break;
		}
		if (t->nchain > ENVCTL_TARGET_HOPS)
			return err_set(err, ENVCTL_EINVALID,
			    "symlink loop: '%s' leads through more than %d "
			    "links", path, ENVCTL_TARGET_HOPS);
		if ((r = read_link(&dest, cur, (size_t)st.st_size, err)) != 0)
			return r;
		chain_add(t, link_next(cur, dest));
		free(dest);
	}
	if ((r = resolve_real(&t->real, cur, t->exists, err)) != 0)
		return r;
	if (!t->exists)
		return 0;
	return read_real(t, err);
}

void
target_release(struct target *t)
{
	size_t i;

	for (i = 0; i < t->nchain; i++)
		free(t->chain[i]);
	free(t->chain);
	free(t->real);
	buf_release(&t->data);
	memset(t, 0, sizeof(*t));
}
