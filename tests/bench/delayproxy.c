/*
 * delayproxy - a loopback TCP proxy that adds round-trip time, for bench.
 *
 * Listens on 127.0.0.X at each LISTEN_PORT and forwards every connection to
 * 127.0.0.1:TARGET_PORT.  In each direction every chunk read, and the EOF,
 * is held for DELAY/2 ms from the moment it was read, so a round trip gains
 * DELAY ms; order is kept per direction.  A direction with more than 4 MiB
 * queued stops reading its source until it drains.  EOF is passed on as
 * shutdown(SHUT_WR); a reset or a refused connect closes both sides.
 * Writes "ready\n" to --ready-fd once every listener is bound.  Exit: 0 on
 * SIGTERM/SIGINT, 1 on errors, 64 on usage errors.  One thread, epoll.
 * Loopback only, by design: it exists to emulate a network, not cross one.
 */

/* accept4(2); the Makefile asks only for POSIX and the default set. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Only libc is included, so a short prefix cannot clash. */
enum {
	DP_QUEUE_MAX = 4 << 20,		/* bytes queued per direction */
	DP_READ_MAX = 256 << 10,	/* one read(2) */
	DP_IOV_MAX = 64,		/* chunks per sendmsg(2) */
	DP_ACCEPT_BATCH = 64,		/* accepts per wakeup per listener */
	DP_EVENTS = 256,
	DP_BACKLOG = 4096,		/* the kernel caps it at somaxconn */
	DP_DELAY_MAX = 600000,		/* ms */
	DP_EX_USAGE = 64
};

static const char usage_line[] =
    "usage: delayproxy --delay-ms MS --map LISTEN_PORT:TARGET_PORT "
    "[--map ...]\n"
    "                  [--map-file FILE] [--listen-addr 127.0.0.X] "
    "[--ready-fd N]\n";

enum watch_kind {
	W_LISTENER,
	W_CLIENT,
	W_TARGET,
	W_TIMER,
	W_SIGNAL
};

/* Everything in the epoll set; epoll_event.data.ptr points at one. */
struct watch {
	enum watch_kind	 kind;
	int		 fd;
	uint32_t	 mask;		/* registered; 0: not in epoll */
	void		*owner;		/* struct conn or struct listener */
};

struct dir;

struct chunk {
	struct chunk	*next;		/* in its direction's queue */
	struct chunk	*tprev, *tnext;	/* in the timer list until ripe */
	struct dir	*dir;
	uint64_t	 deadline;	/* CLOCK_MONOTONIC, ns */
	size_t		 len, off;
	int		 ripe;		/* deadline passed: may be written */
	int		 eof;		/* no bytes: shut dst for writing */
	unsigned char	 data[];
};

/* One direction of a connection: bytes read from src, written to dst. */
struct dir {
	struct conn	*conn;
	struct watch	*src, *dst;
	struct chunk	*head, *tail;
	size_t		 queued;	/* bytes read, not yet written */
	int		 eof;		/* src read to EOF */
	int		 shut;		/* that EOF passed on to dst */
	int		 blocked;	/* dst said EAGAIN: wait for EPOLLOUT */
	int		 in_flush;	/* on the proxy's flush list */
	struct dir	*flush_next;
};

struct conn {
	struct watch	 client, target;
	struct dir	 up;		/* client -> target */
	struct dir	 down;		/* target -> client */
	uint16_t	 tport;
	int		 connecting;
	int		 dead;		/* closed, freed at end of turn */
	struct conn	*prev, *next;	/* live connections */
	struct conn	*dead_next;
};

struct listener {
	struct watch	 w;
	uint16_t	 lport, tport;
};

struct map {
	uint16_t	 lport, tport;
};

