/*
 * fuzz_proto.c - the wire protocol on bytes from the other end: frames
 * (proto_decode), base64 file contents (proto_b64_decode) and captured
 * text (proto_text), as both programs read them from the SSH channel.
 *
 * Properties: a decoded frame encodes to a frame that decodes to an equal
 * object; a frame that is refused leaves the stream consumed as proto.h
 * says; base64 that decodes re-encodes to the same text; proto_text gives
 * valid UTF-8 without NUL, as long as the input when the input was so.
 */
#include <jansson.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "controller/pylit.h"
#include "tests/fuzz/fuzz.h"

static void
frames(const uint8_t *data, size_t size)
{
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	json_t *msg, *again;
	size_t before;
	int r;

	buf_add(&in, data, size);
	for (;;) {
		before = in.len;
		r = proto_decode(&msg, &in, &err);
		if (r == 0) {
			FUZZ_ASSERT(in.len == before);
			break;
		}
		if (r < 0) {
			FUZZ_ASSERT(r == ENVCTL_EPARSE || r == ENVCTL_ETOOBIG);
			FUZZ_ASSERT(r == ENVCTL_ETOOBIG ? in.len == before :
			    in.len < before);
			err_release(&err);
			if (r == ENVCTL_ETOOBIG)
				break;
			continue;
		}
		FUZZ_ASSERT(json_is_object(msg) && in.len < before);
		buf_reset(&out);
		FUZZ_ASSERT(proto_encode(&out, msg, &err) == 0);
		FUZZ_ASSERT(proto_decode(&again, &out, &err) == 1);
		FUZZ_ASSERT(out.len == 0 && json_equal(msg, again));
		json_decref(again);
		json_decref(msg);
	}
	buf_release(&in);
	buf_release(&out);
}

static void
base64(const uint8_t *data, size_t size)
{
	struct buf dec = ENVCTL_BUF_INIT, enc = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	if (proto_b64_decode(&dec, (const char *)data, size, &err) == 0) {
		proto_b64_encode(&enc, dec.data, dec.len);
		FUZZ_ASSERT(enc.len == size &&
		    memcmp(enc.data, data, size) == 0);
	} else
		err_release(&err);
	/* Any bytes survive encode and decode. */
	buf_reset(&enc);
	buf_reset(&dec);
	proto_b64_encode(&enc, data, size);
	FUZZ_ASSERT(proto_b64_decode(&dec, enc.data, enc.len, &err) == 0);
	FUZZ_ASSERT(dec.len == size && memcmp(dec.data, data, size) == 0);
	buf_release(&dec);
	buf_release(&enc);
}

static void
text(const uint8_t *data, size_t size)
{
	json_t *t = proto_text((const char *)data, size);
	const char *s = json_string_value(t);
	size_t len = json_string_length(t);

	FUZZ_ASSERT(s != NULL && memchr(s, '\0', len) == NULL);
	FUZZ_ASSERT(pylit_utf8_valid(s, len, NULL));
	if (memchr(data, '\0', size) == NULL &&
	    pylit_utf8_valid((const char *)data, size, NULL))
		FUZZ_ASSERT(len == size && memcmp(s, data, size) == 0);
	json_decref(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	frames(data, size);
	base64(data, size);
	text(data, size);
	return 0;
}
