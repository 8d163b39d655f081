/*
 * diff.c - unified diffs that match GNU diff -u (see diff.h).
 *
 * Among the many minimal edit scripts between two files, GNU diff prints
 * the one its own pipeline arrives at, so this file follows that pipeline
 * step by step (diffutils 3.8: io.c, analyze.c, context.c and gnulib's
 * diffseq.h):
 *
 *   1. find_identical_ends: skip the common prefix and suffix, compared as
 *      bytes, keeping HORIZON lines of each in the comparison;
 *   2. classify: number the remaining lines by equivalence class (a last
 *      line without '\n' equals only the other side's such line);
 *   3. discard_confusing: set aside lines that match nothing on the other
 *      side, and some that match too much;
 *   4. compareseq/diag: Myers' O((N+M)D) search for the middle snake, with
 *      linear space and GNU's "too expensive" cut-off for huge D;
 *   5. shift_boundaries: slide runs of changes to merge them and to end
 *      them as late as possible;
 *   6. print the hunks, merging those less than 2 * CONTEXT + 1 lines apart.
 *
 * Any deviation in any step changes which of several equal-cost scripts
 * comes out, so the ports keep GNU's structure and tie-breaking as is;
 * GNU's --speed-large-files heuristic is off by default and left out.
 * Line numbers are int: the input cap keeps them far below INT_MAX.
 */
#include "diff.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define ENVCTL_DIFF_CONTEXT	3
/* diff.c sets horizon_lines to at least the context. */
#define ENVCTL_DIFF_HORIZON	ENVCTL_DIFF_CONTEXT

/*
 * One input.  Like GNU diff, it is read as if a missing final '\n' were
 * there, remembering that it was not.
 */
struct dside {
	const char	*data;
	size_t		 len;
	size_t		 n;		/* len plus the supplied '\n' */
	bool		 missing_nl;
	int		 nlines;
	int		 prefix;	/* lines before the compared middle */
	int		 nmid;		/* lines in the compared middle */
	int		 first;		/* first line in start */
	size_t		*start;		/* offsets of the lines output can
					 * show, from first; one more ends
					 * the last */
	int		*eq;		/* class of each middle line */
	char		*flags;		/* nmid + 4 bytes behind changed */
	char		*changed;	/* [-2, nmid + 2) valid; ends are 0 */
	int		*undisc;	/* classes of the lines not discarded */
	int		*realidx;	/* their middle line numbers */
	int		 nundisc;
};

struct dchange {
	int	 line0;		/* first line deleted, or inserted before */
	int	 line1;
	int	 deleted;
	int	 inserted;
};

/* diffseq.h's struct context, for one comparison. */
struct dctx {
	const int	*xv;
	const int	*yv;
	const int	*xreal;
	const int	*yreal;
	char		*xchanged;
	char		*ychanged;
	int		*fd;		/* indexed by diagonal, may be < 0 */
	int		*bd;
	int		 too_expensive;
};

struct dpart {
	int	 xmid;
	int	 ymid;
	bool	 lo_minimal;
	bool	 hi_minimal;
};

struct demit {
	struct buf	*out;
	int		 rc;
};

static int
floor_log2(size_t v)
{
	int r = 0;

	while (v >>= 1)
		r++;
	return r;
}

/* Byte i of s as GNU diff sees it: with the final newline supplied. */
static unsigned char
vbyte(const struct dside *s, size_t i)
{
	return i < s->len ? (unsigned char)s->data[i] : '\n';
}

/* Counts the lines that start in [from, to); both are line starts. */
static int
count_lines(const struct dside *s, size_t from, size_t to)
{
	size_t i, n = 0;

	if (to > s->len) {
		if (from < to && s->missing_nl)
			n++;		/* the supplied newline */
		to = s->len;
	}
	for (i = from; i < to; i++)
		n += s->data[i] == '\n';
	return (int)n;
}

static void
side_init(struct dside *s, const char *data, size_t len)
{
	s->data = data;
	s->len = len;
	s->missing_nl = len > 0 && data[len - 1] != '\n';
	s->n = len + s->missing_nl;
	s->nlines = count_lines(s, 0, s->n);
}

