/* change.c - the steps of a change to a managed file (see change.h). */
#include "change.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backup.h"
#include "cache.h"
#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "install.h"
#include "ops.h"
#include "policy.h"
#include "probe.h"
#include "request.h"

#define CANDIDATE	"sitecustomize.py"
#define SHOW_MAX	80	/* bytes of a value quoted in a message */
#define RM_DEPTH	16
#define RUN_MIN_MS	1000	/* an interpreter run's least budget */

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

/* The target and what the controller read there. */
static int
parse_target(struct change_req *rq, const json_t *req, struct err *err)
{
	const char *op = rq->op;
	const json_t *v, *e;
	int r;

	if ((r = req_path(&rq->path, json_object_get(req, "path"), 0, op,
	    "path", err)) != 0)
		return r;
	e = json_object_get(req, "expect");
	if (!json_is_object(e) ||
	    !json_is_boolean(json_object_get(e, "exists")))
		return err_set(err, ENVCTL_EINVALID, "%s: 'expect' must be an "
		    "object with a boolean 'exists'", op);
	rq->expect_exists = json_is_true(json_object_get(e, "exists"));
	if (rq->expect_exists && (r = req_bytes(&rq->expect,
	    json_object_get(e, "data"), ENVCTL_TARGET_MAX, op, "expect.data",
	    err)) != 0)
		return r;
	v = json_object_get(req, "sha256_old");
	if (rq->expect_exists) {
		if (!req_sha256(v))
			return err_set(err, ENVCTL_EINVALID, "%s: 'sha256_old' "
			    "must be a SHA-256 in lowercase hex when "
			    "'expect.exists' is true", op);
		rq->sha_old = json_string_value(v);
	} else if (v != NULL && !json_is_null(v))
		return err_set(err, ENVCTL_EINVALID, "%s: 'sha256_old' must "
		    "be null when 'expect.exists' is false", op);
	return 0;
}

/* The fields apply and rollback share. */
int
change_parse(struct change_req *rq, const json_t *req, struct err *err)
{
	const json_t *v, *e, *b;
	const char *op = rq->op;
	size_t i;
	int r, keep;

	if ((r = parse_fault(rq, req, err)) != 0 ||
	    (r = req_interpreter(&rq->interp, req, op, err)) != 0 ||
	    (r = req_also(&rq->also, &rq->nalso, req, op, err)) != 0)
		return r;
	v = json_object_get(req, "after_read");
	if (v == NULL || json_is_null(v)) {
		if ((r = parse_target(rq, req, err)) != 0)
			return r;
	} else if (strcmp(op, "apply") != 0 || !json_is_integer(v) ||
	    json_integer_value(v) < 1)
		return err_set(err, ENVCTL_EINVALID, "%s: 'after_read' must "
		    "be a read's id (apply only)", op);
	else if (json_object_get(req, "path") != NULL ||
	    json_object_get(req, "expect") != NULL ||
	    json_object_get(req, "sha256_old") != NULL)
		return err_set(err, ENVCTL_EINVALID, "%s: with 'after_read', "
		    "'path', 'expect' and 'sha256_old' come from the read", op);
	else
		rq->after_read = json_integer_value(v);
	b = json_object_get(req, "backup");
	if ((r = req_path(&rq->backup_root, json_object_get(b, "dir"), 0, op,
	    "backup.dir", err)) != 0)
		return r;
	v = json_object_get(b, "keep");
	keep = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > ENVCTL_BACKUP_KEEP_MAX)
		return err_set(err, ENVCTL_EINVALID, "%s: 'backup.keep' must "
		    "be an integer from 1 to %d", op, ENVCTL_BACKUP_KEEP_MAX);
	rq->keep = (size_t)keep;

	if (!req_label(json_object_get(req, "playbook")) ||
	    !req_label(json_object_get(req, "controller")))
		return err_set(err, ENVCTL_EINVALID, "%s: 'playbook' and "
		    "'controller' must be strings of 1 to %d printable bytes",
		    op, ENVCTL_REQ_LABEL_MAX);
	rq->playbook = json_string_value(json_object_get(req, "playbook"));
	rq->controller = json_string_value(json_object_get(req,
	    "controller"));
	if ((r = req_path(&rq->lock_dir, json_object_get(req, "lock_dir"), 1,
	    op, "lock_dir", err)) != 0 ||
	    (r = req_int(&rq->lock_timeout_ms, req, "lock_timeout_ms",
	    ENVCTL_APPLY_LOCK_TIMEOUT_MS, 0, ENVCTL_APPLY_TIMEOUT_MAX, op,
	    err)) != 0 ||
	    (r = req_int(&rq->timeout_ms, req, "timeout_ms",
	    ENVCTL_APPLY_TIMEOUT_MS, 1, ENVCTL_APPLY_TIMEOUT_MAX, op,
	    err)) != 0)
		return r;
	v = json_object_get(req, "secret");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v))
			return err_set(err, ENVCTL_EINVALID, "%s: 'secret' "
			    "must be an array of variable names", op);
		json_array_foreach(v, i, e)
			if (!json_is_string(e) || !req_name_ok(
			    json_string_value(e), json_string_length(e)))
				return err_set(err, ENVCTL_EINVALID, "%s: "
				    "'secret' must be an array of variable "
				    "names", op);
		rq->secret = v;
	}
	return 0;
}

