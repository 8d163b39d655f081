/* policy.c - what a privileged agent may touch (see policy.h). */
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/sha256.h"
#include "common/xmalloc.h"
#include "lock.h"
#include "probe.h"

#define HOPS		40	/* symlinks followed on one path */
#define LINK_MAX_LEN	4096
#define DOC		"(docs/security.md)"
#define AGENT_PREFIX	"envctl-agent-"

/* What a walk checks, and how its refusals read. */
struct walk_kind {
	const char	*what;		/* "interpreter" */
	const char	*rule;		/* the rule a refusal names */
	int		 may_be_missing; /* the last entry may not exist */
	int		 file_root;	/* the file itself: root's, 022 off */
};

static const struct walk_kind K_INTERP = {
	"interpreter",
	"a privileged agent runs only root-owned interpreters",
	0, 1,
};
static const struct walk_kind K_TARGET = {
	"target",
	"a privileged agent changes only files on paths that only root can "
	"change",
	1, 0,
};
static const struct walk_kind K_CONF = {
	"policy file",
	"a privileged agent reads only a root-owned policy file",
	1, 1,
};
static const struct walk_kind K_ENVFILE = {
	"environment file",
	"a privileged agent reads a unit's environment files only where "
	"only root can change them",
	1, 1,
};
static const struct walk_kind K_PROGRAM = {
	"program",
	"a privileged agent runs only root-owned programs on paths that "
	"only root can change",
	1, 1,
};
static const struct walk_kind K_AGENT = {
	"agent program",
	"a privileged agent without a digest to check must be root-owned",
	0, 1,
};

/* "KIND 'PATH'" or "KIND 'PATH': 'ENTRY'" as the subject of a refusal. */
static void
subject(struct buf *b, const struct walk_kind *k, const char *path,
    const char *entry)
{
	buf_addf(b, "%s '%s'", k->what, path);
	if (strcmp(entry, path) != 0)
		buf_addf(b, ": '%s'", entry);
}

/* Refuses entry unless root owns it and only root may write it. */
static int
check_owner(const struct walk_kind *k, const char *path, const char *entry,
    const struct stat *st, struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	int r = 0;

	if (st->st_uid == 0 && (st->st_mode & 022) == 0)
		return 0;
	subject(&b, k, path, entry);
	if (st->st_uid != 0)
		r = err_set(err, ENVCTL_EINVALID, "%s is not owned by root "
		    "(uid %lu): %s " DOC, b.data, (unsigned long)st->st_uid,
		    k->rule);
	else
		r = err_set(err, ENVCTL_EINVALID, "%s is writable by group or "
		    "others (mode %04o): %s " DOC, b.data,
		    (unsigned)(st->st_mode & 07777), k->rule);
	buf_release(&b);
	return r;
}

/* Reads the link at entry into *out (the caller frees it). */
static int
read_link(char **out, const struct walk_kind *k, const char *path,
    const char *entry, struct err *err)
{
	char *s = xmalloc(LINK_MAX_LEN + 1);
	ssize_t n;

	*out = NULL;
	if ((n = readlink(entry, s, LINK_MAX_LEN + 1)) == -1) {
		free(s);
		return err_errno(err, ENVCTL_ESYS, errno, "%s '%s': cannot "
		    "read link '%s'", k->what, path, entry);
	}
	if (n > LINK_MAX_LEN) {
		free(s);
		return err_set(err, ENVCTL_EINVALID, "%s '%s': link '%s' is "
		    "too long", k->what, path, entry);
	}
	s[n] = '\0';
	*out = s;
	return 0;
}

/*
 * Resolves path as the kernel would, one entry at a time, and checks that
 * only root can change where it leads: "/" and every directory entered
 * belong to root and are not writable by group or others (so no one else
 * can swap an entry or a link in them), and so does the file itself when
 * k->file_root.  *out gets the real path (the caller frees it); an absent
 * entry is allowed when k->may_be_missing (*exists set to 0, the rest of
 * the path appended as it is).
 */