/*
 * Records where the lines output may show start: the middle and CONTEXT
 * lines either side.  pe is where the middle starts; the prefix and suffix
 * may be huge, so they are only counted.
 */
static void
index_lines(struct dside *s, size_t pe)
{
	const char *nl;
	size_t off = pe;
	int i, last;

	for (s->first = s->prefix; s->first > 0 &&
	    s->prefix - s->first < ENVCTL_DIFF_CONTEXT; s->first--) {
		off--;				/* onto the '\n' before */
		while (off > 0 && s->data[off - 1] != '\n')
			off--;
	}
	last = s->prefix + s->nmid + ENVCTL_DIFF_CONTEXT;
	if (last > s->nlines)
		last = s->nlines;
	s->start = xreallocarray(NULL, (size_t)(last - s->first) + 1,
	    sizeof(*s->start));
	for (i = 0; s->first + i < last; i++) {
		s->start[i] = off;
		nl = memchr(s->data + off, '\n', s->len - off);
		off = nl != NULL ? (size_t)(nl + 1 - s->data) : s->n;
	}
	s->start[i] = off;
}

static const char *
line_text(const struct dside *s, int i)
{
	return s->data + s->start[i - s->first];
}

static size_t
line_len(const struct dside *s, int i)
{
	/* Without the '\n'. */
	return s->start[i - s->first + 1] - s->start[i - s->first] - 1;
}

static bool
line_incomplete(const struct dside *s, int i)
{
	return s->missing_nl && i == s->nlines - 1;
}

/*
 * io.c's find_identical_ends: the common prefix and suffix, as bytes, less
 * HORIZON lines each, are left out of the comparison.  Both sides get the
 * same prefix line count; the middle line counts follow.
 */
static void
find_identical_ends(struct dside *s0, struct dside *s1)
{
	size_t k = 0, lim, p, p0, p1, beg0, sb0, sb1, pe;
	int hor = ENVCTL_DIFF_HORIZON, i;
	bool at_line_beginning;

	/* GNU's sentinels end the scan at the shorter side's end. */
	lim = s0->n < s1->n ? s0->n : s1->n;
	while (k < lim && vbyte(s0, k) == vbyte(s1, k))
		k++;
	/* Don't count a supplied newline as part of the prefix. */
	if ((s0->n - s0->missing_nl < k) != (s1->n - s1->missing_nl < k))
		k--;
	p = k;
	while (p != 0 && (vbyte(s0, p - 1) != '\n' || hor--))
		p--;
	pe = p;

	sb0 = s0->n;
	sb1 = s1->n;
	if (s0->missing_nl == s1->missing_nl) {
		p0 = s0->n;
		p1 = s1->n;
		beg0 = pe + (s0->n < s1->n ? 0 : s0->n - s1->n);
		while (p0 != beg0) {
			if (vbyte(s0, --p0) != vbyte(s1, --p1)) {
				++p0, ++p1;
				beg0 = p0;
				break;
			}
		}
		at_line_beginning = (p0 == 0 || vbyte(s0, p0 - 1) == '\n') &&
		    (p1 == 0 || vbyte(s1, p1 - 1) == '\n');
		i = ENVCTL_DIFF_HORIZON + !at_line_beginning;
		while (i-- && p0 != s0->n)
			while (vbyte(s0, p0++) != '\n')
				continue;
		sb0 = p0;
		sb1 = p1 + (p0 - beg0);
	}
	s0->prefix = s1->prefix = count_lines(s0, 0, pe);
	s0->nmid = count_lines(s0, pe, sb0);
	s1->nmid = count_lines(s1, pe, sb1);
	index_lines(s0, pe);
	index_lines(s1, pe);
}

static size_t
line_hash(const struct dside *s, int i)
{
	const unsigned char *p = (const unsigned char *)line_text(s, i);
	size_t n = line_len(s, i), h = (size_t)14695981039346656037ULL;

	while (n-- > 0)
		h = (h ^ *p++) * (size_t)1099511628211ULL;
	return h ^ line_incomplete(s, i);
}

