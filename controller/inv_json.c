/* inv_json.c - JSON inventories: read into the builder, write as Ansible. */
#include "controller/inv_json.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/invbuild.h"
#include "controller/inventory.h"
#include "controller/yamldoc.h"

/* --- reading --------------------------------------------------------- */

struct reader {
	struct invb	*b;
	const char	*origin;	/* NULL: the file itself */
	struct ydoc	*doc;		/* values, kept by the builder */
	struct ydoc	*scratch;	/* for float texts; freed */
	size_t		 nodes;
	int		 first;		/* first error code */
	int		 toobig;	/* the node cap was reported */
	/* hosts seen, each once, in first-seen order */
	size_t		*hosts;
	char		**names;
	size_t		 nhosts, halloc;
	unsigned char	*seen;		/* by builder host index */
	size_t		 nseen;
};

static void __attribute__((format(printf, 3, 4)))
rerror(struct reader *r, int code, const char *fmt, ...)
{
	struct buf msg = ENVCTL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (r->origin != NULL)
		invb_error(r->b, code, NULL, "in the output of %s: %s",
		    r->origin, msg.data);
	else
		invb_error(r->b, code, NULL, "%s", msg.data);
	if (r->first == 0)
		r->first = code;
	buf_release(&msg);
}

/* jansson's errors, mapped to ours here and nowhere else. */
static void
parse_error(struct reader *r, const json_error_t *je)
{
	int code = ENVCTL_EPARSE;
	const char *hint = "";

	switch (json_error_code(je)) {
	case json_error_out_of_memory:
		abort();	/* as xmalloc: running out is not reported */
	case json_error_numeric_overflow:
		/* Python reads any integer and 1e400 as inf; envctl cannot. */
		code = ENVCTL_EUNSUPPORTED;
		hint = " (envctl reads 64-bit integers and finite reals)";
		break;
	case json_error_null_byte_in_key:
		code = ENVCTL_EUNSUPPORTED;	/* Python takes it */
		break;
	case json_error_invalid_syntax:
		if (strstr(je->text, "NaN") != NULL ||
		    strstr(je->text, "Infinity") != NULL) {
			code = ENVCTL_EUNSUPPORTED;
			hint = " (Python's NaN and Infinity are not JSON; "
			    "envctl does not read them)";
		}
		break;
	default:
		break;
	}
	if (r->origin != NULL)
		rerror(r, code, "line %d column %d: %s%s", je->line,
		    je->column, je->text, hint);
	else {
		invb_errorat(r->b, code, je->line, je->column, "%s%s",
		    je->text, hint);
		if (r->first == 0)
			r->first = code;
	}
}

static const char *
jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

/* Counts a new node against the cap; ENVCTL_ETOOBIG past it (said once). */
static int
count_node(struct reader *r)
{
	if (++r->nodes <= ENVCTL_YAML_MAX_NODES)
		return 0;
	if (!r->toobig)
		rerror(r, ENVCTL_ETOOBIG, "more than %u values",
		    ENVCTL_YAML_MAX_NODES);
	r->toobig = 1;
	return ENVCTL_ETOOBIG;
}

static struct ynode *
float_node(struct reader *r, double d)
{
	struct buf text = ENVCTL_BUF_INIT;
	struct ynode *tmp, *n;
	char digits[40];

	/* %.17g round-trips; yscalar_text() turns it into Python's repr. */
	snprintf(digits, sizeof(digits), "%.17g", d);
	if (r->scratch == NULL)
		r->scratch = ydoc_new("");
	tmp = ydoc_add_scalar(r->scratch, ENVCTL_YFLOAT, digits,
	    strlen(digits), 0, 0);
	if (yscalar_text(&text, tmp, NULL) != 0)
		buf_addstr(&text, digits);
	n = ydoc_add_scalar(r->doc, ENVCTL_YFLOAT, text.data, text.len, 0, 0);
	buf_release(&text);
	return n;
}

/*
 * The ynode for JSON value v, of v's type; what says where it is, for
 * messages.  NULL after recording a problem.
 */
