/* playbook.c - load and validate a playbook (see playbook.h). */
#include "playbook.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/selfexe.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/gpufacts.h"
#include "controller/inventory.h"
#include "controller/pylit.h"
#include "controller/template.h"
#include "controller/yamldoc.h"

static const char *const top_keys[] = { "name", "description",
	"interpreter", "interpreters", "services", "processes", "facts",
	"cuda", "path", "mode", "template", "policy", "env", "defaults",
	"backup", "create", NULL };
static const char *const env_keys[] = { "value", "check", "secret",
	"comment", "rule", NULL };
static const char *const rule_keys[] = { "allowed", "case", "min", "max",
	"pattern", "severity", NULL };
static const char *const backup_keys[] = { "dir", "keep", NULL };
static const char *const create_keys[] = { "mode", "owner", "group", NULL };

struct loadctx {
	struct playbook	*pb;
	struct err	*err;
};

static int
bad(struct loadctx *c, int code, const struct ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
bad(struct loadctx *c, int code, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vaddat(c->err, code, c->pb->path, n != NULL ? n->line : 0,
	    n != NULL ? n->col : 0, fmt, ap);
	va_end(ap);
	return code;
}

/* Reports keys of map not in valid; where names the mapping. */
static void
check_keys(struct loadctx *c, const struct ynode *map,
    const char *const *valid, const char *where)
{
	const char *const *v;
	const char *close;
	size_t i;

	for (i = 0; i < map->npairs; i++) {
		const struct ynode *k = map->pairs[i].key;

		for (v = valid; *v != NULL; v++)
			if (strcmp(k->str, *v) == 0)
				break;
		if (*v != NULL)
			continue;
		close = str_closest(k->str, valid);
		if (close != NULL)
			bad(c, ENVCTL_EINVALID, k, "unknown key '%s' in %s "
			    "(did you mean '%s'?)", k->str, where, close);
		else
			bad(c, ENVCTL_EINVALID, k, "unknown key '%s' in %s",
			    k->str, where);
	}
}

static const struct ynode *
want(struct loadctx *c, const struct ynode *map, const char *key,
    enum ynode_type type)
{
	const struct ynode *n = ymap_get(map, key);
	static const char *const names[] = { "a string", "a list",
		"a mapping" };

	if (n == NULL)
		return NULL;
	if (n->type != type || (type == ENVCTL_YSCALAR &&
	    yscalar_kind(n) == ENVCTL_YNULL)) {
		bad(c, ENVCTL_EINVALID, n, "'%s' must be %s, not %s", key,
		    names[type], ynode_describe(n));
		return NULL;
	}
	return n;
}

/* Copies a string-valued key; absent keeps *dst. */
static void
get_string(struct loadctx *c, const struct ynode *map, const char *key,
    char **dst)
{
	const struct ynode *n = want(c, map, key, ENVCTL_YSCALAR);

	if (n == NULL)
		return;
	if (template_has_syntax(n->str, n->len)) {
		bad(c, ENVCTL_EUNSUPPORTED, n, "'%s' cannot be templated",
		    key);
		return;
	}
	free(*dst);
	*dst = xstrdup(n->str);
}

/*
 * Copies a list of at most max non-empty strings (a lone string is a list
 * of one); absent leaves *dst NULL.  Duplicates are dropped: one name is
 * managed once.
 */
static void
get_list(struct loadctx *c, const struct ynode *map, const char *key,
    size_t max, char ***dst, size_t *n)
{
	const struct ynode *v = ymap_get(map, key), *it;
	size_t i, j, cnt;

	if (v == NULL)
		return;
	if (v->type == ENVCTL_YSCALAR && yscalar_kind(v) != ENVCTL_YNULL) {
		cnt = 1;
	} else if (v->type == ENVCTL_YSEQ) {
		cnt = v->nitems;
	} else {
		bad(c, ENVCTL_EINVALID, v, "'%s' must be a list of strings, "
		    "not %s", key, ynode_describe(v));
		return;
	}
	if (cnt == 0 || cnt > max) {
		bad(c, ENVCTL_EINVALID, v, "'%s' must list from 1 to %zu "
		    "entries, not %zu", key, max, cnt);
		return;
	}
	*dst = xcalloc(cnt + 1, sizeof(**dst));
	for (i = 0; i < cnt; i++) {
		it = v->type == ENVCTL_YSEQ ? v->items[i] : v;
		if (!ynode_is_string(it) || it->len == 0 ||
		    strlen(it->str) != it->len) {
			bad(c, ENVCTL_EINVALID, it, "'%s' entries must be "
			    "non-empty strings, not %s", key,
			    ynode_describe(it));
			continue;
		}
		if (template_has_syntax(it->str, it->len)) {
			bad(c, ENVCTL_EUNSUPPORTED, it, "'%s' cannot be "
			    "templated", key);
			continue;
		}
		for (j = 0; j < *n; j++)
			if (strcmp((*dst)[j], it->str) == 0)
				break;
		if (j == *n)
			(*dst)[(*n)++] = xstrdup(it->str);
	}
}

/* facts: [gpu, cuda, nccl, triton]: which host facts to gather. */
static void
load_facts(struct loadctx *c, const struct ynode *root)
{
	char **names = NULL;
	size_t n = 0, i;
	int m;

	get_list(c, root, "facts", 4, &names, &n);
	for (i = 0; i < n; i++) {
		if ((m = gpufacts_fact(names[i])) < 0)
			bad(c, ENVCTL_EINVALID, ymap_get(root, "facts"),
			    "unknown fact '%s' in 'facts' (gpu, cuda, nccl or "
			    "triton)", names[i]);
		else
			c->pb->facts |= (unsigned)m;
		free(names[i]);
	}
	free(names);
}

/* Looks the value of key up in words; returns its index, or dflt after
 * reporting a value that is none of them. */
static int
get_enum(struct loadctx *c, const struct ynode *map, const char *key,
    const char *const *words, int dflt)
{
	const struct ynode *n = want(c, map, key, ENVCTL_YSCALAR);
	struct buf list = ENVCTL_BUF_INIT;
	const char *close;
	int i;

	if (n == NULL)
		return dflt;
	for (i = 0; words[i] != NULL; i++) {
		if (strcmp(n->str, words[i]) == 0) {
			buf_release(&list);
			return i;
		}
		buf_addf(&list, "%s%s", i > 0 ? ", " : "", words[i]);
	}
	if ((close = str_closest(n->str, words)) != NULL)
		bad(c, ENVCTL_EINVALID, n, "invalid %s '%s' (expected one of "
		    "%s; did you mean '%s'?)", key, n->str, list.data, close);
	else
		bad(c, ENVCTL_EINVALID, n, "invalid %s '%s' (expected one of "
		    "%s)", key, n->str, list.data);
	buf_release(&list);
	return dflt;
}

/* Reads min: or max: of a range rule into *dst; 1 when present. */
static int
rule_bound(struct loadctx *c, const struct ynode *map, const char *key,
    long long *dst)
{
	const struct ynode *n = ymap_get(map, key);

	if (n == NULL)
		return 0;
	if (n->type != ENVCTL_YSCALAR || yscalar_int(n, dst) != 0) {
		bad(c, ENVCTL_EINVALID, n, "rule '%s' must be an integer, not "
		    "%s", key, n->type == ENVCTL_YSCALAR ? n->str :
		    ynode_describe(n));
		return -1;
	}
	return 1;
}

/*
 * Reads an env entry's rule: (node r) for variable name into a new
 * valrules_custom, or NULL after reporting what is wrong with it.
 */
static struct valrules_custom *
load_rule(struct loadctx *c, const char *name, const struct ynode *r)
{
	static const char *const cases[] = { "sensitive", "insensitive",
		NULL };
	static const char *const severities[] = { "warning", "error", NULL };
	struct valrules_custom *cr;
	struct err e = ENVCTL_ERR_INIT;
	const struct ynode *a, *it;
	int kinds, hmin, hmax, before = err_count(c->err);
	size_t i;

	if (r->type != ENVCTL_YMAP) {
		bad(c, ENVCTL_EINVALID, r, "'rule' of '%s' must be a mapping "
		    "(allowed:, min:/max: or pattern:), not %s", name,
		    ynode_describe(r));
		return NULL;
	}
	cr = xcalloc(1, sizeof(*cr));
	cr->where = xasprintf("%s:%d:%d", c->pb->path, r->line, r->col);
	check_keys(c, r, rule_keys, "a rule");
	a = ymap_get(r, "allowed");
	hmin = rule_bound(c, r, "min", &cr->min);
	hmax = rule_bound(c, r, "max", &cr->max);
	kinds = (a != NULL) + (hmin != 0 || hmax != 0) +
	    (ymap_get(r, "pattern") != NULL);
	if (kinds != 1)
		bad(c, ENVCTL_EINVALID, r, "the rule of '%s' needs exactly one "
		    "of 'allowed', 'min'/'max' or 'pattern'", name);
	cr->severity = (enum valrules_severity)get_enum(c, r, "severity",
	    severities, ENVCTL_VALRULE_ERROR);
	cr->icase = get_enum(c, r, "case", cases, 0);
	if (ymap_get(r, "case") != NULL && a == NULL &&
	    ymap_get(r, "pattern") == NULL)
		bad(c, ENVCTL_EINVALID, ymap_get(r, "case"), "'case' goes "
		    "with 'allowed' or 'pattern'");
	if (a != NULL) {
		cr->kind = ENVCTL_VALRULE_ALLOWED;
		if (a->type != ENVCTL_YSEQ)
			bad(c, ENVCTL_EINVALID, a, "'allowed' must be a list, "
			    "not %s", ynode_describe(a));
		else if (a->nitems == 0 ||
		    a->nitems > ENVCTL_VALRULES_MAX_ALLOWED)
			bad(c, ENVCTL_EINVALID, a, "'allowed' must list from 1 "
			    "to %d values, not %zu", ENVCTL_VALRULES_MAX_ALLOWED,
			    a->nitems);
		else {
			cr->allowed = xcalloc(a->nitems, sizeof(char *));
			for (i = 0; i < a->nitems; i++) {
				it = a->items[i];
				if (it->type != ENVCTL_YSCALAR ||
				    yscalar_kind(it) == ENVCTL_YNULL ||
				    strlen(it->str) != it->len) {
					bad(c, ENVCTL_EINVALID, it, "'allowed' "
					    "entries must be strings, not %s",
					    ynode_describe(it));
					continue;
				}
				cr->allowed[cr->nallowed++] =
				    xstrdup(it->str);
			}
		}
	} else if (hmin != 0 || hmax != 0) {
		cr->kind = ENVCTL_VALRULE_RANGE;
		cr->has_min = hmin == 1;
		cr->has_max = hmax == 1;
		if (cr->has_min && cr->has_max && cr->min > cr->max)
			bad(c, ENVCTL_EINVALID, ymap_get(r, "max"), "rule 'max' "
			    "%lld is below 'min' %lld", cr->max, cr->min);
	} else if ((a = want(c, r, "pattern", ENVCTL_YSCALAR)) != NULL) {
		cr->kind = ENVCTL_VALRULE_PATTERN;
		cr->pattern = xstrdup(a->str);
		if (strlen(a->str) != a->len)
			bad(c, ENVCTL_EINVALID, a, "'pattern' must not hold a "
			    "NUL byte");
		else if (valrules_custom_compile(cr, &e) != 0) {
			err_setpos(&e, c->pb->path, a->line, a->col);
			err_move(c->err, &e);
		}
	}
	if (err_count(c->err) > before) {
		valrules_custom_release(cr);
		free(cr);
		return NULL;
	}
	return cr;
}

static void
load_env(struct loadctx *c, const struct ynode *env)
{
	static const char *const checks[] = { "none", "dir", "file",
		"executable", "cuda-toolkit", "ptxas", NULL };
	struct playbook *pb = c->pb;
	struct playbook_env *e;
	const struct ynode *k, *v, *val;
	size_t i;
	int b;

	pb->env = xcalloc(env->npairs, sizeof(*pb->env));
	for (i = 0; i < env->npairs; i++) {
		k = env->pairs[i].key;
		v = env->pairs[i].value;
		if (!pylit_is_identifier(k->str)) {
			bad(c, ENVCTL_EINVALID, k, "invalid environment "
			    "variable name '%s' (expected [A-Za-z_]"
			    "[A-Za-z0-9_]*)", k->str);
			continue;
		}
		e = &pb->env[pb->nenv];
		val = v;
		if (v->type == ENVCTL_YMAP) {
			check_keys(c, v, env_keys, "an env entry");
			val = ymap_get(v, "value");
			if (val == NULL) {
				bad(c, ENVCTL_EINVALID, v, "env entry '%s' has "
				    "no 'value'", k->str);
				continue;
			}
			e->check = (enum playbook_check)get_enum(c, v,
			    "check", checks, ENVCTL_CHECK_NONE);
			if ((v = ymap_get(v, "secret")) != NULL &&
			    yscalar_bool(v, &b) != 0)
				bad(c, ENVCTL_EINVALID, v, "'secret' must be "
				    "true or false, not %s",
				    ynode_describe(v));
			else if (v != NULL)
				e->secret = b;
			get_string(c, env->pairs[i].value, "comment",
			    &e->comment);
			if ((v = ymap_get(env->pairs[i].value, "rule")) !=
			    NULL)
				e->rule = load_rule(c, k->str, v);
			if (e->comment != NULL &&
			    strpbrk(e->comment, "\r\n") != NULL) {
				bad(c, ENVCTL_EINVALID, ymap_get(
				    env->pairs[i].value, "comment"),
				    "'comment' must be one line");
				free(e->comment);
				e->comment = NULL;
			}
		}
		if (val->type != ENVCTL_YSCALAR ||
		    yscalar_kind(val) == ENVCTL_YNULL) {
			bad(c, ENVCTL_EINVALID, val, "value of '%s' must be a "
			    "string, not %s", k->str, ynode_describe(val));
			free(e->comment);
			e->comment = NULL;
			valrules_custom_release(e->rule);
			free(e->rule);
			e->rule = NULL;
			continue;
		}
		e->name = xstrdup(k->str);
		e->value = val;
		pb->nenv++;
	}
}

/*
 * cuda: the CUDA major version the cuda-toolkit and ptxas checks want,
 * "13" or 13; a minor ("13.0") is refused, as the checks compare majors.
 */
static void
load_cuda(struct loadctx *c, const struct ynode *root)
{
	const struct ynode *n = want(c, root, "cuda", ENVCTL_YSCALAR);

	if (n == NULL)
		return;
	/* Quoted or not: YAML reads an unquoted 13 as an integer. */
	if (n->len == 0 || n->len > 2 || strspn(n->str, "0123456789") !=
	    n->len || n->str[0] == '0') {
		bad(c, ENVCTL_EINVALID, n, "'cuda' must be a CUDA major "
		    "version such as \"13\", not '%s'", n->str);
		return;
	}
	c->pb->cuda_major = (int)strtol(n->str, NULL, 10);
}

static void
load_backup(struct loadctx *c, const struct ynode *b)
{
	const struct ynode *keep;
	long long n;

	check_keys(c, b, backup_keys, "'backup'");
	get_string(c, b, "dir", &c->pb->backup_dir);
	if (c->pb->backup_dir[0] != '/')
		bad(c, ENVCTL_EINVALID, ymap_get(b, "dir"), "backup 'dir' "
		    "must be an absolute path, not '%s'", c->pb->backup_dir);
	if ((keep = ymap_get(b, "keep")) == NULL)
		return;
	if (yscalar_int(keep, &n) != 0 || n < 1 || n > 10000)
		bad(c, ENVCTL_EINVALID, keep, "backup 'keep' must be an "
		    "integer from 1 to 10000, not '%s'",
		    keep->str != NULL ? keep->str : ynode_describe(keep));
	else
		c->pb->backup_keep = (int)n;
}

static void
load_create(struct loadctx *c, const struct ynode *cr)
{
	const struct ynode *m;
	char *end;
	long v;

	check_keys(c, cr, create_keys, "'create'");
	get_string(c, cr, "owner", &c->pb->create_owner);
	get_string(c, cr, "group", &c->pb->create_group);
	if ((m = want(c, cr, "mode", ENVCTL_YSCALAR)) == NULL)
		return;
	/*
	 * Modes are octal however they are written: "0644", 0644 (which
	 * YAML 1.1 already reads as octal) and a bare 644 all mean rw-r--r--.
	 */
	errno = 0;
	v = strtol(m->str, &end, 8);
	if (errno != 0 || *end != '\0' || end == m->str ||
	    strspn(m->str, "01234567") != m->len)
		v = -1;
	if (v < 0 || v > 07777)
		bad(c, ENVCTL_EINVALID, m, "create 'mode' must be an octal "
		    "file mode such as \"0644\", not '%s'", m->str);
	else
		c->pb->create_mode = (mode_t)v;
}

static void
load_template(struct loadctx *c, const struct ynode *t)
{
	struct playbook *pb = c->pb;
	struct err e = ENVCTL_ERR_INIT;
	char *copy;

	if (pb->template_path[0] != '/') {
		copy = xstrdup(pb->path);
		free(pb->template_path);
		pb->template_path = xasprintf("%s/%s", dirname(copy), t->str);
		free(copy);
	}
	if (buf_read_file(&pb->template, pb->template_path, &e) != 0) {
		err_setpos(&e, pb->path, t->line, t->col);
		err_context(&e, "template");
		err_move(c->err, &e);
	}
}

static void
defaults_init(struct playbook *pb)
{
	pb->interpreter = xstrdup("python3");
	pb->mode = ENVCTL_MODE_BLOCK;
	pb->policy = ENVCTL_POLICY_SETDEFAULT;
	pb->backup_dir = xstrdup(ENVCTL_BACKUP_DIR);
	pb->backup_keep = ENVCTL_BACKUP_KEEP;
	pb->create_mode = 0644;
	pb->create_owner = xstrdup("root");
	pb->create_group = xstrdup("root");
	buf_init(&pb->template, ENVCTL_TEMPLATE_MAX);
}

/* The playbook's default name: its file name without .yaml/.yml. */
static char *
stem(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base != NULL ? base + 1 : path;
	n = strlen(base);
	if (str_endswith(base, ".yaml"))
		n -= 5;
	else if (str_endswith(base, ".yml"))
		n -= 4;
	return xstrndup(base, n);
}

/* 1 when p has a ".." component. */
static int
has_dotdot(const char *p)
{
	size_t n;

	for (; *p != '\0'; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 1;
	}
	return 0;
}

/*
 * Checks the 'path' key (node n) that get_string() copied to pb->target:
 * "auto" (target NULL), or an absolute path without a NUL byte and
 * without ".." (the agent resolves links, not "..": a path that climbs
 * names another file than it seems to).
 */
static void
check_path(struct loadctx *c, const struct ynode *n)
{
	struct playbook *pb = c->pb;

	if (pb->target == NULL || n == NULL)
		return;
	if (strlen(pb->target) != n->len)
		bad(c, ENVCTL_EINVALID, n, "'path' must not hold a NUL byte");
	else if (strcmp(pb->target, "auto") == 0) {
		free(pb->target);
		pb->target = NULL;
	} else if (pb->target[0] != '/')
		bad(c, ENVCTL_EINVALID, n, "'path' must be 'auto' or an "
		    "absolute path, not '%s'", pb->target);
	else if (has_dotdot(pb->target))
		bad(c, ENVCTL_EINVALID, n, "'path' must not have a '..' "
		    "component, not '%s'", pb->target);
}

int
playbook_load(struct playbook **out, const char *path, struct err *err)
{
	static const char *const modes[] = { "block", "file", NULL };
	static const char *const policies[] = { "setdefault", "override",
		NULL };
	struct loadctx c;
	struct playbook *pb;
	const struct ynode *root, *n;
	int r;

	*out = NULL;
	pb = xcalloc(1, sizeof(*pb));
	pb->path = xstrdup(path);
	defaults_init(pb);
	c.pb = pb;
	c.err = err;
	if ((r = ydoc_load_file(&pb->doc, path, err)) != 0)
		goto out;
	root = pb->doc->root;
	if (root == NULL || root->type != ENVCTL_YMAP) {
		r = bad(&c, ENVCTL_EINVALID, root, "a playbook must be a "
		    "mapping, not %s", ynode_describe(root));
		goto out;
	}
	check_keys(&c, root, top_keys, "the playbook");
	pb->name = stem(path);
	get_string(&c, root, "name", &pb->name);
	if (pb->name[0] == '\0' || strspn(pb->name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-") != strlen(pb->name))
		bad(&c, ENVCTL_EINVALID, ymap_get(root, "name"), "playbook "
		    "name '%s' may only hold letters, digits, '_', '.' and "
		    "'-'", pb->name);
	get_string(&c, root, "description", &pb->description);
	get_string(&c, root, "interpreter", &pb->interpreter);
	get_list(&c, root, "interpreters", ENVCTL_PLAYBOOK_MAX_INTERPRETERS,
	    &pb->interpreters, &pb->ninterpreters);
	get_list(&c, root, "services", ENVCTL_PLAYBOOK_MAX_SERVICES,
	    &pb->services, &pb->nservices);
	get_list(&c, root, "processes", ENVCTL_PLAYBOOK_MAX_PATTERNS,
	    &pb->processes, &pb->nprocesses);
	load_facts(&c, root);
	load_cuda(&c, root);
	if (pb->ninterpreters > 0 && ymap_get(root, "interpreter") != NULL)
		bad(&c, ENVCTL_EINVALID, ymap_get(root, "interpreters"),
		    "give 'interpreter' or 'interpreters', not both");
	get_string(&c, root, "path", &pb->target);
	check_path(&c, ymap_get(root, "path"));
	pb->mode = (enum playbook_mode)get_enum(&c, root, "mode", modes,
	    ENVCTL_MODE_BLOCK);
	pb->policy = (enum render_policy)get_enum(&c, root, "policy",
	    policies, ENVCTL_POLICY_SETDEFAULT);
	get_string(&c, root, "template", &pb->template_path);
	n = ymap_get(root, "template");
	if (pb->mode == ENVCTL_MODE_FILE && pb->template_path == NULL)
		bad(&c, ENVCTL_EINVALID, root, "'mode: file' needs a "
		    "'template'");
	else if (pb->mode == ENVCTL_MODE_BLOCK && n != NULL)
		bad(&c, ENVCTL_EINVALID, n, "'template' is only used with "
		    "'mode: file'");
	else if (pb->template_path != NULL && n != NULL)
		load_template(&c, n);
	if ((n = want(&c, root, "env", ENVCTL_YMAP)) != NULL)
		load_env(&c, n);
	else if (ymap_get(root, "env") == NULL)
		bad(&c, ENVCTL_EINVALID, root, "the playbook has no 'env'");
	pb->defaults = want(&c, root, "defaults", ENVCTL_YMAP);
	if ((n = want(&c, root, "backup", ENVCTL_YMAP)) != NULL)
		load_backup(&c, n);
	if ((n = want(&c, root, "create", ENVCTL_YMAP)) != NULL)
		load_create(&c, n);
	r = err != NULL ? err->code : 0;
out:
	if (r != 0)
		playbook_free(pb);
	else
		*out = pb;
	return r;
}

void
playbook_free(struct playbook *pb)
{
	size_t i;

	if (pb == NULL)
		return;
	for (i = 0; i < pb->nenv; i++) {
		free(pb->env[i].name);
		free(pb->env[i].comment);
		valrules_custom_release(pb->env[i].rule);
		free(pb->env[i].rule);
	}
	free(pb->env);
	free(pb->path);
	free(pb->name);
	free(pb->description);
	free(pb->interpreter);
	for (i = 0; i < pb->ninterpreters; i++)
		free(pb->interpreters[i]);
	free(pb->interpreters);
	for (i = 0; i < pb->nservices; i++)
		free(pb->services[i]);
	free(pb->services);
	for (i = 0; i < pb->nprocesses; i++)
		free(pb->processes[i]);
	free(pb->processes);
	free(pb->target);
	free(pb->template_path);
	buf_release(&pb->template);
	free(pb->backup_dir);
	free(pb->create_owner);
	free(pb->create_group);
	ydoc_free(pb->doc);
	free(pb);
}

const char *const *
playbook_interpreters(const struct playbook *pb, const struct host *h,
    size_t *n)
{
	if (h != NULL && h->ninterpreters > 0) {
		*n = h->ninterpreters;
		return h->interpreters;
	}
	if (pb->ninterpreters > 0) {
		*n = pb->ninterpreters;
		return (const char *const *)pb->interpreters;
	}
	*n = 1;
	return (const char *const *)&pb->interpreter;
}

const char *
playbook_check_name(enum playbook_check c)
{
	switch (c) {
	case ENVCTL_CHECK_DIR:
		return "dir";
	case ENVCTL_CHECK_FILE:
		return "file";
	case ENVCTL_CHECK_EXECUTABLE:
		return "executable";
	case ENVCTL_CHECK_CUDA_TOOLKIT:
		return "cuda-toolkit";
	case ENVCTL_CHECK_PTXAS:
		return "ptxas";
	case ENVCTL_CHECK_NONE:
		break;
	}
	return "none";
}

int
playbook_find(char **out, const char *name, const char *base_dir,
    struct err *err)
{
	struct buf tried = ENVCTL_BUF_INIT;
	char *dirs[3] = { NULL, NULL, NULL }, *cand, *env, *p, *dir;
	size_t i;
	int r = ENVCTL_ENOTFOUND;

	*out = NULL;
	if (strchr(name, '/') != NULL || str_endswith(name, ".yaml") ||
	    str_endswith(name, ".yml")) {
		if (name[0] != '/' && base_dir != NULL)
			*out = xasprintf("%s/%s", base_dir, name);
		else
			*out = xstrdup(name);
		return 0;
	}
	if ((env = getenv("ENVCTL_PLAYBOOK_PATH")) != NULL)
		dirs[0] = xstrdup(env);
	if ((p = selfexe_dir()) != NULL) {
		dirs[1] = xasprintf("%s/../playbooks", p);
		free(p);
	}
	dirs[2] = xstrdup(ENVCTL_DATADIR "/playbooks");
	for (i = 0; i < 3 && *out == NULL; i++) {
		if (dirs[i] == NULL)
			continue;
		for (dir = dirs[i]; dir != NULL; dir = p) {
			if ((p = strchr(dir, ':')) != NULL)
				*p++ = '\0';
			if (*dir == '\0')
				continue;
			cand = xasprintf("%s/%s.yaml", dir, name);
			if (access(cand, R_OK) == 0) {
				*out = cand;
				r = 0;
				break;
			}
			buf_addf(&tried, "%s%s", tried.len ? ", " : "", dir);
			free(cand);
		}
	}
	if (r != 0)
		err_set(err, r, "playbook '%s' not found (looked in %s)", name,
		    tried.data);
	for (i = 0; i < 3; i++)
		free(dirs[i]);
	buf_release(&tried);
	return r;
}
