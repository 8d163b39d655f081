/*
 * hostrange.h - Ansible's host ranges ("gpu-[01:16]") and host addresses.
 *
 * hostrange_expand() turns a pattern with [start:end] or [start:end:step]
 * ranges (numbers, zero-padded numbers, single letters) into names in
 * Ansible's order; hostrange_parse_address() splits "name:port" and its
 * IPv6 forms.  Pure functions of their input, thread-safe.  Messages name
 * the pattern; where it was written (file, line) is the caller's to add.
 */
#ifndef ENVCTL_CONTROLLER_HOSTRANGE_H
#define ENVCTL_CONTROLLER_HOSTRANGE_H

#include <stddef.h>

struct err;

/*
 * Expands the ranges of pattern into *names, *nnames of them (the
 * caller frees each and the array; a pattern without '[' gives itself).
 * The first range varies slowest, as in Ansible.  ENVCTL_EINVALID (a bad
 * range), ENVCTL_ETOOBIG (more than room names).
 */
int	hostrange_expand(char ***names, size_t *nnames, const char *pattern,
	    size_t room, struct err *err);
/*
 * Splits a host address as Ansible's parse_address(allow_ranges=True):
 * "name", "name:port", "[name]:port", "[v6addr]:port", a bare IPv6 address,
 * with [x:y] ranges allowed.  Returns 1 and sets *host (caller frees) and
 * *port (NULL when none; the digits, caller frees) when s is one, else 0.
 */
int	hostrange_parse_address(const char *s, char **host, char **port);

#endif
