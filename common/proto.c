/* proto.c - the wire protocol between envctl and envctl-agent (see proto.h). */
#include "proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "strutil.h"
#include "xmalloc.h"

#define HDRLEN	4

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
proto_encode(struct buf *out, const json_t *msg, struct err *err)
{
	unsigned char hdr[HDRLEN];
	char *s = NULL;
	size_t len;
	int r = 0;

	if (!json_is_object(msg))
		return err_set(err, ENVCTL_EINVALID,
		    "message is not a JSON object");
	if ((s = json_dumps(msg, JSON_COMPACT)) == NULL) {
		r = err_set(err, ENVCTL_EINVALID,
		    "cannot encode message as JSON");
		goto out;
	}
	len = strlen(s);
	if (len > ENVCTL_PROTO_MAX) {
		r = err_set(err, ENVCTL_ETOOBIG,
		    "message of %zu bytes exceeds the %u-byte frame limit",
		    len, ENVCTL_PROTO_MAX);
		goto out;
	}
	if (buf_grow(out, HDRLEN + len) != 0) {
		r = err_set(err, ENVCTL_ETOOBIG,
		    "message of %zu bytes does not fit the output buffer", len);
		goto out;
	}
	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	buf_add(out, hdr, HDRLEN);
	buf_add(out, s, len);
out:
	free(s);
	return r;
}

/* Removes the first n bytes of b. */
static void
consume(struct buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

static const char *
json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		return "null";
	default:
		return "object";
	}
}

int
proto_decode(json_t **msg, struct buf *in, struct err *err)
{
	const unsigned char *p = (const unsigned char *)in->data;
	json_error_t jerr;
	json_t *v;
	uint32_t n;
	int r = 1;

	*msg = NULL;
	if (in->len < HDRLEN)
		return 0;
	n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
	if (n > ENVCTL_PROTO_MAX)
		return err_set(err, ENVCTL_ETOOBIG,
		    "frame of %lu bytes exceeds the %u-byte limit",
		    (unsigned long)n, ENVCTL_PROTO_MAX);
	if (in->len - HDRLEN < n)
		return 0;
	if (n == 0) {
		consume(in, HDRLEN);
		return err_set(err, ENVCTL_EPARSE, "empty frame");
	}
	v = json_loadb(in->data + HDRLEN, n, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, &jerr);
	consume(in, HDRLEN + n);
	if (v == NULL) {
		r = err_set(err, ENVCTL_EPARSE, "bad JSON in frame: %s "
		    "at byte %d", jerr.text, jerr.position);
		goto out;
	}
	if (!json_is_object(v)) {
		r = err_set(err, ENVCTL_EPARSE,
		    "frame holds a JSON %s, not an object", json_kind(v));
		json_decref(v);
		goto out;
	}
	*msg = v;
out:
	return r;
}

void
proto_b64_encode(struct buf *out, const void *data, size_t len)
{
	const unsigned char *p = data;
	char q[4];
	uint32_t v;
	size_t i;

	buf_grow(out, (len + 2) / 3 * 4);
	for (i = 0; i + 3 <= len; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		q[0] = b64chars[v >> 18];
		q[1] = b64chars[(v >> 12) & 63];
		q[2] = b64chars[(v >> 6) & 63];
		q[3] = b64chars[v & 63];
		buf_add(out, q, 4);
	}
	if (i == len)
		return;
	v = (uint32_t)p[i] << 16;
	if (i + 1 < len)
		v |= (uint32_t)p[i + 1] << 8;
	q[0] = b64chars[v >> 18];
	q[1] = b64chars[(v >> 12) & 63];
	q[2] = i + 1 < len ? b64chars[(v >> 6) & 63] : '=';
	q[3] = '=';
	buf_add(out, q, 4);
}