/*
 * What one interpreter run may take: rq.timeout_ms is the whole change's
 * budget on the host, from the op's start; a run before the lock (the
 * policy's probes) gets a third of what is left, and once the lock is
 * held each run gets an equal share of what the lock wait left
 * (change_begin()): per interpreter the validation and the verification,
 * and one to spare, so that a file that hangs is named by the agent
 * before the controller's deadline.  Rounded down to 100 ms, at least
 * RUN_MIN_MS.
 */
static int
run_budget(const struct change *c)
{
	long long left = c->start + c->rq.timeout_ms - deadline_now_ms();

	if (c->run_ms > 0)
		return c->run_ms;
	/* Whole tenths of a second: the messages name the figure. */
	left = left / (c->lk.fd == -1 ? 3 : (long long)(2 * (1 + c->rq.nalso)
	    + 1)) / 100 * 100;
	return left < RUN_MIN_MS ? RUN_MIN_MS : (int)left;
}

/* Interpreter k of the change: 0 the request's, then also[k - 1]. */
static const char *
interp_at(const struct change *c, size_t k)
{
	return k == 0 ? c->rq.interp : c->rq.also[k - 1];
}

/*
 * Runs interpreter k.  last: no run follows in this session (see
 * probe_args).  find: where start-up fails, learn the target all the same
 * (probe_find()).  The fork server is the first interpreter's: the others
 * run afresh, and do not stop it.
 */
static int
run_probe(struct probe *p, const struct change *c, size_t k,
    char *const *env_extra, int last, int find, struct err *err)
{
	struct probe_args pa;

	memset(&pa, 0, sizeof(pa));
	pa.interp = interp_at(c, k);
	pa.names = c->rq.names;
	pa.nnames = c->rq.nnames;
	pa.env_extra = env_extra;
	pa.timeout_ms = run_budget(c);
	pa.stop = c->ctx->stop;
	pa.waitmask = c->ctx->waitmask;
	pa.cache = c->ctx->cache;
	pa.fs = k == 0 ? c->ctx->fs : NULL;
	pa.start_fs = k == 0 && c->fork;
	pa.last = k == 0 && last;
	return find ? probe_find(p, &pa, err) : probe_run(p, &pa, err);
}

/*
 * A privileged agent's checks (policy.h) of the interpreter, the backup
 * and lock directories and the target: one interpreter run tells which
 * sitecustomize the interpreter imports.  Unprivileged: nothing.
 */