static struct ynode *
to_ynode(struct reader *r, const json_t *v, unsigned depth, const char *what)
{
	struct ynode *n = NULL, *k, *item;
	const char *key;
	char digits[32];
	json_t *sub;
	size_t i, klen;

	if (depth > ENVCTL_YAML_MAX_DEPTH) {
		rerror(r, ENVCTL_ETOOBIG, "%s is nested more than %u levels",
		    what, ENVCTL_YAML_MAX_DEPTH);
		return NULL;
	}
	if (count_node(r) != 0)
		return NULL;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		n = ydoc_add_node(r->doc, ENVCTL_YMAP, 0, 0);
		json_object_keylen_foreach((json_t *)v, key, klen, sub) {
			if (count_node(r) != 0 ||
			    (item = to_ynode(r, sub, depth + 1, what)) == NULL)
				return NULL;
			k = ydoc_add_scalar(r->doc, ENVCTL_YSTR, key, klen, 0,
			    0);
			ymap_append(n, k, item);
		}
		break;
	case JSON_ARRAY:
		n = ydoc_add_node(r->doc, ENVCTL_YSEQ, 0, 0);
		json_array_foreach(v, i, sub) {
			if ((item = to_ynode(r, sub, depth + 1, what)) == NULL)
				return NULL;
			yseq_append(n, item);
		}
		break;
	case JSON_STRING:
		n = ydoc_add_scalar(r->doc, ENVCTL_YSTR, json_string_value(v),
		    json_string_length(v), 0, 0);
		break;
	case JSON_INTEGER:
		snprintf(digits, sizeof(digits), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		n = ydoc_add_scalar(r->doc, ENVCTL_YINT, digits,
		    strlen(digits), 0, 0);
		break;
	case JSON_REAL:
		n = float_node(r, json_real_value(v));
		break;
	case JSON_TRUE:
		n = ydoc_add_scalar(r->doc, ENVCTL_YBOOL, "True", 4, 0, 0);
		break;
	case JSON_FALSE:
		n = ydoc_add_scalar(r->doc, ENVCTL_YBOOL, "False", 5, 0, 0);
		break;
	case JSON_NULL:
		n = ydoc_add_scalar(r->doc, ENVCTL_YNULL, "null", 4, 0, 0);
		break;
	}
	return n;
}

/* A JSON string holding a NUL cannot be a name. */
static const char *
name_of(const json_t *v)
{
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return NULL;
	return json_string_value(v);
}

static void
remember_host(struct reader *r, size_t h, const char *name)
{
	size_t n;

	if (h >= r->nseen) {
		n = h + 1 > 2 * r->nseen ? h + 1 : 2 * r->nseen;
		r->seen = xreallocarray(r->seen, n, 1);
		memset(r->seen + r->nseen, 0, n - r->nseen);
		r->nseen = n;
	}
	if (r->seen[h])
		return;
	r->seen[h] = 1;
	ENVCTL_GROW(r->hosts, r->nhosts + 1, r->halloc);
	r->names = xreallocarray(r->names, r->halloc, sizeof(*r->names));
	r->hosts[r->nhosts] = h;
	r->names[r->nhosts++] = xstrdup(name);
}

/* Adds host name (non-empty) to group g. */
static void
add_host_name(struct reader *r, size_t g, const char *group, const char *name)
{
	size_t h;

	(void)group;
	if ((h = invb_host(r->b, g, name, NULL)) != ENVCTL_INVB_NONE)
		remember_host(r, h, name);
}

static void
add_host(struct reader *r, size_t g, const char *group, const json_t *v)
{
	const char *name = name_of(v);

	if (json_is_null(v) || (name != NULL && *name == '\0'))
		rerror(r, ENVCTL_EINVALID, "group '%s' lists an empty host "
		    "name", group);
	else if (name == NULL && json_is_string(v))
		rerror(r, ENVCTL_EINVALID, "group '%s': a host name holds a "
		    "NUL byte", group);
	else if (name == NULL)
		rerror(r, ENVCTL_EINVALID, "group '%s': a host name must be "
		    "a string, got %s", group, jtype(v));
	else
		add_host_name(r, g, group, name);
}

