/* Unit tests of buf.c: bounded growable buffers and arrays. Every buffer has a cap, and growth
 * past it fails with an error instead of eating memory (SPEC R8). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "buf.h"
#include "error.h"

/* R8: a buffer grows as bytes are added, stays NUL-terminated, and keeps every byte. */
static void test_buf_growth(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	size_t i;

	(void)state;
	assert_string_equal(agc_buf_cstr(&b), "");
	for (i = 0; i < 10000; i++) {
		assert_int_equal(agc_buf_addc(&b, (char)('a' + i % 26)), 0);
		assert_int_equal(b.len, i + 1);
		assert_true(b.cap >= b.len + 1);
		assert_int_equal(b.ptr[b.len], '\0');
	}
	for (i = 0; i < 10000; i++)
		assert_int_equal(b.ptr[i], (char)('a' + i % 26));
	assert_int_equal(agc_buf_adds(&b, "end"), 0);
	assert_int_equal(b.len, 10003);
	assert_string_equal(b.ptr + 10000, "end");
	/* Binary data, NUL bytes included, is kept as given. */
	assert_int_equal(agc_buf_add(&b, "x\0y", 3), 0);
	assert_int_equal(b.len, 10006);
	assert_memory_equal(b.ptr + 10003, "x\0y", 3);
	/* Adding nothing is fine, even to an empty buffer. */
	assert_int_equal(agc_buf_add(&b, NULL, 0), 0);
	assert_int_equal(b.len, 10006);
	agc_buf_release(&b);
	assert_null(b.ptr);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	agc_buf_release(&b); /* twice is harmless */
}

/* R8: clear empties the buffer and keeps its storage for reuse. */
static void test_buf_clear(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	char *p;
	size_t cap;

	(void)state;
	agc_buf_clear(&b); /* on an empty buffer */
	assert_string_equal(agc_buf_cstr(&b), "");
	assert_int_equal(agc_buf_adds(&b, "hello, world"), 0);
	p = b.ptr;
	cap = b.cap;
	agc_buf_clear(&b);
	assert_int_equal(b.len, 0);
	assert_ptr_equal(b.ptr, p);
	assert_int_equal(b.cap, cap);
	assert_string_equal(agc_buf_cstr(&b), "");
	assert_int_equal(agc_buf_adds(&b, "again"), 0);
	assert_string_equal(b.ptr, "again");
	agc_buf_release(&b);
}

/* R8: a buffer with a max refuses to grow past it, says why, and keeps what it had. */
static void test_buf_cap(void **state)
{
	agc_buf b = AGC_BUF_INIT_MAX(16);

	(void)state;
	assert_int_equal(agc_buf_adds(&b, "0123456789"), 0);
	assert_int_equal(agc_buf_adds(&b, "abcdef"), 0); /* exactly 16: allowed */
	assert_int_equal(b.len, 16);
	agc_error_clear();
	assert_int_equal(agc_buf_addc(&b, 'x'), -1);
	assert_non_null(strstr(agc_error_last(), "limit"));
	assert_non_null(strstr(agc_error_last(), "16"));
	assert_int_equal(b.len, 16);
	assert_string_equal(b.ptr, "0123456789abcdef");
	agc_error_clear();
	assert_int_equal(agc_buf_add(&b, "", 0), 0); /* nothing more still fits */
	assert_int_equal(agc_buf_printf(&b, "%d", 7), -1);
	assert_true(strlen(agc_error_last()) > 0);
	assert_string_equal(b.ptr, "0123456789abcdef");
	agc_buf_release(&b);

	/* One add larger than the cap fails without touching the buffer. */
	{
		agc_buf c = AGC_BUF_INIT_MAX(8);

		assert_int_equal(agc_buf_adds(&c, "ab"), 0);
		agc_error_clear();
		assert_int_equal(agc_buf_adds(&c, "0123456789"), -1);
		assert_true(strlen(agc_error_last()) > 0);
		assert_int_equal(c.len, 2);
		assert_string_equal(c.ptr, "ab");
		agc_buf_release(&c);
	}
}

/* R8: a request so large that len + need would wrap around is refused, not wrapped. */
static void test_buf_cap_overflow(void **state)
{
	agc_buf b = AGC_BUF_INIT;

	(void)state;
	assert_int_equal(agc_buf_adds(&b, "abc"), 0);
	agc_error_clear();
	assert_int_equal(agc_buf_grow(&b, SIZE_MAX), -1);
	assert_true(strlen(agc_error_last()) > 0);
	assert_int_equal(agc_buf_grow(&b, SIZE_MAX - 2), -1);
	assert_int_equal(agc_buf_grow(&b, AGC_BUF_DEFAULT_MAX), -1); /* 3 + max > max */
	assert_int_equal(agc_buf_grow(&b, 10), 0);
	assert_string_equal(b.ptr, "abc");
	agc_buf_release(&b);
}

