/* agentlink.c - a session with envctl-agent on one host (see agentlink.h). */
#include "agentlink.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/fdio.h"
#include "common/proto.h"
#include "common/selfexe.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/output.h"
#include "controller/transport.h"

/* The bootstrap's exit status when the agent is not in the cache. */
#define BOOTSTRAP_MISSING	97
#define BOOTSTRAP_LINE		"envctl-bootstrap"	/* arch, cache dir */
#define INSTALLED_LINE		"envctl-installed"
#define FAILED_LINE		"envctl-bootstrap-failed"	/* why */
#define GO_MARKER		"envctl-go-"		/* + the sha256 */
/*
 * Requests up to this size (base64) ride in the exec command itself: the
 * agent answers them without waiting for sshd to open the channel's
 * window, which it does only once the command runs (a round trip).
 */
#define EMBED_MAX		(48u * 1024)
#define AGENT_MAX		(64u * 1024 * 1024)
#define STDERR_MAX		(64u * 1024)
/* The agent's exit status when it is not the program its name says
 * (agent/policy.h ENVCTL_POLICY_EXIT_DIGEST). */
#define AGENT_EXIT_DIGEST	96
#define DIGEST_WORDS		"does not match its digest"
#define SUDO_PASSWORD		"a password is required"

struct agentlink {
	const struct host *h;
	const struct agentlink_opts *o;
	struct host_conn *conn;		/* SSH; NULL when local */
	char		*cmd;		/* the bootstrap command */
	int		 started;	/* the bootstrap was sent */
	int		 embedded;	/* ... with the requests in it */
	int		 resend;	/* send them once it is installed */
	size_t		 outstanding;	/* requests not answered yet */
	pid_t		 pid;		/* local agent, or -1 */
	int		 to_fd, from_fd, err_fd;
	struct buf	 in;		/* received, not yet decoded */
	struct buf	 unanswered;	/* frames sent before any reply */
	struct buf	 errout;	/* local agent's stderr */
	int		 answered;	/* a reply came: the agent runs */
	int		 restarted;	/* the agent was sent */
	int		 retried;	/* a tampered cache was replaced */
	int		 refused;	/* sudo refused the cached file */
	char		*cached;	/* its path, once known */
	char		*cache;		/* where it was installed */
	size_t		 errseen;	/* stderr bytes looked at */
	long long	 start;		/* CLOCK_MONOTONIC ms, at open */
	long long	 deadline;	/* of the whole host, ms */
};

/* --- the agent program ------------------------------------------------ */

static const char *
elf_arch(const char *data, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)data;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	switch (eh->e_machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_AARCH64:
		return "aarch64";
	case EM_PPC64:
		return "ppc64le";
	case EM_RISCV:
		return "riscv64";
	}
	return NULL;
}

static char *
beside_program(const char *name)
{
	char *dir = selfexe_dir(), *path;

	if (dir == NULL)
		return NULL;
	path = xasprintf("%s/%s", dir, name);
	free(dir);
	return path;
}

int
agent_binary_load(struct agent_binary *ab, const char *path, struct err *err)
{
	struct buf b, tried = ENVCTL_BUF_INIT;
	char *cands[3];
	const char *env = getenv("ENVCTL_AGENT");
	size_t i;
	int r = ENVCTL_ENOTFOUND;

	memset(ab, 0, sizeof(*ab));
	if (env != NULL && env[0] == '\0')
		env = NULL;
	cands[0] = xstrdup(path != NULL ? path : env != NULL ? env : "");
	cands[1] = path != NULL || env != NULL ? NULL :
	    beside_program("envctl-agent");
	cands[2] = path != NULL || env != NULL ? NULL :
	    xstrdup(ENVCTL_LIBEXECDIR "/envctl-agent");
	buf_init(&b, AGENT_MAX);
	for (i = 0; i < 3; i++) {
		if (cands[i] == NULL || cands[i][0] == '\0')
			continue;
		buf_reset(&b);
		if (buf_read_file(&b, cands[i], NULL) == 0) {
			r = 0;
			break;
		}
		buf_addf(&tried, "%s%s", tried.len > 0 ? ", " : "", cands[i]);
	}
	if (r != 0) {
		err_set(err, r, "cannot find envctl-agent (looked at %s)",
		    tried.len > 0 ? tried.data : "nothing");
		goto out;
	}
	ab->path = xstrdup(cands[i]);
	ab->data = buf_detach(&b, &ab->len);
	if ((ab->arch = elf_arch(ab->data, ab->len)) == NULL) {
		r = err_set(err, ENVCTL_EINVALID, "'%s' is not an envctl-agent "
		    "program this envctl knows (no 64-bit ELF header)",
		    ab->path);
		agent_binary_release(ab);
		goto out;
	}
	hash_sha256_hex(ab->sha256, ab->data, ab->len);
out:
	for (i = 0; i < 3; i++)
		free(cands[i]);
	buf_release(&b);
	buf_release(&tried);
	return r;
}

