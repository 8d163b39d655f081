/*
 * check_diff.c - diff_unified: golden cases, errors, and GNU diff and
 * patch(1) as oracles on generated inputs.
 *
 * Byte-identical hunks with GNU diff are not the goal: among the minimal
 * edit scripts diff.c may pick another.  For every generated pair the
 * test checks instead that (a) our diff is well-formed unified format
 * (hunk counts match their bodies, 3 lines of context, hunks merged and
 * split as diff -u does), (b) the real patch(1) applies it to the old text
 * exactly (no fuzz, no offset) and gives the new text byte for byte, and
 * (c) it changes no more lines ('-' plus '+') than GNU `diff -a -u` when
 * GNU's count is within diff.h's minimality bound, and no more than the
 * trivial bound (every line between the common ends) above it; small pairs
 * must also have exactly the minimum a longest-common-subsequence table
 * gives.  test_checks_catch shows that each check rejects a wrong diff.
 * GNU diff runs under LC_ALL=C with -a (a file with a NUL byte is binary
 * to it otherwise).  Without GNU diff or patch the comparing tests skip,
 * and fail under CI=true.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/diff.h"
#include "tests/lines.h"
#include "testutil.h"

#define GNU_DIFF	"/usr/bin/diff"
#define PATCH		"/usr/bin/patch"
#define NGENERATED	400
#define NCODELIKE	200
#define MAXLINES	400

/* --- helpers ------------------------------------------------------------ */

/* Marsaglia's xorshift64: deterministic across libcs, unlike rand(). */
static uint64_t
xs_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned
xs_below(uint64_t *s, unsigned n)
{
	return (unsigned)(xs_next(s) % n);
}

/* Runs diff_unified with the labels the GNU runs use; asserts success. */
static void
our_diff(struct buf *out, const char *a, size_t alen, const char *b,
    size_t blen)
{
	struct err err = ENVCTL_ERR_INIT;
	int rc;

	rc = diff_unified(out, a, alen, b, blen, "a/x", "b/x", &err);
	ck_assert_msg(rc == 0, "diff_unified failed: %d %s", rc,
	    err.msg != NULL ? err.msg : "");
	err_release(&err);
}

/*
 * True when GNU diff and patch are there; otherwise skips, or fails under
 * CI=true.
 */
static bool
have_oracles(void)
{
	char *dargv[] = { GNU_DIFF, "--version", NULL };
	char *pargv[] = { PATCH, "--version", NULL };
	char *envp[] = { "LC_ALL=C", NULL };
	struct tu_run r;
	bool ok = false;

	if (access(GNU_DIFF, X_OK) == 0 && access(PATCH, X_OK) == 0) {
		tu_run(&r, dargv, envp, NULL, 0);
		ok = r.status == 0 && strstr(r.out, "GNU diffutils") != NULL;
		tu_run_free(&r);
		tu_run(&r, pargv, envp, NULL, 0);
		ok = ok && r.status == 0 && strstr(r.out, "GNU patch") != NULL;
		tu_run_free(&r);
	}
	if (!ok)
		tu_skip("have_oracles", "no GNU diff at " GNU_DIFF " or "
		    "patch at " PATCH " to check with");
	return ok;
}

/* Appends up to 600 bytes of s from byte from, escaped, to msg. */
static void
show(struct buf *msg, const char *what, const char *s, size_t len,
    size_t from)
{
	size_t i, end = from + 600 < len ? from + 600 : len;

	buf_addf(msg, "--- %s from byte %zu:\n", what, from);
	for (i = from; i < end; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || (c >= 0x20 && c < 0x7f && c != '\\'))
			buf_addch(msg, c);
		else
			buf_addf(msg, "\\x%02x", c);
	}
	buf_addch(msg, '\n');
}

/* Checks our diff of two strings against a golden text. */
static void
golden(const char *a, size_t alen, const char *b, size_t blen,
    const char *want, size_t wantlen)
{
	struct buf out = ENVCTL_BUF_INIT, msg = ENVCTL_BUF_INIT;

	our_diff(&out, a, alen, b, blen);
	if (out.len != wantlen || memcmp(out.data, want, out.len) != 0) {
		show(&msg, "got", out.data, out.len, 0);
		show(&msg, "want", want, wantlen, 0);
		ck_abort_msg("golden output differs\n%s", msg.data);
	}
	buf_release(&out);
}

/* String literals only: their sizes count embedded NULs. */
#define GOLDEN(a, b, want) \
	golden((a), sizeof(a) - 1, (b), sizeof(b) - 1, (want), \
	    sizeof(want) - 1)

/* Context lines diff_unified shows (ENVCTL_DIFF_CONTEXT in diff.c). */
#define CONTEXT		3

/*
 * The fewest '-' plus '+' lines turning a into b: n + m - 2 * LCS, by the
 * textbook O(nm) table (one row at a time); for small inputs only.
 */
static size_t
minimal_changes(const char *a, size_t alen, const char *b, size_t blen)
{
	struct lines la, lb;
	size_t *prev, *cur, *t, i, j, r;

	lines_split(&la, a, alen);
	lines_split(&lb, b, blen);
	prev = xcalloc(lb.n + 1, sizeof(size_t));
	cur = xcalloc(lb.n + 1, sizeof(size_t));
	for (i = 1; i <= la.n; i++) {
		for (j = 1; j <= lb.n; j++)
			if (lines_same(&la, i - 1, &lb, j - 1))
				cur[j] = prev[j - 1] + 1;
			else
				cur[j] = prev[j] > cur[j - 1] ? prev[j] :
				    cur[j - 1];
		t = prev;
		prev = cur;
		cur = t;
	}
	r = la.n + lb.n - 2 * prev[lb.n];
	free(prev);
	free(cur);
	free(la.off);
	free(lb.off);
	return r;
}

/* Where check_format is in the diff. */
struct fpos {
	const char	*p;
	size_t		 len;
	size_t		 pos;
};

