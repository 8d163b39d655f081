/*
 * strutil.h - small string helpers shared by both programs.
 *
 * Pure functions on NUL-terminated strings, or on (pointer, length) where
 * the bytes may hold NULs; nothing here allocates except where the comment
 * says the caller frees, or into the caller's buffer.
 */
#ifndef ENVCTL_COMMON_STRUTIL_H
#define ENVCTL_COMMON_STRUTIL_H

#include <stddef.h>
#include <stdint.h>

struct buf;

/* Levenshtein distance between a and b (bytes). */
size_t	 str_distance(const char *a, const char *b);
/*
 * Returns the candidate (NULL-terminated list; the first of equals)
 * closest to word when it is close enough to be a likely typo: at most
 * half the candidate's length away, and keeping something of word (the
 * distance is less than word's length), else NULL.  The one rule of every
 * "did you mean" of envctl.
 */
const char *str_closest(const char *word, const char *const *candidates);
/* 1 when s ends with suffix. */
int	 str_endswith(const char *s, const char *suffix);
/*
 * Decodes the UTF-8 sequence at s (avail > 0 bytes): its length (1-4) and
 * the code point in *cp, or 0 and why it is invalid in *why (overlong,
 * surrogate, past U+10FFFF, truncated, stray byte).  NUL is valid.
 */
size_t	 str_utf8_decode(const char *s, size_t avail, uint32_t *cp,
	    const char **why);
/*
 * Appends code point cp (at most U+10FFFF) to b as UTF-8, in the shortest
 * form; the caller refuses what it must first (surrogates, NUL).
 */
void	 str_addutf8(struct buf *b, uint32_t cp);
/* The value of hex digit c (0-9, a-f, A-F), else -1. */
int	 str_hexval(int c);

/* str_addvis() flags. */
#define ENVCTL_VIS_TAB	0x1	/* keep tabs as they are */

/*
 * Appends len bytes of s made safe for a terminal, as OpenSSH shows what
 * a remote end sent: printable UTF-8 as it is; control characters (C0,
 * DEL, C1, line and paragraph separators, bidirectional overrides) as
 * \n, \r, \t, \xHH or \uHHHH; each byte of invalid UTF-8 as \xHH.  The
 * result is valid UTF-8 and one line.  Backslashes are kept as they are.
 */
void	 str_addvis(struct buf *out, const char *s, size_t len,
	    unsigned flags);

/*
 * Strings for one line of output made safe with str_addvis(): vis_str()
 * returns s (NULL: "") so made, in the next of ENVCTL_VIS_SLOTS buffers,
 * valid until that buffer comes round again or vis_release().
 */
#define ENVCTL_VIS_SLOTS	8

struct vis {
	char		*slot[ENVCTL_VIS_SLOTS];
	unsigned	 next;
};

#define ENVCTL_VIS_INIT	{ { NULL }, 0 }

const char *vis_str(struct vis *v, const char *s);
void	 vis_release(struct vis *v);

#endif
