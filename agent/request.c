/* request.c - the checks of a request's fields (see request.h). */
#include "request.h"

#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"

/* A string without a NUL byte inside. */
static int
plain_string(const json_t *v)
{
	return json_is_string(v) &&
	    strlen(json_string_value(v)) == json_string_length(v);
}

static int
absent(const json_t *v)
{
	return v == NULL || json_is_null(v);
}

int
req_interpreter(const char **out, const json_t *req, const char *op,
    struct err *err)
{
	const json_t *v = json_object_get(req, "interpreter");
	const char *s = json_string_value(v);

	*out = "python3";
	if (absent(v))
		return 0;
	if (!plain_string(v) || s[0] == '\0' ||
	    json_string_length(v) > ENVCTL_REQ_MAX_INTERP ||
	    (s[0] != '/' && strchr(s, '/') != NULL))
		return err_set(err, ENVCTL_EINVALID, "%s: 'interpreter' must "
		    "be a command name or an absolute path", op);
	*out = s;
	return 0;
}

int
req_also(const char ***out, size_t *n, const json_t *req, const char *op,
    struct err *err)
{
	const json_t *a = json_object_get(req, "also"), *v;
	const char *s;
	size_t i;

	*out = NULL;
	*n = 0;
	if (absent(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > ENVCTL_REQ_MAX_ALSO)
		return err_set(err, ENVCTL_EINVALID, "%s: 'also' must be an "
		    "array of 1 to %d interpreters", op, ENVCTL_REQ_MAX_ALSO);
	json_array_foreach(a, i, v) {
		s = json_string_value(v);
		if (!plain_string(v) || s[0] == '\0' ||
		    json_string_length(v) > ENVCTL_REQ_MAX_INTERP ||
		    (s[0] != '/' && strchr(s, '/') != NULL))
			return err_set(err, ENVCTL_EINVALID, "%s: 'also[%zu]' "
			    "must be a command name or an absolute path", op,
			    i);
	}
	*out = xcalloc(json_array_size(a) + 1, sizeof(**out));
	json_array_foreach(a, i, v)
		(*out)[(*n)++] = json_string_value(v);
	return 0;
}

int
req_path(const char **out, const json_t *v, int optional, const char *op,
    const char *key, struct err *err)
{
	*out = NULL;
	if (optional && absent(v))
		return 0;
	if (!plain_string(v) || json_string_value(v)[0] != '/')
		return err_set(err, ENVCTL_EINVALID, "%s: '%s' must be %san "
		    "absolute path", op, key, optional ? "null or " : "");
	*out = json_string_value(v);
	return 0;
}

int
req_paths(const char ***out, size_t *n, const json_t *v, size_t max,
    const char *op, const char *key, struct err *err)
{
	const json_t *p;
	size_t i;

	*out = NULL;
	*n = 0;
	if (absent(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > max)
		return err_set(err, ENVCTL_EINVALID, "%s: '%s' must be an "
		    "array of at most %zu absolute paths", op, key, max);
	*out = xcalloc(json_array_size(v) + 1, sizeof(**out));
	json_array_foreach(v, i, p) {
		if (!plain_string(p) || json_string_value(p)[0] != '/')
			return err_set(err, ENVCTL_EINVALID, "%s: %s[%zu] must "
			    "be an absolute path", op, key, i);
		(*out)[(*n)++] = json_string_value(p);
	}
	return 0;
}

int
req_int(int *out, const json_t *req, const char *key, int def, int min,
    int max, const char *op, struct err *err)
{
	const json_t *v = json_object_get(req, key);

	*out = def;
	if (absent(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return err_set(err, ENVCTL_EINVALID, "%s: '%s' must be an "
		    "integer from %d to %d", op, key, min, max);
	*out = (int)json_integer_value(v);
	return 0;
}

int
req_bool(int *out, const json_t *req, const char *key, const char *op,
    struct err *err)
{
	const json_t *v = json_object_get(req, key);

	*out = 0;
	if (absent(v))
		return 0;
	if (!json_is_boolean(v))
		return err_set(err, ENVCTL_EINVALID, "%s: '%s' must be true or "
		    "false", op, key);
	*out = json_is_true(v);
	return 0;
}

int
req_name_ok(const char *s, size_t len)
{
	return len > 0 && len <= ENVCTL_REQ_MAX_NAME && strlen(s) == len &&
	    strchr(s, '=') == NULL;
}

int
req_names(char ***out, size_t *n, const json_t *v, const char *op,
    const char *key, struct err *err)
{
	const json_t *name;
	size_t i;

	*out = NULL;
	*n = 0;
	if (absent(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > ENVCTL_REQ_MAX_VARS)
		return err_set(err, ENVCTL_EINVALID, "%s: '%s' must be an "
		    "array of at most %d names", op, key, ENVCTL_REQ_MAX_VARS);
	*out = xcalloc(json_array_size(v) + 1, sizeof(**out));
	json_array_foreach(v, i, name) {
		if (!json_is_string(name) || !req_name_ok(
		    json_string_value(name), json_string_length(name)))
			return err_set(err, ENVCTL_EINVALID, "%s: %s[%zu] is "
			    "not a variable name", op, key, i);
		(*out)[(*n)++] = (char *)json_string_value(name);
	}
	return 0;
}

int
req_sha256(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t i;

	if (!json_is_string(v) || json_string_length(v) != 64)
		return 0;
	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int
req_label(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t i, n = json_string_length(v);

	if (!json_is_string(v) || n == 0 || n > ENVCTL_REQ_LABEL_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

int
req_bytes(struct buf *b, const json_t *v, size_t cap, const char *op,
    const char *key, struct err *err)
{
	int r;

	buf_init(b, cap);
	if (!json_is_string(v))
		return err_set(err, ENVCTL_EINVALID,
		    "%s: '%s' must be a base64 string", op, key);
	r = proto_b64_decode(b, json_string_value(v), json_string_length(v),
	    NULL);
	if (r == ENVCTL_ETOOBIG)
		return err_set(err, ENVCTL_ETOOBIG, "%s: '%s' is larger than "
		    "%zu MiB", op, key, cap >> 20);
	if (r != 0)
		return err_set(err, ENVCTL_EINVALID,
		    "%s: '%s' is not valid base64", op, key);
	return 0;
}
