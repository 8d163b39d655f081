/*
 * upload.h - putting a file on a host through SFTP.
 *
 * One SFTP session per connection, opened on first use and closed with
 * the connection.  SFTP has no timeout of its own in libssh: each request
 * is bounded by the step's timeout and the host's deadline through the
 * connection's timer (conn.h).  Errors: ETIMEOUT, ECONNECT, EREMOTE,
 * ENOTFOUND, ESYS (permission), EUNSUPPORTED, with the host name set.
 */
#ifndef ENVCTL_CONTROLLER_SSH_UPLOAD_H
#define ENVCTL_CONTROLLER_SSH_UPLOAD_H

#include <stddef.h>

struct err;
struct host_conn;

/*
 * Uploads data to dir/name: creates dir (mode 0700, parents too; relative
 * to the login directory unless absolute), creates a temporary name in dir
 * with mode (less the SFTP server's umask), writes it in chunks as large
 * as the server takes, then renames it into place.  An existing
 * dir/name is left as it is (content-addressed names); the temporary file
 * is removed on any failure the connection survives.
 */
int	conn_upload(struct host_conn *c, const char *dir, const char *name,
	    const void *data, size_t len, int mode, struct err *err);

#endif
