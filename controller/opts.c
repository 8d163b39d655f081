/* opts.c - table-driven option parsing and help (see opts.h). */
#include "opts.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"

static const struct opt *
find_long(const struct opt *opts, const char *name, size_t len)
{
	for (; opts->type != ENVCTL_OPT_END; opts++)
		if (opts->long_name != NULL &&
		    strlen(opts->long_name) == len &&
		    strncmp(opts->long_name, name, len) == 0)
			return opts;
	return NULL;
}

static const struct opt *
find_short(const struct opt *opts, int c)
{
	for (; opts->type != ENVCTL_OPT_END; opts++)
		if (opts->short_name == c)
			return opts;
	return NULL;
}

static const char *
optname(const struct opt *o, struct buf *tmp)
{
	buf_reset(tmp);
	if (o->long_name != NULL)
		buf_addf(tmp, "--%s", o->long_name);
	else
		buf_addf(tmp, "-%c", o->short_name);
	return tmp->data;
}

/* Stores arg (NULL for flags) into o's value. */
static int
store(const struct opt *o, const char *arg, struct err *err)
{
	struct buf name = ENVCTL_BUF_INIT;
	char *end;
	long v;
	int r = 0;

	switch (o->type) {
	case ENVCTL_OPT_FLAG:
		*(int *)o->value = 1;
		break;
	case ENVCTL_OPT_COUNT:
		(*(int *)o->value)++;
		break;
	case ENVCTL_OPT_STRING:
		*(const char **)o->value = arg;
		break;
	case ENVCTL_OPT_INT:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || v < o->min ||
		    v > o->max)
			r = err_set(err, ENVCTL_EUSAGE, "option '%s' expects "
			    "a number from %d to %d, not '%s'",
			    optname(o, &name), o->min, o->max, arg);
		else
			*(int *)o->value = (int)v;
		break;
	case ENVCTL_OPT_END:
		break;
	}
	buf_release(&name);
	return r;
}

static int
takes_arg(const struct opt *o)
{
	return o->type == ENVCTL_OPT_STRING || o->type == ENVCTL_OPT_INT;
}

int
opts_parse(const struct opt *opts, int argc, char **argv, int first,
    char **operands, int *noperands, struct err *err)
{
	struct buf name = ENVCTL_BUF_INIT;
	const struct opt *o;
	const char *a, *eq, *val;
	int i, r = 0, only_operands = 0;

	*noperands = 0;
	for (i = first; i < argc && r == 0; i++) {
		a = argv[i];
		if (only_operands || a[0] != '-' || a[1] == '\0') {
			operands[(*noperands)++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			r = 1;
			break;
		}
		if (a[1] == '-') {
			eq = strchr(a + 2, '=');
			o = find_long(opts, a + 2, eq != NULL ?
			    (size_t)(eq - a - 2) : strlen(a + 2));
			if (o == NULL) {
				r = err_set(err, ENVCTL_EUSAGE,
				    "unknown option '%.*s'", eq != NULL ?
				    (int)(eq - a) : (int)strlen(a), a);
				break;
			}
			if (!takes_arg(o) && eq != NULL) {
				r = err_set(err, ENVCTL_EUSAGE, "option '%s' "
				    "takes no value", optname(o, &name));
				break;
			}
			val = eq != NULL ? eq + 1 : NULL;
		} else {
			if ((o = find_short(opts, a[1])) == NULL) {
				r = err_set(err, ENVCTL_EUSAGE,
				    "unknown option '-%c'", a[1]);
				break;
			}
			if (!takes_arg(o) && a[2] != '\0') {
				/* Bundled flags: -qv. */
				for (const char *p = a + 1; *p != '\0'; p++) {
					o = find_short(opts, *p);
					if (o == NULL || takes_arg(o)) {
						r = err_set(err, ENVCTL_EUSAGE,
						    "unknown option '-%c' in "
						    "'%s'", *p, a);
						break;
					}
					store(o, NULL, err);
				}
				continue;
			}
			val = a[2] != '\0' ? a + 2 : NULL;
		}
		if (takes_arg(o) && val == NULL) {
			if (i + 1 >= argc) {
				r = err_set(err, ENVCTL_EUSAGE, "option '%s' "
				    "needs a value (%s)", optname(o, &name),
				    o->argname != NULL ? o->argname : "ARG");
				break;
			}
			val = argv[++i];
		}
		r = store(o, val, err);
	}
	buf_release(&name);
	return r;
}

void
opts_usage(struct buf *out, const char *const *usage, const struct opt *opts)
{
	struct buf left = ENVCTL_BUF_INIT;
	const struct opt *o;
	size_t i;

	for (i = 0; usage[i] != NULL; i++)
		buf_addf(out, "%s %s\n", i == 0 ? "usage:" : "   or:",
		    usage[i]);
	if (opts->type != ENVCTL_OPT_END)
		buf_addch(out, '\n');
	for (o = opts; o->type != ENVCTL_OPT_END; o++) {
		buf_reset(&left);
		if (o->short_name != 0)
			buf_addf(&left, "-%c%s", o->short_name,
			    o->long_name != NULL ? ", " : "");
		else
			buf_addstr(&left, "    ");
		if (o->long_name != NULL)
			buf_addf(&left, "--%s", o->long_name);
		if (takes_arg(o))
			buf_addf(&left, " %s", o->argname != NULL ?
			    o->argname : "ARG");
		if (left.len < 26)
			buf_addf(out, "    %-26s%s\n", left.data, o->help);
		else
			buf_addf(out, "    %s\n    %-26s%s\n", left.data, "",
			    o->help);
	}
	buf_release(&left);
}
