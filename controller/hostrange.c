/*
 * hostrange.c - Ansible's host ranges and addresses (see hostrange.h).
 *
 * Ranges follow ansible.inventory.helpers' expand_hostname_range(): the
 * first range varies slowest, an empty start is 0, a zero-padded start
 * pads every name to its width, letters range over a-zA-Z.  Addresses
 * follow ansible.parsing.utils.addresses' patterns (parse_address with
 * allow_ranges=True), written out as small recognisers instead of regexes.
 */
#include "controller/hostrange.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

static const char letters[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

struct hrange {
	const char		*lit;	/* literal text before the range */
	size_t			 litlen;
	int			 alpha;
	unsigned long long	 beg, end, step, count;
	int			 width;	/* zero padding, 0 for none */
};

static int
parse_number(const char *s, size_t len, unsigned long long *v)
{
	size_t i;

	*v = 0;
	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || *v > 100000000000000000ull)
			return -1;
		*v = *v * 10 + (unsigned long long)(s[i] - '0');
	}
	return 0;
}

/* Parses "beg:end" or "beg:end:step" (between brackets) into r. */
static int
parse_range(const char *pattern, const char *s, size_t len, struct hrange *r,
    struct err *err)
{
	const char *c1, *c2, *beg = s, *end, *step = NULL;
	size_t blen, elen, slen = 0;
	const char *lb, *le;

	c1 = memchr(s, ':', len);
	if (c1 == NULL)
		goto shape;
	end = c1 + 1;
	c2 = memchr(end, ':', len - (size_t)(end - s));
	blen = (size_t)(c1 - s);
	if (c2 != NULL) {
		elen = (size_t)(c2 - end);
		step = c2 + 1;
		slen = len - (size_t)(step - s);
		if (memchr(step, ':', slen) != NULL)
			goto shape;
	} else
		elen = len - (size_t)(end - s);
	if (blen == 0) {
		beg = "0";	/* Ansible: an empty start is 0 */
		blen = 1;
	}
	if (elen == 0)
		return err_set(err, ENVCTL_EINVALID, "invalid host range in "
		    "'%s': missing end", pattern);
	r->step = 1;
	if (step != NULL && (parse_number(step, slen, &r->step) != 0 ||
	    r->step == 0))
		return err_set(err, ENVCTL_EINVALID, "invalid host range in "
		    "'%s': step '%.*s' is not a positive integer", pattern,
		    (int)slen, step);
	if (blen == 1 && elen == 1 && (lb = strchr(letters, *beg)) != NULL &&
	    *beg != '\0' && (le = strchr(letters, *end)) != NULL &&
	    *end != '\0') {
		r->alpha = 1;
		r->beg = (unsigned long long)(lb - letters);
		r->end = (unsigned long long)(le - letters);
	} else if (parse_number(beg, blen, &r->beg) != 0 ||
	    parse_number(end, elen, &r->end) != 0)
		return err_set(err, ENVCTL_EINVALID, "invalid host range in "
		    "'%s': start '%.*s' and end '%.*s' must be both numbers "
		    "or both single letters", pattern, (int)blen, beg,
		    (int)elen, end);
	else if (blen > 1 && beg[0] == '0') {
		if (blen != elen)
			return err_set(err, ENVCTL_EINVALID, "invalid host "
			    "range in '%s': zero-padded start '%.*s' and end "
			    "'%.*s' differ in width", pattern, (int)blen, beg,
			    (int)elen, end);
		r->width = (int)blen;
	}
	if (r->beg > r->end)
		return err_set(err, ENVCTL_EINVALID, "invalid host range in "
		    "'%s': start '%.*s' is after end '%.*s'", pattern,
		    (int)blen, beg, (int)elen, end);
	r->count = (r->end - r->beg) / r->step + 1;
	return 0;
shape:
	return err_set(err, ENVCTL_EINVALID, "invalid host range in '%s': "
	    "expected [start:end] or [start:end:step]", pattern);
}

