/* check_proto.c - frames, base64 and error replies of the wire protocol. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "testutil.h"

/* 256 bytes 0x00..0xff, base64 encoded (Python's base64 module). */
static const char all256[] =
    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEy"
    "MzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2Rl"
    "ZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeY"
    "mZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrL"
    "zM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+"
    "/w==";

static json_t *
parse(const char *js)
{
	json_t *v = json_loads(js, 0, NULL);

	ck_assert_ptr_nonnull(v);
	return v;
}

/* A frame with a raw body, for inputs proto_encode() would not make. */
static void
raw_frame(struct buf *b, const char *body, size_t len)
{
	unsigned char h[4];

	h[0] = (unsigned char)(len >> 24);
	h[1] = (unsigned char)(len >> 16);
	h[2] = (unsigned char)(len >> 8);
	h[3] = (unsigned char)len;
	buf_add(b, h, 4);
	buf_add(b, body, len);
}

static void
assert_err(const struct err *err, int code, const char *msg)
{
	ck_assert_int_eq(err->code, code);
	ck_assert_str_eq(err->msg, msg);
}

START_TEST(test_roundtrip)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	json_t *in = parse("{\"op\":\"read\",\"id\":7,\"vars\":[\"A\",\"B\"],"
	    "\"path\":null,\"s\":\"caf\\u00e9 \\ud83d\\ude00\",\"n\":-1.5}");
	json_t *out = NULL;

	ck_assert_int_eq(proto_encode(&b, in, &err), 0);
	ck_assert_uint_gt(b.len, 4);
	ck_assert_uint_eq(((unsigned char)b.data[0] << 24 |
	    (unsigned char)b.data[1] << 16 | (unsigned char)b.data[2] << 8 |
	    (unsigned char)b.data[3]), b.len - 4);
	ck_assert_int_eq(proto_decode(&out, &b, &err), 1);
	ck_assert(json_equal(in, out));
	json_decref(out);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(proto_decode(&out, &b, &err), 0);
	ck_assert_ptr_null(out);
	json_decref(in);
	buf_release(&b);
	err_release(&err);
}
END_TEST

START_TEST(test_bytewise)
{
	struct buf all = ENVCTL_BUF_INIT, in = ENVCTL_BUF_INIT;
	json_t *a = parse("{\"id\":1,\"op\":\"hello\",\"protocol\":1}");
	json_t *b = parse("{\"id\":2,\"op\":\"read\",\"path\":\"/x\"}");
	json_t *out = NULL;
	size_t i, got = 0, alen;

	proto_encode(&all, a, NULL);
	alen = all.len;
	proto_encode(&all, b, NULL);
	for (i = 0; i < all.len; i++) {
		buf_addch(&in, all.data[i]);
		int r = proto_decode(&out, &in, NULL);
		if (i + 1 == alen || i + 1 == all.len) {
			ck_assert_int_eq(r, 1);
			ck_assert(json_equal(out, got == 0 ? a : b));
			json_decref(out);
			got++;
			ck_assert_uint_eq(in.len, 0);
		} else {
			ck_assert_int_eq(r, 0);
			ck_assert_ptr_null(out);
		}
	}
	ck_assert_uint_eq(got, 2);
	json_decref(a);
	json_decref(b);
	buf_release(&all);
	buf_release(&in);
}
END_TEST

START_TEST(test_two_frames)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *out = NULL, *one = parse("{\"id\":1}"), *two;

	two = parse("{\"id\":2,\"data\":\"\"}");
	proto_encode(&b, one, NULL);
	proto_encode(&b, two, NULL);
	buf_add(&b, "\0\0", 2);	/* the start of a third */
	ck_assert_int_eq(proto_decode(&out, &b, NULL), 1);
	ck_assert(json_equal(out, one));
	json_decref(out);
	ck_assert_int_eq(proto_decode(&out, &b, NULL), 1);
	ck_assert(json_equal(out, two));
	json_decref(out);
	ck_assert_int_eq(proto_decode(&out, &b, NULL), 0);
	ck_assert_uint_eq(b.len, 2);
	json_decref(one);
	json_decref(two);
	buf_release(&b);
}
END_TEST