static void
add_vars(struct reader *r, size_t g, size_t h, const char *whose,
    const json_t *vars)
{
	struct ynode *val, *name;
	const char *key;
	struct buf what = ENVCTL_BUF_INIT;
	size_t klen;
	json_t *v;

	json_object_keylen_foreach((json_t *)vars, key, klen, v) {
		buf_reset(&what);
		buf_addf(&what, "variable '%s' of %s", key, whose);
		if ((val = to_ynode(r, v, 1, what.data)) == NULL)
			continue;
		/* The builder keeps the name: it must live in the doc. */
		name = ydoc_add_scalar(r->doc, ENVCTL_YSTR, key, klen, 0, 0);
		if (g != ENVCTL_INVB_NONE)
			invb_group_var(r->b, g, name->str, val);
		else
			invb_host_var(r->b, h, name->str, val);
	}
	buf_release(&what);
}

static void
add_group(struct reader *r, const char *name, const json_t *data)
{
	const json_t *hosts = NULL, *vars = NULL, *children = NULL, *v;
	struct buf whose = ENVCTL_BUF_INIT;
	const char *key, *cname;
	size_t g, c, i;
	int self = 0;

	if (*name == '\0') {
		rerror(r, ENVCTL_EINVALID, "a group has an empty name");
		return;
	}
	if (!json_is_object(data))
		hosts = data;		/* a bare list of hosts */
	else if (json_object_get(data, "hosts") == NULL &&
	    json_object_get(data, "vars") == NULL &&
	    json_object_get(data, "children") == NULL) {
		/* As Ansible: a host of the group's name, with these vars. */
		if (strcmp(name, "all") == 0) {
			rerror(r, ENVCTL_EINVALID, "group 'all' has none of "
			    "hosts, vars, children: Ansible would make it a "
			    "host 'all' and fail");
			return;
		}
		self = 1;
		vars = data;
	} else {
		hosts = json_object_get(data, "hosts");
		vars = json_object_get(data, "vars");
		children = json_object_get(data, "children");
		json_object_foreach((json_t *)data, key, v)
			if (strcmp(key, "hosts") != 0 &&
			    strcmp(key, "vars") != 0 &&
			    strcmp(key, "children") != 0)
				rerror(r, ENVCTL_EINVALID, "group '%s': "
				    "unknown key '%s' (Ansible skips it; a "
				    "group has hosts, vars and children)",
				    name, key);
	}
	g = invb_group(r->b, name);
	buf_addf(&whose, "group '%s'", name);
	/* Ansible's order: hosts, then vars, then children. */
	if (self)
		add_host_name(r, g, name, name);
	else if (hosts != NULL && !json_is_array(hosts))
		rerror(r, ENVCTL_EINVALID, "group '%s': hosts must be a "
		    "list, got %s", name, jtype(hosts));
	else if (hosts != NULL)
		json_array_foreach(hosts, i, v)
			add_host(r, g, name, v);
	if (vars != NULL && !json_is_object(vars))
		rerror(r, ENVCTL_EINVALID, "group '%s': vars must be a "
		    "mapping, got %s", name, jtype(vars));
	else if (vars != NULL)
		add_vars(r, g, ENVCTL_INVB_NONE, whose.data, vars);
	if (children != NULL && !json_is_array(children))
		rerror(r, ENVCTL_EINVALID, "group '%s': children must be a "
		    "list, got %s", name, jtype(children));
	else if (children != NULL)
		json_array_foreach(children, i, v) {
			if ((cname = name_of(v)) == NULL || *cname == '\0') {
				rerror(r, ENVCTL_EINVALID, "group '%s': a "
				    "child group name must be a non-empty "
				    "string, got %s", name, jtype(v));
				continue;
			}
			c = invb_group(r->b, cname);
			invb_child(r->b, g, c, NULL);
		}
	buf_release(&whose);
}

static void
reader_init(struct reader *r, struct invb *b, const char *origin)
{
	memset(r, 0, sizeof(*r));
	r->b = b;
	r->origin = origin;
	r->doc = ydoc_new(invb_path(b));
	invb_keep(b, r->doc);
}

static void
reader_release(struct reader *r)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++)
		free(r->names[i]);
	free(r->names);
	free(r->hosts);
	free(r->seen);
	ydoc_free(r->scratch);
}