int
hostrange_expand(char ***names, size_t *nnames, const char *pattern,
    size_t room, struct err *err)
{
	struct hrange *rs = NULL;
	size_t nr = 0, ralloc = 0, i, total = 1;
	unsigned long long *pos = NULL, v;
	const char *p = pattern, *open, *close, *tail;
	struct buf b = ENVCTL_BUF_INIT;
	int r = 0;

	*names = NULL;
	*nnames = 0;
	while ((open = strchr(p, '[')) != NULL) {
		close = strchr(p, ']');
		if (close == NULL || close < open) {
			r = err_set(err, ENVCTL_EINVALID, "invalid host range "
			    "in '%s': %s", pattern, close == NULL ?
			    "unclosed '['" : "']' before '['");
			goto out;
		}
		ENVCTL_GROW(rs, nr + 1, ralloc);
		memset(&rs[nr], 0, sizeof(*rs));
		rs[nr].lit = p;
		rs[nr].litlen = (size_t)(open - p);
		if ((r = parse_range(pattern, open + 1,
		    (size_t)(close - open - 1), &rs[nr], err)) != 0)
			goto out;
		if (rs[nr].count > room || total > room / rs[nr].count) {
			r = err_set(err, ENVCTL_ETOOBIG, "host pattern '%s' "
			    "expands to more than %zu hosts", pattern, room);
			goto out;
		}
		total *= rs[nr].count;
		nr++;
		p = close + 1;
	}
	tail = p;
	*names = xcalloc(total, sizeof(**names));
	pos = xcalloc(nr + 1, sizeof(*pos));
	for (*nnames = 0; *nnames < total; (*nnames)++) {
		buf_reset(&b);
		for (i = 0; i < nr; i++) {
			buf_add(&b, rs[i].lit, rs[i].litlen);
			v = rs[i].beg + pos[i] * rs[i].step;
			if (rs[i].alpha)
				buf_addch(&b, letters[v]);
			else
				buf_addf(&b, "%0*llu", rs[i].width, v);
		}
		buf_addstr(&b, tail);
		(*names)[*nnames] = xstrdup(b.data);
		/* Odometer: the last range turns fastest. */
		for (i = nr; i-- > 0;) {
			if (++pos[i] < rs[i].count)
				break;
			pos[i] = 0;
		}
	}
out:
	free(rs);
	free(pos);
	buf_release(&b);
	return r;
}

/* ----------------------------------------------------------- addresses */

