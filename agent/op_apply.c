/* op_apply.c - the apply and rollback ops (see op_apply.h). */
#include "op_apply.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "account.h"
#include "backup.h"
#include "cache.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "install.h"
#include "lock.h"
#include "op_read.h"
#include "ops.h"
#include "policy.h"
#include "probe.h"
#include "target.h"

#define CANDIDATE	"sitecustomize.py"
#define SHOW_MAX	80	/* bytes of a value quoted in a message */
#define RM_DEPTH	16
#define NEWEST_SHOWN	5

/* One apply or rollback request, checked; strings borrowed from it. */
struct change_req {
	const char	*op;		/* "apply" or "rollback" */
	const char	*interp;
	const char	*path;
	int		 expect_exists;
	struct buf	 expect;
	const char	*sha_old;	/* NULL when expect_exists is 0 */
	const char	*backup_root;
	size_t		 keep;
	const char	*playbook;
	const char	*controller;
	const char	*lock_dir;	/* NULL: ENVCTL_LOCK_DIR */
	int		 lock_timeout_ms;
	int		 timeout_ms;
	const char	*fault;		/* NULL, or a fault point */
	const json_t	*secret;	/* NULL, or an array of names */
	char		**names;	/* the variables probed */
	size_t		 nnames;
	/* apply */
	struct buf	 data;
	const json_t	*want;		/* name -> value */
	mode_t		 create_mode;
	uid_t		 create_uid;
	gid_t		 create_gid;
	/* rollback */
	const char	*to;
};

/* What a change holds while it runs. */
struct change {
	struct change_req	 rq;
	const struct agent_ctx	*ctx;
	int			 fork;	/* start ctx->fs for its probes */
	struct target		 t0;	/* read before the lock */
	struct target		 cur;	/* read under the lock */
	struct lock		 lk;
	struct install_dir	 dir;
	struct backup_store	 bs;
	int			 bmade;	/* this change made its backup */
};

static json_t *
jtext(const char *s)
{
	return s != NULL ? proto_text(s, strlen(s)) : json_null();
}

static int
buf_same(const struct buf *a, const char *data, size_t len)
{
	return a->len == len && (len == 0 || memcmp(a->data, data, len) == 0);
}

/* ---- request ---- */