struct proxy {
	int		 ep;
	struct watch	 timer, sig;
	uint64_t	 half_delay;	/* ns, each direction */
	uint64_t	 armed;		/* the timerfd's deadline */
	/*
	 * Unripe chunks of every connection.  The delay is the same for all
	 * and the clock is monotonic, so appending keeps it sorted by
	 * deadline: the head is always the next to ripen.
	 */
	struct chunk	*thead, *ttail;
	struct dir	*flush;		/* directions with newly ripe chunks */
	struct conn	*conns;
	struct conn	*dead;
	struct listener	*ls;
	size_t		 nls;
	unsigned char	*buf;		/* DP_READ_MAX bytes for read(2) */
	/* Kept open to accept-and-drop a connection when out of fds. */
	int		 spare;
	int		 stop;
};

static void	 conn_close(struct proxy *, struct conn *);
static void	 conn_update(struct proxy *, struct conn *);

static void
vmsg(int with_errno, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void
vmsg(int with_errno, const char *fmt, va_list ap)
{
	int saved = errno;

	fputs("delayproxy: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (with_errno)
		fprintf(stderr, ": %s", strerror(saved));
	fputc('\n', stderr);
}

static void
fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A system call failed: the message, strerror(errno), exit 1. */
static void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(1, fmt, ap);
	va_end(ap);
	exit(1);
}

static void
warnsys(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Trouble with one connection: the proxy goes on serving the others. */
static void
warnsys(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(1, fmt, ap);
	va_end(ap);
}

static void
usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
usage(const char *fmt, ...)
{
	va_list ap;

	if (fmt != NULL) {
		va_start(ap, fmt);
		vmsg(0, fmt, ap);
		va_end(ap);
	}
	fputs(usage_line, stderr);
	exit(DP_EX_USAGE);
}

static void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n)) == NULL) {
		fputs("delayproxy: out of memory\n", stderr);
		abort();
	}
	return p;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	/* Cannot fail with a valid clock id and pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Makes the epoll registration of w match mask; 0 takes it out of the set,
 * since EPOLLHUP is reported whatever the mask and would spin. */
static int
watch_set(struct proxy *p, struct watch *w, uint32_t mask)
{
	struct epoll_event ev;
	int op;

	if (mask == w->mask)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.events = mask;
	ev.data.ptr = w;
	if (mask == 0)
		op = EPOLL_CTL_DEL;
	else if (w->mask == 0)
		op = EPOLL_CTL_ADD;
	else
		op = EPOLL_CTL_MOD;
	if (epoll_ctl(p->ep, op, w->fd, &ev) == -1)
		return -1;
	w->mask = mask;
	return 0;
}

static void
timer_append(struct proxy *p, struct chunk *ch)
{
	ch->tnext = NULL;
	ch->tprev = p->ttail;
	if (p->ttail != NULL)
		p->ttail->tnext = ch;
	else
		p->thead = ch;
	p->ttail = ch;
}

static void
timer_unlink(struct proxy *p, struct chunk *ch)
{
	if (ch->tprev != NULL)
		ch->tprev->tnext = ch->tnext;
	else
		p->thead = ch->tnext;
	if (ch->tnext != NULL)
		ch->tnext->tprev = ch->tprev;
	else
		p->ttail = ch->tprev;
	ch->tprev = ch->tnext = NULL;
}

/* Arms the timerfd for the earliest unripe chunk, if not armed for it. */
static void
timer_arm(struct proxy *p)
{
	struct itimerspec its;
	uint64_t t;

	if (p->thead == NULL || p->thead->deadline == p->armed)
		return;
	t = p->thead->deadline;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(t / 1000000000u);
	its.it_value.tv_nsec = (long)(t % 1000000000u);
	if (timerfd_settime(p->timer.fd, TFD_TIMER_ABSTIME, &its, NULL) == -1)
		fatal("timerfd_settime");
	p->armed = t;
}

