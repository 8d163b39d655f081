/* op_discover.c - the discover op (see op_discover.h). */
#include "op_discover.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "ops.h"
#include "policy.h"
#include "probe.h"
#include "pykind.h"
#include "request.h"

#define LINK_MAX_LEN	4096	/* a /proc link or argv[0] we look at */
/* Where a unit without PATH= finds a bare command (kept simple). */
#define UNIT_PATH	"/usr/local/bin:/usr/bin:/bin"

/* Where a candidate was found: bit numbers of struct cand's sources. */
enum src {
	SRC_SYSTEM, SRC_OPT, SRC_ROOT, SRC_VENV, SRC_CONDA, SRC_UV,
	SRC_PYENV, SRC_SYSTEMD, SRC_PROCESS, SRC_N
};

static const char *const src_names[SRC_N] = { "system", "opt", "root",
	"venv", "conda", "uv", "pyenv", "systemd", "process" };

static const char *const unit_dirs[] = { "/etc/systemd/system",
	"/run/systemd/system", "/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system", NULL };

/* The prefixes under a home that conda installers use by default. */
static const char *const home_conda[] = { "miniconda3", "anaconda3",
	"miniforge3", "mambaforge", ".conda", NULL };

struct cand {
	char		*path;		/* as users would write it */
	char		*real;		/* the executable, resolved */
	char		*key;		/* real, and the venv's directory */
	const char	*kind;
	unsigned	 sources;	/* 1 << enum src */
};

struct scan {
	struct cand	*c;
	size_t		 n, alloc, max;
	size_t		 dropped;	/* new candidates past max */
	size_t		 entries;	/* directory entries read */
	long long	 deadline;	/* of the search */
	char		*why;		/* why the search stopped early */
	const volatile sig_atomic_t *stop;
};