static bool
f_expect(struct fpos *f, const char *s)
{
	size_t n = strlen(s);

	if (f->len - f->pos < n || memcmp(f->p + f->pos, s, n) != 0)
		return false;
	f->pos += n;
	return true;
}

/* "S[,C]": false when malformed. */
static bool
f_range(struct fpos *f, size_t *startp, size_t *countp)
{
	size_t v, digits;
	int which;

	*countp = 1;
	for (which = 0; which < 2; which++) {
		v = 0;
		for (digits = 0; f->pos < f->len && f->p[f->pos] >= '0' &&
		    f->p[f->pos] <= '9' && digits < 10; digits++)
			v = v * 10 + (size_t)(f->p[f->pos++] - '0');
		if (digits == 0)
			return false;
		if (which == 0)
			*startp = v;
		else
			*countp = v;
		if (which == 1 || f->pos >= f->len || f->p[f->pos] != ',')
			break;
		f->pos++;
	}
	return true;
}

/*
 * Checks that d is a well-formed unified diff of a (alines lines) into b
 * (blines lines) with CONTEXT lines of context, as diff -u lays it out:
 * headers "--- a/x" and "+++ b/x", each hunk's counts equal to its body,
 * start lines consistent, CONTEXT unchanged lines before the first change
 * and after the last (fewer only at a file's end), at most 2 * CONTEXT
 * between changes of a hunk and at least 2 * CONTEXT + 1 between hunks.
 * Returns NULL or what is wrong (to free); *changedp gets the '-' plus '+'
 * lines.  Whether the lines are the right ones is patch(1)'s check.
 */
static char *
check_format(const char *d, size_t dlen, size_t alines, size_t blines,
    size_t *changedp)
{
	struct fpos f = { d, dlen, 0 };
	size_t os, oc, ns, nc, o, n, run, lead, changes, hunks = 0;
	size_t aend = 0, bend = 0, trail = 0;
	const char *nl;
	char mark;

	*changedp = 0;
	if (dlen == 0)
		return NULL;
	if (!f_expect(&f, "--- a/x\n+++ b/x\n"))
		return xstrdup("bad file header");
	while (f.pos < f.len) {
		hunks++;
		if (!f_expect(&f, "@@ -") || !f_range(&f, &os, &oc) ||
		    !f_expect(&f, " +") || !f_range(&f, &ns, &nc) ||
		    !f_expect(&f, " @@\n"))
			return xasprintf("hunk %zu: bad header", hunks);
		/* With a count of 0, the start is the line before. */
		if ((oc > 0 && os == 0) || (nc > 0 && ns == 0))
			return xasprintf("hunk %zu: line 0", hunks);
		if (oc > 0)
			os--;
		if (nc > 0)
			ns--;
		if (os < aend || os + oc > alines || ns + nc > blines)
			return xasprintf("hunk %zu: out of order or past the "
			    "end", hunks);
		if (ns - bend != os - aend)
			return xasprintf("hunk %zu: new start %zu, not %zu",
			    hunks, ns + 1, bend + (os - aend) + 1);
		o = n = run = lead = changes = 0;
		while (f.pos < f.len && (o < oc || n < nc)) {
			mark = f.p[f.pos];
			nl = memchr(f.p + f.pos, '\n', f.len - f.pos);
			if (nl == NULL)
				return xasprintf("hunk %zu: unterminated "
				    "line", hunks);
			f.pos = (size_t)(nl - f.p) + 1;
			f_expect(&f, "\\ No newline at end of file\n");
			if (mark == ' ') {
				o++;
				n++;
				run++;
				continue;
			}
			if (mark == '-')
				o++;
			else if (mark == '+')
				n++;
			else
				return xasprintf("hunk %zu: line marked "
				    "'%c'", hunks, mark);
			(*changedp)++;
			if (changes++ == 0)
				lead = run;
			else if (run > 2 * CONTEXT)
				return xasprintf("hunk %zu: %zu unchanged "
				    "lines inside", hunks, run);
			run = 0;
		}
		if (o != oc || n != nc)
			return xasprintf("hunk %zu: header says -%zu +%zu, "
			    "body has -%zu +%zu", hunks, oc, nc, o, n);
		if (changes == 0)
			return xasprintf("hunk %zu: no change", hunks);
		if (lead > CONTEXT || (lead < CONTEXT && os != 0))
			return xasprintf("hunk %zu: %zu lines of context "
			    "before", hunks, lead);
		if (run > CONTEXT || (run < CONTEXT && os + oc != alines))
			return xasprintf("hunk %zu: %zu lines of context "
			    "after", hunks, run);
		if (hunks > 1 && trail + (os - aend) + lead < 2 * CONTEXT + 1)
			return xasprintf("hunk %zu: should be merged with "
			    "the one before", hunks);
		trail = run;
		aend = os + oc;
		bend = ns + nc;
	}
	if (alines - aend != blines - bend)
		return xstrdup("line counts after the last hunk differ");
	return NULL;
}

/*
 * Applies d to a with the real patch(1), exactly (no fuzz, no offset), in
 * dir; the result must be b.  Returns NULL or what is wrong (to free).
 */
static char *
check_patch(const char *dir, const char *a, size_t alen, const char *d,
    size_t dlen, const char *b, size_t blen)
{
	char *pa = tu_write(dir, "A", a, alen), *pd = tu_write(dir, "D", d,
	    dlen), *po = xasprintf("%s/OUT", dir), *got = NULL, *res = NULL;
	char *argv[] = { PATCH, "-F0", "-u", "-N", "-f",
	    "--no-backup-if-mismatch", "-r", "-", "-o", po, pa, pd, NULL };
	char *envp[] = { "LC_ALL=C", NULL };
	struct tu_run r;
	size_t gotlen = 0;

	unlink(po);
	tu_run(&r, argv, envp, NULL, 0);
	if (r.status != 0 || r.errlen != 0 || strstr(r.out, "offset") !=
	    NULL || strstr(r.out, "fuzz") != NULL || strstr(r.out, "Hunk")
	    != NULL) {
		res = xasprintf("patch exited %d: %s%s", r.status, r.out,
		    r.errout);
		goto out;
	}
	got = tu_read(po, &gotlen);
	if (got == NULL || gotlen != blen || memcmp(got, b, blen) != 0)
		res = xasprintf("patch gave %zu bytes that are not b (%zu)",
		    got != NULL ? gotlen : 0, blen);
out:
	tu_run_free(&r);
	free(got);
	free(pa);
	free(pd);
	free(po);
	return res;
}