static int
walk(char **out, int *exists, const char *path, const struct walk_kind *k,
    struct err *err)
{
	struct stat st;
	char *cur = xstrdup(""), *rest = NULL, *cand = NULL, *link, *next;
	const char *p, *end;
	size_t len;
	int hops = 0, last, r = 0;

	*out = NULL;
	*exists = 1;
	if (path[0] != '/') {
		r = err_set(err, ENVCTL_EINVALID, "%s '%s' is not an "
		    "absolute path", k->what, path);
		goto out;
	}
	if (lstat("/", &st) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot stat '/'");
		goto out;
	}
	if ((r = check_owner(k, path, "/", &st, err)) != 0)
		goto out;
	rest = xstrdup(path);
	for (;;) {
		p = rest + strspn(rest, "/");
		if (*p == '\0') {
			/* Ends at a directory (path "/" or "DIR/"). */
			r = err_set(err, ENVCTL_EINVALID, "%s '%s' is a "
			    "directory, not a file", k->what, path);
			goto out;
		}
		len = strcspn(p, "/");
		end = p + len;
		last = end[strspn(end, "/")] == '\0';
		if (len == 1 && p[0] == '.') {
			next = xstrdup(end);
			free(rest);
			rest = next;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (strrchr(cur, '/') != NULL)
				*strrchr(cur, '/') = '\0';
			next = xstrdup(end);
			free(rest);
			rest = next;
			continue;
		}
		free(cand);
		cand = xasprintf("%s/%.*s", cur, (int)len, p);
		if (lstat(cand, &st) == -1) {
			/* Absent in a directory only root can change: only
			 * root can make it, and it is simply not there. */
			if (errno == ENOENT && k->may_be_missing) {
				*exists = 0;
				if (!last) {
					next = xasprintf("%s%s", cand, end);
					free(cand);
					cand = next;
				}
				break;
			}
			r = err_errno(err, ENVCTL_ESYS, errno, "%s '%s': "
			    "cannot stat '%s'", k->what, path, cand);
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++hops > HOPS) {
				r = err_set(err, ENVCTL_EINVALID, "%s '%s' "
				    "leads through more than %d links",
				    k->what, path, HOPS);
				goto out;
			}
			if ((r = read_link(&link, k, path, cand, err)) != 0)
				goto out;
			if (link[0] == '/')
				cur[0] = '\0';
			next = xasprintf("%s%s", link, end);
			free(link);
			free(cand);
			cand = NULL;
			free(rest);
			rest = next;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if ((r = check_owner(k, path, cand, &st, err)) != 0)
				goto out;
			free(cur);
			cur = cand;
			cand = NULL;
			next = xstrdup(end);
			free(rest);
			rest = next;
			continue;
		}
		if (!last) {
			r = err_set(err, ENVCTL_EINVALID, "%s '%s': '%s' is "
			    "not a directory", k->what, path, cand);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			r = err_set(err, ENVCTL_EINVALID, "%s '%s' is not a "
			    "regular file", k->what, path);
			goto out;
		}
		if (k->file_root &&
		    (r = check_owner(k, path, cand, &st, err)) != 0)
			goto out;
		break;
	}
	*out = cand;
	cand = NULL;
out:
	free(cur);
	free(rest);
	free(cand);
	return r;
}

/* The real path of path, if walk() accepts it for k; NULL otherwise. */
static char *
walk_quiet(const char *path, const struct walk_kind *k)
{
	struct err e = ENVCTL_ERR_INIT;
	char *real;
	int exists;

	if (walk(&real, &exists, path, k, &e) != 0)
		real = NULL;
	err_release(&e);
	return real;
}

static int
parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

void
policy_ids_self(struct policy_ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	ids->ruid = getuid();
	ids->euid = geteuid();
	ids->rgid = getgid();
	ids->egid = getegid();
	ids->secure = getauxval(AT_SECURE) != 0;
	ids->sudo_uid = getenv("SUDO_UID");
	ids->pkexec_uid = getenv("PKEXEC_UID");
	ids->doas_user = getenv("DOAS_USER");
}