static int
is_sha256(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

static int
is_label(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t i, n = json_string_length(v);

	if (!json_is_string(v) || n == 0 || n > ENVCTL_APPLY_LABEL_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int
is_name(const json_t *v)
{
	size_t n = json_string_length(v);

	return json_is_string(v) && n > 0 && n <= ENVCTL_READ_MAX_NAME &&
	    strlen(json_string_value(v)) == n &&
	    strchr(json_string_value(v), '=') == NULL;
}

static int
is_abs(const json_t *v)
{
	return json_is_string(v) && json_string_value(v)[0] == '/' &&
	    strlen(json_string_value(v)) == json_string_length(v);
}

static int
get_int(int *out, const json_t *req, const char *key, int def, int min,
    int max, const char *op, struct err *err)
{
	const json_t *v = json_object_get(req, key);

	*out = def;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return err_set(err, ENVCTL_EINVALID, "%s: '%s' must be an "
		    "integer from %d to %d", op, key, min, max);
	*out = (int)json_integer_value(v);
	return 0;
}

/* Decodes base64 at v into b (capped); name is for messages. */
static int
get_bytes(struct buf *b, const json_t *v, const char *name, const char *op,
    struct err *err)
{
	int r;

	buf_init(b, ENVCTL_TARGET_MAX);
	if (!json_is_string(v))
		return err_set(err, ENVCTL_EINVALID,
		    "%s: '%s' must be a base64 string", op, name);
	r = proto_b64_decode(b, json_string_value(v), json_string_length(v),
	    NULL);
	if (r == ENVCTL_ETOOBIG)
		return err_set(err, ENVCTL_ETOOBIG, "%s: '%s' is larger than "
		    "%u MiB", op, name, ENVCTL_TARGET_MAX >> 20);
	if (r != 0)
		return err_set(err, ENVCTL_EINVALID,
		    "%s: '%s' is not valid base64", op, name);
	return 0;
}

static int
parse_fault(struct change_req *rq, const json_t *req, struct err *err)
{
	const json_t *v = json_object_get(req, "fault");

	if (v == NULL || json_is_null(v))
		return 0;
	if (!install_faults_compiled())
		return err_set(err, ENVCTL_EINVALID,
		    "fault points are not compiled in");
	if (!json_is_string(v) || !install_fault_known(json_string_value(v)))
		return err_set(err, ENVCTL_EINVALID, "%s: unknown fault point "
		    "'%s'", rq->op, json_is_string(v) ? json_string_value(v) :
		    "(not a string)");
	rq->fault = json_string_value(v);
	return 0;
}

/* The fields apply and rollback share. */
static int
parse_common(struct change_req *rq, const json_t *req, struct err *err)
{
	const json_t *v, *e, *b;
	const char *op = rq->op;
	size_t i;
	int r, keep;

	if ((r = parse_fault(rq, req, err)) != 0)
		return r;
	rq->interp = "python3";
	v = json_object_get(req, "interpreter");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > 4096 ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    (json_string_value(v)[0] != '/' &&
		    strchr(json_string_value(v), '/') != NULL))
			return err_set(err, ENVCTL_EINVALID, "%s: "
			    "'interpreter' must be a command name or an "
			    "absolute path", op);
		rq->interp = json_string_value(v);
	}
	v = json_object_get(req, "path");
	if (!is_abs(v))
		return err_set(err, ENVCTL_EINVALID,
		    "%s: 'path' must be an absolute path", op);
	rq->path = json_string_value(v);

	e = json_object_get(req, "expect");
	if (!json_is_object(e) ||
	    !json_is_boolean(json_object_get(e, "exists")))
		return err_set(err, ENVCTL_EINVALID, "%s: 'expect' must be an "
		    "object with a boolean 'exists'", op);
	rq->expect_exists = json_is_true(json_object_get(e, "exists"));
	if (rq->expect_exists && (r = get_bytes(&rq->expect,
	    json_object_get(e, "data"), "expect.data", op, err)) != 0)
		return r;
	v = json_object_get(req, "sha256_old");
	if (rq->expect_exists) {
		if (!json_is_string(v) || !is_sha256(json_string_value(v)))
			return err_set(err, ENVCTL_EINVALID, "%s: 'sha256_old' "
			    "must be a SHA-256 in lowercase hex when "
			    "'expect.exists' is true", op);
		rq->sha_old = json_string_value(v);
	} else if (v != NULL && !json_is_null(v))
		return err_set(err, ENVCTL_EINVALID, "%s: 'sha256_old' must "
		    "be null when 'expect.exists' is false", op);

	b = json_object_get(req, "backup");
	if (!json_is_object(b) || !is_abs(json_object_get(b, "dir")))
		return err_set(err, ENVCTL_EINVALID,
		    "%s: 'backup.dir' must be an absolute path", op);
	rq->backup_root = json_string_value(json_object_get(b, "dir"));
	v = json_object_get(b, "keep");
	keep = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > ENVCTL_BACKUP_KEEP_MAX)
		return err_set(err, ENVCTL_EINVALID, "%s: 'backup.keep' must "
		    "be an integer from 1 to %d", op, ENVCTL_BACKUP_KEEP_MAX);
	rq->keep = (size_t)keep;

	if (!is_label(json_object_get(req, "playbook")) ||
	    !is_label(json_object_get(req, "controller")))
		return err_set(err, ENVCTL_EINVALID, "%s: 'playbook' and "
		    "'controller' must be strings of 1 to %d printable bytes",
		    op, ENVCTL_APPLY_LABEL_MAX);
	rq->playbook = json_string_value(json_object_get(req, "playbook"));
	rq->controller = json_string_value(json_object_get(req,
	    "controller"));
	v = json_object_get(req, "lock_dir");
	if (v != NULL && !json_is_null(v)) {
		if (!is_abs(v))
			return err_set(err, ENVCTL_EINVALID,
			    "%s: 'lock_dir' must be an absolute path", op);
		rq->lock_dir = json_string_value(v);
	}
	if ((r = get_int(&rq->lock_timeout_ms, req, "lock_timeout_ms",
	    ENVCTL_APPLY_LOCK_TIMEOUT_MS, 0, ENVCTL_APPLY_TIMEOUT_MAX, op,
	    err)) != 0 ||
	    (r = get_int(&rq->timeout_ms, req, "timeout_ms",
	    ENVCTL_APPLY_TIMEOUT_MS, 1, ENVCTL_APPLY_TIMEOUT_MAX, op,
	    err)) != 0)
		return r;
	v = json_object_get(req, "secret");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v))
			return err_set(err, ENVCTL_EINVALID, "%s: 'secret' "
			    "must be an array of variable names", op);
		json_array_foreach(v, i, e)
			if (!is_name(e))
				return err_set(err, ENVCTL_EINVALID, "%s: "
				    "'secret' must be an array of variable "
				    "names", op);
		rq->secret = v;
	}
	return 0;
}

static int
parse_create(struct change_req *rq, const json_t *c, struct err *err)
{
	const json_t *mode, *owner, *group;

	rq->create_mode = 0644;
	rq->create_uid = geteuid();
	rq->create_gid = getegid();
	if (c == NULL || json_is_null(c))
		return 0;
	mode = json_object_get(c, "mode");
	owner = json_object_get(c, "owner");
	group = json_object_get(c, "group");
	if (!json_is_object(c) || (mode != NULL && (!json_is_integer(mode) ||
	    json_integer_value(mode) < 0 ||
	    json_integer_value(mode) > 07777)) ||
	    (owner != NULL && !json_is_string(owner)) ||
	    (group != NULL && !json_is_string(group)))
		return err_set(err, ENVCTL_EINVALID, "apply: 'create' must be "
		    "an object with an integer 'mode' (0 to 4095) and string "
		    "'owner' and 'group'");
	if (mode != NULL)
		rq->create_mode = (mode_t)json_integer_value(mode);
	/* Names matter only for a file that is still to be made. */
	if (rq->expect_exists)
		return 0;
	if (owner != NULL && account_uid(&rq->create_uid,
	    json_string_value(owner)) != 0)
		return err_set(err, ENVCTL_EINVALID, "apply: 'create.owner': "
		    "no user '%s' in /etc/passwd", json_string_value(owner));
	if (group != NULL && account_gid(&rq->create_gid,
	    json_string_value(group)) != 0)
		return err_set(err, ENVCTL_EINVALID, "apply: 'create.group': "
		    "no group '%s' in /etc/group", json_string_value(group));
	return 0;
}

