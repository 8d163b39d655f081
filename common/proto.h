/*
 * proto.h - the wire protocol between envctl and envctl-agent.
 *
 * A message is a 4-byte big-endian length N followed by N bytes holding one
 * JSON object (UTF-8, jansson).  N is at most ENVCTL_PROTO_MAX; anything
 * larger is ENVCTL_ETOOBIG and ends the session.  Requests carry "op" and
 * "id"; every response echoes "id" and has "ok": true, or "ok": false with
 * "code" (an ENVCTL_E* name) and "message".  File contents travel base64
 * encoded, since they may not be UTF-8.  The schema is in docs/internals.md.
 * Pure functions on buffers: the caller owns the fds or channels.
 */
#ifndef ENVCTL_COMMON_PROTO_H
#define ENVCTL_COMMON_PROTO_H

#include <jansson.h>
#include <stddef.h>

struct buf;
struct err;

#define ENVCTL_PROTO_VERSION	1
#define ENVCTL_PROTO_MAX	(48u * 1024 * 1024)

/*
 * Appends msg (a JSON object) as one frame to out.  ENVCTL_EINVALID when
 * msg is not an object, ENVCTL_ETOOBIG past ENVCTL_PROTO_MAX or out's cap
 * (out is then unchanged).
 */
int	proto_encode(struct buf *out, const json_t *msg, struct err *err);
/*
 * Takes one frame from the front of in: returns 1 and a new reference in
 * *msg (the frame's bytes are removed from in), 0 when in holds no whole
 * frame yet, or ENVCTL_EPARSE (zero length, bad JSON, not an object: the
 * frame is removed) / ENVCTL_ETOOBIG (length above the limit: in is left
 * as it was, the stream cannot be resynchronised).
 */
int	proto_decode(json_t **msg, struct buf *in, struct err *err);
/* Appends the base64 (RFC 4648, padded) encoding of data; out has no cap. */
void	proto_b64_encode(struct buf *out, const void *data, size_t len);
/* A new JSON string holding the base64 of data (scratch memory wiped). */
json_t	*proto_b64_json(const void *data, size_t len);
/*
 * Appends the bytes s decodes to; ENVCTL_EPARSE on bad input (a length
 * that is not a multiple of 4, a byte outside the alphabet, misplaced
 * padding, non-zero pad bits), ENVCTL_ETOOBIG past out's cap.
 */
int	proto_b64_decode(struct buf *out, const char *s, size_t len,
	    struct err *err);
/*
 * Returns a new JSON string of the len bytes at s with every invalid UTF-8
 * sequence and every NUL replaced by U+FFFD: strings on the wire must be
 * valid UTF-8, and captured output or paths need not be.
 */
json_t	*proto_text(const char *s, size_t len);
/* proto_text() of a NUL-terminated s, or JSON null when s is NULL. */
json_t	*proto_text_or_null(const char *s);
/*
 * Builds {"id": id, "ok": false, "code": NAME, "message": TEXT} where TEXT
 * is err's first message with its path and cause, as one line.
 */
json_t	*proto_error_reply(json_int_t id, const struct err *err);
/* Fills err from an ok:false reply (code by name; ENVCTL_EREMOTE if
 * unknown); returns that code, or 0 when the reply has ok:true.
 * ENVCTL_EPARSE when reply has no boolean "ok". */
int	proto_reply_error(const json_t *reply, struct err *err);

#endif
