/*
 * fuzz.h - what every fuzz target in tests/fuzz/ shares.
 *
 * A target is one fuzz_NAME.c defining LLVMFuzzerTestOneInput() (and
 * maybe LLVMFuzzerInitialize()), built twice: with driver.c, which runs
 * it over tests/fuzz/corpus/NAME/ in `make check` (under ASan+UBSan in
 * the sanitizer pass), and with libFuzzer by `make fuzz FUZZ=NAME`.  A
 * target checks properties, not only memory safety: FUZZ_ASSERT() names
 * the broken one and aborts, which both drivers report as a crash;
 * fuzz_check_errors() is the one every loader's errors must have.
 */
#ifndef ENVCTL_TESTS_FUZZ_H
#define ENVCTL_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: property broken: %s\n",		\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/*
 * Each error of err formats on its own printable line (as many lines as
 * errors); forbidden, unless NULL, shows in none of them.
 */
static inline void
fuzz_check_errors(const struct err *err, const char *forbidden)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;
	int lines = 0;

	err_format(err, &b);
	for (i = 0; i < b.len; i++) {
		unsigned char c = (unsigned char)b.data[i];

		if (c == '\n')
			lines++;
		else
			FUZZ_ASSERT(c >= 0x20 && c != 0x7f);
	}
	FUZZ_ASSERT(b.len > 0 && b.data[b.len - 1] == '\n');
	FUZZ_ASSERT(lines == err_count(err));
	buf_addch(&b, '\0');
	FUZZ_ASSERT(forbidden == NULL || strstr(b.data, forbidden) == NULL);
	buf_release(&b);
}

#endif
