/* backup.c - backups of a managed file and their metadata (see backup.h). */
#include "backup.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fdio.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "target.h"

#define ID_TRIES	1000
#define JSON_SUFFIX	".json"
#define TMP_SUFFIX	".json.tmp"

static int
sync_dir(const char *dir)
{
	int fd, r = 0;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (fsync(fd) == -1 && errno != EINVAL)
		r = -1;
	close(fd);
	return r;
}

int
backup_mkdirs(const char *dir, struct err *err)
{
	char *p = xstrdup(dir), *parent, c;
	size_t i, len = strlen(p);
	struct stat st;
	int r = 0, e;

	for (i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		c = p[i];
		p[i] = '\0';
		if (mkdir(p, 0700) == 0) {
			/* The new entry is durable once its parent is. */
			parent = xstrndup(p, strrchr(p, '/') == p ? 1 :
			    (size_t)(strrchr(p, '/') - p));
			if (sync_dir(parent) == -1 && errno != EACCES)
				r = err_errno(err, ENVCTL_ESYS, errno,
				    "cannot sync the directory '%s'", parent);
			free(parent);
		} else {
			e = errno;
			if (stat(p, &st) == 0)
				e = S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
			if (e != 0)
				r = err_errno(err, ENVCTL_ESYS, e,
				    "cannot make the directory '%s'", p);
		}
		if (r != 0)
			break;
		p[i] = c;
	}
	free(p);
	return r;
}

/* 1 when real is an absolute path without "." or ".." parts or "//". */
static int
canonical(const char *real)
{
	const char *s;
	size_t n;

	if (real[0] != '/' || real[1] == '\0')
		return 0;
	for (s = real + 1; *s != '\0'; s += n + (s[n] == '/')) {
		n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (s[n] == '/' && s[n + 1] == '\0')
			return 0;
	}
	return 1;
}