/* Parses text as one JSON value; NULL after recording why. */
static json_t *
parse(struct reader *r, const char *text, size_t len)
{
	json_error_t je;
	json_t *root;
	size_t i;

	if (len > ENVCTL_YAML_MAX_BYTES) {
		rerror(r, ENVCTL_ETOOBIG, "larger than %u bytes",
		    ENVCTL_YAML_MAX_BYTES);
		return NULL;
	}
	for (i = 0; i < len && strchr(" \t\r\n", text[i]) != NULL &&
	    text[i] != '\0'; i++)
		;
	if (i == len) {
		rerror(r, ENVCTL_EPARSE, "no JSON: %s", len == 0 ? "empty" :
		    "only white space");
		return NULL;
	}
	root = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (root == NULL)
		parse_error(r, &je);
	return root;
}

/* The variables of the hosts seen, from _meta.hostvars (an object). */
static void
host_vars(struct reader *r, const json_t *hostvars)
{
	struct buf whose = ENVCTL_BUF_INIT;
	const json_t *v;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		if ((v = json_object_get(hostvars, r->names[i])) == NULL)
			continue;
		buf_reset(&whose);
		buf_addf(&whose, "host '%s'", r->names[i]);
		if (!json_is_object(v))
			rerror(r, ENVCTL_EINVALID, "_meta.hostvars: host '%s' "
			    "must map to a mapping of variables, got %s",
			    r->names[i], jtype(v));
		else
			add_vars(r, ENVCTL_INVB_NONE, r->hosts[i], whose.data,
			    v);
	}
	buf_release(&whose);
}

int
inv_json_vars(struct invb *b, const char *text, size_t len,
    struct ynode **root)
{
	struct reader r;
	json_error_t je;
	json_t *v;
	int code;

	*root = NULL;
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	reader_init(&r, b, NULL);
	if (v == NULL) {
		/* Not JSON: Ansible's loader then reads it as YAML. */
		if (json_error_code(&je) == json_error_invalid_syntax &&
		    strstr(je.text, "NaN") == NULL &&
		    strstr(je.text, "Infinity") == NULL) {
			reader_release(&r);
			return 1;
		}
		if (json_error_code(&je) == json_error_premature_end_of_input ||
		    json_error_code(&je) == json_error_end_of_input_expected ||
		    json_error_code(&je) == json_error_invalid_utf8) {
			reader_release(&r);
			return 1;
		}
		parse_error(&r, &je);
	} else
		*root = to_ynode(&r, v, 0, "a value");
	json_decref(v);
	code = r.first;
	reader_release(&r);
	return code;
}

int
inv_json_read(struct invb *b, const char *text, size_t len,
    const char *origin, struct inv_json_hosts *need)
{
	struct reader r;
	const json_t *meta = NULL, *hostvars = NULL;
	const char *key;
	json_t *root, *v;
	size_t i;
	int code;

	reader_init(&r, b, origin);
	if ((root = parse(&r, text, len)) == NULL)
		goto out;
	if (!json_is_object(root)) {
		rerror(&r, ENVCTL_EINVALID, "an inventory must be a JSON "
		    "object of groups, got %s", jtype(root));
		goto out;
	}
	/* jansson refuses NUL bytes in keys: names are C strings. */
	json_object_foreach(root, key, v) {
		if (strcmp(key, "_meta") == 0)
			meta = v;
		else
			add_group(&r, key, v);
	}
	if (meta != NULL && !json_is_object(meta))
		rerror(&r, ENVCTL_EINVALID, "_meta must be a mapping, got %s",
		    jtype(meta));
	else if (meta != NULL)
		hostvars = json_object_get(meta, "hostvars");
	if (hostvars != NULL && !json_is_object(hostvars))
		rerror(&r, ENVCTL_EINVALID, "_meta.hostvars must be a "
		    "mapping of hosts, got %s", jtype(hostvars));
	else if (hostvars != NULL)
		host_vars(&r, hostvars);
	else if (need != NULL && (meta == NULL || json_is_object(meta))) {
		/* No _meta.hostvars: Ansible asks --host for each. */
		for (i = 0; i < r.nhosts; i++) {
			ENVCTL_GROW(need->index, need->n + 1, need->alloc);
			need->names = xreallocarray(need->names, need->alloc,
			    sizeof(*need->names));
			need->index[need->n] = r.hosts[i];
			need->names[need->n++] = r.names[i];
			r.names[i] = NULL;
		}
	}
out:
	json_decref(root);
	code = r.first;
	reader_release(&r);
	return code;
}