struct discover_req {
	int		 timeout_ms;
	int		 max;
	const char	**roots;	/* borrowed from the request */
	size_t		 nroots;
};

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 once the search must end (and why is set). */
static int
stopped(struct scan *s)
{
	if (s->why != NULL)
		return 1;
	if (s->stop != NULL && *s->stop)
		s->why = xstrdup("the agent was asked to stop");
	else if (deadline_now_ms() >= s->deadline)
		s->why = xstrdup("out of time while searching");
	return s->why != NULL;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
free_names(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * The entries of dir but . and .., sorted (so that the result does not
 * depend on readdir's order), each counted against the bound; NULL when
 * it cannot be read or the search is over.  Free with free_names().
 */
static char **
list_dir(struct scan *s, const char *dir)
{
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, alloc = 0;
	DIR *d;

	if (stopped(s) || (d = opendir(dir)) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (++s->entries > ENVCTL_DISCOVER_ENTRIES) {
			s->why = xasprintf("more than %d directory entries",
			    ENVCTL_DISCOVER_ENTRIES);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		ENVCTL_GROW(v, n + 2, alloc);
		v[n++] = xstrdup(de->d_name);
		v[n] = NULL;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

/* Which of two names for one interpreter users would rather write. */
static int
rank(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b != NULL ? b + 1 : path;
	if (strcmp(b, "python3") == 0)
		return 0;
	if (strcmp(b, "python") == 0)
		return 1;
	return 2;
}

/*
 * Adds the executable at path, found by src.  One interpreter is one real
 * file in one venv (a venv's python links to its base's, but imports
 * other site-packages): a second name for it adds the source, and the
 * name users would rather write.
 */
static void
add(struct scan *s, const char *path, enum src src)
{
	struct stat st;
	struct cand *c;
	char *real, *venv, *key;
	size_t i;

	if (path[0] != '/' || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 0111) == 0 || (real = realpath(path, NULL)) == NULL)
		return;
	venv = pykind_venv_dir(path);
	key = venv != NULL ? xasprintf("%s\n%s", venv, real) : xstrdup(real);
	free(venv);
	for (i = 0; i < s->n; i++)
		if (strcmp(s->c[i].key, key) == 0)
			break;
	if (i < s->n) {
		c = &s->c[i];
		c->sources |= 1u << src;
		if (rank(path) < rank(c->path)) {
			free(c->path);
			c->path = xstrdup(path);
			c->kind = pykind_classify(path, real);
		}
		free(real);
		free(key);
		return;
	}
	if (s->n == s->max) {
		s->dropped++;
		free(real);
		free(key);
		return;
	}
	ENVCTL_GROW(s->c, s->n + 1, s->alloc);
	c = &s->c[s->n++];
	c->path = xstrdup(path);
	c->real = real;
	c->key = key;
	c->kind = pykind_classify(path, real);
	c->sources = 1u << src;
}

/* DIR/python3* that are interpreters (not python3-config). */
static void
add_bin(struct scan *s, const char *dir, enum src src)
{
	char **v = list_dir(s, dir), *p;
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++) {
		if (strncmp(v[i], "python3", 7) != 0 ||
		    !pykind_python_name(v[i]))
			continue;
		p = xasprintf("%s/%s", dir, v[i]);
		add(s, p, src);
		free(p);
	}
	free_names(v);
}

/* PREFIX/bin/python3, else PREFIX/bin/python. */
static void
add_prefix(struct scan *s, const char *prefix, enum src src)
{
	char *p = xasprintf("%s/bin/python3", prefix);

	if (!is_file(p)) {
		free(p);
		p = xasprintf("%s/bin/python", prefix);
	}
	add(s, p, src);
	free(p);
}

/* A venv at dir: its pyvenv.cfg is there. */
static void
venv_at(struct scan *s, const char *dir)
{
	char *cfg = xasprintf("%s/pyvenv.cfg", dir);

	if (is_file(cfg))
		add_prefix(s, dir, SRC_VENV);
	free(cfg);
}

/* 1 when prefix holds conda-meta/. */
static int
conda_prefix(const char *prefix)
{
	char *m = xasprintf("%s/conda-meta", prefix);
	int r = is_dir(m);

	free(m);
	return r;
}

/* A conda installation at prefix, and each of its envs/. */
static void
conda_at(struct scan *s, const char *prefix)
{
	char *envs = xasprintf("%s/envs", prefix), **v, *p;
	size_t i;

	if (conda_prefix(prefix))
		add_prefix(s, prefix, SRC_CONDA);
	v = is_dir(envs) ? list_dir(s, envs) : NULL;
	for (i = 0; v != NULL && v[i] != NULL; i++) {
		p = xasprintf("%s/%s", envs, v[i]);
		if (conda_prefix(p))
			add_prefix(s, p, SRC_CONDA);
		free(p);
	}
	free_names(v);
	free(envs);
}

/* Calls fn for each directory DIR/NAME (names starting with '.' too). */
static void
each_dir(struct scan *s, const char *dir, int dots,
    void (*fn)(struct scan *, const char *))
{
	char **v = list_dir(s, dir), *p;
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++) {
		if (!dots && v[i][0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, v[i]);
		if (is_dir(p))
			fn(s, p);
		free(p);
	}
	free_names(v);
}

/*
 * A prefix under /opt or a requested root: its bin/ (tagged src), itself
 * as a venv or a conda prefix, and the venvs right below it.
 */
static void
prefix_entry(struct scan *s, const char *d, enum src src)
{
	char *bin = xasprintf("%s/bin", d);

	add_bin(s, bin, src);
	free(bin);
	venv_at(s, d);
	if (conda_prefix(d))
		conda_at(s, d);
	each_dir(s, d, 0, venv_at);
}

/* each_dir()'s callbacks for the two: the tag is all that differs. */
static void
opt_entry(struct scan *s, const char *d)
{
	prefix_entry(s, d, SRC_OPT);
}

static void
root_entry(struct scan *s, const char *d)
{
	prefix_entry(s, d, SRC_ROOT);
}

static void
uv_entry(struct scan *s, const char *d)
{
	char *bin = xasprintf("%s/bin", d);

	add_bin(s, bin, SRC_UV);
	free(bin);
}

static void
pyenv_entry(struct scan *s, const char *d)
{
	char *p = xasprintf("%s/bin/python3", d);

	add(s, p, SRC_PYENV);
	free(p);
}

/* Venvs, conda, uv and pyenv in one home. */
static void
search_home(struct scan *s, const char *home)
{
	char *p;
	size_t i;

	each_dir(s, home, 0, venv_at);
	p = xasprintf("%s/.venv", home);
	venv_at(s, p);
	free(p);
	p = xasprintf("%s/.virtualenvs", home);
	each_dir(s, p, 0, venv_at);
	free(p);
	p = xasprintf("%s/venvs", home);
	each_dir(s, p, 0, venv_at);
	free(p);
	for (i = 0; home_conda[i] != NULL; i++) {
		p = xasprintf("%s/%s", home, home_conda[i]);
		if (is_dir(p))
			conda_at(s, p);
		free(p);
	}
	/* uv's default; $XDG_DATA_HOME is the user's, not ours. */
	p = xasprintf("%s/.local/share/uv/python", home);
	each_dir(s, p, 0, uv_entry);
	free(p);
	p = xasprintf("%s/.pyenv/versions", home);
	each_dir(s, p, 0, pyenv_entry);
	free(p);
}

/* The users' home directories, each once, sorted. */
static char **
homes(void)
{
	struct passwd *pw;
	char **v = NULL;
	size_t n = 0, alloc = 0, users = 0, i;

	setpwent();
	while ((pw = getpwent()) != NULL &&
	    users++ < ENVCTL_DISCOVER_USERS) {
		if (pw->pw_dir == NULL || pw->pw_dir[0] != '/' ||
		    strcmp(pw->pw_dir, "/") == 0 || !is_dir(pw->pw_dir))
			continue;
		for (i = 0; i < n && strcmp(v[i], pw->pw_dir) != 0; i++)
			;
		if (i < n)
			continue;
		ENVCTL_GROW(v, n + 2, alloc);
		v[n++] = xstrdup(pw->pw_dir);
		v[n] = NULL;
	}
	endpwent();
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

/* The next word of [*p, end), unquoted; NULL at the end (caller frees). */
static char *
next_word(const char **p, const char *end)
{
	const char *s = *p, *w;
	char q = 0;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end)
		return NULL;
	if (*s == '"' || *s == '\'')
		q = *s++;
	for (w = s; s < end && (q != 0 ? *s != q :
	    (*s != ' ' && *s != '\t')); s++)
		;
	*p = s < end && q != 0 ? s + 1 : s;
	return xasprintf("%.*s", (int)(s - w), w);
}

/* A bare command as a unit without PATH= finds it. */
static char *
unit_which(const char *cmd)
{
	const char *dirs = UNIT_PATH, *c;
	char *p;

	for (;;) {
		c = strchr(dirs, ':');
		p = xasprintf("%.*s/%s", c != NULL ? (int)(c - dirs) :
		    (int)strlen(dirs), dirs, cmd);
		if (access(p, X_OK) == 0 && is_file(p))
			return p;
		free(p);
		if (c == NULL)
			return NULL;
		dirs = c + 1;
	}
}

/*
 * The value of one ExecStart= line: its first word after the prefixes
 * @-:+!, or, for env, the first word after env's options and
 * assignments; a bare name is looked up in UNIT_PATH.
 */
static void
unit_exec(struct scan *s, const char *v, const char *end)
{
	char *w, *cmd = NULL;
	const char *b;

	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (v < end && strchr("@-:+!", *v) != NULL)
		v++;
	if ((w = next_word(&v, end)) == NULL)
		return;
	b = strrchr(w, '/');
	if (strcmp(b != NULL ? b + 1 : w, "env") == 0) {
		free(w);
		while ((w = next_word(&v, end)) != NULL &&
		    (w[0] == '-' || strchr(w, '=') != NULL))
			free(w);
		if (w == NULL)
			return;
	}
	if (w[0] == '/')
		cmd = xstrdup(w);
	else if (strchr(w, '/') == NULL)
		cmd = unit_which(w);
	b = cmd != NULL ? strrchr(cmd, '/') + 1 : NULL;
	if (b != NULL && pykind_python_name(b))
		add(s, cmd, SRC_SYSTEMD);
	free(cmd);
	free(w);
}

/* The ExecStart= lines of one unit file. */
static void
unit_file(struct scan *s, const char *path)
{
	struct stat st;
	struct buf b;
	const char *p, *e, *k;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)ENVCTL_DISCOVER_UNIT_MAX)
		return;
	buf_init(&b, ENVCTL_DISCOVER_UNIT_MAX);
	if (buf_read_file(&b, path, NULL) != 0)
		goto out;
	for (p = b.data; p < b.data + b.len; p = e + 1) {
		if ((e = memchr(p, '\n', (size_t)(b.data + b.len - p))) ==
		    NULL)
			e = b.data + b.len;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(e - p) < 10 || memcmp(p, "ExecStart", 9) != 0)
			continue;
		for (k = p + 9; k < e && (*k == ' ' || *k == '\t'); k++)
			;
		if (k < e && *k == '=')
			unit_exec(s, k + 1, e);
	}
out:
	buf_release(&b);
}

static void
search_units(struct scan *s)
{
	char **v, *p;
	size_t i, j, len;

	for (i = 0; unit_dirs[i] != NULL; i++) {
		v = list_dir(s, unit_dirs[i]);
		for (j = 0; v != NULL && v[j] != NULL; j++) {
			len = strlen(v[j]);
			if (len <= 8 || strcmp(v[j] + len - 8, ".service") != 0)
				continue;
			p = xasprintf("%s/%s", unit_dirs[i], v[j]);
			unit_file(s, p);
			free(p);
		}
		free_names(v);
	}
}

/* readlink() into a new string; NULL when it fails or is too long. */
static char *
read_link(const char *path)
{
	char buf[LINK_MAX_LEN];
	ssize_t n = readlink(path, buf, sizeof(buf));

	if (n <= 0 || (size_t)n >= sizeof(buf))
		return NULL;
	return xasprintf("%.*s", (int)n, buf);
}

/* A process's argv[0], when it names the same file as its exe. */
static char *
proc_argv0(const char *pid, const char *exe)
{
	char buf[LINK_MAX_LEN], *p = xasprintf("/proc/%s/cmdline", pid), *r;
	ssize_t n;
	int fd;

	fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd == -1)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (buf[0] != '/' || strlen(buf) == (size_t)n ||
	    (r = realpath(buf, NULL)) == NULL)
		return NULL;
	p = strrchr(buf, '/') + 1;
	if (strcmp(r, exe) != 0 || !pykind_python_name(p)) {
		free(r);
		return NULL;
	}
	free(r);
	return xstrdup(buf);
}

