/*
 * pykind.h - what kind of Python interpreter a path is, from its layout.
 *
 * The rules of `facts --discover` (docs/worker-env.md), read from the file
 * system only, never by running anything: a venv by its pyvenv.cfg (where
 * Python itself looks for it), conda by conda-meta/ in the prefix, pyenv
 * and uv by their directories, system by /usr/bin, /usr/local/bin, /bin.
 * Pure functions of the file system; results are the caller's to free.
 */
#ifndef ENVCTL_AGENT_PYKIND_H
#define ENVCTL_AGENT_PYKIND_H

#define ENVCTL_PYKIND_CFG_MAX	(64u * 1024)	/* bytes of a pyvenv.cfg */

/*
 * 1 when name (a file's basename) is an interpreter's as CPython installs
 * it, python$(VERSION)$(ABIFLAGS): "python", then optionally a version
 * ("3", "3.12") and its ABI flags, each at most once in configure's order:
 * t (free-threaded, 3.13 on), d (debug), m (pymalloc, 3.2 to 3.7), u (wide
 * unicode, 3.2), as in python3.13t, python3.13td, python3.7m,
 * python3.7dm.  "python3-config", "python3.12-gdb.py", "python3.13dt" and
 * "python3.11x" are not.  The agent's one test of the name (discover's
 * interpreters, the workers procenv.h finds).
 */
int	pykind_python_name(const char *name);
/*
 * The venv that path (an executable's path as written, not resolved)
 * belongs to, as Python finds it: the directory holding pyvenv.cfg beside
 * the executable or one level up, resolved; NULL when none (caller frees).
 */
char	*pykind_venv_dir(const char *path);
/*
 * The kind of the interpreter at path whose resolved file is real (may be
 * NULL): "venv", "uv-venv" (pyvenv.cfg has a "uv" key), "conda", "pyenv",
 * "uv", "system" or "other"; a static string.
 */
const char *pykind_classify(const char *path, const char *real);

#endif
