/*
 * crash.c — a library that answers the opening call with a JSON Hello
 * declaring the wire profile, answers the next call with Unimplemented, and
 * dies by a segmentation fault on its third call. Each host process starts
 * it afresh, so after a restart it answers two more calls before crashing
 * again. Used by sut/lib's tests to prove a crash is recorded and survived.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

static int calls;

int conform_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len)
{
	char text[256];
	calls++;
	if (calls == 3) {
		volatile int *p = NULL;
		*p = 42; /* segmentation fault */
	}
	if (len == 0) {
		snprintf(text, sizeof text,
			 "{\"implementation\":\"crash\",\"language\":\"C\",\"profiles\":[\"wire\"]}");
	} else {
		/* Find the request's id in its JSON: "id":"N". */
		unsigned long long id = 0;
		const char *p = memmem(req, len, "\"id\":\"", 6);
		if (p)
			id = strtoull(p + 6, NULL, 10);
		snprintf(text, sizeof text, "{\"id\":\"%llu\",\"unimplemented\":{\"detail\":\"call %d\"}}", id, calls);
	}
	size_t n = strlen(text);
	*resp = malloc(n);
	if (!*resp)
		return 1;
	memcpy(*resp, text, n);
	*resp_len = n;
	return 0;
}

void conform_free(uint8_t *resp) { free(resp); }
