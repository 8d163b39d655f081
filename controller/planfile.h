/*
 * planfile.h - the plan saved by `envctl plan -o FILE`.
 *
 * A JSON document (format 1) holding the inventory's and the playbook's
 * SHA-256, and per host: the address, the resolved target, the exact bytes
 * read (or that the file was absent) with their SHA-256, mode and owner,
 * and the exact bytes apply is to write.  It may hold secret values, so it
 * is written atomically with mode 0600.  Schema: docs/internals.md.
 */
#ifndef ENVCTL_CONTROLLER_PLANFILE_H
#define ENVCTL_CONTROLLER_PLANFILE_H

#include <stddef.h>

#include "controller/hash.h"

struct err;
struct host_plan;
struct inventory;
struct playbook;

#define ENVCTL_PLANFILE_FORMAT	1

/* SHA-256 of the playbook file followed by its template. */
int	planfile_playbook_digest(char *hex, const struct playbook *pb,
	    struct err *err);
/*
 * Writes the plan of the n hosts in hps to path, with inventory_digest()
 * of inv: apply refuses the plan when the inventory reads differently.
 */
int	planfile_write(const char *path, const struct inventory *inv,
	    const struct playbook *pb, struct host_plan *const *hps, size_t n,
	    struct err *err);

#endif