/*
 * Running interpreters: /proc/PID/exe named python*, in our mount
 * namespace (a container's paths are not ours), by argv[0] when that
 * names the same file (a venv's python runs as its base's file).
 */
static void
search_processes(struct scan *s)
{
	char **v, *p, *ns, *self, *exe, *argv0;
	const char *b;
	size_t i;

	self = read_link("/proc/self/ns/mnt");
	v = list_dir(s, "/proc");
	for (i = 0; v != NULL && v[i] != NULL; i++) {
		if (strspn(v[i], "0123456789") != strlen(v[i]))
			continue;
		p = xasprintf("/proc/%s/exe", v[i]);
		exe = read_link(p);
		free(p);
		if (exe == NULL || (b = strrchr(exe, '/')) == NULL ||
		    !pykind_python_name(b + 1)) {
			free(exe);
			continue;
		}
		p = xasprintf("/proc/%s/ns/mnt", v[i]);
		ns = read_link(p);
		free(p);
		if (self == NULL || (ns != NULL && strcmp(ns, self) == 0)) {
			argv0 = proc_argv0(v[i], exe);
			add(s, argv0 != NULL ? argv0 : exe, SRC_PROCESS);
			free(argv0);
		}
		free(ns);
		free(exe);
	}
	free_names(v);
	free(self);
}

