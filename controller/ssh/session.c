/*
 * session.c - opening and closing one SSH connection (see session.h).
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
 *   3. the inventory and command line: ProxyCommand or ProxyJump from
 *      ansible_ssh_common_args (replacing the config's either, as ssh -o
 *      does; a ProxyJump becomes the same "ssh -W" command), address
 *      (replaces the host name
 *      that matched the config: known_hosts entries use it), port, user,
 *      identity (offered before the agent and the config's files, since
 *      libssh ignores IdentitiesOnly), known_hosts;
 *   4. ours, always: the global known_hosts file is /dev/null, publickey
 *      only, TCP_NODELAY, SSH_OPTIONS_TIMEOUT = --timeout (so --timeout
 *      wins over ConnectTimeout), libssh logging off.
 *
 * With --max-startups, the connection holds a slot of its first hop (the
 * jump host, a ProxyCommand's ssh destination, or address:port) from
 * before the TCP connect until authentication is over; the wait for it
 * counts against the host's deadline, and the connect's own timeout
 * starts once the slot is ours.
 *
 * ssh_connect() runs in blocking mode and is bounded by
 * SSH_OPTIONS_TIMEOUT (TCP connect, banner and key exchange together; set
 * to what is left of the host's deadline when that is less; libssh counts
 * it over the whole connect, not per packet).  From then on every step is
 * bounded by the process's one timer (conn.h, timer.h).
 */
#include "controller/ssh/session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/ssh/aliveconf.h"
#include "controller/ssh/channel.h"
#include "controller/ssh/conn.h"
#include "controller/ssh/knownhosts.h"
#include "controller/ssh/sshargs.h"
#include "controller/ssh/startups.h"

#define ENVCTL_CONN_PENDING_MAX	(64u * 1024 * 1024) /* early stdout */
#define ENVCTL_CONN_CLOSE_MS	2000	/* closing politely, at most */

/*
 * The one timer of the process, made by transport_init(), freed by
 * transport_finish().  A mutable global, against the rule, because its
 * lifetime is that of libssh's own process-wide state, which the same two
 * calls bracket: the connections that share it are opened deep in each
 * host's job (agentlink.c), and handing a timer object down through the
 * fleet engine to each of them would buy nothing over this.  Its thread
 * runs only while a connection is open.
 */
static struct timer *transport_timer;

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
	if (transport_timer == NULL)
		transport_timer = timer_new();
}

void
transport_finish(void)
{
	timer_free(transport_timer);
	transport_timer = NULL;
	ssh_finalize();
}

/* ---------------------------------------------------------------- open */

static int
set_opt(struct host_conn *c, enum ssh_options_e opt, const void *v,
    const char *name, struct err *err)
{
	if (ssh_options_set(c->session, opt, v) == SSH_OK)
		return 0;
	return conn_fail(c, ENVCTL_EINVALID, err, "cannot set %s", name);
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
			conn_shquote(&b, config, false);
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
 * ServerAliveInterval and ServerAliveCountMax: the command line's, else
 * ssh_config's for name, what its Host lines match (libssh skips both
 * keywords), else none and 3, as ssh(1).
 */
static void
keepalive_opts(struct host_conn *c, const struct conn_params *p,
    const char *name)
{
	/* -1: not known yet; 0: none. */
	int interval = p->alive_interval > 0 ? p->alive_interval :
	    p->alive_interval < 0 ? 0 : -1;
	int count = p->alive_count > 0 ? p->alive_count : -1;

	if (interval == -1 || count == -1)
		aliveconf_read(p->ssh_config, name, &interval, &count);
	c->alive_ms = interval > 0 ? interval * 1000 : 0;
	c->alive_max = count > 0 ? count : 3;
}

/*
 * ProxyCommand or ProxyJump from the command line: either replaces the
 * config's proxy (OpenSSH takes the first of the two it reads, and reads
 * -o options before any file); "none" removes it.
 */
