/*
 * knownhosts.c - host keys against known_hosts (see knownhosts.h).
 *
 * An unknown key under accept_new is appended under an flock(2) on the
 * known_hosts file after checking again under the lock, and checked once
 * more after writing, so that concurrent threads or processes add one
 * line per host, and a line libssh cannot read (found by our own scan for
 * the host's name) is an error rather than a reason to append again.
 */
#include "controller/ssh/knownhosts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/ssh/conn.h"

#define ENVCTL_CONN_KH_MAX	(64u * 1024 * 1024) /* known_hosts scan */

/* Does one known_hosts host pattern (plain or |1|salt|hash) name name? */
static bool
kh_pattern_matches(const char *pat, size_t len, const char *name)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	struct buf salt, hash;
	const char *bar;
	bool ok = false;

	if (len <= 3 || strncmp(pat, "|1|", 3) != 0)
		return strlen(name) == len && strncasecmp(pat, name, len) == 0;
	buf_init(&salt, 128);
	buf_init(&hash, 128);
	bar = memchr(pat + 3, '|', len - 3);
	if (bar == NULL || proto_b64_decode(&salt, pat + 3,
	    (size_t)(bar - pat - 3), NULL) != 0 || proto_b64_decode(&hash,
	    bar + 1, (size_t)(pat + len - bar - 1), NULL) != 0 ||
	    salt.len == 0 || hash.len == 0)
		goto out;
	if (HMAC(EVP_sha1(), salt.data, (int)salt.len,
	    (const unsigned char *)name, strlen(name), mac, &maclen) == NULL)
		goto out;
	ok = hash.len == maclen && memcmp(mac, hash.data, maclen) == 0;
out:
	buf_release(&salt);
	buf_release(&hash);
	return ok;
}

/*
 * The first line of the known_hosts file at path whose host field names
 * name (exactly, or hashed), or 0.  Wildcard patterns are not expanded.
 */
static int
kh_find_line(const char *path, const char *name)
{
	struct buf b;
	const char *p, *end, *eol, *f, *fe, *q;
	int line = 0, found = 0;

	buf_init(&b, ENVCTL_CONN_KH_MAX);
	if (buf_read_file(&b, path, NULL) != 0)
		goto out;
	for (p = b.data, end = b.data + b.len; p < end && !found; p = eol + 1) {
		line++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		f = p + strspn(p, " \t");
		if (f >= eol || *f == '#')
			continue;
		fe = f + strcspn(f, " \t\n");
		if (*f == '@') {	/* marker: hosts come next */
			f = fe + strspn(fe, " \t");
			fe = f + strcspn(f, " \t\n");
		}
		if (fe > eol)
			fe = eol;
		for (q = f; q < fe && !found; q++) {
			const char *c = memchr(q, ',', (size_t)(fe - q));

			if (c == NULL)
				c = fe;
			if (*q != '!' && kh_pattern_matches(q, (size_t)(c - q),
			    name))
				found = line;
			q = c;
		}
	}
out:
	buf_release(&b);
	return found;
}

struct hostkey {
	char	*type;		/* "ssh-ed25519" */
	char	*fp;		/* "SHA256:..." */
	char	*entry;		/* known_hosts line, with '\n' */
	char	*name;		/* "[127.0.0.1]:2222" or "host" */
};

static void
hostkey_release(struct hostkey *hk)
{
	free(hk->type);
	free(hk->fp);
	free(hk->entry);
	free(hk->name);
	memset(hk, 0, sizeof(*hk));
}

static int
hostkey_get(struct host_conn *c, struct hostkey *hk, struct err *err)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *s = NULL;
	int rc = 0;

	memset(hk, 0, sizeof(*hk));
	if (ssh_get_server_publickey(c->session, &key) != SSH_OK ||
	    ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash,
	    &hlen) != 0) {
		rc = conn_fail(c, ENVCTL_EHOSTKEY, err,
		    "cannot read the host key");
		goto out;
	}
	hk->type = xstrdup(ssh_key_type_to_char(ssh_key_type(key)) != NULL ?
	    ssh_key_type_to_char(ssh_key_type(key)) : "unknown");
	if ((s = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash,
	    hlen)) == NULL) {
		rc = conn_fail(c, ENVCTL_EHOSTKEY, err,
		    "cannot compute the host key's fingerprint");
		goto out;
	}
	hk->fp = xstrdup(s);
	ssh_string_free_char(s);
	s = NULL;
	if (ssh_session_export_known_hosts_entry(c->session, &s) != SSH_OK ||
	    s == NULL) {
		rc = conn_fail(c, ENVCTL_EHOSTKEY, err,
		    "cannot format the host key");
		goto out;
	}
	hk->entry = xstrdup(s);
	if (hk->entry[0] == '\0' ||
	    hk->entry[strlen(hk->entry) - 1] != '\n') {
		char *t = xasprintf("%s\n", hk->entry);

		free(hk->entry);
		hk->entry = t;
	}
	hk->name = xstrndup(hk->entry, strcspn(hk->entry, " \t\n"));