int
backup_open(struct backup_store *bs, const char *root, const char *real,
    int create, struct err *err)
{
	size_t rlen = strlen(root);
	int r;

	bs->fd = -1;
	bs->dir = NULL;
	bs->list = bs->ignored = NULL;
	if (!canonical(real))
		return err_set(err, ENVCTL_EINVALID, "cannot keep backups of "
		    "'%s': not a canonical absolute path", real);
	while (rlen > 1 && root[rlen - 1] == '/')
		rlen--;
	bs->dir = xasprintf("%.*s%s", rlen == 1 ? 0 : (int)rlen, root,
	    real);
	bs->fd = open(bs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	/* Made on first use only: every later change finds it at once. */
	if (bs->fd == -1 && (errno == ENOENT || errno == ENOTDIR) && create) {
		if ((r = backup_mkdirs(bs->dir, err)) != 0)
			return r;
		bs->fd = open(bs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	}
	if (bs->fd == -1) {
		if (!create && (errno == ENOENT || errno == ENOTDIR))
			return 0;
		return err_errno(err, ENVCTL_ESYS, errno,
		    "cannot open the backup directory '%s'", bs->dir);
	}
	return 0;
}

void
backup_close(struct backup_store *bs)
{
	if (bs->fd >= 0)
		close(bs->fd);
	bs->fd = -1;
	free(bs->dir);
	bs->dir = NULL;
	json_decref(bs->list);
	json_decref(bs->ignored);
	bs->list = bs->ignored = NULL;
}

char *
backup_path(const struct backup_store *bs, const char *id)
{
	return xasprintf("%s/%s", bs->dir, id);
}

/* Reads the regular file name in dirfd into b; -1 with errno. */
static int
read_at(struct buf *b, int dirfd, const char *name, struct stat *st)
{
	char chunk[65536];
	ssize_t n;
	int fd, e;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY | O_NONBLOCK);
	if (fd == -1)
		return -1;
	if (fstat(fd, st) == -1)
		goto fail;
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	for (;;) {
		if ((n = read(fd, chunk, sizeof(chunk))) == 0)
			break;
		if (n == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (buf_add(b, chunk, (size_t)n) != 0) {
			errno = EFBIG;
			goto fail;
		}
	}
	close(fd);
	return 0;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* 1 when name looks like a backup ID ("20261202T133501Z-..."). */
static int
id_like(const char *name)
{
	static const char pat[] = "DDDDDDDDTDDDDDDZ-";
	size_t i;

	for (i = 0; pat[i] != '\0'; i++) {
		if (pat[i] == 'D' ? name[i] < '0' || name[i] > '9' :
		    name[i] != pat[i])
			return 0;
	}
	return 1;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

static int
is_uint(const json_t *v, json_int_t max)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= max;
}

/*
 * Loads and checks ID.json (name) and the data file beside it; NULL with
 * *why set (static text) when damaged.
 */
static json_t *
load_meta(const struct backup_store *bs, const char *name, const char **why)
{
	struct buf b;
	struct stat st;
	json_t *m = NULL;
	char *id = xstrndup(name, strlen(name) - strlen(JSON_SUFFIX));
	int absent;

	buf_init(&b, ENVCTL_BACKUP_META_MAX);
	*why = NULL;
	if (read_at(&b, bs->fd, name, &st) == -1) {
		*why = errno == EFBIG ? "metadata too large" :
		    "cannot read the metadata";
		goto out;
	}
	if ((m = json_loadb(b.data, b.len, 0, NULL)) == NULL ||
	    !json_is_object(m)) {
		*why = "metadata is not a JSON object";
		goto out;
	}
	absent = json_is_true(json_object_get(m, "absent"));
	if (!json_is_string(json_object_get(m, "id")) ||
	    strcmp(json_string_value(json_object_get(m, "id")), id) != 0 ||
	    !is_uint(json_object_get(m, "seq"), LLONG_MAX) ||
	    !json_is_boolean(json_object_get(m, "absent")) ||
	    !is_uint(json_object_get(m, "size"), LLONG_MAX) ||
	    (!absent && (!is_uint(json_object_get(m, "mode"), 07777) ||
	    !is_uint(json_object_get(m, "uid"), 0xfffffffeLL) ||
	    !is_uint(json_object_get(m, "gid"), 0xfffffffeLL)))) {
		*why = "metadata has missing or wrong fields";
		goto out;
	}
	if (fstatat(bs->fd, id, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISREG(st.st_mode)) {
		*why = "the data file is missing";
		goto out;
	}
	if (st.st_size != (off_t)json_integer_value(json_object_get(m,
	    "size")))
		*why = "the data file's size differs from the metadata";
out:
	if (*why != NULL) {
		json_decref(m);
		m = NULL;
	}
	buf_release(&b);
	free(id);
	return m;
}

static int
newest_first(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a;
	const json_t *y = *(const json_t *const *)b;
	json_int_t sx = json_integer_value(json_object_get(x, "seq"));
	json_int_t sy = json_integer_value(json_object_get(y, "seq"));

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return -strcmp(json_string_value(json_object_get(x, "id")),
	    json_string_value(json_object_get(y, "id")));
}

/* Reads the store's listing into bs->list and bs->ignored. */
static int
read_list(struct backup_store *bs, struct err *err)
{
	json_t **v = NULL, *m;
	struct dirent *de;
	const char *why;
	size_t n = 0, alloc = 0, i;
	DIR *dp = NULL;
	int fd, r = 0;

	bs->list = json_array();
	bs->ignored = json_array();
	if (bs->fd < 0)
		return 0;
	if ((fd = openat(bs->fd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (dp = fdopendir(fd)) == NULL) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot list the backup directory '%s'", bs->dir);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (!has_suffix(de->d_name, JSON_SUFFIX))
			continue;
		if ((m = load_meta(bs, de->d_name, &why)) == NULL) {
			json_array_append_new(bs->ignored, json_pack(
			    "{s:o,s:s}", "name", proto_text_or_null(de->d_name),
			    "reason", why));
			continue;
		}
		ENVCTL_GROW(v, n + 1, alloc);
		v[n++] = m;
	}
	if (errno != 0) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot list the backup directory '%s'", bs->dir);
		goto out;
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), newest_first);
	for (i = 0; i < n; i++) {
		json_array_append_new(bs->list, v[i]);
		v[i] = NULL;
	}
out:
	for (i = 0; i < n; i++)
		json_decref(v[i]);
	free(v);
	if (dp != NULL)
		closedir(dp);
	if (r != 0) {
		json_decref(bs->list);
		json_decref(bs->ignored);
		bs->list = bs->ignored = NULL;
	}
	return r;
}

int
backup_list(json_t **list, json_t **ignored, struct backup_store *bs,
    struct err *err)
{
	int r;

	*list = NULL;
	if (ignored != NULL)
		*ignored = NULL;
	if (bs->list == NULL && (r = read_list(bs, err)) != 0)
		return r;
	*list = json_incref(bs->list);
	if (ignored != NULL)
		*ignored = json_incref(bs->ignored);
	return 0;
}

int
backup_load(struct buf *data, const struct backup_store *bs,
    const json_t *meta, struct err *err)
{
	const char *id = json_string_value(json_object_get(meta, "id"));
	json_int_t size = json_integer_value(json_object_get(meta, "size"));
	struct stat st;
	int r = 0;

	if (read_at(data, bs->fd, id, &st) == -1) {
		if (errno == EFBIG)
			return err_set(err, ENVCTL_ETOOBIG, "backup '%s/%s' is "
			    "larger than %zu bytes", bs->dir, id, data->cap);
		return err_errno(err, ENVCTL_ESYS, errno,
		    "cannot read the backup '%s/%s'", bs->dir, id);
	}
	if ((json_int_t)data->len != size)
		r = err_set(err, ENVCTL_EINVALID, "backup '%s/%s' is damaged: "
		    "it holds %zu bytes, its metadata says %lld", bs->dir, id,
		    data->len, (long long)size);
	return r;
}

/* Takes backup id out of the store's listing, if it was read. */
static void
unlist(struct backup_store *bs, const char *id)
{
	size_t i;

	for (i = 0; i < json_array_size(bs->list); i++)
		if (strcmp(id, json_string_value(json_object_get(
		    json_array_get(bs->list, i), "id"))) == 0) {
			json_array_remove(bs->list, i);
			return;
		}
}

int
backup_delete(struct backup_store *bs, const char *id, struct err *err)
{
	char *meta = xasprintf("%s" JSON_SUFFIX, id);
	int r = 0;

	/* Metadata first: without it the data file is a mere leftover. */
	if (unlinkat(bs->fd, meta, 0) == 0 || errno == ENOENT) {
		unlist(bs, id);
		if (unlinkat(bs->fd, id, 0) == 0 || errno == ENOENT)
			goto out;
	}
	r = err_errno(err, ENVCTL_ESYS, errno,
	    "cannot remove the backup '%s/%s'", bs->dir, id);
out:
	free(meta);
	return r;
}

/* Removes what an interrupted backup_create() left. */
static int
remove_leftovers(const struct backup_store *bs, struct err *err)
{
	struct dirent *de;
	struct stat st;
	char *meta;
	DIR *dp = NULL;
	int fd, r = 0, orphan;

	if ((fd = openat(bs->fd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (dp = fdopendir(fd)) == NULL) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot list the backup directory '%s'", bs->dir);
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((de = readdir(dp)) != NULL) {
		if (!id_like(de->d_name))
			continue;
		if (has_suffix(de->d_name, TMP_SUFFIX))
			orphan = 1;
		else if (has_suffix(de->d_name, JSON_SUFFIX))
			continue;
		else {
			meta = xasprintf("%s" JSON_SUFFIX, de->d_name);
			orphan = fstatat(bs->fd, meta, &st,
			    AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT;
			free(meta);
		}
		if (!orphan || fstatat(bs->fd, de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(bs->fd, de->d_name, 0) == -1 && errno != ENOENT) {
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot remove "
			    "'%s/%s'", bs->dir, de->d_name);
			break;
		}
	}
	closedir(dp);
	return r;
}

/* 1 when a and b record the same mode, uid and gid (null when absent). */
static int
same_owner_mode(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "mode", "uid", "gid" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!json_equal(json_object_get(a, keys[i]),
		    json_object_get(b, keys[i])))
			return 0;
	return 1;
}

/*
 * 1 when backups a and b hold the same version (see backup.h); the
 * metadata decides a difference, the bytes decide sameness, so a digest
 * that a controller got wrong cannot make two versions one.
 */
static int
same_version(const struct backup_store *bs, const json_t *a,
    const json_t *b)
{
	const json_t *sa = json_object_get(a, "sha256");
	const json_t *sb = json_object_get(b, "sha256");
	struct buf x, y;
	int absent = json_is_true(json_object_get(a, "absent")), same;

	if (absent != json_is_true(json_object_get(b, "absent")))
		return 0;
	if (absent)
		return 1;
	if (!json_equal(json_object_get(a, "size"), json_object_get(b,
	    "size")) || !same_owner_mode(a, b) || (json_is_string(sa) &&
	    json_is_string(sb) && !json_equal(sa, sb)))
		return 0;
	buf_init(&x, ENVCTL_TARGET_MAX);
	buf_init(&y, ENVCTL_TARGET_MAX);
	same = backup_load(&x, bs, a, NULL) == 0 &&
	    backup_load(&y, bs, b, NULL) == 0 && x.len == y.len &&
	    (x.len == 0 || memcmp(x.data, y.data, x.len) == 0);
	buf_release(&x);
	buf_release(&y);
	return same;
}

int
backup_prune(struct backup_store *bs, size_t keep, struct err *err)
{
	json_t *list = NULL, *m;
	char **doomed = NULL;
	size_t i, j, nkept = 0, n = 0, total;
	size_t *kept = NULL;
	char *keepit = NULL;
	int r, dup;

	if (bs->fd < 0)
		return 0;
	if ((r = backup_list(&list, NULL, bs, err)) != 0)
		goto out;
	total = json_array_size(list);
	kept = xcalloc(total + 1, sizeof(*kept));
	keepit = xcalloc(total + 1, 1);
	doomed = xcalloc(total + 1, sizeof(*doomed));
	/*
	 * Newest first, the newest backup of each of the keep most recent
	 * versions must stay; the slots left up to keep go to the newest of
	 * the others (older copies of a kept version).
	 */
	json_array_foreach(list, i, m) {
		dup = 0;
		for (j = 0; j < nkept && !dup; j++)
			dup = same_version(bs, json_array_get(list, kept[j]),
			    m);
		if (!dup && nkept < keep) {
			kept[nkept++] = i;
			keepit[i] = 1;
		}
	}
	for (i = 0; i < total && nkept < keep; i++)
		if (!keepit[i]) {
			keepit[i] = 1;
			nkept++;
		}
	/* The ids are copied first: each deletion shortens the listing. */
	for (i = 0; i < total; i++)
		if (!keepit[i])
			doomed[n++] = xstrdup(json_string_value(
			    json_object_get(json_array_get(list, i), "id")));
	/* Oldest first. */
	while (n > 0 && r == 0) {
		r = backup_delete(bs, doomed[n - 1], err);
		free(doomed[--n]);
	}
	if (r != 0)
		goto out;
	/*
	 * No fsync: a removal lost in a crash leaves a backup the next prune
	 * removes, or (metadata gone first) a leftover it removes; neither
	 * loses a file, and a change pays one flush of the journal less.
	 */
	r = remove_leftovers(bs, err);
out:
	while (n > 0)
		free(doomed[--n]);
	free(doomed);
	free(kept);
	free(keepit);
	json_decref(list);
	return r;
}

static json_t *
meta_json(const struct backup_info *bi, const char *id, json_int_t seq,
    const char *when)
{
	json_t *m = json_object();
	char *owner, *group;

	json_object_set_new(m, "id", json_string(id));
	json_object_set_new(m, "seq", json_integer(seq));
	json_object_set_new(m, "time", json_string(when));
	json_object_set_new(m, "op", json_string(bi->op));
	json_object_set_new(m, "path", proto_text_or_null(bi->path));
	json_object_set_new(m, "real", proto_text_or_null(bi->real));
	json_object_set_new(m, "absent", json_boolean(!bi->exists));
	json_object_set_new(m, "size", json_integer(bi->exists ?
	    (json_int_t)bi->len : 0));
	json_object_set_new(m, "sha256", proto_text_or_null(bi->exists ? bi->sha256 :
	    NULL));
	if (bi->exists) {
		owner = account_user(bi->uid);
		group = account_group(bi->gid);
		json_object_set_new(m, "mode", json_integer(bi->mode & 07777));
		json_object_set_new(m, "uid", json_integer(bi->uid));
		json_object_set_new(m, "gid", json_integer(bi->gid));
		json_object_set_new(m, "owner", proto_text_or_null(owner));
		json_object_set_new(m, "group", proto_text_or_null(group));
		free(owner);
		free(group);
	} else {
		json_object_set_new(m, "mode", json_null());
		json_object_set_new(m, "uid", json_null());
		json_object_set_new(m, "gid", json_null());
		json_object_set_new(m, "owner", json_null());
		json_object_set_new(m, "group", json_null());
	}
	json_object_set_new(m, "playbook", proto_text_or_null(bi->playbook));
	json_object_set_new(m, "controller", proto_text_or_null(bi->controller));
	return m;
}

/* Creates a data file under a free ID; its descriptor, or -1. */
static int
claim_id(char **id, const struct backup_store *bs, const char *base,
    struct err *err)
{
	struct stat st;
	char *meta;
	int i, fd, taken;

	for (i = 1; i <= ID_TRIES; i++) {
		*id = i == 1 ? xstrdup(base) : xasprintf("%s-%d", base, i);
		fd = openat(bs->fd, *id, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd == -1 && errno != EEXIST) {
			err_errno(err, ENVCTL_ESYS, errno, "cannot create "
			    "the backup '%s/%s'", bs->dir, *id);
			free(*id);
			*id = NULL;
			return -1;
		}
		if (fd >= 0) {
			meta = xasprintf("%s" JSON_SUFFIX, *id);
			taken = fstatat(bs->fd, meta, &st,
			    AT_SYMLINK_NOFOLLOW) == 0;
			free(meta);
			if (!taken)
				return fd;
			close(fd);
			unlinkat(bs->fd, *id, 0);
		}
		free(*id);
		*id = NULL;
	}
	err_set(err, ENVCTL_ESYS, "no free backup id '%s-N' in '%s'", base,
	    bs->dir);
	return -1;
}

int
backup_create(json_t **meta, struct backup_store *bs,
    const struct backup_info *bi, struct err *err)
{
	json_t *list = NULL, *m = NULL;
	char stamp[32], when[32], *base = NULL, *id = NULL, *tmp = NULL;
	char *name = NULL, *text = NULL;
	json_int_t seq = 1;
	struct tm tm;
	time_t now = time(NULL);
	int fd = -1, r, e;

	*meta = NULL;
	if ((r = backup_list(&list, NULL, bs, err)) != 0)
		goto out;
	if (json_array_size(list) > 0)
		seq = json_integer_value(json_object_get(json_array_get(list,
		    0), "seq")) + 1;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	base = xasprintf("%s-%.12s", stamp, bi->exists ? bi->sha256 :
	    "absent");
	if ((fd = claim_id(&id, bs, base, err)) == -1) {
		r = ENVCTL_ESYS;
		goto out;
	}
	if ((bi->exists && fd_write_all(fd, bi->data, bi->len) == -1) ||
	    fsync(fd) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot write the backup '%s/%s'", bs->dir, id);
		goto out;
	}
	e = close(fd);
	fd = -1;
	if (e == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot write the backup '%s/%s'", bs->dir, id);
		goto out;
	}
	m = meta_json(bi, id, seq, when);
	text = json_dumps(m, JSON_INDENT(2));
	tmp = xasprintf("%s" TMP_SUFFIX, id);
	name = xasprintf("%s" JSON_SUFFIX, id);
	fd = openat(bs->fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC | O_NOCTTY, 0600);
	if (fd == -1 || fd_write_all(fd, text, strlen(text)) == -1 ||
	    fd_write_all(fd, "\n", 1) == -1 || fsync(fd) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot write the "
		    "backup metadata '%s/%s'", bs->dir, name);
		goto out;
	}
	e = close(fd);
	fd = -1;
	if (e == -1 || renameat(bs->fd, tmp, bs->fd, name) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot write the "
		    "backup metadata '%s/%s'", bs->dir, name);
		goto out;
	}
	if (fsync(bs->fd) == -1 && errno != EINVAL) {
		r = err_errno(err, ENVCTL_ESYS, errno,
		    "cannot sync the backup directory '%s'", bs->dir);
		unlinkat(bs->fd, name, 0);
	}
out:
	if (fd >= 0)
		close(fd);
	if (r != 0 && tmp != NULL)
		unlinkat(bs->fd, tmp, 0);
	if (r != 0 && id != NULL)
		unlinkat(bs->fd, id, 0);
	json_decref(list);
	if (r != 0)
		json_decref(m);
	else {
		json_array_insert(bs->list, 0, m);
		*meta = m;
	}
	free(base);
	free(id);
	free(tmp);
	free(name);
	free(text);
	return r;
}

/* 1 when backup meta holds what bi describes (see same_version()). */
static int
holds(const struct backup_store *bs, const json_t *meta,
    const struct backup_info *bi)
{
	struct buf b;
	int same;

	if (json_is_true(json_object_get(meta, "absent")) || !bi->exists)
		return json_is_true(json_object_get(meta, "absent")) &&
		    !bi->exists;
	if (json_integer_value(json_object_get(meta, "size")) !=
	    (json_int_t)bi->len ||
	    json_integer_value(json_object_get(meta, "mode")) !=
	    (json_int_t)(bi->mode & 07777) ||
	    json_integer_value(json_object_get(meta, "uid")) !=
	    (json_int_t)bi->uid ||
	    json_integer_value(json_object_get(meta, "gid")) !=
	    (json_int_t)bi->gid)
		return 0;
	buf_init(&b, ENVCTL_TARGET_MAX);
	same = backup_load(&b, bs, meta, NULL) == 0 && b.len == bi->len &&
	    (b.len == 0 || memcmp(b.data, bi->data, b.len) == 0);
	buf_release(&b);
	return same;
}

int
backup_save(json_t **meta, int *made, struct backup_store *bs,
    const struct backup_info *bi, struct err *err)
{
	json_t *list = NULL;
	int r;

	*meta = NULL;
	*made = 0;
	if ((r = backup_list(&list, NULL, bs, err)) != 0)
		return r;
	/*
	 * Only the newest counts: a version that came back after another
	 * is a new entry of the history, and pruning drops its older copy.
	 */
	if (json_array_size(list) > 0 && holds(bs, json_array_get(list, 0),
	    bi)) {
		*meta = json_incref(json_array_get(list, 0));
		json_decref(list);
		return 0;
	}
	json_decref(list);
	if ((r = backup_create(meta, bs, bi, err)) == 0)
		*made = 1;
	return r;
}
