/*
 * valrules.c - the value rules of NCCL and Triton (see valrules.h).
 *
 * Every rule restates, in envctl's own code, what the cited NCCL or Triton
 * source does with the value; tests/unit/check_valrules.c cites the lines.
 */
#include "valrules.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"

#define V(a, b, c)	ENVCTL_VERNUM(a, b, c)
#define QUOTE_MAX	64	/* bytes of a value shown in a message */

/* src/init.cc ncclProtoStr, ncclAlgoStr, ncclFuncStr. */
static const char *const protos[] = { "LL", "LL128", "Simple", NULL };
static const char *const algos_2_18[] = { "Tree", "Ring", "CollNetDirect",
	"CollNetChain", "NVLS", "NVLSTree", NULL };
static const char *const algos_2_23[] = { "Tree", "Ring", "CollNetDirect",
	"CollNetChain", "NVLS", "NVLSTree", "PAT", NULL };
static const char *const funcs[] = { "Broadcast", "Reduce", "AllGather",
	"ReduceScatter", "AllReduce", NULL };
/* src/graph/topo.cc topoPathTypeStr, up to PATH_SYS. */
static const char *const levels_2_18[] = { "LOC", "NVL", "NVB", "PIX",
	"PXB", "PXN", "PHB", "SYS", NULL };
static const char *const levels_2_26[] = { "LOC", "NVL", "NVB", "C2C",
	"PIX", "PXB", "PXN", "PHB", "SYS", NULL };
static const char *const levels_2_27[] = { "LOC", "NVL", "NVB", "C2C",
	"PIX", "PXB", "P2C", "PXN", "PHB", "SYS", NULL };
/* src/graph/paths.cc levelsOldToNew: legacy 0-5 to path types. */
static const char *const legacy_levels[] = { "LOC", "PIX", "PXB", "PHB",
	"SYS", "SYS" };

#define NCCL	ENVCTL_PRODUCT_NCCL
#define ERR	ENVCTL_VALRULE_ERROR
#define WARN	ENVCTL_VALRULE_WARNING