static bool
lines_equal(const struct dside *s, int i, const struct dside *t, int j)
{
	size_t n = line_len(s, i);

	return n == line_len(t, j) &&
	    line_incomplete(s, i) == line_incomplete(t, j) &&
	    (n == 0 || memcmp(line_text(s, i), line_text(t, j), n) == 0);
}

/*
 * Gives each middle line the number of its equivalence class, from 1;
 * returns the number of classes plus one.
 */
static int
classify(struct dside *s[2])
{
	size_t total = (size_t)s[0]->nmid + (size_t)s[1]->nmid, cap = 16;
	size_t mask, slot, h, *chash;
	int *tab, *cside, *cline, ncls = 1, f, i, c, line;

	while (cap < 2 * total + 2)
		cap *= 2;
	mask = cap - 1;
	tab = xcalloc(cap, sizeof(*tab));
	chash = xreallocarray(NULL, total + 1, sizeof(*chash));
	cside = xreallocarray(NULL, total + 1, sizeof(*cside));
	cline = xreallocarray(NULL, total + 1, sizeof(*cline));
	for (f = 0; f < 2; f++) {
		s[f]->eq = xreallocarray(NULL, (size_t)s[f]->nmid + 1,
		    sizeof(*s[f]->eq));
		for (i = 0; i < s[f]->nmid; i++) {
			line = s[f]->prefix + i;
			h = line_hash(s[f], line);
			for (slot = h & mask; (c = tab[slot]) != 0;
			    slot = (slot + 1) & mask)
				if (chash[c] == h && lines_equal(s[cside[c]],
				    cline[c], s[f], line))
					break;
			if (c == 0) {
				c = ncls++;
				tab[slot] = c;
				chash[c] = h;
				cside[c] = f;
				cline[c] = line;
			}
			s[f]->eq[i] = c;
		}
	}
	free(tab);
	free(chash);
	free(cside);
	free(cline);
	return ncls;
}

/*
 * analyze.c's discard_confusing_lines: a line matching nothing on the other
 * side is a change for sure and is not shown to compareseq; neither is a
 * line matching very many, when it sits inside a run of such changes.
 */
static void
discard_confusing(struct dside *s[2], int ncls)
{
	int *count[2], f, i, j, end, many, nmatch, provisional, length;
	int minimum, consec;
	char *disc[2], *d;

	count[0] = xcalloc(2 * (size_t)ncls, sizeof(int));
	count[1] = count[0] + ncls;
	for (f = 0; f < 2; f++)
		for (i = 0; i < s[f]->nmid; i++)
			count[f][s[f]->eq[i]]++;
	disc[0] = xcalloc((size_t)s[0]->nmid + (size_t)s[1]->nmid + 1, 1);
	disc[1] = disc[0] + s[0]->nmid;

	for (f = 0; f < 2; f++) {
		end = s[f]->nmid;
		d = disc[f];
		many = 5;
		/* Times the approximate square root of the line count. */
		if (end >= 64)
			many <<= (floor_log2((size_t)end) >> 1) - 3;
		for (i = 0; i < end; i++) {
			nmatch = count[1 - f][s[f]->eq[i]];
			if (nmatch == 0)
				d[i] = 1;
			else if (nmatch > many)
				d[i] = 2;
		}
	}

	/* Provisional discards stand only inside runs of sure ones. */
	for (f = 0; f < 2; f++) {
		end = s[f]->nmid;
		d = disc[f];
		for (i = 0; i < end; i++) {
			if (d[i] == 2) {
				d[i] = 0;
				continue;
			}
			if (d[i] == 0)
				continue;
			provisional = 0;
			for (j = i; j < end; j++) {
				if (d[j] == 0)
					break;
				if (d[j] == 2)
					provisional++;
			}
			while (j > i && d[j - 1] == 2) {
				d[--j] = 0;
				provisional--;
			}
			length = j - i;
			if (length >> 2 < provisional) {
				while (j > i)
					if (d[--j] == 2)
						d[j] = 0;
				continue;
			}
			minimum = length < 4 ? 2 :
			    (1 << ((floor_log2((size_t)length) >> 1) - 1)) + 1;
			consec = 0;
			for (j = 0; j < length; j++) {
				if (d[i + j] != 2)
					consec = 0;
				else if (minimum == ++consec)
					j -= consec;	/* cancel all of it */
				else if (minimum < consec)
					d[i + j] = 0;
			}
			for (j = 0, consec = 0; j < length; j++) {
				if (j >= 8 && d[i + j] == 1)
					break;
				if (d[i + j] == 2) {
					consec = 0;
					d[i + j] = 0;
				} else if (d[i + j] == 0)
					consec = 0;
				else
					consec++;
				if (consec == 3)
					break;
			}
			i += length - 1;
			for (j = 0, consec = 0; j < length; j++) {
				if (j >= 8 && d[i - j] == 1)
					break;
				if (d[i - j] == 2) {
					consec = 0;
					d[i - j] = 0;
				} else if (d[i - j] == 0)
					consec = 0;
				else
					consec++;
				if (consec == 3)
					break;
			}
		}
	}

	for (f = 0; f < 2; f++) {
		end = s[f]->nmid;
		s[f]->undisc = xreallocarray(NULL, (size_t)end + 1,
		    sizeof(int));
		s[f]->realidx = xreallocarray(NULL, (size_t)end + 1,
		    sizeof(int));
		for (i = 0, j = 0; i < end; i++) {
			if (disc[f][i] == 0) {
				s[f]->undisc[j] = s[f]->eq[i];
				s[f]->realidx[j++] = i;
			} else
				s[f]->changed[i] = 1;
		}
		s[f]->nundisc = j;
	}
	free(disc[0]);
	free(count[0]);
}

