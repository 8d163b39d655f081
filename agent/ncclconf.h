/*
 * ncclconf.h - NCCL's own configuration files, read as NCCL reads them.
 *
 * NCCL (src/misc/param.cc, initEnvFunc/setEnvFile) applies each line of
 * $NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf, with
 * setenv(name, value, 0): the environment wins, then the earlier file,
 * then the earlier line.  Parsing is pure; reading is read-only, capped at
 * ENVCTL_NCCLCONF_FILE_MAX per file, and an unreadable file is a recorded
 * reason, never an error.  Structs are owned by their caller; release them.
 */
#ifndef ENVCTL_AGENT_NCCLCONF_H
#define ENVCTL_AGENT_NCCLCONF_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

struct err;

#define ENVCTL_NCCLCONF_FILE_MAX	(64u * 1024)
#define ENVCTL_NCCLCONF_NAME_MAX	1023	/* envVar[1024] */
#define ENVCTL_NCCLCONF_VALUE_MAX	1023	/* envValue[1024] */
#define ENVCTL_NCCLCONF_PATH_MAX	1023	/* confFilePath[1024] */
#define ENVCTL_NCCLCONF_LINE_MAX	4095	/* 2.30: fgets(line[4096]) */
#define ENVCTL_NCCLCONF_MISREAD_MAX	256	/* per file; then one more */

/*
 * NCCL versions as MAJOR * 10000 + MINOR * 100 + PATCH, where the reading
 * changed (tags of github.com/NVIDIA/nccl):
 *   2.23.4  NCCL_CONF_FILE replaces ~/.nccl.conf; a name is cut at 1023
 *   2.26.2  '#' in column 0 starts a comment
 *   2.30.3  the home is $HOME, not the passwd entry; a CR before the
 *           newline is dropped; lines are read in 4095-byte pieces
 * 0 means unknown: read as 2.26.2 to 2.29 do (PyTorch's bundled NCCL).
 */
#define ENVCTL_NCCLCONF_V_CONF_FILE	22304
#define ENVCTL_NCCLCONF_V_COMMENTS	22602
#define ENVCTL_NCCLCONF_V_2_30		23003
#define ENVCTL_NCCLCONF_V_DEFAULT	22907

/* One line NCCL hands to setenv(); name and value exactly as it does. */
struct ncclconf_entry {
	int	 line;		/* 1-based */
	char	*name;
	char	*value;
	int	 effective;	/* a name something reads: [A-Za-z_][A-Za-z0-9_]*,
				   at most 1023 bytes, not "nccl_..." */
};

/* A line NCCL reads otherwise than its author probably meant. */
struct ncclconf_misread {
	int		 line;
	const char	*kind;	/* static: "space-around-equals", "cr", ... */
	char		*message;
};

struct ncclconf_file {
	char			*path;	/* as NCCL opens it (root not included) */
	int			 exists;
	char			*error;	/* why it was not read, or NULL */
	struct ncclconf_entry	*entries;
	size_t			 nentries, aentries;
	struct ncclconf_misread	*misreads;
	size_t			 nmisreads, amisreads;
};

/* The files in NCCL's order: at most two (the user's, then /etc's). */
struct ncclconf {
	int			 version;	/* as given, 0 resolved */
	struct ncclconf_file	 files[2];
	size_t			 nfiles;
};

#define NCCLCONF_INIT	{ 0, { { NULL, 0, NULL, NULL, 0, 0, NULL, 0, 0 }, \
	{ NULL, 0, NULL, NULL, 0, 0, NULL, 0, 0 } }, 0 }

/*
 * Parses len bytes of one file as NCCL version version (0: the default)
 * does, appending to f's entries and misreads.  Never fails; f must be
 * zeroed or hold earlier results.
 */
void	 ncclconf_parse(struct ncclconf_file *f, const char *data, size_t len,
	    int version);
/*
 * Reads the files NCCL would, under root ("" or a test's prefix): the
 * NCCL_CONF_FILE value conf_file_env when non-empty (2.23.4 on), else
 * home/.nccl.conf (home NULL: none), then /etc/nccl.conf.  home is the
 * worker user's passwd directory (before 2.30) or its $HOME (2.30 on).
 * With uid >= 0, a file that user may not read (owner or other bits;
 * groups are not evaluated) is not applied, as NCCL running as it would
 * not.  A missing, unreadable, oversized or non-regular file is recorded
 * in its error.  Returns 0; ENVCTL_EINVALID when root is NULL.
 */
int	 ncclconf_read(struct ncclconf *c, const char *root, const char *home,
	    const char *conf_file_env, long uid, int version, struct err *err);
/*
 * {"version":n, "files":[{"path","exists","error","entries":[{"line",
 * "name","value","effective"}],"misreads":[{"line","kind","message"}]}],
 * "values":{NAME:{"value","from":"PATH:LINE"}}}: values holds what NCCL
 * would setenv() when NAME is not already in the environment.  New ref.
 */
json_t	*ncclconf_json(const struct ncclconf *c);
void	 ncclconf_file_release(struct ncclconf_file *f);
void	 ncclconf_release(struct ncclconf *c);

#endif
