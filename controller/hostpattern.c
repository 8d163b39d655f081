/* hostpattern.c - Ansible host patterns (see hostpattern.h). */
#include "hostpattern.h"

#include <fnmatch.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/hostrange.h"
#include "controller/inventory.h"

#define BLANKS	" \t\n\r\f\v"

struct terms {
	char	**v;
	size_t	 n, alloc;
};

/* Adds s[0..len) without surrounding blanks, unless nothing is left. */
static void
terms_add(struct terms *t, const char *s, size_t len)
{
	while (len > 0 && strchr(BLANKS, *s) != NULL && *s != '\0') {
		s++;
		len--;
	}
	while (len > 0 && strchr(BLANKS, s[len - 1]) != NULL &&
	    s[len - 1] != '\0')
		len--;
	if (len == 0)
		return;
	ENVCTL_GROW(t->v, t->n + 1, t->alloc);
	t->v[t->n++] = xstrndup(s, len);
}

size_t
hostpattern_split(const char *pattern, char ***out)
{
	struct terms t = { NULL, 0, 0 };
	const char *p, *q, *start;
	char *host, *port;

	*out = NULL;
	if (pattern == NULL)
		return 0;
	if (strchr(pattern, ',') != NULL) {
		for (p = pattern; (q = strchr(p, ',')) != NULL; p = q + 1)
			terms_add(&t, p, (size_t)(q - p));
		terms_add(&t, p, strlen(p));
	} else if (hostrange_parse_address(pattern, &host, &port)) {
		/* One host, host:port, IPv6 address or range: no split. */
		free(host);
		free(port);
		terms_add(&t, pattern, strlen(pattern));
	} else {
		/* Runs of anything but blanks, ':' and brackets, or [...]. */
		for (p = pattern; *p != '\0';) {
			start = p;
			for (;;) {
				if (*p == '[' && (q = strchr(p, ']')) != NULL)
					p = q + 1;
				else if (*p != '\0' && strchr(BLANKS ":[]",
				    *p) == NULL)
					p++;
				else
					break;
			}
			if (p > start)
				terms_add(&t, start, (size_t)(p - start));
			else
				p++;
		}
	}
	*out = t.v;
	return t.n;
}

void
hostpattern_free_terms(char **terms, size_t n)
{
	strv_free(terms, n);
}

/* A subscript: [i] (end unset) or [start:end] (end -1 = to the last). */
struct subscript {
	int		 set;
	int		 single;
	long long	 start, end;
};

static long long
parse_ll(const char *s, size_t len)
{
	long long v = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (v < LLONG_MAX / 20)
			v = v * 10 + (s[i] - '0');
	return v;
}

/*
 * Splits "expr[sub]" as Ansible's PATTERN_WITH_SUBSCRIPT: [-N], [N],
 * [N:], [N:M] (and the old [N-M]).  Returns expr (caller frees).
 */
static char *
split_subscript(const char *term, struct subscript *sub)
{
	size_t len = strlen(term), dl, d2;
	const char *open, *c, *end;

	memset(sub, 0, sizeof(*sub));
	if (len < 4 || term[0] == '~' || term[len - 1] != ']' ||
	    (open = strrchr(term, '[')) == NULL || open == term)
		return xstrdup(term);
	c = open + 1;
	end = term + len - 1;
	if (*c == '-' && c + 1 < end &&
	    strspn(c + 1, "0123456789") == (size_t)(end - c - 1)) {
		sub->single = 1;
		sub->start = -parse_ll(c + 1, (size_t)(end - c - 1));
	} else if ((dl = strspn(c, "0123456789")) > 0 && c + dl == end) {
		sub->single = 1;
		sub->start = parse_ll(c, dl);
	} else if (dl > 0 && (c[dl] == ':' || c[dl] == '-') &&
	    (d2 = strspn(c + dl + 1, "0123456789")) ==
	    (size_t)(end - c - dl - 1)) {
		sub->start = parse_ll(c, dl);
		/* Ansible tests "if end": [x:] runs to the last, [x:0] is [x]. */
		sub->end = d2 == 0 ? -1 : parse_ll(c + dl + 1, d2);
		if (sub->end == 0)
			sub->single = 1;
	} else
		return xstrdup(term);
	sub->set = 1;
	return xstrndup(term, (size_t)(open - term));
}

