/* output.c - the only place envctl prints (see output.h). */
#include "output.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ENVCTL_ESYS;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
out_write(const char *data, size_t len)
{
	return write_all(STDOUT_FILENO, data, len);
}

static void
vprint(int fd, const char *fmt, va_list ap)
{
	struct buf b = ENVCTL_BUF_INIT;

	buf_vaddf(&b, fmt, ap);
	write_all(fd, b.data, b.len);
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
	write_all(STDERR_FILENO, b.data, b.len);
	buf_release(&b);
}

void
out_errors_grouped(const struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;

	/* Five names say "many hosts" without flooding a terminal. */
	err_format_grouped(err, &b, 5);
	write_all(STDERR_FILENO, b.data, b.len);
	buf_release(&b);
}
