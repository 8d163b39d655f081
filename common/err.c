/* err.c - the error record (see err.h). */
#include "err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "strutil.h"
#include "xmalloc.h"

static const char *const names[] = {
	"OK", "EUSAGE", "EPARSE", "EINVALID", "ENOTFOUND", "ESYS", "ECONNECT",
	"EHOSTKEY", "EAUTH", "EREMOTE", "EPROBE", "ECHANGED", "EVERIFY",
	"ETOOBIG", "ETIMEOUT", "ELOCKED", "EUNSUPPORTED", "EUNDEFINED",
};

const char *
err_codename(int code)
{
	if (code > 0 || (size_t)-code >= sizeof(names) / sizeof(names[0]))
		return "EUNKNOWN";
	return names[-code];
}

static void
one_release(struct err *e)
{
	free(e->host);
	free(e->path);
	free(e->msg);
	memset(e, 0, sizeof(*e));
}

void
err_release(struct err *err)
{
	struct err *e, *next;

	if (err == NULL)
		return;
	for (e = err->next; e != NULL; e = next) {
		next = e->next;
		one_release(e);
		free(e);
	}
	one_release(err);
}

static void	fill(struct err *, int, int, const char *, int, int,
		    const char *, va_list)
		    __attribute__((format(printf, 7, 0)));

static void
fill(struct err *e, int code, int cause, const char *path, int line, int col,
    const char *fmt, va_list ap)
{
	e->code = code;
	e->cause = cause;
	e->path = path != NULL ? xstrdup(path) : NULL;
	e->line = line;
	e->col = col;
	e->msg = xvasprintf(fmt, ap);
}

int
err_set(struct err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err_release(err);
	va_start(ap, fmt);
	fill(err, code, 0, NULL, 0, 0, fmt, ap);
	va_end(ap);
	return code;
}

int
err_setat(struct err *err, int code, const char *path, int line, int col,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err_release(err);
	va_start(ap, fmt);
	fill(err, code, 0, path, line, col, fmt, ap);
	va_end(ap);
	return code;
}

const char *
err_reason(int errnum)
{
	switch (errnum) {
	case EACCES:
	case EPERM:
		return "permission denied";
	case ELOOP:
		return "too many levels of symbolic links";
	case EISDIR:
		return "not a regular file";
	case ESRCH:
		return "the process exited";
	default:
		return strerror(errnum);
	}
}

int
err_errno(struct err *err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err_release(err);
	va_start(ap, fmt);
	fill(err, code, errnum, NULL, 0, 0, fmt, ap);
	va_end(ap);
	return code;
}

int
err_vaddat(struct err *err, int code, const char *path, int line, int col,
    const char *fmt, va_list ap)
{
	struct err *e;

	if (err == NULL)
		return code;
	if (err->code == 0) {
		err_release(err);
		fill(err, code, 0, path, line, col, fmt, ap);
		return code;
	}
	for (e = err; e->next != NULL; e = e->next)
		;
	e->next = xcalloc(1, sizeof(*e));
	fill(e->next, code, 0, path, line, col, fmt, ap);
	return code;
}

int
err_addat(struct err *err, int code, const char *path, int line, int col,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vaddat(err, code, path, line, col, fmt, ap);
	va_end(ap);
	return code;
}

void
err_setpos(struct err *err, const char *path, int line, int col)
{
	struct err *e;

	if (err == NULL || err->code == 0 || path == NULL)
		return;
	for (e = err; e != NULL; e = e->next) {
		if (e->path != NULL)
			continue;
		e->path = xstrdup(path);
		e->line = line;
		e->col = col;
	}
}

void
err_sethost(struct err *err, const char *host)
{
	struct err *e;

	if (err == NULL || err->code == 0 || host == NULL)
		return;
	for (e = err; e != NULL; e = e->next)
		if (e->host == NULL)
			e->host = xstrdup(host);
}