struct matcher {
	const char	*glob;
	regex_t		 re;
	int		 isregex;
};

static int
name_matches(const struct matcher *m, const char *name)
{
	regmatch_t pm;

	if (!m->isregex)
		return fnmatch(m->glob, name, FNM_NOESCAPE) == 0;
	/* Python's re.match: a match that starts at the beginning. */
	return regexec(&m->re, name, 1, &pm, 0) == 0 && pm.rm_so == 0;
}

/*
 * Marks in hit (nhosts flags, zeroed here) the hosts term selects, without
 * its ! or & prefix, as Ansible's _match_one_pattern.  *found is 1 when it
 * matched a host or a group (even an empty one).
 */
static int
match_term(const struct inventory *inv, const char *term, unsigned char *hit,
    int *found, struct err *err)
{
	size_t nh = inventory_nhosts(inv), ng = inventory_ngroups(inv), i, n;
	const char *body = term;
	const struct host *h;
	struct subscript sub;
	struct matcher m;
	char *expr = NULL, msg[256];
	size_t *list = NULL;
	long long start, end;
	int matched_group = 0, r = 0, rc;

	memset(hit, 0, nh);
	memset(&m, 0, sizeof(m));
	*found = 0;
	if (*body == '!' || *body == '&')
		body++;
	if (*body == '\0')
		return err_addat(err, ENVCTL_EUSAGE, NULL, 0, 0, "empty "
		    "pattern after '%c' in '%s'", term[0], term);
	/* A plain term naming a host is that host, even if a group has it. */
	if (body == term && (h = inventory_find(inv, term)) != NULL) {
		hit[h->index] = 1;
		*found = 1;
		return 0;
	}
	if (*body == '~') {
		if ((rc = regcomp(&m.re, body + 1, REG_EXTENDED)) != 0) {
			regerror(rc, &m.re, msg, sizeof(msg));
			return err_addat(err, ENVCTL_EUSAGE, NULL, 0, 0,
			    "invalid regular expression in pattern '%s': %s",
			    term, msg);
		}
		m.isregex = 1;
		expr = xstrdup(body);
		memset(&sub, 0, sizeof(sub));
	} else {
		expr = split_subscript(body, &sub);
		m.glob = expr;
	}
	for (i = 0; i < ng; i++) {
		if (!name_matches(&m, inventory_group(inv, i)))
			continue;
		matched_group = 1;
		for (n = 0; n < nh; n++)
			if (host_in_group(inventory_host(inv, n),
			    inventory_group(inv, i)))
				hit[n] = 1;
	}
	/* Hosts too when no group matched, or for a regex or glob. */
	if (!matched_group || m.isregex || strpbrk(expr, ".?*[") != NULL)
		for (n = 0; n < nh; n++)
			if (name_matches(&m, inventory_host(inv, n)->name))
				hit[n] = 1;
	*found = matched_group;
	for (n = 0; n < nh; n++)
		if (hit[n])
			*found = 1;
	if (!sub.set)
		goto out;
	/* Subscripts index the matches in inventory order. */
	list = xcalloc(nh + 1, sizeof(*list));
	for (i = n = 0; i < nh; i++)
		if (hit[i])
			list[n++] = i;
	if (n == 0)
		goto out;
	memset(hit, 0, nh);
	start = sub.start;
	if (sub.single) {
		if (start < 0)
			start += (long long)n;
		if (start < 0 || start >= (long long)n) {
			r = err_addat(err, ENVCTL_ENOTFOUND, NULL, 0, 0,
			    "pattern '%s' matches no host (subscript out of "
			    "range: %zu match%s)", term, n, n == 1 ? "" : "es");
			*found = 1;	/* reported here, not as unmatched */
			goto out;
		}
		hit[list[start]] = 1;
		goto out;
	}
	end = sub.end == -1 ? (long long)n - 1 : sub.end;
	for (; start <= end && start < (long long)n; start++)
		hit[list[start]] = 1;
	*found = 0;
	for (i = 0; i < nh; i++)
		if (hit[i])
			*found = 1;
out:
	if (m.isregex)
		regfree(&m.re);
	free(expr);
	free(list);
	return r;
}