static const struct valrule table[] = {
	{ "NCCL_PROTO", ENVCTL_VALRULE_LIST_DROP, NCCL, V(2, 18, 1),
	    V(2, 24, 3), WARN, "src/graph/tuning.cc parseList, "
	    "ncclTopoTuneModel (v2.18.1-1 to v2.23.4-1)", protos,
	    "a protocol", 0, NULL },
	{ "NCCL_PROTO", ENVCTL_VALRULE_LIST_STRICT, NCCL, V(2, 24, 3), 0, ERR,
	    "src/graph/tuning.cc parseList, ncclTopoTuneModel (v2.24.3-1 "
	    "to v2.30.7-1)", protos, "a protocol", 0, NULL },
	{ "NCCL_ALGO", ENVCTL_VALRULE_LIST_DROP, NCCL, V(2, 18, 1),
	    V(2, 23, 0), WARN, "src/graph/tuning.cc parseList; src/init.cc "
	    "ncclAlgoStr (v2.18.1-1 to v2.22.3-1)", algos_2_18,
	    "an algorithm", 0, NULL },
	{ "NCCL_ALGO", ENVCTL_VALRULE_LIST_DROP, NCCL, V(2, 23, 0),
	    V(2, 24, 3), WARN, "src/graph/tuning.cc parseList; src/init.cc "
	    "ncclAlgoStr gains PAT (v2.23.4-1)", algos_2_23, "an algorithm",
	    0, NULL },
	{ "NCCL_ALGO", ENVCTL_VALRULE_LIST_STRICT, NCCL, V(2, 24, 3), 0, ERR,
	    "src/graph/tuning.cc parseList, ncclTopoTuneModel (v2.24.3-1 "
	    "to v2.30.7-1)", algos_2_23, "an algorithm", 0, NULL },
	{ "NCCL_P2P_LEVEL", ENVCTL_VALRULE_LEVEL, NCCL, V(2, 18, 1),
	    V(2, 26, 0), ERR, "src/graph/paths.cc ncclGetLevel; "
	    "src/graph/topo.cc topoPathTypeStr (v2.18.1-1 to v2.25.1-1)",
	    levels_2_18, "a P2P level", 0, NULL },
	{ "NCCL_P2P_LEVEL", ENVCTL_VALRULE_LEVEL, NCCL, V(2, 26, 0),
	    V(2, 27, 0), ERR, "src/graph/paths.cc ncclGetLevel; "
	    "src/graph/topo.cc topoPathTypeStr gains C2C (v2.26.2-1)",
	    levels_2_26, "a P2P level", 0, NULL },
	{ "NCCL_P2P_LEVEL", ENVCTL_VALRULE_LEVEL, NCCL, V(2, 27, 0), 0, ERR,
	    "src/graph/paths.cc ncclGetLevel; src/graph/topo.cc "
	    "topoPathTypeStr gains P2C (v2.27.3-1 to v2.30.7-1)",
	    levels_2_27, "a P2P level", 0, NULL },
	{ "NCCL_BUFFSIZE", ENVCTL_VALRULE_BUFFSIZE, NCCL, V(2, 18, 1), 0,
	    WARN, "src/misc/param.cc ncclLoadParam (strtoll); src/init.cc "
	    "computeBuffSizes (v2.18.1-1 to v2.30.7-1)", NULL, NULL, 0,
	    NULL },
	{ "NCCL_NTHREADS", ENVCTL_VALRULE_NTHREADS, NCCL, V(2, 18, 1),
	    V(2, 27, 3), WARN, "src/graph/tuning.cc getNthreads, WARN "
	    "(v2.18.1-1 to v2.26.6-1)", NULL, NULL, 512, "NCCL warns and" },
	{ "NCCL_NTHREADS", ENVCTL_VALRULE_NTHREADS, NCCL, V(2, 27, 3), 0,
	    WARN, "src/graph/tuning.cc getNthreads, INFO only (v2.27.3-1 to "
	    "v2.30.7-1)", NULL, NULL, 512, "NCCL notes only at INFO level "
	    "and" },
	{ "NCCL_MAX_NCHANNELS", ENVCTL_VALRULE_NCHANNELS, NCCL, V(2, 18, 1),
	    V(2, 25, 0), WARN, "src/graph/connect.cc ncclMaxNchannels; "
	    "src/include/device.h MAXCHANNELS 32 (v2.18.1-1 to v2.24.3-1)",
	    NULL, NULL, 32, NULL },
	{ "NCCL_MAX_NCHANNELS", ENVCTL_VALRULE_NCHANNELS, NCCL, V(2, 25, 0),
	    0, WARN, "src/graph/connect.cc ncclMaxNchannels; "
	    "src/include/device.h MAXCHANNELS 64 (v2.25.1-1 to v2.30.7-1)",
	    NULL, NULL, 64, NULL },
	{ "NCCL_LL_THRESHOLD", ENVCTL_VALRULE_REMOVED, NCCL, V(2, 5, 6), 0,
	    WARN, "src/init.cc NCCL_PARAM(LlThreshold) in v2.4.8-1, gone in "
	    "v2.5.6-1", NULL, NULL, 0, "removed in NCCL 2.5.6, which "
	    "ignores it (choose protocols with NCCL_PROTO)" },
	{ "NCCL_TREE_THRESHOLD", ENVCTL_VALRULE_REMOVED, NCCL, V(2, 5, 6), 0,
	    WARN, "src/init.cc NCCL_PARAM(TreeThreshold) in v2.4.8-1, gone "
	    "in v2.5.6-1", NULL, NULL, 0, "removed in NCCL 2.5.6, which "
	    "ignores it (choose algorithms with NCCL_ALGO)" },
	{ "TRITON_PTXAS_PATH", ENVCTL_VALRULE_PTXAS, ENVCTL_PRODUCT_TRITON,
	    V(3, 6, 0), 0, WARN, "triton-lang/triton third_party/nvidia/"
	    "backend/compiler.py get_ptxas, python/triton/knobs.py "
	    "ptxas_blackwell (PR #8959, issue #10331)", NULL, NULL, 0,
	    "TRITON_PTXAS_BLACKWELL_PATH" },
};

