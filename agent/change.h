/*
 * change.h - the steps a change to a managed file is made of, for the
 * apply (op_apply.h) and rollback (op_rollback.h) ops.
 *
 * A struct change lives for one op: change_init(), change_parse() of the
 * request's shared fields, change_policy() (a privileged agent's checks),
 * change_begin() (resolve, lock, clean stale temps, compare and swap),
 * then the op's own steps from the calls below, and change_release(),
 * which drops the lock, the directory and the backup store whatever
 * happened.  Not thread-safe; one change at a time per agent.
 */
#ifndef ENVCTL_AGENT_CHANGE_H
#define ENVCTL_AGENT_CHANGE_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "backup.h"
#include "common/buf.h"
#include "install.h"
#include "lock.h"
#include "target.h"

struct agent_ctx;
struct err;
struct policy;
struct probe;

#define ENVCTL_APPLY_TIMEOUT_MS		30000
#define ENVCTL_APPLY_LOCK_TIMEOUT_MS	30000
#define ENVCTL_APPLY_TIMEOUT_MAX	3600000

/* One apply or rollback request, checked; strings borrowed from it. */
struct change_req {
	const char	*op;		/* "apply" or "rollback" */
	const char	*interp;
	const char	**also;		/* further interpreters that import
					   path: each validates and verifies
					   too (array owned, strings not) */
	size_t		 nalso;
	const char	*path;
	int		 expect_exists;
	struct buf	 expect;
	const char	*sha_old;	/* NULL when expect_exists is 0 */
	const char	*backup_root;
	size_t		 keep;
	const char	*playbook;
	const char	*controller;
	const char	*lock_dir;	/* NULL: ENVCTL_LOCK_DIR */
	int		 lock_timeout_ms;
	int		 timeout_ms;
	const char	*fault;		/* NULL, or a fault point */
	const json_t	*secret;	/* NULL, or an array of names */
	char		**names;	/* the variables probed */
	size_t		 nnames;
	/* apply */
	json_int_t	 after_read;	/* 0, or the read whose target and
					   bytes it takes (readmemo.h) */
	struct buf	 data;
	const json_t	*want;		/* name -> value */
	mode_t		 create_mode;
	uid_t		 create_uid;
	gid_t		 create_gid;
	/* rollback */
	const char	*to;
};

/* What a change holds while it runs. */
struct change {
	struct change_req	 rq;
	const struct agent_ctx	*ctx;
	int			 fork;	/* start ctx->fs for its probes */
	struct target		 t0;	/* read before the lock */
	struct target		 cur;	/* read under the lock */
	struct lock		 lk;
	struct install_dir	 dir;
	struct backup_store	 bs;
	int			 bmade;	/* this change made its backup */
	long long		 start;	/* when the op began (deadline.h) */
	int			 run_ms;	/* each interpreter run's share,
					   once the lock is held; 0 before */
};

void	change_init(struct change *c, const char *op,
	    const struct agent_ctx *ctx);
void	change_release(struct change *c);
/* The fields apply and rollback share into c->rq; ENVCTL_EINVALID. */
int	change_parse(struct change_req *rq, const json_t *req,
	    struct err *err);
/*
 * A privileged agent's checks (policy.h) of the interpreter, the backup
 * and lock directories and the target, which one interpreter run tells
 * (probe_find(): a broken start-up still tells it).  Unprivileged: 0.
 */
int	change_policy(struct policy *pol, struct change *c, struct err *err);
/*
 * Resolve, lock, clean stale temps, compare and swap: afterwards c->cur
 * is what the controller read, and it stays so while the lock is held.
 * ENVCTL_ECHANGED when it is not.
 */
int	change_begin(struct change *c, struct err *err);
/*
 * Runs the candidate c->rq.data in the host's interpreter through
 * PYTHONPATH before it is installed; ENVCTL_EVERIFY when it fails, is
 * not the module imported or gives other values; *vj gets the run.
 */
int	change_validate(json_t **vj, struct change *c, struct err *err);
/*
 * Runs the probe as a fresh service would and compares it with the
 * request; why it is not as wanted (heap), or NULL.  *vj gets the run.
 */
char	*change_verify(json_t **vj, const struct change *c);
/*
 * Why probe run p is not what rq wants, as a heap string: the start-up
 * exception, or the first variable that differs (secrets masked); NULL
 * when all is as wanted.
 */
char	*change_probe_problem(const struct probe *p,
	    const struct change_req *rq);
/*
 * Backs c->cur up, or names the newest backup when it holds c->cur
 * already (c->bmade 0); *meta gets that backup's metadata.
 */
int	change_backup(json_t **meta, struct change *c, struct err *err);
/* {"id", "path"} of the backup meta, a new reference. */
json_t	*change_backup_ref(const struct change *c, const json_t *meta);
/* Drops the bytecode Python may have cached of the old file. */
void	change_drop_pycache(const struct change *c);
/*
 * Installs data (or removes the target when !exists) with mode and owner;
 * on a failure before the rename, deletes the backup bmeta made for it
 * (not one it reused).
 */
int	change_put(struct change *c, int exists, const char *data,
	    size_t len, mode_t mode, uid_t uid, gid_t gid,
	    const json_t *bmeta, const char *fault, struct err *err);
/* 0 when the target holds what backup meta recorded, else EVERIFY. */
int	change_check_restored(const struct change *c, const json_t *meta,
	    const struct buf *data, struct err *err);
/* Puts back what backup meta holds after a failed verification. */
int	change_restore(struct change *c, const json_t *meta,
	    struct err *err);
/* Prunes; a failure is a warning in reply, since the change is done. */
void	change_prune(json_t *reply, struct change *c);
/*
 * After a restore that worked: deletes the backup made for the change,
 * so that the store is as it was; a failure is a warning in detail.
 */
void	change_forget_backup(json_t *detail, struct change *c,
	    const json_t *meta);

#endif