START_TEST(test_truncated)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *out = NULL;

	buf_add(&b, "\0\0\0", 3);
	ck_assert_int_eq(proto_decode(&out, &b, NULL), 0);
	buf_reset(&b);
	raw_frame(&b, "{\"id\":1}", 8);
	buf_truncate(&b, b.len - 1);
	ck_assert_int_eq(proto_decode(&out, &b, NULL), 0);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(b.len, 11);
	buf_addch(&b, '}');
	ck_assert_int_eq(proto_decode(&out, &b, NULL), 1);
	json_decref(out);
	buf_release(&b);
}
END_TEST

START_TEST(test_oversized)
{
	struct buf b = ENVCTL_BUF_INIT, small;
	struct err err = ENVCTL_ERR_INIT;
	json_t *out = NULL, *big;
	char *s;

	/* A header just past the limit fails at once, without the body. */
	buf_add(&b, "\x03\x00\x00\x01", 4);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_ETOOBIG);
	assert_err(&err, ENVCTL_ETOOBIG,
	    "frame of 50331649 bytes exceeds the 50331648-byte limit");
	ck_assert_uint_eq(b.len, 4);
	ck_assert_ptr_null(out);
	buf_reset(&b);
	buf_add(&b, "\xff\xff\xff\xff", 4);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_ETOOBIG);
	assert_err(&err, ENVCTL_ETOOBIG,
	    "frame of 4294967295 bytes exceeds the 50331648-byte limit");
	/* Exactly the limit is a frame still coming. */
	buf_reset(&b);
	buf_add(&b, "\x03\x00\x00\x00", 4);
	ck_assert_int_eq(proto_decode(&out, &b, &err), 0);

	/* Encoding: past the frame limit, and past the buffer's cap. */
	s = xmalloc(ENVCTL_PROTO_MAX + 1);
	memset(s, 'x', ENVCTL_PROTO_MAX);
	s[ENVCTL_PROTO_MAX] = '\0';
	big = json_pack("{s:s}", "s", s);
	free(s);
	buf_reset(&b);
	ck_assert_int_eq(proto_encode(&b, big, &err), ENVCTL_ETOOBIG);
	assert_err(&err, ENVCTL_ETOOBIG, "message of 50331656 bytes exceeds "
	    "the 50331648-byte frame limit");
	ck_assert_uint_eq(b.len, 0);
	json_decref(big);
	big = parse("{\"id\":12345}");
	buf_init(&small, 10);
	ck_assert_int_eq(proto_encode(&small, big, &err), ENVCTL_ETOOBIG);
	assert_err(&err, ENVCTL_ETOOBIG,
	    "message of 12 bytes does not fit the output buffer");
	ck_assert_uint_eq(small.len, 0);
	json_decref(big);
	big = parse("[1]");
	ck_assert_int_eq(proto_encode(&b, big, &err), ENVCTL_EINVALID);
	assert_err(&err, ENVCTL_EINVALID, "message is not a JSON object");
	json_decref(big);
	buf_release(&small);
	buf_release(&b);
	err_release(&err);
}
END_TEST

START_TEST(test_bad_frames)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	json_t *out = NULL;

	raw_frame(&b, "", 0);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	assert_err(&err, ENVCTL_EPARSE, "empty frame");
	ck_assert_uint_eq(b.len, 0);

	/* A bad frame is consumed: the next one still decodes. */
	raw_frame(&b, "{\"id\":", 6);
	raw_frame(&b, "{\"id\":2}", 8);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	ck_assert_int_eq(err.code, ENVCTL_EPARSE);
	ck_assert_msg(strncmp(err.msg, "bad JSON in frame: ", 19) == 0,
	    "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "at byte 6"));
	ck_assert_ptr_null(out);
	ck_assert_int_eq(proto_decode(&out, &b, &err), 1);
	json_decref(out);

	raw_frame(&b, "[1,2]", 5);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	assert_err(&err, ENVCTL_EPARSE, "frame holds a JSON array, not an "
	    "object");
	raw_frame(&b, "\"s\"", 3);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	assert_err(&err, ENVCTL_EPARSE, "frame holds a JSON string, not an "
	    "object");
	raw_frame(&b, "{} {}", 5);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "end of file expected"));
	raw_frame(&b, "{\"a\":1,\"a\":2}", 13);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "duplicate object key"));
	raw_frame(&b, "{\"a\":\"\xff\"}", 9);
	ck_assert_int_eq(proto_decode(&out, &b, &err), ENVCTL_EPARSE);
	ck_assert_msg(strstr(err.msg, "unable to decode byte 0xff") != NULL,
	    "%s", err.msg);
	ck_assert_uint_eq(b.len, 0);
	buf_release(&b);
	err_release(&err);
}
END_TEST

