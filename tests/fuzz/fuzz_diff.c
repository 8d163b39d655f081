/*
 * fuzz_diff.c - diff_unified() on two arbitrary texts: the input split at
 * its first NUL into a and b (later NULs stay in b), or, without a NUL, a
 * and a copy of a with its lines in reverse order and every third dropped.
 *
 * Properties, in both directions (a to b, then b to a): the call never
 * fails, the inputs being far below ENVCTL_DIFF_MAX; identical inputs give
 * no output, others "--- a/f\n+++ b/f\n" and at least one hunk; and the
 * diff, applied to a by the strict applier below, gives b byte for byte.
 * The applier checks each hunk header's counts against its body, context
 * and '-' lines against a (as bytes, NUL and CR included), hunks in order
 * and not overlapping, and diff -u's context: min(3, lines there)
 * unchanged lines before the first change and after the last, at most
 * 2 * 3 between two changes of a hunk, at least 2 * 3 + 1 between two
 * hunks.  The '-' plus '+' lines are at most diff.h's trivial bound: the
 * lines of a and b between their common leading and trailing lines.  The
 * cap-* inputs are beyond diff.h's cost caps (small alphabets, all lines
 * different): they must stay valid and fast.
 */
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/diff.h"
#include "tests/fuzz/fuzz.h"
#include "tests/lines.h"

/* ENVCTL_DIFF_CONTEXT in controller/diff.c. */
#define CONTEXT		3

static const char header[] = "--- a/f\n+++ b/f\n";
static const char nonl[] = "\\ No newline at end of file\n";

/* The diff being applied and where the applier is in it. */
struct patch {
	const char	*p;
	size_t		 len;
	size_t		 pos;
	size_t		 changed;	/* '-' and '+' lines so far */
};

/*
 * One body line: its mark, its text without the '\n', and whether the file
 * has that '\n' (no "\ No newline at end of file" follows).
 */
struct bline {
	char		 mark;
	const char	*text;
	size_t		 len;
	int		 complete;
};

static int
line_complete(const struct lines *l, size_t i)
{
	return l->s[l->off[i + 1] - 1] == '\n';
}

/* b when the input has no NUL: a's lines reversed, every third dropped. */
static void
mutate(struct buf *b, const char *a, size_t alen)
{
	struct lines l;
	size_t i;

	lines_split(&l, a, alen);
	for (i = l.n; i-- > 0;)
		if (i % 3 != 2)
			buf_add(b, a + l.off[i], line_len(&l, i));
	free(l.off);
}

static void
expect(struct patch *pp, const char *s)
{
	size_t n = strlen(s);

	FUZZ_ASSERT(pp->len - pp->pos >= n &&
	    memcmp(pp->p + pp->pos, s, n) == 0);
	pp->pos += n;
}

/* A decimal number as %d prints it: no sign, no leading zero. */
static size_t
number(struct patch *pp)
{
	size_t v = 0, digits = 0;
	char c;

	while (pp->pos < pp->len && (c = pp->p[pp->pos]) >= '0' &&
	    c <= '9') {
		FUZZ_ASSERT(digits == 0 || v != 0);
		FUZZ_ASSERT(digits < 10);
		v = v * 10 + (size_t)(c - '0');
		digits++;
		pp->pos++;
	}
	FUZZ_ASSERT(digits > 0);
	return v;
}

/* "S[,C]" into the first line's 0-based index and the count. */
static void
range(struct patch *pp, size_t *firstp, size_t *countp)
{
	size_t start;

	start = number(pp);
	*countp = 1;
	if (pp->pos < pp->len && pp->p[pp->pos] == ',') {
		pp->pos++;
		*countp = number(pp);
	}
	/* With a count of 0, S is the line the hunk goes after. */
	if (*countp > 0) {
		FUZZ_ASSERT(start >= 1);
		*firstp = start - 1;
	} else
		*firstp = start;
}

static void
body_line(struct patch *pp, struct bline *bl)
{
	const char *nl;
	size_t rest = pp->len - pp->pos;

	FUZZ_ASSERT(rest >= 2);
	bl->mark = pp->p[pp->pos];
	bl->text = pp->p + pp->pos + 1;
	nl = memchr(bl->text, '\n', rest - 1);
	FUZZ_ASSERT(nl != NULL);
	bl->len = (size_t)(nl - bl->text);
	pp->pos += 1 + bl->len + 1;
	bl->complete = 1;
	rest = pp->len - pp->pos;
	if (rest >= sizeof(nonl) - 1 &&
	    memcmp(pp->p + pp->pos, nonl, sizeof(nonl) - 1) == 0) {
		bl->complete = 0;
		pp->pos += sizeof(nonl) - 1;
	}
}

/* Whether body line bl is line i of l, '\n' or its absence included. */
static int
same_line(const struct bline *bl, const struct lines *l, size_t i)
{
	int complete = line_complete(l, i);

	return bl->complete == complete &&
	    bl->len == line_len(l, i) - (size_t)complete &&
	    memcmp(bl->text, l->s + l->off[i], bl->len) == 0;
}