int
change_policy(struct policy *pol, struct change *c, struct err *err)
{
	struct probe p;
	size_t k;
	int r;

	if ((r = policy_open(pol, err)) != 0 || !pol->privileged)
		return r;
	if ((r = policy_backup_dir(pol, c->rq.backup_root, err)) != 0 ||
	    (r = policy_lock_dir(pol, c->rq.lock_dir, err)) != 0)
		return r;
	/* Each interpreter is root's, and imports this target. */
	for (k = 0; r == 0 && k <= c->rq.nalso; k++) {
		if ((r = policy_interpreter(pol, k == 0 ? &c->rq.interp :
		    &c->rq.also[k - 1], err)) != 0)
			break;
		memset(&p, 0, sizeof(p));
		buf_init(&p.errtext, 0);
		if ((r = run_probe(&p, c, k, NULL, 0, 1, err)) == 0)
			r = policy_target(pol, c->rq.path, &p, err);
		probe_release(&p);
	}
	return r;
}

/* {"values", "startup_error", "imported"}, and "error" when it failed. */
static json_t *
verify_json(const struct probe *p, const char *error)
{
	json_t *o = json_object(), *se = json_null();

	if (p->startup_message != NULL)
		se = json_pack("{s:o,s:o}", "message",
		    proto_text_or_null(p->startup_message), "exception",
		    proto_text_or_null(p->startup_exception));
	json_object_set_new(o, "values", p->values != NULL ?
	    json_incref(p->values) : json_object());
	json_object_set_new(o, "startup_error", se);
	json_object_set_new(o, "imported", proto_text_or_null(p->imported));
	json_object_set_new(o, "forked", json_boolean(p->forked));
	if (error != NULL)
		json_object_set_new(o, "error", proto_text_or_null(error));
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

char *
change_probe_problem(const struct probe *p, const struct change_req *rq)
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
validate_one(json_t **vj, struct change *c, size_t k, struct err *err)
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
	r = run_probe(&p, c, k, env, 0, 0, err);
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
		why = change_probe_problem(&p, &c->rq);
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
		    "PYTHONPATH?)", interp_at(c, k), imp != NULL ? "'" : "",
		    imp != NULL ? imp : "no sitecustomize",
		    imp != NULL ? "'" : "");
		goto out;
	}
	if ((why = change_probe_problem(&p, &c->rq)) != NULL) {
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

int
change_validate(json_t **vj, struct change *c, struct err *err)
{
	size_t k;
	int r = 0;

	for (k = 0; r == 0 && k <= c->rq.nalso; k++) {
		json_decref(*vj);
		*vj = NULL;
		/* A further interpreter is named, where it is not yet. */
		if ((r = validate_one(vj, c, k, err)) != 0 && k > 0 &&
		    strstr(err->msg, interp_at(c, k)) == NULL)
			err_context(err, "in %s", interp_at(c, k));
	}
	return r;
}

static char *
verify_one(json_t **vj, const struct change *c, size_t k)
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
	if (run_probe(&p, c, k, NULL, strcmp(c->rq.op, "rollback") != 0, 0,
	    &perr) != 0) {
		buf_addstr(&msg, perr.msg);
		if (perr.cause != 0)
			buf_addf(&msg, ": %s", strerror(perr.cause));
		*vj = verify_json(&p, msg.data);
		why = buf_detach(&msg, NULL);
	} else {
		*vj = verify_json(&p, NULL);
		why = change_probe_problem(&p, &c->rq);
	}
	probe_release(&p);
	err_release(&perr);
	buf_release(&msg);
	return why;
}

/*
 * Runs the probe of every interpreter in the plain clean environment and
 * compares each with the request; returns why one is not as wanted (heap,
 * naming a further interpreter), or NULL.  *vj gets the first's run (or
 * the failing one's).  A probe that cannot even start is a reason too.
 * The first interpreter runs last: its fork server does that run itself.
 */