/* Replaces an @file term by the file's lines, as Ansible's --limit. */
static int
read_limit_file(struct terms *t, const char *term, struct err *err)
{
	struct buf b;
	struct err e = ENVCTL_ERR_INIT;
	const char *p, *nl;
	size_t before;
	int r;

	buf_init(&b, ENVCTL_HOSTPATTERN_MAX_FILE);
	if ((r = buf_read_file(&b, term + 1, &e)) != 0) {
		err_context(&e, "limit file");
		err_move(err, &e);
		buf_release(&b);
		return r;
	}
	before = t->n;
	for (p = b.data; (nl = memchr(p, '\n', b.len - (size_t)(p -
	    b.data))) != NULL; p = nl + 1)
		terms_add(t, p, (size_t)(nl - p));
	terms_add(t, p, b.len - (size_t)(p - b.data));
	buf_release(&b);
	/* Ansible would then select every host: too easy a mistake. */
	if (t->n == before)
		return err_addat(err, ENVCTL_ENOTFOUND, NULL, 0, 0,
		    "limit file '%s' names no host", term + 1);
	return 0;
}

int
hostpattern_select(const struct inventory *inv, const char *pattern,
    unsigned char *selected, size_t *count, struct err *err)
{
	size_t nh = inventory_nhosts(inv), nsplit, i, k, n;
	struct terms t = { NULL, 0, 0 };
	char **split = NULL;
	const char *all = "all";
	const char **order = NULL;
	unsigned char *hit = NULL;
	int r = 0, first = 0, found;

	memset(selected, 0, nh);
	*count = 0;
	nsplit = hostpattern_split(pattern, &split);
	for (i = 0; i < nsplit; i++) {
		if (split[i][0] != '@') {
			terms_add(&t, split[i], strlen(split[i]));
			continue;
		}
		if ((r = read_limit_file(&t, split[i], err)) != 0 &&
		    first == 0)
			first = r;
	}
	if (first != 0)
		goto out;
	/* Ansible's order_patterns: plain, then &, then !; none plain = all. */
	order = xcalloc(t.n + 1, sizeof(*order));
	n = 0;
	for (k = 0; k < 3; k++)
		for (i = 0; i < t.n; i++)
			if ((k == 0 && t.v[i][0] != '&' && t.v[i][0] != '!') ||
			    (k == 1 && t.v[i][0] == '&') ||
			    (k == 2 && t.v[i][0] == '!')) {
				if (k > 0 && n == 0)
					order[n++] = all;
				order[n++] = t.v[i];
			}
	if (n == 0)
		order[n++] = all;
	hit = xcalloc(nh + 1, 1);
	for (i = 0; i < n; i++) {
		if ((r = match_term(inv, order[i], hit, &found, err)) != 0) {
			if (first == 0)
				first = r;
			continue;
		}
		if (!found) {
			r = err_addat(err, ENVCTL_ENOTFOUND, NULL, 0, 0,
			    "pattern '%s' matches no host or group", order[i]);
			if (first == 0)
				first = r;
			continue;
		}
		for (k = 0; k < nh; k++) {
			if (order[i][0] == '!')
				selected[k] = selected[k] && !hit[k];
			else if (order[i][0] == '&')
				selected[k] = selected[k] && hit[k];
			else
				selected[k] = selected[k] || hit[k];
		}
	}
	if (first != 0)
		goto out;
	for (k = 0; k < nh; k++)
		*count += selected[k];
	if (*count == 0)
		first = err_addat(err, ENVCTL_ENOTFOUND, NULL, 0, 0,
		    "pattern '%s' selects no host", pattern != NULL ? pattern :
		    "");
out:
	if (first != 0) {
		memset(selected, 0, nh);
		*count = 0;
	}
	hostpattern_free_terms(split, nsplit);
	hostpattern_free_terms(t.v, t.n);
	free(order);
	free(hit);
	return first;
}