int
inv_json_read_host(struct invb *b, size_t h, const char *name,
    const char *text, size_t len)
{
	struct reader r;
	struct buf origin = ENVCTL_BUF_INIT, whose = ENVCTL_BUF_INIT;
	json_t *root;
	int code;

	buf_addf(&origin, "--host %s", name);
	buf_addf(&whose, "host '%s'", name);
	reader_init(&r, b, origin.data);
	if ((root = parse(&r, text, len)) == NULL)
		goto out;
	if (!json_is_object(root))
		rerror(&r, ENVCTL_EINVALID, "the variables of host '%s' must "
		    "be a JSON object, got %s", name, jtype(root));
	else
		add_vars(&r, ENVCTL_INVB_NONE, h, whose.data, root);
out:
	json_decref(root);
	code = r.first;
	reader_release(&r);
	buf_release(&origin);
	buf_release(&whose);
	return code;
}

void
inv_json_hosts_release(struct inv_json_hosts *need)
{
	size_t i;

	for (i = 0; i < need->n; i++)
		free(need->names[i]);
	free(need->names);
	free(need->index);
	memset(need, 0, sizeof(*need));
}

/* --- writing ----------------------------------------------------------- */

/* What ansible-inventory removes from the variables it prints. */
static const char *const internal_vars[] = {
	"ansible_config_file", "ansible_diff_mode", "ansible_facts",
	"ansible_forks", "ansible_inventory_sources", "ansible_limit",
	"ansible_playbook_python", "ansible_run_tags", "ansible_skip_tags",
	"ansible_verbosity", "ansible_version", "group_names", "groups",
	"inventory_dir", "inventory_file", "inventory_hostname",
	"inventory_hostname_short", "omit", "playbook_dir", NULL
};

int
inv_json_internal_var(const char *name)
{
	size_t i;

	for (i = 0; internal_vars[i] != NULL; i++)
		if (strcmp(name, internal_vars[i]) == 0)
			return 1;
	return 0;
}

struct writer {
	struct buf	*out;
	struct err	*err;
	const char	*host;		/* for messages */
	const char	*var;
	int		 code;
};

static void
w_add(struct writer *w, const char *s, size_t len)
{
	if (w->code == 0 && buf_add(w->out, s, len) != 0)
		w->code = err_set(w->err, ENVCTL_ETOOBIG, "the output is "
		    "larger than %zu bytes", w->out->cap);
}