#undef NCCL
#undef ERR
#undef WARN

const struct valrule *
valrules_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

int
valrules_applies(const struct valrule *r, const struct valrules_ctx *c)
{
	unsigned v;

	if (r->product == ENVCTL_PRODUCT_TRITON) {
		v = c->triton_version;
		if (r->kind == ENVCTL_VALRULE_PTXAS && c->gpu_sm < 100)
			return 0;
		return v == 0 || (v >= r->since && (r->until == 0 ||
		    v < r->until));
	}
	v = c->nccl_version;
	if (v == 0)	/* some version of the field */
		return r->since < ENVCTL_NCCL_FIELD_END && (r->until == 0 ||
		    r->until > ENVCTL_NCCL_FIELD_MIN);
	return v >= r->since && (r->until == 0 || v < r->until);
}

/* "2.24.3", or "2.23" when the patch level is 0. */
static void
add_version(struct buf *b, unsigned v)
{
	buf_addf(b, "%u.%u", v / 10000, v / 100 % 100);
	if (v % 100 != 0)
		buf_addf(b, ".%u", v % 100);
}

/* Appends s (n bytes) quoted for a message, shortened, or masked. */
static void
add_quoted(struct buf *b, const char *s, size_t n, int secret)
{
	buf_addch(b, '\'');
	if (secret)
		buf_addstr(b, "********");
	else if (n > QUOTE_MAX) {
		str_addvis(b, s, QUOTE_MAX, 0);
		buf_addstr(b, "...");
	} else
		str_addvis(b, s, n, 0);
	buf_addch(b, '\'');
}

static void
add_words(struct buf *b, const char *const *w)
{
	size_t i;

	for (i = 0; w[i] != NULL; i++)
		buf_addf(b, "%s%s", i > 0 ? ", " : "", w[i]);
}

struct judge {
	struct valrules_result *res;
	const struct valrules_value *v;
	const struct valrule *rule;
	struct err	*err;
	struct buf	 msg;
};

/* Starts a message: "NAME: ". */
static struct buf *
msg_start(struct judge *j)
{
	buf_reset(&j->msg);
	buf_addf(&j->msg, "%s: ", j->v->name);
	return &j->msg;
}

/* Records the message built in j->msg, once. */
static void
msg_end(struct judge *j, enum valrules_severity sev)
{
	struct valrules_result *res = j->res;
	struct valrules_finding *f;
	size_t i;

	for (i = 0; i < res->n; i++)
		if (strcmp(res->items[i].msg, j->msg.data) == 0)
			return;
	if (res->n >= ENVCTL_VALRULES_MAX_FINDINGS)
		return;
	ENVCTL_GROW(res->items, res->n + 1, res->alloc);
	f = &res->items[res->n++];
	f->severity = sev;
	f->msg = xstrdup(j->msg.data);
	f->rule = j->rule;
	if (sev == ENVCTL_VALRULE_ERROR) {
		res->nerrors++;
		err_addat(j->err, ENVCTL_EINVALID, NULL, 0, 0, "%s", f->msg);
	}
}

/* The whole value, quoted, as the subject of a message. */
static void
add_value(struct judge *j)
{
	add_quoted(&j->msg, j->v->value, strlen(j->v->value), j->v->secret);
}

/* "'tok'" or "'tok' in 'value'" when the token is not the value. */
static void
add_token(struct judge *j, const char *tok, size_t n)
{
	add_quoted(&j->msg, tok, n, j->v->secret);
	if (n != strlen(j->v->value) && !j->v->secret) {
		buf_addstr(&j->msg, " in ");
		add_value(j);
	}
}

/* Index of word (n bytes) in words, case-insensitively; -1 if none. */
static int
find_word(const char *const *words, const char *s, size_t n, int icase)
{
	int i;

	for (i = 0; words[i] != NULL; i++)
		if (strlen(words[i]) == n && (icase ?
		    strncasecmp(words[i], s, n) == 0 :
		    strncmp(words[i], s, n) == 0))
			return i;
	return -1;
}

