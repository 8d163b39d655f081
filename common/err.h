/*
 * err.h - error codes and the error record every fallible call fills.
 *
 * A function that can fail returns 0 or a negative ENVCTL_E* code and takes
 * "struct err *err" last; on failure it fills err with the code, the cause
 * (errno or a library status), and where: host, path, line:col.  err may be
 * NULL when the caller only wants the code.  Passes that report every problem
 * they find (check, loaders) chain further errors with err_add*().  An err is
 * owned by one caller (one per host job); there is no global last error.
 */
#ifndef ENVCTL_COMMON_ERR_H
#define ENVCTL_COMMON_ERR_H

#include <stdarg.h>
#include <stddef.h>

struct buf;

enum envctl_code {
	ENVCTL_OK = 0,
	ENVCTL_EUSAGE = -1,	/* bad command line */
	ENVCTL_EPARSE = -2,	/* malformed input (YAML, JSON, template) */
	ENVCTL_EINVALID = -3,	/* well-formed but wrong: key, type, value */
	ENVCTL_ENOTFOUND = -4,	/* file, host, group, variable missing */
	ENVCTL_ESYS = -5,	/* a system call failed; cause holds errno */
	ENVCTL_ECONNECT = -6,
	ENVCTL_EHOSTKEY = -7,
	ENVCTL_EAUTH = -8,
	ENVCTL_EREMOTE = -9,	/* the agent reported a failure */
	ENVCTL_EPROBE = -10,	/* the interpreter probe failed */
	ENVCTL_ECHANGED = -11,	/* file changed since it was read */
	ENVCTL_EVERIFY = -12,	/* the written file did not take effect */
	ENVCTL_ETOOBIG = -13,	/* input exceeds its size cap */
	ENVCTL_ETIMEOUT = -14,
	ENVCTL_ELOCKED = -15,
	ENVCTL_EUNSUPPORTED = -16,	/* valid elsewhere, not supported here */
	ENVCTL_EUNDEFINED = -17,	/* template variable not defined */
};

struct err {
	int	 code;		/* 0 when no error is recorded */
	int	 cause;		/* errno or foreign status, 0 if none */
	char	*host;		/* NULL when not host-specific */
	char	*path;		/* file the error is about, or NULL */
	int	 line;		/* 1-based; 0 when unknown */
	int	 col;		/* 1-based; 0 when unknown */
	char	*msg;
	struct err *next;	/* further problems found in the same pass */
};

#define ENVCTL_ERR_INIT { 0, 0, NULL, NULL, 0, 0, NULL, NULL }

/* Returns a static name for code, e.g. "EPARSE". */
const char *err_codename(int code);

/* Replaces whatever err held with one error; returns code. */
int	err_set(struct err *err, int code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* As err_set, with a position in a file (line/col 0 when unknown). */
int	err_setat(struct err *err, int code, const char *path, int line,
	    int col, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
/*
 * A short reason for errno errnum, the same whichever libc built the
 * program (the agent is musl's, the tests glibc's, and their strerror()
 * texts differ): "permission denied" (EACCES, EPERM), "too many levels of
 * symbolic links" (ELOOP), "not a regular file" (EISDIR), "the process
 * exited" (ESRCH), else strerror().
 */
const char *err_reason(int errnum);
/* As err_set; cause is an errno whose strerror() ends the message. */
int	err_errno(struct err *err, int code, int errnum, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
/* Appends an error to the chain (or sets it when err is empty); returns code. */
int	err_addat(struct err *err, int code, const char *path, int line,
	    int col, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
int	err_vaddat(struct err *err, int code, const char *path, int line,
	    int col, const char *fmt, va_list ap)
	    __attribute__((format(printf, 6, 0)));
/* Sets the position on every error of the chain that has no path. */
void	err_setpos(struct err *err, const char *path, int line, int col);
/* Sets host on every error of the chain that has none. */
void	err_sethost(struct err *err, const char *host);
/* Prefixes every message of the chain with context: "CONTEXT: msg". */
void	err_context(struct err *err, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Moves src's chain to the end of dst's; src is left empty. */
void	err_move(struct err *dst, struct err *src);
/* Number of errors in the chain. */
int	err_count(const struct err *err);
/*
 * Appends the chain to out, one line each, compiler style:
 * "host: path:line:col: message: cause".
 */
void	err_format(const struct err *err, struct buf *out);
/*
 * As err_format, but errors that differ only in their host print once,
 * naming the hosts: "gpu-01, gpu-02 and 126 more hosts: path:1:2: msg"
 * (at most maxhosts names).  Order is that of first appearance.
 */
void	err_format_grouped(const struct err *err, struct buf *out,
	    size_t maxhosts);
/* Frees the chain and resets err to empty. */
void	err_release(struct err *err);

#endif
