/*
 * hash.h - SHA-256 of byte strings, as lowercase hex (OpenSSL libcrypto).
 *
 * Used for plan files (what was read, what will be written), the agent's
 * content-addressed cache name, and digests of inputs.  Thread-safe.
 */
#ifndef ENVCTL_CONTROLLER_HASH_H
#define ENVCTL_CONTROLLER_HASH_H

#include <stddef.h>

#define ENVCTL_SHA256_HEX	65	/* 64 hex digits + NUL */

/* Writes the SHA-256 of data into hex (ENVCTL_SHA256_HEX bytes). */
void	hash_sha256_hex(char *hex, const void *data, size_t len);

#endif