static int
cli_proxy(struct host_conn *c, const struct conn_params *p,
    struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	const char *v = p->proxy_command != NULL ? p->proxy_command :
	    p->proxy_jump;
	int rc;

	if (v == NULL)
		return 0;
	if (strcasecmp(v, "none") == 0)
		buf_addstr(&b, "none");
	else if (p->proxy_command != NULL)
		sshargs_batch_command(&b, v);
	else if ((rc = sshargs_jump_command(&b, v, p->ssh_config, err)) !=
	    0) {
		err_sethost(err, c->host);
		goto out;
	}
	rc = set_opt(c, SSH_OPTIONS_PROXYCOMMAND, b.data, p->proxy_command !=
	    NULL ? "the ProxyCommand" : "the ProxyJump command", err);
out:
	buf_release(&b);
	return rc;
}

/*
 * The startups key of the connection and its words for messages: the
 * first hop of a ProxyJump or of an ssh ProxyCommand ("behind bastion
 * H"), any other ProxyCommand as written, or the target address.
 */
static void
startup_key(struct host_conn *c, const char *addr, unsigned int port)
{
	char *pc = NULL, *hop;

	if (ssh_options_get(c->session, SSH_OPTIONS_PROXYCOMMAND, &pc) !=
	    SSH_OK || pc == NULL) {
		c->slot_key = xasprintf("%s:%u", addr, port);
		c->slot_words = xasprintf("to %s", c->slot_key);
	} else if ((hop = sshargs_first_hop(pc)) != NULL) {
		c->slot_key = hop;
		c->slot_words = xasprintf("behind bastion %s", hop);
	} else {
		c->slot_key = xasprintf("ProxyCommand %s", pc);
		c->slot_words = xasprintf("behind ProxyCommand '%s'", pc);
	}
	ssh_string_free_char(pc);
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

/*
 * SSH_OPTIONS_TIMEOUT bounds the whole ssh_connect(): the step's timeout,
 * or what is left of the host's deadline when that is less.
 */
static int
set_connect_timeout(struct host_conn *c, struct err *err)
{
	long long ms = (long long)c->timeout * 1000, now = deadline_now_ms();
	long timeout, usec;
	int rc;

	/* libssh adds the two: what is left of the host's, to the ms. */
	if (c->host_deadline != 0 && c->host_deadline - now < ms)
		ms = c->host_deadline - now;
	if (ms < 1)
		ms = 1;
	timeout = (long)(ms / 1000);
	usec = (long)(ms % 1000) * 1000;
	if ((rc = set_opt(c, SSH_OPTIONS_TIMEOUT, &timeout, "the timeout",
	    err)) != 0)
		return rc;
	return set_opt(c, SSH_OPTIONS_TIMEOUT_USEC, &usec, "the timeout", err);
}

/*
 * Waits for a slot of the connection's first hop (--max-startups), until
 * the host's deadline (or the step's timeout without one).
 */
static int
take_slot(struct host_conn *c, const struct conn_params *p,
    struct err *err)
{
	long long deadline = c->host_deadline, waited;
	int rc;

	if (p->startups == NULL)
		return 0;
	if (deadline == 0)
		deadline = deadline_now_ms() + (long long)c->timeout * 1000;
	if ((rc = startups_acquire(p->startups, c->slot_key, deadline,
	    &waited, err)) != 0) {
		err_release(err);
		rc = err_set(err, ENVCTL_ETIMEOUT, "waited %lld s for a "
		    "handshake slot %s (--max-startups %d)",
		    (waited + 500) / 1000, c->slot_words,
		    startups_max(p->startups));
		err_sethost(err, c->host);
		return rc;
	}
	c->startups = p->startups;
	return 0;
}

/* Gives the slot back: authenticated (or failed), c no longer counts. */
static void
drop_slot(struct host_conn *c)
{
	if (c->startups != NULL)
		startups_release(c->startups, c->slot_key);
	c->startups = NULL;
}

static int
configure(struct host_conn *c, const struct conn_params *p, struct err *err)
{
	const char *name = p->host;	/* what Host lines match */
	int yes = 1, no = 0, rc;
	bool process = false;
	unsigned int port = 22;
	char *host = NULL, *via;

	/*
	 * libssh 0.10.6 refuses host names that are not DNS names ("gpu_01"):
	 * then ssh_config can only match the address, as with "ssh ADDRESS".
	 */
	if (ssh_options_set(c->session, SSH_OPTIONS_HOST, p->host) != SSH_OK) {
		name = p->address;
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
		return conn_fail(c, ENVCTL_EPARSE, err, "ssh_config '%s'",
		    p->ssh_config != NULL ? p->ssh_config : "~/.ssh/config");
	if ((rc = fix_proxyjump(c, p->ssh_config, err)) != 0 ||
	    (rc = cli_proxy(c, p, err)) != 0)
		return rc;
	keepalive_opts(c, p, name);

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
	if (p->known_hosts != NULL && (rc = set_opt(c,
	    SSH_OPTIONS_KNOWNHOSTS, p->known_hosts, "known_hosts", err)) != 0)
		return rc;
	if ((rc = set_opt(c, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null",
	    "the global known_hosts", err)) != 0 ||
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
	startup_key(c, host != NULL ? host : p->host, port != 0 ? port : 22);
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
auth_identity(struct host_conn *c, const char *path, struct err *err)
{
	ssh_key priv = NULL;
	int rc;

	if (ssh_pki_import_privkey_file(path, NULL, no_passphrase, NULL,
	    &priv) != SSH_OK)
		return SSH_AUTH_DENIED;
	while ((rc = ssh_userauth_publickey(c->session, NULL, priv)) ==
	    SSH_AUTH_AGAIN && conn_wait_io(c, err) == 0)
		;
	ssh_key_free(priv);
	return rc;
}

/*
 * ssh_userauth_publickey_auto() (the agent's keys, then ssh_config's and
 * the default files), non-blocking: libssh 0.10 blocking notices a
 * disconnect (sshd's "Too many authentication failures") only when its
 * wait times out.
 */
static int
auth_auto(struct host_conn *c, struct err *err)
{
	int rc;

	while ((rc = ssh_userauth_publickey_auto(c->session, NULL, NULL)) ==
	    SSH_AUTH_AGAIN && conn_wait_io(c, err) == 0)
		;
	return rc;
}

static int
authenticate(struct host_conn *c, const struct conn_params *p,
    struct err *err)
{
	struct buf tried = ENVCTL_BUF_INIT, methods = ENVCTL_BUF_INIT;
	char *user = NULL;
	int rc, alive_ms;

	memset(&c->cb, 0, sizeof(c->cb));
	c->cb.auth_function = no_passphrase;
	ssh_callbacks_init(&c->cb);
	ssh_set_callbacks(c->session, &c->cb);
	ssh_options_get(c->session, SSH_OPTIONS_USER, &user);
	buf_reset(&c->what);
	buf_addf(&c->what, "authenticating as '%s' to %s",
	    user != NULL ? user : "?", c->target);

	rc = SSH_AUTH_DENIED;
	/* No keepalive before the login: their replies then go unseen. */
	alive_ms = c->alive_ms;
	c->alive_ms = 0;
	ssh_set_blocking(c->session, 0);
	if (p->identity != NULL)
		rc = auth_identity(c, p->identity, err);
	if (rc == SSH_AUTH_DENIED)
		rc = auth_auto(c, err);
	ssh_set_blocking(c->session, 1);
	c->alive_ms = alive_ms;
	if (rc == SSH_AUTH_SUCCESS) {
		rc = 0;
		goto out;
	}
	/* The wait's own error (timeout, connection lost), else libssh's. */
	if (rc == SSH_AUTH_AGAIN) {
		rc = err->code;
		goto out;
	}
	if (rc == SSH_AUTH_ERROR) {
		rc = conn_fail(c, ENVCTL_EAUTH, err, NULL);
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
	long long t0 = deadline_now_ms(), now;
	int rc, fd, fl;

	*out = NULL;
	c->host = xstrdup(p->host != NULL ? p->host : "?");
	conn_set_timeout(c, p->timeout);
	c->host_timeout = p->host_timeout > 0 ? p->host_timeout : 0;
	if (p->deadline != 0)
		c->host_deadline = p->deadline;
	else if (p->host_timeout > 0)
		c->host_deadline = t0 + (long long)p->host_timeout * 1000;
	buf_init(&c->what, 0);
	buf_init(&c->pending, ENVCTL_CONN_PENDING_MAX);
	buf_init(&c->errbuf, 0);
	c->wdfd = -1;
	if (p->host == NULL) {
		rc = err_set(err, ENVCTL_EINVALID, "no host name");
		goto out;
	}
	if ((c->session = ssh_new()) == NULL) {
		rc = err_set(err, ENVCTL_ESYS, "cannot create an SSH session");
		goto out;
	}
	conn_step_begin(c, "reading ssh_config");
	if ((rc = configure(c, p, err)) != 0 ||
	    (rc = take_slot(c, p, err)) != 0 ||
	    (rc = set_connect_timeout(c, err)) != 0)
		goto out;

	/* The connect's timeout starts once it has its slot. */
	t0 = deadline_now_ms();
	conn_step_begin(c, "connecting to %s", c->target);
	if (ssh_connect(c->session) != SSH_OK) {
		/* libssh says "Timeout connecting to ..." as SSH_FATAL. */
		now = deadline_now_ms();
		if (now - t0 >= (long long)c->timeout * 1000 - 50 ||
		    (c->host_deadline != 0 && now >= c->host_deadline))
			rc = conn_fail(c, ENVCTL_ETIMEOUT, err, NULL);
		else {
			buf_reset(&c->what);
			buf_addf(&c->what, "cannot connect to %s", c->target);
			rc = conn_fail(c, ENVCTL_ECONNECT, err, NULL);
		}
		goto out;
	}
	c->connected = true;
	/* libssh makes it without: keep it from other threads' children. */
	fd = ssh_get_fd(c->session);
	if ((fl = fcntl(fd, F_GETFD)) >= 0)
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	if (transport_timer == NULL) {
		rc = err_set(err, ENVCTL_EINVALID, "transport_init() was not "
		    "called");
		goto out;
	}
	if ((rc = conn_watch(c, transport_timer, fd, err)) != 0)
		goto out;
	/* Host key and authentication share the connect's deadline. */
	conn_step_from(c, t0);
	buf_reset(&c->what);
	buf_addf(&c->what, "checking the host key of %s", c->target);
	if ((rc = knownhosts_check(c, p->accept_new, err)) != 0)
		goto out;
	if ((rc = authenticate(c, p, err)) != 0)
		goto out;
	drop_slot(c);
	conn_step_end(c);
	conn_alive_heard(c);
	*out = c;
	return 0;
out:
	drop_slot(c);
	err_sethost(err, c->host);
	conn_close(c);
	return rc;
}

const struct conn_stats *
conn_stats(const struct host_conn *c)
{
	return &c->stats;
}

/* ---------------------------------------------------------------- close */

void
conn_close(struct host_conn *c)
{
	long long now;

	if (c == NULL)
		return;
	if (c->session != NULL) {
		conn_step_begin(c, "closing the connection");
		/* Politeness to a stalled host is not worth a long wait. */
		now = deadline_now_ms();
		if (c->deadline > now + ENVCTL_CONN_CLOSE_MS) {
			c->deadline = now + ENVCTL_CONN_CLOSE_MS;
			conn_watch_close(c);
		}
		if (c->broken != 0)
			conn_cut(c);
		channel_release(c);
		if (c->broken == 0)
			ssh_disconnect(c->session);
		conn_step_end(c);
		ssh_free(c->session);
		c->session = NULL;
	}
	conn_unwatch(c);
	free(c->host);
	free(c->target);
	free(c->slot_key);
	free(c->slot_words);
	free(c->known_hosts);
	free(c->cmd);
	buf_release(&c->what);
	buf_release(&c->pending);
	buf_release(&c->errbuf);
	free(c);
}