static void
w_str(struct writer *w, const char *s)
{
	w_add(w, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
w_fail(struct writer *w, const char *fmt, ...)
{
	struct buf msg = ENVCTL_BUF_INIT;
	va_list ap;

	if (w->code != 0)
		return;
	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (w->var != NULL)
		w->code = err_set(w->err, ENVCTL_EUNSUPPORTED, "host '%s': "
		    "variable '%s': %s", w->host, w->var, msg.data);
	else
		w->code = err_set(w->err, ENVCTL_EUNSUPPORTED, "%s",
		    msg.data);
	buf_release(&msg);
}

/* Length of the UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string as Python's json.dumps(ensure_ascii=False) writes it. */
static void
w_quoted(struct writer *w, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];
	size_t i = 0, n;

	w_add(w, "\"", 1);
	while (i < len) {
		switch (p[i]) {
		case '"':	w_add(w, "\\\"", 2); i++; continue;
		case '\\':	w_add(w, "\\\\", 2); i++; continue;
		case '\n':	w_add(w, "\\n", 2); i++; continue;
		case '\r':	w_add(w, "\\r", 2); i++; continue;
		case '\t':	w_add(w, "\\t", 2); i++; continue;
		case '\b':	w_add(w, "\\b", 2); i++; continue;
		case '\f':	w_add(w, "\\f", 2); i++; continue;
		default:
			break;
		}
		if (p[i] < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", p[i]);
			w_add(w, esc, 6);
			i++;
			continue;
		}
		if ((n = utf8_len(p + i, len - i)) == 0) {
			w_fail(w, "a string that is not UTF-8 (byte %zu)", i);
			return;
		}
		w_add(w, s + i, n);
		i += n;
	}
	w_add(w, "\"", 1);
}

static void
w_indent(struct writer *w, int level)
{
	int i;

	w_add(w, "\n", 1);
	for (i = 0; i < level; i++)
		w_add(w, "    ", 4);
}

static int
pair_cmp(const void *a, const void *b)
{
	const struct ypair *x = *(const struct ypair *const *)a;
	const struct ypair *y = *(const struct ypair *const *)b;
	size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
	int c = memcmp(x->key->str, y->key->str, n);

	if (c != 0)
		return c;
	return x->key->len < y->key->len ? -1 : x->key->len > y->key->len;
}

static void w_value(struct writer *w, const struct ynode *n, int level);

static void
w_map(struct writer *w, const struct ynode *n, int level)
{
	const struct ypair **pairs;
	const struct ynode *k;
	size_t i;

	if (n->npairs == 0) {
		w_add(w, "{}", 2);
		return;
	}
	pairs = xcalloc(n->npairs, sizeof(*pairs));
	for (i = 0; i < n->npairs; i++) {
		k = n->pairs[i].key;
		if (k->type != ENVCTL_YSCALAR ||
		    yscalar_kind(k) != ENVCTL_YSTR) {
			w_fail(w, "a mapping key that is %s, not a string "
			    "(ansible-inventory cannot sort it with the "
			    "others)", ynode_describe(k));
			goto out;
		}
		pairs[i] = &n->pairs[i];
	}
	qsort(pairs, n->npairs, sizeof(*pairs), pair_cmp);
	w_add(w, "{", 1);
	for (i = 0; i < n->npairs && w->code == 0; i++) {
		w_indent(w, level + 1);
		w_quoted(w, pairs[i]->key->str, pairs[i]->key->len);
		w_add(w, ": ", 2);
		w_value(w, pairs[i]->value, level + 1);
		if (i + 1 < n->npairs)
			w_add(w, ",", 1);
	}
	w_indent(w, level);
	w_add(w, "}", 1);
out:
	free(pairs);
}

static void
w_scalar(struct writer *w, const struct ynode *n)
{
	struct buf text = ENVCTL_BUF_INIT;
	struct err e = ENVCTL_ERR_INIT;
	int b;

	if (n->tag != NULL && strcmp(n->tag, ENVCTL_YTAG_UNUSABLE) == 0) {
		w_fail(w, "%s", n->str);
		return;
	}
	switch (yscalar_kind(n)) {
	case ENVCTL_YSTR:
		w_quoted(w, n->str, n->len);
		return;
	case ENVCTL_YBOOL:
		if (yscalar_bool(n, &b) == 0)
			w_str(w, b ? "true" : "false");
		else
			w_fail(w, "invalid boolean '%s'", n->str);
		return;
	case ENVCTL_YNULL:
		w_str(w, "null");
		return;
	case ENVCTL_YINT:
	case ENVCTL_YFLOAT:
		break;
	}
	if (yscalar_text(&text, n, &e) != 0)
		w_fail(w, "%s", e.msg);
	else if (strcmp(text.data, "nan") == 0)
		w_str(w, "NaN");	/* Python's json, allow_nan */
	else if (strcmp(text.data, "inf") == 0)
		w_str(w, "Infinity");
	else if (strcmp(text.data, "-inf") == 0)
		w_str(w, "-Infinity");
	else
		w_add(w, text.data, text.len);
	buf_release(&text);
	err_release(&e);
}

static void
w_value(struct writer *w, const struct ynode *n, int level)
{
	size_t i;

	if (w->code != 0)
		return;
	switch (n->type) {
	case ENVCTL_YSCALAR:
		if (n->tag != NULL && strcmp(n->tag, "!vault") == 0) {
			/* As Ansible's JSON encoder shows a vaulted value. */
			w_add(w, "{", 1);
			w_indent(w, level + 1);
			w_str(w, "\"__ansible_vault\": ");
			w_quoted(w, n->str, n->len);
			w_indent(w, level);
			w_add(w, "}", 1);
		} else
			w_scalar(w, n);
		break;
	case ENVCTL_YMAP:
		w_map(w, n, level);
		break;
	case ENVCTL_YSEQ:
		if (n->nitems == 0) {
			w_add(w, "[]", 2);
			break;
		}
		w_add(w, "[", 1);
		for (i = 0; i < n->nitems && w->code == 0; i++) {
			w_indent(w, level + 1);
			w_value(w, n->items[i], level + 1);
			if (i + 1 < n->nitems)
				w_add(w, ",", 1);
		}
		w_indent(w, level);
		w_add(w, "]", 1);
		break;
	}
}

/* 1 when h has a variable ansible-inventory prints. */
static int
host_has_vars(const struct host *h)
{
	const char *name;
	size_t i;

	for (i = 0; i < host_nvars(h); i++) {
		host_var_at(h, i, &name);
		if (!inv_json_internal_var(name))
			return 1;
	}
	return 0;
}

/* h's variables as an object at level (names are sorted already). */
static void
w_host_vars(struct writer *w, const struct host *h, int level)
{
	const struct ynode *v;
	const char *name;
	size_t i;
	int first = 1;

	w->host = h->name;
	for (i = 0; i < host_nvars(h) && w->code == 0; i++) {
		v = host_var_at(h, i, &name);
		if (inv_json_internal_var(name))
			continue;
		w_add(w, first ? "{" : ",", 1);
		first = 0;
		w->var = name;
		w_indent(w, level + 1);
		w_quoted(w, name, strlen(name));
		w_add(w, ": ", 2);
		w_value(w, v, level + 1);
	}
	w->var = NULL;
	if (first) {
		w_add(w, "{}", 2);
		return;
	}
	w_indent(w, level);
	w_add(w, "}", 1);
}

int
inv_json_write_host(struct buf *out, const struct host *h, struct err *err)
{
	struct writer w = { out, err, h->name, NULL, 0 };

	w_host_vars(&w, h, 0);
	w_add(&w, "\n", 1);
	return w.code;
}

/* One top-level entry of --list: a group's name, or _meta (g NONE). */
struct entry {
	const char	*name;
	size_t		 g;
};

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
	    ((const struct entry *)b)->name);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct host *const *)a)->name,
	    (*(const struct host *const *)b)->name);
}