/* GNU diff -u's '-' plus '+' lines from a to b, written into dir. */
static size_t
gnu_changes(const char *dir, const char *a, size_t alen, const char *b,
    size_t blen, const char *what)
{
	char *pa = tu_write(dir, "GA", a, alen), *pb = tu_write(dir, "GB", b,
	    blen);
	char *argv[] = { GNU_DIFF, "-a", "-u", "--label", "a/x", "--label",
	    "b/x", pa, pb, NULL };
	char *envp[] = { "LC_ALL=C", NULL };
	struct tu_run r;
	size_t i, n = 0, lineno = 0;

	tu_run(&r, argv, envp, NULL, 0);
	ck_assert_msg(r.status == (r.outlen > 0 ? 1 : 0) && r.errlen == 0,
	    "%s: GNU diff exited %d: %s", what, r.status, r.errout);
	for (i = 0; i < r.outlen; i++)
		if (i == 0 || r.out[i - 1] == '\n')
			if (lineno++ >= 2 && (r.out[i] == '-' ||
			    r.out[i] == '+'))
				n++;
	tu_run_free(&r);
	free(pa);
	free(pb);
	return n;
}

/*
 * Checks a count of changed lines: at most GNU's when GNU's is within the
 * minimality bound of diff.h (the minimum is then too), at most the
 * trivial bound otherwise, and exactly minimal when minimal is known
 * (not SIZE_MAX).  Returns NULL or what is wrong (to free).
 */
static char *
check_count(size_t ours, size_t gnu, size_t trivial, size_t minimal)
{
	if (minimal != SIZE_MAX && ours != minimal)
		return xasprintf("%zu changed lines, the minimum is %zu", ours,
		    minimal);
	if (gnu <= 2 * ENVCTL_DIFF_DCAP && ours > gnu)
		return xasprintf("%zu changed lines, GNU diff has %zu", ours,
		    gnu);
	if (ours > trivial)
		return xasprintf("%zu changed lines, more than the %zu between "
		    "the common ends", ours, trivial);
	return NULL;
}

/* What the oracle runs saw, for the summary line. */
struct ostats {
	int	 pairs;
	int	 fewer;		/* fewer changed lines than GNU diff */
	int	 above;		/* GNU's count above the minimality bound */
	size_t	 ours;		/* changed lines, summed */
	size_t	 gnu;
};

/*
 * Runs diff_unified on a and b and the three checks of the file comment
 * (exact minimality too when exact); what names the case in a failure,
 * whose files stay in dir.
 */
static void
oracle_check(const char *dir, const char *a, size_t alen, const char *b,
    size_t blen, bool exact, const char *what, struct ostats *st)
{
	struct buf out = ENVCTL_BUF_INIT, msg = ENVCTL_BUF_INIT;
	struct lines la, lb;
	size_t changed = 0, gnu, minimal = SIZE_MAX;
	char *why;

	our_diff(&out, a, alen, b, blen);
	lines_split(&la, a, alen);
	lines_split(&lb, b, blen);
	gnu = gnu_changes(dir, a, alen, b, blen, what);
	if (exact)
		minimal = minimal_changes(a, alen, b, blen);
	why = check_format(out.data, out.len, la.n, lb.n, &changed);
	if (why == NULL && out.len > 0)
		why = check_patch(dir, a, alen, out.data, out.len, b, blen);
	if (why == NULL && out.len == 0 && (alen != blen ||
	    memcmp(a, b, alen) != 0))
		why = xstrdup("no diff of different texts");
	if (why == NULL)
		why = check_count(changed, gnu, lines_trivial_bound(a, alen, b,
		    blen), minimal);
	if (why != NULL) {
		buf_addf(&msg, "%s: %s (files in %s)\n", what, why, dir);
		show(&msg, "ours", out.data, out.len, 0);
		ck_abort_msg("%s", msg.data);
	}
	st->pairs++;
	st->fewer += changed < gnu;
	st->above += gnu > 2 * ENVCTL_DIFF_DCAP;
	st->ours += changed;
	st->gnu += gnu;
	free(la.off);
	free(lb.off);
	buf_release(&out);
}

/* --- golden cases ------------------------------------------------------- */

START_TEST(test_identical)
{
	struct buf out = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	buf_addstr(&out, "kept");
	ck_assert_int_eq(diff_unified(&out, "a\nb\n", 4, "a\nb\n", 4,
	    "a/x", "b/x", &err), 0);
	ck_assert_int_eq(diff_unified(&out, "a\nb", 3, "a\nb", 3,
	    "a/x", "b/x", &err), 0);
	ck_assert_int_eq(diff_unified(&out, NULL, 0, NULL, 0, "a/x", "b/x",
	    &err), 0);
	ck_assert_uint_eq(out.len, 4);
	ck_assert_str_eq(out.data, "kept");
	ck_assert_int_eq(err.code, 0);
	buf_release(&out);
}
END_TEST

