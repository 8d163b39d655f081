/*
 * diff.c - unified diffs by Myers' O(ND) algorithm (see diff.h).
 *
 * Written from E. W. Myers, "An O(ND) Difference Algorithm and Its
 * Variations", Algorithmica 1(2), 1986: the greedy search for furthest
 * reaching D-paths run from both corners at once to find a middle snake
 * (the paper's section 4b), then divide and conquer on the two halves, in
 * linear space.  The steps:
 *
 *   1. cut both texts into lines and give equal lines one class number
 *      (a last line without '\n' differs from the same text with it);
 *   2. set aside the lines whose class does not occur in the other text:
 *      they cannot be in a common subsequence, so the script stays minimal;
 *   3. compare the class sequences: strip the common ends, find the middle
 *      snake, recurse on the smaller half and loop on the other;
 *   4. slide each run of changed lines down while the line after it equals
 *      its first line (same counts, later and fewer hunks);
 *   5. print hunks with ENVCTL_DIFF_CONTEXT lines of context, merging
 *      changes at most 2 * ENVCTL_DIFF_CONTEXT unchanged lines apart.
 *
 * The cost caps are diff.h's ENVCTL_DIFF_DCAP and ENVCTL_DIFF_WORK; the
 * bound they give is stated there.  Line numbers are int: the input cap
 * keeps them far below INT_MAX.
 */
#include "diff.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define ENVCTL_DIFF_CONTEXT	3

/* One input cut into lines, with each line's class and changed mark. */
struct dfile {
	const char	*data;
	int		 n;
	size_t		*off;	/* line i is off[i] .. off[i + 1], '\n' in */
	int		*cls;
	char		*chg;
};

/* The sequences being compared and the search's state. */
struct dsearch {
	const int	*xv;	/* classes of the kept lines of a, of b */
	const int	*yv;
	const int	*xline;	/* their line numbers */
	const int	*yline;
	char		*xchg;	/* a's and b's changed marks */
	char		*ychg;
	int		*fd;	/* per diagonal x - y: furthest forward x */
	int		*bd;	/* furthest backward x */
	uint64_t	 work;	/* diagonals visited plus lines compared */
	uint64_t	 budget;
};

/* A diagonal run from (x0, y0) to (x1, y1); empty when they are equal. */
struct dsnake {
	int	 x0;
	int	 y0;
	int	 x1;
	int	 y1;
};

/* One change: a's lines a0 .. a1 replaced by b's b0 .. b1. */
struct dblock {
	int	 a0;
	int	 a1;
	int	 b0;
	int	 b1;
};

struct demit {
	struct buf	*out;
	int		 rc;
};

static void
file_split(struct dfile *f, const char *data, size_t len)
{
	const char *nl;
	size_t alloc = 0, at = 0;

	f->data = data;
	f->n = 0;
	f->off = NULL;
	while (at < len) {
		ENVCTL_GROW(f->off, (size_t)f->n + 1, alloc);
		f->off[f->n++] = at;
		nl = memchr(data + at, '\n', len - at);
		at = nl != NULL ? (size_t)(nl - data) + 1 : len;
	}
	ENVCTL_GROW(f->off, (size_t)f->n + 1, alloc);
	f->off[f->n] = len;
	f->cls = xreallocarray(NULL, (size_t)f->n + 1, sizeof(int));
	f->chg = xcalloc((size_t)f->n + 1, 1);
}

static void
file_release(struct dfile *f)
{
	free(f->off);
	free(f->cls);
	free(f->chg);
}

static size_t
line_len(const struct dfile *f, int i)
{
	return f->off[i + 1] - f->off[i];
}

static bool
line_complete(const struct dfile *f, int i)
{
	return f->data[f->off[i + 1] - 1] == '\n';
}