/*
 * Next token of s[*pos..end) split at any byte of seps, skipping empty
 * tokens, as strtok_r() does.  Returns 0 at the end.
 */
static int
next_token(const char *s, size_t end, size_t *pos, const char *seps,
    size_t *tok, size_t *len)
{
	size_t p = *pos;

	while (p < end && strchr(seps, s[p]) != NULL)
		p++;
	if (p >= end) {
		*pos = end;
		return 0;
	}
	*tok = p;
	while (p < end && strchr(seps, s[p]) == NULL)
		p++;
	*len = p - *tok;
	*pos = p;
	return 1;
}

static void
refused(struct judge *j)
{
	buf_addstr(&j->msg, "; NCCL >= 2.24 refuses to initialise with it");
	msg_end(j, ENVCTL_VALRULE_ERROR);
}

/* "protocol" of "a protocol". */
static const char *
bare_noun(const char *noun)
{
	const char *sp = strchr(noun, ' ');

	return sp != NULL ? sp + 1 : noun;
}

/* "(LL, LL128, Simple)" */
static void
add_set(struct judge *j, const char *const *words)
{
	buf_addstr(&j->msg, " (");
	add_words(&j->msg, words);
	buf_addch(&j->msg, ')');
}

/*
 * parseList as NCCL 2.24.3 and later have it: ';'-separated entries, each
 * "[collective:][^]elem,elem"; only the first may lack a collective; every
 * name is matched case-insensitively and an unknown one fails init.
 */
static void
check_list_strict(struct judge *j)
{
	const char *s = j->v->value;
	const char *const *w = j->rule->words;
	size_t end = strlen(s), pos = 0, e, elen, sub, p, plen, l, llen, ep;
	unsigned enabled[8], all, nwords, k;
	int first = 1, set, i, f;

	for (nwords = 0; w[nwords] != NULL; nwords++)
		;
	all = (1u << nwords) - 1;
	for (k = 0; k < 5; k++)
		enabled[k] = all;
	if (end == 0) {
		msg_start(j);
		buf_addf(&j->msg, "'' is empty: NCCL keeps its default %ss",
		    bare_noun(j->rule->noun));
		msg_end(j, ENVCTL_VALRULE_WARNING);
		return;
	}
	while (next_token(s, end, &pos, ";", &e, &elen)) {
		sub = e;
		/* strtok_r on ':' twice: the rest after a second ':' is lost. */
		next_token(s, e + elen, &sub, ":", &p, &plen);
		if (!next_token(s, e + elen, &sub, ":", &l, &llen)) {
			if (!first) {
				msg_start(j);
				add_token(j, s + e, elen);
				buf_addstr(&j->msg, " has no collective prefix, "
				    "which every entry but the first needs");
				refused(j);
				return;
			}
			l = p;
			llen = plen;
			plen = 0;
		} else if (sub < e + elen) {
			msg_start(j);
			add_token(j, s + sub, e + elen - sub);
			buf_addstr(&j->msg, " is ignored: NCCL reads each entry "
			    "only up to its second ':'");
			msg_end(j, ENVCTL_VALRULE_WARNING);
		}
		first = 0;
		f = -1;
		if (plen > 0 && (f = find_word(funcs, s + p, plen, 1)) < 0) {
			msg_start(j);
			add_token(j, s + p, plen);
			buf_addstr(&j->msg, " is not a collective");
			add_set(j, funcs);
			refused(j);
			return;
		}
		set = 1;
		if (llen > 0 && s[l] == '^') {
			set = 0;
			l++;
			llen--;
		}
		k = set ? 0 : all;
		for (ep = l; next_token(s, l + llen, &ep, ",", &e, &elen);) {
			if ((i = find_word(w, s + e, elen, 1)) < 0) {
				msg_start(j);
				add_token(j, s + e, elen);
				buf_addf(&j->msg, " is not %s", j->rule->noun);
				add_set(j, w);
				refused(j);
				return;
			}
			k = set ? k | 1u << i : k & ~(1u << i);
		}
		for (i = 0; i < 5; i++)
			if (f < 0 || f == i)
				enabled[i] = k;
	}
	for (k = 0, i = 0; i < 5; i++)
		k += enabled[i] == 0;
	if (k == 0)
		return;
	msg_start(j);
	add_value(j);
	buf_addf(&j->msg, " enables no %s for ", bare_noun(j->rule->noun));
	for (i = 0, f = 0; i < 5; i++)
		if (enabled[i] == 0)
			buf_addf(&j->msg, "%s%s", f++ > 0 ? ", " : "",
			    funcs[i]);
	buf_addstr(&j->msg, ": NCCL fails those collectives with "
	    "'no algorithm/protocol available'");
	msg_end(j, k == 5 ? ENVCTL_VALRULE_ERROR : ENVCTL_VALRULE_WARNING);
}