/* R8: detach hands the storage over (the caller frees it) and leaves the buffer empty. */
static void test_buf_detach(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	size_t len = 99;
	char *s;

	(void)state;
	assert_int_equal(agc_buf_adds(&b, "session"), 0);
	s = agc_buf_detach(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "session");
	assert_int_equal(len, 7);
	assert_null(b.ptr);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	free(s);
	/* The buffer is usable again afterwards. */
	assert_int_equal(agc_buf_adds(&b, "next"), 0);
	assert_string_equal(agc_buf_cstr(&b), "next");
	s = agc_buf_detach(&b, NULL);
	assert_string_equal(s, "next");
	free(s);
	/* An empty buffer detaches as an allocated empty string, never NULL. */
	len = 99;
	s = agc_buf_detach(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
	agc_buf_release(&b);
}

/* R8: printf appends formatted text, growing as needed, within the cap. */
static void test_buf_printf(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	char *s;
	size_t i;

	(void)state;
	assert_int_equal(agc_buf_printf(&b, "%s-%d", "a", 42), 0);
	assert_int_equal(agc_buf_printf(&b, "/%05u", 7u), 0);
	assert_string_equal(b.ptr, "a-42/00007");
	assert_int_equal(b.len, strlen("a-42/00007"));
	assert_int_equal(agc_buf_printf(&b, "%s", ""), 0);
	assert_int_equal(b.len, 10);
	/* Longer than any first allocation. */
	assert_int_equal(agc_buf_printf(&b, "%5000d|", 1), 0);
	assert_int_equal(b.len, 10 + 5001);
	for (i = 10; i < 10 + 4999; i++)
		assert_int_equal(b.ptr[i], ' ');
	assert_string_equal(b.ptr + 10 + 4999, "1|");
	agc_buf_release(&b);

	/* Text that would pass a small cap is refused whole. */
	{
		agc_buf c = AGC_BUF_INIT_MAX(10);

		assert_int_equal(agc_buf_printf(&c, "%s", "12345"), 0);
		agc_error_clear();
		assert_int_equal(agc_buf_printf(&c, "%s", "678901"), -1);
		assert_true(strlen(agc_error_last()) > 0);
		assert_string_equal(c.ptr, "12345");
		assert_int_equal(agc_buf_printf(&c, "%s", "67890"), 0);
		assert_string_equal(c.ptr, "1234567890");
		agc_buf_release(&c);
	}

	s = agc_strfmt("%s=%lld", "k", 123456789012LL);
	assert_non_null(s);
	assert_string_equal(s, "k=123456789012");
	free(s);
}

/* The string helpers copy; NULL is taken as "". */
static void test_buf_strdup(void **state)
{
	char *s;

	(void)state;
	s = agc_strdup("abc");
	assert_string_equal(s, "abc");
	free(s);
	s = agc_strdup(NULL);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	s = agc_strndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
}

typedef struct item {
	int a;
	char name[24];
} item;

typedef struct items {
	item *v;
	size_t n, cap;
} items;

/* R8: a typed array grows to its max and no further; each new slot is zeroed. */
static void test_buf_array_push_max(void **state)
{
	items arr = {NULL, 0, 0};
	item *slot;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		slot = AGC_ARRAY_PUSH(&arr, 5);
		assert_non_null(slot);
		assert_int_equal(slot->a, 0);
		assert_int_equal(slot->name[0], '\0');
		assert_int_equal(slot->name[23], '\0');
		slot->a = i + 100;
		snprintf(slot->name, sizeof(slot->name), "n%d", i);
	}
	assert_int_equal(arr.n, 5);
	assert_true(arr.cap <= 5);
	agc_error_clear();
	slot = AGC_ARRAY_PUSH(&arr, 5);
	assert_null(slot);
	assert_non_null(strstr(agc_error_last(), "5"));
	assert_int_equal(arr.n, 5);
	for (i = 0; i < 5; i++) {
		char want[24];

		snprintf(want, sizeof(want), "n%d", i);
		assert_int_equal(arr.v[i].a, i + 100);
		assert_string_equal(arr.v[i].name, want);
	}
	free(arr.v);
}

/* R8: max 0 means no cap of the array's own; elements survive every reallocation. */
static void test_buf_array_push_many(void **state)
{
	struct {
		uint64_t *v;
		size_t n, cap;
	} arr = {NULL, 0, 0};
	size_t i;

	(void)state;
	for (i = 0; i < 10000; i++) {
		uint64_t *p = AGC_ARRAY_PUSH(&arr, 0);

		assert_non_null(p);
		assert_int_equal(*p, 0);
		*p = i * 3;
	}
	assert_int_equal(arr.n, 10000);
	assert_true(arr.cap >= 10000);
	for (i = 0; i < 10000; i++)
		assert_int_equal(arr.v[i], i * 3);
	free(arr.v);

	/* A cap that is not a power of two is honoured exactly. */
	{
		struct {
			int *v;
			size_t n, cap;
		} small = {NULL, 0, 0};

		for (i = 0; i < 13; i++)
			assert_non_null(AGC_ARRAY_PUSH(&small, 13));
		assert_null(AGC_ARRAY_PUSH(&small, 13));
		assert_int_equal(small.n, 13);
		free(small.v);
	}
}

/* R8: agc_array_grow checks the element size against overflow of the allocation. */
static void test_buf_array_grow_overflow(void **state)
{
	void *p = NULL;
	size_t cap = 0;

	(void)state;
	agc_error_clear();
	assert_int_equal(agc_array_grow(&p, &cap, 16, SIZE_MAX / 4, 0), -1);
	assert_null(p);
	assert_int_equal(cap, 0);
	assert_int_equal(agc_array_grow(&p, &cap, 4, 8, 4), 0);
	assert_int_equal(cap, 4);
	assert_int_equal(agc_array_grow(&p, &cap, 3, 8, 4), 0); /* already room */
	assert_int_equal(agc_array_grow(&p, &cap, 5, 8, 4), -1);
	assert_int_equal(cap, 4);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_growth),
		cmocka_unit_test(test_buf_clear),
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_buf_cap_overflow),
		cmocka_unit_test(test_buf_detach),
		cmocka_unit_test(test_buf_printf),
		cmocka_unit_test(test_buf_strdup),
		cmocka_unit_test(test_buf_array_push_max),
		cmocka_unit_test(test_buf_array_push_many),
		cmocka_unit_test(test_buf_array_grow_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
