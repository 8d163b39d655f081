/*
 * diff.h - unified diffs (diff -u format) by Myers' O(ND) algorithm.
 *
 * Lines end at '\n' only; every other byte (NUL, CR, invalid UTF-8) is
 * data, and a last line without '\n' differs from the same text with one.
 * The script is found by E. W. Myers' 1986 algorithm (middle snake, divide
 * and conquer, linear space), written from the paper.  Inputs are borrowed
 * and never changed; each is capped at ENVCTL_DIFF_MAX bytes.  No global
 * state: thread-safe.
 *
 * Bound.  Let n be the number of lines of both inputs left once the common
 * leading and trailing lines and the lines that occur in only one input are
 * set aside, and D the fewest '-' plus '+' lines that turn a into b.  All
 * the middle-snake searches together may do ENVCTL_DIFF_WORK(n) units of
 * work (a diagonal visited or a line compared); each stops after
 * ENVCTL_DIFF_DCAP rounds, or fewer: one round per line of its box out of
 * what is left of the budget.  A stopped search splits where it got
 * furthest; once the budget is spent, what remains is all changed.  So:
 *   - the script is minimal (D changed lines) when no search stopped,
 *     which holds whenever D <= 2 * ENVCTL_DIFF_DCAP and the work stays
 *     below ENVCTL_DIFF_WORK(n) - ENVCTL_DIFF_DCAP * n;
 *   - it is always valid, and never has more changed lines than the two
 *     inputs have between their common leading and trailing lines;
 *   - time is O(ENVCTL_DIFF_WORK(n) + input bytes), space O(input lines)
 *     (two 8 MiB files of random lines over 4 values: about 1.5 s).
 */
#ifndef ENVCTL_CONTROLLER_DIFF_H
#define ENVCTL_CONTROLLER_DIFF_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct err;

/* Largest input accepted, per side. */
#define ENVCTL_DIFF_MAX	((size_t)16 * 1024 * 1024)

/* Most rounds (edits from each end) one middle-snake search may take. */
#define ENVCTL_DIFF_DCAP	1024

/* Work budget of one diff of n compared lines (about a second at most). */
#define ENVCTL_DIFF_WORK(n)	(((uint64_t)1 << 26) + 4 * (uint64_t)(n))

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