/*
 * diffseq.h's diag: the midpoint of a shortest edit script between
 * x[xoff, xlim) and y[yoff, ylim), whose first and last elements differ.
 * Unless find_minimal, gives up past too_expensive and returns the best
 * point found so far.
 */
static void
diag(int xoff, int xlim, int yoff, int ylim, bool find_minimal,
    struct dpart *part, struct dctx *ctx)
{
	int *const fd = ctx->fd, *const bd = ctx->bd;
	const int *const xv = ctx->xv, *const yv = ctx->yv;
	const int dmin = xoff - ylim, dmax = xlim - yoff;
	const int fmid = xoff - yoff, bmid = xlim - ylim;
	int fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
	int c, d, x, y, x0, tlo, thi, fxybest, fxbest, bxybest, bxbest;
	bool odd = (fmid - bmid) % 2 != 0;

	fd[fmid] = xoff;
	bd[bmid] = xlim;
	for (c = 1;; c++) {
		/* Extend the top-down search by an edit step. */
		if (fmin > dmin)
			fd[--fmin - 1] = -1;
		else
			++fmin;
		if (fmax < dmax)
			fd[++fmax + 1] = -1;
		else
			--fmax;
		for (d = fmax; d >= fmin; d -= 2) {
			tlo = fd[d - 1];
			thi = fd[d + 1];
			x0 = tlo < thi ? thi : tlo + 1;
			for (x = x0, y = x0 - d;
			    x < xlim && y < ylim && xv[x] == yv[y]; x++, y++)
				continue;
			fd[d] = x;
			if (odd && bmin <= d && d <= bmax && bd[d] <= x) {
				part->xmid = x;
				part->ymid = y;
				part->lo_minimal = part->hi_minimal = true;
				return;
			}
		}

		/* Likewise the bottom-up search. */
		if (bmin > dmin)
			bd[--bmin - 1] = INT_MAX;
		else
			++bmin;
		if (bmax < dmax)
			bd[++bmax + 1] = INT_MAX;
		else
			--bmax;
		for (d = bmax; d >= bmin; d -= 2) {
			tlo = bd[d - 1];
			thi = bd[d + 1];
			x0 = tlo < thi ? tlo : thi - 1;
			for (x = x0, y = x0 - d; xoff < x && yoff < y &&
			    xv[x - 1] == yv[y - 1]; x--, y--)
				continue;
			bd[d] = x;
			if (!odd && fmin <= d && d <= fmax && x <= fd[d]) {
				part->xmid = x;
				part->ymid = y;
				part->lo_minimal = part->hi_minimal = true;
				return;
			}
		}

		if (find_minimal || c < ctx->too_expensive)
			continue;

		/*
		 * Gone well beyond the call of duty: settle for halfway
		 * between the best results so far.
		 */
		fxybest = -1;
		fxbest = 0;
		for (d = fmax; d >= fmin; d -= 2) {
			x = fd[d] < xlim ? fd[d] : xlim;
			y = x - d;
			if (ylim < y) {
				x = ylim + d;
				y = ylim;
			}
			if (fxybest < x + y) {
				fxybest = x + y;
				fxbest = x;
			}
		}
		bxybest = INT_MAX;
		bxbest = 0;
		for (d = bmax; d >= bmin; d -= 2) {
			x = xoff > bd[d] ? xoff : bd[d];
			y = x - d;
			if (y < yoff) {
				x = yoff + d;
				y = yoff;
			}
			if (x + y < bxybest) {
				bxybest = x + y;
				bxbest = x;
			}
		}
		if ((xlim + ylim) - bxybest < fxybest - (xoff + yoff)) {
			part->xmid = fxbest;
			part->ymid = fxybest - fxbest;
			part->lo_minimal = true;
			part->hi_minimal = false;
		} else {
			part->xmid = bxbest;
			part->ymid = bxybest - bxbest;
			part->lo_minimal = false;
			part->hi_minimal = true;
		}
		return;
	}
}