static int
b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
proto_b64_decode(struct buf *out, const char *s, size_t len, struct err *err)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char o[3];
	size_t i, j, oldlen = out->len;
	int d[4], pad, r = 0;
	uint32_t v;

	if (len % 4 != 0)
		return err_set(err, ENVCTL_EPARSE,
		    "base64 length %zu is not a multiple of 4", len);
	for (i = 0; i < len; i += 4) {
		pad = 0;
		for (j = 0; j < 4; j++) {
			if (p[i + j] == '=' && i + 4 == len && j >= 2) {
				d[j] = 0;
				pad++;
				continue;
			}
			if (pad > 0 || (d[j] = b64val(p[i + j])) < 0) {
				r = err_set(err, ENVCTL_EPARSE,
				    "invalid base64 at byte %zu", i + j);
				goto out;
			}
		}
		v = (uint32_t)d[0] << 18 | (uint32_t)d[1] << 12 |
		    (uint32_t)d[2] << 6 | (uint32_t)d[3];
		/* Pad bits must be zero, so each input has one encoding. */
		if ((pad == 1 && (v & 0xff) != 0) ||
		    (pad == 2 && (v & 0xffff) != 0)) {
			r = err_set(err, ENVCTL_EPARSE,
			    "invalid base64 at byte %zu", i + 3 - pad);
			goto out;
		}
		o[0] = (unsigned char)(v >> 16);
		o[1] = (unsigned char)(v >> 8);
		o[2] = (unsigned char)v;
		if (buf_add(out, o, 3 - (size_t)pad) != 0) {
			r = err_set(err, ENVCTL_ETOOBIG,
			    "decoded base64 is larger than %zu bytes",
			    out->cap);
			goto out;
		}
	}
out:
	if (r != 0)
		buf_truncate(out, oldlen);
	return r;
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when invalid or NUL. */
static size_t
utf8_seqlen(const char *p, size_t avail)
{
	const char *why;
	uint32_t c;

	return p[0] == '\0' ? 0 : str_utf8_decode(p, avail, &c, &why);
}

json_t *
proto_text(const char *s, size_t len)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *v;
	size_t i = 0, n;

	while (i < len) {
		if ((n = utf8_seqlen(s + i, len - i)) == 0) {
			buf_add(&b, "\xef\xbf\xbd", 3);
			i++;
		} else {
			buf_add(&b, s + i, n);
			i += n;
		}
	}
	v = json_stringn(b.data, b.len);
	buf_release(&b);
	return v;
}

json_t *
proto_text_or_null(const char *s)
{
	return s != NULL ? proto_text(s, strlen(s)) : json_null();
}

json_t *
proto_error_reply(json_int_t id, const struct err *err)
{
	struct buf msg = ENVCTL_BUF_INIT;
	json_t *reply;
	int code = ENVCTL_EREMOTE;

	if (err != NULL && err->code != 0) {
		code = err->code;
		if (err->path != NULL) {
			buf_addstr(&msg, err->path);
			if (err->line > 0)
				buf_addf(&msg, ":%d", err->line);
			if (err->line > 0 && err->col > 0)
				buf_addf(&msg, ":%d", err->col);
			buf_addstr(&msg, ": ");
		}
		buf_addstr(&msg, err->msg != NULL ? err->msg :
		    err_codename(code));
		if (err->cause != 0)
			buf_addf(&msg, ": %s", strerror(err->cause));
	} else
		buf_addstr(&msg, "unknown error");
	reply = json_object();
	json_object_set_new(reply, "id", json_integer(id));
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "code", json_string(err_codename(code)));
	json_object_set_new(reply, "message", proto_text(msg.data, msg.len));
	buf_release(&msg);
	return reply;
}

/* The ENVCTL_E* code called name, or ENVCTL_EREMOTE. */
static int
code_byname(const char *name)
{
	int code;

	for (code = -1; strcmp(err_codename(code), "EUNKNOWN") != 0; code--)
		if (strcmp(err_codename(code), name) == 0)
			return code;
	return ENVCTL_EREMOTE;
}

int
proto_reply_error(const json_t *reply, struct err *err)
{
	const json_t *ok, *code, *msg;
	int c;

	ok = json_object_get(reply, "ok");
	if (!json_is_boolean(ok))
		return err_set(err, ENVCTL_EPARSE, "reply has no boolean 'ok'");
	if (json_is_true(ok))
		return 0;
	code = json_object_get(reply, "code");
	msg = json_object_get(reply, "message");
	c = json_is_string(code) ? code_byname(json_string_value(code)) :
	    ENVCTL_EREMOTE;
	if (json_is_string(msg))
		return err_set(err, c, "%s", json_string_value(msg));
	return err_set(err, c, "agent reported %s", json_is_string(code) ?
	    json_string_value(code) : "an error without a code");
}

json_t *
proto_b64_json(const void *data, size_t len)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *s;

	proto_b64_encode(&b, data, len);
	s = json_stringn(b.data, b.len);
	buf_wipe(&b);
	return s;
}
