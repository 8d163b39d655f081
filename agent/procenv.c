/*
 * procenv.c - running workers' environments from /proc (see procenv.h).
 *
 * Sources, all from proc(5): /proc/PID/cmdline (argv, NUL-separated),
 * exe (a link to the program; reading it needs the right to ptrace-read
 * the process), stat (ppid is field 4, starttime field 22 in clock ticks
 * since boot; comm, field 2, may hold spaces and ')' so fields are counted
 * from the last ')'), status ("Uid:" real first), cgroup, environ (the
 * environment block execve() placed on the stack: ptrace-read rights
 * again), and /proc/stat's btime (boot time, Unix seconds).
 *
 * Cost: a scan runs on every plan and drift, over every process of the
 * host, so a process that cannot match costs one readlinkat() of its exe
 * (a Python interpreter's or not), not a read of its command line; only a
 * process whose exe cannot be read (another user's) needs its argv[0].
 * On procfs, an exe that is absent (ENOENT, not EACCES) means the process
 * has no memory map, a kernel thread or a zombie, with an empty command
 * line: it is passed over at once (a test's fake tree reads argv[0]).
 * /proc/stat is read once a process has matched.
 */
#include "procenv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "account.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "pykind.h"

static const char *const default_patterns[] = {
	"vllm", "sglang", "torch.distributed",
};

/* A user name per uid, so /etc/passwd is read once per user. */
struct usercache {
	long	 uid;
	char	*name;
};

/*
 * Reads at most cap bytes of the file rel (relative to dfd, the proc
 * root) into b (emptied first); *truncated (may be NULL) is set when
 * there was more.  0, or -1 with errno set.
 */
