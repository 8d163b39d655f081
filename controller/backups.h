/*
 * backups.h - the backups a host keeps of its managed file.
 *
 * backups_fetch() asks the agent (on an open session) for the backups of
 * one target, newest first, and keeps them as plain structs; backups_pick()
 * chooses what rollback restores.  The agent writes and prunes backups
 * during apply and rollback; the controller only reads this list.
 */
#ifndef ENVCTL_CONTROLLER_BACKUPS_H
#define ENVCTL_CONTROLLER_BACKUPS_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"

struct agentlink;
struct buf;
struct playbook;

struct backup_entry {
	char		*id;
	char		*time;
	int		 absent;	/* the file did not exist then */
	long		 size;
	char		*sha256;
	unsigned	 mode;
	char		*owner, *group;
	char		*playbook;
	char		*controller;
};

struct backup_list {
	struct backup_entry *v;		/* newest first */
	size_t		 n;
	char		*real;		/* the file they are backups of */
};

/*
 * The list that came with the read (plan.h hp->backups) when there is one,
 * else fetched for path on l; ENVCTL_EREMOTE etc. from the agent.
 */
int	backups_get(struct backup_list *bl, const json_t *with_read,
	    struct agentlink *l, const char *path, const struct playbook *pb,
	    struct err *err);
/* Fetches the list for path; ENVCTL_EREMOTE etc. from the agent. */
int	backups_fetch(struct backup_list *bl, struct agentlink *l,
	    const char *path, const struct playbook *pb, struct err *err);
/*
 * Fills bl from the agent's ok:true "backups" reply, as a host sent it:
 * entries without an id are left out, other missing fields are NULL or 0.
 */
void	backups_parse(struct backup_list *bl, const json_t *reply);
/*
 * The backup rollback restores: the one named to, or for "latest" the
 * newest whose bytes differ from the current file (current_sha256, "" when
 * absent).  NULL when there is none.
 */
const struct backup_entry *backups_pick(const struct backup_list *bl,
	    const char *to, const char *current_sha256);
/* Appends one line per backup, indented. */
void	backups_text(struct buf *out, const struct backup_list *bl);
/*
 * Appends a host's block: "NAME: N backups of REAL" (real when the list
 * names none), then backups_text().
 */
void	backups_host_text(struct buf *out, const char *name,
	    const struct backup_list *bl, const char *real);
/*
 * One host of backups --json: name, path, backups and error null; or only
 * name and error (err's one-line message) when err is set.  A new
 * reference.
 */
json_t	*backups_json(const char *name, const char *real,
	    const struct backup_list *bl, const struct err *err);
void	backup_list_release(struct backup_list *bl);

#endif
