/*
 * inv_ini.h - the INI inventory format (Ansible's ini inventory plugin).
 *
 * Reads [group], [group:vars] and [group:children] sections, hosts with
 * inline variables typed as ast.literal_eval() types them, into the
 * builder (invbuild.h).
 */
#ifndef ENVCTL_CONTROLLER_INV_INI_H
#define ENVCTL_CONTROLLER_INV_INI_H

#include <stddef.h>

struct invb;

/* Reads text (len bytes) into b; 0, or the first error code recorded. */
int	inv_ini_read(struct invb *b, const char *text, size_t len);

#endif
