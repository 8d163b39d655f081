/* probe.c - one interpreter run tells what start-up does (see probe.h). */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "child.h"
#include "forkserver.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"

#define STARTUP_ERROR	"Error in sitecustomize; "
#define TAIL_MAX	300

/*
 * Runs after site initialisation, so sitecustomize already ran or failed.
 * The variable names arrive as sys.argv[1:], never pasted into the code.
 * It writes JSON by hand and finds the module's spec by asking
 * sys.meta_path itself, as importlib.util.find_spec would: importing json,
 * or importlib.util (contextlib, collections, functools), would add half
 * of a bare interpreter's start-up to every probe.  Strings are made valid
 * UTF-8 first (surrogate escapes become U+FFFD), then escaped to ASCII.
 * The report goes straight to fd 1 after the flushes; os._exit() then
 * skips atexit handlers and the non-daemon threads a sitecustomize may
 * have started.
 */
static const char script[] =
    "import sys, os\n"
    "def _envctl_probe():\n"
    "    import site\n"
    "    def q(s):\n"
    "        if s is None:\n"
    "            return 'null'\n"
    "        s = str(s).encode('utf-8', 'surrogateescape')"
    ".decode('utf-8', 'replace')\n"
    "        o = []\n"
    "        for c in s:\n"
    "            n = ord(c)\n"
    "            if 32 <= n < 127 and c != '\"' and c != '\\\\':\n"
    "                o.append(c)\n"
    "            elif n < 0x10000:\n"
    "                o.append('\\\\u%04x' % n)\n"
    "            else:\n"
    "                n -= 0x10000\n"
    "                o.append('\\\\u%04x\\\\u%04x' % (0xd800 + (n >> 10),\n"
    "                                             0xdc00 + (n & 0x3ff)))\n"
    "        return '\"' + ''.join(o) + '\"'\n"
    "    if sys.path and sys.path[0] == '':\n"
    "        del sys.path[0]\n"
    "    m = sys.modules.get('sitecustomize')\n"
    "    s = getattr(m, '__spec__', None)\n"
    "    for f in ([] if s is not None else sys.meta_path):\n"
    "        try:\n"
    "            s = f.find_spec('sitecustomize', None)\n"
    "        except Exception:\n"
    "            s = None\n"
    "        if s is not None:\n"
    "            break\n"
    "    origin = getattr(s, 'origin', None)\n"
    "    dangling = None\n"
    "    if origin is None:\n"
    "        for d in sys.path:\n"
    "            c = os.path.join(d, 'sitecustomize.py')\n"
    "            if d and os.path.islink(c) and not os.path.exists(c):\n"
    "                dangling = c\n"
    "                break\n"
    "    try:\n"
    "        sp = site.getsitepackages()\n"
    "    except Exception:\n"
    "        sp = []\n"
    "    r = ['{\"executable\":', q(sys.executable),\n"
    "         ',\"version\":', q(sys.version.split()[0]),\n"
    "         ',\"origin\":', q(origin),\n"
    "         ',\"dangling\":', q(dangling),\n"
    "         ',\"imported\":', q(getattr(sys.modules.get('sitecustomize'),\n"
    "                                      '__file__', None)),\n"
    "         ',\"site_packages\":[', ','.join(q(p) for p in sp),\n"
    "         '],\"values\":{',\n"
    "         ','.join(q(n) + ':' + q(os.environ.get(n))\n"
    "                  for n in sys.argv[1:]), '}}']\n"
    "    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):\n"
    "        try:\n"
    "            f.flush()\n"
    "        except Exception:\n"
    "            pass\n"
    "    b = ('\\n" ENVCTL_PROBE_MARKER "\\n' + ''.join(r) + '\\n')"
    ".encode('ascii')\n"
    "    while b:\n"
    "        b = b[os.write(1, b):]\n"
    "    os._exit(0)\n"
    "_envctl_probe()\n";

/* Start of the text after the last marker line in b, or NULL. */
static const char *
after_marker(const struct buf *b)
{
	static const char m[] = "\n" ENVCTL_PROBE_MARKER "\n";
	size_t mlen = sizeof(m) - 1, i;

	if (b->len < mlen)
		return NULL;
	for (i = b->len - mlen + 1; i-- > 0;)
		if (b->data[i] == '\n' && memcmp(b->data + i, m, mlen) == 0)
			return b->data + i + mlen;
	return NULL;
}

static char *
dup_text(const char *s, size_t len)
{
	json_t *v = proto_text(s, len);
	char *p = xstrdup(json_string_value(v));

	json_decref(v);
	return p;
}

/* Finds Python's "Error in sitecustomize" line and the exception after it. */
static void
parse_startup_error(struct probe *p)
{
	const char *s = p->errtext.data, *end = s + p->errtext.len, *nl, *nl2;

	while (s < end) {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			nl = end;
		if ((size_t)(nl - s) >= sizeof(STARTUP_ERROR) - 1 &&
		    memcmp(s, STARTUP_ERROR, sizeof(STARTUP_ERROR) - 1) == 0) {
			p->startup_message = dup_text(s, (size_t)(nl - s));
			s = nl < end ? nl + 1 : end;
			if ((nl2 = memchr(s, '\n', (size_t)(end - s))) == NULL)
				nl2 = end;
			p->startup_exception = dup_text(s, (size_t)(nl2 - s));
			return;
		}
		s = nl + 1;
	}
}

/* The last non-empty line of stderr, shortened, for a one-line message. */
static char *
stderr_tail(const struct buf *b)
{
	const char *end = b->data + b->len, *s;

	while (end > b->data && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '))
		end--;
	for (s = end; s > b->data && s[-1] != '\n'; s--)
		;
	if (s == end)
		return xstrdup("(nothing on stderr)");
	if (end - s > TAIL_MAX)
		s = end - TAIL_MAX;
	return dup_text(s, (size_t)(end - s));
}

static char *
get_str(const json_t *o, const char *key, int *bad)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (!json_is_null(v))
		*bad = 1;
	return NULL;
}