int
policy_privileged(const struct policy_ids *ids)
{
	unsigned long id;

	if (ids->ruid != ids->euid || ids->rgid != ids->egid || ids->secure)
		return 1;
	/* Set by sudo (or pkexec) itself, whatever the caller's env was. */
	if (ids->sudo_uid != NULL && (parse_id(ids->sudo_uid, &id) != 0 ||
	    id != (unsigned long)ids->euid))
		return 1;
	if (ids->pkexec_uid != NULL && (parse_id(ids->pkexec_uid, &id) != 0 ||
	    id != (unsigned long)ids->euid))
		return 1;
	if (ids->doas_user != NULL && ids->euid == 0 &&
	    strcmp(ids->doas_user, "root") != 0)
		return 1;
	return 0;
}

static void
add(char ***v, size_t *n, const char *s, size_t len)
{
	strv_push(v, n, xstrndup(s, len));
}

/* "vllm" names "vllm.service", as systemctl reads it. */
static void
service_suffix(char **name)
{
	char *full;

	if (strlen(*name) >= 8 && strcmp(*name + strlen(*name) - 8,
	    ".service") == 0)
		return;
	full = xasprintf("%s.service", *name);
	free(*name);
	*name = full;
}

/* Parses the policy file's text (see docs/security.md for the format). */
static int
parse(struct policy *pol, const char *text, size_t len, struct err *err)
{
	const char *p = text, *end = text + len, *nl, *kw, *val;
	size_t kwlen, vlen;
	int line = 0;

	if (memchr(text, '\0', len) != NULL)
		return err_set(err, ENVCTL_EPARSE, "%s: holds a NUL byte",
		    pol->file);
	for (; p < end; p = nl + 1) {
		line++;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		kw = p + strspn(p, " \t");
		if (kw >= nl || *kw == '#' || *kw == '\n' || *kw == '\r')
			continue;
		kwlen = strcspn(kw, " \t\r\n");
		val = kw + kwlen;
		val += strspn(val, " \t");
		vlen = (size_t)(nl - val);
		while (vlen > 0 && strchr(" \t\r", val[vlen - 1]) != NULL)
			vlen--;
		if (kwlen == 7 && strncmp(kw, "service", 7) == 0) {
			if (vlen == 0 || memchr(val, '/', vlen) != NULL ||
			    strcspn(val, " \t") < vlen)
				return err_set(err, ENVCTL_EPARSE, "%s:%d: "
				    "'service' needs one unit name", pol->file,
				    line);
			add(&pol->services, &pol->nservices, val, vlen);
			service_suffix(&pol->services[pol->nservices - 1]);
			continue;
		}
		if (vlen == 0 || val[0] != '/')
			return err_set(err, ENVCTL_EPARSE, "%s:%d: '%.*s' "
			    "needs "
			    "an absolute path", pol->file, line, (int)kwlen,
			    kw);
		if (kwlen == 6 && strncmp(kw, "target", 6) == 0)
			add(&pol->targets, &pol->ntargets, val, vlen);
		else if (kwlen == 11 && strncmp(kw, "interpreter", 11) == 0)
			add(&pol->interps, &pol->ninterps, val, vlen);
		else if (kwlen == 10 && strncmp(kw, "backup_dir", 10) == 0) {
			if (pol->backup_dir != NULL)
				return err_set(err, ENVCTL_EPARSE, "%s:%d: "
				    "backup_dir given twice", pol->file, line);
			pol->backup_dir = xstrndup(val, vlen);
		} else
			return err_set(err, ENVCTL_EPARSE, "%s:%d: unknown "
			    "keyword '%.*s' (target, interpreter, "
			    "backup_dir or service)", pol->file, line,
			    (int)kwlen, kw);
	}
	return 0;
}