static int
read_proc(struct buf *b, int dfd, const char *rel, size_t cap,
    int *truncated)
{
	ssize_t r;
	int fd, rc = -1, saved = 0;

	buf_reset(b);
	if (truncated != NULL)
		*truncated = 0;
	if ((fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		saved = errno;
		goto out;
	}
	for (;;) {
		/* One byte past cap tells a longer file from one of cap. */
		if (buf_grow(b, 4096) != 0) {
			saved = ENOMEM;
			goto out;
		}
		r = read(fd, b->data + b->len, b->alloc - b->len - 1);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			saved = errno;
			goto out;
		}
		if (r == 0)
			break;
		b->len += (size_t)r;
		b->data[b->len] = '\0';
		if (b->len > cap) {
			buf_truncate(b, cap);
			if (truncated != NULL)
				*truncated = 1;
			break;
		}
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	errno = saved;
	return rc;
}

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC	0x9fa0	/* linux/magic.h */
#endif

/* Why a process's file could not be read: ENOENT means it exited. */
static const char *
proc_reason(int e)
{
	return err_reason(e == ENOENT ? ESRCH : e);
}

/* "PID/name" in rel (NAME_MAX + 16 bytes: a d_name and a short name). */
static const char *
proc_rel(char *rel, size_t size, const char *pid, const char *name)
{
	snprintf(rel, size, "%s/%s", pid, name);
	return rel;
}

static int
is_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The file name of path, " (deleted)" (a replaced program) dropped. */
static char *
base_name(const char *path, size_t len)
{
	static const char deleted[] = " (deleted)";
	const char *s;

	if (len >= sizeof(deleted) - 1 && memcmp(path + len -
	    (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0)
		len -= sizeof(deleted) - 1;
	for (s = path + len; s > path && s[-1] != '/'; s--)
		;
	return xstrndup(s, len - (size_t)(s - path));
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c;
}

/* 1 when needle occurs in the len bytes at hay, ASCII case ignored. */
static int
contains_nocase(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle), i, j;

	for (i = 0; n <= len && i <= len - n; i++) {
		for (j = 0; j < n && lower(hay[i + j]) == lower(needle[j]); j++)
			;
		if (j == n)
			return 1;
	}
	return 0;
}

/* ppid (field 4) and starttime (field 22) from a stat line. */
static int
parse_stat(const char *s, size_t len, long *ppid,
    unsigned long long *start)
{
	const char *p = NULL, *q;
	char *end;
	int field;

	for (q = s; q < s + len; q++)
		if (*q == ')')
			p = q;
	if (p == NULL)
		return -1;
	/* p + 1 is " S PPID ...": field 3 onwards, one space each. */
	for (field = 2, q = p + 1; field < 22; field++) {
		if (q >= s + len || *q != ' ')
			return -1;
		q++;
		if (field + 1 == 4 || field + 1 == 22) {
			errno = 0;
			if (field + 1 == 4)
				*ppid = strtol(q, &end, 10);
			else
				*start = strtoull(q, &end, 10);
			if (errno != 0 || end == q || end > s + len)
				return -1;
		}
		while (q < s + len && *q != ' ')
			q++;
	}
	return 0;
}

/* The real uid from status's "Uid:\tREAL\tEFF\tSAVED\tFS" line. */
static long
parse_uid(const char *s)
{
	const char *p;
	char *end;
	long v;

	for (p = s; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, "Uid:", 4) == 0) {
			errno = 0;
			v = strtol(p + 4, &end, 10);
			return errno == 0 && end != p + 4 && v >= 0 ? v : -1;
		}
	return -1;
}

/*
 * The unit from a cgroup file: the last path component that ends in
 * ".service" on the unified ("0::") line, else on any other line.
 */
static char *
parse_unit(const char *s)
{
	const char *line, *eol, *path, *c, *best = NULL, *bend = NULL;
	int pass;

	for (pass = 0; pass < 2 && best == NULL; pass++)
		for (line = s; *line != '\0'; line = *eol ? eol + 1 : eol) {
			eol = strchr(line, '\n');
			if (eol == NULL)
				eol = line + strlen(line);
			if ((pass == 0) != (strncmp(line, "0::", 3) == 0))
				continue;
			if ((path = memchr(line, ':', (size_t)(eol - line))) ==
			    NULL || (path = memchr(path + 1, ':',
			    (size_t)(eol - path - 1))) == NULL)
				continue;
			for (c = ++path; c <= eol; c++) {
				if (c < eol && *c != '/')
					continue;
				if (c - path > 8 && memcmp(c - 8, ".service",
				    8) == 0) {
					best = path;
					bend = c;
				}
				path = c + 1;
			}
		}
	return best != NULL ? xstrndup(best, (size_t)(bend - best)) : NULL;
}

/*
 * Looks up each wanted name in an environ block: the first entry wins,
 * as getenv() and Python's os.environ have it.  A cut last entry is not
 * used.
 */
static void
parse_environ(struct procenv_proc *pr, const struct procenv *pe,
    const char *s, size_t len)
{
	const char *p, *end, *eq;
	size_t i, n;

	if (len > 0 && (s[0] == '\0' || (eq = memchr(s, '=', strnlen(s,
	    len))) == NULL || eq == s))
		pr->env_clobbered = 1;
	for (p = s; p < s + len; p = end + 1) {
		if ((end = memchr(p, '\0', (size_t)(s + len - p))) == NULL) {
			if (pr->env_truncated)
				break;
			end = s + len;	/* no final NUL: still an entry */
		}
		if ((eq = memchr(p, '=', (size_t)(end - p))) == NULL)
			continue;
		n = (size_t)(eq - p);
		for (i = 0; i < pe->nnames; i++)
			if (pr->values[i] == NULL &&
			    strlen(pe->names[i]) == n &&
			    memcmp(pe->names[i], p, n) == 0)
				pr->values[i] = xstrndup(eq + 1,
				    (size_t)(end - eq - 1));
	}
}

static const char *
user_name(struct usercache **cache, size_t *n, size_t *alloc, long uid)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*cache)[i].uid == uid)
			return (*cache)[i].name;
	ENVCTL_GROW(*cache, *n + 1, *alloc);
	(*cache)[*n].uid = uid;
	(*cache)[*n].name = account_user((uid_t)uid);
	return (*cache)[(*n)++].name;
}

