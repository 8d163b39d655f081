/*
 * sha256.h - SHA-256 (FIPS 180-4) in portable C, for the agent.
 *
 * The agent links only libc and jansson, so it cannot use libcrypto (the
 * controller's controller/hash.h does); the agent hashes its own program
 * with this before it runs with more privilege than its caller
 * (agent/policy.h).  A struct sha256 is caller-allocated state, no heap,
 * no globals: thread-safe per object.  Checked against FIPS 180-4's
 * vectors and sha256sum(1) in tests/unit/check_policy.c.
 */
#ifndef ENVCTL_COMMON_SHA256_H
#define ENVCTL_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct err;

#define ENVCTL_SHA256_LEN	32	/* bytes of a digest */
#ifndef ENVCTL_SHA256_HEX
#define ENVCTL_SHA256_HEX	65	/* 64 hex digits + NUL */
#endif

struct sha256 {
	uint32_t	h[8];
	uint64_t	len;		/* bytes hashed so far */
	unsigned char	block[64];
	size_t		used;		/* bytes waiting in block */
};

/* Starts a new digest in s. */
void	sha256_init(struct sha256 *s);
/* Hashes len more bytes of data. */
void	sha256_update(struct sha256 *s, const void *data, size_t len);
/* Finishes: out gets the 32-byte digest; s must be initialised again. */
void	sha256_final(struct sha256 *s, unsigned char out[ENVCTL_SHA256_LEN]);
/* The digest of data as lowercase hex in hex (ENVCTL_SHA256_HEX bytes). */
void	sha256_hex(char *hex, const void *data, size_t len);
/*
 * The digest of the file at path as lowercase hex, read through one
 * descriptor.  0, or ENVCTL_ESYS with errno as cause.
 */
int	sha256_file_hex(char *hex, const char *path, struct err *err);

#endif
