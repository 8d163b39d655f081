/*
 * upload.c - conn_upload() through SFTP (see upload.h).
 *
 * Why not SFTP for everything: libssh 0.10 cannot rename over an existing
 * file, and SFTP can neither fsync a directory nor run under sudo; the
 * agent does those.  Uploading the agent itself is all SFTP is used for.
 */
#include "controller/ssh/upload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/ssh/conn.h"

/*
 * libssh 0.10 waits for the status of every SFTP write: one round trip
 * each.  A server that announces limits@openssh.com (OpenSSH 8.6+) takes
 * writes of up to its 256 KiB message size less 1 KiB of header room,
 * which cuts the round trips of an agent upload eightfold.
 */
#define ENVCTL_CONN_SFTP_BIG	(256 * 1024 - 1024)

static int
upload_fail(struct host_conn *c, int code, struct err *err, const char *fmt,
    ...)
    __attribute__((format(printf, 4, 5)));

/* Formats the detail, then lets conn_fail() map the SFTP status. */
static int
upload_fail(struct host_conn *c, int code, struct err *err, const char *fmt,
    ...)
{
	char *detail;
	va_list ap;
	int st, rc;

	st = c->sftp != NULL ? sftp_get_error(c->sftp) : -1;
	va_start(ap, fmt);
	detail = xvasprintf(fmt, ap);
	va_end(ap);
	rc = conn_fail(c, code, st, err, "%s", detail);
	free(detail);
	return rc;
}

static int
upload_start(struct host_conn *c, struct err *err)
{
	int rc;

	if (c->sftp != NULL)
		return 0;
	if ((c->sftp = sftp_new(c->session)) == NULL)
		return conn_fail(c, ENVCTL_EREMOTE, -1, err,
		    "cannot start SFTP");
	c->stats.sftp_sessions++;
	if (sftp_init(c->sftp) != SSH_OK) {
		rc = upload_fail(c, ENVCTL_EREMOTE, err, "cannot start SFTP");
		sftp_free(c->sftp);
		c->sftp = NULL;
		return rc;
	}
	return 0;
}

static bool
upload_is_dir(struct host_conn *c, const char *path)
{
	sftp_attributes a = sftp_stat(c->sftp, path);
	bool dir = a != NULL && a->type == SSH_FILEXFER_TYPE_DIRECTORY;

	sftp_attributes_free(a);
	return dir;
}

/* mkdir -p: every missing component of dir is made with mode 0700. */
static int
upload_mkdirs(struct host_conn *c, const char *dir, struct err *err)
{
	char *path = xstrdup(dir);
	size_t len = strlen(path), i;
	int rc = 0;

	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (upload_is_dir(c, path))
		goto out;
	for (i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/')
			continue;
		path[i] = '\0';
		if (sftp_mkdir(c->sftp, path, 0700) != 0 &&
		    !upload_is_dir(c, path)) {
			rc = upload_fail(c, ENVCTL_EREMOTE, err,
			    "cannot create directory '%s'", path);
			goto out;
		}
		if (i < len)
			path[i] = '/';
		conn_step_progress(c);
	}
out:
	free(path);
	return rc;
}

int
conn_upload(struct host_conn *c, const char *dir, const char *name,
    const void *data, size_t len, int mode, struct err *err)
{
	const char *p = data;
	unsigned char rnd[6];
	char *dst = NULL, *tmp = NULL;
	sftp_file f = NULL;
	sftp_attributes a;
	size_t off = 0, n, chunk;
	ssize_t w;
	int rc;

	if ((rc = conn_usable(c, err)) != 0)
		return rc;
	dst = xasprintf("%s/%s", dir, name);
	conn_step_begin(c, "uploading '%s'", dst);
	if ((rc = upload_start(c, err)) != 0 ||
	    (rc = upload_mkdirs(c, dir, err)) != 0)
		goto out;
	if (getentropy(rnd, sizeof(rnd)) != 0) {
		rc = err_errno(err, ENVCTL_ESYS, errno, "getentropy");
		goto out;
	}
	tmp = xasprintf("%s/.%s.tmp-%02x%02x%02x%02x%02x%02x", dir, name,
	    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	/* Created with its mode (less the server's umask): no chmod trip. */
	if ((f = sftp_open(c->sftp, tmp, O_WRONLY | O_CREAT | O_EXCL,
	    (mode_t)mode)) == NULL) {
		rc = upload_fail(c, ENVCTL_EREMOTE, err, "cannot create '%s'",
		    tmp);
		free(tmp);
		tmp = NULL;	/* not ours: never remove it */
		goto out;
	}
	chunk = sftp_extension_supported(c->sftp, "limits@openssh.com",
	    "1") ? ENVCTL_CONN_SFTP_BIG : ENVCTL_CONN_CHUNK;
	while (off < len) {
		n = len - off < chunk ? len - off : chunk;
		if ((w = sftp_write(f, p + off, n)) <= 0) {
			rc = upload_fail(c, ENVCTL_EREMOTE, err,
			    "cannot write '%s'", tmp);
			goto out;
		}
		off += (size_t)w;
		conn_step_progress(c);
	}
	rc = sftp_close(f);
	f = NULL;
	if (rc != SSH_NO_ERROR) {
		rc = upload_fail(c, ENVCTL_EREMOTE, err, "cannot write '%s'",
		    tmp);
		goto out;
	}
	if (sftp_rename(c->sftp, tmp, dst) != 0) {
		/* libssh 0.10 cannot replace: keep the existing file. */
		if ((a = sftp_stat(c->sftp, dst)) == NULL) {
			rc = upload_fail(c, ENVCTL_EREMOTE, err,
			    "cannot rename '%s' to '%s'", tmp, dst);
			goto out;
		}
		sftp_attributes_free(a);
		if (sftp_unlink(c->sftp, tmp) != 0) {
			rc = upload_fail(c, ENVCTL_EREMOTE, err,
			    "cannot remove '%s'", tmp);
			goto out;
		}
	}
	free(tmp);
	tmp = NULL;
out:
	if (f != NULL)
		sftp_close(f);
	if (tmp != NULL && c->broken == 0)
		sftp_unlink(c->sftp, tmp);
	conn_step_end(c);
	free(tmp);
	free(dst);
	return rc;
}