/* 1 when h's only group is ungrouped (Ansible's group_names). */
static int
only_ungrouped(const struct host *h)
{
	return host_ngroups(h) == 1 && strcmp(host_group(h, 0),
	    "ungrouped") == 0;
}

size_t
inv_json_group_hosts(const struct inventory *inv, size_t g,
    const unsigned char *selected, const struct host ***out)
{
	const struct host **hosts, *h;
	unsigned char *listed = NULL;
	size_t nh = inventory_nhosts(inv), n, i, k = 0;

	n = inventory_group_members(inv, g, out);
	if (g == ENVCTL_INVB_ALL)
		return 0;
	if (g != ENVCTL_INVB_UNGROUPED) {
		for (i = 0; i < n; i++)
			if (selected == NULL || selected[(*out)[i]->index])
				(*out)[k++] = (*out)[i];
		return k;
	}
	/*
	 * As Ansible reconciles it: the hosts put there that are in no other
	 * group, then every other host in no group but all, in host order.
	 */
	hosts = xcalloc(nh + 1, sizeof(*hosts));
	listed = xcalloc(nh + 1, 1);
	for (i = 0; i < n; i++) {
		h = (*out)[i];
		if (only_ungrouped(h) && !listed[h->index]) {
			listed[h->index] = 1;
			hosts[k++] = h;
		}
	}
	for (i = 0; i < nh; i++) {
		h = inventory_host(inv, i);
		if (only_ungrouped(h) && !listed[i]) {
			listed[i] = 1;
			hosts[k++] = h;
		}
	}
	for (i = 0, n = 0; i < k; i++)
		if (selected == NULL || selected[hosts[i]->index])
			hosts[n++] = hosts[i];
	free(*out);
	free(listed);
	*out = hosts;
	return n;
}

static void
w_names_list(struct writer *w, const char *key, const char *const *names,
    size_t n, int *first)
{
	size_t i;

	if (n == 0)
		return;
	if (!*first)
		w_add(w, ",", 1);
	*first = 0;
	w_indent(w, 2);
	w_quoted(w, key, strlen(key));
	w_add(w, ": [", 3);
	for (i = 0; i < n; i++) {
		w_indent(w, 3);
		w_quoted(w, names[i], strlen(names[i]));
		if (i + 1 < n)
			w_add(w, ",", 1);
	}
	w_indent(w, 2);
	w_add(w, "]", 1);
}

