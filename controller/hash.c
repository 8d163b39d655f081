/* hash.c - SHA-256 as hex through libcrypto (see hash.h). */
#include "hash.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

void
hash_sha256_hex(char *hex, const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32) {
		/* Only a broken libcrypto gets here; nothing sane to do. */
		fprintf(stderr, "envctl: libcrypto cannot compute SHA-256\n");
		abort();
	}
	for (i = 0; i < mdlen; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0x0f];
	}
	hex[2 * mdlen] = '\0';
}
