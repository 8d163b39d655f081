/*
 * buf.h - growable byte buffer with a size cap (git strbuf + OpenSSH sshbuf).
 *
 * data is never NULL and always NUL-terminated, yet may hold NUL bytes:
 * len is the truth.  A buffer with cap > 0 refuses to grow past cap bytes
 * and the adding call returns ENVCTL_ETOOBIG, leaving the contents as they
 * were; every buffer holding remote or user input has a cap.  buf_detach()
 * is the only way to take the memory.  Not thread-safe; one owner.
 */
#ifndef ENVCTL_COMMON_BUF_H
#define ENVCTL_COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct err;

struct buf {
	char	*data;
	size_t	 len;
	size_t	 alloc;	/* 0 while data points at the shared empty string */
	size_t	 cap;	/* 0 = no cap */
};

extern char buf_empty[];
#define ENVCTL_BUF_INIT { buf_empty, 0, 0, 0 }

/* Initialises b as empty; cap 0 means unlimited. */
void	 buf_init(struct buf *b, size_t cap);
/* Frees the memory and leaves b empty (cap kept). */
void	 buf_release(struct buf *b);
/* Empties b, keeping its memory. */
void	 buf_reset(struct buf *b);
/* Returns the data, now owned by the caller; *lenp gets len if not NULL. */
char	*buf_detach(struct buf *b, size_t *lenp);
/* Makes room for extra more bytes; ENVCTL_ETOOBIG past the cap. */
int	 buf_grow(struct buf *b, size_t extra);
int	 buf_add(struct buf *b, const void *data, size_t len);
int	 buf_addstr(struct buf *b, const char *s);
int	 buf_addch(struct buf *b, int c);
int	 buf_addf(struct buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	 buf_vaddf(struct buf *b, const char *fmt, va_list ap)
	    __attribute__((format(printf, 2, 0)));
/* Shortens b to len bytes (no-op when already shorter). */
void	 buf_truncate(struct buf *b, size_t len);
/* Overwrites the contents with zeros, then releases (for secrets). */
void	 buf_wipe(struct buf *b);
/* 1 when b holds exactly the len bytes at data. */
int	 buf_equal(const struct buf *b, const void *data, size_t len);
/*
 * Appends the whole file at path.  ENVCTL_ENOTFOUND when it does not exist,
 * ENVCTL_ESYS on other errors, ENVCTL_ETOOBIG past the cap; err names path.
 */
int	 buf_read_file(struct buf *b, const char *path, struct err *err);

#endif
