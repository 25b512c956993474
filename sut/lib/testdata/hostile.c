/*
 * hostile.c — a library that misbehaves in the way its environment names
 * (CONFORM_TESTLIB), for the hostile-SUT matrix and sut/lib's tests. It
 * speaks JSON: the opening call answers a Hello declaring the wire profile,
 * and a call it answers properly answers Unimplemented.
 *
 *   abort-in-constructor  abort() while the library loads
 *   exit-before-hello     exit(3) in the opening call
 *   hang-before-hello     never return from the opening call
 *   hang                  never return from a later call
 *   crash                 segfault on every later call
 *   garbage               answer bytes that are not a conform.v1 message
 *   claim-1tib            claim a 1 TiB answer (the buffer holds 16 bytes)
 *   claim-4gib            claim a 4 GiB answer
 *   huge-error            answer an Error whose message is 15 MiB
 *   wrong-id              answer with another request's id
 *   printf                print to stdout (and flush) on every call
 *   escape                start a descendant in a session of its own that
 *                         holds the host's descriptors, then answer
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform.h"

static const char *fault(void)
{
	const char *f = getenv("CONFORM_TESTLIB");
	return f ? f : "";
}

static int is(const char *name) { return strcmp(fault(), name) == 0; }

__attribute__((constructor)) static void load(void)
{
	if (is("abort-in-constructor"))
		abort();
}

static int answer(const char *text, size_t n, uint8_t **resp, size_t *resp_len)
{
	*resp = malloc(n ? n : 1);
	if (!*resp)
		return 1;
	memcpy(*resp, text, n);
	*resp_len = n;
	return 0;
}

int conform_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len)
{
	char text[256];
	if (is("printf")) {
		printf("hostile: a debug line on stdout\n");
		fflush(stdout);
	}
	if (len == 0) {
		if (is("exit-before-hello"))
			exit(3);
		if (is("hang-before-hello"))
			for (;;)
				pause();
		if (is("escape") && fork() == 0) {
			setsid();
			execlp("sleep", "sleep", "600", (char *)NULL);
			_exit(127);
		}
		snprintf(text, sizeof text,
			 "{\"implementation\":\"hostile %s\",\"language\":\"C\",\"profiles\":[\"wire\"]}", fault());
		return answer(text, strlen(text), resp, resp_len);
	}
	unsigned long long id = 0;
	const char *p = memmem(req, len, "\"id\":\"", 6);
	if (p)
		id = strtoull(p + 6, NULL, 10);
	if (is("hang"))
		for (;;)
			pause();
	if (is("crash")) {
		volatile int *null = NULL;
		*null = 42;
	}
	if (is("garbage"))
		return answer("\xff\xfe not a message", 16, resp, resp_len);
	if (is("claim-1tib") || is("claim-4gib")) {
		if (answer("0123456789abcdef", 16, resp, resp_len))
			return 1;
		*resp_len = is("claim-1tib") ? (size_t)1 << 40 : (size_t)4 << 30;
		return 0;
	}
	if (is("huge-error")) {
		size_t n = 15u << 20;
		char *buf = malloc(n + 128);
		if (!buf)
			return 1;
		int head = snprintf(buf, 128, "{\"id\":\"%llu\",\"error\":{\"message\":\"", id);
		memset(buf + head, 'E', n);
		memcpy(buf + head + n, "\"}}", 3);
		*resp = (uint8_t *)buf;
		*resp_len = head + n + 3;
		return 0;
	}
	if (is("wrong-id"))
		id += 1000;
	snprintf(text, sizeof text, "{\"id\":\"%llu\",\"unimplemented\":{\"detail\":\"hostile\"}}", id);
	return answer(text, strlen(text), resp, resp_len);
}

void conform_free(uint8_t *resp) { free(resp); }