static int
parse_apply(struct change_req *rq, const json_t *req, struct err *err)
{
	const json_t *v, *val;
	const char *name;
	int r;

	if ((r = parse_common(rq, req, err)) != 0)
		return r;
	if ((r = get_bytes(&rq->data, json_object_get(req, "data"), "data",
	    "apply", err)) != 0)
		return r;
	v = json_object_get(req, "sha256_new");
	if (!json_is_string(v) || !is_sha256(json_string_value(v)))
		return err_set(err, ENVCTL_EINVALID, "apply: 'sha256_new' "
		    "must be a SHA-256 in lowercase hex");
	v = json_object_get(req, "vars");
	if (!json_is_object(v) || json_object_size(v) > ENVCTL_READ_MAX_VARS)
		return err_set(err, ENVCTL_EINVALID, "apply: 'vars' must be "
		    "an object of at most %d variables", ENVCTL_READ_MAX_VARS);
	rq->names = xcalloc(json_object_size(v) + 1, sizeof(*rq->names));
	json_object_foreach((json_t *)v, name, val) {
		if (strchr(name, '=') != NULL || name[0] == '\0' ||
		    strlen(name) > ENVCTL_READ_MAX_NAME)
			return err_set(err, ENVCTL_EINVALID,
			    "apply: vars: '%s' is not a variable name", name);
		if (!json_is_string(val))
			return err_set(err, ENVCTL_EINVALID,
			    "apply: vars: '%s' must be a string", name);
		rq->names[rq->nnames++] = (char *)name;
	}
	rq->want = v;
	return parse_create(rq, json_object_get(req, "create"), err);
}

static int
parse_rollback(struct change_req *rq, const json_t *req, struct err *err)
{
	const json_t *v, *name;
	const char *to;
	size_t i;
	int r;

	if ((r = parse_common(rq, req, err)) != 0)
		return r;
	v = json_object_get(req, "to");
	to = json_string_value(v);
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > 255 ||
	    strlen(to) != json_string_length(v) ||
	    strchr(to, '/') != NULL || to[0] == '.')
		return err_set(err, ENVCTL_EINVALID, "rollback: 'to' must be "
		    "\"latest\" or a backup id");
	rq->to = to;
	v = json_object_get(req, "vars");
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > ENVCTL_READ_MAX_VARS)
		return err_set(err, ENVCTL_EINVALID, "rollback: 'vars' must "
		    "be an array of at most %d names", ENVCTL_READ_MAX_VARS);
	rq->names = xcalloc(json_array_size(v) + 1, sizeof(*rq->names));
	json_array_foreach(v, i, name) {
		if (!is_name(name))
			return err_set(err, ENVCTL_EINVALID, "rollback: "
			    "vars[%zu] is not a variable name", i);
		rq->names[rq->nnames++] = (char *)json_string_value(name);
	}
	return 0;
}

/* ---- probes ---- */

/*
 * last: no run follows in this session (see probe_args).  find: where
 * start-up fails, learn the target all the same (probe_find()).
 */
static int
run_probe(struct probe *p, const struct change *c, char *const *env_extra,
    int last, int find, struct err *err)
{
	struct probe_args pa;

	memset(&pa, 0, sizeof(pa));
	pa.interp = c->rq.interp;
	pa.names = c->rq.names;
	pa.nnames = c->rq.nnames;
	pa.env_extra = env_extra;
	pa.timeout_ms = c->rq.timeout_ms;
	pa.stop = c->ctx->stop;
	pa.waitmask = c->ctx->waitmask;
	pa.cache = c->ctx->cache;
	pa.fs = c->ctx->fs;
	pa.start_fs = c->fork;
	pa.last = last;
	return find ? probe_find(p, &pa, err) : probe_run(p, &pa, err);
}

/*
 * A privileged agent's checks (policy.h) of the interpreter, the backup
 * and lock directories and the target: one interpreter run tells which
 * sitecustomize the interpreter imports.  Unprivileged: nothing.
 */
static int
check_policy(struct policy *pol, struct change *c, struct err *err)
{
	struct probe p;
	int r;

	if ((r = policy_open(pol, err)) != 0 || !pol->privileged)
		return r;
	if ((r = policy_interpreter(pol, &c->rq.interp, err)) != 0 ||
	    (r = policy_backup_dir(pol, c->rq.backup_root, err)) != 0 ||
	    (r = policy_lock_dir(pol, c->rq.lock_dir, err)) != 0)
		return r;
	memset(&p, 0, sizeof(p));
	buf_init(&p.errtext, 0);
	if ((r = run_probe(&p, c, NULL, 0, 1, err)) == 0)
		r = policy_target(pol, c->rq.path, &p, err);
	probe_release(&p);
	return r;
}

/* {"values", "startup_error", "imported"}, and "error" when it failed. */
static json_t *
verify_json(const struct probe *p, const char *error)
{
	json_t *o = json_object(), *se = json_null();

	if (p->startup_message != NULL)
		se = json_pack("{s:o,s:o}", "message",
		    jtext(p->startup_message), "exception",
		    jtext(p->startup_exception));
	json_object_set_new(o, "values", p->values != NULL ?
	    json_incref(p->values) : json_object());
	json_object_set_new(o, "startup_error", se);
	json_object_set_new(o, "imported", jtext(p->imported));
	json_object_set_new(o, "forked", json_boolean(p->forked));
	if (error != NULL)
		json_object_set_new(o, "error", jtext(error));
	return o;
}