int
policy_load(struct policy *pol, int privileged, const char *file,
    struct err *err)
{
	struct buf b;
	struct stat st;
	char *real = NULL, chunk[4096];
	ssize_t n;
	int fd = -1, exists, r;

	memset(pol, 0, sizeof(*pol));
	pol->file = file;
	pol->privileged = privileged;
	if (!privileged)
		return 0;
	buf_init(&b, ENVCTL_POLICY_MAX);
	if ((r = walk(&real, &exists, file, &K_CONF, err)) != 0 || !exists)
		goto out;
	if ((fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY)) == -1 || fstat(fd, &st) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot read the policy "
		    "file '%s'", file);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = err_set(err, ENVCTL_EINVALID, "policy file '%s' is not a "
		    "regular file", file);
		goto out;
	}
	if ((r = check_owner(&K_CONF, file, file, &st, err)) != 0)
		goto out;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot read "
			    "the policy file '%s'", file);
			goto out;
		}
		if (buf_add(&b, chunk, (size_t)n) != 0) {
			r = err_set(err, ENVCTL_ETOOBIG, "policy file '%s' is "
			    "larger than %u bytes", file, ENVCTL_POLICY_MAX);
			goto out;
		}
	}
	pol->loaded = 1;
	r = parse(pol, b.data, b.len, err);
out:
	if (fd != -1)
		close(fd);
	free(real);
	buf_release(&b);
	return r;
}

int
policy_open(struct policy *pol, struct err *err)
{
	struct policy_ids ids;
	const char *file = ENVCTL_POLICY_FILE;

	policy_ids_self(&ids);
#ifdef ENVCTL_FAULTS
	/* The test-only build (never shipped) may read another file. */
	if (getenv("ENVCTL_TEST_POLICY_FILE") != NULL)
		file = getenv("ENVCTL_TEST_POLICY_FILE");
#endif
	return policy_load(pol, policy_privileged(&ids), file, err);
}

int
policy_python_name(const char *path)
{
	const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 :
	    path;

	return strncmp(base, "python", 6) == 0 &&
	    strspn(base + 6, "0123456789.") == strlen(base + 6);
}

/* The interpreter a command name runs: as execvp() in ENVCTL_PROBE_PATH. */
static char *
lookup(const char *name)
{
	const char *p = ENVCTL_PROBE_PATH, *colon;
	struct stat st;
	char *cand;

	for (;;) {
		colon = strchr(p, ':');
		cand = xasprintf("%.*s/%s", colon != NULL ? (int)(colon - p) :
		    (int)strlen(p), p, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    (st.st_mode & 0111) != 0)
			return cand;
		free(cand);
		if (colon == NULL)
			return NULL;
		p = colon + 1;
	}
}

int
policy_interpreter(struct policy *pol, const char **interp,
    struct err *err)
{
	char *real = NULL, *listed;
	size_t i;
	int exists, r = 0;

	if (!pol->privileged)
		return 0;
	if (pol->interp != NULL) {
		/* An earlier check's path stays borrowed by its caller. */
		pol->kept = xreallocarray(pol->kept, pol->nkept + 1,
		    sizeof(*pol->kept));
		pol->kept[pol->nkept++] = pol->interp;
		pol->interp = NULL;
	}
	if (strchr(*interp, '/') != NULL)
		pol->interp = xstrdup(*interp);
	else if ((pol->interp = lookup(*interp)) == NULL)
		return err_set(err, ENVCTL_EINVALID, "interpreter '%s' is not "
		    "found in %s", *interp, ENVCTL_PROBE_PATH);
	if ((r = walk(&real, &exists, pol->interp, &K_INTERP, err)) != 0)
		goto out;
	if (pol->ninterps == 0) {
		if (!policy_python_name(pol->interp) &&
		    !policy_python_name(real))
			r = err_set(err, ENVCTL_EINVALID, "interpreter '%s' "
			    "is not named python*, and %s lists no "
			    "interpreters: a privileged agent runs only "
			    "Python interpreters or the listed ones " DOC,
			    pol->interp, pol->file);
		goto out;
	}
	for (i = 0; i < pol->ninterps; i++) {
		listed = walk_quiet(pol->interps[i], &K_INTERP);
		r = listed != NULL && strcmp(listed, real) == 0;
		free(listed);
		if (r) {
			r = 0;
			goto out;
		}
	}
	r = err_set(err, ENVCTL_EINVALID, "interpreter '%s' is not listed in "
	    "%s: a privileged agent runs only the interpreters listed there "
	    DOC, pol->interp, pol->file);
out:
	if (r == 0)
		*interp = pol->interp;
	free(real);
	return r;
}