/* Takes the script's report apart; EPROBE when it is not what it wrote. */
static int
parse_report(struct probe *p, const char *name, const char *s, size_t len,
    struct err *err)
{
	json_error_t jerr;
	json_t *o, *v, *val;
	const char *key;
	size_t i;
	int bad = 0, r = 0;

	o = json_loadb(s, len, JSON_DISABLE_EOF_CHECK, &jerr);
	if (o == NULL)
		return err_set(err, ENVCTL_EPROBE,
		    "%s printed a malformed probe report: %s", name, jerr.text);
	p->executable = get_str(o, "executable", &bad);
	p->version = get_str(o, "version", &bad);
	p->origin = get_str(o, "origin", &bad);
	p->dangling = get_str(o, "dangling", &bad);
	p->imported = get_str(o, "imported", &bad);
	v = json_object_get(o, "site_packages");
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			bad |= !json_is_string(json_array_get(v, i));
		p->site_packages = json_incref(v);
	}
	v = json_object_get(o, "values");
	if (json_is_object(v)) {
		json_object_foreach(v, key, val)
			bad |= !json_is_string(val) && !json_is_null(val);
		p->values = json_incref(v);
	}
	if (bad || p->executable == NULL || p->version == NULL ||
	    p->site_packages == NULL || p->values == NULL)
		r = err_set(err, ENVCTL_EPROBE,
		    "%s printed a probe report with missing or wrong fields",
		    name);
	json_decref(o);
	return r;
}

int
probe_run(struct probe *p, const struct probe_args *a, struct err *err)
{
	struct child_spec spec;
	struct child_result res;
	char **argv, **env, *tail;
	const char *rep;
	size_t i, n = 0, k = 0;
	int r;

	memset(p, 0, sizeof(*p));
	buf_init(&p->errtext, 0);
	while (a->env_extra != NULL && a->env_extra[n] != NULL)
		n++;
	env = xcalloc(n + 2, sizeof(*env));
	env[0] = "PATH=" ENVCTL_PROBE_PATH;
	for (i = 0; i < n; i++)
		env[1 + i] = a->env_extra[i];
	argv = xcalloc(a->nnames + 5, sizeof(*argv));
	argv[k++] = (char *)a->interp;
	argv[k++] = "-c";
	k = cache_script_args(argv, k, a->cache, "probe", script);
	for (i = 0; i < a->nnames; i++)
		argv[k++] = a->names[i];

	memset(&spec, 0, sizeof(spec));
	spec.name = a->interp;
	spec.argv = argv;
	spec.envp = env;
	spec.path = ENVCTL_PROBE_PATH;
	spec.cwd = "/";
	spec.timeout_ms = a->timeout_ms;
	spec.out_keep = ENVCTL_PROBE_OUT_KEEP;
	spec.err_keep = ENVCTL_PROBE_ERR_KEEP;
	spec.stop = a->stop;
	spec.waitmask = a->waitmask;
	/*
	 * A server pays off from the second run on: start one only when
	 * more runs follow.  It cannot serve this run, or broke: a fresh
	 * start.
	 */
	r = ENVCTL_EUNSUPPORTED;
	child_result_init(&res);
	if (a->fs != NULL && (a->start_fs || forkserver_serving(a->fs)))
		r = forkserver_run(a->fs, &res, &spec, a->last, err);
	p->forked = r != ENVCTL_EUNSUPPORTED;
	if (!p->forked) {
		child_result_release(&res);
		r = child_run(&res, &spec, err);
	}
	if (res.exec_errno != 0) {
		r = err_errno(err, ENVCTL_EPROBE, res.exec_errno,
		    "cannot run '%s'", a->interp);
		goto out;
	}
	buf_add(&p->errtext, res.err.data, res.err.len);
	p->truncated = res.out_truncated || res.err_truncated;
	p->exit = res.status;
	/*
	 * No report yet: start-up itself (site, .pth files, sitecustomize)
	 * never ended.  Said here, by the host, before the controller's own
	 * deadline (a longer one) would only see a silent host.
	 */
	if (r == ENVCTL_ETIMEOUT && after_marker(&res.out) == NULL) {
		r = err_set(err, ENVCTL_ETIMEOUT, "%s did not finish starting "
		    "in %g s (sitecustomize hangs?)", a->interp,
		    a->timeout_ms / 1000.0);
	}
	if (r != 0)
		goto out;
	parse_startup_error(p);
	if ((rep = after_marker(&res.out)) == NULL) {
		tail = stderr_tail(&res.err);
		if (res.signal != 0)
			r = err_set(err, ENVCTL_EPROBE, "%s was killed by "
			    "signal %d without a probe report: %s", a->interp,
			    res.signal, tail);
		else
			r = err_set(err, ENVCTL_EPROBE, "%s exited with status "
			    "%d without a probe report: %s", a->interp,
			    res.status, tail);
		free(tail);
		goto out;
	}
	r = parse_report(p, a->interp, rep,
	    (size_t)(res.out.data + res.out.len - rep), err);
out:
	child_result_release(&res);
	free(argv);
	free(env);
	return r;
}

void
probe_release(struct probe *p)
{
	free(p->executable);
	free(p->version);
	free(p->origin);
	free(p->dangling);
	free(p->imported);
	json_decref(p->site_packages);
	json_decref(p->values);
	free(p->startup_message);
	free(p->startup_exception);
	buf_release(&p->errtext);
	memset(p, 0, sizeof(*p));
}