/*
 * parseList as NCCL 2.18 to 2.23 have it: an optional '^', then
 * ','-separated names, matched case-insensitively; an unknown one is
 * dropped without a word.  With no '^', the list starts empty.
 */
static void
check_list_drop(struct judge *j)
{
	const char *s = j->v->value;
	const char *const *w = j->rule->words;
	size_t end = strlen(s), pos = 0, e, elen;
	int exclude = s[0] == '^', found = 0;

	for (pos = exclude; next_token(s, end, &pos, ",", &e, &elen);) {
		if (find_word(w, s + e, elen, 1) >= 0) {
			found = 1;
			continue;
		}
		msg_start(j);
		add_token(j, s + e, elen);
		buf_addf(&j->msg, " is not %s", j->rule->noun);
		add_set(j, w);
		buf_addstr(&j->msg, "; NCCL before ");
		add_version(&j->msg, j->rule->until);
		buf_addstr(&j->msg, " drops it silently");
		if (memchr(s + e, ';', elen) != NULL ||
		    memchr(s + e, ':', elen) != NULL)
			buf_addstr(&j->msg, " (collective prefixes need NCCL "
			    ">= 2.24)");
		msg_end(j, ENVCTL_VALRULE_WARNING);
	}
	if (exclude || found)
		return;
	msg_start(j);
	add_value(j);
	buf_addf(&j->msg, " enables no %s: NCCL before ",
	    bare_noun(j->rule->noun));
	add_version(&j->msg, j->rule->until);
	buf_addstr(&j->msg, " then fails every collective with 'no "
	    "algorithm/protocol available'");
	msg_end(j, ENVCTL_VALRULE_ERROR);
}

/* What strtoll(s, NULL, 0) makes of s, and how it got there. */
struct intread {
	long long	 value;
	size_t		 end;		/* bytes consumed */
	int		 base;
	int		 digits;	/* any digit read */
	int		 overflow;	/* ERANGE */
};

/* Restates C's strtoll(s, &end, 0), which NCCL calls with end NULL. */
static void
read_int(struct intread *r, const char *s)
{
	const char *p = s;
	unsigned long long acc = 0, lim;
	int neg = 0, d;

	memset(r, 0, sizeof(*r));
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	r->base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    isxdigit((unsigned char)p[2])) {
		r->base = 16;
		p += 2;
	} else if (p[0] == '0')
		r->base = 8;
	lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	for (;; p++) {
		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (isalpha((unsigned char)*p))
			d = tolower((unsigned char)*p) - 'a' + 10;
		else
			break;
		if (d >= r->base)
			break;
		r->digits = 1;
		if (acc > (lim - (unsigned)d) / (unsigned)r->base)
			r->overflow = 1;
		else
			acc = acc * (unsigned)r->base + (unsigned)d;
	}
	if (!r->digits) {
		r->end = 0;
		return;
	}
	r->end = (size_t)(p - s);
	if (r->overflow)
		r->value = neg ? LLONG_MIN : LLONG_MAX;
	else if (neg)
		r->value = acc == lim ? LLONG_MIN : -(long long)acc;
	else
		r->value = (long long)acc;
}

/*
 * ncclLoadParam: empty is unset, strtoll(s, NULL, 0) otherwise, ERANGE
 * falls back to the default.  Returns 1 with *v the value NCCL uses, 0
 * when NCCL uses its default.
 */