/*
 * The file a path: auto read manages (policy.h): the one the interpreter
 * imports; when
 * it imports none, a sitecustomize.py symlink on sys.path whose target is
 * missing (Debian's /usr/lib/python3.X one after /etc/python3.X's file was
 * removed: apply recreates the target, the link stays); else
 * sitecustomize.py in the first site-packages
 * directory that exists (site only puts existing ones on sys.path), else
 * in the first one named.
 */
int
policy_auto_target(char **out, const char **source,
    const struct probe *p, const char *interp, struct err *err)
{
	struct stat st;
	const char *dir = NULL, *d;
	size_t i;

	if (p->origin != NULL) {
		if (p->origin[0] != '/')
			return err_set(err, ENVCTL_EPROBE, "%s imports "
			    "sitecustomize from '%s', not from a file",
			    interp, p->origin);
		*out = xstrdup(p->origin);
		*source = "auto";
		return 0;
	}
	if (p->dangling != NULL && p->dangling[0] == '/') {
		*out = xstrdup(p->dangling);
		*source = "auto";
		return 0;
	}
	for (i = 0; i < json_array_size(p->site_packages); i++) {
		d = json_string_value(json_array_get(p->site_packages, i));
		if (d[0] != '/')
			continue;
		if (dir == NULL)
			dir = d;
		if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) {
			dir = d;
			break;
		}
	}
	if (dir == NULL)
		return err_set(err, ENVCTL_EPROBE, "%s imports no "
		    "sitecustomize and has no site-packages directory", interp);
	*out = xasprintf("%s/sitecustomize.py", dir);
	*source = "site-packages";
	return 0;
}

/* The file the interpreter's read in auto mode manages. */
static char *
own_site(const struct probe *p)
{
	struct err e = ENVCTL_ERR_INIT;
	const char *source;
	char *path = NULL;

	if (policy_auto_target(&path, &source, p, "", &e) != 0 ||
	    path[0] != '/') {
		free(path);
		path = NULL;
	}
	err_release(&e);
	return path;
}

int
policy_target(const struct policy *pol, const char *path,
    const struct probe *p, struct err *err)
{
	char *real = NULL, *own = NULL, *cand;
	size_t i;
	int exists, r, same;

	if (!pol->privileged)
		return 0;
	if ((r = walk(&real, &exists, path, &K_TARGET, err)) != 0)
		return r;
	if (p != NULL && (own = own_site(p)) != NULL) {
		cand = walk_quiet(own, &K_TARGET);
		same = cand != NULL && strcmp(cand, real) == 0;
		free(cand);
		if (same)
			goto out;
	}
	for (i = 0; i < pol->ntargets; i++) {
		cand = walk_quiet(pol->targets[i], &K_TARGET);
		same = cand != NULL && strcmp(cand, real) == 0;
		free(cand);
		if (same)
			goto out;
	}
	r = err_set(err, ENVCTL_EINVALID, "target '%s' is neither the "
	    "sitecustomize of the interpreter ('%s') nor a target listed in "
	    "%s: a privileged agent changes only those " DOC, path,
	    own != NULL ? own : "none", pol->file);
out:
	free(own);
	free(real);
	return r;
}

/* Length of dir without trailing slashes ("/" stays 1). */
static size_t
trimmed(const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n;
}

