/*
 * fscheck.h - the per-variable checks of a playbook, made on the host.
 *
 * A check asks whether a path is a directory ("dir"), a regular file
 * ("file") or a regular file the agent's effective user may execute
 * ("executable"), following symlinks as a program using the value would.
 * A failed check is an answer with a reason, not an error.  The CUDA
 * kinds ("cuda-toolkit", "ptxas") run programs: cudacheck.h has them.
 */
#ifndef ENVCTL_AGENT_FSCHECK_H
#define ENVCTL_AGENT_FSCHECK_H

/* 1 when kind is one of "dir", "file", "executable". */
int	fscheck_kind_valid(const char *kind);
/*
 * Returns 1 when path passes the check of kind, else 0 with *reason set to
 * a static text: "does not exist", "not a directory", "not a regular
 * file", "not executable", "not an absolute path" or strerror().
 */
int	fscheck_run(const char *kind, const char *path, const char **reason);

#endif
