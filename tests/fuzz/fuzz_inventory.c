/*
 * fuzz_inventory.c - Ansible inventories (YAML, INI, --list JSON) and host
 * patterns (-l).
 *
 * The input's first line is a host pattern, the rest an inventory, as an
 * operator writes them; both go through the readers, the loader (groups,
 * children, ranges, precedence, types) and hostpattern_select().
 *
 * Properties: a load fails only with the codes inventory.h names, and its
 * errors format one per line, printable; a loaded inventory has hosts,
 * each found again by its name, each in "all" and in every group it lists;
 * selecting nothing, "all" or a group selects exactly those hosts; any
 * pattern's count matches its flags, all zero on error.  Patterns naming
 * a file (@FILE) are left out: they read the filesystem.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/hostpattern.h"
#include "controller/inventory.h"
#include "tests/fuzz/fuzz.h"

/* Longest pattern tried: a host pattern is one command-line argument. */
#define PATTERN_MAX	256

/* Selects pattern; returns the count after checking it against the flags. */
static size_t
select_count(const struct inventory *inv, const char *pattern, int *rc)
{
	struct err err = ENVCTL_ERR_INIT;
	size_t n = inventory_nhosts(inv), count = 12345, i, set = 0;
	unsigned char *sel = xmalloc(n);

	*rc = hostpattern_select(inv, pattern, sel, &count, &err);
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(sel[i] == 0 || sel[i] == 1);
		set += sel[i];
	}
	if (*rc == 0)
		FUZZ_ASSERT(count == set && count > 0);
	else {
		FUZZ_ASSERT(set == 0);
		FUZZ_ASSERT(*rc == ENVCTL_ENOTFOUND || *rc == ENVCTL_EUSAGE);
		fuzz_check_errors(&err, NULL);
	}
	err_release(&err);
	free(sel);
	return count;
}

static void
check_loaded(const struct inventory *inv, const char *pattern)
{
	size_t n = inventory_nhosts(inv), i, k, members;
	int rc;

	FUZZ_ASSERT(n > 0 && n <= ENVCTL_INVENTORY_MAX_HOSTS);
	for (i = 0; i < n; i++) {
		const struct host *h = inventory_host(inv, i);

		FUZZ_ASSERT(h->index == i && h->name[0] != '\0');
		FUZZ_ASSERT(inventory_find(inv, h->name) == h);
		FUZZ_ASSERT(h->address != NULL);
		for (k = 0; k < host_ngroups(h); k++)
			FUZZ_ASSERT(inventory_has_group(inv, host_group(h, k)));
	}
	FUZZ_ASSERT(select_count(inv, NULL, &rc) == n && rc == 0);
	FUZZ_ASSERT(select_count(inv, "all", &rc) == n && rc == 0);
	/* A few groups: each selects its members (some groups have none). */
	for (k = 2; k < inventory_ngroups(inv) && k < 8; k++) {
		const char *g = inventory_group(inv, k);
		size_t j, got;

		/* Names a pattern reads as themselves (Ansible's advice). */
		if (strspn(g, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(g) ||
		    g[0] == '-')
			continue;
		for (i = 0, members = 0; i < n; i++) {
			const struct host *h = inventory_host(inv, i);

			for (j = 0; j < host_ngroups(h); j++)
				if (strcmp(host_group(h, j), g) == 0)
					break;
			members += j < host_ngroups(h);
		}
		got = select_count(inv, g, &rc);
		/* A host of the same name is selected as well. */
		if (inventory_find(inv, g) == NULL)
			FUZZ_ASSERT(rc == 0 ? got == members : members == 0);
	}
	if (pattern != NULL)
		(void)select_count(inv, pattern, &rc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	const uint8_t *nl = memchr(data, '\n', size);
	char *pattern = NULL;
	size_t plen;
	int r;

	if (nl == NULL)
		return 0;
	plen = (size_t)(nl - data);
	if (plen <= PATTERN_MAX && memchr(data, '\0', plen) == NULL &&
	    memchr(data, '@', plen) == NULL)
		pattern = xstrndup((const char *)data, plen);
	r = inventory_load_string(&inv, (const char *)nl + 1,
	    size - plen - 1, "hosts.yaml", &err);
	if (r == 0) {
		FUZZ_ASSERT(inv != NULL && err.code == 0);
		check_loaded(inv, pattern);
		inventory_free(inv);
	} else {
		FUZZ_ASSERT(r == ENVCTL_EPARSE || r == ENVCTL_EINVALID ||
		    r == ENVCTL_EUNSUPPORTED || r == ENVCTL_ETOOBIG);
		FUZZ_ASSERT(err.code == r);
		fuzz_check_errors(&err, NULL);
	}
	err_release(&err);
	free(pattern);
	return 0;
}