static void
search(struct scan *s, const struct discover_req *rq)
{
	char **h;
	size_t i;

	add_bin(s, "/usr/bin", SRC_SYSTEM);
	add_bin(s, "/usr/local/bin", SRC_SYSTEM);
	each_dir(s, "/opt", 0, opt_entry);
	for (i = 0; i < rq->nroots; i++)
		each_dir(s, rq->roots[i], 0, root_entry);
	h = homes();
	for (i = 0; h != NULL && h[i] != NULL && !stopped(s); i++)
		search_home(s, h[i]);
	free_names(h);
	each_dir(s, "/srv", 0, venv_at);
	search_units(s);
	search_processes(s);
}

/* The sitecustomize a probed interpreter imports, or where it would be. */
static void
site_json(json_t *o, const struct probe *p, const char *interp)
{
	struct err e = ENVCTL_ERR_INIT;
	const char *source;
	char *t = NULL, *real;

	if (policy_auto_target(&t, &source, p, interp, &e) != 0) {
		json_object_set_new(o, "error", proto_text_or_null(e.msg));
		err_release(&e);
		return;
	}
	if (strcmp(source, "auto") == 0) {
		real = realpath(t, NULL);
		json_object_set_new(o, "sitecustomize", proto_text_or_null(t));
		json_object_set_new(o, "sitecustomize_real",
		    proto_text_or_null(real));
		free(real);
	} else
		json_object_set_new(o, "would_create", proto_text_or_null(t));
	free(t);
}

