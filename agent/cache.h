/*
 * cache.h - the agent's upload cache on a host: its scripts, kept small.
 *
 * The controller uploads each agent version once per host, as
 * DIR/envctl-agent-SHA256 through a temp ".envctl-agent-SHA256.tmp-RANDOM"
 * (controller/agentlink.h), and reuses it.  Only an agent started from
 * such a file, and owned by its own user, uses the cache (see cache_find);
 * anywhere else (a test build, a local connection, root running a user's
 * cache through sudo) every call here does nothing.
 *
 * Scripts: compiling the probe costs each fresh interpreter about 1 ms of
 * CPU, and the fork server's script 1.5 to 2 ms more.  cache_script()
 * keeps a script as DIR/envctl-agent-SHA256.NAME.py (written once,
 * through a temp and a rename; compared byte for byte on each session's
 * first use, and written again when it differs) and returns that path;
 * the interpreter runs it with CACHE_SCRIPT_BOOT, which loads it through
 * importlib's SourceFileLoader: the bytecode is kept in DIR/__pycache__
 * and checked against the file, as for any module.  NULL means the
 * caller passes the text with -c as before.
 *
 * Data: cache_data_read() and cache_data_write() keep a small file of the
 * running version, DIR/envctl-agent-SHA256.NAME (the CUDA checks' answers,
 * cudacheck.h), which the next session of the same version reads.  A file
 * that says "ok" must come from this agent's user alone, so they work only
 * where cache_dir() does, when the directory is the effective user's and
 * not writable by group or others, and the file a regular file of that
 * user, with one link, not writable by group or others (written 0600
 * through a temp and a rename): anything else reads as absent and is
 * never written over.
 *
 * cache_tidy(), called as a session ends, keeps the directory from growing
 * with every envctl release: it marks its own file used (its mtime, at
 * most once a day), then removes the other versions not used for
 * CACHE_KEEP_DAYS, the scripts (and their bytecode) and data files of
 * versions that are gone and that were not used for a day (a session marks
 * its scripts used, at most once a day), and temps older than a day.  It touches only
 * regular files of exactly those name forms that belong to the owner of
 * its own file.  Best effort and silent.  One struct cache per process,
 * from main().
 */
#ifndef ENVCTL_AGENT_CACHE_H
#define ENVCTL_AGENT_CACHE_H

#include <stddef.h>
#include <sys/types.h>

struct buf;

#define CACHE_KEEP_DAYS	30
#define CACHE_SCRIPTS	2	/* the probe and the fork server */

/*
 * `INTERP -c CACHE_SCRIPT_BOOT FILE ARG...` runs FILE as `-c` would run
 * its text, with sys.argv ['-c', ARG...].  Python 3.3+ takes the bytecode
 * from __pycache__; others (no SourceFileLoader there), and any bytecode
 * that cannot be loaded (damaged by a crash), compile the file.
 */
#define CACHE_SCRIPT_BOOT \
	"import sys\n" \
	"p = sys.argv.pop(1)\n" \
	"try:\n" \
	"    c = (sys.modules.get('_frozen_importlib_external') or\n" \
	"         sys.modules.get('_frozen_importlib')).SourceFileLoader(\n" \
	"        '__main__', p).get_code('__main__')\n" \
	"except Exception:\n" \
	"    c = compile(open(p).read(), p, 'exec')\n" \
	"exec(c)\n"

struct cache_script {
	const char	*name;	/* NULL: a free slot */
	char		*path;	/* NULL: cannot be used */
};

struct cache {
	int		 looked;	/* cache_find() ran */
	int		 dfd;		/* the directory, or -1: no cache */
	char		*dir;		/* its path */
	char		*self;		/* "envctl-agent-SHA256" */
	uid_t		 uid;		/* who owns it */
	struct cache_script scripts[CACHE_SCRIPTS];
};

#define CACHE_INIT	{ 0, -1, NULL, NULL, 0, { { NULL, NULL } } }

/*
 * The file of script name (a short [a-z] word) holding text, borrowed from
 * c; NULL when the agent does not run from its cache or the file cannot be
 * read or written.
 */
const char	*cache_script(struct cache *c, const char *name,
		    const char *text);
/*
 * The cache directory when the agent runs from it as its owner (the
 * condition for scripts), else NULL; borrowed from c.
 */
const char	*cache_dir(struct cache *c);
/*
 * Puts the arguments that run script name at argv[k]: CACHE_SCRIPT_BOOT
 * and its file, or text itself (with -c before them) when there is no
 * file or c is NULL.  Returns the next free index; argv needs room for 2.
 */
size_t		 cache_script_args(char **argv, size_t k, struct cache *c,
		    const char *name, const char *text);
/*
 * Reads data file name (a short [a-z] word) into out (at most max bytes,
 * NUL-terminated): 0, or -1 when there is none the agent may trust (see
 * above; out is then empty).
 */
int		 cache_data_read(struct cache *c, const char *name,
		    struct buf *out, size_t max);
/*
 * Replaces data file name with len bytes of data (0600, through a temp
 * and a rename): 0, or -1 (no cache, or a file there it may not trust).
 */
int		 cache_data_write(struct cache *c, const char *name,
		    const void *data, size_t len);
/* Tidies the cache (see above); c stays usable, release it afterwards. */
void		 cache_tidy(struct cache *c);
void		 cache_release(struct cache *c);

#endif