/* Queues len bytes (or, with len 0 and eof, the EOF) read at now. */
static void
dir_push(struct proxy *p, struct dir *d, const unsigned char *data,
    size_t len, int eof, uint64_t now)
{
	struct chunk *ch;

	ch = xmalloc(sizeof(*ch) + len);
	ch->next = NULL;
	ch->tprev = ch->tnext = NULL;
	ch->dir = d;
	ch->deadline = now + p->half_delay;
	ch->len = len;
	ch->off = 0;
	ch->eof = eof;
	/* The EOF comes with data NULL, which memcpy must not see. */
	if (len > 0)
		memcpy(ch->data, data, len);
	ch->ripe = p->half_delay == 0;
	if (!ch->ripe)
		timer_append(p, ch);
	if (d->tail != NULL)
		d->tail->next = ch;
	else
		d->head = ch;
	d->tail = ch;
	d->queued += len;
}

static void
dir_release(struct proxy *p, struct dir *d)
{
	struct chunk *ch, *next;

	for (ch = d->head; ch != NULL; ch = next) {
		next = ch->next;
		if (!ch->ripe)
			timer_unlink(p, ch);
		free(ch);
	}
	d->head = d->tail = NULL;
	d->queued = 0;
}

/* Drops n written bytes from the head of the queue. */
static void
dir_consume(struct dir *d, size_t n)
{
	struct chunk *ch;
	size_t k;

	while (n > 0 && (ch = d->head) != NULL) {
		k = ch->len - ch->off;
		if (k > n)
			k = n;
		ch->off += k;
		d->queued -= k;
		n -= k;
		if (ch->off == ch->len) {
			d->head = ch->next;
			if (d->head == NULL)
				d->tail = NULL;
			free(ch);
		}
	}
}

static int
dir_reading(const struct dir *d)
{
	if (d->eof || d->queued > DP_QUEUE_MAX)
		return 0;
	/* A connecting target has nothing to read; EPOLLOUT says when. */
	return !(d->src->kind == W_TARGET && d->conn->connecting);
}

/* Resets and broken pipes are how connections end; not worth a line. */
static int
quiet_errno(int e)
{
	return e == ECONNRESET || e == EPIPE || e == ETIMEDOUT;
}

/*
 * Writes the ripe head of d's queue to dst, several chunks per sendmsg,
 * until it is empty or dst is full.  May close the connection.
 */
static void
dir_flush(struct proxy *p, struct dir *d)
{
	struct conn *c = d->conn;
	struct iovec iov[DP_IOV_MAX];
	struct msghdr msg;
	struct chunk *ch;
	size_t k, want;
	ssize_t n;

	while (!c->connecting && !d->blocked && (ch = d->head) != NULL &&
	    ch->ripe) {
		if (ch->eof) {
			/* The EOF is always the last chunk. */
			if (shutdown(d->dst->fd, SHUT_WR) == -1 &&
			    errno != ENOTCONN) {
				if (!quiet_errno(errno))
					warnsys("shutdown");
				conn_close(p, c);
				return;
			}
			d->head = d->tail = NULL;
			free(ch);
			d->shut = 1;
			break;
		}
		k = 0;
		want = 0;
		for (; ch != NULL && ch->ripe && !ch->eof && k < DP_IOV_MAX;
		    ch = ch->next) {
			iov[k].iov_base = ch->data + ch->off;
			iov[k].iov_len = ch->len - ch->off;
			want += iov[k].iov_len;
			k++;
		}
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = k;
		n = sendmsg(d->dst->fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				d->blocked = 1;
				break;
			}
			if (!quiet_errno(errno))
				warnsys("send");
			conn_close(p, c);
			return;
		}
		dir_consume(d, (size_t)n);
		/* A short write means the socket buffer is full: the next
		 * try would only say EAGAIN. */
		if ((size_t)n < want) {
			d->blocked = 1;
			break;
		}
	}
	if (c->up.shut && c->down.shut) {
		conn_close(p, c);
		return;
	}
	conn_update(p, c);
}

/* One read(2) from d's source, queued for later (or, without a delay,
 * sent at once when nothing is ahead of it).  May close the connection. */