static json_t *
cand_json(const struct cand *c)
{
	json_t *o = json_object(), *a = json_array();
	int i;

	json_object_set_new(o, "path", proto_text_or_null(c->path));
	json_object_set_new(o, "real", proto_text_or_null(c->real));
	json_object_set_new(o, "kind", json_string(c->kind));
	for (i = 0; i < SRC_N; i++)
		if (c->sources & (1u << i))
			json_array_append_new(a, json_string(src_names[i]));
	json_object_set_new(o, "sources", a);
	json_object_set_new(o, "probed", json_false());
	json_object_set_new(o, "executable", json_null());
	json_object_set_new(o, "version", json_null());
	json_object_set_new(o, "sitecustomize", json_null());
	json_object_set_new(o, "sitecustomize_real", json_null());
	json_object_set_new(o, "would_create", json_null());
	json_object_set_new(o, "startup_error", json_null());
	json_object_set_new(o, "failed", json_null());
	json_object_set_new(o, "error", json_null());
	return o;
}

/* One candidate's run, when the policy and the time left allow it. */
static json_t *
probe_cand(const struct cand *c, struct policy *pol,
    const struct agent_ctx *ctx, long long deadline)
{
	struct err e = ENVCTL_ERR_INIT;
	struct probe_args pa;
	struct probe p;
	const char *interp = c->path, *se;
	json_t *o = cand_json(c);
	int left = deadline_left_ms(deadline, deadline_now_ms());

	memset(&p, 0, sizeof(p));
	buf_init(&p.errtext, 0);
	if (ctx->stop != NULL && *ctx->stop) {
		json_object_set_new(o, "error", json_string("not probed: the "
		    "agent was asked to stop"));
		goto out;
	}
	if (left < ENVCTL_DISCOVER_RUN_MIN) {
		json_object_set_new(o, "error", json_string("not probed: out "
		    "of time (the request's timeout_ms is spent)"));
		goto out;
	}
	if (policy_interpreter(pol, &interp, &e) != 0) {
		json_object_set_new(o, "error", json_pack("s+", "not probed: ",
		    e.msg));
		goto out;
	}
	memset(&pa, 0, sizeof(pa));
	pa.interp = interp;
	pa.timeout_ms = left < ENVCTL_DISCOVER_RUN_MS ? left :
	    ENVCTL_DISCOVER_RUN_MS;
	pa.stop = ctx->stop;
	pa.waitmask = ctx->waitmask;
	pa.cache = ctx->cache;
	json_object_set_new(o, "probed", json_true());
	if (probe_find(&p, &pa, &e) != 0) {
		json_object_set_new(o, "error", proto_text_or_null(e.msg));
		goto out;
	}
	json_object_set_new(o, "executable", proto_text_or_null(p.executable));
	json_object_set_new(o, "version", proto_text_or_null(p.version));
	json_object_set_new(o, "failed", proto_text_or_null(p.failed));
	se = p.startup_exception != NULL ? p.startup_exception :
	    p.startup_message;
	json_object_set_new(o, "startup_error", proto_text_or_null(se));
	site_json(o, &p, interp);
out:
	probe_release(&p);
	err_release(&e);
	return o;
}

