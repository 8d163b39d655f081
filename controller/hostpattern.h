/*
 * hostpattern.h - Ansible host patterns (--limit) over a loaded inventory.
 *
 * A pattern is a list of terms split on commas (or on colons where that is
 * unambiguous, as Ansible): a host, a group (with its child groups' hosts),
 * all or *, a glob (fnmatch) or ~regex (POSIX ERE, anchored at the start)
 * over host and group names, or @file (one term per line).  A term may
 * start with ! (exclude) or & (intersect) and end with a [i] or [x:y]
 * subscript.  Plain terms are united, then intersections, then exclusions
 * apply, as in Ansible.  No state: thread-safe over a read-only inventory.
 */
#ifndef ENVCTL_CONTROLLER_HOSTPATTERN_H
#define ENVCTL_CONTROLLER_HOSTPATTERN_H

#include <stddef.h>

struct err;
struct inventory;

/* Largest @file read for a pattern. */
#define ENVCTL_HOSTPATTERN_MAX_FILE	(1024u * 1024)

/*
 * Sets selected[i] (the caller's array of inventory_nhosts() flags) to 1
 * for each host the pattern selects, else 0, and *count to how many; NULL
 * or empty pattern selects every host.  Every problem is chained in err:
 * ENVCTL_ENOTFOUND for a term matching no host or group, or nothing
 * selected at all; ENVCTL_EUSAGE for a malformed term (bad regex, lone !);
 * buf_read_file()'s codes for @file.  On error selected is all zeros.
 */
int	hostpattern_select(const struct inventory *inv, const char *pattern,
	    unsigned char *selected, size_t *count, struct err *err);
/*
 * Splits pattern into terms as Ansible's split_host_pattern: commas, else
 * one address (host, host:port, IPv6, ranges), else colons and blanks.
 * Returns how many; *terms (may be NULL when 0) is freed with
 * hostpattern_free_terms().
 */
size_t	hostpattern_split(const char *pattern, char ***terms);
void	hostpattern_free_terms(char **terms, size_t n);

#endif
