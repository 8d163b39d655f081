/*
 * transport.c - one SSH connection to one host, through libssh 0.10.
 *
 * Options, in the order they are applied (later wins):
 *   1. SSH_OPTIONS_HOST = the inventory name, so that "Host gpu-01" blocks
 *      of ssh_config match it (the address instead when libssh refuses
 *      the name, e.g. "gpu_01": it accepts DNS names and addresses only);
 *   2. ssh_config: -F FILE only, or ~/.ssh/config then /etc/ssh/ssh_config
 *      (what ssh_options_parse_config(NULL) reads).  libssh 0.10 honours
 *      HostName, Port, User, IdentityFile, UserKnownHostsFile,
 *      ConnectTimeout, ProxyCommand, ProxyJump (as a ProxyCommand running
 *      "ssh -W", to which we add "-o BatchMode=yes" and our -F), Include,
 *      Match host/user/originalhost/all, IdentityAgent, LogLevel,
 *      Ciphers/MACs/KexAlgorithms/HostKeyAlgorithms; it ignores
 *      IdentitiesOnly, HashKnownHosts, CheckHostIP, HostKeyAlias and the
 *      rest.  A Host line matches the current host name, which a HostName
 *      line earlier in the file has already replaced (libssh 0.10 keeps no
 *      "original host").
 *   3. the inventory and command line: address (replaces the host name
 *      that matched the config: known_hosts entries use it), port, user,
 *      identity (offered before the agent and the config's files, since
 *      libssh ignores IdentitiesOnly), known_hosts;
 *   4. ours, always: the global known_hosts file is /dev/null, publickey
 *      only, TCP_NODELAY, SSH_OPTIONS_TIMEOUT = --timeout (so --timeout
 *      wins over ConnectTimeout), libssh logging off.
 *
 * Deadlines.  A step's deadline is the earlier of its own timeout (from
 * the step's start, renewed by progress) and the whole host's deadline,
 * which the caller fixes once (conn_params.deadline) and progress never
 * moves: a peer that sends a byte now and then keeps a step alive, never
 * the host.  ssh_connect() runs in blocking mode and is bounded by
 * SSH_OPTIONS_TIMEOUT (TCP connect, banner and key exchange together; set
 * to what is left of the host's deadline when that is less; libssh counts
 * it over the whole connect, not per packet).  From then on every step
 * arms a per-connection watchdog thread with the step's deadline; when
 * the deadline passes while the owner is still inside libssh (a stalled
 * peer; SFTP has no timeout at all), the watchdog shuts our duplicate
 * of the socket down, libssh sees the connection end and the call
 * returns.  The duplicate fd is ours, closed only after the watchdog
 * stopped, so the watchdog can never hit a descriptor number that
 * libssh closed and the process reused.  Channel I/O itself never blocks
 * inside libssh: the channel's data callback moves stdout and stderr into
 * our buffers as packets are processed (so nothing waits unseen in
 * libssh's channel buffers), writes never exceed the peer's window, the
 * channel open and exec request run nonblocking, and we wait in poll(2)
 * on the session's fd until the same deadline.
 *
 * Host keys.  ssh_session_is_known_server() decides (it reads hashed
 * entries too).  An unknown key under accept_new is appended under an
 * flock(2) on the known_hosts file after checking again under the lock,
 * and checked once more after writing, so that concurrent threads or
 * processes add one line per host, and a line libssh cannot read (found
 * by our own scan for the host's name) is an error rather than a reason
 * to append again.
 */
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

/* Channel writes; SFTP writes. */
#define ENVCTL_CONN_CHUNK	(32 * 1024)
/*
 * libssh 0.10 waits for the status of every SFTP write: one round trip
 * each.  A server that announces limits@openssh.com (OpenSSH 8.6+) takes
 * writes of up to its 256 KiB message size less 1 KiB of header room,
 * which cuts the round trips of an agent upload eightfold.
 */
#define ENVCTL_CONN_SFTP_BIG	(256 * 1024 - 1024)
#define ENVCTL_CONN_STDERR_MAX	(1024 * 1024)	/* stderr kept */
#define ENVCTL_CONN_PENDING_MAX	(64u * 1024 * 1024) /* early stdout */
#define ENVCTL_CONN_GRACE_MS	500	/* watchdog after our own poll */
#define ENVCTL_CONN_KH_MAX	(64u * 1024 * 1024) /* known_hosts scan */
#define ENVCTL_CONN_CMD_SHOWN	60	/* command shown in messages */
#define ENVCTL_CONN_CLOSE_MS	2000	/* closing politely, at most */

struct watchdog {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_t	 thread;
	bool		 started;
	int		 fd;		/* our dup of the session fd */
	bool		 armed;
	int64_t		 deadline;	/* CLOCK_MONOTONIC, ms */
	bool		 fired;
	bool		 quit;
};

struct host_conn {
	char		*host;		/* inventory name */
	char		*target;	/* "address:port", for messages, and
					   " through ProxyJump J" */
	char		*known_hosts;	/* the file libssh reads */
	int		 timeout;	/* seconds */
	int		 host_timeout;	/* seconds; 0: none */
	int64_t		 host_deadline;	/* ms; 0: none */
	ssh_session	 session;
	bool		 connected;	/* ssh_connect() succeeded */
	struct ssh_callbacks_struct cb;
	ssh_channel	 chan;
	struct ssh_channel_callbacks_struct chan_cb;
	char		 exit_signal[32]; /* "KILL", or "" */
	sftp_session	 sftp;
	char		*cmd;		/* shortened, for messages */
	struct buf	 what;		/* the current step */
	int64_t		 deadline;	/* of the current step, ms */
	bool		 host_bound;	/* deadline is the host's */
	int		 broken;	/* code that made the connection
					 * unusable, or 0 */
	bool		 sent;		/* sent since the last recv */
	struct buf	 pending;	/* stdout not yet received */
	bool		 overflow;	/* pending hit its cap */
	struct buf	 errbuf;
	struct conn_stats stats;
	struct watchdog	 wd;
};

/* ---------------------------------------------------------------- time */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
ms_to_timespec(int64_t ms, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ms / 1000);
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
}

/* ------------------------------------------------------------ watchdog */

static void *
watchdog_main(void *arg)
{
	struct watchdog *wd = arg;
	struct timespec ts;

	pthread_mutex_lock(&wd->mu);
	while (!wd->quit) {
		if (!wd->armed) {
			pthread_cond_wait(&wd->cv, &wd->mu);
			continue;
		}
		if (now_ms() < wd->deadline) {
			ms_to_timespec(wd->deadline, &ts);
			pthread_cond_timedwait(&wd->cv, &wd->mu, &ts);
			continue;
		}
		/*
		 * The owner is stuck inside libssh past its deadline: end
		 * the connection under it.  The fd stays open (ours).
		 */
		shutdown(wd->fd, SHUT_RDWR);
		wd->fired = true;
		wd->armed = false;
	}
	pthread_mutex_unlock(&wd->mu);
	return NULL;
}