static int
check_int_syntax(struct judge *j, long long *v)
{
	const char *s = j->v->value;
	struct intread r;

	if (s[0] == '\0') {
		msg_start(j);
		buf_addstr(&j->msg, "'' is empty: NCCL uses its default");
		msg_end(j, ENVCTL_VALRULE_WARNING);
		return 0;
	}
	read_int(&r, s);
	if (r.overflow) {
		msg_start(j);
		add_value(j);
		buf_addstr(&j->msg, " is out of range: NCCL uses its default");
		msg_end(j, ENVCTL_VALRULE_WARNING);
		return 0;
	}
	*v = r.value;
	if (!r.digits) {
		msg_start(j);
		add_value(j);
		buf_addstr(&j->msg, " is not a number: NCCL reads it as 0 "
		    "(strtoll)");
		msg_end(j, ENVCTL_VALRULE_WARNING);
	} else if (s[r.end] != '\0') {
		msg_start(j);
		add_value(j);
		buf_addf(&j->msg, " is read as %lld (NCCL parses integers "
		    "with strtoll: no suffixes%s)", r.value, r.base == 8 ?
		    "; a leading 0 means octal" : "");
		msg_end(j, ENVCTL_VALRULE_WARNING);
	} else if (r.base == 8 && r.value != 0) {
		msg_start(j);
		add_value(j);
		buf_addf(&j->msg, " is octal: %lld", r.value);
		msg_end(j, ENVCTL_VALRULE_WARNING);
	}
	if (*v == -2) {
		msg_start(j);
		add_value(j);
		buf_addstr(&j->msg, " is NCCL's mark for unset: NCCL uses its "
		    "default");
		msg_end(j, ENVCTL_VALRULE_WARNING);
		return 0;
	}
	return 1;
}

/* C's conversion of an int64_t to int, as gcc and clang do it. */
static int
to_int(long long v)
{
	return (int)(int32_t)(uint32_t)(unsigned long long)v;
}

static void
check_int(struct judge *j)
{
	long long v;
	int nt;

	if (!check_int_syntax(j, &v))
		return;
	msg_start(j);
	add_value(j);
	switch (j->rule->kind) {
	case ENVCTL_VALRULE_BUFFSIZE:
		/* computeBuffSizes takes it as it is. */
		if (v > 0 && v <= INT_MAX)
			return;
		buf_addf(&j->msg, " is not a buffer size from 1 to %d: NCCL "
		    "uses %lld unchecked", INT_MAX, v);
		break;
	case ENVCTL_VALRULE_NTHREADS:
		if ((nt = to_int(v)) <= 0) {
			buf_addstr(&j->msg, " is not positive: NCCL uses its "
			    "default");
			break;
		}
		if (nt % 32 != 0)
			buf_addf(&j->msg, " is not a multiple of 32: %s uses "
			    "%lld", j->rule->note, j->rule->limit);
		else if (nt > j->rule->limit)
			buf_addf(&j->msg, " is above %lld: %s uses %lld",
			    j->rule->limit, j->rule->note, j->rule->limit);
		else if (nt < 64)
			buf_addf(&j->msg, " is below 64: %s uses 64",
			    j->rule->note);
		else if (nt != v)
			buf_addf(&j->msg, " does not fit an int: NCCL uses %d",
			    nt);
		else
			return;
		break;
	case ENVCTL_VALRULE_NCHANNELS:
		nt = to_int(v);
		if (nt > j->rule->limit)
			buf_addf(&j->msg, " is above %lld: NCCL caps it at "
			    "%lld", j->rule->limit, j->rule->limit);
		else if (nt < 1)
			buf_addf(&j->msg, " is below 1: NCCL uses 1");
		else if (nt != v)
			buf_addf(&j->msg, " does not fit an int: NCCL uses %d",
			    nt);
		else
			return;
		break;
	default:
		return;
	}
	msg_end(j, ENVCTL_VALRULE_WARNING);
}