char *
change_verify(json_t **vj, const struct change *c)
{
	char *why = NULL, *w;
	size_t k;

	for (k = c->rq.nalso; k > 0 && why == NULL; k--) {
		why = verify_one(vj, c, k);
		if (why == NULL) {
			json_decref(*vj);
			*vj = NULL;
			continue;
		}
		if (strstr(why, interp_at(c, k)) != NULL)
			return why;
		w = xasprintf("in %s: %s", interp_at(c, k), why);
		free(why);
		return w;
	}
	return verify_one(vj, c, 0);
}

void
change_init(struct change *c, const char *op, const struct agent_ctx *ctx)
{
	memset(c, 0, sizeof(*c));
	c->rq.op = op;
	buf_init(&c->rq.expect, ENVCTL_TARGET_MAX);
	buf_init(&c->rq.data, ENVCTL_TARGET_MAX);
	buf_init(&c->t0.data, 0);
	buf_init(&c->cur.data, 0);
	c->ctx = ctx;
	c->start = deadline_now_ms();
	c->lk.fd = -1;
	c->dir.fd = -1;
	c->bs.fd = -1;
}

void
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
	free(c->rq.also);
}

/*
 * Resolve, lock, clean stale temps, compare and swap: afterwards c->cur
 * is what the controller read, and it stays so while the lock is held.
 */
int
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
	c->run_ms = run_budget(c);
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
	if (c->cur.exists && !buf_equal(&c->cur.data, c->rq.expect.data,
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
int
change_backup(json_t **meta, struct change *c, struct err *err)
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

json_t *
change_backup_ref(const struct change *c, const json_t *meta)
{
	const char *id = json_string_value(json_object_get(meta, "id"));
	char *path = backup_path(&c->bs, id);
	json_t *o = json_pack("{s:s,s:o}", "id", id, "path", proto_text_or_null(path));

	free(path);
	return o;
}

/* Python may have cached the old code beside the path it imports. */
void
change_drop_pycache(const struct change *c)
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
int
change_put(struct change *c, int exists, const char *data, size_t len,
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
		change_drop_pycache(c);
	return r;
}

/* 0 when the target holds what backup meta recorded, else EVERIFY. */
int
change_check_restored(const struct change *c, const json_t *meta,
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
	if (!buf_equal(&t.data, data->data, data->len))
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
int
change_restore(struct change *c, const json_t *meta, struct err *err)
{
	struct buf data;
	int absent = json_is_true(json_object_get(meta, "absent")), r;

	buf_init(&data, ENVCTL_TARGET_MAX);
	if (!absent && (r = backup_load(&data, &c->bs, meta, err)) != 0)
		goto out;
	if (!buf_equal(&data, c->cur.data.data, c->cur.data.len)) {
		r = err_set(err, ENVCTL_EVERIFY, "backup '%s' differs from "
		    "the file it saved", json_string_value(json_object_get(meta,
		    "id")));
		goto out;
	}
	if ((r = change_put(c, !absent, data.data, data.len, c->cur.mode,
	    c->cur.uid, c->cur.gid, NULL, NULL, err)) != 0)
		goto out;
	r = change_check_restored(c, meta, &data, err);
out:
	buf_release(&data);
	return r;
}

/* Prunes; a failure is a warning in the reply, since the change is done. */
void
change_prune(json_t *reply, struct change *c)
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
void
change_forget_backup(json_t *detail, struct change *c, const json_t *meta)
{
	struct err perr = ENVCTL_ERR_INIT;
	json_t *e;

	if (!c->bmade) {
		json_object_set_new(detail, "backup", change_backup_ref(c, meta));
		return;
	}
	if (backup_delete(&c->bs, json_string_value(json_object_get(meta,
	    "id")), &perr) == 0)
		return;
	json_object_set_new(detail, "backup", change_backup_ref(c, meta));
	e = proto_error_reply(0, &perr);
	json_object_set_new(detail, "warnings", json_pack("[O]",
	    json_object_get(e, "message")));
	json_decref(e);
	err_release(&perr);
}