START_TEST(test_b64_vectors)
{
	static const char *const v[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		buf_reset(&b);
		proto_b64_encode(&b, v[i][0], strlen(v[i][0]));
		ck_assert_str_eq(b.data, v[i][1]);
		buf_reset(&b);
		ck_assert_int_eq(proto_b64_decode(&b, v[i][1],
		    strlen(v[i][1]), NULL), 0);
		ck_assert_uint_eq(b.len, strlen(v[i][0]));
		ck_assert_str_eq(b.data, v[i][0]);
	}
	buf_release(&b);
}
END_TEST

START_TEST(test_b64_all_bytes)
{
	struct buf enc = ENVCTL_BUF_INIT, dec = ENVCTL_BUF_INIT;
	unsigned char bytes[256];
	size_t i, n;

	for (i = 0; i < 256; i++)
		bytes[i] = (unsigned char)i;
	proto_b64_encode(&enc, bytes, sizeof(bytes));
	ck_assert_str_eq(enc.data, all256);
	ck_assert_int_eq(proto_b64_decode(&dec, enc.data, enc.len, NULL), 0);
	ck_assert_uint_eq(dec.len, 256);
	ck_assert_mem_eq(dec.data, bytes, 256);
	/* Every length mod 3, from every offset. */
	for (n = 0; n < 10; n++)
		for (i = 0; i + n <= 256; i += 37) {
			buf_reset(&enc);
			buf_reset(&dec);
			proto_b64_encode(&enc, bytes + i, n);
			ck_assert_uint_eq(enc.len, (n + 2) / 3 * 4);
			ck_assert_int_eq(proto_b64_decode(&dec, enc.data,
			    enc.len, NULL), 0);
			ck_assert_uint_eq(dec.len, n);
			if (n > 0)
				ck_assert_mem_eq(dec.data, bytes + i, n);
		}
	buf_release(&enc);
	buf_release(&dec);
}
END_TEST

START_TEST(test_b64_invalid)
{
	static const char *const bad[][2] = {
		{ "Zg=", "base64 length 3 is not a multiple of 4" },
		{ "Zm9vYmFy\n", "base64 length 9 is not a multiple of 4" },
		{ "Zm9v!mFy", "invalid base64 at byte 4" },
		{ "Zm9v YmF", "invalid base64 at byte 4" },
		{ "Z===", "invalid base64 at byte 1" },
		{ "====", "invalid base64 at byte 0" },
		{ "Zg=a", "invalid base64 at byte 3" },
		{ "Zg==Zm9v", "invalid base64 at byte 2" },
		{ "Zh==", "invalid base64 at byte 1" },	/* pad bits */
		{ "Zm9=", "invalid base64 at byte 2" },
		{ "Zm8-", "invalid base64 at byte 3" },	/* base64url */
		{ "Zm8_", "invalid base64 at byte 3" },
	};
	struct buf b = ENVCTL_BUF_INIT, capped;
	struct err err = ENVCTL_ERR_INIT;
	size_t i;

	buf_addstr(&b, "kept");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(proto_b64_decode(&b, bad[i][0],
		    strlen(bad[i][0]), &err), ENVCTL_EPARSE);
		ck_assert_msg(strcmp(err.msg, bad[i][1]) == 0,
		    "'%s': got '%s', want '%s'", bad[i][0], err.msg, bad[i][1]);
		ck_assert_str_eq(b.data, "kept");	/* untouched */
	}
	/* A NUL inside the given length is a bad byte, not the end. */
	ck_assert_int_eq(proto_b64_decode(&b, "Zm\0v", 4, &err),
	    ENVCTL_EPARSE);
	assert_err(&err, ENVCTL_EPARSE, "invalid base64 at byte 2");
	buf_init(&capped, 4);
	ck_assert_int_eq(proto_b64_decode(&capped, "Zm9vYmFy", 8, &err),
	    ENVCTL_ETOOBIG);
	assert_err(&err, ENVCTL_ETOOBIG,
	    "decoded base64 is larger than 4 bytes");
	ck_assert_uint_eq(capped.len, 0);
	buf_release(&capped);
	buf_release(&b);
	err_release(&err);
}
END_TEST