/*
 * ncclGetLevel: an exact, case-sensitive level name; else, when the first
 * byte is a digit, strtol(s, NULL, 0) as a legacy level capped at 5; else
 * unset, without a word.
 */
static void
check_level(struct judge *j)
{
	const char *s = j->v->value;
	const char *const *w = j->rule->words;
	struct intread r;
	int i;

	if (find_word(w, s, strlen(s), 0) >= 0)
		return;
	msg_start(j);
	add_value(j);
	if (s[0] >= '0' && s[0] <= '9') {
		read_int(&r, s);
		if (s[1] == '\0' && s[0] <= '5')
			return;
		if (r.overflow || r.value > INT_MAX) {
			buf_addstr(&j->msg, " overflows the int NCCL reads a "
			    "legacy level into");
			msg_end(j, ENVCTL_VALRULE_ERROR);
			return;
		}
		i = r.value > 5 ? 5 : (int)r.value;
		buf_addf(&j->msg, " is read as the legacy level %d (%s)", i,
		    legacy_levels[i]);
		msg_end(j, ENVCTL_VALRULE_WARNING);
		return;
	}
	buf_addf(&j->msg, " is not %s", j->rule->noun);
	add_set(j, w);
	buf_addstr(&j->msg, "; NCCL treats it as unset, without a warning");
	if ((i = find_word(w, s, strlen(s), 1)) >= 0)
		buf_addf(&j->msg, " (names are case-sensitive: '%s')", w[i]);
	msg_end(j, j->rule->severity);
}

static void
check_rule(struct judge *j, const struct valrules_ctx *c)
{
	switch (j->rule->kind) {
	case ENVCTL_VALRULE_LIST_DROP:
		check_list_drop(j);
		break;
	case ENVCTL_VALRULE_LIST_STRICT:
		check_list_strict(j);
		break;
	case ENVCTL_VALRULE_LEVEL:
		check_level(j);
		break;
	case ENVCTL_VALRULE_BUFFSIZE:
	case ENVCTL_VALRULE_NTHREADS:
	case ENVCTL_VALRULE_NCHANNELS:
		check_int(j);
		break;
	case ENVCTL_VALRULE_REMOVED:
		msg_start(j);
		buf_addstr(&j->msg, j->rule->note);
		msg_end(j, j->rule->severity);
		break;
	case ENVCTL_VALRULE_PTXAS:
		msg_start(j);
		buf_addf(&j->msg, "Triton >= 3.6 does not use it on sm_%d "
		    "(sm >= 100): it reads %s there, else its bundled "
		    "ptxas-blackwell (triton-lang/triton#10331)", c->gpu_sm,
		    j->rule->note);
		msg_end(j, j->rule->severity);
		break;
	}
}