static void
dir_read(struct proxy *p, struct dir *d, uint64_t now)
{
	struct conn *c = d->conn;
	ssize_t n, sent = 0;

	n = read(d->src->fd, p->buf, DP_READ_MAX);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		if (!quiet_errno(errno))
			warnsys("read");
		conn_close(p, c);
		return;
	}
	if (n == 0) {
		d->eof = 1;
		dir_push(p, d, NULL, 0, 1, now);
	} else {
		if (p->half_delay == 0 && d->head == NULL && !d->blocked &&
		    !c->connecting) {
			sent = send(d->dst->fd, p->buf, (size_t)n,
			    MSG_NOSIGNAL);
			if (sent == -1) {
				if (errno != EAGAIN && errno != EWOULDBLOCK &&
				    errno != EINTR) {
					if (!quiet_errno(errno))
						warnsys("send");
					conn_close(p, c);
					return;
				}
				sent = 0;
			}
			if (sent < n)
				d->blocked = 1;
		}
		if (sent < n)
			dir_push(p, d, p->buf + sent, (size_t)(n - sent), 0,
			    now);
	}
	if (p->half_delay == 0)
		dir_flush(p, d);
	else
		conn_update(p, c);
}

/* Registers for what each side waits for now; failing that, closes. */
static void
conn_update(struct proxy *p, struct conn *c)
{
	uint32_t cm = 0, tm = 0;

	if (dir_reading(&c->up))
		cm |= EPOLLIN;
	if (c->down.blocked)
		cm |= EPOLLOUT;
	if (c->connecting)
		tm = EPOLLOUT;
	else {
		if (dir_reading(&c->down))
			tm |= EPOLLIN;
		if (c->up.blocked)
			tm |= EPOLLOUT;
	}
	if (watch_set(p, &c->client, cm) == -1 ||
	    watch_set(p, &c->target, tm) == -1) {
		warnsys("epoll_ctl");
		conn_close(p, c);
	}
}

/*
 * Closes both sockets and drops what is queued.  The memory stays until
 * the end of the loop's turn: events already fetched may point at it.
 */
static void
conn_close(struct proxy *p, struct conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	close(c->client.fd);
	close(c->target.fd);
	c->client.fd = c->target.fd = -1;
	dir_release(p, &c->up);
	dir_release(p, &c->down);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->dead_next = p->dead;
	p->dead = c;
}

static void
dir_init(struct dir *d, struct conn *c, struct watch *src, struct watch *dst)
{
	memset(d, 0, sizeof(*d));
	d->conn = c;
	d->src = src;
	d->dst = dst;
}

static void
set_nodelay(int fd)
{
	int one = 1;

	/* Only a latency tweak: a failure changes timing, not behaviour. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Starts forwarding accepted socket cfd to l's target; takes cfd. */
static void
conn_open(struct proxy *p, struct listener *l, int cfd)
{
	struct sockaddr_in sin;
	struct conn *c;
	int tfd, connecting = 0;

	set_nodelay(cfd);
	tfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (tfd == -1) {
		warnsys("socket for port %u", (unsigned)l->tport);
		close(cfd);
		return;
	}
	set_nodelay(tfd);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(l->tport);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(tfd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		if (errno != EINPROGRESS) {
			warnsys("connect 127.0.0.1:%u", (unsigned)l->tport);
			close(tfd);
			close(cfd);
			return;
		}
		connecting = 1;
	}
	c = xmalloc(sizeof(*c));
	memset(c, 0, sizeof(*c));
	c->client.kind = W_CLIENT;
	c->client.fd = cfd;
	c->client.owner = c;
	c->target.kind = W_TARGET;
	c->target.fd = tfd;
	c->target.owner = c;
	dir_init(&c->up, c, &c->client, &c->target);
	dir_init(&c->down, c, &c->target, &c->client);
	c->tport = l->tport;
	c->connecting = connecting;
	c->next = p->conns;
	if (p->conns != NULL)
		p->conns->prev = c;
	p->conns = c;
	conn_update(p, c);
}

/* The target's non-blocking connect finished, one way or the other. */
static void
conn_connected(struct proxy *p, struct conn *c)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(c->target.fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err != 0) {
		errno = err;
		warnsys("connect 127.0.0.1:%u", (unsigned)c->tport);
		conn_close(p, c);
		return;
	}
	c->connecting = 0;
	/* What the client sent meanwhile may already be ripe. */
	dir_flush(p, &c->up);
}