/* Group g's entry ("children" then "hosts", as sorted); 0 when empty. */
static int
w_group(struct writer *w, const struct inventory *inv, size_t g,
    const unsigned char *selected, int dry)
{
	const struct host **members = NULL;
	const char **names;
	size_t nc = inventory_group_nchildren(inv, g), nm, i, n;
	int first = 1;

	nm = inv_json_group_hosts(inv, g, selected, &members);
	n = nc > nm ? nc : nm;
	names = xcalloc(n + 1, sizeof(*names));
	if (dry || (nc == 0 && nm == 0))
		goto out;
	w_indent(w, 1);
	w_quoted(w, inventory_group(inv, g), strlen(inventory_group(inv, g)));
	w_add(w, ": {", 3);
	for (i = 0; i < nc; i++)
		names[i] = inventory_group(inv,
		    inventory_group_child(inv, g, i));
	w_names_list(w, "children", names, nc, &first);
	for (i = 0; i < nm; i++)
		names[i] = members[i]->name;
	w_names_list(w, "hosts", names, nm, &first);
	w_indent(w, 1);
	w_add(w, "}", 1);
out:
	free(names);
	free(members);
	return nc > 0 || nm > 0;
}

static void
w_meta(struct writer *w, const struct inventory *inv,
    const unsigned char *selected)
{
	const struct host **hosts;
	size_t nh = inventory_nhosts(inv), i, n = 0;

	hosts = xcalloc(nh + 1, sizeof(*hosts));
	for (i = 0; i < nh; i++)
		if ((selected == NULL || selected[i]) &&
		    host_has_vars(inventory_host(inv, i)))
			hosts[n++] = inventory_host(inv, i);
	qsort(hosts, n, sizeof(*hosts), name_cmp);
	w_indent(w, 1);
	w_str(w, "\"_meta\": {");
	w_indent(w, 2);
	w_str(w, "\"hostvars\": ");
	w_add(w, n == 0 ? "{}" : "{", n == 0 ? 2 : 1);
	for (i = 0; i < n && w->code == 0; i++) {
		w_indent(w, 3);
		w_quoted(w, hosts[i]->name, strlen(hosts[i]->name));
		w_add(w, ": ", 2);
		w_host_vars(w, hosts[i], 3);
		if (i + 1 < n)
			w_add(w, ",", 1);
	}
	if (n > 0) {
		w_indent(w, 2);
		w_add(w, "}", 1);
	}
	w_indent(w, 1);
	w_add(w, "}", 1);
	free(hosts);
}

int
inv_json_write_list(struct buf *out, const struct inventory *inv,
    const unsigned char *selected, struct err *err)
{
	struct writer w = { out, err, NULL, NULL, 0 };
	size_t ng = inventory_ngroups(inv), i, n = 0, top = 0, g, c;
	struct entry *entries = xcalloc(ng + 1, sizeof(*entries));
	unsigned char *reached = xcalloc(ng + 1, 1);
	size_t *stack = xcalloc(ng + 1, sizeof(*stack));

	if (inventory_has_group(inv, "_meta")) {
		w_fail(&w, "a group named '_meta' cannot be shown: "
		    "ansible-inventory --list uses that key for hostvars");
		goto out;
	}
	/* The groups ansible-inventory walks: all and its descendants. */
	stack[top++] = ENVCTL_INVB_ALL;
	reached[ENVCTL_INVB_ALL] = 1;
	while (top > 0) {
		g = stack[--top];
		if (w_group(&w, inv, g, selected, 1))
			entries[n++] = (struct entry){ inventory_group(inv, g),
			    g };
		for (i = 0; i < inventory_group_nchildren(inv, g); i++) {
			c = inventory_group_child(inv, g, i);
			if (c < ng && !reached[c]) {
				reached[c] = 1;
				stack[top++] = c;
			}
		}
	}
	entries[n++] = (struct entry){ "_meta", ENVCTL_INVB_NONE };
	qsort(entries, n, sizeof(*entries), entry_cmp);
	w_add(&w, "{", 1);
	for (i = 0; i < n && w.code == 0; i++) {
		if (entries[i].g == ENVCTL_INVB_NONE)
			w_meta(&w, inv, selected);
		else
			(void)w_group(&w, inv, entries[i].g, selected, 0);
		if (i + 1 < n)
			w_add(&w, ",", 1);
	}
	w_add(&w, "\n}\n", 3);
out:
	free(entries);
	free(reached);
	free(stack);
	return w.code;
}
