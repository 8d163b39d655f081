/* buf.c - growable byte buffer with a size cap (see buf.h). */
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "xmalloc.h"

char buf_empty[1];

void
buf_init(struct buf *b, size_t cap)
{
	b->data = buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

void
buf_release(struct buf *b)
{
	if (b->alloc > 0)
		free(b->data);
	buf_init(b, b->cap);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->alloc > 0)
		b->data[0] = '\0';
}

char *
buf_detach(struct buf *b, size_t *lenp)
{
	char *p;

	if (lenp != NULL)
		*lenp = b->len;
	p = b->alloc > 0 ? b->data : xstrdup("");
	buf_init(b, b->cap);
	return p;
}

int
buf_grow(struct buf *b, size_t extra)
{
	size_t want, n;

	if (extra > SIZE_MAX / 2 - b->len)
		return ENVCTL_ETOOBIG;
	want = b->len + extra;
	if (b->cap > 0 && want > b->cap)
		return ENVCTL_ETOOBIG;
	if (want + 1 <= b->alloc)
		return 0;
	n = b->alloc < 64 ? 64 : b->alloc;
	while (n < want + 1)
		n *= 2;
	if (b->alloc == 0) {
		b->data = xmalloc(n);
		b->data[0] = '\0';
	} else
		b->data = xreallocarray(b->data, n, 1);
	b->alloc = n;
	return 0;
}

int
buf_add(struct buf *b, const void *data, size_t len)
{
	int r;

	if (len == 0)
		return 0;
	if ((r = buf_grow(b, len)) != 0)
		return r;
	memmove(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_addstr(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_addch(struct buf *b, int c)
{
	char ch = (char)c;

	return buf_add(b, &ch, 1);
}

int
buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, r;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return ENVCTL_EINVALID;
	if ((r = buf_grow(b, (size_t)n)) != 0)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void
buf_truncate(struct buf *b, size_t len)
{
	if (len >= b->len)
		return;
	b->len = len;
	b->data[len] = '\0';
}

void
buf_wipe(struct buf *b)
{
	if (b->alloc > 0)
		explicit_wipe(b->data, b->alloc);
	buf_release(b);
}

int
buf_equal(const struct buf *b, const void *data, size_t len)
{
	return b->len == len && (len == 0 || memcmp(b->data, data, len) == 0);
}

int
buf_read_file(struct buf *b, const char *path, struct err *err)
{
	char chunk[8192];
	ssize_t n;
	int fd, r = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		r = errno == ENOENT ? ENVCTL_ENOTFOUND : ENVCTL_ESYS;
		err_errno(err, r, errno, "cannot open '%s'", path);
		return r;
	}
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = err_errno(err, ENVCTL_ESYS, errno,
			    "cannot read '%s'", path);
			break;
		}
		if (buf_add(b, chunk, (size_t)n) != 0) {
			r = err_set(err, ENVCTL_ETOOBIG,
			    "'%s' is larger than %zu bytes", path, b->cap);
			break;
		}
	}
	close(fd);
	return r;
}