out:
	/* libssh allocates the entry with malloc. */
	free(s);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	if (rc != 0)
		hostkey_release(hk);
	return rc;
}

/* "ssh-keygen -f FILE -R 'NAME'" */
static void
add_keygen_hint(struct buf *b, const struct host_conn *c,
    const struct hostkey *hk)
{
	buf_addstr(b, "ssh-keygen -f ");
	conn_shquote(b, c->known_hosts, false);
	buf_addstr(b, " -R ");
	conn_shquote(b, hk->name, true);
}

static int
hostkey_changed(struct host_conn *c, const struct hostkey *hk,
    enum ssh_known_hosts_e state, struct err *err)
{
	struct buf m = ENVCTL_BUF_INIT;
	int line = kh_find_line(c->known_hosts, hk->name);

	buf_addf(&m, "host key for %s has changed: the host offered %s key "
	    "%s, but %s", hk->name, hk->type, hk->fp, c->known_hosts);
	if (line > 0)
		buf_addf(&m, ":%d", line);
	if (state == SSH_KNOWN_HOSTS_OTHER)
		buf_addstr(&m, " holds a key of another type for it");
	else
		buf_addstr(&m, " holds another key for it");
	buf_addstr(&m, " (possible man-in-the-middle attack); if the host "
	    "was reinstalled, remove the old key with: ");
	add_keygen_hint(&m, c, hk);
	err_set(err, ENVCTL_EHOSTKEY, "%s", m.data);
	err_sethost(err, c->host);
	buf_release(&m);
	return ENVCTL_EHOSTKEY;
}

/* A line names the host, yet libssh could not read it. */
static int
hostkey_unreadable(struct host_conn *c, const struct hostkey *hk, int line,
    struct err *err)
{
	struct buf m = ENVCTL_BUF_INIT;

	buf_addf(&m, "the entry for %s cannot be read (a damaged line or an "
	    "unsupported key type); fix it, or remove it with: ", hk->name);
	add_keygen_hint(&m, c, hk);
	err_setat(err, ENVCTL_EHOSTKEY, c->known_hosts, line, 0, "%s",
	    m.data);
	err_sethost(err, c->host);
	buf_release(&m);
	return ENVCTL_EHOSTKEY;
}

static int
hostkey_unknown(struct host_conn *c, const struct hostkey *hk,
    struct err *err)
{
	struct buf m = ENVCTL_BUF_INIT;
	unsigned int port = 22;
	char *addr = NULL;

	ssh_options_get(c->session, SSH_OPTIONS_HOST, &addr);
	ssh_options_get_port(c->session, &port);
	buf_addf(&m, "unknown host key for %s: %s key %s is not in %s; "
	    "check the fingerprint, then accept it with "
	    "--accept-new-host-keys, or add it with: ssh-keyscan ", hk->name,
	    hk->type, hk->fp, c->known_hosts);
	if (port != 22)
		buf_addf(&m, "-p %u ", port);
	conn_shquote(&m, addr != NULL ? addr : hk->name, false);
	buf_addstr(&m, " >> ");
	conn_shquote(&m, c->known_hosts, false);
	err_set(err, ENVCTL_EHOSTKEY, "%s", m.data);
	err_sethost(err, c->host);
	ssh_string_free_char(addr);
	buf_release(&m);
	return ENVCTL_EHOSTKEY;
}

/* Takes an exclusive flock on fd, polling until the step's deadline. */
static int
kh_lock(struct host_conn *c, int fd, struct err *err)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return err_errno(err, ENVCTL_ESYS, errno, "%s: cannot "
			    "lock", c->known_hosts);
		if (conn_left_ms(c) == 0)
			return conn_fail(c, ENVCTL_ETIMEOUT, err,
			    "waiting for the lock on %s", c->known_hosts);
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Writes all of s at the end of fd (opened O_APPEND), after a '\n' if the
 * file does not end with one. */
