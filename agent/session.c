/* session.c - the agent's request loop (see session.h). */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "ops.h"

#define CHUNK	65536
#define HDRLEN	4

/* Waits until fd is ready (for writing when wr), as the signal mask says. */
static int
wait_fd(int fd, int wr, const struct agent_ctx *ctx)
{
	fd_set fds;

	if (fd >= FD_SETSIZE)
		return 0;	/* cannot select: let read/write block */
	FD_ZERO(&fds);
	FD_SET(fd, &fds);
	return pselect(fd + 1, wr ? NULL : &fds, wr ? &fds : NULL, NULL, NULL,
	    ctx->waitmask);
}

static int
write_all(int fd, const char *p, size_t len, const struct agent_ctx *ctx)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EAGAIN) {
				if (wait_fd(fd, 1, ctx) == -1 &&
				    errno != EINTR)
					return -1;
				continue;
			}
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Encodes and sends reply; one that cannot be encoded becomes an error. */
static int
send_reply(int out, const json_t *reply, const struct agent_ctx *ctx)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	json_t *alt;
	int r = 0;

	if (proto_encode(&b, reply, &err) != 0) {
		err_context(&err, "cannot send the reply");
		alt = ops_error_reply(json_object_get(reply, "id"), &err);
		buf_reset(&b);
		proto_encode(&b, alt, NULL);
		json_decref(alt);
	}
	if (write_all(out, b.data, b.len, ctx) == -1) {
		fprintf(stderr, "envctl-agent: cannot write a reply: %s\n",
		    strerror(errno));
		r = -1;
	}
	buf_release(&b);
	err_release(&err);
	return r;
}

/* Sends the error reply for a malformed frame and says why on stderr. */
static void
reject(int out, const json_t *id, const struct err *err,
    const struct agent_ctx *ctx)
{
	json_t *reply = ops_error_reply(id, err);

	fprintf(stderr, "envctl-agent: %s\n", err->msg);
	send_reply(out, reply, ctx);
	json_decref(reply);
}

int
session_run(int in, int out, const char *first, size_t firstlen,
    const struct agent_ctx *ctx)
{
	struct buf inbuf;
	struct err err = ENVCTL_ERR_INIT;
	json_t *req = NULL, *reply = NULL;
	const unsigned char *h;
	char chunk[CHUNK];
	ssize_t n;
	int r, status = -1;

	buf_init(&inbuf, ENVCTL_PROTO_MAX + HDRLEN + CHUNK);
	if (firstlen > 0 && buf_add(&inbuf, first, firstlen) != 0) {
		err_set(&err, ENVCTL_ETOOBIG, "the requests given with "
		    "--requests are larger than a frame");
		reject(out, NULL, &err, ctx);
		status = 2;
	}
	while (status < 0) {
		if (ctx->stop != NULL && *ctx->stop != 0) {
			status = 128 + *ctx->stop;
			break;
		}
		if ((r = proto_decode(&req, &inbuf, &err)) == 1) {
			if (ops_handle(&reply, req, ctx) != 0) {
				fprintf(stderr, "envctl-agent: %s\n",
				    json_string_value(json_object_get(reply,
				    "message")));
				status = 2;
			}
			if (send_reply(out, reply, ctx) != 0)
				status = 1;
			json_decref(req);
			json_decref(reply);
			req = reply = NULL;
			continue;
		}
		if (r < 0) {
			reject(out, NULL, &err, ctx);
			status = 2;
			break;
		}
		if (wait_fd(in, 0, ctx) == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "envctl-agent: cannot wait for "
			    "input: %s\n", strerror(errno));
			status = 1;
			break;
		}
		if ((n = read(in, chunk, sizeof(chunk))) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "envctl-agent: cannot read input: "
			    "%s\n", strerror(errno));
			status = 1;
			break;
		}
		if (n == 0 && inbuf.len == 0) {
			status = 0;
			break;
		}
		if (n == 0) {
			h = (const unsigned char *)inbuf.data;
			if (inbuf.len < HDRLEN)
				err_set(&err, ENVCTL_EPARSE, "truncated frame: "
				    "input ended after %zu header bytes",
				    inbuf.len);
			else
				err_set(&err, ENVCTL_EPARSE, "truncated frame: "
				    "input ended after %zu of %lu bytes",
				    inbuf.len - HDRLEN, (unsigned long)h[0] <<
				    24 | (unsigned long)h[1] << 16 |
				    (unsigned long)h[2] << 8 | h[3]);
			reject(out, NULL, &err, ctx);
			status = 2;
			break;
		}
		/* Cannot fail: decode keeps less than one frame buffered. */
		buf_add(&inbuf, chunk, (size_t)n);
	}
	buf_release(&inbuf);
	err_release(&err);
	return status;
}
