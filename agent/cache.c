/* cache.c - the agent's upload cache, kept small (see cache.h). */
#include "cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PREFIX		"envctl-agent-"
#define PREFIX_LEN	(sizeof(PREFIX) - 1)
#define SHA_HEX		64
#define TMP_TAG		".tmp-"
#define TMP_TAG_LEN	(sizeof(TMP_TAG) - 1)
#define TMP_RAND	12
#define DAY		(24 * 60 * 60)

static int
is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* "envctl-agent-" + 64 hex digits. */
static int
agent_name(const char *s)
{
	return strlen(s) == PREFIX_LEN + SHA_HEX &&
	    strncmp(s, PREFIX, PREFIX_LEN) == 0 && is_hex(s + PREFIX_LEN,
	    SHA_HEX);
}

/* "." + an agent name + ".tmp-" + 12 hex digits: an upload's temp. */
static int
temp_name(const char *s)
{
	size_t n = 1 + PREFIX_LEN + SHA_HEX;
	char name[1 + PREFIX_LEN + SHA_HEX + 1];

	if (strlen(s) != n + TMP_TAG_LEN + TMP_RAND || s[0] != '.' ||
	    strncmp(s + n, TMP_TAG, TMP_TAG_LEN) != 0 ||
	    !is_hex(s + n + TMP_TAG_LEN, TMP_RAND))
		return 0;
	memcpy(name, s + 1, n - 1);
	name[n - 1] = '\0';
	return agent_name(name);
}

void
cache_tidy(void)
{
	char self[PATH_MAX], *base;
	struct stat me, st;
	struct dirent *de;
	time_t now = time(NULL), keep;
	ssize_t n;
	DIR *dp;
	int dfd;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	/* A deleted file reads "NAME (deleted)": no match, nothing done. */
	if ((base = strrchr(self, '/')) == NULL || !agent_name(base + 1))
		return;
	*base++ = '\0';
	dfd = open(self[0] != '\0' ? self : "/", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (dfd == -1)
		return;
	if (fstatat(dfd, base, &me, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(me.st_mode) || (dp = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	if (now - me.st_mtime > DAY)
		utimensat(dirfd(dp), base, NULL, AT_SYMLINK_NOFOLLOW);
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, base) == 0)
			continue;
		if (agent_name(de->d_name))
			keep = (time_t)CACHE_KEEP_DAYS * DAY;
		else if (temp_name(de->d_name))
			keep = DAY;
		else
			continue;
		if (fstatat(dirfd(dp), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == me.st_uid && now - st.st_mtime > keep)
			unlinkat(dirfd(dp), de->d_name, 0);
	}
	closedir(dp);
}