/* Boot time from the proc root's "stat" file's "btime" line, or -1. */
static long long
boot_time(int dfd, struct buf *tmp)
{
	const char *p;

	if (read_proc(tmp, dfd, "stat", ENVCTL_PROCENV_FILE_MAX, NULL) != 0)
		return -1;
	for (p = tmp->data; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 :
	    NULL)
		if (strncmp(p, "btime ", 6) == 0)
			return strtoll(p + 6, NULL, 10);
	return -1;
}

/*
 * The details of a matched process.  *btime is the boot time, read on
 * the first match only (BTIME_UNREAD before): a scan that matches nothing
 * does not make the kernel format the whole of /proc/stat.
 */
#define BTIME_UNREAD	(-2)

static void
fill(struct procenv_proc *pr, struct procenv *pe, int dfd, const char *pid,
    long long *btime, long ticks, struct buf *tmp)
{
	unsigned long long start = 0;
	char rel[NAME_MAX + 16];
	int trunc;

	pr->values = xcalloc(pe->nnames, sizeof(*pr->values));
	pr->ppid = -1;
	pr->uid = -1;
	pr->started = -1;
	if (read_proc(tmp, dfd, proc_rel(rel, sizeof(rel), pid, "stat"),
	    ENVCTL_PROCENV_FILE_MAX, NULL) == 0 && parse_stat(tmp->data,
	    tmp->len, &pr->ppid, &start) == 0) {
		if (*btime == BTIME_UNREAD)
			*btime = boot_time(dfd, tmp);
		if (*btime >= 0 && ticks > 0)
			pr->started = *btime + (long long)(start /
			    (unsigned long)ticks);
	}
	if (read_proc(tmp, dfd, proc_rel(rel, sizeof(rel), pid, "status"),
	    ENVCTL_PROCENV_FILE_MAX, NULL) == 0)
		pr->uid = parse_uid(tmp->data);
	if (read_proc(tmp, dfd, proc_rel(rel, sizeof(rel), pid, "cgroup"),
	    ENVCTL_PROCENV_FILE_MAX, NULL) == 0)
		pr->unit = parse_unit(tmp->data);
	if (read_proc(tmp, dfd, proc_rel(rel, sizeof(rel), pid, "environ"),
	    ENVCTL_PROCENV_ENVIRON_MAX, &trunc) != 0) {
		pr->error = xstrdup(proc_reason(errno));
		pe->unreadable++;
		return;
	}
	pr->env_truncated = trunc;
	parse_environ(pr, pe, tmp->data, tmp->len);
}

static int
by_pid(const void *a, const void *b)
{
	long x = ((const struct procenv_proc *)a)->pid;
	long y = ((const struct procenv_proc *)b)->pid;

	return x < y ? -1 : x > y;
}