static void
conn_event(struct proxy *p, struct watch *w, uint32_t ev, uint64_t now)
{
	struct conn *c = w->owner;
	struct dir *in, *out;

	if (c->dead)
		return;
	if (w->kind == W_TARGET && c->connecting) {
		conn_connected(p, c);
		return;
	}
	/* in is read from this socket, out is written to it. */
	in = w->kind == W_CLIENT ? &c->up : &c->down;
	out = w->kind == W_CLIENT ? &c->down : &c->up;
	/* EPOLLERR and EPOLLHUP: the read or write below reports them. */
	if ((ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && out->blocked) {
		out->blocked = 0;
		dir_flush(p, out);
		if (c->dead)
			return;
	}
	if ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) && dir_reading(in))
		dir_read(p, in, now);
}

static void
listener_accept(struct proxy *p, struct listener *l)
{
	int fd, i;

	for (i = 0; i < DP_ACCEPT_BATCH; i++) {
		fd = accept4(l->w.fd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1) {
			conn_open(p, l, fd);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		warnsys("accept on port %u", (unsigned)l->lport);
		if ((errno == EMFILE || errno == ENFILE) && p->spare != -1) {
			/* Otherwise the listener stays readable and the
			 * loop spins: take the connection and drop it. */
			close(p->spare);
			if ((fd = accept(l->w.fd, NULL, NULL)) != -1)
				close(fd);
			p->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
		}
		return;
	}
}

/* Marks what is due ripe and writes it, direction by direction. */
static void
timers_run(struct proxy *p)
{
	struct chunk *ch;
	struct dir *d;
	uint64_t now = now_ns();

	while ((ch = p->thead) != NULL && ch->deadline <= now) {
		timer_unlink(p, ch);
		ch->ripe = 1;
		d = ch->dir;
		if (!d->in_flush) {
			d->in_flush = 1;
			d->flush_next = p->flush;
			p->flush = d;
		}
	}
	while ((d = p->flush) != NULL) {
		p->flush = d->flush_next;
		d->in_flush = 0;
		if (!d->conn->dead)
			dir_flush(p, d);
	}
	timer_arm(p);
}

static void
reap(struct proxy *p)
{
	struct conn *c;

	while ((c = p->dead) != NULL) {
		p->dead = c->dead_next;
		free(c);
	}
}

static void
proxy_loop(struct proxy *p)
{
	struct epoll_event evs[DP_EVENTS];
	struct signalfd_siginfo si;
	struct watch *w;
	uint64_t now, ticks;
	int i, n;

	while (!p->stop) {
		n = epoll_wait(p->ep, evs, DP_EVENTS, -1);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fatal("epoll_wait");
		}
		/* Bytes read in this turn count as read at the wakeup. */
		now = now_ns();
		for (i = 0; i < n; i++) {
			w = evs[i].data.ptr;
			switch (w->kind) {
			case W_LISTENER:
				listener_accept(p, w->owner);
				break;
			case W_CLIENT:
			case W_TARGET:
				conn_event(p, w, evs[i].events, now);
				break;
			case W_TIMER:
				/* Only clears the readiness; timers_run
				 * looks at the clock itself. */
				(void)read(w->fd, &ticks, sizeof(ticks));
				break;
			case W_SIGNAL:
				if (read(w->fd, &si, sizeof(si)) > 0)
					p->stop = 1;
				break;
			}
		}
		timers_run(p);
		reap(p);
	}
}

static void
proxy_release(struct proxy *p)
{
	size_t i;

	while (p->conns != NULL)
		conn_close(p, p->conns);
	reap(p);
	for (i = 0; i < p->nls; i++)
		close(p->ls[i].w.fd);
	free(p->ls);
	free(p->buf);
	close(p->timer.fd);
	close(p->sig.fd);
	close(p->ep);
	if (p->spare != -1)
		close(p->spare);
}

