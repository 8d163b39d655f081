/*
 * sshargs.c - ansible_ssh_common_args and proxy commands (see sshargs.h).
 *
 * Ansible appends ansible_ssh_common_args, split by shlex.split, to the
 * ssh command line, so its -o options come before ssh_config and win over
 * it.  envctl talks SSH through libssh, not ssh(1): it applies the
 * options below itself and refuses every other one by name, since one it
 * skipped could be what the operator relies on (a ControlPath, a
 * different port, StrictHostKeyChecking no...).
 */
#include "controller/ssh/sshargs.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/ssh/conn.h"

#define ARGS		"ansible_ssh_common_args"
#define SUPPORTED	"envctl applies ProxyCommand, ProxyJump (-J), " \
			"UserKnownHostsFile, StrictHostKeyChecking yes, " \
			"ServerAliveInterval and ServerAliveCountMax"

/* A NULL-terminated vector of words. */
struct words {
	char	**v;
	size_t	 n;
	size_t	 alloc;
};

static void
words_add(struct words *w, struct buf *b)
{
	ENVCTL_GROW(w->v, w->n + 2, w->alloc);
	w->v[w->n++] = buf_detach(b, NULL);
	w->v[w->n] = NULL;
}

static void
words_free(struct words *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

/*
 * Python's shlex.split(s) (POSIX mode, no comments): blanks separate
 * words, '...' is literal, "..." lets a backslash escape only " and \,
 * and outside quotes a backslash escapes any character.  EPARSE for an
 * open quote or a trailing backslash.
 */
static int
split(struct words *w, const char *s, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	bool inword = false;
	char q;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	for (; *s != '\0'; s++) {
		if (strchr(" \t\r\n", *s) != NULL) {
			if (inword)
				words_add(w, &b);
			inword = false;
			continue;
		}
		inword = true;
		if (*s == '\\') {
			if (*++s == '\0') {
				rc = err_set(err, ENVCTL_EPARSE, ARGS ": no "
				    "character after the last backslash");
				goto out;
			}
			buf_addch(&b, *s);
		} else if (*s == '\'' || *s == '"') {
			for (q = *s++; *s != q; s++) {
				if (*s == '\0') {
					rc = err_set(err, ENVCTL_EPARSE, ARGS
					    ": no closing quotation (%c)", q);
					goto out;
				}
				if (q == '"' && *s == '\\' &&
				    (s[1] == '"' || s[1] == '\\'))
					s++;
				buf_addch(&b, *s);
			}
		} else
			buf_addch(&b, *s);
	}
	if (inword)
		words_add(w, &b);
out:
	buf_release(&b);
	if (rc != 0)
		words_free(w);
	return rc;
}

static int
set_int(int *v, const char *key, const char *val, int min, struct err *err)
{
	char *end;
	long n;

	n = strtol(val, &end, 10);
	if (end == val || *end != '\0' || n < min || n > INT_MAX)
		return err_set(err, ENVCTL_EINVALID, ARGS ": %s wants a "
		    "number of at least %d, not '%s'", key, min, val);
	if (*v < 0)
		*v = (int)n;
	return 0;
}

/* One -o argument: "Key=Value", "Key Value" or "Key = Value". */
static int
one_option(struct ssh_args *a, const char *opt, struct err *err)
{
	char *key, *val, *p;
	size_t n = strcspn(opt, " \t=");
	int rc = 0;

	key = xstrndup(opt, n);
	p = (char *)opt + n;
	p += strspn(p, " \t");
	if (*p == '=')
		p++;
	p += strspn(p, " \t");
	val = xstrdup(p);
	for (n = strlen(val); n > 0 && isspace((unsigned char)val[n - 1]); )
		val[--n] = '\0';
	if (*key == '\0' || *val == '\0') {
		rc = err_set(err, ENVCTL_EINVALID, ARGS ": -o '%s' has no "
		    "value", opt);
		goto out;
	}
	if (strcasecmp(key, "ProxyCommand") == 0) {
		if (a->proxy_command == NULL && a->proxy_jump == NULL)
			a->proxy_command = xstrdup(val);
		goto out;
	}
	if (strpbrk(val, " \t") != NULL) {
		rc = err_set(err, ENVCTL_EUNSUPPORTED, ARGS ": -o %s with "
		    "several values ('%s') is not supported", key, val);
		goto out;
	}
	if (strcasecmp(key, "ProxyJump") == 0) {
		if (a->proxy_command == NULL && a->proxy_jump == NULL)
			a->proxy_jump = xstrdup(val);
	} else if (strcasecmp(key, "UserKnownHostsFile") == 0) {
		if (a->known_hosts == NULL)
			a->known_hosts = xstrdup(val);
	} else if (strcasecmp(key, "StrictHostKeyChecking") == 0) {
		/* What envctl always does; the rest would weaken it. */
		if (strcasecmp(val, "yes") != 0)
			rc = err_set(err, ENVCTL_EUNSUPPORTED, ARGS ": "
			    "StrictHostKeyChecking %s is not supported: "
			    "envctl checks host keys strictly (see "
			    "--accept-new-host-keys)", val);
	} else if (strcasecmp(key, "ServerAliveInterval") == 0)
		rc = set_int(&a->alive_interval, key, val, 0, err);
	else if (strcasecmp(key, "ServerAliveCountMax") == 0)
		rc = set_int(&a->alive_count, key, val, 1, err);
	else
		rc = err_set(err, ENVCTL_EUNSUPPORTED, ARGS ": ssh option "
		    "'%s' is not supported (" SUPPORTED ")", key);
out:
	free(key);
	free(val);
	return rc;
}

int
sshargs_parse(struct ssh_args *a, const char *args, struct err *err)
{
	struct words w;
	const char *arg;
	size_t i;
	int rc = 0;
	char f;

	memset(a, 0, sizeof(*a));
	a->alive_interval = a->alive_count = -1;
	if (args == NULL)
		return 0;
	if ((rc = split(&w, args, err)) != 0)
		return rc;
	for (i = 0; i < w.n && rc == 0; i++) {
		if (w.v[i][0] != '-' || w.v[i][1] == '\0' ||
		    strcmp(w.v[i], "--") == 0) {
			rc = err_set(err, ENVCTL_EUNSUPPORTED, ARGS ": '%s' is "
			    "not an ssh option envctl applies (" SUPPORTED
			    ")", w.v[i]);
			break;
		}
		f = w.v[i][1];
		if (f != 'o' && f != 'J') {
			rc = err_set(err, ENVCTL_EUNSUPPORTED, ARGS ": ssh "
			    "option '-%c' is not supported (" SUPPORTED ")",
			    f);
			break;
		}
		if (w.v[i][2] != '\0')
			arg = w.v[i] + 2;
		else if (i + 1 < w.n)
			arg = w.v[++i];
		else {
			rc = err_set(err, ENVCTL_EINVALID, ARGS ": ssh option "
			    "'-%c' needs an argument", f);
			break;
		}
		if (f == 'o')
			rc = one_option(a, arg, err);
		else if (a->proxy_command == NULL && a->proxy_jump == NULL)
			a->proxy_jump = xstrdup(arg);
	}
	words_free(&w);
	return rc;
}

void
sshargs_release(struct ssh_args *a)
{
	free(a->proxy_command);
	free(a->proxy_jump);
	free(a->known_hosts);
	memset(a, 0, sizeof(*a));
	a->alive_interval = a->alive_count = -1;
}

/* ------------------------------------------------------------- proxies */

/*
 * Splits one hop, "[user@]host[:port]" or "ssh://[user@]host[:port]"
 * (host may be "[v6]"), into new strings; *user and *port may be NULL.
 */
static int
hop_split(const char *hop, char **user, char **host, char **port,
    struct err *err)
{
	const char *h = hop, *at, *colon, *end;

	*user = *host = *port = NULL;
	if (strncmp(h, "ssh://", 6) == 0)
		h += 6;
	if ((at = strrchr(h, '@')) != NULL) {
		*user = xstrndup(h, (size_t)(at - h));
		h = at + 1;
	}
	if (*h == '[' && (end = strchr(h, ']')) != NULL) {
		*host = xstrndup(h + 1, (size_t)(end - h - 1));
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(h, ':');
		*host = colon != NULL ? xstrndup(h, (size_t)(colon - h)) :
		    xstrdup(h);
	}
	if (colon != NULL)
		*port = xstrdup(colon + 1);
	if (**host == '\0' || (*user != NULL && **user == '\0') ||
	    (*port != NULL && (**port == '\0' ||
	    strspn(*port, "0123456789") != strlen(*port)))) {
		free(*user);
		free(*host);
		free(*port);
		*user = *host = *port = NULL;
		return err_set(err, ENVCTL_EINVALID, "ProxyJump: '%s' is not "
		    "[user@]host[:port]", hop);
	}
	return 0;
}

int
sshargs_jump_command(struct buf *out, const char *hops, const char *config,
    struct err *err)
{
	const char *last = strrchr(hops, ',');
	char *user, *host, *port, *first;
	int rc;

	last = last != NULL ? last + 1 : hops;
	if ((rc = hop_split(last, &user, &host, &port, err)) != 0)
		return rc;
	buf_addstr(out, "ssh -o BatchMode=yes");
	if (config != NULL) {
		buf_addstr(out, " -F ");
		conn_shquote(out, config, false);
	}
	if (user != NULL) {
		buf_addstr(out, " -l ");
		conn_shquote(out, user, false);
	}
	if (port != NULL)
		buf_addf(out, " -p %s", port);
	if (last != hops) {
		first = xstrndup(hops, (size_t)(last - 1 - hops));
		buf_addstr(out, " -J ");
		conn_shquote(out, first, false);
		free(first);
	}
	buf_addstr(out, " -W '[%h]:%p' ");
	conn_shquote(out, host, false);
	free(user);
	free(host);
	free(port);
	return 0;
}

/* 1 when word names ssh(1): "ssh" or ".../ssh". */
static int
is_ssh(const char *word)
{
	const char *base = strrchr(word, '/');

	return strcmp(base != NULL ? base + 1 : word, "ssh") == 0;
}

void
sshargs_batch_command(struct buf *out, const char *pc)
{
	size_t n = strcspn(pc, " \t");
	char *first = xstrndup(pc, n);

	if (is_ssh(first)) {
		buf_add(out, pc, n);
		buf_addstr(out, " -o BatchMode=yes");
		buf_addstr(out, pc + n);
	} else
		buf_addstr(out, pc);
	free(first);
}

/* "host" or "host:port" of one hop, or NULL when it is malformed. */
static char *
hop_key(const char *hop, const char *port_opt)
{
	struct err err = ENVCTL_ERR_INIT;
	char *user, *host, *port, *key = NULL;

	if (hop_split(hop, &user, &host, &port, &err) == 0) {
		if (port == NULL && port_opt != NULL)
			port = xstrdup(port_opt);
		key = port != NULL ? xasprintf("%s:%s", host, port) :
		    xstrdup(host);
		free(user);
		free(host);
		free(port);
	}
	err_release(&err);
	return key;
}

char *
sshargs_first_hop(const char *pc)
{
	struct err err = ENVCTL_ERR_INIT;
	struct words w;
	const char *dest = NULL, *jump = NULL, *port = NULL, *a, *arg;
	char *hop = NULL, *first;
	size_t i;
	char f;

	if (split(&w, pc, &err) != 0) {
		err_release(&err);
		return NULL;
	}
	i = w.n > 0 && strcmp(w.v[0], "exec") == 0 ? 1 : 0;
	if (i >= w.n || !is_ssh(w.v[i]))
		goto out;
	for (i++; i < w.n; i++) {
		a = w.v[i];
		if (strcmp(a, "--") == 0) {
			dest = i + 1 < w.n ? w.v[i + 1] : NULL;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			dest = a;
			break;
		}
		/* The options of OpenSSH 9's ssh that take an argument. */
		for (a++; *a != '\0' && strchr("BbcDEeFIiJLlmOoPpQRSWw", *a) ==
		    NULL; a++)
			;
		if (*a == '\0')
			continue;
		f = *a;
		if (a[1] != '\0')
			arg = a + 1;
		else if (i + 1 < w.n)
			arg = w.v[++i];
		else
			break;
		if (f == 'J' && jump == NULL)
			jump = arg;
		else if (f == 'p')
			port = arg;
	}
	if (jump != NULL) {
		first = xstrndup(jump, strcspn(jump, ","));
		hop = hop_key(first, NULL);
		free(first);
	} else if (dest != NULL)
		hop = hop_key(dest, port);
out:
	words_free(&w);
	return hop;
}