static void
add_line(struct buf *r, const struct bline *bl)
{
	buf_add(r, bl->text, bl->len);
	if (bl->complete)
		buf_addch(r, '\n');
}

/*
 * Applies one hunk at pp to a, whose lines before *aip are already in r;
 * *rlinesp counts r's lines, *trailp has the previous hunk's trailing
 * context (-1 before the first hunk).
 */
static void
hunk(struct patch *pp, const struct lines *a, size_t *aip, struct buf *r,
    size_t *rlinesp, int *trailp)
{
	struct bline bl;
	size_t ofirst, ocount, nfirst, ncount, odone = 0, ndone = 0, i;
	size_t run = 0, lead = 0, changes = 0;

	expect(pp, "@@ -");
	range(pp, &ofirst, &ocount);
	expect(pp, " +");
	range(pp, &nfirst, &ncount);
	expect(pp, " @@\n");
	FUZZ_ASSERT(ocount + ncount > 0);
	FUZZ_ASSERT(ofirst >= *aip && ofirst + ocount <= a->n);
	for (i = *aip; i < ofirst; i++)
		buf_add(r, a->s + a->off[i], line_len(a, i));
	*rlinesp += ofirst - *aip;
	FUZZ_ASSERT(nfirst == *rlinesp);

	i = ofirst;
	while (odone < ocount || ndone < ncount) {
		body_line(pp, &bl);
		FUZZ_ASSERT(bl.mark == ' ' || bl.mark == '-' ||
		    bl.mark == '+');
		switch (bl.mark) {
		case ' ':
			FUZZ_ASSERT(odone < ocount && ndone < ncount);
			FUZZ_ASSERT(same_line(&bl, a, i));
			add_line(r, &bl);
			i++;
			odone++;
			ndone++;
			run++;
			continue;
		case '-':
			FUZZ_ASSERT(odone < ocount);
			FUZZ_ASSERT(same_line(&bl, a, i));
			i++;
			odone++;
			break;
		default:
			FUZZ_ASSERT(ndone < ncount);
			add_line(r, &bl);
			ndone++;
			break;
		}
		/* A change: check the unchanged run before it. */
		pp->changed++;
		if (changes++ == 0)
			lead = run;
		else
			FUZZ_ASSERT(run <= 2 * CONTEXT);
		run = 0;
	}
	FUZZ_ASSERT(changes > 0);
	/* CONTEXT lines either side, fewer only at an end. */
	FUZZ_ASSERT(lead <= CONTEXT && run <= CONTEXT);
	FUZZ_ASSERT(lead == CONTEXT || ofirst == 0);
	FUZZ_ASSERT(run == CONTEXT || i == a->n);
	/* Hunks closer than that are one hunk. */
	if (*trailp >= 0)
		FUZZ_ASSERT((size_t)*trailp + (ofirst - *aip) + lead >=
		    2 * CONTEXT + 1);
	*trailp = (int)run;
	*aip = i;
	*rlinesp += ncount;
}

/* Applies diff d (header included) to a; the result must be b. */
static void
apply(const char *d, size_t dlen, const char *a, size_t alen,
    const char *b, size_t blen)
{
	struct patch pp = { d, dlen, 0, 0 };
	struct buf r = ENVCTL_BUF_INIT;
	struct lines al;
	size_t ai = 0, rlines = 0, i;
	int trail = -1;

	expect(&pp, header);
	lines_split(&al, a, alen);
	do
		hunk(&pp, &al, &ai, &r, &rlines, &trail);
	while (pp.pos < pp.len);
	for (i = ai; i < al.n; i++)
		buf_add(&r, a + al.off[i], line_len(&al, i));
	FUZZ_ASSERT(r.len == blen && memcmp(r.data, b, blen) == 0);
	FUZZ_ASSERT(pp.changed <= lines_trivial_bound(a, alen, b, blen));
	free(al.off);
	buf_release(&r);
}

static void
check(const char *a, size_t alen, const char *b, size_t blen)
{
	struct buf out = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	int r;

	r = diff_unified(&out, a, alen, b, blen, "a/f", "b/f", &err);
	FUZZ_ASSERT(r == 0 && err.code == 0);
	if (alen == blen && memcmp(a, b, alen) == 0)
		FUZZ_ASSERT(out.len == 0);
	else
		apply(out.data, out.len, a, alen, b, blen);
	buf_release(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *a = (const char *)data, *nul;
	struct buf b = ENVCTL_BUF_INIT;
	size_t alen;

	if ((nul = memchr(a, '\0', size)) != NULL) {
		alen = (size_t)(nul - a);
		buf_add(&b, nul + 1, size - alen - 1);
	} else {
		alen = size;
		mutate(&b, a, alen);
	}
	check(a, alen, b.data, b.len);
	check(b.data, b.len, a, alen);
	buf_release(&b);
	return 0;
}