void
agent_binary_release(struct agent_binary *ab)
{
	free(ab->path);
	free(ab->data);
	memset(ab, 0, sizeof(*ab));
}

/* --- starting it -------------------------------------------------------- */

/* Host and user names go into a shell command: allow only safe ones. */
static int
shell_safe(const char *s)
{
	return s[0] != '\0' && s[0] != '-' && strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	    "._-") == strlen(s);
}

/* The agent runs as another user than root through sudo. */
static int
become_other(const struct host *h)
{
	return h->become && h->become_user != NULL &&
	    strcmp(h->become_user, "root") != 0;
}

static int
sudo_prefix(struct buf *out, const struct host *h, struct err *err)
{
	if (!h->become)
		return 0;
	if (h->become_user != NULL && !shell_safe(h->become_user))
		return err_set(err, ENVCTL_EINVALID, "ansible_become_user "
		    "'%s' is not a plain user name", h->become_user);
	buf_addstr(out, "sudo -n ");
	if (h->become_user != NULL)
		buf_addf(out, "-u %s ", h->become_user);
	return 0;
}

/*
 * The one exec: run the cached agent, with the requests sent so far as
 * its --requests (embedded), or reading them from stdin.  When it is not
 * cached, say so on stderr (BOOTSTRAP_LINE arch dir), skip stdin up to
 * the line GO_MARKER<sha256> (requests already sent on stdin go by), then
 * read the agent's exact size from stdin into a temp beside its place,
 * check its SHA-256 and only then rename it into place, say
 * INSTALLED_LINE and run it, on the same channel; a half-sent or damaged
 * agent is never renamed, let alone run (FAILED_LINE why; exit
 * BOOTSTRAP_MISSING); the temp goes before the line is written, which
 * may be the write that a lost connection's SIGPIPE stops.  Two sessions
 * installing at once each write their own temp and rename a whole file.
 * sh's read takes one byte at a time from a pipe, so what follows the
 * marker is left for head.  "Are we root" is asked as "do we own /"
 * (test -O, a builtin): $(id -u) would cost a fork and an exec on every
 * connection.  The architecture comes from the kernel.arch sysctl (Linux
 * 6.1+; read is a builtin), else from uname -m.  The subshell's umask
 * 077 makes the directories and the temp private without changing the
 * umask the agent runs with.  mkdir and rm run only where there is
 * something for them to do (no directory yet, a stale temp): each is a
 * process start on every cold host otherwise.
 */