static int
is_word(int c)
{
	/* Python's \w with re.UNICODE; any non-ASCII byte is taken as one. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || (unsigned char)c >= 0x80;
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Length of a [x:y] or [x:y:z] range at s (letters allowed), else 0. */
static size_t
range_len(const char *s, int alnum)
{
	const char *p = s + 1;

	if (*s != '[')
		return 0;
	if (alnum && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
	    p[1] == ':' && ((p[2] >= 'a' && p[2] <= 'z') ||
	    (p[2] >= 'A' && p[2] <= 'Z')))
		p += 3;
	else {
		if (!is_digit(*p))
			return 0;
		while (is_digit(*p))
			p++;
		if (*p++ != ':' || !is_digit(*p))
			return 0;
		while (is_digit(*p))
			p++;
	}
	if (*p == ':') {
		if (!is_digit(*++p))
			return 0;
		while (is_digit(*p))
			p++;
	}
	return *p == ']' ? (size_t)(p + 1 - s) : 0;
}

/* A hostname of labels made of \w, '-' and ranges, not ending in _ or -. */
static int
is_hostname(const char *s, size_t len)
{
	size_t i = 0, n;
	int start = 1;
	char last = 0;

	if (len == 0)
		return 0;
	while (i < len) {
		if (s[i] == '[' && (n = range_len(s + i, 1)) > 0 &&
		    i + n <= len) {
			i += n;
			last = ']';
		} else if (is_word(s[i]) || (s[i] == '-' && !start)) {
			last = s[i++];
		} else if (s[i] == '.' && !start && last != '_' &&
		    last != '-') {
			i++;
			start = 1;
			continue;
		} else
			return 0;
		start = 0;
	}
	return !start && last != '_' && last != '-';
}

/* One IPv6 group: 1-4 hex digits or a numeric range; returns its length. */
static size_t
v6_group(const char *s)
{
	size_t n = 0;

	if (*s == '[')
		return range_len(s, 0);
	while (n < 4 && ((s[n] >= '0' && s[n] <= '9') ||
	    (s[n] >= 'a' && s[n] <= 'f') || (s[n] >= 'A' && s[n] <= 'F')))
		n++;
	return n;
}

/* An IPv4 dotted quad (components 0..255 or ranges), at s for len bytes. */
static int
is_v4(const char *s, size_t len)
{
	size_t i = 0, n, parts = 0;
	unsigned v;

	while (i < len) {
		if (s[i] == '[') {
			if ((n = range_len(s + i, 0)) == 0)
				return 0;
			i += n;
		} else {
			for (v = 0, n = 0; i < len && is_digit(s[i]) && n < 4;
			    n++)
				v = v * 10 + (unsigned)(s[i++] - '0');
			if (n == 0 || n > 3 || v > 255)
				return 0;
		}
		if (++parts == 4)
			return i == len;
		if (i >= len || s[i++] != '.')
			return 0;
	}
	return 0;
}

/*
 * An IPv6 address as Ansible's pattern spells it: eight groups, or fewer
 * around one "::", or an IPv4-in-IPv6 form.
 */
static int
is_v6(const char *s, size_t len)
{
	size_t i = 0, n, before = 0, after = 0;
	int gap = 0;
	const char *dot;

	dot = memchr(s, '.', len);
	if (dot != NULL) {
		/* ::a.b.c.d, ::ffff:a.b.c.d, 0:0:0:0:0:0:a.b.c.d ... */
		const char *v4 = dot;

		while (v4 > s && v4[-1] != ':')
			v4--;
		if (!is_v4(v4, len - (size_t)(v4 - s)))
			return 0;
		n = (size_t)(v4 - s);
		return (n == 2 && strncmp(s, "::", 2) == 0) ||
		    (n == 7 && strncasecmp(s, "::ffff:", 7) == 0) ||
		    (n == 12 && strncmp(s, "0:0:0:0:0:0:", 12) == 0) ||
		    (n == 15 && strncasecmp(s, "0:0:0:0:0:ffff:", 15) == 0);
	}
	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		gap = 1;
		i = 2;
	}
	while (i < len) {
		if ((n = v6_group(s + i)) == 0 || i + n > len)
			return 0;
		i += n;
		if (gap)
			after++;
		else
			before++;
		if (i == len)
			break;
		if (s[i++] != ':')
			return 0;
		if (i < len && s[i] == ':') {
			if (gap)
				return 0;
			gap = 1;
			i++;
		}
	}
	if (!gap)
		return before == 8;
	if (before > 0 && after > 0)
		return before + after <= 7;
	return before + after <= 6;
}

int
hostrange_parse_address(const char *s, char **host, char **port)
{
	size_t len = strlen(s), i, hostlen = len, close;
	const char *h = s, *colon = NULL;

	*host = NULL;
	*port = NULL;
	/* [host]:port, where host is validated below. */
	if (len > 3 && s[0] == '[') {
		for (close = len; close-- > 1;) {
			if (s[close] == ']' && s[close + 1] == ':' &&
			    close + 2 < len &&
			    strspn(s + close + 2, "0123456789") ==
			    len - close - 2)
				break;
		}
		if (close > 1) {
			h = s + 1;
			hostlen = close - 1;
			colon = s + close + 1;
		}
	}
	/* host:port, skipping over complete [...] groups. */
	if (colon == NULL) {
		for (i = 0; i < len;) {
			if (s[i] == '[' && memchr(s + i, ']', len - i) != NULL)
				i = (size_t)((const char *)memchr(s + i, ']',
				    len - i) - s) + 1;
			else if (s[i] == ':' || s[i] == '[' || s[i] == ']')
				break;
			else
				i++;
		}
		if (i < len && s[i] == ':' && i + 1 < len &&
		    strspn(s + i + 1, "0123456789") == len - i - 1) {
			hostlen = i;
			colon = s + i;
		}
	}
	if (!is_v4(h, hostlen) && !is_v6(h, hostlen) &&
	    !is_hostname(h, hostlen))
		return 0;
	*host = xstrndup(h, hostlen);
	if (colon != NULL)
		*port = xstrdup(colon + 1);
	return 1;
}
