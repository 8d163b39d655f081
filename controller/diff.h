/*
 * diff.h - unified diffs that match GNU diff -u byte for byte.
 *
 * Lines end at '\n' only; every other byte (NUL, CR, invalid UTF-8) is
 * data.  The hunks are the ones GNU diffutils 3.8 prints for
 * `diff -a -u --label LABEL_A --label LABEL_B`, so a plan shows what an
 * operator would see with diff(1).  Inputs are borrowed and never changed;
 * each is capped at ENVCTL_DIFF_MAX bytes.  No global state: thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_DIFF_H
#define ENVCTL_CONTROLLER_DIFF_H

#include <stddef.h>

struct buf;
struct err;

/* Largest input accepted, per side. */
#define ENVCTL_DIFF_MAX	((size_t)16 * 1024 * 1024)

/*
 * Appends to out a unified diff (3 lines of context) turning a into b, with
 * headers "--- label_a" and "+++ label_b".  Nothing is appended when a and b
 * are identical.  ENVCTL_ETOOBIG when an input exceeds ENVCTL_DIFF_MAX or
 * out's cap is reached; out is then left as it was.  a or b may be NULL
 * when its length is 0.
 */
int	diff_unified(struct buf *out, const char *a, size_t alen,
	    const char *b, size_t blen, const char *label_a,
	    const char *label_b, struct err *err);

#endif