static int
bootstrap_cmd(struct agentlink *l, int fresh, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT, sudo = ENVCTL_BUF_INIT;
	struct buf run = ENVCTL_BUF_INIT;
	const struct agent_binary *ab = l->o->agent;
	const char *sha = ab->sha256;
	int r;

	if ((r = sudo_prefix(&sudo, l->h, err)) != 0)
		goto out;
	buf_addf(&b, "sh -c 'd=/var/lib/envctl/agent; "
	    "[ -O / ] || d=\"$HOME/.cache/envctl/agent\"; "
	    "a=\"$d/envctl-agent-%s\"; ", sha);
	buf_addf(&run, "exec %s\"$a\"", sudo.data);
	if (l->embedded) {
		/* base64 has no quote: safe inside the single quotes. */
		buf_addstr(&b, "r=");
		proto_b64_encode(&b, l->unanswered.data, l->unanswered.len);
		buf_addstr(&b, "; ");
		buf_addstr(&run, " --requests \"$r\"");
	}
	/* Retrying after a tampered or foreign file: remove it first. */
	if (fresh)
		buf_addstr(&b, "rm -f \"$a\"; ");
	/*
	 * Another become user than root must reach and read the agent: the
	 * cache's directories 0711 (searchable, not listable, writable only
	 * by the login user), the agent 0755 (docs/security.md).
	 */
	if (become_other(l->h))
		buf_addstr(&b, "p() { case $d in \"$HOME\"/*) chmod 711 "
		    "\"$HOME/.cache\" \"$HOME/.cache/envctl\";; esac; "
		    "chmod 711 \"$d\"; [ -f \"$a\" ] && chmod 755 \"$a\"; "
		    "} 2>/dev/null; p; ");
	buf_addf(&b, "[ -x \"$a\" ] && %s; "
	    "read m 2>/dev/null </proc/sys/kernel/arch || m=$(uname -m); "
	    "f() { [ -z \"$t\" ] || rm -f \"$t\"; "
	    "echo \"" FAILED_LINE " $1\" >&2; exit %d; }; t=; "
	    "for c in head sha256sum chmod mkdir mv; do command -v $c "
	    ">/dev/null || f \"tool $c\"; done; "
	    "echo \"" BOOTSTRAP_LINE " $m $d\" >&2; "
	    "g=; while IFS= read -r l; do [ \"$l\" = " GO_MARKER "%s ] && "
	    "{ g=1; break; }; done; [ -n \"$g\" ] || exit %d; "
	    "t=\"$d/.envctl-agent-%s.tmp-$(printf %%012x $$)\"; "
	    "(umask 077; { [ -d \"$d\" ] || mkdir -p \"$d\"; } && "
	    "{ [ ! -e \"$t\" ] && [ ! -h \"$t\" ] || rm -f \"$t\"; } && "
	    "set -C && head -c %zu >\"$t\") || f write; "
	    "[ \"$(sha256sum <\"$t\")\" = \"%s  -\" ] || f digest; "
	    "chmod %s \"$t\" && mv -f \"$t\" \"$a\" || f write; "
	    "%secho " INSTALLED_LINE " >&2; [ -x \"$a\" ] && %s; exit %d'",
	    run.data, BOOTSTRAP_MISSING, sha, BOOTSTRAP_MISSING, sha, ab->len,
	    sha, become_other(l->h) ? "755" : "700",
	    become_other(l->h) ? "p; " : "", run.data, BOOTSTRAP_MISSING);
	free(l->cmd);
	l->cmd = buf_detach(&b, NULL);
out:
	buf_release(&sudo);
	buf_release(&run);
	return r;
}

