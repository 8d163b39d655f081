/* account.c - user and group names without NSS (see account.h). */
#include "account.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xmalloc.h"

/* Field n (1-based) of a passwd(5) line, as a new string, or NULL. */
static char *
field(const char *line, int n)
{
	const char *e;

	for (; n > 1; n--)
		if ((line = strchr(line, ':')) == NULL)
			return NULL;
		else
			line++;
	e = strchr(line, ':');
	return xstrndup(line, e != NULL ? (size_t)(e - line) : strlen(line));
}

/*
 * Looks up id in a passwd(5) or group(5) file: name is field 1, the id
 * field 3.  Returns field want of that line (1: the name), or NULL when no
 * line has that id.  With want_name set it goes the other way: the id of
 * the line named want_name lands in *idp and the name comes back.
 */
static char *
lookup(const char *file, unsigned long id, const char *want_name,
    unsigned long *idp, int want)
{
	struct buf b;
	char *line, *end, *name = NULL, *f2, *f3, *num_end;
	unsigned long v;

	buf_init(&b, ENVCTL_ACCOUNT_MAX);
	if (buf_read_file(&b, file, NULL) != 0)
		goto out;
	for (line = b.data; line < b.data + b.len; line = end + 1) {
		if ((end = memchr(line, '\n', b.data + b.len - line)) == NULL)
			end = b.data + b.len;
		*end = '\0';
		if ((f2 = strchr(line, ':')) == NULL || f2 == line ||
		    (f3 = strchr(f2 + 1, ':')) == NULL)
			continue;
		errno = 0;
		v = strtoul(f3 + 1, &num_end, 10);
		if (errno != 0 || num_end == f3 + 1 || *num_end != ':' ||
		    f3[1] == '-')
			continue;
		if (want_name != NULL ? strlen(want_name) !=
		    (size_t)(f2 - line) || memcmp(line, want_name,
		    (size_t)(f2 - line)) != 0 : v != id)
			continue;
		name = want == 1 ? xstrndup(line, (size_t)(f2 - line)) :
		    field(line, want);
		if (idp != NULL)
			*idp = v;
		break;
	}
out:
	buf_release(&b);
	return name;
}

char *
account_user(uid_t uid)
{
	char *name = lookup("/etc/passwd", (unsigned long)uid, NULL, NULL,
	    1);

	return name != NULL ? name : xasprintf("%lu", (unsigned long)uid);
}

char *
account_group(gid_t gid)
{
	char *name = lookup("/etc/group", (unsigned long)gid, NULL, NULL,
	    1);

	return name != NULL ? name : xasprintf("%lu", (unsigned long)gid);
}

/* The id of name in file, else name as a decimal number; -1 when neither
 * (chown(1)'s order). */
static int
lookup_id(unsigned long *out, const char *file, const char *name)
{
	char *end, *found;
	unsigned long v;

	if (name[0] == '\0')
		return -1;
	if ((found = lookup(file, 0, name, out, 1)) != NULL) {
		free(found);
		return 0;
	}
	if (name[0] < '0' || name[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (errno != 0 || *end != '\0' || v >= 0xffffffffUL)
		return -1;
	*out = v;
	return 0;
}

int
account_uid(uid_t *out, const char *name)
{
	unsigned long v;

	if (lookup_id(&v, "/etc/passwd", name) != 0)
		return -1;
	*out = (uid_t)v;
	return 0;
}

int
account_gid(gid_t *out, const char *name)
{
	unsigned long v;

	if (lookup_id(&v, "/etc/group", name) != 0)
		return -1;
	*out = (gid_t)v;
	return 0;
}

char *
account_home(uid_t uid)
{
	return lookup("/etc/passwd", (unsigned long)uid, NULL, NULL, 6);
}