/*
 * diffseq.h's compareseq: marks the changed lines between x[xoff, xlim) and
 * y[yoff, ylim).  Recurses into the smaller half and loops on the other, so
 * the depth stays logarithmic; the marks do not depend on the order.
 */
static void
compareseq(int xoff, int xlim, int yoff, int ylim, bool find_minimal,
    struct dctx *ctx)
{
	const int *xv = ctx->xv, *yv = ctx->yv;
	struct dpart part;

	for (;;) {
		while (xoff < xlim && yoff < ylim && xv[xoff] == yv[yoff]) {
			xoff++;
			yoff++;
		}
		while (xoff < xlim && yoff < ylim &&
		    xv[xlim - 1] == yv[ylim - 1]) {
			xlim--;
			ylim--;
		}
		if (xoff == xlim) {
			while (yoff < ylim)
				ctx->ychanged[ctx->yreal[yoff++]] = 1;
			return;
		}
		if (yoff == ylim) {
			while (xoff < xlim)
				ctx->xchanged[ctx->xreal[xoff++]] = 1;
			return;
		}
		diag(xoff, xlim, yoff, ylim, find_minimal, &part, ctx);
		if ((xlim + ylim) - (part.xmid + part.ymid) <
		    (part.xmid + part.ymid) - (xoff + yoff)) {
			compareseq(part.xmid, xlim, part.ymid, ylim,
			    part.hi_minimal, ctx);
			xlim = part.xmid;
			ylim = part.ymid;
			find_minimal = part.lo_minimal;
		} else {
			compareseq(xoff, part.xmid, yoff, part.ymid,
			    part.lo_minimal, ctx);
			xoff = part.xmid;
			yoff = part.ymid;
			find_minimal = part.hi_minimal;
		}
	}
}

/*
 * analyze.c's shift_boundaries: slides each run of changes back while the
 * line before it equals its last line (merging with earlier runs), then
 * forward likewise, then back to line up with a change on the other side.
 */