/* FNV-1a over the line's bytes, its '\n' included. */
static uint64_t
line_hash(const struct dfile *f, int i)
{
	const unsigned char *p = (const unsigned char *)f->data + f->off[i];
	size_t n = line_len(f, i);
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/* A slot of diff_classify's hash table; cls -1 when empty. */
struct dslot {
	uint32_t	 hash;
	int		 cls;
};

/* A class's first line. */
struct drep {
	const char	*p;
	size_t		 len;
};

/*
 * Returns an empty table of size slots with old's (of *sizep, or none when
 * NULL) in it; *sizep gets size.  Kept at most half full, probes stay
 * short.
 */
static struct dslot *
classify_grow(struct dslot *old, size_t *sizep, size_t size)
{
	struct dslot *t;
	size_t i, slot;

	t = xreallocarray(NULL, size, sizeof(*t));
	for (i = 0; i < size; i++)
		t[i].cls = -1;
	for (i = 0; old != NULL && i < *sizep; i++) {
		if (old[i].cls < 0)
			continue;
		for (slot = old[i].hash & (size - 1); t[slot].cls >= 0;
		    slot = (slot + 1) & (size - 1))
			continue;
		t[slot] = old[i];
	}
	free(old);
	*sizep = size;
	return t;
}

/*
 * Numbers the lines of both files by equivalence class through an open
 * hash table; returns the number of classes.
 */
static int
diff_classify(struct dfile *f[2])
{
	size_t total = (size_t)f[0]->n + (size_t)f[1]->n, size = 0, slot;
	struct dslot *table;
	struct drep *rep;
	const char *p;
	uint32_t h;
	size_t len;
	int ncls = 0, s, i, c;

	table = classify_grow(NULL, &size, 512);
	rep = xreallocarray(NULL, total + 1, sizeof(*rep));
	for (s = 0; s < 2; s++)
		for (i = 0; i < f[s]->n; i++) {
			h = (uint32_t)line_hash(f[s], i);
			p = f[s]->data + f[s]->off[i];
			len = line_len(f[s], i);
			for (slot = h & (size - 1);; slot = (slot + 1) &
			    (size - 1)) {
				c = table[slot].cls;
				if (c < 0) {
					c = ncls++;
					table[slot].cls = c;
					table[slot].hash = h;
					rep[c].p = p;
					rep[c].len = len;
					if ((size_t)ncls * 2 > size)
						table = classify_grow(table,
						    &size, 2 * size);
					break;
				}
				if (table[slot].hash == h &&
				    rep[c].len == len &&
				    memcmp(rep[c].p, p, len) == 0)
					break;
			}
			f[s]->cls[i] = c;
		}
	free(table);
	free(rep);
	return ncls;
}

/* Marks a's kept lines xoff .. xlim and b's yoff .. ylim as changed. */
static void
search_mark(struct dsearch *s, int xoff, int xlim, int yoff, int ylim)
{
	for (; xoff < xlim; xoff++)
		s->xchg[s->xline[xoff]] = 1;
	for (; yoff < ylim; yoff++)
		s->ychg[s->yline[yoff]] = 1;
}

/*
 * Finds a middle snake of the box xoff .. xlim by yoff .. ylim, whose
 * first and last lines differ, both sides non-empty.  Runs the forward
 * and the backward greedy searches a round at a time until they overlap
 * on a diagonal (the paper's Lemma 3).  After its cap of rounds, or once
 * the work budget is spent, returns instead an empty snake at the point,
 * forward or backward, that got furthest from its corner.
 */
static void
search_midsnake(struct dsearch *s, int xoff, int xlim, int yoff, int ylim,
    struct dsnake *sn)
{
	const int *xv = s->xv, *yv = s->yv;
	int *fd = s->fd, *bd = s->bd;
	int dmin = xoff - ylim, dmax = xlim - yoff;
	int fmid = xoff - yoff, bmid = xlim - ylim;
	int fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
	bool odd = ((unsigned)(fmid - bmid) & 1u) != 0;
	int d, k, x, y, x0, lo, hi, best, cap;
	uint64_t share;

	/*
	 * At most ENVCTL_DIFF_DCAP rounds, and no more than this box's share
	 * of what is left of the budget (a round per line of the box), so
	 * that a huge input spends it across the whole of the input rather
	 * than on its first few searches.
	 */
	share = s->work < s->budget ? (s->budget - s->work) /
	    (uint64_t)(xlim - xoff + ylim - yoff) : 0;
	cap = share < ENVCTL_DIFF_DCAP ? (int)share : ENVCTL_DIFF_DCAP;
	if (cap < 1)
		cap = 1;

	fd[fmid] = xoff;
	bd[bmid] = xlim;
	for (d = 1;; d++) {
		/*
		 * Forward round d on the diagonals of its parity that cut the
		 * box; those just added get an unreachable neighbour (-1).
		 */
		if (fmin > dmin)
			fd[--fmin - 1] = -1;
		else
			fmin++;
		if (fmax < dmax)
			fd[++fmax + 1] = -1;
		else
			fmax--;
		for (k = fmax; k >= fmin; k -= 2) {
			lo = fd[k - 1];		/* a step right from k - 1 */
			hi = fd[k + 1];		/* a step down from k + 1 */
			x = lo >= 0 && lo < xlim ? lo + 1 : -1;
			if (hi >= 0 && hi - (k + 1) < ylim && hi > x)
				x = hi;
			fd[k] = x;
			if (x < 0)
				continue;
			x0 = x;
			y = x - k;
			while (x < xlim && y < ylim && xv[x] == yv[y]) {
				x++;
				y++;
			}
			fd[k] = x;
			s->work += 1 + (uint64_t)(x - x0);
			if (odd && k >= bmin && k <= bmax && bd[k] <= x) {
				sn->x0 = x0;
				sn->y0 = x0 - k;
				sn->x1 = x;
				sn->y1 = y;
				return;
			}
			if (s->work > s->budget) {
				fmin = k;	/* the diagonals done */
				goto cut;
			}
		}

		/* Backward round d; unreachable is INT_MAX. */
		if (bmin > dmin)
			bd[--bmin - 1] = INT_MAX;
		else
			bmin++;
		if (bmax < dmax)
			bd[++bmax + 1] = INT_MAX;
		else
			bmax--;
		for (k = bmin; k <= bmax; k += 2) {
			lo = bd[k - 1];		/* a step up from k - 1 */
			hi = bd[k + 1];		/* a step left from k + 1 */
			x = hi != INT_MAX && hi > xoff ? hi - 1 : INT_MAX;
			if (lo != INT_MAX && lo - (k - 1) > yoff && lo < x)
				x = lo;
			bd[k] = x;
			if (x == INT_MAX)
				continue;
			x0 = x;
			y = x - k;
			while (x > xoff && y > yoff && xv[x - 1] == yv[y - 1]) {
				x--;
				y--;
			}
			bd[k] = x;
			s->work += 1 + (uint64_t)(x0 - x);
			if (!odd && k >= fmin && k <= fmax && fd[k] >= x) {
				sn->x0 = x;
				sn->y0 = y;
				sn->x1 = x0;
				sn->y1 = x0 - k;
				return;
			}
			if (s->work > s->budget) {
				bmax = k;
				goto cut;
			}
		}
		if (d >= cap)
			break;
	}

cut:
	/*
	 * Too expensive: split at the point, of those reached in the last
	 * rounds, furthest from its corner.  Any point of the box is a valid
	 * split; only minimality is lost.
	 */
	best = 0;
	x = xoff;
	y = yoff;
	for (k = fmin; k <= fmax; k += 2)
		if (fd[k] >= 0 && 2 * fd[k] - k - xoff - yoff > best) {
			best = 2 * fd[k] - k - xoff - yoff;
			x = fd[k];
			y = x - k;
		}
	for (k = bmin; k <= bmax; k += 2)
		if (bd[k] != INT_MAX && xlim + ylim - (2 * bd[k] - k) >
		    best) {
			best = xlim + ylim - (2 * bd[k] - k);
			x = bd[k];
			y = x - k;
		}
	sn->x0 = sn->x1 = x;
	sn->y0 = sn->y1 = y;
}

/*
 * Marks the changes that turn xv[xoff .. xlim) into yv[yoff .. ylim).
 * Recursion only on the smaller half keeps the depth logarithmic.
 */
static void
search_compare(struct dsearch *s, int xoff, int xlim, int yoff, int ylim)
{
	struct dsnake sn;

	for (;;) {
		while (xoff < xlim && yoff < ylim &&
		    s->xv[xoff] == s->yv[yoff]) {
			xoff++;
			yoff++;
		}
		while (xoff < xlim && yoff < ylim &&
		    s->xv[xlim - 1] == s->yv[ylim - 1]) {
			xlim--;
			ylim--;
		}
		if (xoff == xlim || yoff == ylim || s->work > s->budget) {
			search_mark(s, xoff, xlim, yoff, ylim);
			return;
		}
		search_midsnake(s, xoff, xlim, yoff, ylim, &sn);
		/* Never expected; guarantees progress all the same. */
		if ((sn.x0 == xlim && sn.y0 == ylim) ||
		    (sn.x1 == xoff && sn.y1 == yoff)) {
			search_mark(s, xoff, xlim, yoff, ylim);
			return;
		}
		if ((sn.x0 - xoff) + (sn.y0 - yoff) <=
		    (xlim - sn.x1) + (ylim - sn.y1)) {
			search_compare(s, xoff, sn.x0, yoff, sn.y0);
			xoff = sn.x1;
			yoff = sn.y1;
		} else {
			search_compare(s, sn.x1, xlim, sn.y1, ylim);
			xlim = sn.x0;
			ylim = sn.y0;
		}
	}
}

/*
 * Marks the changed lines of f[0] and f[1]: steps 2 and 3 of the file
 * comment.  Lines of the common prefix and suffix stay unchanged.
 */
static void
diff_mark(struct dfile *f[2], int ncls)
{
	struct dsearch s;
	int *count[2], *v[2], *line[2], *diag, nv[2], pre = 0, suf = 0;
	int side, i, other;

	while (pre < f[0]->n && pre < f[1]->n &&
	    f[0]->cls[pre] == f[1]->cls[pre])
		pre++;
	while (suf < f[0]->n - pre && suf < f[1]->n - pre &&
	    f[0]->cls[f[0]->n - 1 - suf] == f[1]->cls[f[1]->n - 1 - suf])
		suf++;
	for (side = 0; side < 2; side++) {
		count[side] = xcalloc((size_t)ncls + 1, sizeof(int));
		for (i = pre; i < f[side]->n - suf; i++)
			count[side][f[side]->cls[i]]++;
	}
	for (side = 0; side < 2; side++) {
		other = 1 - side;
		v[side] = xreallocarray(NULL, (size_t)f[side]->n + 1,
		    sizeof(int));
		line[side] = xreallocarray(NULL, (size_t)f[side]->n + 1,
		    sizeof(int));
		nv[side] = 0;
		for (i = pre; i < f[side]->n - suf; i++) {
			if (count[other][f[side]->cls[i]] == 0) {
				f[side]->chg[i] = 1;
				continue;
			}
			v[side][nv[side]] = f[side]->cls[i];
			line[side][nv[side]++] = i;
		}
	}

	/* Diagonals -nv[1] - 1 .. nv[0] + 1. */
	diag = xreallocarray(NULL, 2 * ((size_t)nv[0] + (size_t)nv[1] + 3),
	    sizeof(int));
	s.xv = v[0];
	s.yv = v[1];
	s.xline = line[0];
	s.yline = line[1];
	s.xchg = f[0]->chg;
	s.ychg = f[1]->chg;
	s.fd = diag + nv[1] + 1;
	s.bd = diag + nv[0] + nv[1] + 3 + nv[1] + 1;
	s.work = 0;
	s.budget = ENVCTL_DIFF_WORK((uint64_t)nv[0] + (uint64_t)nv[1]);
	search_compare(&s, 0, nv[0], 0, nv[1]);

	free(diag);
	for (side = 0; side < 2; side++) {
		free(count[side]);
		free(v[side]);
		free(line[side]);
	}
}

/*
 * Slides each run of changed lines down while the unchanged line after it
 * equals the run's first line: the same lines stay matched, in order, so
 * the counts do not change, and runs that meet merge.
 */
static void
diff_slide(struct dfile *f)
{
	int i = 0, j;

	while (i < f->n) {
		if (!f->chg[i]) {
			i++;
			continue;
		}
		for (j = i; j < f->n && f->chg[j]; j++)
			continue;
		while (j < f->n && f->cls[i] == f->cls[j]) {
			f->chg[i++] = 0;
			f->chg[j++] = 1;
			while (j < f->n && f->chg[j])
				j++;
		}
		i = j;
	}
}

/* The changes, in order; *np gets their number. */
static struct dblock *
diff_blocks(const struct dfile *fa, const struct dfile *fb, size_t *np)
{
	struct dblock *v = NULL;
	size_t n = 0, alloc = 0;
	int i = 0, j = 0, a0, b0;

	while (i < fa->n || j < fb->n) {
		if (i < fa->n && j < fb->n && !fa->chg[i] && !fb->chg[j]) {
			i++;
			j++;
			continue;
		}
		a0 = i;
		b0 = j;
		while (i < fa->n && fa->chg[i])
			i++;
		while (j < fb->n && fb->chg[j])
			j++;
		if (i == a0 && j == b0)		/* unbalanced marks: a bug */
			break;
		ENVCTL_GROW(v, n + 1, alloc);
		v[n].a0 = a0;
		v[n].a1 = i;
		v[n].b0 = b0;
		v[n].b1 = j;
		n++;
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

static void
emit_line(struct demit *e, char mark, const struct dfile *f, int i)
{
	static const char nonl[] = "\n\\ No newline at end of file\n";

	emit(e, &mark, 1);
	emit(e, f->data + f->off[i], line_len(f, i));
	if (!line_complete(f, i))
		emit(e, nonl, sizeof(nonl) - 1);
}

/* "START[,COUNT]" of a hunk header, as diff -u writes it. */
static void
emit_range(struct demit *e, int first, int count)
{
	if (e->rc != 0)
		return;
	if (count == 1)
		e->rc = buf_addf(e->out, "%d", first + 1);
	else if (count == 0)
		e->rc = buf_addf(e->out, "%d,0", first);
	else
		e->rc = buf_addf(e->out, "%d,%d", first + 1, count);
}

/* Prints the hunk of changes v[0 .. n) with their context. */
static void
emit_hunk(struct demit *e, const struct dfile *fa, const struct dfile *fb,
    const struct dblock *v, size_t n)
{
	int astart, aend, bstart, bend, at, i;
	size_t c;

	astart = v[0].a0 > ENVCTL_DIFF_CONTEXT ?
	    v[0].a0 - ENVCTL_DIFF_CONTEXT : 0;
	bstart = v[0].b0 - (v[0].a0 - astart);
	aend = fa->n - v[n - 1].a1 > ENVCTL_DIFF_CONTEXT ?
	    v[n - 1].a1 + ENVCTL_DIFF_CONTEXT : fa->n;
	bend = v[n - 1].b1 + (aend - v[n - 1].a1);
	emit(e, "@@ -", 4);
	emit_range(e, astart, aend - astart);
	emit(e, " +", 2);
	emit_range(e, bstart, bend - bstart);
	emit(e, " @@\n", 4);
	at = astart;
	for (c = 0; c < n; c++) {
		for (; at < v[c].a0; at++)
			emit_line(e, ' ', fa, at);
		for (i = v[c].a0; i < v[c].a1; i++)
			emit_line(e, '-', fa, i);
		for (i = v[c].b0; i < v[c].b1; i++)
			emit_line(e, '+', fb, i);
		at = v[c].a1;
	}
	for (; at < aend; at++)
		emit_line(e, ' ', fa, at);
}

int
diff_unified(struct buf *out, const char *a, size_t alen, const char *b,
    size_t blen, const char *label_a, const char *label_b, struct err *err)
{
	struct dfile file[2], *f[2] = { &file[0], &file[1] };
	struct demit e = { out, 0 };
	struct dblock *v = NULL;
	size_t nv = 0, h, hend, oldlen = out->len;
	int rc = 0;

	if (alen > ENVCTL_DIFF_MAX || blen > ENVCTL_DIFF_MAX)
		return err_set(err, ENVCTL_ETOOBIG,
		    "cannot diff '%s': %zu bytes exceeds the limit of %zu "
		    "bytes", alen > ENVCTL_DIFF_MAX ? label_a : label_b,
		    alen > ENVCTL_DIFF_MAX ? alen : blen, ENVCTL_DIFF_MAX);
	if (alen == blen && (alen == 0 || memcmp(a, b, alen) == 0))
		return 0;

	file_split(f[0], alen > 0 ? a : "", alen);
	file_split(f[1], blen > 0 ? b : "", blen);
	diff_mark(f, diff_classify(f));
	diff_slide(f[0]);
	diff_slide(f[1]);
	v = diff_blocks(f[0], f[1], &nv);
	if (nv == 0)
		goto out;

	emit(&e, "--- ", 4);
	emit(&e, label_a, strlen(label_a));
	emit(&e, "\n+++ ", 5);
	emit(&e, label_b, strlen(label_b));
	emit(&e, "\n", 1);
	/* A hunk ends before 2 * CONTEXT + 1 or more unchanged lines. */
	for (h = 0; h < nv; h = hend) {
		for (hend = h + 1; hend < nv; hend++)
			if (v[hend].a0 - v[hend - 1].a1 >=
			    2 * ENVCTL_DIFF_CONTEXT + 1)
				break;
		emit_hunk(&e, f[0], f[1], v + h, hend - h);
	}
	if (e.rc != 0) {
		buf_truncate(out, oldlen);
		rc = err_set(err, ENVCTL_ETOOBIG, "diff of '%s' and '%s' is "
		    "larger than the output limit of %zu bytes", label_a,
		    label_b, out->cap);
	}
out:
	file_release(f[0]);
	file_release(f[1]);
	free(v);
	return rc;
}
