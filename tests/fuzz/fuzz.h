/*
 * fuzz.h - what every fuzz target in tests/fuzz/ shares.
 *
 * A target is one fuzz_NAME.c defining LLVMFuzzerTestOneInput() (and
 * maybe LLVMFuzzerInitialize()), built twice: with driver.c, which runs
 * it over tests/fuzz/corpus/NAME/ in `make check` (under ASan+UBSan in
 * the sanitizer pass), and with libFuzzer by `make fuzz FUZZ=NAME`.  A
 * target checks properties, not only memory safety: FUZZ_ASSERT() names
 * the broken one and aborts, which both drivers report as a crash.
 */
#ifndef ENVCTL_TESTS_FUZZ_H
#define ENVCTL_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: property broken: %s\n",		\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

#endif
