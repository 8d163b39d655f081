/*
 * selfexe.h - where the running program's file is (/proc/self/exe).
 *
 * Linux only, as both programs are.  The path is read whole however long
 * it is (never cut at PATH_MAX); when the file was deleted or replaced
 * since it started, it ends in " (deleted)", which callers that look for
 * files beside it simply do not find.  No global state; thread-safe.
 */
#ifndef ENVCTL_COMMON_SELFEXE_H
#define ENVCTL_COMMON_SELFEXE_H

/* The running program's absolute path (caller frees), or NULL with errno. */
char	*selfexe_path(void);
/* The directory that holds it (caller frees), or NULL with errno. */
char	*selfexe_dir(void);

#endif