static int
is_secret(const struct change_req *rq, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(rq->secret, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

/* A value quoted for a one-line message, shortened, secrets masked. */
static void
show_value(struct buf *b, const struct change_req *rq, const char *name,
    const char *v)
{
	size_t i;
	unsigned char ch;

	if (v == NULL) {
		buf_addstr(b, "unset");
		return;
	}
	if (is_secret(rq, name)) {
		buf_addstr(b, "'********'");
		return;
	}
	buf_addch(b, '\'');
	for (i = 0; v[i] != '\0' && i < SHOW_MAX; i++) {
		ch = (unsigned char)v[i];
		if (ch < 0x20 || ch == 0x7f)
			buf_addf(b, "\\x%02x", ch);
		else if (ch == '\'' || ch == '\\')
			buf_addf(b, "\\%c", ch);
		else
			buf_addch(b, ch);
	}
	if (v[i] != '\0')
		buf_addstr(b, "...");
	buf_addch(b, '\'');
}

/*
 * Why the probe is not what the request wants, as a heap string: the
 * start-up exception, or the first variable that differs; NULL when all
 * is as wanted.
 */
static char *
probe_problem(const struct probe *p, const struct change_req *rq)
{
	struct buf b = ENVCTL_BUF_INIT;
	const json_t *want;
	const char *name, *got;
	size_t bad = 0;

	if (p->startup_message != NULL)
		return xstrdup(p->startup_exception != NULL &&
		    p->startup_exception[0] != '\0' ? p->startup_exception :
		    p->startup_message);
	json_object_foreach((json_t *)rq->want, name, want) {
		got = json_string_value(json_object_get(p->values, name));
		if (got != NULL && strcmp(got, json_string_value(want)) == 0)
			continue;
		if (bad++ > 0)
			continue;
		buf_addf(&b, "%s is ", name);
		show_value(&b, rq, name, got);
		buf_addstr(&b, ", want ");
		show_value(&b, rq, name, json_string_value(want));
	}
	if (bad > 1)
		buf_addf(&b, " (and %zu more)", bad - 1);
	if (bad == 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* A probe failure that the file under test may cause (it hung, it
 * exited) becomes its problem; not being able to run the interpreter
 * stays what it is. */
static int
file_caused(const struct err *e)
{
	return e->code == ENVCTL_ETIMEOUT ||
	    (e->code == ENVCTL_EPROBE && e->cause == 0);
}

/* Removes path and what is under it (a few levels), best effort. */
static void
remove_tree_at(int dfd, const char *name, int depth)
{
	struct dirent *de;
	DIR *dp;
	int fd;

	if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR &&
	    errno != EPERM) || depth > RM_DEPTH)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(dp)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			remove_tree_at(dirfd(dp), de->d_name, depth + 1);
	closedir(dp);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

static int
write_file(const char *path, const char *data, size_t len)
{
	ssize_t n;
	int fd, e;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	while (len > 0) {
		if ((n = write(fd, data, len)) == -1) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return close(fd);
}

/*
 * Removes the validation directories ("envctl-validate.PID.*", ours) of
 * agents that died during validation: they hold a copy of a candidate,
 * maybe with secret values.  A live PID's (or a reused one's) is kept.
 */
static void
remove_stale_validations(const char *tmpdir)
{
	static const char prefix[] = "envctl-validate.";
	struct dirent *de;
	struct stat st;
	char *end;
	long pid;
	DIR *dp;

	if ((dp = opendir(tmpdir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, prefix, sizeof(prefix) - 1) != 0)
			continue;
		pid = strtol(de->d_name + sizeof(prefix) - 1, &end, 10);
		if (pid <= 0 || *end != '.' || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(dp), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    st.st_uid == geteuid())
			remove_tree_at(dirfd(dp), de->d_name, 0);
	}
	closedir(dp);
}

/*
 * A new private directory in parent ("envctl-validate.PID.XXXXXX"), after
 * removing dead agents' ones there; NULL with errno set.
 */
static char *
validation_dir(const char *parent)
{
	char *tmpl;

	remove_stale_validations(parent);
	tmpl = xasprintf("%s/envctl-validate.%ld.XXXXXX", parent,
	    (long)getpid());
	if (mkdtemp(tmpl) != NULL)
		return tmpl;
	free(tmpl);
	return NULL;
}

/*
 * Runs the candidate as sitecustomize.py from a private directory put
 * first on PYTHONPATH: in the agent's cache when it has one (a few
 * entries to look through for dead agents' directories, where $TMPDIR may
 * hold thousands), else in $TMPDIR.  ENVCTL_EVERIFY when it fails, is not
 * the module imported or gives other values; *vj gets what the run showed.
 */
static int
validate(json_t **vj, struct change *c, struct err *err)
{
	const char *tmpdir = getenv("TMPDIR"), *cdir;
	struct probe p;
	char *tmpl = NULL, *dir = NULL, *file = NULL, *env[3] = { NULL };
	char *imp = NULL, *why;
	int r = 0;

	memset(&p, 0, sizeof(p));
	buf_init(&p.errtext, 0);
	if (tmpdir == NULL || tmpdir[0] != '/')
		tmpdir = "/tmp";
	if ((cdir = cache_dir(c->ctx->cache)) != NULL)
		tmpl = validation_dir(cdir);
	if (tmpl == NULL && (tmpl = validation_dir(tmpdir)) == NULL) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot make a "
		    "directory to validate the new file in '%s'", tmpdir);
		goto out;
	}
	if ((dir = realpath(tmpl, NULL)) == NULL)
		dir = xstrdup(tmpl);
	file = xasprintf("%s/" CANDIDATE, dir);
	if (write_file(file, c->rq.data.data, c->rq.data.len) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot write '%s'",
		    file);
		goto out;
	}
	env[0] = xasprintf("PYTHONPATH=%s", dir);
	env[1] = xstrdup("PYTHONDONTWRITEBYTECODE=1");
	r = run_probe(&p, c, env, 0, 0, err);
	if (r != 0) {
		*vj = verify_json(&p, err->msg);
		if (file_caused(err)) {
			err_context(err, "the new file does not work");
			r = err->code = ENVCTL_EVERIFY;
		}
		goto out;
	}
	*vj = verify_json(&p, NULL);
	if (p.startup_message != NULL) {
		why = probe_problem(&p, &c->rq);
		r = err_set(err, ENVCTL_EVERIFY, "the new file does not work: "
		    "%s", why);
		free(why);
		goto out;
	}
	if (p.imported != NULL && (imp = realpath(p.imported, NULL)) == NULL)
		imp = xstrdup(p.imported);
	if (imp == NULL || strcmp(imp, file) != 0) {
		r = err_set(err, ENVCTL_EVERIFY, "cannot validate the new "
		    "file: %s imported %s%s%s instead (does it replace "
		    "PYTHONPATH?)", c->rq.interp, imp != NULL ? "'" : "",
		    imp != NULL ? imp : "no sitecustomize",
		    imp != NULL ? "'" : "");
		goto out;
	}
	if ((why = probe_problem(&p, &c->rq)) != NULL) {
		r = err_set(err, ENVCTL_EVERIFY, "the new file does not work: "
		    "%s", why);
		free(why);
	}
out:
	if (tmpl != NULL)
		remove_tree_at(AT_FDCWD, tmpl, 0);
	free(tmpl);
	free(dir);
	free(file);
	free(imp);
	free(env[0]);
	free(env[1]);
	probe_release(&p);
	return r;
}

/*
 * Runs the probe in the plain clean environment and compares it with the
 * request; returns why it is not as wanted (heap), or NULL.  *vj gets the
 * run.  A probe that cannot even start is a reason too.
 */
static char *
verify(json_t **vj, const struct change *c)
{
	struct err perr = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct probe p;
	char *why;

	/*
	 * The verification is the last run of an apply or a rollback.  The
	 * fork server does a last run itself, as the agent's own child; a
	 * restored backup was never validated and may kill its parent, so
	 * a rollback's gets a child of its own.
	 */
	if (run_probe(&p, c, NULL, strcmp(c->rq.op, "rollback") != 0, 0,
	    &perr) != 0) {
		buf_addstr(&msg, perr.msg);
		if (perr.cause != 0)
			buf_addf(&msg, ": %s", strerror(perr.cause));
		*vj = verify_json(&p, msg.data);
		why = buf_detach(&msg, NULL);
	} else {
		*vj = verify_json(&p, NULL);
		why = probe_problem(&p, &c->rq);
	}
	probe_release(&p);
	err_release(&perr);
	buf_release(&msg);
	return why;
}

/* ---- steps ---- */

static void
change_init(struct change *c, const char *op, const struct agent_ctx *ctx)
{
	memset(c, 0, sizeof(*c));
	c->rq.op = op;
	buf_init(&c->rq.expect, ENVCTL_TARGET_MAX);
	buf_init(&c->rq.data, ENVCTL_TARGET_MAX);
	buf_init(&c->t0.data, 0);
	buf_init(&c->cur.data, 0);
	c->ctx = ctx;
	c->lk.fd = -1;
	c->dir.fd = -1;
	c->bs.fd = -1;
}

static void
change_release(struct change *c)
{
	lock_release(&c->lk);
	install_dir_close(&c->dir);
	backup_close(&c->bs);
	target_release(&c->t0);
	target_release(&c->cur);
	buf_release(&c->rq.expect);
	buf_release(&c->rq.data);
	free(c->rq.names);
}

/*
 * Resolve, lock, clean stale temps, compare and swap: afterwards c->cur
 * is what the controller read, and it stays so while the lock is held.
 */
static int
change_begin(struct change *c, struct err *err)
{
	struct lock_spec ls;
	int r;

	if ((r = target_read(&c->t0, c->rq.path, err)) != 0)
		return r;
	memset(&ls, 0, sizeof(ls));
	ls.real = c->t0.real;
	ls.dir = c->rq.lock_dir;
	ls.fallback = c->rq.backup_root;
	ls.controller = c->rq.controller;
	ls.timeout_ms = c->rq.lock_timeout_ms;
	ls.stop = c->ctx->stop;
	ls.waitmask = c->ctx->waitmask;
	if ((r = lock_acquire(&c->lk, &ls, err)) != 0)
		return r;
	install_fault(c->rq.fault, "after-lock");
	if ((r = install_dir_open(&c->dir, c->t0.real, err)) != 0 ||
	    (r = install_clean_temps(&c->dir, NULL, err)) != 0 ||
	    (r = target_read(&c->cur, c->rq.path, err)) != 0)
		return r;
	if (strcmp(c->cur.real, c->t0.real) != 0)
		return err_set(err, ENVCTL_ECHANGED, "'%s' changed since it "
		    "was read (it now leads to '%s')", c->rq.path,
		    c->cur.real);
	if (c->cur.exists != c->rq.expect_exists)
		return c->cur.exists ?
		    err_set(err, ENVCTL_ECHANGED, "'%s' changed since it was "
		    "read (now %zu bytes)", c->cur.real, c->cur.data.len) :
		    err_set(err, ENVCTL_ECHANGED, "'%s' changed since it was "
		    "read (now absent)", c->cur.real);
	if (c->cur.exists && !buf_same(&c->cur.data, c->rq.expect.data,
	    c->rq.expect.len))
		return err_set(err, ENVCTL_ECHANGED, "'%s' changed since it "
		    "was read (now %zu bytes)", c->cur.real, c->cur.data.len);
	install_fault(c->rq.fault, "after-cas");
	return 0;
}

/*
 * Backs c->cur up, or names the newest backup when it holds c->cur
 * already (c->bmade 0); *meta gets that backup's metadata.
 */
static int
backup_current(json_t **meta, struct change *c, struct err *err)
{
	struct backup_info bi;
	int r;

	if ((r = backup_open(&c->bs, c->rq.backup_root, c->cur.real, 1,
	    err)) != 0)
		return r;
	memset(&bi, 0, sizeof(bi));
	bi.op = c->rq.op;
	bi.path = c->rq.path;
	bi.real = c->cur.real;
	bi.exists = c->cur.exists;
	bi.data = c->cur.data.data;
	bi.len = c->cur.data.len;
	bi.mode = c->cur.mode;
	bi.uid = c->cur.uid;
	bi.gid = c->cur.gid;
	bi.sha256 = c->rq.sha_old;
	bi.playbook = c->rq.playbook;
	bi.controller = c->rq.controller;
	if ((r = backup_save(meta, &c->bmade, &c->bs, &bi, err)) != 0)
		return r;
	install_fault(c->rq.fault, "after-backup");
	return 0;
}

static json_t *
backup_ref(const struct change *c, const json_t *meta)
{
	const char *id = json_string_value(json_object_get(meta, "id"));
	char *path = backup_path(&c->bs, id);
	json_t *o = json_pack("{s:s,s:o}", "id", id, "path", jtext(path));

	free(path);
	return o;
}

/* Python may have cached the old code beside the path it imports. */
static void
drop_pycache(const struct change *c)
{
	install_drop_pycache(c->rq.path, ENVCTL_INSTALL_ANY_OWNER);
	if (strcmp(c->rq.path, c->cur.real) != 0)
		install_drop_pycache(c->cur.real, ENVCTL_INSTALL_ANY_OWNER);
}

/*
 * Installs data (or removes the target when !exists) with mode and owner;
 * on a failure before the rename, deletes the backup made for it (not
 * one it reused).
 */
static int
put(struct change *c, int exists, const char *data, size_t len,
    mode_t mode, uid_t uid, gid_t gid, const json_t *bmeta,
    const char *fault, struct err *err)
{
	int r, renamed;

	if (exists)
		r = install_replace(&c->dir, data, len, mode, uid, gid, fault,
		    &renamed, err);
	else
		r = install_remove(&c->dir, fault, &renamed, err);
	if (r != 0 && !renamed && bmeta != NULL && c->bmade)
		backup_delete(&c->bs, json_string_value(json_object_get(bmeta,
		    "id")), NULL);
	if (r == 0 || renamed)
		drop_pycache(c);
	return r;
}

/* 0 when the target holds what backup meta recorded, else EVERIFY. */
static int
check_restored(const struct change *c, const json_t *meta,
    const struct buf *data, struct err *err)
{
	const char *id = json_string_value(json_object_get(meta, "id"));
	int absent = json_is_true(json_object_get(meta, "absent"));
	struct target t;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int r;

	if ((r = target_read(&t, c->cur.real, err)) != 0) {
		err_context(err, "cannot check the restored '%s'",
		    c->cur.real);
		goto out;
	}
	if (absent || !t.exists) {
		if (absent != !t.exists)
			r = err_set(err, ENVCTL_EVERIFY, "'%s' does not hold "
			    "backup '%s' after the restore: it %s", t.real, id,
			    absent ? "still exists" : "is missing");
		goto out;
	}
	mode = (mode_t)json_integer_value(json_object_get(meta, "mode"));
	uid = (uid_t)json_integer_value(json_object_get(meta, "uid"));
	gid = (gid_t)json_integer_value(json_object_get(meta, "gid"));
	if (!buf_same(&t.data, data->data, data->len))
		r = err_set(err, ENVCTL_EVERIFY, "'%s' does not hold backup "
		    "'%s' after the restore: the bytes differ", t.real, id);
	else if (t.mode != mode)
		r = err_set(err, ENVCTL_EVERIFY, "'%s' does not hold backup "
		    "'%s' after the restore: mode %04o, want %04o", t.real, id,
		    (unsigned)t.mode, (unsigned)mode);
	else if (t.uid != uid || t.gid != gid)
		r = err_set(err, ENVCTL_EVERIFY, "'%s' does not hold backup "
		    "'%s' after the restore: owner %lu:%lu, want %lu:%lu",
		    t.real, id, (unsigned long)t.uid, (unsigned long)t.gid,
		    (unsigned long)uid, (unsigned long)gid);
out:
	target_release(&t);
	return r;
}

/*
 * Puts back what the backup meta holds after a failed verification;
 * ENVCTL_E* when that did not work.
 */
static int
restore(struct change *c, const json_t *meta, struct err *err)
{
	struct buf data;
	int absent = json_is_true(json_object_get(meta, "absent")), r;

	buf_init(&data, ENVCTL_TARGET_MAX);
	if (!absent && (r = backup_load(&data, &c->bs, meta, err)) != 0)
		goto out;
	if (!buf_same(&data, c->cur.data.data, c->cur.data.len)) {
		r = err_set(err, ENVCTL_EVERIFY, "backup '%s' differs from "
		    "the file it saved", json_string_value(json_object_get(meta,
		    "id")));
		goto out;
	}
	if ((r = put(c, !absent, data.data, data.len, c->cur.mode,
	    c->cur.uid, c->cur.gid, NULL, NULL, err)) != 0)
		goto out;
	r = check_restored(c, meta, &data, err);
out:
	buf_release(&data);
	return r;
}

/* Prunes; a failure is a warning in the reply, since the change is done. */
static void
prune(json_t *reply, struct change *c)
{
	struct err perr = ENVCTL_ERR_INIT;
	json_t *e;

	if (backup_prune(&c->bs, c->rq.keep, &perr) == 0)
		return;
	e = proto_error_reply(0, &perr);
	json_object_set_new(reply, "warnings", json_pack("[O]",
	    json_object_get(e, "message")));
	json_decref(e);
	err_release(&perr);
}

/*
 * After a restore that worked: deletes the backup made for the change,
 * so that the store is as it was (the restored file is in place and its
 * directory synced, so the backup is no longer its only copy).  A
 * failure is a warning in detail; a crash first leaves one more backup.
 */
static void
forget_backup(json_t *detail, struct change *c, const json_t *meta)
{
	struct err perr = ENVCTL_ERR_INIT;
	json_t *e;

	if (!c->bmade) {
		json_object_set_new(detail, "backup", backup_ref(c, meta));
		return;
	}
	if (backup_delete(&c->bs, json_string_value(json_object_get(meta,
	    "id")), &perr) == 0)
		return;
	json_object_set_new(detail, "backup", backup_ref(c, meta));
	e = proto_error_reply(0, &perr);
	json_object_set_new(detail, "warnings", json_pack("[O]",
	    json_object_get(e, "message")));
	json_decref(e);
	err_release(&perr);
}

/* ---- apply ---- */

/*
 * 1 when the compare and swap failed because another run installed
 * exactly these bytes meanwhile (under the same real path).
 */
static int
converged_meanwhile(const struct change *c)
{
	return c->cur.real != NULL && c->t0.real != NULL &&
	    strcmp(c->cur.real, c->t0.real) == 0 && c->cur.exists &&
	    buf_same(&c->cur.data, c->rq.data.data, c->rq.data.len);
}

/* The file already holds the new bytes: only check that they work. */
static int
apply_unchanged(json_t *reply, struct change *c, struct err *err)
{
	json_t *vj = NULL;
	char *why;
	int r = 0;

	drop_pycache(c);
	if ((why = verify(&vj, c)) != NULL) {
		r = err_set(err, ENVCTL_EVERIFY, "'%s' already holds the new "
		    "bytes, but %s", c->cur.real, why);
		json_object_set_new(reply, "detail", json_pack("{s:s,s:b,"
		    "s:b,s:O}", "stage", "verify", "changed", 0, "restored",
		    0, "verify", vj));
	} else {
		json_object_set_new(reply, "changed", json_false());
		json_object_set_new(reply, "real", jtext(c->cur.real));
		json_object_set(reply, "verify", vj);
	}
	json_decref(vj);
	free(why);
	return r;
}

int
op_apply(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct change c;
	struct policy pol = POLICY_INIT;
	struct err rerr = ENVCTL_ERR_INIT;
	json_t *vj = NULL, *meta = NULL, *detail;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	char *why = NULL;
	int r;

	change_init(&c, "apply", ctx);
	c.fork = 1;	/* validation and verification: two runs */
	if ((r = parse_apply(&c.rq, req, err)) != 0 ||
	    (r = check_policy(&pol, &c, err)) != 0)
		goto out;
	if ((r = change_begin(&c, err)) != 0) {
		if (r != ENVCTL_ECHANGED || !converged_meanwhile(&c))
			goto out;
		/* The loser of two applies: the winner's bytes are ours. */
		err_release(err);
		if ((r = apply_unchanged(reply, &c, err)) == 0)
			json_object_set_new(reply, "note", json_string(
			    "already as desired; changed by another run "
			    "meanwhile"));
		goto out;
	}
	if (c.cur.exists && buf_same(&c.cur.data, c.rq.data.data,
	    c.rq.data.len)) {
		r = apply_unchanged(reply, &c, err);
		goto out;
	}
	if ((r = validate(&vj, &c, err)) != 0) {
		if (vj != NULL)
			json_object_set_new(reply, "detail", json_pack(
			    "{s:s,s:O}", "stage", "validate", "verify", vj));
		goto out;
	}
	json_decref(vj);
	vj = NULL;
	install_fault(c.rq.fault, "after-validate");
	if ((r = backup_current(&meta, &c, err)) != 0)
		goto out;
	mode = c.cur.exists ? c.cur.mode : c.rq.create_mode;
	uid = c.cur.exists ? c.cur.uid : c.rq.create_uid;
	gid = c.cur.exists ? c.cur.gid : c.rq.create_gid;
	if ((r = put(&c, 1, c.rq.data.data, c.rq.data.len, mode, uid, gid,
	    meta, c.rq.fault, err)) != 0)
		goto out;
	if ((why = verify(&vj, &c)) != NULL) {
		detail = json_pack("{s:s,s:b,s:O}", "stage", "verify",
		    "changed", 0, "verify", vj);
		if (restore(&c, meta, &rerr) == 0) {
			json_object_set_new(detail, "restored", json_true());
			r = err_set(err, ENVCTL_EVERIFY, "verification "
			    "failed: %s; the previous file was restored", why);
			/*
			 * The store as it was: a host whose file is shadowed
			 * fails every drift --fix the same way, and no try
			 * may push an older version out.
			 */
			forget_backup(detail, &c, meta);
		} else {
			/* The backup is now the old file's only copy. */
			json_object_set_new(detail, "backup", backup_ref(&c,
			    meta));
			json_object_set_new(detail, "restored", json_false());
			json_object_set_new(detail, "changed", json_true());
			r = err_set(err, ENVCTL_EVERIFY, "verification "
			    "failed: %s; restoring the previous file failed "
			    "too: %s%s%s", why, rerr.msg, rerr.cause != 0 ?
			    ": " : "", rerr.cause != 0 ? strerror(rerr.cause) :
			    "");
		}
		json_object_set_new(reply, "detail", detail);
		goto out;
	}
	install_fault(c.rq.fault, "after-verify");
	prune(reply, &c);
	json_object_set_new(reply, "changed", json_true());
	json_object_set_new(reply, "backup", backup_ref(&c, meta));
	json_object_set_new(reply, "real", jtext(c.cur.real));
	json_object_set(reply, "verify", vj);
out:
	json_decref(vj);
	json_decref(meta);
	free(why);
	err_release(&rerr);
	policy_release(&pol);
	change_release(&c);
	return r;
}

/* ---- rollback ---- */

/* "a, b, c" of the newest backups' ids, for a message. */
static char *
newest_ids(const json_t *list)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < json_array_size(list) && i < NEWEST_SHOWN; i++)
		buf_addf(&b, "%s%s", i > 0 ? ", " : "",
		    json_string_value(json_object_get(json_array_get(list, i),
		    "id")));
	return buf_detach(&b, NULL);
}