void
err_context(struct err *err, const char *fmt, ...)
{
	struct err *e;
	va_list ap;
	char *ctx, *msg;

	if (err == NULL || err->code == 0)
		return;
	va_start(ap, fmt);
	ctx = xvasprintf(fmt, ap);
	va_end(ap);
	for (e = err; e != NULL; e = e->next) {
		msg = xasprintf("%s: %s", ctx, e->msg);
		free(e->msg);
		e->msg = msg;
	}
	free(ctx);
}

void
err_move(struct err *dst, struct err *src)
{
	struct err *e, *copy;

	if (src == NULL || src->code == 0)
		return;
	if (dst == NULL) {
		err_release(src);
		return;
	}
	if (dst->code == 0) {
		err_release(dst);
		*dst = *src;
		memset(src, 0, sizeof(*src));
		return;
	}
	for (e = dst; e->next != NULL; e = e->next)
		;
	copy = xmalloc(sizeof(*copy));
	*copy = *src;
	e->next = copy;
	memset(src, 0, sizeof(*src));
}

int
err_count(const struct err *err)
{
	int n = 0;

	if (err == NULL || err->code == 0)
		return 0;
	for (; err != NULL; err = err->next)
		n++;
	return n;
}

/*
 * Messages quote what a remote agent, a file or a name held: shown safe
 * for a terminal, and one line each as err_format() promises.
 */
static void
addvis(struct buf *out, const char *s)
{
	str_addvis(out, s, strlen(s), 0);
}

void
err_format(const struct err *err, struct buf *out)
{
	const struct err *e;

	if (err == NULL || err->code == 0)
		return;
	for (e = err; e != NULL; e = e->next) {
		if (e->host != NULL) {
			addvis(out, e->host);
			buf_addstr(out, ": ");
		}
		if (e->path != NULL) {
			addvis(out, e->path);
			if (e->line > 0)
				buf_addf(out, ":%d", e->line);
			if (e->line > 0 && e->col > 0)
				buf_addf(out, ":%d", e->col);
			buf_addstr(out, ": ");
		}
		addvis(out, e->msg != NULL ? e->msg : err_codename(e->code));
		if (e->cause != 0)
			buf_addf(out, ": %s", strerror(e->cause));
		buf_addch(out, '\n');
	}
}

/* 1 when a and b are the same problem, whatever the host. */
static int
same_problem(const struct err *a, const struct err *b)
{
	return a->code == b->code && a->cause == b->cause &&
	    a->line == b->line && a->col == b->col &&
	    (a->path == NULL) == (b->path == NULL) &&
	    (a->path == NULL || strcmp(a->path, b->path) == 0) &&
	    strcmp(a->msg != NULL ? a->msg : "", b->msg != NULL ? b->msg :
	    "") == 0;
}

void
err_format_grouped(const struct err *err, struct buf *out, size_t maxhosts)
{
	const struct err *e, *f, *g;
	struct err one;
	size_t nhosts, shown;

	if (err == NULL || err->code == 0)
		return;
	for (e = err; e != NULL; e = e->next) {
		/* Printed already with an earlier twin? */
		for (f = err; f != e; f = f->next)
			if (same_problem(f, e))
				break;
		if (f != e)
			continue;
		nhosts = 0;
		for (g = e; g != NULL; g = g->next)
			if (same_problem(g, e) && g->host != NULL)
				nhosts++;
		one = *e;
		one.next = NULL;
		if (nhosts <= 1) {
			err_format(&one, out);
			continue;
		}
		shown = 0;
		for (g = e; g != NULL && shown < maxhosts; g = g->next) {
			if (!same_problem(g, e) || g->host == NULL)
				continue;
			if (shown > 0)
				buf_addstr(out, ", ");
			addvis(out, g->host);
			shown++;
		}
		if (nhosts > shown)
			buf_addf(out, " and %zu more hosts", nhosts - shown);
		buf_addstr(out, ": ");
		one.host = NULL;
		err_format(&one, out);
	}
}