int
policy_backup_dir(const struct policy *pol, const char *dir,
    struct err *err)
{
	const char *want = pol->backup_dir != NULL ? pol->backup_dir :
	    ENVCTL_POLICY_BACKUP_DIR;
	size_t n = trimmed(dir);

	if (!pol->privileged || (n == trimmed(want) &&
	    strncmp(dir, want, n) == 0))
		return 0;
	return err_set(err, ENVCTL_EINVALID, "backup directory '%s' is not "
	    "'%s' (%s): a privileged agent keeps backups only in the "
	    "backup_dir "
	    "of %s " DOC, dir, want, pol->backup_dir != NULL ? "the policy "
	    "file's" : "the default", pol->file);
}

int
policy_service(const struct policy *pol, const char *unit,
    struct err *err)
{
	size_t i;

	if (!pol->privileged)
		return 0;
	for (i = 0; i < pol->nservices; i++)
		if (strcmp(pol->services[i], unit) == 0)
			return 0;
	return err_set(err, ENVCTL_EINVALID, "service '%s' is not listed in "
	    "%s: a privileged agent reads only the services listed there "
	    DOC, unit, pol->file);
}

int
policy_root_file(const struct policy *pol, const char *path,
    struct err *err)
{
	char *real;
	int exists, r;

	if (!pol->privileged)
		return 0;
	if ((r = walk(&real, &exists, path, &K_ENVFILE, err)) == 0)
		free(real);
	return r;
}

int
policy_program(const struct policy *pol, const char *path,
    struct err *err)
{
	char *real;
	int exists, r;

	if (!pol->privileged)
		return 0;
	if ((r = walk(&real, &exists, path, &K_PROGRAM, err)) == 0)
		free(real);
	return r;
}

int
policy_lock_dir(const struct policy *pol, const char *dir, struct err *err)
{
	if (!pol->privileged || dir == NULL ||
	    strcmp(dir, ENVCTL_LOCK_DIR) == 0)
		return 0;
	return err_set(err, ENVCTL_EINVALID, "lock directory '%s' is not "
	    "'%s': a privileged agent takes its locks only there " DOC, dir,
	    ENVCTL_LOCK_DIR);
}

static int
is_hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

int
policy_check_digest(int *mismatch, const char *exe, const char *name,
    const char *given, struct err *err)
{
	const char *base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 :
	    name;
	const char *want[2];
	char hex[ENVCTL_SHA256_HEX], *real;
	int exists, i, r;

	*mismatch = 0;
	want[0] = strncmp(base, AGENT_PREFIX, strlen(AGENT_PREFIX)) == 0 &&
	    is_hex64(base + strlen(AGENT_PREFIX)) ?
	    base + strlen(AGENT_PREFIX) : NULL;
	want[1] = given;
	if (given != NULL && !is_hex64(given))
		return err_set(err, ENVCTL_EINVALID, "--sha256 '%s' is not a "
		    "SHA-256 in lowercase hex", given);
	if (want[0] == NULL && want[1] == NULL) {
		if ((r = walk(&real, &exists, name, &K_AGENT, err)) == 0)
			free(real);
		return r;
	}
	if ((r = sha256_file_hex(hex, exe, err)) != 0)
		return r;
	for (i = 0; i < 2; i++) {
		if (want[i] == NULL || strcmp(want[i], hex) == 0)
			continue;
		*mismatch = 1;
		return err_set(err, ENVCTL_EINVALID, "the agent '%s' does not "
		    "match its digest (sha256 %s, expected %s): tampered or "
		    "foreign; a privileged agent runs only as the program it "
		    "is named after " DOC, name, hex, want[i]);
	}
	return 0;
}

void
policy_release(struct policy *pol)
{
	strv_free(pol->interps, pol->ninterps);
	strv_free(pol->targets, pol->ntargets);
	strv_free(pol->services, pol->nservices);
	free(pol->backup_dir);
	free(pol->interp);
	strv_free(pol->kept, pol->nkept);
	memset(pol, 0, sizeof(*pol));
	pol->file = ENVCTL_POLICY_FILE;
}