static void
set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int
local_start(struct agentlink *l, struct err *err)
{
	int in[2], out[2], er[2];
	const struct host *h = l->h;
	char *argv[8];
	int n = 0;

	if (h->become && h->become_user != NULL &&
	    !shell_safe(h->become_user))
		return err_set(err, ENVCTL_EINVALID, "ansible_become_user "
		    "'%s' is not a plain user name", h->become_user);
	if (h->become) {
		argv[n++] = "sudo";
		argv[n++] = "-n";
		if (h->become_user != NULL) {
			argv[n++] = "-u";
			argv[n++] = (char *)h->become_user;
		}
	}
	argv[n++] = l->o->agent->path;
	if (h->become) {	/* checked by the agent before it serves */
		argv[n++] = "--sha256";
		argv[n++] = (char *)l->o->agent->sha256;
	}
	argv[n] = NULL;
	if (fd_cloexec_pipe(in) != 0)
		return err_errno(err, ENVCTL_ESYS, errno, "pipe");
	if (fd_cloexec_pipe(out) != 0 || fd_cloexec_pipe(er) != 0) {
		close(in[0]);
		close(in[1]);
		return err_errno(err, ENVCTL_ESYS, errno, "pipe");
	}
	if ((l->pid = fork()) == -1)
		return err_errno(err, ENVCTL_ESYS, errno, "fork");
	if (l->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(er[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(er[1]);
	l->to_fd = in[1];
	l->from_fd = out[0];
	l->err_fd = er[0];
	set_nonblock(l->to_fd);
	set_nonblock(l->from_fd);
	set_nonblock(l->err_fd);
	return 0;
}

static int
remaining_ms(const struct agentlink *l)
{
	return deadline_left_ms(l->deadline, deadline_now_ms());
}

/* The seconds the host's deadline stands for, in messages. */
static int
budget_s(const struct agentlink *l)
{
	return (int)((l->deadline - l->start + 500) / 1000);
}

/*
 * Moves bytes for a local agent: writes data (if any) while draining its
 * stdout into l->in and stderr into l->errout.  With len == 0 it returns
 * once some stdout arrived or the agent closed it (*eof set).
 */
static int
local_pump(struct agentlink *l, const char *data, size_t len, int *eof,
    struct err *err)
{
	struct pollfd pf[3];
	char chunk[65536];
	size_t off = 0, got = 0;
	ssize_t n;
	int ms;

	*eof = 0;
	for (;;) {
		if (len > 0 && off == len)
			return 0;
		if (len == 0 && (got > 0 || *eof))
			return 0;
		pf[0].fd = l->from_fd;
		pf[1].fd = l->err_fd;
		pf[2].fd = off < len ? l->to_fd : -1;
		pf[0].events = pf[1].events = POLLIN;
		pf[2].events = POLLOUT;
		if ((ms = remaining_ms(l)) == 0)
			return err_set(err, ENVCTL_ETIMEOUT, "did not finish "
			    "in %d s (deadline for the whole host): the agent "
			    "did not answer", budget_s(l));
		if (poll(pf, 3, ms) < 0 && errno != EINTR)
			return err_errno(err, ENVCTL_ESYS, errno, "poll");
		if (pf[2].fd >= 0 && pf[2].revents != 0) {
			n = write(l->to_fd, data + off, len - off);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return err_errno(err, ENVCTL_EREMOTE, errno,
				    "cannot write to the agent");
			if (n > 0)
				off += (size_t)n;
		}
		if (pf[1].revents != 0) {
			n = read(l->err_fd, chunk, sizeof(chunk));
			if (n > 0 && l->errout.len < STDERR_MAX)
				buf_add(&l->errout, chunk, (size_t)n);
			if (n == 0)
				l->err_fd = -1;
		}
		if (pf[0].revents != 0) {
			n = read(l->from_fd, chunk, sizeof(chunk));
			if (n > 0) {
				if (buf_add(&l->in, chunk, (size_t)n) != 0)
					return err_set(err, ENVCTL_ETOOBIG,
					    "the agent's reply is too large");
				got += (size_t)n;
			} else if (n == 0)
				*eof = 1;
		}
	}
}

int
agentlink_open(struct agentlink **out, const struct host *h,
    const struct agentlink_opts *o, struct err *err)
{
	struct agentlink *l = xcalloc(1, sizeof(*l));
	struct buf sudo = ENVCTL_BUF_INIT;
	struct conn_params p;
	struct ssh_args sa;
	int r;

	*out = NULL;
	l->h = h;
	l->o = o;
	l->pid = -1;
	l->to_fd = l->from_fd = l->err_fd = -1;
	/* One deadline for the whole host, from here to the result. */
	l->start = deadline_now_ms();
	l->deadline = l->start + (long long)(o->timeout > 0 ? o->timeout :
	    ENVCTL_CONN_DEFAULT_TIMEOUT) * 1000;
	buf_init(&l->in, ENVCTL_PROTO_MAX + 4);
	buf_init(&l->unanswered, 0);
	buf_init(&l->errout, 0);
	memset(&sa, 0, sizeof(sa));
	if (h->local)
		r = local_start(l, err);
	else if ((r = sshargs_parse(&sa, h->ssh_common_args, err)) == 0) {
		memset(&p, 0, sizeof(p));
		p.host = h->name;
		/* Without ansible_host, ssh_config's HostName may apply. */
		p.address = h->address_set ? h->address : NULL;
		p.port = h->port;
		p.user = h->user;
		p.identity = h->key_file;
		p.ssh_config = o->ssh_config;
		p.known_hosts = o->known_hosts != NULL ? o->known_hosts :
		    sa.known_hosts;
		p.accept_new = o->accept_new;
		p.proxy_command = sa.proxy_command;
		p.proxy_jump = sa.proxy_jump;
		/* sshargs: -1 unset (ssh_config decides), 0 off. */
		p.alive_interval = sa.alive_interval < 0 ? 0 :
		    sa.alive_interval == 0 ? -1 : sa.alive_interval;
		p.alive_count = sa.alive_count > 0 ? sa.alive_count : 0;
		p.startups = o->startups;
		p.timeout = o->timeout;
		p.deadline = l->deadline;
		p.host_timeout = budget_s(l);
		/*
		 * A become user the bootstrap cannot name is refused before
		 * connecting; the exec itself waits for the first requests
		 * (link_start()).
		 */
		if ((r = sudo_prefix(&sudo, h, err)) == 0)
			r = conn_open(&l->conn, &p, err);
		buf_release(&sudo);
	}
	sshargs_release(&sa);
	if (r != 0) {
		err_sethost(err, h->name);
		agentlink_close(l);
		return r;
	}
	*out = l;
	return 0;
}

int
agentlink_send(struct agentlink *l, const json_t *req, struct err *err)
{
	struct buf frame = ENVCTL_BUF_INIT;
	int r, eof;

	if ((r = proto_encode(&frame, req, err)) != 0)
		goto out;
	l->outstanding++;
	if (!l->answered)
		buf_add(&l->unanswered, frame.data, frame.len);
	if (l->conn != NULL && !l->started)
		r = 0;		/* goes with the exec, or right after it */
	else if (l->conn != NULL) {
		r = conn_send(l->conn, frame.data, frame.len, err);
		/*
		 * Before the first reply, a failed write means the bootstrap
		 * ended early (sudo refused, no shell...): the frame is kept
		 * in l->unanswered, and agentlink_recv() reads the exit
		 * status and reports the real cause.
		 */
		if (r != 0 && !l->answered) {
			err_release(err);
			r = 0;
		}
	} else
		r = local_pump(l, frame.data, frame.len, &eof, err);
out:
	if (r != 0)
		err_sethost(err, l->h->name);
	buf_release(&frame);
	return r;
}

/*
 * Sends the bootstrap: with the requests so far in it when they are small
 * and no sudo runs the agent (sudo would log them with the command), or
 * followed by them on stdin.  fresh: the cached file is removed first.
 */
static int
link_start(struct agentlink *l, int fresh, struct err *err)
{
	int r;

	l->started = 1;
	l->restarted = 0;
	l->resend = 0;
	l->embedded = !l->h->become && l->unanswered.len > 0 &&
	    (l->unanswered.len + 2) / 3 * 4 <= EMBED_MAX;
	if ((r = bootstrap_cmd(l, fresh, err)) != 0 ||
	    (r = conn_exec(l->conn, l->cmd, err)) != 0)
		return r;
	if (l->embedded || l->unanswered.len == 0)
		return 0;
	r = conn_send(l->conn, l->unanswered.data, l->unanswered.len, err);
	/* A bootstrap that ended early: agentlink_recv() says why. */
	if (r != 0)
		err_release(err);
	return 0;
}

/*
 * The bootstrap named the cache and waits: send the marker and the agent
 * itself on its stdin.  Requests it read from stdin meanwhile went by;
 * they are sent again once it says the agent is installed (what follows
 * the agent on stdin must not reach head).
 */
static int
restart(struct agentlink *l, const char *bootmsg, struct err *err)
{
	char arch[64], dir[1024];
	const struct agent_binary *ab = l->o->agent;
	struct buf go = ENVCTL_BUF_INIT;
	int r;

	l->restarted = 1;
	if (sscanf(bootmsg, BOOTSTRAP_LINE " %63s %1023[^\n]", arch,
	    dir) != 2)
		return err_set(err, ENVCTL_EREMOTE, "cannot start the agent: "
		    "%.300s", bootmsg);
	if (strcmp(arch, ab->arch) != 0)
		return err_set(err, ENVCTL_EUNSUPPORTED, "host architecture "
		    "is %s, but this envctl has an agent for %s only", arch,
		    ab->arch);
	free(l->cache);
	l->cache = xstrdup(dir);
	/* The newline first: the last request read may lack one. */
	buf_addf(&go, "\n" GO_MARKER "%s\n", ab->sha256);
	buf_add(&go, ab->data, ab->len);
	r = conn_send(l->conn, go.data, go.len, err);
	buf_release(&go);
	l->resend = !l->embedded && l->unanswered.len > 0;
	return r;
}

/* The line of stderr that starts with tag and a space or its end, or NULL. */
static const char *
stderr_line(const struct buf *se, const char *tag)
{
	const char *p = se->data;
	size_t n = strlen(tag);

	while ((p = strstr(p, tag)) != NULL) {
		if ((p == se->data || p[-1] == '\n') &&
		    (p[n] == ' ' || p[n] == '\n') && strchr(p, '\n') != NULL)
			return p;
		p++;
	}
	return NULL;
}

/* Why the bootstrap could not install the agent (FAILED_LINE why). */
static int
install_failed(struct agentlink *l, const char *line, struct err *err)
{
	const char *why = line + sizeof(FAILED_LINE);
	size_t n = strcspn(why, "\n");
	const char *dir = l->cache != NULL ? l->cache : "?";

	if (n > 5 && strncmp(why, "tool ", 5) == 0)
		return err_set(err, ENVCTL_EUNSUPPORTED, "cannot install the "
		    "agent: the host has no '%.*s' (needed to check the "
		    "agent's SHA-256 before it runs)", (int)(n - 5), why + 5);
	if (n == 6 && strncmp(why, "digest", 6) == 0)
		return err_set(err, ENVCTL_EREMOTE, "the agent sent to '%s' "
		    "arrived damaged (its SHA-256 differs): removed, not run",
		    dir);
	return err_set(err, ENVCTL_EREMOTE, "cannot install the agent in "
	    "'%s': %.300s", dir, l->conn != NULL ?
	    conn_stderr(l->conn)->data : "");
}

/* Signals by number and by the name SSH gives them (RFC 4254 6.10). */
static const struct {
	int		 num;
	const char	*name;
} signals[] = {
	{ SIGABRT, "ABRT" }, { SIGALRM, "ALRM" }, { SIGBUS, "BUS" },
	{ SIGFPE, "FPE" }, { SIGHUP, "HUP" }, { SIGILL, "ILL" },
	{ SIGINT, "INT" }, { SIGKILL, "KILL" }, { SIGPIPE, "PIPE" },
	{ SIGQUIT, "QUIT" }, { SIGSEGV, "SEGV" }, { SIGSYS, "SYS" },
	{ SIGTERM, "TERM" }, { SIGTRAP, "TRAP" }, { SIGUSR1, "USR1" },
	{ SIGUSR2, "USR2" }, { SIGXCPU, "XCPU" }, { SIGXFSZ, "XFSZ" },
};

/*
 * "signal 9 (SIGKILL)" into b, from a local number (signo > 0) or the
 * name an SSH server sent (signame); the one place either is spelled.
 */
static void
signal_text(struct buf *b, int signo, const char *signame)
{
	size_t i;

	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signo > 0 ? signals[i].num == signo : signame != NULL &&
		    strcmp(signals[i].name, signame) == 0) {
			buf_addf(b, "signal %d (SIG%s)", signals[i].num,
			    signals[i].name);
			return;
		}
	if (signo > 0)
		buf_addf(b, "signal %d", signo);
	else
		buf_addf(b, "signal %.30s", signame);
}

/*
 * Turns how the agent ended into an error: exit status, or (status -1)
 * the signal that killed it, a local number or an SSH name.
 */
static int
ended(int status, int signo, const char *signame, const char *raw,
    struct err *err)
{
	struct buf sig = ENVCTL_BUF_INIT;
	char errtext[512];
	const char *nl;
	size_t n;
	int r;

	/* One line: the remote stderr's first but the bootstrap's own. */
	while ((strncmp(raw, BOOTSTRAP_LINE " ", sizeof(BOOTSTRAP_LINE)) ==
	    0 || strncmp(raw, INSTALLED_LINE "\n", sizeof(INSTALLED_LINE)) ==
	    0) && (nl = strchr(raw, '\n')) != NULL)
		raw = nl + 1;
	n = strcspn(raw, "\r\n");
	if (n >= sizeof(errtext))
		n = sizeof(errtext) - 1;
	memcpy(errtext, raw, n);
	errtext[n] = '\0';
	if (strstr(errtext, "a password is required") != NULL ||
	    strstr(errtext, "a terminal is required") != NULL)
		return err_set(err, ENVCTL_EAUTH, "sudo wants a password "
		    "(ansible_become needs a NOPASSWD sudo rule for the agent)"
		    ": %.200s", errtext);
	if (signo > 0 || signame != NULL) {
		signal_text(&sig, signo, signame);
		r = err_set(err, ENVCTL_EREMOTE, "the agent was killed by %s"
		    "%s%.300s", sig.data, errtext[0] != '\0' ? ": " : "",
		    errtext);
		buf_release(&sig);
		return r;
	}
	if (status < 0)
		return err_set(err, ENVCTL_EREMOTE, "the agent ended without "
		    "an exit status%s%.300s", errtext[0] != '\0' ? ": " : "",
		    errtext);
	if (status == 126 || status == 127)
		return err_set(err, ENVCTL_EREMOTE, "cannot run the agent "
		    "(exit %d): %.300s", status, errtext);
	return err_set(err, ENVCTL_EREMOTE, "the agent ended (exit %d)%s%.300s",
	    status, errtext[0] != '\0' ? ": " : "", errtext);
}

void
agentlink_set_timeout(struct agentlink *l, int seconds)
{
	if (seconds > l->o->timeout)
		agentlink_extend(l, seconds);
}

void
agentlink_extend(struct agentlink *l, int seconds)
{
	long long until = deadline_now_ms() + (long long)seconds * 1000;

	if (until <= l->deadline)
		return;
	l->deadline = until;
	if (l->conn != NULL) {
		conn_set_timeout(l->conn, seconds);
		conn_set_deadline(l->conn, l->deadline, budget_s(l));
	}
}

int
agentlink_host_ms(const struct agentlink *l)
{
	return deadline_host_ms(l->deadline - deadline_now_ms());
}

/*
 * After sudo's "a password is required" asks sudo itself (sudo -n -l
 * AGENT, no password needed to list while any NOPASSWD rule exists)
 * whether it refused the command: 1 refused, 0 it wants a password.
 * Also learns the cached agent's path.
 */
static int
sudo_refused(struct agentlink *l, struct err *err)
{
	struct buf cmd = ENVCTL_BUF_INIT, sudo = ENVCTL_BUF_INIT, out;
	size_t before;
	int r, status = -1;

	buf_init(&out, 4096);
	if ((r = sudo_prefix(&sudo, l->h, err)) != 0)
		goto out;
	buf_addf(&cmd, "sh -c 'd=/var/lib/envctl/agent; "
	    "[ -O / ] || d=\"$HOME/.cache/envctl/agent\"; "
	    "a=\"$d/envctl-agent-%s\"; echo \"$a\"; [ -f \"$a\" ] && "
	    "%s-l \"$a\" >/dev/null'", l->o->agent->sha256, sudo.data);
	if ((r = conn_exec(l->conn, cmd.data, err)) != 0)
		goto out;
	do {
		before = out.len;
		if ((r = conn_recv(l->conn, &out, err)) != 0)
			goto out;
	} while (out.len > before);
	if ((r = conn_exit(l->conn, &status, err)) != 0)
		goto out;
	out.data[strcspn(out.data, "\n")] = '\0';
	free(l->cached);
	l->cached = xstrdup(out.data);
	r = status > 0 && strstr(conn_stderr(l->conn)->data,
	    SUDO_PASSWORD) == NULL;
out:
	buf_release(&cmd);
	buf_release(&sudo);
	buf_release(&out);
	return r;
}

/*
 * The agent ended before its first reply: when it refused to run because
 * it is not the program its name says, or sudo refused the file (a rule
 * pinned to the right digest), the cached file is replaced once, as the
 * login user, and the same requests go to a fresh agent.  0: retried;
 * 1: nothing to retry; else an error.
 */
static int
retry_fresh(struct agentlink *l, int status, const char *errtext,
    struct err *err)
{
	const char *p, *q;
	int r;

	if (status == AGENT_EXIT_DIGEST &&
	    (p = strstr(errtext, "the agent '")) != NULL &&
	    (q = strstr(p, "' " DIGEST_WORDS)) != NULL) {
		free(l->cached);
		l->cached = xstrndup(p + 11, (size_t)(q - p - 11));
	} else if (l->h->become && strstr(errtext, SUDO_PASSWORD) != NULL) {
		if ((r = sudo_refused(l, err)) != 1)
			return r < 0 ? r : 1;
		l->refused = 1;
	} else
		return 1;
	l->retried = 1;
	l->restarted = 0;
	l->errseen = 0;
	free(l->cache);
	l->cache = NULL;
	out_note("envctl: %s: the cached agent %s " DIGEST_WORDS " (tampered "
	    "or foreign); removed it, uploading again\n", l->h->name,
	    l->cached != NULL ? l->cached : "");
	return link_start(l, 1, err);
}

int
agentlink_recv(struct agentlink *l, json_t **reply, struct err *err)
{
	const struct buf *se;
	const char *line;
	size_t before;
	int r, status, eof;

	*reply = NULL;
	for (;;) {
		if ((r = proto_decode(reply, &l->in, err)) != 0) {
			if (r == 1) {
				if (l->outstanding > 0)
					l->outstanding--;
				l->answered = 1;
				buf_release(&l->unanswered);
				r = 0;
			}
			break;
		}
		before = l->in.len;
		if (l->conn == NULL) {
			if ((r = local_pump(l, NULL, 0, &eof, err)) != 0)
				break;
			if (!eof)
				continue;
			close(l->to_fd);
			l->to_fd = -1;
			waitpid(l->pid, &status, 0);
			l->pid = -1;
			r = ended(WIFEXITED(status) ? WEXITSTATUS(status) :
			    -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
			    NULL, l->errout.data, err);
			break;
		}
		if (!l->started && (r = link_start(l, 0, err)) != 0)
			break;
		se = conn_stderr(l->conn);
		if (!l->answered && !l->restarted &&
		    (line = stderr_line(se, BOOTSTRAP_LINE)) != NULL) {
			if ((r = restart(l, line, err)) != 0)
				break;
			continue;
		}
		if (l->resend && stderr_line(se, INSTALLED_LINE) != NULL) {
			l->resend = 0;
			if ((r = conn_send(l->conn, l->unanswered.data,
			    l->unanswered.len, err)) != 0)
				err_release(err);	/* the exit says why */
			r = 0;
			continue;
		}
		l->errseen = se->len;
		if ((r = conn_recv_any(l->conn, &l->in, err)) != 0)
			break;
		if (l->in.len > before || se->len != l->errseen)
			continue;
		/* No bytes, no stderr and no error: the command exited. */
		if ((r = conn_exit(l->conn, &status, err)) != 0)
			break;
		if (status == BOOTSTRAP_MISSING &&
		    (line = stderr_line(se, FAILED_LINE)) != NULL) {
			r = install_failed(l, line, err);
			break;
		}
		if (status == BOOTSTRAP_MISSING && l->cache != NULL) {
			r = err_set(err, ENVCTL_EREMOTE, "the agent installed "
			    "in '%s' cannot be run there (a noexec mount?)",
			    l->cache);
			break;
		}
		if (!l->answered && !l->retried &&
		    (r = retry_fresh(l, status, se->data, err)) != 1) {
			if (r != 0)
				break;
			continue;
		}
		if (l->refused && strstr(se->data, SUDO_PASSWORD) != NULL) {
			r = err_set(err, ENVCTL_EAUTH, "sudo refused to run "
			    "the agent '%s' (no NOPASSWD rule allows it: a "
			    "rule pinned to another agent's digest? see "
			    "envctl(1))",
			    l->cached != NULL ? l->cached : "?");
			break;
		}
		r = ended(status, 0, status == -1 ?
		    conn_exit_signal(l->conn) : NULL, se->data, err);
		break;
	}
	if (r != 0)
		err_sethost(err, l->h->name);
	return r;
}

void
agentlink_stats(const struct agentlink *l, struct conn_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (l->conn != NULL)
		*out = *conn_stats(l->conn);
}

/* EOF on stdin ends the agent; one that hangs is killed after 2 s. */
static void
local_reap(pid_t pid)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int status, i;

	for (i = 0; i < 200; i++) {
		if (waitpid(pid, &status, WNOHANG) != 0)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

void
agentlink_close(struct agentlink *l)
{
	int status;

	if (l == NULL)
		return;
	/*
	 * Every request answered: the agent ends at the EOF that closing
	 * the channel sends; waiting for its exit status would cost a round
	 * trip and tell nothing.  Otherwise the exit is waited for, bounded.
	 */
	if (l->conn != NULL) {
		if (l->started && l->outstanding > 0)
			conn_exit(l->conn, &status, NULL);
		conn_close(l->conn);
	}
	if (l->to_fd >= 0)
		close(l->to_fd);
	if (l->pid > 0)
		local_reap(l->pid);
	if (l->from_fd >= 0)
		close(l->from_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	buf_release(&l->in);
	buf_release(&l->unanswered);
	buf_release(&l->errout);
	free(l->cmd);
	free(l->cache);
	free(l->cached);
	free(l);
}
