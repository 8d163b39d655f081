/*
 * backup.h - the backups of one managed file, with their metadata.
 *
 * The backups of REAL live in ROOT/REAL (ROOT the playbook's backup dir,
 * REAL without its leading '/'; directories made 0700).  One backup is a
 * data file ID (0600, the old bytes exactly, empty when the file did not
 * exist) and ID.json (0600, its metadata), both fsynced, then the
 * directory.  ID is "20261202T133501Z-" and the first 12 hex digits of the
 * old SHA-256 (or "absent"), with "-2", "-3"... when taken; "seq" in the
 * metadata orders backups (newest: highest).  ID.json is written last,
 * through a temp and a rename, so a backup is there exactly when its
 * ID.json is: listing ignores leftovers and pruning removes them.  Two
 * backups are the same version when both record an absent file, or the
 * same bytes, mode, uid and gid (bytes compared, not digests).  Callers
 * hold the target's lock (lock.h) while they change a store.  An open
 * store reads the metadata once: later listings, backup_create() and
 * backup_prune() use and update that listing.
 */
#ifndef ENVCTL_AGENT_BACKUP_H
#define ENVCTL_AGENT_BACKUP_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

struct buf;
struct err;

#define ENVCTL_BACKUP_META_MAX	(64u * 1024)
#define ENVCTL_BACKUP_KEEP_MAX	10000

struct backup_store {
	char	*dir;	/* ROOT/REAL */
	int	 fd;	/* the directory, or -1 when it does not exist */
	json_t	*list;	/* the listing, once read (backup_list()) */
	json_t	*ignored;
};

#define BACKUP_STORE_INIT	{ NULL, -1, NULL, NULL }

/* What a new backup records about the file it saves. */
struct backup_info {
	const char	*op;		/* "apply" or "rollback" */
	const char	*path;		/* as requested, maybe a link */
	const char	*real;
	int		 exists;
	const char	*data;		/* when it exists */
	size_t		 len;
	mode_t		 mode;
	uid_t		 uid;
	gid_t		 gid;
	const char	*sha256;	/* hex, given by the controller */
	const char	*playbook;
	const char	*controller;
};

/* mkdir -p dir, new directories 0700 (each parent fsynced); ENVCTL_ESYS. */
int	backup_mkdirs(const char *dir, struct err *err);
/*
 * Opens ROOT/REAL, making it when create is set; without create a missing
 * store is not an error (fd -1: no backups).  ENVCTL_EINVALID when real is
 * not a canonical absolute path, ENVCTL_ESYS.  Release with
 * backup_close().
 */
int	backup_open(struct backup_store *bs, const char *root,
	    const char *real, int create, struct err *err);
void	backup_close(struct backup_store *bs);
/*
 * Saves a backup; *meta gets its metadata (a new reference).
 * ENVCTL_ESYS; nothing of it is left on failure.
 */
int	backup_create(json_t **meta, struct backup_store *bs,
	    const struct backup_info *bi, struct err *err);
/*
 * As backup_create(), unless the newest backup already holds the version
 * bi describes: then *meta is that backup's metadata and *made 0 (else
 * 1).  A caller that undoes its change deletes the backup only when it
 * made it.
 */
int	backup_save(json_t **meta, int *made, struct backup_store *bs,
	    const struct backup_info *bi, struct err *err);
/*
 * The complete backups' metadata in *list, newest first; *ignored (may be
 * NULL) gets {name, reason} objects for damaged ones.  Both are new
 * references to the store's own listing: read them, do not change them.
 * ENVCTL_ESYS when the store cannot be read.
 */
int	backup_list(json_t **list, json_t **ignored,
	    struct backup_store *bs, struct err *err);
/* Path of a backup's data file; the caller frees it. */
char	*backup_path(const struct backup_store *bs, const char *id);
/*
 * Reads a backup's data file (into data, which should have a cap) and
 * checks its size against meta.  ENVCTL_EINVALID when damaged,
 * ENVCTL_ETOOBIG, ENVCTL_ESYS.
 */
int	backup_load(struct buf *data, const struct backup_store *bs,
	    const json_t *meta, struct err *err);
/*
 * Keeps at most keep backups: the newest of each of the keep most recent
 * distinct versions, then, in the slots left, the newest older copies of
 * those; removes the others (metadata first, then data) and every
 * leftover of an interrupted backup.  A backup that cannot be read for
 * the comparison counts as distinct.  ENVCTL_ESYS.
 */
int	backup_prune(struct backup_store *bs, size_t keep, struct err *err);
/* Removes one backup (after a failed install); ENVCTL_ESYS. */
int	backup_delete(struct backup_store *bs, const char *id,
	    struct err *err);

#endif
