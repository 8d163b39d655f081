/*
 * account.h - user and group names from /etc/passwd and /etc/group.
 *
 * The agent is a static binary, which cannot load NSS modules, so
 * getpwuid() is off limits: these parse the files directly (each read
 * capped at ENVCTL_ACCOUNT_MAX).  An id the files do not name (or a file
 * that cannot be read) comes back as its decimal number, and the reverse
 * lookups take a decimal number for a name no file holds.  Names from
 * LDAP or sssd are not seen.  Results are heap strings the caller frees.
 */
#ifndef ENVCTL_AGENT_ACCOUNT_H
#define ENVCTL_AGENT_ACCOUNT_H

#include <sys/types.h>

#define ENVCTL_ACCOUNT_MAX	(16u * 1024 * 1024)

/* The name of uid in /etc/passwd, or "UID"; the caller frees it. */
char	*account_user(uid_t uid);
/* The name of gid in /etc/group, or "GID"; the caller frees it. */
char	*account_group(gid_t gid);
/* The uid a user name (or a decimal number) stands for: 0, or -1 when the
 * name is not in /etc/passwd. */
int	 account_uid(uid_t *out, const char *name);
/* The home directory of uid in /etc/passwd, or NULL; the caller frees. */
char	*account_home(uid_t uid);
/* The gid a group name (or a decimal number) stands for: 0, or -1. */
int	 account_gid(gid_t *out, const char *name);

#endif