START_TEST(test_text)
{
	static const struct {
		const char	*in;
		size_t		 len;
		const char	*out;
	} v[] = {
		{ "plain", 5, "plain" },
		{ "a\xff" "b", 3, "a\xef\xbf\xbd" "b" },
		{ "a\0b", 3, "a\xef\xbf\xbd" "b" },
		{ "caf\xc3\xa9", 5, "caf\xc3\xa9" },
		{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },
		/* overlong, surrogate, cut short, beyond U+10FFFF */
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xed\xa0\x80", 3,
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd"
		    "\xef\xbf\xbd\xef\xbf\xbd" },
	};
	json_t *s;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		s = proto_text(v[i].in, v[i].len);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(json_string_value(s), v[i].out);
		json_decref(s);
	}
}
END_TEST

START_TEST(test_error_reply)
{
	struct err err = ENVCTL_ERR_INIT, back = ENVCTL_ERR_INIT;
	json_t *r;
	char *s;

	err_errno(&err, ENVCTL_EPROBE, ENOENT, "cannot run '%s'", "python9");
	r = proto_error_reply(42, &err);
	s = json_dumps(r, JSON_COMPACT);
	ck_assert_str_eq(s, "{\"id\":42,\"ok\":false,\"code\":\"EPROBE\","
	    "\"message\":\"cannot run 'python9': No such file or directory\"}");
	free(s);
	ck_assert_int_eq(proto_reply_error(r, &back), ENVCTL_EPROBE);
	ck_assert_str_eq(back.msg,
	    "cannot run 'python9': No such file or directory");
	ck_assert_int_eq(back.cause, 0);
	json_decref(r);

	err_setat(&err, ENVCTL_EINVALID, "p.yaml", 3, 7, "bad %s", "key");
	r = proto_error_reply(1, &err);
	ck_assert_str_eq(json_string_value(json_object_get(r, "message")),
	    "p.yaml:3:7: bad key");
	json_decref(r);
	r = proto_error_reply(1, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "code")),
	    "EREMOTE");
	ck_assert_str_eq(json_string_value(json_object_get(r, "message")),
	    "unknown error");
	json_decref(r);
	err_release(&err);
	err_release(&back);
}
END_TEST

START_TEST(test_reply_error)
{
	struct err err = ENVCTL_ERR_INIT;
	json_t *r;
	int code;

	/* Every code's name maps back to the code. */
	for (code = ENVCTL_EUSAGE; code >= ENVCTL_EUNDEFINED; code--) {
		err_set(&err, code, "m%d", -code);
		r = proto_error_reply(5, &err);
		err_release(&err);
		ck_assert_int_eq(proto_reply_error(r, &err), code);
		ck_assert_int_eq(err.code, code);
		json_decref(r);
	}
	r = parse("{\"id\":1,\"ok\":true}");
	ck_assert_int_eq(proto_reply_error(r, &err), 0);
	json_decref(r);
	r = parse("{\"id\":1,\"ok\":false,\"code\":\"EWHATEVER\","
	    "\"message\":\"new agent\"}");
	ck_assert_int_eq(proto_reply_error(r, &err), ENVCTL_EREMOTE);
	assert_err(&err, ENVCTL_EREMOTE, "new agent");
	json_decref(r);
	r = parse("{\"id\":1,\"ok\":false,\"code\":\"ETOOBIG\"}");
	ck_assert_int_eq(proto_reply_error(r, &err), ENVCTL_ETOOBIG);
	assert_err(&err, ENVCTL_ETOOBIG, "agent reported ETOOBIG");
	json_decref(r);
	r = parse("{\"id\":1,\"ok\":false}");
	ck_assert_int_eq(proto_reply_error(r, &err), ENVCTL_EREMOTE);
	assert_err(&err, ENVCTL_EREMOTE,
	    "agent reported an error without a code");
	json_decref(r);
	r = parse("{\"id\":1,\"ok\":1}");
	ck_assert_int_eq(proto_reply_error(r, &err), ENVCTL_EPARSE);
	assert_err(&err, ENVCTL_EPARSE, "reply has no boolean 'ok'");
	json_decref(r);
	err_release(&err);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_bytewise);
	tcase_add_test(tc, test_two_frames);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_oversized);
	tcase_add_test(tc, test_bad_frames);
	tcase_add_test(tc, test_b64_vectors);
	tcase_add_test(tc, test_b64_all_bytes);
	tcase_add_test(tc, test_b64_invalid);
	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_error_reply);
	tcase_add_test(tc, test_reply_error);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
