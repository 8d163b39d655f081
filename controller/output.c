/* output.c - the only place envctl prints (see output.h). */
#include "output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/fdio.h"

int
out_write(const char *data, size_t len)
{
	return fd_write_all(STDOUT_FILENO, data, len) == 0 ? 0 : ENVCTL_ESYS;
}

static void	vprint(int, const char *, va_list)
		    __attribute__((format(printf, 2, 0)));

static void
vprint(int fd, const char *fmt, va_list ap)
{
	struct buf b = ENVCTL_BUF_INIT;

	buf_vaddf(&b, fmt, ap);
	fd_write_all(fd, b.data, b.len);
	buf_release(&b);
}

void
out_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(STDOUT_FILENO, fmt, ap);
	va_end(ap);
}

void
out_json(json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));

	if (text != NULL)
		out_printf("%s\n", text);
	free(text);
	json_decref(doc);
}

void
out_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(STDERR_FILENO, fmt, ap);
	va_end(ap);
}

void
out_errors(const struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;

	err_format(err, &b);
	fd_write_all(STDERR_FILENO, b.data, b.len);
	buf_release(&b);
}

void
out_errors_grouped(const struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;

	/* Five names say "many hosts" without flooding a terminal. */
	err_format_grouped(err, &b, 5);
	fd_write_all(STDERR_FILENO, b.data, b.len);
	buf_release(&b);
}