/* [A-Za-z_][A-Za-z0-9_]*: also what makes a JSON key safe. */
static int
name_valid(const char *s)
{
	if (*s >= '0' && *s <= '9')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int
check_list(char *const *list, size_t n, size_t max, const char *what,
    int names, struct err *err)
{
	size_t i;

	if (n > max)
		return err_set(err, ENVCTL_EINVALID, "processes: more than "
		    "%zu %ss", max, what);
	for (i = 0; i < n; i++) {
		if (list[i] == NULL || list[i][0] == '\0')
			return err_set(err, ENVCTL_EINVALID, "processes: "
			    "%s %zu is empty", what, i + 1);
		if (names && !name_valid(list[i]))
			return err_set(err, ENVCTL_EINVALID, "processes: "
			    "'%s' is not a variable name", list[i]);
	}
	return 0;
}

int
procenv_scan(struct procenv *pe, const char *proc_root,
    char *const *patterns, size_t npatterns, char *const *names,
    size_t nnames, struct err *err)
{
	struct buf cmd = ENVCTL_BUF_INIT, tmp = ENVCTL_BUF_INIT;
	struct usercache *users = NULL;
	size_t nusers = 0, ausers = 0, i;
	struct procenv_proc *pr;
	struct dirent *de;
	DIR *d = NULL;
	char *exe = NULL, *exe_error = NULL, *base = NULL, *a0;
	char rel[NAME_MAX + 16], link[4096];
	long long btime = BTIME_UNREAD;
	long ticks = sysconf(_SC_CLK_TCK);
	ssize_t r;
	struct statfs fs;
	int rc, hit, dfd, exe_errno, procfs;

	if ((rc = check_list(patterns, npatterns, ENVCTL_PROCENV_PATTERNS_MAX,
	    "pattern", 0, err)) != 0 || (rc = check_list(names, nnames,
	    ENVCTL_PROCENV_NAMES_MAX, "name", 1, err)) != 0)
		goto out;
	pe->names = xcalloc(nnames + 1, sizeof(*pe->names));
	for (i = 0; i < nnames; i++)
		if (strcmp(names[i], "NCCL_CONF_FILE") != 0)
			pe->names[pe->nnames++] = xstrdup(names[i]);
	pe->names[pe->nnames++] = xstrdup("NCCL_CONF_FILE");
	if ((d = opendir(proc_root)) == NULL) {
		rc = err_errno(err, ENVCTL_ESYS, errno, "cannot list '%s'",
		    proc_root);
		goto out;
	}
	dfd = dirfd(d);
	procfs = fstatfs(dfd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
	while ((de = readdir(d)) != NULL) {
		if (!is_digits(de->d_name))
			continue;
		if (pe->scanned == ENVCTL_PROCENV_SCAN_MAX) {
			pe->truncated = 1;
			break;
		}
		pe->scanned++;
		/*
		 * The program first, one system call: a process whose exe
		 * can be read and is not a Python interpreter's cannot
		 * match, so its command line (which the kernel copies out of
		 * the process's memory) is not read.  When exe cannot be read
		 * (another user's process, a kernel thread), argv[0] decides
		 * below, as before.
		 */
		exe_errno = 0;
		if ((r = readlinkat(dfd, proc_rel(rel, sizeof(rel),
		    de->d_name, "exe"), link, sizeof(link) - 1)) >= 0) {
			link[r] = '\0';
			base = base_name(link, (size_t)r);
			if (!pykind_python_name(base)) {
				free(base);
				base = NULL;
				continue;
			}
		} else if ((exe_errno = errno) == ENOENT && procfs)
			/*
			 * On procfs an absent exe means no memory map: a
			 * kernel thread or a zombie, whose command line is
			 * empty, or a process gone.
			 */
			continue;
		/* Gone, a kernel thread or a zombie: nothing to see. */
		if (read_proc(&cmd, dfd, proc_rel(rel, sizeof(rel),
		    de->d_name, "cmdline"), ENVCTL_PROCENV_CMDLINE_MAX,
		    NULL) != 0 || cmd.len == 0) {
			free(base);
			base = NULL;
			continue;
		}
		a0 = xstrdup(cmd.data);	/* argv[0] ends at the first NUL */
		for (i = 0; i < cmd.len; i++)
			if (cmd.data[i] == '\0')
				cmd.data[i] = ' ';
		while (cmd.len > 0 && cmd.data[cmd.len - 1] == ' ')
			cmd.data[--cmd.len] = '\0';
		hit = 0;
		for (i = 0; i < (npatterns ? npatterns : 3) && !hit; i++)
			hit = contains_nocase(cmd.data, cmd.len, npatterns ?
			    patterns[i] : default_patterns[i]);
		if (!hit) {
			free(a0);
			free(base);
			base = NULL;
			continue;
		}
		if (base != NULL)
			exe = xstrdup(link);
		else {
			exe_error = xstrdup(proc_reason(exe_errno));
			base = base_name(a0, strlen(a0));
		}
		free(a0);
		if (!pykind_python_name(base) && exe == NULL)
			pe->unidentified++;
		if (pykind_python_name(base)) {
			pe->matched++;
			if (pe->nprocs == ENVCTL_PROCENV_MATCH_MAX)
				pe->truncated = 1;
			else {
				ENVCTL_GROW(pe->procs, pe->nprocs + 1,
				    pe->aprocs);
				pr = &pe->procs[pe->nprocs++];
				memset(pr, 0, sizeof(*pr));
				pr->pid = strtol(de->d_name, NULL, 10);
				pr->exe = exe;
				pr->exe_error = exe_error;
				exe = exe_error = NULL;
				pr->cmdline = xstrndup(cmd.data,
				    ENVCTL_PROCENV_CMDLINE_SHOW);
				fill(pr, pe, dfd, de->d_name, &btime, ticks,
				    &tmp);
				if (pr->uid >= 0)
					pr->user = xstrdup(user_name(&users,
					    &nusers, &ausers, pr->uid));
			}
		}
		free(exe);
		free(exe_error);
		free(base);
		exe = exe_error = base = NULL;
	}
	if (pe->nprocs > 1)
		qsort(pe->procs, pe->nprocs, sizeof(*pe->procs), by_pid);
	rc = 0;
out:
	if (d != NULL)
		closedir(d);
	for (i = 0; i < nusers; i++)
		free(users[i].name);
	free(users);
	buf_release(&cmd);
	buf_release(&tmp);
	return rc;
}

static json_t *
int_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

json_t *
procenv_json(const struct procenv *pe)
{
	const struct procenv_proc *pr;
	json_t *o, *a, *p, *env;
	size_t i, j;

	o = json_object();
	json_object_set_new(o, "scanned", json_integer((json_int_t)
	    pe->scanned));
	json_object_set_new(o, "matched", json_integer((json_int_t)
	    pe->matched));
	json_object_set_new(o, "truncated", json_boolean(pe->truncated));
	json_object_set_new(o, "unreadable", json_integer((json_int_t)
	    pe->unreadable));
	json_object_set_new(o, "unidentified", json_integer((json_int_t)
	    pe->unidentified));
	a = json_array();
	for (i = 0; i < pe->nprocs; i++) {
		pr = &pe->procs[i];
		p = json_object();
		json_object_set_new(p, "pid", json_integer(pr->pid));
		json_object_set_new(p, "ppid", int_or_null(pr->ppid));
		json_object_set_new(p, "uid", int_or_null(pr->uid));
		json_object_set_new(p, "user", proto_text_or_null(pr->user));
		json_object_set_new(p, "exe", proto_text_or_null(pr->exe));
		json_object_set_new(p, "exe_error",
		    proto_text_or_null(pr->exe_error));
		json_object_set_new(p, "cmdline",
		    proto_text_or_null(pr->cmdline));
		json_object_set_new(p, "started", int_or_null(pr->started));
		json_object_set_new(p, "unit", proto_text_or_null(pr->unit));
		env = json_object();
		for (j = 0; pr->error == NULL && j < pe->nnames; j++)
			json_object_set_new(env, pe->names[j],
			    proto_text_or_null(pr->values[j]));
		json_object_set_new(p, "env", env);
		json_object_set_new(p, "env_truncated",
		    json_boolean(pr->env_truncated));
		json_object_set_new(p, "env_clobbered",
		    json_boolean(pr->env_clobbered));
		json_object_set_new(p, "error", proto_text_or_null(pr->error));
		json_array_append_new(a, p);
	}
	json_object_set_new(o, "processes", a);
	return o;
}

void
procenv_release(struct procenv *pe)
{
	struct procenv_proc *pr;
	size_t i, j;

	for (i = 0; i < pe->nprocs; i++) {
		pr = &pe->procs[i];
		for (j = 0; pr->values != NULL && j < pe->nnames; j++)
			free(pr->values[j]);
		free(pr->values);
		free(pr->user);
		free(pr->exe);
		free(pr->exe_error);
		free(pr->cmdline);
		free(pr->unit);
		free(pr->error);
	}
	for (i = 0; i < pe->nnames; i++)
		free(pe->names[i]);
	free(pe->names);
	free(pe->procs);
	memset(pe, 0, sizeof(*pe));
}