/* 1 when the backup meta with data is what c->cur is. */
static int
same_as_current(const struct change *c, const json_t *meta,
    const struct buf *data)
{
	if (json_is_true(json_object_get(meta, "absent")))
		return !c->cur.exists;
	return c->cur.exists && buf_same(&c->cur.data, data->data, data->len);
}

/*
 * Finds the backup to restore: rq.to, or for "latest" the newest whose
 * bytes differ from the current file.  *meta gets it (new reference) and
 * data its bytes.  ENVCTL_ENOTFOUND.
 */
static int
choose(json_t **meta, struct buf *data, struct change *c, struct err *err)
{
	json_t *list = NULL, *m;
	char *ids = NULL;
	size_t i;
	int r;

	*meta = NULL;
	if ((r = backup_open(&c->bs, c->rq.backup_root, c->cur.real, 0,
	    err)) != 0 || (r = backup_list(&list, NULL, &c->bs, err)) != 0)
		goto out;
	json_array_foreach(list, i, m) {
		if (strcmp(c->rq.to, "latest") != 0 &&
		    strcmp(c->rq.to, json_string_value(json_object_get(m,
		    "id"))) != 0)
			continue;
		buf_reset(data);
		if (!json_is_true(json_object_get(m, "absent")) &&
		    (r = backup_load(data, &c->bs, m, err)) != 0)
			goto out;
		if (strcmp(c->rq.to, "latest") == 0 &&
		    same_as_current(c, m, data))
			continue;
		*meta = json_incref(m);
		goto out;
	}
	ids = newest_ids(list);
	if (json_array_size(list) == 0)
		r = err_set(err, ENVCTL_ENOTFOUND, "no backups of '%s' in "
		    "'%s'", c->cur.real, c->rq.backup_root);
	else if (strcmp(c->rq.to, "latest") == 0)
		r = err_set(err, ENVCTL_ENOTFOUND, "no backup of '%s' differs "
		    "from the current file (newest: %s)", c->cur.real, ids);
	else
		r = err_set(err, ENVCTL_ENOTFOUND, "no backup '%s' of '%s' "
		    "(newest: %s)", c->rq.to, c->cur.real, ids);
out:
	json_decref(list);
	free(ids);
	return r;
}

