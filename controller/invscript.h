/*
 * invscript.h - executable (dynamic) inventories, run as Ansible runs them.
 *
 * invscript_run() runs one inventory program the way Ansible 2.14's script
 * plugin does (PATH --list, PATH --host NAME): no shell, the caller's
 * environment and working directory (Ansible does not chdir), plus what
 * envctl adds for safety: stdin /dev/null, every descriptor above 2
 * closed, its own process group, killed (the whole group) at the
 * deadline, stdout capped, stderr kept up to a cap.  invscript_read()
 * feeds a builder from the program's JSON.  No global state: several
 * threads may run programs at once.
 */
#ifndef ENVCTL_CONTROLLER_INVSCRIPT_H
#define ENVCTL_CONTROLLER_INVSCRIPT_H

struct buf;
struct err;
struct invb;

/* Largest stdout read (the YAML cap), and stderr kept for messages. */
#define ENVCTL_INVSCRIPT_MAX_OUT	(16u * 1024 * 1024)
#define ENVCTL_INVSCRIPT_MAX_ERR	(64u * 1024)
/* How long one inventory may take, --list and every --host together. */
#define ENVCTL_INVSCRIPT_TIMEOUT	60

/*
 * Runs path with arguments arg1 and arg2 (arg2 may be NULL) until it exits
 * and closes its output, or until deadline (deadline.h's ms).  out (reset first) gets its
 * stdout; errout (may be NULL; reset first) its stderr, at most
 * ENVCTL_INVSCRIPT_MAX_ERR bytes.  Returns 0 when it exited with status 0;
 * else fills err naming the command, with its stderr: ENVCTL_EINVALID (a
 * non-zero status or a signal), ENVCTL_ETIMEOUT (killed at the deadline),
 * ENVCTL_ETOOBIG (stdout past ENVCTL_INVSCRIPT_MAX_OUT; killed),
 * ENVCTL_ENOTFOUND (no such file), ENVCTL_ESYS (cannot be run).
 */
int	invscript_run(struct buf *out, struct buf *errout, const char *path,
	    const char *arg1, const char *arg2,
	    long long deadline, struct err *err);
/*
 * Reads the executable inventory invb_path(b) into b: runs it with --list
 * and, when its output has no _meta.hostvars, with --host NAME for each
 * host, all within timeout seconds.  Problems are recorded in b
 * (invb_error); returns 0 or the first one's code.
 */
int	invscript_read(struct invb *b, int timeout);

#endif
