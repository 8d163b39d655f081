/*
 * request.h - the checks every agent op makes of its request's fields.
 *
 * One validator for all ops, so that what one op refuses none accepts (a
 * path with a NUL byte, a relative interpreter, an odd variable name).
 * Each returns 0 with what it found in *out, strings borrowed from the
 * request, or ENVCTL_EINVALID "OP: 'KEY' must be ..." (ENVCTL_ETOOBIG
 * for bytes past their cap); a field that is missing or null where that
 * is allowed leaves the default.  Nothing here touches the file system.
 */
#ifndef ENVCTL_AGENT_REQUEST_H
#define ENVCTL_AGENT_REQUEST_H

#include <jansson.h>
#include <stddef.h>

struct buf;
struct err;

#define ENVCTL_REQ_MAX_VARS	1024	/* variables one request names */
#define ENVCTL_REQ_MAX_NAME	256	/* bytes of a variable's name */
#define ENVCTL_REQ_MAX_INTERP	4096
#define ENVCTL_REQ_LABEL_MAX	256

/* "interpreter": a command name or an absolute path; default "python3". */
#define ENVCTL_REQ_MAX_ALSO	15
int	req_interpreter(const char **out, const json_t *req, const char *op,
	    struct err *err);
/*
 * The optional array at req's "also": further interpreters (each as
 * req_interpreter() takes one), at most ENVCTL_REQ_MAX_ALSO; *out is a new
 * array of borrowed strings (caller frees), NULL when absent.
 */
int	req_also(const char ***out, size_t *n, const json_t *req,
	    const char *op, struct err *err);
/*
 * The absolute path v (KEY in messages), without a NUL byte; a missing
 * or null v is an error unless optional (then *out is NULL).
 */
int	req_path(const char **out, const json_t *v, int optional,
	    const char *op, const char *key, struct err *err);
/*
 * An array of at most max absolute paths without NUL at v (null or
 * missing: none): *out gets a NULL-terminated array the caller frees,
 * its paths borrowed.
 */
int	req_paths(const char ***out, size_t *n, const json_t *v, size_t max,
	    const char *op, const char *key, struct err *err);
/* An integer from min to max at req's KEY, default def. */
int	req_int(int *out, const json_t *req, const char *key, int def,
	    int min, int max, const char *op, struct err *err);
/* true or false at req's KEY, default 0. */
int	req_bool(int *out, const json_t *req, const char *key,
	    const char *op, struct err *err);
/*
 * An array of at most ENVCTL_REQ_MAX_VARS variable names at v (null or
 * missing: none): *out gets a NULL-terminated array the caller frees,
 * its names borrowed.
 */
int	req_names(char ***out, size_t *n, const json_t *v, const char *op,
	    const char *key, struct err *err);
/* 1 when s (len bytes) is a variable name: 1 to MAX_NAME bytes, no '='
 * and no NUL. */
int	req_name_ok(const char *s, size_t len);
/* 1 when v is a SHA-256 in lowercase hex. */
int	req_sha256(const json_t *v);
/* 1 when v is a string of 1 to LABEL_MAX bytes, none a control byte. */
int	req_label(const json_t *v);
/* The base64 string v decoded into b (which it initialises), capped at
 * cap bytes. */
int	req_bytes(struct buf *b, const json_t *v, size_t cap, const char *op,
	    const char *key, struct err *err);

#endif