START_TEST(test_appends)
{
	struct buf out = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	buf_addstr(&out, "diff --git a/x b/x\n");
	ck_assert_int_eq(diff_unified(&out, "a\n", 2, "b\n", 2, "a/x", "b/x",
	    &err), 0);
	ck_assert_str_eq(out.data, "diff --git a/x b/x\n"
	    "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
	buf_release(&out);
}
END_TEST

START_TEST(test_to_and_from_empty)
{
	GOLDEN("a\nb\n", "",
	    "--- a/x\n+++ b/x\n@@ -1,2 +0,0 @@\n-a\n-b\n");
	GOLDEN("", "x\n",
	    "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n");
	GOLDEN("", "x",
	    "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n"
	    "\\ No newline at end of file\n");
	golden(NULL, 0, "1\n2\n3\n", 6,
	    "--- a/x\n+++ b/x\n@@ -0,0 +1,3 @@\n+1\n+2\n+3\n", 41);
}
END_TEST

START_TEST(test_no_final_newline)
{
	/* Only the newline differs: the line counts as changed. */
	GOLDEN("a\nb", "a\nb\n",
	    "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n"
	    "\\ No newline at end of file\n+b\n");
	GOLDEN("a\n", "a",
	    "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+a\n"
	    "\\ No newline at end of file\n");
	/* Both lack it. */
	GOLDEN("a\nb", "a\nc",
	    "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n"
	    "\\ No newline at end of file\n+c\n"
	    "\\ No newline at end of file\n");
	/* A context line lacking it. */
	GOLDEN("a\nb\nc", "x\nb\nc",
	    "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+x\n b\n c\n"
	    "\\ No newline at end of file\n");
}
END_TEST

START_TEST(test_bytes_pass_through)
{
	/* CRLF lines keep their CR. */
	GOLDEN("one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\n",
	    "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n one\r\n-two\r\n+2\r\n"
	    " three\r\n");
	/* NUL and bytes that are not UTF-8. */
	GOLDEN("a\0b\n\xff\n", "a\0c\n\xff\n",
	    "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\0b\n+a\0c\n \xff\n");
	/* A lone CR does not end a line. */
	GOLDEN("a\rb\n", "a\rc\n",
	    "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\rb\n+a\rc\n");
}
END_TEST

START_TEST(test_hunks_merge)
{
	/* Six unchanged lines between two changes: one hunk. */
	GOLDEN("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n",
	    "1\n2\n3\n4\nX\n6\n7\n8\n9\n10\n11\nY\n13\n14\n15\n16\n",
	    "--- a/x\n+++ b/x\n@@ -2,14 +2,14 @@\n 2\n 3\n 4\n-5\n+X\n"
	    " 6\n 7\n 8\n 9\n 10\n 11\n-12\n+Y\n 13\n 14\n 15\n");
	/* Seven: two. */
	GOLDEN("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n",
	    "1\n2\n3\n4\nX\n6\n7\n8\n9\n10\n11\n12\nY\n14\n15\n16\n",
	    "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n"
	    " 6\n 7\n 8\n@@ -10,7 +10,7 @@\n 10\n 11\n 12\n-13\n+Y\n"
	    " 14\n 15\n 16\n");
}
END_TEST

START_TEST(test_slide)
{
	/* A run of changes slides down: an inserted repeat goes last. */
	GOLDEN("x\na\n", "x\na\na\n",
	    "--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n x\n a\n+a\n");
	/* ...and a deletion onto the neighbouring change. */
	GOLDEN("a\nb\na\nb\nc\n", "a\nb\nd\n",
	    "--- a/x\n+++ b/x\n@@ -1,5 +1,3 @@\n a\n b\n-a\n-b\n-c\n+d\n");
}
END_TEST

/* --- errors ------------------------------------------------------------- */

START_TEST(test_too_big)
{
	struct buf out = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	size_t big = ENVCTL_DIFF_MAX + 1;
	char *p = xmalloc(big);
	size_t i;

	memset(p, 'x', big);
	buf_addstr(&out, "kept");
	ck_assert_int_eq(diff_unified(&out, p, big, "b\n", 2, "a/big",
	    "b/small", &err), ENVCTL_ETOOBIG);
	ck_assert_int_eq(err.code, ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "cannot diff 'a/big': 16777217 bytes "
	    "exceeds the limit of 16777216 bytes");
	err_release(&err);
	ck_assert_int_eq(diff_unified(&out, "a\n", 2, p, big, "a/small",
	    "b/big", &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "cannot diff 'b/big': 16777217 bytes "
	    "exceeds the limit of 16777216 bytes");
	err_release(&err);
	ck_assert_str_eq(out.data, "kept");

	/* Exactly at the limit is fine (16 lines of 1 MiB). */
	for (i = 1; i <= 16; i++)
		p[i * 1024 * 1024 - 1] = '\n';
	ck_assert_int_eq(diff_unified(&out, p, ENVCTL_DIFF_MAX, "x\n", 2,
	    "a/x", "b/x", &err), 0);
	ck_assert_uint_eq(out.len, 4 + 31 + 16 + ENVCTL_DIFF_MAX + 3);
	ck_assert_mem_eq(out.data + 4, "--- a/x\n+++ b/x\n@@ -1,16 +1 @@\n",
	    31);
	ck_assert_mem_eq(out.data + out.len - 3, "+x\n", 3);
	buf_release(&out);
	free(p);
}
END_TEST

START_TEST(test_output_cap)
{
	struct buf out;
	struct err err = ENVCTL_ERR_INIT;

	buf_init(&out, 30);
	buf_addstr(&out, "kept");
	ck_assert_int_eq(diff_unified(&out, "a\nb\n", 4, "a\nc\n", 4, "a/x",
	    "b/x", &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "diff of 'a/x' and 'b/x' is larger than "
	    "the output limit of 30 bytes");
	ck_assert_uint_eq(out.len, 4);
	ck_assert_str_eq(out.data, "kept");
	err_release(&err);
	buf_release(&out);
}
END_TEST

/* --- agreement with GNU diff -------------------------------------------- */

struct pool_line {
	const char	*s;
	size_t		 len;
};

/* Short lines, so that small alphabets repeat a lot. */
static const struct pool_line pool[] = {
	{ "a", 1 }, { "b", 1 }, { "", 0 }, { "c", 1 },
	{ "x\r", 2 },			/* CRLF line */
	{ "n\0l", 3 },			/* NUL inside */
	{ "\xff\xfe\x80", 3 },		/* not UTF-8 */
	{ "import os", 9 }, { "\tpass", 5 }, { "#", 1 }, { "\r", 1 },
	{ "a ", 2 },
};
#define NPOOL	(sizeof(pool) / sizeof(pool[0]))

struct gen_stats {
	int	 identical;
	int	 empty;
	int	 no_newline;
	int	 cr;
	int	 nul;
	int	 start;
	int	 middle;
	int	 end;
};

static void
render(struct buf *b, const int *v, int n, bool drop_newline)
{
	int i;

	for (i = 0; i < n; i++) {
		buf_add(b, pool[v[i]].s, pool[v[i]].len);
		buf_addch(b, '\n');
	}
	if (drop_newline && b->len > 0) {
		buf_truncate(b, b->len - 1);
		if (b->len == 0 || b->data[b->len - 1] == '\n')
			buf_addch(b, 'q');
	}
}

/*
 * Makes case t: a random file over a small alphabet, and an edited copy
 * (inserts, deletes and replacements at the start, in the middle, at the
 * end), either side possibly without a final newline.
 */
static void
gen_case(uint64_t *rs, int t, struct buf *a, struct buf *b,
    struct gen_stats *st)
{
	static const int sizes[] = { 0, 1, 2, 3, 5, 8, 13, 30, 70, 150 };
	static const int alphabets[] = { 1, 2, 3, 4, 6, 9, (int)NPOOL };
	int va[MAXLINES], vb[MAXLINES], na, nb, k, nops, op, pos, cnt, i;
	int base = (int)xs_below(rs, (unsigned)NPOOL);
	bool dropa, dropb;

	k = alphabets[xs_below(rs, sizeof(alphabets) / sizeof(int))];
	na = sizes[xs_below(rs, sizeof(sizes) / sizeof(int))];
	for (i = 0; i < na; i++)
		va[i] = (base + (int)xs_below(rs, (unsigned)k)) % (int)NPOOL;
	memcpy(vb, va, sizeof(va));
	nb = na;
	nops = t % 10 == 0 ? 0 : 1 + (int)xs_below(rs, 6);
	for (; nops > 0; nops--) {
		op = (int)xs_below(rs, 3);
		switch (xs_below(rs, 3)) {
		case 0:
			pos = 0;
			st->start++;
			break;
		case 1:
			pos = nb;
			st->end++;
			break;
		default:
			pos = (int)xs_below(rs, (unsigned)nb + 1);
			st->middle++;
			break;
		}
		cnt = 1 + (int)xs_below(rs, 4);
		/* Deleting "at the end" deletes the last line. */
		if (op != 0 && pos == nb && pos > 0)
			pos--;
		if (op == 1 || op == 2) {	/* delete, replace */
			if (cnt > nb - pos)
				cnt = nb - pos;
			memmove(vb + pos, vb + pos + cnt,
			    (size_t)(nb - pos - cnt) * sizeof(int));
			nb -= cnt;
		}
		if ((op == 0 || op == 2) && nb + cnt <= MAXLINES) {
			memmove(vb + pos + cnt, vb + pos,
			    (size_t)(nb - pos) * sizeof(int));
			for (i = 0; i < cnt; i++)
				vb[pos + i] = (base + (int)xs_below(rs,
				    (unsigned)k)) % (int)NPOOL;
			nb += cnt;
		}
	}
	dropa = xs_below(rs, 4) == 0;
	dropb = t % 20 == 10 ? !dropa : xs_below(rs, 4) == 0;
	if (xs_below(rs, 2)) {
		render(a, va, na, dropa);
		render(b, vb, nb, dropb);
	} else {
		render(a, vb, nb, dropb);
		render(b, va, na, dropa);
	}
	st->identical += a->len == b->len &&
	    memcmp(a->data, b->data, a->len) == 0;
	st->empty += a->len == 0 || b->len == 0;
	st->no_newline += (a->len > 0 && a->data[a->len - 1] != '\n') ||
	    (b->len > 0 && b->data[b->len - 1] != '\n');
	st->cr += memchr(a->data, '\r', a->len) != NULL ||
	    memchr(b->data, '\r', b->len) != NULL;
	st->nul += memchr(a->data, '\0', a->len) != NULL ||
	    memchr(b->data, '\0', b->len) != NULL;
}

START_TEST(test_gnu_generated)
{
	struct gen_stats st;
	struct ostats os = { 0, 0, 0, 0, 0 };
	uint64_t rs = 0x9e3779b97f4a7c15ULL;
	char *dir, what[64];
	int t;

	if (!have_oracles())
		return;
	memset(&st, 0, sizeof(st));
	dir = tu_mkdtemp();
	for (t = 0; t < NGENERATED; t++) {
		struct buf a = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;

		gen_case(&rs, t, &a, &b, &st);
		snprintf(what, sizeof(what), "generated case %d", t);
		oracle_check(dir, a.data, a.len, b.data, b.len, true, what,
		    &os);
		buf_release(&a);
		buf_release(&b);
	}
	/* The generator must keep producing every kind of input. */
	ck_assert_int_ge(st.identical, 20);
	ck_assert_int_ge(st.empty, 20);
	ck_assert_int_ge(st.no_newline, 60);
	ck_assert_int_ge(st.cr, 60);
	ck_assert_int_ge(st.nul, 60);
	ck_assert_int_ge(st.start, 100);
	ck_assert_int_ge(st.middle, 100);
	ck_assert_int_ge(st.end, 100);
	fprintf(stderr, "check_diff: %d generated pairs (%d identical, %d "
	    "empty, %d without final newline, %d with CR, %d with NUL): "
	    "patch(1) gives b, changes minimal, %zu lines against GNU's %zu "
	    "(fewer in %d)\n", os.pairs, st.identical, st.empty,
	    st.no_newline, st.cr, st.nul, os.ours, os.gnu, os.fewer);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * Code-like files: mostly unique lines with a few very common ones (blank
 * lines, "pass", "}") among them, edited in blocks of up to 30 lines.  Runs
 * of lines that match nothing, with common lines inside, are what the
 * heuristics of discard_confusing_lines act on.
 */
static void
gen_codelike(uint64_t *rs, struct buf *a, struct buf *b)
{
	static const char *const common[] = { "", "pass", "}", "#", "else:" };
	static const int sizes[] = { 20, 50, 100, 200, 400 };
	static const unsigned percent[] = { 20, 40, 60, 80 };
	int *v[2], n[2], alloc, uid = 0, f, i, nops, pos, cnt, op;
	unsigned pc, nc;

	pc = percent[xs_below(rs, 4)];
	nc = 1 + xs_below(rs, 5);
	n[0] = sizes[xs_below(rs, 5)];
	alloc = n[0] + 6 * 30;
	v[0] = xreallocarray(NULL, (size_t)alloc, sizeof(int));
	v[1] = xreallocarray(NULL, (size_t)alloc, sizeof(int));
	/* Common lines are negative, unique ones positive. */
	for (i = 0; i < n[0]; i++)
		v[0][i] = xs_below(rs, 100) < pc ?
		    -1 - (int)xs_below(rs, nc) : ++uid;
	memcpy(v[1], v[0], (size_t)n[0] * sizeof(int));
	n[1] = n[0];
	for (nops = 1 + (int)xs_below(rs, 6); nops > 0; nops--) {
		pos = (int)xs_below(rs, (unsigned)n[1] + 1);
		cnt = 1 + (int)xs_below(rs, 30);
		op = (int)xs_below(rs, 3);
		if (op != 0) {			/* delete, replace */
			if (cnt > n[1] - pos)
				cnt = n[1] - pos;
			memmove(v[1] + pos, v[1] + pos + cnt,
			    (size_t)(n[1] - pos - cnt) * sizeof(int));
			n[1] -= cnt;
		}
		if (op != 1) {			/* insert, replace */
			memmove(v[1] + pos + cnt, v[1] + pos,
			    (size_t)(n[1] - pos) * sizeof(int));
			for (i = 0; i < cnt; i++)
				v[1][pos + i] = xs_below(rs, 100) < pc ?
				    -1 - (int)xs_below(rs, nc) : ++uid;
			n[1] += cnt;
		}
	}
	for (f = 0; f < 2; f++)
		for (i = 0; i < n[f]; i++) {
			if (v[f][i] < 0)
				buf_addf(f == 0 ? a : b, "%s\n",
				    common[-1 - v[f][i]]);
			else
				buf_addf(f == 0 ? a : b, "u%d\n", v[f][i]);
		}
	free(v[0]);
	free(v[1]);
}

START_TEST(test_gnu_codelike)
{
	struct ostats os = { 0, 0, 0, 0, 0 };
	uint64_t rs = 0x2545f4914f6cdd1dULL;
	char *dir, what[64];
	int t;

	if (!have_oracles())
		return;
	dir = tu_mkdtemp();
	for (t = 0; t < NCODELIKE; t++) {
		struct buf a = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;

		gen_codelike(&rs, &a, &b);
		snprintf(what, sizeof(what), "code-like case %d", t);
		oracle_check(dir, a.data, a.len, b.data, b.len, true, what,
		    &os);
		buf_release(&a);
		buf_release(&b);
	}
	fprintf(stderr, "check_diff: %d code-like pairs: patch(1) gives b, "
	    "changes minimal, %zu lines against GNU's %zu (fewer in %d)\n",
	    os.pairs, os.ours, os.gnu, os.fewer);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* n lines "L<r>" with r below k. */
static void
gen_big(uint64_t *rs, struct buf *b, int n, unsigned k)
{
	int i;

	for (i = 0; i < n; i++)
		buf_addf(b, "L%u\n", xs_below(rs, k));
}

/* Copies src with nedits random edits of up to 20 lines each. */
static void
edit_big(uint64_t *rs, struct buf *dst, const struct buf *src, int nedits,
    unsigned k)
{
	size_t *starts = NULL, alloc = 0, n = 0, i, pos, cnt;
	const char *p;
	int e;

	for (p = src->data; p < src->data + src->len; p = strchr(p, '\n') + 1) {
		ENVCTL_GROW(starts, n + 1, alloc);
		starts[n++] = (size_t)(p - src->data);
	}
	ENVCTL_GROW(starts, n + 1, alloc);
	starts[n] = src->len;
	/* Edit points in increasing order, applied while copying. */
	pos = 0;
	for (e = 0; e < nedits && pos < n; e++) {
		size_t next = pos + xs_below(rs, (unsigned)(2 * n /
		    (size_t)nedits + 1));

		if (next > n)
			next = n;
		buf_add(dst, src->data + starts[pos], starts[next] -
		    starts[pos]);
		cnt = 1 + xs_below(rs, 20);
		switch (xs_below(rs, 3)) {
		case 0:			/* insert */
			gen_big(rs, dst, (int)cnt, k);
			pos = next;
			break;
		case 1:			/* delete */
			pos = next + cnt < n ? next + cnt : n;
			break;
		default:		/* replace */
			gen_big(rs, dst, (int)cnt, k);
			pos = next + cnt < n ? next + cnt : n;
			break;
		}
	}
	for (i = pos; i < n; i++)
		buf_add(dst, src->data + starts[i], starts[i + 1] - starts[i]);
	free(starts);
}

/*
 * Larger inputs reach the parts small ones cannot: many rounds per
 * middle-snake search, lines that occur in one file only, and (unrelated
 * files, thousands of differences) searches stopped by ENVCTL_DIFF_DCAP,
 * where only the trivial bound holds.
 */
START_TEST(test_gnu_large)
{
	static const struct {
		int		 n;
		unsigned	 k;
		int		 edits;		/* 0: unrelated second file */
	} cases[] = {
		{ 300, 3, 10 }, { 1000, 20, 40 }, { 2000, 2, 100 },
		{ 3000, 300, 5 }, { 5000, 50, 300 }, { 6000, 1000, 0 },
		{ 4000, 8, 0 }, { 20000, 5000, 30 }, { 20000, 4, 0 },
	};
	struct ostats os = { 0, 0, 0, 0, 0 };
	uint64_t rs = 42;
	char *dir, what[64];
	size_t i;

	if (!have_oracles())
		return;
	dir = tu_mkdtemp();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf a = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;

		gen_big(&rs, &a, cases[i].n, cases[i].k);
		if (cases[i].edits == 0)
			gen_big(&rs, &b, cases[i].n + cases[i].n / 7,
			    cases[i].k);
		else
			edit_big(&rs, &b, &a, cases[i].edits, cases[i].k);
		snprintf(what, sizeof(what), "large case %zu", i);
		oracle_check(dir, a.data, a.len, b.data, b.len, false, what,
		    &os);
		buf_release(&a);
		buf_release(&b);
	}
	/* The cut-off must be reached, or its bound goes untested. */
	ck_assert_int_ge(os.above, 1);
	fprintf(stderr, "check_diff: %d large pairs: patch(1) gives b, %zu "
	    "changed lines against GNU's %zu (fewer in %d, %d above the "
	    "bound)\n", os.pairs, os.ours, os.gnu, os.fewer, os.above);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* A 100k-line file with a few changes: linear in practice. */
START_TEST(test_gnu_100k_lines)
{
	struct ostats os = { 0, 0, 0, 0, 0 };
	struct buf a = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;
	uint64_t rs = 7;
	char *dir, line[64];
	int i, n;

	if (!have_oracles())
		return;
	for (i = 0; i < 100000; i++) {
		n = snprintf(line, sizeof(line), "line %d %u\n", i,
		    xs_below(&rs, 1000000));
		buf_add(&a, line, (size_t)n);
		if (i == 10 || i == 5000 || i == 77777)
			buf_addstr(&b, "changed\n");
		else if (i != 99999)		/* the last line goes */
			buf_add(&b, line, (size_t)n);
		if (i == 300)
			buf_addstr(&b, "inserted\n");
	}
	dir = tu_mkdtemp();
	oracle_check(dir, a.data, a.len, b.data, b.len, false, "100k lines",
	    &os);
	ck_assert_uint_eq(os.ours, 8);
	tu_rmtree(dir);
	free(dir);
	buf_release(&a);
	buf_release(&b);
}
END_TEST


/* CPU seconds used by the process so far. */
static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Far beyond the cost caps: unrelated files of 400,000 lines over 4 values
 * (millions of rounds for an unbounded search), and of lines that all
 * differ.  The diff must stay valid, within the trivial bound, and quick:
 * a generous 20 s of CPU for what takes well under one.
 */
START_TEST(test_huge_bounded)
{
	static const unsigned alphabets[] = { 4, 0 };	/* 0: all differ */
	uint64_t rs = 99;
	char *dir, *why;
	size_t i, changed, trivial;
	double t;
	int n;

	if (!have_oracles())
		return;
	dir = tu_mkdtemp();
	for (i = 0; i < sizeof(alphabets) / sizeof(alphabets[0]); i++) {
		struct buf a = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;
		struct buf out = ENVCTL_BUF_INIT;
		struct lines la, lb;

		if (alphabets[i] == 0)
			for (n = 0; n < 400000; n++) {
				buf_addf(&a, "a%d\n", n);
				buf_addf(&b, "b%d\n", n);
			}
		else {
			gen_big(&rs, &a, 400000, alphabets[i]);
			gen_big(&rs, &b, 400000, alphabets[i]);
		}
		t = cpu_seconds();
		our_diff(&out, a.data, a.len, b.data, b.len);
		t = cpu_seconds() - t;
		lines_split(&la, a.data, a.len);
		lines_split(&lb, b.data, b.len);
		why = check_format(out.data, out.len, la.n, lb.n, &changed);
		if (why == NULL)
			why = check_patch(dir, a.data, a.len, out.data, out.len,
			    b.data, b.len);
		trivial = lines_trivial_bound(a.data, a.len, b.data, b.len);
		ck_assert_msg(why == NULL, "huge case %zu: %s", i, why);
		ck_assert_uint_le(changed, trivial);
		ck_assert_msg(t < 20.0, "huge case %zu took %.1f s", i, t);
		fprintf(stderr, "check_diff: huge case %zu: %zu changed lines "
		    "of %zu at most, %.2f s\n", i, changed, trivial, t);
		free(la.off);
		free(lb.off);
		buf_release(&out);
		buf_release(&a);
		buf_release(&b);
	}
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* --- the checks themselves ---------------------------------------------- */

/*
 * Each check of oracle_check rejects a diff that is wrong its way, so a
 * broken diff.c cannot pass them: a hunk count off by one, context cut
 * short, unmerged hunks, a wrong added line, a context line that is not
 * in a, a hunk that only applies at an offset, and a valid but
 * non-minimal script.
 */
START_TEST(test_checks_catch)
{
	static const char a[] = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n"
	    "12\n13\n14\n15\n16\n";
	static const char b[] = "1\n2\n3\nX\n5\n6\n7\n8\n9\n10\nY\n"
	    "12\n13\n14\n15\n16\n";
	static const char good[] = "--- a/x\n+++ b/x\n@@ -1,14 +1,14 @@\n"
	    " 1\n 2\n 3\n-4\n+X\n 5\n 6\n 7\n 8\n 9\n 10\n-11\n+Y\n"
	    " 12\n 13\n 14\n";
	static const struct {
		const char	*d;
		bool		 format;	/* check_format rejects it */
		bool		 patch;		/* check_patch rejects it */
	} bad[] = {
		/* Count off by one. */
		{ "--- a/x\n+++ b/x\n@@ -1,13 +1,14 @@\n 1\n 2\n 3\n-4\n"
		  "+X\n 5\n 6\n 7\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n 14\n",
		  true, true },
		/*
		 * Two lines of context after, not three (patch -F0 takes
		 * that to mean the end of the file).
		 */
		{ "--- a/x\n+++ b/x\n@@ -1,13 +1,13 @@\n 1\n 2\n 3\n-4\n"
		  "+X\n 5\n 6\n 7\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n",
		  true, true },
		/* Two hunks 6 lines apart: diff -u merges them. */
		{ "--- a/x\n+++ b/x\n@@ -1,7 +1,7 @@\n 1\n 2\n 3\n-4\n+X\n"
		  " 5\n 6\n 7\n@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+Y\n"
		  " 12\n 13\n 14\n", true, false },
		/* Adds the wrong line. */
		{ "--- a/x\n+++ b/x\n@@ -1,14 +1,14 @@\n 1\n 2\n 3\n-4\n"
		  "+Z\n 5\n 6\n 7\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n 14\n",
		  false, true },
		/* A context line a does not have. */
		{ "--- a/x\n+++ b/x\n@@ -1,14 +1,14 @@\n 1\n 2\n 3\n-4\n"
		  "+X\n 5\n 6\n 7\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n 99\n",
		  false, true },
		/* Right lines, wrong start: patch needs an offset. */
		{ "--- a/x\n+++ b/x\n@@ -2,14 +2,14 @@\n 1\n 2\n 3\n-4\n"
		  "+X\n 5\n 6\n 7\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n 14\n",
		  false, true },
	};
	/* Valid, applies, but 6 changed lines where 4 do. */
	static const char longer[] = "--- a/x\n+++ b/x\n@@ -1,14 +1,14 @@\n"
	    " 1\n 2\n 3\n-4\n+X\n 5\n 6\n 7\n 8\n 9\n-10\n-11\n+10\n+Y\n"
	    " 12\n 13\n 14\n";
	size_t changed, gnu, minimal, trivial, i;
	char *dir, *why;

	if (!have_oracles())
		return;
	dir = tu_mkdtemp();
	gnu = gnu_changes(dir, a, sizeof(a) - 1, b, sizeof(b) - 1, "catch");
	minimal = minimal_changes(a, sizeof(a) - 1, b, sizeof(b) - 1);
	trivial = lines_trivial_bound(a, sizeof(a) - 1, b, sizeof(b) - 1);
	ck_assert_uint_eq(gnu, 4);
	ck_assert_uint_eq(minimal, 4);
	ck_assert_uint_eq(trivial, 16);

	ck_assert_ptr_null(check_format(good, sizeof(good) - 1, 16, 16,
	    &changed));
	ck_assert_uint_eq(changed, 4);
	ck_assert_ptr_null(check_patch(dir, a, sizeof(a) - 1, good,
	    sizeof(good) - 1, b, sizeof(b) - 1));
	ck_assert_ptr_null(check_count(changed, gnu, trivial, minimal));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = check_format(bad[i].d, strlen(bad[i].d), 16, 16,
		    &changed);
		ck_assert_msg((why != NULL) == bad[i].format,
		    "bad diff %zu: check_format said %s", i,
		    why != NULL ? why : "fine");
		free(why);
		why = check_patch(dir, a, sizeof(a) - 1, bad[i].d,
		    strlen(bad[i].d), b, sizeof(b) - 1);
		ck_assert_msg((why != NULL) == bad[i].patch,
		    "bad diff %zu: check_patch said %s", i,
		    why != NULL ? why : "fine");
		free(why);
	}

	ck_assert_ptr_null(check_format(longer, sizeof(longer) - 1, 16, 16,
	    &changed));
	ck_assert_ptr_null(check_patch(dir, a, sizeof(a) - 1, longer,
	    sizeof(longer) - 1, b, sizeof(b) - 1));
	ck_assert_uint_eq(changed, 6);
	/* Caught by the minimum, and by GNU's count without it. */
	ck_assert_ptr_nonnull(why = check_count(changed, gnu, trivial,
	    minimal));
	free(why);
	ck_assert_ptr_nonnull(why = check_count(changed, gnu, trivial,
	    SIZE_MAX));
	free(why);
	/* Above the minimality bound only the trivial one holds. */
	ck_assert_ptr_null(check_count(changed, 2 * ENVCTL_DIFF_DCAP + 1,
	    trivial, SIZE_MAX));
	ck_assert_ptr_nonnull(why = check_count(trivial + 1,
	    2 * ENVCTL_DIFF_DCAP + 1, trivial, SIZE_MAX));
	free(why);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("golden"), *tg = tcase_create("gnu");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_identical);
	tcase_add_test(tc, test_appends);
	tcase_add_test(tc, test_to_and_from_empty);
	tcase_add_test(tc, test_no_final_newline);
	tcase_add_test(tc, test_bytes_pass_through);
	tcase_add_test(tc, test_hunks_merge);
	tcase_add_test(tc, test_slide);
	tcase_add_test(tc, test_too_big);
	tcase_add_test(tc, test_output_cap);
	suite_add_tcase(s, tc);
	/* Hundreds of diff(1) runs; slow under valgrind. */
	tcase_set_timeout(tg, 600);
	tcase_add_test(tg, test_checks_catch);
	tcase_add_test(tg, test_gnu_generated);
	tcase_add_test(tg, test_gnu_codelike);
	tcase_add_test(tg, test_gnu_large);
	tcase_add_test(tg, test_gnu_100k_lines);
	tcase_add_test(tg, test_huge_bounded);
	suite_add_tcase(s, tg);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