/* A decimal integer, strictly: [+-]digits, nothing else. */
static int
strict_int(const char *s, long long *out)
{
	size_t i = (s[0] == '+' || s[0] == '-');
	char *end;

	if (s[i] == '\0' || strspn(s + i, "0123456789") != strlen(s + i))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

static void
check_custom(struct judge *j)
{
	const struct valrules_custom *cr = j->v->custom;
	const char *s = j->v->value;
	regmatch_t m;
	long long n;
	size_t i;

	msg_start(j);
	add_value(j);
	switch (cr->kind) {
	case ENVCTL_VALRULE_ALLOWED:
		for (i = 0; i < cr->nallowed; i++)
			if ((cr->icase ? strcasecmp(cr->allowed[i], s) :
			    strcmp(cr->allowed[i], s)) == 0)
				return;
		buf_addstr(&j->msg, " is not one of ");
		for (i = 0; i < cr->nallowed && i < 16; i++)
			buf_addf(&j->msg, "%s%s", i > 0 ? ", " : "",
			    cr->allowed[i]);
		if (i < cr->nallowed)
			buf_addf(&j->msg, " and %zu more", cr->nallowed - i);
		if (cr->icase)
			buf_addstr(&j->msg, " (any case)");
		break;
	case ENVCTL_VALRULE_RANGE:
		if (strict_int(s, &n) != 0)
			buf_addstr(&j->msg, " is not a decimal integer");
		else if ((cr->has_min && n < cr->min) ||
		    (cr->has_max && n > cr->max))
			buf_addstr(&j->msg, " is out of range");
		else
			return;
		if (cr->has_min && cr->has_max)
			buf_addf(&j->msg, " (%lld to %lld)", cr->min, cr->max);
		else if (cr->has_min)
			buf_addf(&j->msg, " (at least %lld)", cr->min);
		else
			buf_addf(&j->msg, " (at most %lld)", cr->max);
		break;
	case ENVCTL_VALRULE_PATTERN:
		if (!cr->compiled)	/* refused at load */
			return;
		if (regexec(&cr->re, s, 1, &m, 0) == 0 && m.rm_so == 0 &&
		    (size_t)m.rm_eo == strlen(s))
			return;
		buf_addstr(&j->msg, " does not match ");
		add_quoted(&j->msg, cr->pattern, strlen(cr->pattern), 0);
		break;
	}
	buf_addf(&j->msg, " (playbook rule at %s)",
	    cr->where != NULL ? cr->where : "?");
	msg_end(j, cr->severity);
}

int
valrules_check(struct valrules_result *res, const struct valrules_ctx *c,
    const struct valrules_value *v, struct err *err)
{
	struct judge j;
	size_t i, before = res->nerrors;

	memset(&j, 0, sizeof(j));
	j.res = res;
	j.v = v;
	j.err = err;
	buf_init(&j.msg, 0);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].name, v->name) != 0 ||
		    !valrules_applies(&table[i], c))
			continue;
		j.rule = &table[i];
		check_rule(&j, c);
	}
	j.rule = NULL;
	if (v->custom != NULL)
		check_custom(&j);
	buf_wipe(&j.msg);
	return res->nerrors > before ? ENVCTL_EINVALID : 0;
}

void
valrules_result_release(struct valrules_result *res)
{
	size_t i;

	for (i = 0; i < res->n; i++)
		free(res->items[i].msg);
	free(res->items);
	memset(res, 0, sizeof(*res));
}

int
valrules_custom_compile(struct valrules_custom *cr, struct err *err)
{
	char why[256];
	int r;

	if (strlen(cr->pattern) > ENVCTL_VALRULES_MAX_PATTERN)
		return err_set(err, ENVCTL_ETOOBIG, "pattern is longer than "
		    "%d bytes", ENVCTL_VALRULES_MAX_PATTERN);
	r = regcomp(&cr->re, cr->pattern, REG_EXTENDED |
	    (cr->icase ? REG_ICASE : 0));
	if (r != 0) {
		regerror(r, &cr->re, why, sizeof(why));
		return err_set(err, ENVCTL_EINVALID, "invalid pattern '%s': "
		    "%s", cr->pattern, why);
	}
	cr->compiled = 1;
	return 0;
}

void
valrules_custom_release(struct valrules_custom *cr)
{
	size_t i;

	if (cr == NULL)
		return;
	for (i = 0; i < cr->nallowed; i++)
		free(cr->allowed[i]);
	free(cr->allowed);
	free(cr->pattern);
	free(cr->where);
	if (cr->compiled)
		regfree(&cr->re);
	memset(cr, 0, sizeof(*cr));
}

int
valrules_parse_version(unsigned *out, const char *s, struct err *err)
{
	unsigned long part[3] = { 0, 0, 0 };
	const char *p = s;
	char *end;
	int i;

	for (i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*p))
			goto bad;
		part[i] = strtoul(p, &end, 10);
		if (part[i] > 99 || end - p > 2)
			goto bad;
		p = end;
		if (*p != '.')
			break;
		p++;
	}
	/* Two or three parts, then the end or a build suffix. */
	if (i == 0 || i == 3 || (*p != '\0' && *p != '-' && *p != '+'))
		goto bad;
	*out = ENVCTL_VERNUM(part[0], part[1], part[2]);
	return 0;
bad:
	return err_set(err, ENVCTL_EINVALID, "'%s' is not a version (N.N or "
	    "N.N.N)", s);
}
