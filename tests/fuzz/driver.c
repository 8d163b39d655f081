/*
 * driver.c - runs a fuzz target over files and directories of inputs: the
 * corpus regression `make check` does without libFuzzer (clang).  Each
 * input is read whole and given to LLVMFuzzerTestOneInput() once; a broken
 * property or a sanitizer report aborts, so the exit status is the verdict.
 * Prints "NAME: N inputs" on success.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "tests/fuzz/fuzz.h"

/* Largest input: libFuzzer's default -max_len is far below. */
#define FUZZ_INPUT_MAX	(4u * 1024 * 1024)

/* Weak: a target without an initialiser links too. */
#pragma weak LLVMFuzzerInitialize

static int
run_file(const char *path, size_t *n)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b;
	uint8_t *copy;
	int r;

	buf_init(&b, FUZZ_INPUT_MAX);
	if ((r = buf_read_file(&b, path, &err)) != 0) {
		fprintf(stderr, "driver: cannot read '%s': %s\n", path,
		    err.msg != NULL ? err.msg : "error");
		err_release(&err);
		buf_release(&b);
		return -1;
	}
	/* A copy of exactly len bytes, so ASan sees reads past the end. */
	copy = xmalloc(b.len > 0 ? b.len : 1);
	memcpy(copy, b.data, b.len);
	LLVMFuzzerTestOneInput(copy, b.len);
	free(copy);
	buf_release(&b);
	(*n)++;
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir, in name order (runs are reproducible). */
static int
run_dir(const char *dir, size_t *n)
{
	struct dirent *de;
	char **names = NULL, *path;
	size_t count = 0, alloc = 0, i;
	DIR *dp;
	int r = 0;

	if ((dp = opendir(dir)) == NULL) {
		fprintf(stderr, "driver: cannot open '%s': %s\n", dir,
		    strerror(errno));
		return -1;
	}
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		ENVCTL_GROW(names, count + 1, alloc);
		names[count++] = xstrdup(de->d_name);
	}
	closedir(dp);
	if (count > 0)
		qsort(names, count, sizeof(*names), cmp_names);
	for (i = 0; i < count; i++) {
		if (r == 0) {
			path = xasprintf("%s/%s", dir, names[i]);
			r = run_file(path, n);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int
main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');
	struct stat st;
	size_t n = 0;
	int i;

	name = name != NULL ? name + 1 : argv[0];
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", name);
		return 64;
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == -1) {
			fprintf(stderr, "driver: '%s': %s\n", argv[i],
			    strerror(errno));
			return 1;
		}
		if ((S_ISDIR(st.st_mode) ? run_dir(argv[i], &n) :
		    run_file(argv[i], &n)) != 0)
			return 1;
	}
	printf("%s: %zu inputs\n", name, n);
	return 0;
}
