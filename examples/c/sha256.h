/* sha256.h — SHA-256 (FIPS 180-4), for conform.v1's Data.sha256 of payloads
 * above 1 MiB. */
#ifndef EXAMPLE_SHA256_H
#define EXAMPLE_SHA256_H

#include <stddef.h>
#include <stdint.h>

void sha256(const uint8_t *p, size_t n, uint8_t out[32]);

#endif