/*
 * Parses a decimal number in [0, max] at s; *end gets the first byte after
 * it.  Signs, blanks and empty strings are refused (strtoul takes them).
 */
static int
parse_num(const char *s, const char **end, unsigned long max,
    unsigned long *out)
{
	char *e;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno != 0 || v > max)
		return -1;
	*end = e;
	*out = v;
	return 0;
}

static void
maps_add(struct map **maps, size_t *n, size_t *cap, unsigned long lport,
    unsigned long tport)
{
	struct map *m;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if ((m = realloc(*maps, *cap * sizeof(**maps))) == NULL) {
			fputs("delayproxy: out of memory\n", stderr);
			abort();
		}
		*maps = m;
	}
	(*maps)[*n].lport = (uint16_t)lport;
	(*maps)[*n].tport = (uint16_t)tport;
	(*n)++;
}

/* "LISTEN_PORT:TARGET_PORT", both 1-65535; 0 or -1. */
static int
parse_map(const char *s, unsigned long *lport, unsigned long *tport)
{
	const char *e;

	if (parse_num(s, &e, 65535, lport) == -1 || *e != ':' ||
	    parse_num(e + 1, &e, 65535, tport) == -1 || *e != '\0' ||
	    *lport == 0 || *tport == 0)
		return -1;
	return 0;
}

static int
is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* Lines "LISTEN_PORT TARGET_PORT"; '#' starts a comment. */
static void
maps_load(struct map **maps, size_t *n, size_t *cap, const char *path)
{
	FILE *f;
	char *line = NULL, *hash;
	const char *s, *e;
	size_t linecap = 0;
	unsigned long lport, tport, lineno = 0;

	if ((f = fopen(path, "r")) == NULL)
		fatal("open %s", path);
	while (getline(&line, &linecap, f) != -1) {
		lineno++;
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		for (s = line; is_blank(*s); s++)
			;
		if (*s == '\0')
			continue;
		if (parse_num(s, &e, 65535, &lport) == -1 || !is_blank(*e))
			goto bad;
		for (s = e; is_blank(*s); s++)
			;
		if (parse_num(s, &e, 65535, &tport) == -1)
			goto bad;
		for (s = e; is_blank(*s); s++)
			;
		if (*s != '\0' || lport == 0 || tport == 0)
			goto bad;
		maps_add(maps, n, cap, lport, tport);
	}
	if (ferror(f))
		fatal("read %s", path);
	free(line);
	fclose(f);
	return;
bad:
	free(line);
	fclose(f);
	usage("%s:%lu: expected 'LISTEN_PORT TARGET_PORT' (1-65535)", path,
	    lineno);
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	/* Fails when the hard limit is unlimited (above fs.nr_open); the
	 * proxy still works, with fewer connections. */
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		warnsys("warning: raise RLIMIT_NOFILE");
}

/* SIGTERM and SIGINT come through a signalfd, so no handler and no
 * global flag; SIGPIPE is ignored for the --ready-fd write. */
static void
signals_init(struct proxy *p)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPIPE, &sa, NULL) == -1)
		fatal("sigaction");
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
	p->sig.kind = W_SIGNAL;
	p->sig.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (p->sig.fd == -1)
		fatal("signalfd");
	if (watch_set(p, &p->sig, EPOLLIN) == -1)
		fatal("epoll_ctl");
}

static void
listeners_open(struct proxy *p, const struct map *maps, size_t n,
    struct in_addr addr, const char *addrstr)
{
	struct sockaddr_in sin;
	struct listener *l;
	size_t i;
	int fd, one = 1;

	p->ls = xmalloc(n * sizeof(*p->ls));
	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (fd == -1)
			fatal("socket for port %u", (unsigned)maps[i].lport);
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
		    sizeof(one)) == -1)
			fatal("setsockopt SO_REUSEADDR");
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(maps[i].lport);
		sin.sin_addr = addr;
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			fatal("bind %s:%u", addrstr, (unsigned)maps[i].lport);
		if (listen(fd, DP_BACKLOG) == -1)
			fatal("listen %s:%u", addrstr,
			    (unsigned)maps[i].lport);
		l = &p->ls[p->nls++];
		memset(l, 0, sizeof(*l));
		l->w.kind = W_LISTENER;
		l->w.fd = fd;
		l->w.owner = l;
		l->lport = maps[i].lport;
		l->tport = maps[i].tport;
		if (watch_set(p, &l->w, EPOLLIN) == -1)
			fatal("epoll_ctl");
	}
}