static void
wd_init(struct watchdog *wd)
{
	pthread_condattr_t ca;

	memset(wd, 0, sizeof(*wd));
	wd->fd = -1;
	pthread_mutex_init(&wd->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wd->cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* Starts watching fd (duplicated); returns an errno or 0. */
static int
wd_start(struct watchdog *wd, int fd)
{
	int dfd, rc;

	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return errno;
	wd->fd = dfd;
	if ((rc = pthread_create(&wd->thread, NULL, watchdog_main, wd)) != 0)
		return rc;
	wd->started = true;
	return 0;
}

static void
wd_arm(struct watchdog *wd, int64_t deadline)
{
	pthread_mutex_lock(&wd->mu);
	wd->deadline = deadline;
	wd->armed = true;
	pthread_cond_signal(&wd->cv);
	pthread_mutex_unlock(&wd->mu);
}

static void
wd_disarm(struct watchdog *wd)
{
	pthread_mutex_lock(&wd->mu);
	wd->armed = false;
	pthread_cond_signal(&wd->cv);
	pthread_mutex_unlock(&wd->mu);
}

static bool
wd_fired(struct watchdog *wd)
{
	bool fired;

	pthread_mutex_lock(&wd->mu);
	fired = wd->fired;
	pthread_mutex_unlock(&wd->mu);
	return fired;
}

/* Ends the connection now (after our own timeout or a fatal error). */
static void
wd_cut(struct watchdog *wd)
{
	pthread_mutex_lock(&wd->mu);
	if (wd->fd >= 0)
		shutdown(wd->fd, SHUT_RDWR);
	wd->armed = false;
	pthread_mutex_unlock(&wd->mu);
}

static void
wd_release(struct watchdog *wd)
{
	if (wd->started) {
		pthread_mutex_lock(&wd->mu);
		wd->quit = true;
		pthread_cond_signal(&wd->cv);
		pthread_mutex_unlock(&wd->mu);
		pthread_join(wd->thread, NULL);
		wd->started = false;
	}
	if (wd->fd >= 0)
		close(wd->fd);
	wd->fd = -1;
	pthread_cond_destroy(&wd->cv);
	pthread_mutex_destroy(&wd->mu);
}

/* --------------------------------------------------------------- steps */

/*
 * Starts a step: names it for messages and arms the deadline, now plus
 * the timeout, or the host's deadline when that comes first.
 */
static void
step_begin(struct host_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
step_deadline(struct host_conn *c, int64_t from)
{
	c->deadline = from + (int64_t)c->timeout * 1000;
	c->host_bound = false;
	if (c->host_deadline != 0 && c->host_deadline <= c->deadline) {
		c->deadline = c->host_deadline;
		c->host_bound = true;
	}
	if (c->wd.started)
		wd_arm(&c->wd, c->deadline + ENVCTL_CONN_GRACE_MS);
}

static void
step_begin(struct host_conn *c, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&c->what);
	va_start(ap, fmt);
	buf_vaddf(&c->what, fmt, ap);
	va_end(ap);
	step_deadline(c, now_ms());
}

/* The step made progress: its deadline starts again. */
static void
step_progress(struct host_conn *c)
{
	step_deadline(c, now_ms());
}

static void
step_end(struct host_conn *c)
{
	if (c->wd.started)
		wd_disarm(&c->wd);
}

static int
remaining_ms(const struct host_conn *c)
{
	int64_t left = c->deadline - now_ms();

	if (left <= 0)
		return 0;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

/* ------------------------------------------------------ error mapping */

static const char *
sftp_status_text(int st)
{
	switch (st) {
	case SSH_FX_EOF:
		return "end of file";
	case SSH_FX_NO_SUCH_FILE:
		return "no such file or directory";
	case SSH_FX_PERMISSION_DENIED:
		return "permission denied";
	case SSH_FX_FAILURE:
		return "failure";
	case SSH_FX_BAD_MESSAGE:
		return "bad message";
	case SSH_FX_NO_CONNECTION:
		return "no connection";
	case SSH_FX_CONNECTION_LOST:
		return "connection lost";
	case SSH_FX_OP_UNSUPPORTED:
		return "operation unsupported";
	case SSH_FX_INVALID_HANDLE:
		return "invalid handle";
	case SSH_FX_NO_SUCH_PATH:
		return "no such path";
	case SSH_FX_FILE_ALREADY_EXISTS:
		return "file already exists";
	case SSH_FX_WRITE_PROTECT:
		return "write-protected file system";
	case SSH_FX_NO_MEDIA:
		return "no media";
	default:
		return "unknown SFTP status";
	}
}

/*
 * The one place where libssh and SFTP failures become envctl errors.  The
 * step that failed is c->what; fmt, when not NULL, says more.  code is the
 * ENVCTL_E* for a failure that is neither a timeout nor a lost connection;
 * sftp_st is the SFTP status of the failed request, or -1.  A timeout or a
 * lost connection makes the connection unusable.  err->cause stays 0:
 * err_format() reads it as an errno, and libssh's words are in the text.
 */
static int	conn_fail(struct host_conn *, int, int, struct err *,
		    const char *, ...) __attribute__((format(printf, 5, 6)));

static int
conn_fail(struct host_conn *c, int code, int sftp_st, struct err *err,
    const char *fmt, ...)
{
	struct buf what = ENVCTL_BUF_INIT;
	const char *sshmsg = "";
	int sshcode = SSH_NO_ERROR;
	bool lost;
	va_list ap;

	buf_addstr(&what, c->what.data);
	if (fmt != NULL) {
		buf_addstr(&what, ": ");
		va_start(ap, fmt);
		buf_vaddf(&what, fmt, ap);
		va_end(ap);
	}
	if (c->session != NULL) {
		sshmsg = ssh_get_error(c->session);
		sshcode = ssh_get_error_code(c->session);
	}
	lost = sftp_st == SSH_FX_CONNECTION_LOST ||
	    sftp_st == SSH_FX_NO_CONNECTION || (c->connected &&
	    (sshcode == SSH_FATAL || !ssh_is_connected(c->session) ||
	    (ssh_get_status(c->session) & (SSH_CLOSED | SSH_CLOSED_ERROR))));
	if (c->broken == ENVCTL_ETIMEOUT || wd_fired(&c->wd) ||
	    code == ENVCTL_ETIMEOUT) {
		code = ENVCTL_ETIMEOUT;
		if (c->host_bound)
			err_set(err, code, "did not finish in %d s (deadline "
			    "for the whole host): timed out while %s",
			    c->host_timeout, what.data);
		else
			err_set(err, code, "timed out after %d s while %s",
			    c->timeout, what.data);
		c->broken = code;
	} else if (lost) {
		code = ENVCTL_ECONNECT;
		err_set(err, code, "connection lost while %s: %s", what.data,
		    *sshmsg != '\0' ? sshmsg : "closed by the host");
		c->broken = code;
	} else if (sftp_st > 0) {
		switch (sftp_st) {
		case SSH_FX_NO_SUCH_FILE:
		case SSH_FX_NO_SUCH_PATH:
			code = ENVCTL_ENOTFOUND;
			break;
		case SSH_FX_PERMISSION_DENIED:
		case SSH_FX_WRITE_PROTECT:
			code = ENVCTL_ESYS;
			break;
		case SSH_FX_OP_UNSUPPORTED:
			code = ENVCTL_EUNSUPPORTED;
			break;
		default:
			break;
		}
		err_set(err, code, "%s: SFTP: %s", what.data,
		    sftp_status_text(sftp_st));
	} else if (*sshmsg != '\0')
		err_set(err, code, "%s: %s", what.data, sshmsg);
	else
		err_set(err, code, "%s", what.data);
	if (c->broken != 0)
		wd_cut(&c->wd);
	err_sethost(err, c->host);
	buf_release(&what);
	return code;
}

/* A connection that timed out or was lost earlier refuses every verb. */
static int
conn_usable(struct host_conn *c, struct err *err)
{
	if (c->broken == 0)
		return 0;
	err_set(err, c->broken, "the connection is unusable after an "
	    "earlier %s", c->broken == ENVCTL_ETIMEOUT ? "timeout" : "error");
	err_sethost(err, c->host);
	return c->broken;
}

/* ------------------------------------------------------------- helpers */

/* Appends s quoted for a POSIX shell when it needs quoting. */
static void
sh_quote(struct buf *b, const char *s, bool always)
{
	const char *p;

	if (!always && *s != '\0' &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_./:@%+=,-") == strlen(s)) {
		buf_addstr(b, s);
		return;
	}
	buf_addch(b, '\'');
	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			buf_addstr(b, "'\\''");
		else
			buf_addch(b, *p);
	}
	buf_addch(b, '\'');
}

/* The command as messages show it: first line, at most a few words. */
static char *
shorten_cmd(const char *cmd)
{
	size_t n = strcspn(cmd, "\n");

	if (n > ENVCTL_CONN_CMD_SHOWN)
		return xasprintf("%.*s...", ENVCTL_CONN_CMD_SHOWN, cmd);
	if (cmd[n] != '\0')
		return xasprintf("%.*s...", (int)n, cmd);
	return xstrdup(cmd);
}

/* libssh passphrase callback: never ask; an encrypted key is skipped. */
static int
no_passphrase(const char *prompt, char *buf, size_t len, int echo,
    int verify, void *userdata)
{
	(void)prompt;
	(void)echo;
	(void)verify;
	(void)userdata;
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

/* libssh log callback: envctl reports errors itself. */
static void
no_log(int priority, const char *function, const char *buffer,
    void *userdata)
{
	(void)priority;
	(void)function;
	(void)buffer;
	(void)userdata;
}

void
transport_init(void)
{
	signal(SIGPIPE, SIG_IGN);
	ssh_init();
	ssh_set_log_callback(no_log);
}

void
transport_finish(void)
{
	ssh_finalize();
}

/* ---------------------------------------------------------- known_hosts */

/* Decodes base64 s (len bytes) into out (room for len bytes); -1 if bad. */
static int
b64_decode(unsigned char *out, const char *s, size_t len)
{
	int n;
	size_t pad = 0;

	if (len == 0 || len % 4 != 0)
		return -1;
	n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
	if (n < 0)
		return -1;
	while (pad < 2 && s[len - 1 - pad] == '=')
		pad++;
	return n - (int)pad;
}

/* Does one known_hosts host pattern (plain or |1|salt|hash) name name? */
static bool
kh_pattern_matches(const char *pat, size_t len, const char *name)
{
	unsigned char salt[128], hash[128], mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	const char *bar;
	int slen, hlen;

	if (len > 3 && strncmp(pat, "|1|", 3) == 0) {
		bar = memchr(pat + 3, '|', len - 3);
		if (bar == NULL || (size_t)(bar - pat - 3) > sizeof(salt) ||
		    (size_t)(pat + len - bar - 1) > sizeof(hash))
			return false;
		slen = b64_decode(salt, pat + 3, (size_t)(bar - pat - 3));
		hlen = b64_decode(hash, bar + 1, (size_t)(pat + len - bar - 1));
		if (slen <= 0 || hlen <= 0)
			return false;
		if (HMAC(EVP_sha1(), salt, slen, (const unsigned char *)name,
		    strlen(name), mac, &maclen) == NULL)
			return false;
		return (unsigned int)hlen == maclen &&
		    memcmp(mac, hash, maclen) == 0;
	}
	return strlen(name) == len && strncasecmp(pat, name, len) == 0;
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
		rc = conn_fail(c, ENVCTL_EHOSTKEY, -1, err,
		    "cannot read the host key");
		goto out;
	}
	hk->type = xstrdup(ssh_key_type_to_char(ssh_key_type(key)) != NULL ?
	    ssh_key_type_to_char(ssh_key_type(key)) : "unknown");
	if ((s = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash,
	    hlen)) == NULL) {
		rc = conn_fail(c, ENVCTL_EHOSTKEY, -1, err,
		    "cannot compute the host key's fingerprint");
		goto out;
	}
	hk->fp = xstrdup(s);
	ssh_string_free_char(s);
	s = NULL;
	if (ssh_session_export_known_hosts_entry(c->session, &s) != SSH_OK ||
	    s == NULL) {
		rc = conn_fail(c, ENVCTL_EHOSTKEY, -1, err,
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
	sh_quote(b, c->known_hosts, false);
	buf_addstr(b, " -R ");
	sh_quote(b, hk->name, true);
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
	sh_quote(&m, addr != NULL ? addr : hk->name, false);
	buf_addstr(&m, " >> ");
	sh_quote(&m, c->known_hosts, false);
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
		if (remaining_ms(c) == 0)
			return conn_fail(c, ENVCTL_ETIMEOUT, -1, err,
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
		rc = conn_fail(c, ENVCTL_EHOSTKEY, -1, err, "cannot read %s",
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

static int
check_hostkey(struct host_conn *c, const struct conn_params *p,
    struct err *err)
{
	struct hostkey hk;
	enum ssh_known_hosts_e state;
	char *kh = NULL;
	int line, rc;

	if (ssh_options_get(c->session, SSH_OPTIONS_KNOWNHOSTS, &kh) !=
	    SSH_OK || kh == NULL)
		return conn_fail(c, ENVCTL_EHOSTKEY, -1, err,
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
		if (p->accept_new)
			rc = hostkey_accept(c, &hk, err);
		else if ((line = kh_find_line(c->known_hosts, hk.name)) > 0)
			rc = hostkey_unreadable(c, &hk, line, err);
		else
			rc = hostkey_unknown(c, &hk, err);
		break;
	default:
		rc = conn_fail(c, ENVCTL_EHOSTKEY, -1, err, "cannot read %s",
		    c->known_hosts);
		break;
	}
	hostkey_release(&hk);
	return rc;
}

/* ---------------------------------------------------------------- open */

static int
set_opt(struct host_conn *c, enum ssh_options_e opt, const void *v,
    const char *name, struct err *err)
{
	if (ssh_options_set(c->session, opt, v) == SSH_OK)
		return 0;
	return conn_fail(c, ENVCTL_EINVALID, -1, err, "cannot set %s", name);
}

/* libssh 0.10 turns a ProxyJump into "ssh [-l U] [-p P] [-J ...] -W
 * '[%h]:%p' HOST"; 1 when pc is such a command (or ours made of it). */
static int
is_jump(const char *pc)
{
	return strncmp(pc, "ssh ", 4) == 0 &&
	    strstr(pc, " -W '[%h]:%p' ") != NULL;
}

/*
 * Makes the ssh of a ProxyJump never prompt, and read our -F file as
 * OpenSSH's own ProxyJump does.
 */
static int
fix_proxyjump(struct host_conn *c, const char *config, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	char *pc = NULL;
	int rc = 0;

	if (ssh_options_get(c->session, SSH_OPTIONS_PROXYCOMMAND, &pc) !=
	    SSH_OK || pc == NULL)
		return 0;
	if (is_jump(pc)) {
		buf_addstr(&b, "ssh -o BatchMode=yes ");
		if (config != NULL) {
			buf_addstr(&b, "-F ");
			sh_quote(&b, config, false);
			buf_addch(&b, ' ');
		}
		buf_addstr(&b, pc + 4);
		rc = set_opt(c, SSH_OPTIONS_PROXYCOMMAND, b.data,
		    "the ProxyJump command", err);
	}
	ssh_string_free_char(pc);
	buf_release(&b);
	return rc;
}

/*
 * " through ProxyJump J" (its last hop: the host that connects) or
 * " through ProxyCommand" for messages, or "" without a proxy; the
 * caller frees it.
 */
static char *
proxy_words(struct host_conn *c)
{
	char *pc = NULL, *s;

	if (ssh_options_get(c->session, SSH_OPTIONS_PROXYCOMMAND, &pc) !=
	    SSH_OK || pc == NULL)
		return xstrdup("");
	if (is_jump(pc))
		s = xasprintf(" through ProxyJump %s", strrchr(pc, ' ') + 1);
	else
		s = xstrdup(" through ProxyCommand");
	ssh_string_free_char(pc);
	return s;
}

static int
configure(struct host_conn *c, const struct conn_params *p, struct err *err)
{
	long timeout = c->timeout, usec;
	int64_t ms;
	int yes = 1, no = 0, rc;
	bool process = false;
	unsigned int port = 22;
	char *host = NULL, *via;

	/*
	 * libssh 0.10.6 refuses host names that are not DNS names ("gpu_01"):
	 * then ssh_config can only match the address, as with "ssh ADDRESS".
	 */
	if (ssh_options_set(c->session, SSH_OPTIONS_HOST, p->host) != SSH_OK) {
		if (p->address == NULL) {
			err_set(err, ENVCTL_EINVALID, "'%s' is not a valid "
			    "host name for SSH; give its address "
			    "(ansible_host)", p->host);
			err_sethost(err, c->host);
			return ENVCTL_EINVALID;
		}
		if ((rc = set_opt(c, SSH_OPTIONS_HOST, p->address,
		    "the address", err)) != 0)
			return rc;
	}
	/* We parse the config ourselves, so ssh_connect() must not. */
	if ((rc = set_opt(c, SSH_OPTIONS_PROCESS_CONFIG, &process,
	    "config processing", err)) != 0)
		return rc;
	if (p->ssh_config != NULL && access(p->ssh_config, R_OK) != 0) {
		rc = err_errno(err, errno == ENOENT ? ENVCTL_ENOTFOUND :
		    ENVCTL_ESYS, errno, "ssh_config '%s'", p->ssh_config);
		err_sethost(err, c->host);
		return rc;
	}
	if (ssh_options_parse_config(c->session, p->ssh_config) != 0)
		return conn_fail(c, ENVCTL_EPARSE, -1, err, "ssh_config '%s'",
		    p->ssh_config != NULL ? p->ssh_config : "~/.ssh/config");
	if ((rc = fix_proxyjump(c, p->ssh_config, err)) != 0)
		return rc;

	if (p->address != NULL && (rc = set_opt(c, SSH_OPTIONS_HOST,
	    p->address, "the address", err)) != 0)
		return rc;
	if (p->port > 0) {
		port = (unsigned int)p->port;
		if ((rc = set_opt(c, SSH_OPTIONS_PORT, &port, "the port",
		    err)) != 0)
			return rc;
	}
	if (p->user != NULL && (rc = set_opt(c, SSH_OPTIONS_USER, p->user,
	    "the user", err)) != 0)
		return rc;
	if (p->identity != NULL) {
		if (access(p->identity, R_OK) != 0) {
			rc = err_errno(err, errno == ENOENT ?
			    ENVCTL_ENOTFOUND : ENVCTL_ESYS, errno,
			    "identity file '%s'", p->identity);
			err_sethost(err, c->host);
			return rc;
		}
		/* authenticate() offers it first, on its own. */
	}
	/* libssh adds the two: what is left of the host's, to the ms. */
	ms = (int64_t)timeout * 1000;
	if (c->host_deadline != 0 && c->host_deadline - now_ms() < ms)
		ms = c->host_deadline - now_ms();
	if (ms < 1)
		ms = 1;
	timeout = (long)(ms / 1000);
	usec = (long)(ms % 1000) * 1000;
	if (p->known_hosts != NULL && (rc = set_opt(c,
	    SSH_OPTIONS_KNOWNHOSTS, p->known_hosts, "known_hosts", err)) != 0)
		return rc;
	if ((rc = set_opt(c, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null",
	    "the global known_hosts", err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_TIMEOUT, &timeout, "the timeout",
	    err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_TIMEOUT_USEC, &usec, "the timeout",
	    err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_NODELAY, &yes, "TCP_NODELAY",
	    err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_PUBKEY_AUTH, &yes, "publickey",
	    err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_PASSWORD_AUTH, &no, "password",
	    err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_KBDINT_AUTH, &no,
	    "keyboard-interactive", err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_GSSAPI_AUTH, &no, "gssapi",
	    err)) != 0 ||
	    (rc = set_opt(c, SSH_OPTIONS_LOG_VERBOSITY, &no, "the log level",
	    err)) != 0)
		return rc;

	ssh_options_get(c->session, SSH_OPTIONS_HOST, &host);
	ssh_options_get_port(c->session, &port);
	via = proxy_words(c);
	c->target = xasprintf("%s:%u%s", host != NULL ? host : p->host,
	    port != 0 ? port : 22, via);
	free(via);
	ssh_string_free_char(host);
	return 0;
}

static const char *
method_names(int m, struct buf *b)
{
	static const struct {
		int		 bit;
		const char	*name;
	} names[] = {
		{ SSH_AUTH_METHOD_PUBLICKEY, "publickey" },
		{ SSH_AUTH_METHOD_PASSWORD, "password" },
		{ SSH_AUTH_METHOD_INTERACTIVE, "keyboard-interactive" },
		{ SSH_AUTH_METHOD_HOSTBASED, "hostbased" },
		{ SSH_AUTH_METHOD_GSSAPI_MIC, "gssapi-with-mic" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((m & names[i].bit) == 0)
			continue;
		if (b->len > 0)
			buf_addch(b, ',');
		buf_addstr(b, names[i].name);
	}
	return b->data;
}

/*
 * Offers the inventory's key before anything else: libssh 0.10 ignores
 * IdentitiesOnly and its automatic method offers every agent key first,
 * so an agent with many keys would exhaust the host's MaxAuthTries before
 * this one.  An encrypted key is skipped (the agent may hold it).  The
 * key signs at once, without asking first whether the host would take it
 * (what ssh_userauth_try_publickey does): a signature costs microseconds,
 * the question a round trip, and a refused key counts as one try either
 * way.
 */
static int
auth_identity(struct host_conn *c, const char *path)
{
	ssh_key priv = NULL;
	int rc;

	if (ssh_pki_import_privkey_file(path, NULL, no_passphrase, NULL,
	    &priv) != SSH_OK)
		return SSH_AUTH_DENIED;
	rc = ssh_userauth_publickey(c->session, NULL, priv);
	ssh_key_free(priv);
	return rc;
}

static int
authenticate(struct host_conn *c, const struct conn_params *p,
    struct err *err)
{
	struct buf tried = ENVCTL_BUF_INIT, methods = ENVCTL_BUF_INIT;
	char *user = NULL;
	int rc;

	memset(&c->cb, 0, sizeof(c->cb));
	c->cb.auth_function = no_passphrase;
	ssh_callbacks_init(&c->cb);
	ssh_set_callbacks(c->session, &c->cb);
	ssh_options_get(c->session, SSH_OPTIONS_USER, &user);
	buf_reset(&c->what);
	buf_addf(&c->what, "authenticating as '%s' to %s",
	    user != NULL ? user : "?", c->target);

	rc = SSH_AUTH_DENIED;
	if (p->identity != NULL)
		rc = auth_identity(c, p->identity);
	if (rc == SSH_AUTH_DENIED)
		rc = ssh_userauth_publickey_auto(c->session, NULL, NULL);
	if (rc == SSH_AUTH_SUCCESS) {
		rc = 0;
		goto out;
	}
	if (rc == SSH_AUTH_ERROR || rc == SSH_AUTH_AGAIN) {
		rc = conn_fail(c, ENVCTL_EAUTH, -1, err, NULL);
		goto out;
	}
	method_names(ssh_userauth_list(c->session, NULL), &methods);
	if (rc == SSH_AUTH_PARTIAL) {
		rc = err_set(err, ENVCTL_EAUTH, "authentication as '%s' "
		    "needs a further method (%s) after publickey; envctl "
		    "never prompts", user != NULL ? user : "?",
		    methods.len > 0 ? methods.data : "unknown");
		goto out;
	}
	if (getenv("SSH_AUTH_SOCK") != NULL)
		buf_addstr(&tried, "ssh-agent, ");
	if (p->identity != NULL) {
		buf_addch(&tried, '\'');
		buf_addstr(&tried, p->identity);
		buf_addstr(&tried, "', ");
	}
	buf_addstr(&tried, "the ssh_config IdentityFile and ~/.ssh/id_* "
	    "keys");
	/* No method list when no key was offered at all. */
	rc = err_set(err, ENVCTL_EAUTH, "permission denied for '%s' on %s: "
	    "no key was accepted (tried %s; publickey only, envctl never "
	    "prompts for passwords or passphrases)%s%s",
	    user != NULL ? user : "?", c->target, tried.data,
	    methods.len > 0 ? "; the host accepts: " : "", methods.data);
out:
	if (rc != 0)
		err_sethost(err, c->host);
	ssh_string_free_char(user);
	buf_release(&tried);
	buf_release(&methods);
	return rc;
}

void
conn_set_timeout(struct host_conn *c, int seconds)
{
	c->timeout = seconds > 0 ? seconds : ENVCTL_CONN_DEFAULT_TIMEOUT;
}

void
conn_set_deadline(struct host_conn *c, long long deadline, int seconds)
{
	c->host_deadline = deadline;
	c->host_timeout = deadline != 0 ? seconds : 0;
}

long long
conn_deadline(const struct host_conn *c)
{
	return c->host_deadline;
}

int
conn_open(struct host_conn **out, const struct conn_params *p,
    struct err *err)
{
	struct host_conn *c = xcalloc(1, sizeof(*c));
	int64_t t0 = now_ms();
	int rc, e, fd, fl;

	*out = NULL;
	c->host = xstrdup(p->host != NULL ? p->host : "?");
	conn_set_timeout(c, p->timeout);
	c->host_timeout = p->host_timeout > 0 ? p->host_timeout : 0;
	if (p->deadline != 0)
		c->host_deadline = p->deadline;
	else if (p->host_timeout > 0)
		c->host_deadline = t0 + (int64_t)p->host_timeout * 1000;
	buf_init(&c->what, 0);
	buf_init(&c->pending, ENVCTL_CONN_PENDING_MAX);
	buf_init(&c->errbuf, 0);
	wd_init(&c->wd);
	if (p->host == NULL) {
		rc = err_set(err, ENVCTL_EINVALID, "no host name");
		goto out;
	}
	if ((c->session = ssh_new()) == NULL) {
		rc = err_set(err, ENVCTL_ESYS, "cannot create an SSH session");
		goto out;
	}
	step_begin(c, "reading ssh_config");
	if ((rc = configure(c, p, err)) != 0)
		goto out;

	step_begin(c, "connecting to %s", c->target);
	if (ssh_connect(c->session) != SSH_OK) {
		/* libssh says "Timeout connecting to ..." as SSH_FATAL. */
		if (now_ms() - t0 >= (int64_t)c->timeout * 1000 - 50 ||
		    (c->host_deadline != 0 && now_ms() >= c->host_deadline))
			rc = conn_fail(c, ENVCTL_ETIMEOUT, -1, err, NULL);
		else {
			buf_reset(&c->what);
			buf_addf(&c->what, "cannot connect to %s", c->target);
			rc = conn_fail(c, ENVCTL_ECONNECT, -1, err, NULL);
		}
		goto out;
	}
	c->connected = true;
	/* libssh makes it without: keep it from other threads' children. */
	fd = ssh_get_fd(c->session);
	if ((fl = fcntl(fd, F_GETFD)) >= 0)
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	if ((e = wd_start(&c->wd, fd)) != 0) {
		rc = err_errno(err, ENVCTL_ESYS, e, "cannot start the "
		    "watchdog");
		goto out;
	}
	/* Host key and authentication share the connect's deadline. */
	step_deadline(c, t0);
	buf_reset(&c->what);
	buf_addf(&c->what, "checking the host key of %s", c->target);
	if ((rc = check_hostkey(c, p, err)) != 0)
		goto out;
	if ((rc = authenticate(c, p, err)) != 0)
		goto out;
	step_end(c);
	*out = c;
	return 0;
out:
	err_sethost(err, c->host);
	conn_close(c);
	return rc;
}

/* ------------------------------------------------------------- channels */

/*
 * libssh hands every packet's data to this callback while it processes
 * the packet, so no data waits in libssh's channel buffers, unseen, while
 * we wait on the socket (the window both streams share would stay closed
 * and the command would stall).  Consuming it all lets libssh grow the
 * window.  Stderr keeps its first ENVCTL_CONN_STDERR_MAX bytes; stdout
 * goes to c->pending (capped) until conn_recv() takes it.
 */
static int
chan_data(ssh_session session, ssh_channel channel, void *data,
    uint32_t len, int is_stderr, void *userdata)
{
	struct host_conn *c = userdata;
	size_t keep = len;

	(void)session;
	(void)channel;
	if (is_stderr) {
		if (c->errbuf.len + keep > ENVCTL_CONN_STDERR_MAX)
			keep = ENVCTL_CONN_STDERR_MAX - c->errbuf.len;
		buf_add(&c->errbuf, data, keep);
	} else if (buf_add(&c->pending, data, len) != 0)
		c->overflow = true;
	return (int)len;
}

/* An exit-signal request: the command was killed ("KILL"). */
static void
chan_exit_signal(ssh_session session, ssh_channel channel,
    const char *signal, int core, const char *errmsg, const char *lang,
    void *userdata)
{
	struct host_conn *c = userdata;
	size_t n = signal != NULL ? strlen(signal) : 0;

	(void)session;
	(void)channel;
	(void)core;
	(void)errmsg;
	(void)lang;
	if (n >= sizeof(c->exit_signal))
		n = sizeof(c->exit_signal) - 1;
	if (n > 0)
		memcpy(c->exit_signal, signal, n);
	c->exit_signal[n] = '\0';
}

/*
 * Lets libssh process what has arrived, without waiting: the data
 * callback fills c->pending and c->errbuf.
 */
static int
chan_pump(struct host_conn *c, struct err *err)
{
	int rc;

	if (!ssh_channel_is_eof(c->chan) && !ssh_channel_is_closed(c->chan) &&
	    ssh_channel_poll(c->chan, 0) == SSH_ERROR)
		return conn_fail(c, ENVCTL_EREMOTE, -1, err, "reading output");
	if (c->overflow) {
		rc = err_set(err, ENVCTL_ETOOBIG, "output of '%s' is larger "
		    "than %zu bytes while not being read", c->cmd,
		    c->pending.cap);
		err_sethost(err, c->host);
		return rc;
	}
	return 0;
}

/* Waits until the session's socket is readable or the deadline passes. */
static int
wait_io(struct host_conn *c, struct err *err)
{
	struct pollfd pfd;
	int ms, n;

	for (;;) {
		if ((ms = remaining_ms(c)) == 0)
			return conn_fail(c, ENVCTL_ETIMEOUT, -1, err, NULL);
		if (wd_fired(&c->wd))
			return conn_fail(c, ENVCTL_ETIMEOUT, -1, err, NULL);
		pfd.fd = ssh_get_fd(c->session);
		if (pfd.fd < 0 || !ssh_is_connected(c->session))
			return conn_fail(c, ENVCTL_ECONNECT,
			    SSH_FX_NO_CONNECTION, err, NULL);
		pfd.events = POLLIN;
		if (ssh_get_poll_flags(c->session) & SSH_WRITE_PENDING)
			pfd.events |= POLLOUT;
		pfd.revents = 0;
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return conn_fail(c, ENVCTL_ECONNECT, -1, err,
			    "poll: %s", strerror(errno));
	}
}

/*
 * After authentication sshd sends small SSH_MSG_DEBUG packets, and until
 * a session starts its Nagle holds the next one (the channel confirmation)
 * until our delayed ACK, 40 ms on Linux.  Setting TCP_QUICKACK once data
 * came sends the pending ACK at once; setting it before we send is no use
 * (sending re-enters delayed-ACK mode).  Best effort: under a ProxyCommand
 * the fd is not a TCP socket.
 */
static void
quick_ack(struct host_conn *c)
{
	int one = 1, fd = ssh_get_fd(c->session);

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

static void
chan_free(struct host_conn *c)
{
	if (c->chan == NULL)
		return;
	if (c->broken == 0 && ssh_channel_is_open(c->chan))
		ssh_channel_close(c->chan);
	ssh_remove_channel_callbacks(c->chan, &c->chan_cb);
	ssh_channel_free(c->chan);
	c->chan = NULL;
}

static int
need_chan(struct host_conn *c, const char *verb, struct err *err)
{
	if (c->chan != NULL)
		return 0;
	err_set(err, ENVCTL_EINVALID, "cannot %s: no command is running",
	    verb);
	err_sethost(err, c->host);
	return ENVCTL_EINVALID;
}

int
conn_exec(struct host_conn *c, const char *cmd, struct err *err)
{
	int rc, e;

	if ((rc = conn_usable(c, err)) != 0)
		return rc;
	free(c->cmd);
	c->cmd = shorten_cmd(cmd);
	step_begin(c, "starting '%s'", c->cmd);
	chan_free(c);
	buf_reset(&c->errbuf);
	buf_reset(&c->pending);
	c->overflow = false;
	c->sent = false;
	if ((c->chan = ssh_channel_new(c->session)) == NULL) {
		rc = conn_fail(c, ENVCTL_ECONNECT, -1, err, NULL);
		goto out;
	}
	memset(&c->chan_cb, 0, sizeof(c->chan_cb));
	c->chan_cb.userdata = c;
	c->chan_cb.channel_data_function = chan_data;
	c->chan_cb.channel_exit_signal_function = chan_exit_signal;
	c->exit_signal[0] = '\0';
	ssh_callbacks_init(&c->chan_cb);
	ssh_set_channel_callbacks(c->chan, &c->chan_cb);
	/* Nonblocking, so that we wait (and ACK) in our own loop. */
	ssh_set_blocking(c->session, 0);
	while ((e = ssh_channel_open_session(c->chan)) == SSH_AGAIN) {
		if ((rc = wait_io(c, err)) != 0)
			goto out;
		quick_ack(c);
	}
	if (e != SSH_OK) {
		rc = conn_fail(c, ENVCTL_EREMOTE, -1, err,
		    "cannot open a channel");
		goto out;
	}
	c->stats.channels++;
	while ((e = ssh_channel_request_exec(c->chan, cmd)) == SSH_AGAIN) {
		if ((rc = wait_io(c, err)) != 0)
			goto out;
		quick_ack(c);
	}
	if (e != SSH_OK)
		rc = conn_fail(c, ENVCTL_EREMOTE, -1, err,
		    "the host refused the command");
out:
	ssh_set_blocking(c->session, 1);
	if (rc != 0)
		chan_free(c);
	step_end(c);
	return rc;
}

int
conn_send(struct host_conn *c, const void *data, size_t len,
    struct err *err)
{
	const char *p = data;
	size_t off = 0, n;
	uint32_t win;
	int rc, w;

	if ((rc = conn_usable(c, err)) != 0 ||
	    (rc = need_chan(c, "send", err)) != 0)
		return rc;
	step_begin(c, "writing to '%s'", c->cmd);
	while (off < len) {
		/* Reading keeps our window open while the peer echoes. */
		if ((rc = chan_pump(c, err)) != 0)
			goto out;
		if (ssh_channel_is_closed(c->chan)) {
			rc = err_set(err, ENVCTL_EREMOTE, "'%s' exited before "
			    "reading all its input", c->cmd);
			err_sethost(err, c->host);
			goto out;
		}
		if ((win = ssh_channel_window_size(c->chan)) == 0) {
			if ((rc = wait_io(c, err)) != 0)
				goto out;
			continue;
		}
		n = len - off;
		if (n > win)
			n = win;
		if (n > ENVCTL_CONN_CHUNK * 4)
			n = ENVCTL_CONN_CHUNK * 4;
		if ((w = ssh_channel_write(c->chan, p + off, (uint32_t)n)) <
		    0) {
			rc = conn_fail(c, ENVCTL_EREMOTE, -1, err, NULL);
			goto out;
		}
		if (w == 0 && (rc = wait_io(c, err)) != 0)
			goto out;
		if (w > 0)
			step_progress(c);
		off += (size_t)w;
	}
	c->sent = true;
out:
	step_end(c);
	return rc;
}

/* Moves what c->pending holds to out. */
static int
take_pending(struct host_conn *c, struct buf *out, struct err *err)
{
	int rc;

	if ((rc = buf_add(out, c->pending.data, c->pending.len)) != 0) {
		err_set(err, rc, "output of '%s' is larger than %zu bytes",
		    c->cmd != NULL ? c->cmd : "?", out->cap);
		err_sethost(err, c->host);
		return rc;
	}
	buf_reset(&c->pending);
	return 0;
}

static int
recv_until(struct host_conn *c, struct buf *out, bool wake_on_stderr,
    struct err *err)
{
	size_t errlen = c->errbuf.len;
	int rc;

	if (c->sent) {
		c->stats.round_trips++;
		c->sent = false;
	}
	if (c->pending.len > 0)
		return take_pending(c, out, err);
	if (c->chan == NULL)
		return 0;	/* after conn_exit(): nothing more */
	if ((rc = conn_usable(c, err)) != 0)
		return rc;
	step_begin(c, "waiting for output of '%s'", c->cmd);
	for (;;) {
		if ((rc = chan_pump(c, err)) != 0)
			break;
		if (c->pending.len > 0) {
			rc = take_pending(c, out, err);
			break;
		}
		if (ssh_channel_is_eof(c->chan) ||
		    ssh_channel_is_closed(c->chan))
			break;
		if (wake_on_stderr && c->errbuf.len != errlen)
			break;
		if ((rc = wait_io(c, err)) != 0)
			break;
	}
	step_end(c);
	return rc;
}

int
conn_recv(struct host_conn *c, struct buf *out, struct err *err)
{
	return recv_until(c, out, false, err);
}

int
conn_recv_any(struct host_conn *c, struct buf *out, struct err *err)
{
	return recv_until(c, out, true, err);
}

int
conn_exit(struct host_conn *c, int *status, struct err *err)
{
	size_t before;
	int rc;

	*status = -1;
	if ((rc = conn_usable(c, err)) != 0 ||
	    (rc = need_chan(c, "wait for the exit", err)) != 0)
		return rc;
	step_begin(c, "waiting for '%s' to exit", c->cmd);
	if (ssh_channel_is_open(c->chan) && ssh_channel_send_eof(c->chan) !=
	    SSH_OK) {
		rc = conn_fail(c, ENVCTL_EREMOTE, -1, err, "closing its input");
		goto out;
	}
	for (;;) {
		before = c->pending.len + c->errbuf.len;
		if ((rc = chan_pump(c, err)) != 0)
			goto out;
		if (ssh_channel_is_eof(c->chan) ||
		    ssh_channel_is_closed(c->chan))
			break;
		if (c->pending.len + c->errbuf.len != before)
			step_progress(c);
		else if ((rc = wait_io(c, err)) != 0)
			goto out;
	}
	/* Blocks until exit-status or close arrive: the watchdog bounds it. */
	*status = ssh_channel_get_exit_status(c->chan);
	if (wd_fired(&c->wd)) {
		rc = conn_fail(c, ENVCTL_ETIMEOUT, -1, err, NULL);
		goto out;
	}
	chan_free(c);
out:
	step_end(c);
	return rc;
}

const char *
conn_exit_signal(const struct host_conn *c)
{
	return c->exit_signal[0] != '\0' ? c->exit_signal : NULL;
}

const struct buf *
conn_stderr(const struct host_conn *c)
{
	return &c->errbuf;
}

const struct conn_stats *
conn_stats(const struct host_conn *c)
{
	return &c->stats;
}

/* ----------------------------------------------------------------- SFTP */

static int
sftp_fail(struct host_conn *c, int code, struct err *err, const char *fmt,
    ...)
    __attribute__((format(printf, 4, 5)));

/* Formats the detail, then lets conn_fail() map the SFTP status. */
static int
sftp_fail(struct host_conn *c, int code, struct err *err, const char *fmt,
    ...)
{
	char *detail;
	va_list ap;
	int st, rc;

	st = c->sftp != NULL ? sftp_get_error(c->sftp) : -1;
	va_start(ap, fmt);
	detail = xvasprintf(fmt, ap);
	va_end(ap);
	rc = conn_fail(c, code, st, err, "%s", detail);
	free(detail);
	return rc;
}

static int
sftp_start(struct host_conn *c, struct err *err)
{
	int rc;

	if (c->sftp != NULL)
		return 0;
	if ((c->sftp = sftp_new(c->session)) == NULL)
		return conn_fail(c, ENVCTL_EREMOTE, -1, err,
		    "cannot start SFTP");
	c->stats.sftp_sessions++;
	if (sftp_init(c->sftp) != SSH_OK) {
		rc = sftp_fail(c, ENVCTL_EREMOTE, err, "cannot start SFTP");
		sftp_free(c->sftp);
		c->sftp = NULL;
		return rc;
	}
	return 0;
}

static bool
sftp_is_dir(struct host_conn *c, const char *path)
{
	sftp_attributes a = sftp_stat(c->sftp, path);
	bool dir = a != NULL && a->type == SSH_FILEXFER_TYPE_DIRECTORY;

	sftp_attributes_free(a);
	return dir;
}

/* mkdir -p: every missing component of dir is made with mode 0700. */
static int
sftp_mkdirs(struct host_conn *c, const char *dir, struct err *err)
{
	char *path = xstrdup(dir);
	size_t len = strlen(path), i;
	int rc = 0;

	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (sftp_is_dir(c, path))
		goto out;
	for (i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/')
			continue;
		path[i] = '\0';
		if (sftp_mkdir(c->sftp, path, 0700) != 0 &&
		    !sftp_is_dir(c, path)) {
			rc = sftp_fail(c, ENVCTL_EREMOTE, err,
			    "cannot create directory '%s'", path);
			goto out;
		}
		if (i < len)
			path[i] = '/';
		step_progress(c);
	}
out:
	free(path);
	return rc;
}

int
conn_upload(struct host_conn *c, const char *dir, const char *name,
    const void *data, size_t len, int mode, struct err *err)
{
	const char *p = data;
	unsigned char rnd[6];
	char *dst = NULL, *tmp = NULL;
	sftp_file f = NULL;
	sftp_attributes a;
	size_t off = 0, n, chunk;
	ssize_t w;
	int rc;

	if ((rc = conn_usable(c, err)) != 0)
		return rc;
	dst = xasprintf("%s/%s", dir, name);
	step_begin(c, "uploading '%s'", dst);
	if ((rc = sftp_start(c, err)) != 0 ||
	    (rc = sftp_mkdirs(c, dir, err)) != 0)
		goto out;
	if (getentropy(rnd, sizeof(rnd)) != 0) {
		rc = err_errno(err, ENVCTL_ESYS, errno, "getentropy");
		goto out;
	}
	tmp = xasprintf("%s/.%s.tmp-%02x%02x%02x%02x%02x%02x", dir, name,
	    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	/* Created with its mode (less the server's umask): no chmod trip. */
	if ((f = sftp_open(c->sftp, tmp, O_WRONLY | O_CREAT | O_EXCL,
	    (mode_t)mode)) == NULL) {
		rc = sftp_fail(c, ENVCTL_EREMOTE, err, "cannot create '%s'",
		    tmp);
		free(tmp);
		tmp = NULL;	/* not ours: never remove it */
		goto out;
	}
	chunk = sftp_extension_supported(c->sftp, "limits@openssh.com",
	    "1") ? ENVCTL_CONN_SFTP_BIG : ENVCTL_CONN_CHUNK;
	while (off < len) {
		n = len - off < chunk ? len - off : chunk;
		if ((w = sftp_write(f, p + off, n)) <= 0) {
			rc = sftp_fail(c, ENVCTL_EREMOTE, err,
			    "cannot write '%s'", tmp);
			goto out;
		}
		off += (size_t)w;
		step_progress(c);
	}
	rc = sftp_close(f);
	f = NULL;
	if (rc != SSH_NO_ERROR) {
		rc = sftp_fail(c, ENVCTL_EREMOTE, err, "cannot write '%s'",
		    tmp);
		goto out;
	}
	if (sftp_rename(c->sftp, tmp, dst) != 0) {
		/* libssh 0.10 cannot replace: keep the existing file. */
		if ((a = sftp_stat(c->sftp, dst)) == NULL) {
			rc = sftp_fail(c, ENVCTL_EREMOTE, err,
			    "cannot rename '%s' to '%s'", tmp, dst);
			goto out;
		}
		sftp_attributes_free(a);
		if (sftp_unlink(c->sftp, tmp) != 0) {
			rc = sftp_fail(c, ENVCTL_EREMOTE, err,
			    "cannot remove '%s'", tmp);
			goto out;
		}
	}
	free(tmp);
	tmp = NULL;
out:
	if (f != NULL)
		sftp_close(f);
	if (tmp != NULL && c->broken == 0)
		sftp_unlink(c->sftp, tmp);
	step_end(c);
	free(tmp);
	free(dst);
	return rc;
}

/* ---------------------------------------------------------------- close */

void
conn_close(struct host_conn *c)
{
	if (c == NULL)
		return;
	if (c->session != NULL) {
		step_begin(c, "closing the connection");
		/* Politeness to a stalled host is not worth a long wait. */
		if (c->deadline > now_ms() + ENVCTL_CONN_CLOSE_MS) {
			c->deadline = now_ms() + ENVCTL_CONN_CLOSE_MS;
			if (c->wd.started)
				wd_arm(&c->wd, c->deadline);
		}
		if (c->broken != 0)
			wd_cut(&c->wd);
		chan_free(c);
		if (c->sftp != NULL)
			sftp_free(c->sftp);
		c->sftp = NULL;
		if (c->broken == 0)
			ssh_disconnect(c->session);
		step_end(c);
		ssh_free(c->session);
		c->session = NULL;
	}
	wd_release(&c->wd);
	free(c->host);
	free(c->target);
	free(c->known_hosts);
	free(c->cmd);
	buf_release(&c->what);
	buf_release(&c->pending);
	buf_release(&c->errbuf);
	free(c);
}