static void
shift_boundaries(struct dside *s[2])
{
	int f, i, j, i_end, start, runlength, corresponding;
	char *changed, *other;
	const int *eq;

	for (f = 0; f < 2; f++) {
		changed = s[f]->changed;
		other = s[1 - f]->changed;
		eq = s[f]->eq;
		i = j = 0;
		i_end = s[f]->nmid;
		for (;;) {
			/* Find the next run; j tracks the other side. */
			while (i < i_end && !changed[i]) {
				while (other[j++])
					continue;
				i++;
			}
			if (i == i_end)
				break;
			start = i;
			while (changed[++i])
				continue;
			while (other[j])
				j++;
			do {
				runlength = i - start;
				while (start && eq[start - 1] == eq[i - 1]) {
					changed[--start] = 1;
					changed[--i] = 0;
					while (changed[start - 1])
						start--;
					while (other[--j])
						continue;
				}
				corresponding = other[j - 1] ? i : i_end;
				while (i != i_end && eq[start] == eq[i]) {
					changed[start++] = 0;
					changed[i++] = 1;
					while (changed[i])
						i++;
					while (other[++j])
						corresponding = i;
				}
			} while (runlength != i - start);
			while (corresponding < i) {
				changed[--start] = 1;
				changed[--i] = 0;
				while (other[--j])
					continue;
			}
		}
	}
}

/* Turns the change flags into a list of changes in absolute lines. */
static struct dchange *
build_script(struct dside *s[2], size_t *np)
{
	struct dchange *v = NULL;
	size_t n = 0, alloc = 0;
	const char *c0 = s[0]->changed, *c1 = s[1]->changed;
	int i0 = 0, i1 = 0, l0, l1;

	while (i0 < s[0]->nmid || i1 < s[1]->nmid) {
		if (c0[i0] || c1[i1]) {
			l0 = i0;
			l1 = i1;
			while (c0[i0])
				i0++;
			while (c1[i1])
				i1++;
			ENVCTL_GROW(v, n + 1, alloc);
			v[n].line0 = s[0]->prefix + l0;
			v[n].line1 = s[1]->prefix + l1;
			v[n].deleted = i0 - l0;
			v[n].inserted = i1 - l1;
			n++;
		}
		i0++;
		i1++;
	}
	*np = n;
	return v;
}

static void
emit(struct demit *e, const void *p, size_t n)
{
	if (e->rc == 0)
		e->rc = buf_add(e->out, p, n);
}