int
op_rollback(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct change c;
	struct policy pol = POLICY_INIT;
	struct buf data;
	json_t *chosen = NULL, *meta = NULL, *vj = NULL;
	const char *id;
	char *why;
	int r, absent;

	change_init(&c, "rollback", ctx);
	buf_init(&data, ENVCTL_TARGET_MAX);
	if ((r = parse_rollback(&c.rq, req, err)) != 0 ||
	    (r = check_policy(&pol, &c, err)) != 0 ||
	    (r = change_begin(&c, err)) != 0 ||
	    (r = choose(&chosen, &data, &c, err)) != 0)
		goto out;
	id = json_string_value(json_object_get(chosen, "id"));
	absent = json_is_true(json_object_get(chosen, "absent"));
	json_object_set_new(reply, "restored", json_string(id));
	if (same_as_current(&c, chosen, &data) && (absent ||
	    (c.cur.mode == json_integer_value(json_object_get(chosen,
	    "mode")) && c.cur.uid == json_integer_value(json_object_get(
	    chosen, "uid")) && c.cur.gid == json_integer_value(
	    json_object_get(chosen, "gid"))))) {
		json_object_set_new(reply, "changed", json_false());
	} else {
		backup_close(&c.bs);
		if ((r = backup_current(&meta, &c, err)) != 0 ||
		    (r = put(&c, !absent, data.data, data.len, (mode_t)
		    json_integer_value(json_object_get(chosen, "mode")),
		    (uid_t)json_integer_value(json_object_get(chosen, "uid")),
		    (gid_t)json_integer_value(json_object_get(chosen, "gid")),
		    meta, c.rq.fault, err)) != 0 ||
		    (r = check_restored(&c, chosen, &data, err)) != 0)
			goto out;
		json_object_set_new(reply, "changed", json_true());
		json_object_set_new(reply, "backup", backup_ref(&c, meta));
	}
	/* A start-up error of the restored file is reported, not fatal. */
	why = verify(&vj, &c);
	free(why);
	install_fault(c.rq.fault, "after-verify");
	if (meta != NULL)
		prune(reply, &c);
	json_object_set_new(reply, "real", jtext(c.cur.real));
	json_object_set(reply, "verify", vj);
out:
	json_decref(vj);
	json_decref(chosen);
	json_decref(meta);
	buf_release(&data);
	policy_release(&pol);
	change_release(&c);
	return r;
}
