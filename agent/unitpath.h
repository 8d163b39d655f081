/*
 * unitpath.h - a systemd service's name, and where its unit files are, as
 * systemd.unit(5) finds them, under a root, without systemd running.
 *
 * The system unit search path is Debian 12's (systemd 252), highest
 * priority first.  The fragment is the unit's own file, else its
 * template's; the drop-ins are the *.conf files of NAME.d/ for the unit,
 * its template and each "-" prefix of its name, then of service.d/, in
 * every directory of the path, where a file name met higher up masks the
 * same name lower down, applied in file name order.  Nothing is read here
 * but directories and links: unitenv reads and parses the files.  Paths
 * come in pairs: under the root (to open) and without it (to show).  What
 * is returned is the caller's to free.
 */
#ifndef ENVCTL_AGENT_UNITPATH_H
#define ENVCTL_AGENT_UNITPATH_H

#include <stddef.h>

struct err;

#define UNITPATH_SUFFIX		".service"
#define UNITPATH_NAME_MAX	255	/* unit name (systemd.unit(5)) */
#define UNITPATH_DIR_MAX	4096	/* entries read from one .d/ dir */

/*
 * Checks name as systemd.unit(5) does and makes it "P.service" or
 * "P@I.service" in *out, with P in *prefix and I in *instance (NULL for a
 * plain unit); a name without a unit type suffix gets ".service", as
 * systemctl adds it.  ENVCTL_EINVALID for another unit type, a template
 * or a name systemd refuses (all three NULL then).
 */
int	unitpath_name(char **out, char **prefix, char **instance,
	    const char *name, struct err *err);
/*
 * The fragment of unit (a name unitpath_name() made) under root ("" or a
 * directory): *full its path under root and *shown without it, both NULL
 * when there is none.  When it is a link to a file of another name, *alias
 * is that name (systemd would load the unit under it, with its drop-ins),
 * else NULL.
 */
void	unitpath_fragment(char **full, char **shown, char **alias,
	    const char *root, const char *unit);
/* 1 when the unit file at full masks the unit (empty, or /dev/null). */
int	unitpath_is_mask(const char *full);

/* A drop-in: its file name, its path under root, the path shown. */
struct unitpath_file {
	char	*base;
	char	*full;
	char	*shown;		/* its directory in canonical form */
};

/*
 * The drop-ins of unit under root, in the order they apply, in *v (*n of
 * them); free with unitpath_files_free().  ENVCTL_ETOOBIG for a directory
 * of more than UNITPATH_DIR_MAX entries (*v NULL and *n 0 then).
 */
int	unitpath_dropins(struct unitpath_file **v, size_t *n,
	    const char *root, const char *unit, struct err *err);
void	unitpath_files_free(struct unitpath_file *v, size_t n);

#endif