static void	emitf(struct demit *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
emitf(struct demit *e, const char *fmt, ...)
{
	va_list ap;

	if (e->rc != 0)
		return;
	va_start(ap, fmt);
	e->rc = buf_vaddf(e->out, fmt, ap);
	va_end(ap);
}

/* One line with its mark; a missing final newline is flagged GNU's way. */
static void
emit_line(struct demit *e, char mark, const struct dside *s, int i)
{
	static const char nonl[] = "\n\\ No newline at end of file\n";

	emit(e, &mark, 1);
	if (line_incomplete(s, i)) {
		emit(e, line_text(s, i), line_len(s, i));
		emit(e, nonl, sizeof(nonl) - 1);
	} else
		emit(e, line_text(s, i), line_len(s, i) + 1);
}

/* context.c's print_unidiff_number_range, from 0-based lines a..b. */
static void
emit_range(struct demit *e, int a, int b)
{
	int ta = a + 1, tb = b + 1;

	if (tb <= ta)
		emitf(e, tb < ta ? "%d,0" : "%d", tb);
	else
		emitf(e, "%d,%d", ta, tb - ta + 1);
}

/* context.c's pr_unidiff_hunk for changes v[0..n). */
static void
emit_hunk(struct demit *e, struct dside *s[2], const struct dchange *v,
    size_t n)
{
	const struct dchange *last = &v[n - 1];
	int first0, last0, first1, last1, i, j, k;
	size_t next = 0;

	first0 = v[0].line0 - ENVCTL_DIFF_CONTEXT;
	first1 = v[0].line1 - ENVCTL_DIFF_CONTEXT;
	if (first0 < 0)
		first0 = 0;
	if (first1 < 0)
		first1 = 0;
	last0 = last->line0 + last->deleted - 1 + ENVCTL_DIFF_CONTEXT;
	last1 = last->line1 + last->inserted - 1 + ENVCTL_DIFF_CONTEXT;
	if (last0 > s[0]->nlines - 1)
		last0 = s[0]->nlines - 1;
	if (last1 > s[1]->nlines - 1)
		last1 = s[1]->nlines - 1;

	emit(e, "@@ -", 4);
	emit_range(e, first0, last0);
	emit(e, " +", 2);
	emit_range(e, first1, last1);
	emit(e, " @@\n", 4);
	i = first0;
	j = first1;
	while (i <= last0 || j <= last1) {
		if (next == n || i < v[next].line0) {
			emit_line(e, ' ', s[0], i++);
			j++;
			continue;
		}
		for (k = 0; k < v[next].deleted; k++)
			emit_line(e, '-', s[0], i++);
		for (k = 0; k < v[next].inserted; k++)
			emit_line(e, '+', s[1], j++);
		next++;
	}
}

int
diff_unified(struct buf *out, const char *a, size_t alen, const char *b,
    size_t blen, const char *label_a, const char *label_b, struct err *err)
{
	struct dside side[2], *s[2] = { &side[0], &side[1] };
	struct dctx ctx;
	struct dchange *v = NULL;
	struct demit e = { out, 0 };
	size_t nv = 0, h, hend, oldlen = out->len;
	int *diagbuf = NULL, ncls, diags, f, rc = 0;

	if (alen > ENVCTL_DIFF_MAX || blen > ENVCTL_DIFF_MAX)
		return err_set(err, ENVCTL_ETOOBIG,
		    "cannot diff '%s': %zu bytes exceeds the limit of %zu "
		    "bytes", alen > ENVCTL_DIFF_MAX ? label_a : label_b,
		    alen > ENVCTL_DIFF_MAX ? alen : blen, ENVCTL_DIFF_MAX);
	if (alen == blen && (alen == 0 || memcmp(a, b, alen) == 0))
		return 0;

	memset(side, 0, sizeof(side));
	side_init(s[0], alen > 0 ? a : "", alen);
	side_init(s[1], blen > 0 ? b : "", blen);
	find_identical_ends(s[0], s[1]);
	for (f = 0; f < 2; f++) {
		s[f]->flags = xcalloc((size_t)s[f]->nmid + 4, 1);
		s[f]->changed = s[f]->flags + 2;
	}
	ncls = classify(s);
	discard_confusing(s, ncls);

	/* As analyze.c: diagonals -(nundisc1 + 1) .. nundisc0 + 1. */
	diags = s[0]->nundisc + s[1]->nundisc + 3;
	diagbuf = xreallocarray(NULL, 2 * (size_t)diags, sizeof(int));
	ctx.fd = diagbuf + s[1]->nundisc + 1;
	ctx.bd = diagbuf + diags + s[1]->nundisc + 1;
	ctx.xv = s[0]->undisc;
	ctx.yv = s[1]->undisc;
	ctx.xreal = s[0]->realidx;
	ctx.yreal = s[1]->realidx;
	ctx.xchanged = s[0]->changed;
	ctx.ychanged = s[1]->changed;
	/* About the square root of the input size, at least 4096. */
	ctx.too_expensive = 1 << ((floor_log2((size_t)diags) >> 1) + 1);
	if (ctx.too_expensive < 4096)
		ctx.too_expensive = 4096;
	compareseq(0, s[0]->nundisc, 0, s[1]->nundisc, false, &ctx);
	shift_boundaries(s);
	v = build_script(s, &nv);
	if (nv == 0)
		goto out;

	emitf(&e, "--- %s\n+++ %s\n", label_a, label_b);
	/* A hunk ends before 2 * CONTEXT + 1 or more unchanged lines. */
	for (h = 0; h < nv; h = hend) {
		for (hend = h + 1; hend < nv; hend++)
			if (v[hend].line0 - (v[hend - 1].line0 +
			    v[hend - 1].deleted) >= 2 * ENVCTL_DIFF_CONTEXT + 1)
				break;
		emit_hunk(&e, s, v + h, hend - h);
	}
	if (e.rc != 0) {
		buf_truncate(out, oldlen);
		rc = err_set(err, ENVCTL_ETOOBIG, "diff of '%s' and '%s' is "
		    "larger than the output limit of %zu bytes", label_a,
		    label_b, out->cap);
	}
out:
	for (f = 0; f < 2; f++) {
		free(side[f].start);
		free(side[f].eq);
		free(side[f].flags);
		free(side[f].undisc);
		free(side[f].realidx);
	}
	free(diagbuf);
	free(v);
	return rc;
}
