/* account.c - user and group names without NSS (see account.h). */
#include "account.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xmalloc.h"

/*
 * Looks up id in a passwd(5) or group(5) file: name is field 1, the id
 * field 3.  Returns the name, or NULL when no line has that id.
 */
static char *
lookup(const char *file, unsigned long id)
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
		    f3[1] == '-' || v != id)
			continue;
		name = xstrndup(line, (size_t)(f2 - line));
		break;
	}
out:
	buf_release(&b);
	return name;
}

char *
account_user(uid_t uid)
{
	char *name = lookup("/etc/passwd", (unsigned long)uid);

	return name != NULL ? name : xasprintf("%lu", (unsigned long)uid);
}

char *
account_group(gid_t gid)
{
	char *name = lookup("/etc/group", (unsigned long)gid);

	return name != NULL ? name : xasprintf("%lu", (unsigned long)gid);
}