static int
kh_write(struct host_conn *c, int fd, const char *s, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct stat st;
	char last = '\n';
	size_t off = 0;
	ssize_t n;
	int rc = 0;

	if (fstat(fd, &st) != 0 || (st.st_size > 0 &&
	    pread(fd, &last, 1, st.st_size - 1) != 1)) {
		rc = err_errno(err, ENVCTL_ESYS, errno, "%s: cannot read",
		    c->known_hosts);
		goto out;
	}
	if (last != '\n')
		buf_addch(&b, '\n');
	buf_addstr(&b, s);
	while (off < b.len) {
		if ((n = write(fd, b.data + off, b.len - off)) < 0) {
			if (errno == EINTR)
				continue;
			rc = err_errno(err, ENVCTL_ESYS, errno, "%s: cannot "
			    "write", c->known_hosts);
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0)
		rc = err_errno(err, ENVCTL_ESYS, errno, "%s: cannot write",
		    c->known_hosts);
out:
	buf_release(&b);
	return rc;
}

/*
 * OpenSSH's accept-new: appends the host's key to the known_hosts file
 * unless, checked again under the lock, it is there already (another
 * thread or process was first) or something else is there for the host.
 */
static int
hostkey_accept(struct host_conn *c, const struct hostkey *hk,
    struct err *err)
{
	enum ssh_known_hosts_e state;
	const char *slash;
	char *dir;
	int fd, line, rc = 0;

	fd = open(c->known_hosts, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600);
	if (fd < 0 && errno == ENOENT && (slash = strrchr(c->known_hosts,
	    '/')) != NULL && slash != c->known_hosts) {
		/* As OpenSSH makes ~/.ssh: the parent only, mode 0700. */
		dir = xstrndup(c->known_hosts,
		    (size_t)(slash - c->known_hosts));
		if (mkdir(dir, 0700) == 0 || errno == EEXIST)
			fd = open(c->known_hosts, O_RDWR | O_APPEND | O_CREAT |
			    O_CLOEXEC, 0600);
		free(dir);
	}
	if (fd < 0) {
		rc = err_errno(err, ENVCTL_ESYS, errno, "%s: cannot open",
		    c->known_hosts);
		err_sethost(err, c->host);
		return rc;
	}
	if ((rc = kh_lock(c, fd, err)) != 0)
		goto out;
	state = ssh_session_is_known_server(c->session);
	switch (state) {
	case SSH_KNOWN_HOSTS_OK:
		goto out;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		rc = hostkey_changed(c, hk, state, err);
		goto out;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		break;
	default:
		rc = conn_fail(c, ENVCTL_EHOSTKEY, err, "cannot read %s",
		    c->known_hosts);
		goto out;
	}
	if ((line = kh_find_line(c->known_hosts, hk->name)) > 0) {
		rc = hostkey_unreadable(c, hk, line, err);
		goto out;
	}
	if ((rc = kh_write(c, fd, hk->entry, err)) != 0)
		goto out;
	if (ssh_session_is_known_server(c->session) != SSH_KNOWN_HOSTS_OK) {
		rc = err_set(err, ENVCTL_EHOSTKEY, "added %s to %s, but it is "
		    "still not recognised there", hk->name, c->known_hosts);
		goto out;
	}
out:
	if (rc != 0)
		err_sethost(err, c->host);
	close(fd);	/* drops the lock */
	return rc;
}

int
knownhosts_check(struct host_conn *c, int accept_new,
    struct err *err)
{
	struct hostkey hk;
	enum ssh_known_hosts_e state;
	char *kh = NULL;
	int line, rc;

	if (ssh_options_get(c->session, SSH_OPTIONS_KNOWNHOSTS, &kh) !=
	    SSH_OK || kh == NULL)
		return conn_fail(c, ENVCTL_EHOSTKEY, err,
		    "no known_hosts file");
	c->known_hosts = xstrdup(kh);
	ssh_string_free_char(kh);
	if ((rc = hostkey_get(c, &hk, err)) != 0)
		return rc;
	state = ssh_session_is_known_server(c->session);
	switch (state) {
	case SSH_KNOWN_HOSTS_OK:
		rc = 0;
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		rc = hostkey_changed(c, &hk, state, err);
		break;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		/*
		 * With accept-new, look for an unreadable line only under the
		 * lock (hostkey_accept): here another thread may be appending
		 * this very host between libssh's read and ours.
		 */
		if (accept_new)
			rc = hostkey_accept(c, &hk, err);
		else if ((line = kh_find_line(c->known_hosts, hk.name)) > 0)
			rc = hostkey_unreadable(c, &hk, line, err);
		else
			rc = hostkey_unknown(c, &hk, err);
		break;
	default:
		rc = conn_fail(c, ENVCTL_EHOSTKEY, err, "cannot read %s",
		    c->known_hosts);
		break;
	}
	hostkey_release(&hk);
	return rc;
}

