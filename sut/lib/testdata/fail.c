/*
 * fail.c — a library that says Hello in the binary encoding (an empty
 * Hello: zero bytes), then fails every call: non-zero on even calls, 0 with a
 * NULL response on odd ones. The host must report each as a conform.v1 Error
 * carrying the request's id, and keep going.
 */
#include <stdint.h>
#include <stdlib.h>

#include "conform.h"

static int calls;

int conform_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len)
{
	(void)req;
	calls++;
	if (len == 0) {
		*resp = malloc(1);
		*resp_len = 0;
		return *resp ? 0 : 1;
	}
	if (calls % 2 == 0)
		return 7;
	*resp = NULL;
	*resp_len = 0;
	return 0;
}

void conform_free(uint8_t *resp) { free(resp); }