static int
parse_req(struct discover_req *rq, const json_t *req, int privileged,
    struct err *err)
{
	int r;

	memset(rq, 0, sizeof(*rq));
	if ((r = req_int(&rq->timeout_ms, req, "timeout_ms",
	    ENVCTL_DISCOVER_TIMEOUT_MS, 1, 3600000, "discover", err)) != 0 ||
	    (r = req_int(&rq->max, req, "max", ENVCTL_DISCOVER_MAX, 1,
	    ENVCTL_DISCOVER_MAX_CAP, "discover", err)) != 0 ||
	    (r = req_paths(&rq->roots, &rq->nroots, json_object_get(req,
	    "roots"), ENVCTL_DISCOVER_ROOTS, "discover", "roots", err)) != 0)
		return r;
	/* Root's places only: a login user's request names none. */
	if (privileged && rq->nroots > 0)
		return err_set(err, ENVCTL_EINVALID, "discover: a privileged "
		    "agent searches only its fixed places and refuses "
		    "'roots' (docs/security.md)");
	return 0;
}

int
op_discover(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct discover_req rq;
	struct policy pol = POLICY_INIT;
	struct scan s;
	json_t *a;
	long long t0 = deadline_now_ms(), deadline;
	size_t i;
	int r;

	memset(&s, 0, sizeof(s));
	memset(&rq, 0, sizeof(rq));
	if ((r = policy_open(&pol, err)) != 0 ||
	    (r = parse_req(&rq, req, pol.privileged, err)) != 0)
		goto out;
	deadline = t0 + rq.timeout_ms;
	/* The search may take half the budget; the runs get the rest. */
	s.deadline = t0 + rq.timeout_ms / 2;
	s.max = (size_t)rq.max;
	s.stop = ctx->stop;
	search(&s, &rq);
	a = json_array();
	for (i = 0; i < s.n; i++)
		json_array_append_new(a, probe_cand(&s.c[i], &pol, ctx,
		    deadline));
	json_object_set_new(reply, "candidates", a);
	json_object_set_new(reply, "privileged", json_boolean(pol.privileged));
	json_object_set_new(reply, "entries", json_integer((json_int_t)
	    s.entries));
	if (s.why == NULL && s.dropped > 0)
		s.why = xasprintf("%zu more interpreters than the %d listed",
		    s.dropped, rq.max);
	json_object_set_new(reply, "truncated", proto_text_or_null(s.why));
out:
	for (i = 0; i < s.n; i++) {
		free(s.c[i].path);
		free(s.c[i].real);
		free(s.c[i].key);
	}
	free(s.c);
	free(s.why);
	free(rq.roots);
	policy_release(&pol);
	return r;
}