/* "ready\n" with write(2): no stdio buffer to flush. */
static void
ready_write(int fd)
{
	static const char msg[] = "ready\n";
	size_t off = 0;
	ssize_t n;

	while (off < sizeof(msg) - 1) {
		n = write(fd, msg + off, sizeof(msg) - 1 - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fatal("write ready-fd %d", fd);
		}
		off += (size_t)n;
	}
	/* A caller reading a pipe to EOF is not kept waiting. */
	if (fd > 2)
		close(fd);
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "map", required_argument, NULL, 'm' },
		{ "map-file", required_argument, NULL, 'f' },
		{ "listen-addr", required_argument, NULL, 'a' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct proxy p;
	struct map *maps = NULL;
	size_t nmaps = 0, capmaps = 0;
	struct in_addr addr;
	const char *addrstr = "127.0.0.1", *e;
	unsigned long delay = 0, v, lport, tport;
	int ch, have_delay = 0, ready_fd = 1;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			if (parse_num(optarg, &e, DP_DELAY_MAX, &delay) ==
			    -1 || *e != '\0')
				usage("--delay-ms '%s': not a number of "
				    "milliseconds 0-%d", optarg,
				    DP_DELAY_MAX);
			have_delay = 1;
			break;
		case 'm':
			if (parse_map(optarg, &lport, &tport) == -1)
				usage("--map '%s': expected "
				    "LISTEN_PORT:TARGET_PORT (1-65535)",
				    optarg);
			maps_add(&maps, &nmaps, &capmaps, lport, tport);
			break;
		case 'f':
			maps_load(&maps, &nmaps, &capmaps, optarg);
			break;
		case 'a':
			addrstr = optarg;
			break;
		case 'r':
			if (parse_num(optarg, &e, 65535, &v) == -1 ||
			    *e != '\0')
				usage("--ready-fd '%s': not a file "
				    "descriptor number", optarg);
			ready_fd = (int)v;
			break;
		case 'h':
			fputs(usage_line, stdout);
			exit(0);
		default:
			usage(NULL);
		}
	}
	if (optind != argc)
		usage("unexpected argument '%s'", argv[optind]);
	if (!have_delay)
		usage("--delay-ms is required");
	if (nmaps == 0)
		usage("no --map or --map-file given");
	if (inet_pton(AF_INET, addrstr, &addr) != 1)
		usage("--listen-addr '%s': not an IPv4 address", addrstr);
	if ((ntohl(addr.s_addr) >> 24) != 127)
		usage("--listen-addr '%s': not in 127.0.0.0/8", addrstr);
	/* Before any fd of ours can take its number. */
	if (fcntl(ready_fd, F_GETFD) == -1)
		fatal("ready-fd %d", ready_fd);

	raise_nofile();
	memset(&p, 0, sizeof(p));
	p.half_delay = (uint64_t)delay * 1000000u / 2;
	p.buf = xmalloc(DP_READ_MAX);
	if ((p.ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		fatal("epoll_create1");
	signals_init(&p);
	p.timer.kind = W_TIMER;
	p.timer.fd = timerfd_create(CLOCK_MONOTONIC,
	    TFD_NONBLOCK | TFD_CLOEXEC);
	if (p.timer.fd == -1)
		fatal("timerfd_create");
	if (watch_set(&p, &p.timer, EPOLLIN) == -1)
		fatal("epoll_ctl");
	p.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	listeners_open(&p, maps, nmaps, addr, addrstr);
	free(maps);
	ready_write(ready_fd);

	proxy_loop(&p);
	proxy_release(&p);
	return 0;
}
