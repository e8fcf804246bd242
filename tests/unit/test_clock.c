/* Unit tests of clock.c: ISO times, durations, and the wall clock with its test override. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "clock.h"

/* Epoch ms of a UTC date, computed with the C library, independently of clock.c. */
static int64_t utc_ms(int y, int mo, int d, int h, int mi, int s, int ms)
{
	struct tm tm;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	t = timegm(&tm);
	assert_true(t != (time_t)-1);
	return (int64_t)t * 1000 + ms;
}

static void parses_to(const char *s, int64_t want)
{
	int64_t got = -12345;

	if (agc_time_parse_iso(s, &got) != 0)
		fail_msg("'%s' was not parsed", s);
	if (got != want)
		fail_msg("'%s' parsed to %lld, not %lld", s, (long long)got, (long long)want);
}

static void refused(const char *s)
{
	int64_t got = -12345;

	if (agc_time_parse_iso(s, &got) == 0)
		fail_msg("'%s' was accepted (as %lld)", s ? s : "(null)", (long long)got);
}

/* Session times from the agents' files: UTC with milliseconds and 'Z'. */
static void test_clock_parse_iso_fraction(void **state)
{
	int64_t want = utc_ms(2026, 11, 29, 20, 35, 55, 988);

	(void)state;
	assert_int_equal(want, 1795984555988LL);
	parses_to("2026-11-29T20:35:55.988Z", want);
	parses_to("2026-11-29T20:35:55.9Z", want - 88);
	parses_to("2026-11-29T20:35:55.98Z", want - 8);
	/* Digits past milliseconds are dropped, not rounded. */
	parses_to("2026-11-29T20:35:55.988999Z", want);
	parses_to("2026-11-29T20:35:55.000Z", want - 988);
	parses_to("1970-01-01T00:00:00.001Z", 1);
}

/* The fraction is optional. */
static void test_clock_parse_iso_no_fraction(void **state)
{
	(void)state;
	parses_to("2026-11-29T20:35:55Z", utc_ms(2026, 11, 29, 20, 35, 55, 0));
	parses_to("2000-02-29T23:59:59Z", utc_ms(2000, 2, 29, 23, 59, 59, 0));
	parses_to("1970-01-01T00:00:00Z", 0);
}

/* "+00:00" is the same zone as 'Z'. */
static void test_clock_parse_iso_offset_zero(void **state)
{
	(void)state;
	parses_to("2026-11-29T20:35:55+00:00", utc_ms(2026, 11, 29, 20, 35, 55, 0));
	parses_to("2026-11-29T20:35:55.988+00:00", utc_ms(2026, 11, 29, 20, 35, 55, 988));
}

/* Malformed times are refused rather than read as some other time. */
static void test_clock_parse_iso_garbage(void **state)
{
	(void)state;
	refused(NULL);
	refused("");
	refused("garbage");
	refused("2026");
	refused("2026-11-29");
	refused("2026-11-29T");
	refused("2026-11-29T20:35");
	refused("2026-11-29T20:35:5Z");
	refused("26-11-29T20:35:55Z");
	refused("2026/11/29T20:35:55Z");
	refused("2026-11-29X20:35:55Z");
	refused("2026-13-01T00:00:00Z");
	refused("2026-00-01T00:00:00Z");
	refused("2026-11-00T00:00:00Z");
	refused("2026-11-32T00:00:00Z");
	refused("2026-11-29T24:00:00Z");
	refused("2026-11-29T20:60:00Z");
	refused("2026-11-29T20:35:61Z");
	refused("2026-11-29T20:35:55+01:00"); /* not UTC: never guessed at */
	refused("2026-11-29T20:35:55-05:00");
	refused("2026-11-29T20:35:55 junk");
	refused("Sun Nov 29 20:35:55 2026");
	refused("1795984555988");
	refused("-026-11-29T20:35:55Z");
	refused("2026-1a-29T20:35:55Z");
}

/* Text after the zone is garbage too: "…Z" must end the string. */
static void test_clock_parse_iso_trailing_text(void **state)
{
	(void)state;
	refused("2026-11-29T20:35:55Zjunk");
	refused("2026-11-29T20:35:55.988Z123");
	refused("2026-11-29T20:35:55ZZ");
}

/* A day that does not exist in its month is garbage, not the first days of the next month. */
static void test_clock_parse_iso_impossible_day(void **state)
{
	(void)state;
	refused("2026-02-30T00:00:00Z");
	refused("2026-04-31T00:00:00Z");
	refused("2025-02-29T00:00:00Z");
}

/* Formatting is the inverse of parsing, to the second. */
static void test_clock_format_iso(void **state)
{
	char out[32];

	(void)state;
	agc_time_format_iso(utc_ms(2026, 11, 29, 20, 35, 55, 988), out, sizeof(out));
	assert_string_equal(out, "2026-11-29T20:35:55Z");
	agc_time_format_iso(0, out, sizeof(out));
	assert_string_equal(out, "1970-01-01T00:00:00Z");
}

static void duration_is(const char *s, int64_t want)
{
	int64_t got = -12345;

	if (agc_duration_parse(s, &got) != 0)
		fail_msg("'%s' was not parsed", s);
	if (got != want)
		fail_msg("'%s' parsed to %lld, not %lld", s, (long long)got, (long long)want);
}

static void duration_refused(const char *s)
{
	int64_t got = -12345;

	if (agc_duration_parse(s, &got) == 0)
		fail_msg("'%s' was accepted (as %lld)", s ? s : "(null)", (long long)got);
}

/* The units of --older-than, --settle, --budget, --grace. */
static void test_clock_duration_units(void **state)
{
	(void)state;
	duration_is("90s", 90 * 1000LL);
	duration_is("15m", 15 * 60 * 1000LL);
	duration_is("24h", 24 * 3600 * 1000LL);
	duration_is("30d", 30 * 86400 * 1000LL);
	duration_is("1w", 7 * 86400 * 1000LL);
	duration_is("500ms", 500);
	duration_is("0s", 0);
	duration_is("1s", 1000);
	duration_is("365d", 365 * 86400 * 1000LL);
}

/* A number without a unit, a negative one, an unknown unit and overflow are usage errors. */
static void test_clock_duration_invalid(void **state)
{
	(void)state;
	duration_refused(NULL);
	duration_refused("");
	duration_refused("10");
	duration_refused("-5m");
	duration_refused("+5m");
	duration_refused("5x");
	duration_refused("5");
	duration_refused("m");
	duration_refused("s5");
	duration_refused(" 5m");
	duration_refused("5 m");
	duration_refused("5m ");
	duration_refused("5M");
	duration_refused("5mm");
	duration_refused("1.5h");
	duration_refused("5sec");
	duration_refused("0x10s");
	/* Overflow: of the number itself, and of the number times its unit. */
	duration_refused("99999999999999999999s");
	duration_refused("9223372036854775807s");
	duration_refused("9223372036854775807w");
	duration_refused("1000000000000000d");
	duration_is("9223372036854775807ms", INT64_MAX);
}

/* Saved value of AGENTGC_NOW, restored after each test that sets it. */
static char *saved_now;

static int save_env(void **state)
{
	const char *v = getenv("AGENTGC_NOW");

	(void)state;
	saved_now = v ? strdup(v) : NULL;
	return 0;
}

static int restore_env(void **state)
{
	(void)state;
	if (saved_now)
		setenv("AGENTGC_NOW", saved_now, 1);
	else
		unsetenv("AGENTGC_NOW");
	free(saved_now);
	saved_now = NULL;
	return 0;
}

static int64_t real_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Tests pin "now" with AGENTGC_NOW (epoch seconds); without it the wall clock is used. */
static void test_clock_now_override(void **state)
{
	int64_t before, got, after;

	(void)state;
	assert_int_equal(setenv("AGENTGC_NOW", "1795984555", 1), 0);
	assert_int_equal(agc_clock_now_ms(), 1795984555000LL);
	assert_int_equal(setenv("AGENTGC_NOW", "1", 1), 0);
	assert_int_equal(agc_clock_now_ms(), 1000);
	/* agc_clock_real_ms never takes the override (lock ages are compared with file times). */
	before = real_now_ms();
	got = agc_clock_real_ms();
	after = real_now_ms();
	assert_true(got >= before && got <= after);

	assert_int_equal(unsetenv("AGENTGC_NOW"), 0);
	before = real_now_ms();
	got = agc_clock_now_ms();
	after = real_now_ms();
	assert_true(got >= before && got <= after);
}

/* An override that is not a positive number of seconds is ignored: the wall clock is used. */
static void test_clock_now_override_invalid(void **state)
{
	static const char *bad[] = {"", "abc", "-5", "0", "12x", "1.5", "99999999999999999999999"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t before, got, after;

		assert_int_equal(setenv("AGENTGC_NOW", bad[i], 1), 0);
		before = real_now_ms();
		got = agc_clock_now_ms();
		after = real_now_ms();
		if (got < before || got > after)
			fail_msg("AGENTGC_NOW='%s' gave %lld, not the wall clock", bad[i], (long long)got);
	}
}

/* An override too large to be held in ms is not a time: ignored like any other bad value,
 * never multiplied into an overflow. */
static void test_clock_now_override_overflow(void **state)
{
	static const char *bad[] = {"9223372036854775807", "9223372036854776"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t before, got, after;

		assert_int_equal(setenv("AGENTGC_NOW", bad[i], 1), 0);
		before = real_now_ms();
		got = agc_clock_now_ms();
		after = real_now_ms();
		if (got < before || got > after)
			fail_msg("AGENTGC_NOW='%s' gave %lld, not the wall clock", bad[i], (long long)got);
	}
}

/* The monotonic clock never goes back. */
static void test_clock_mono(void **state)
{
	int64_t a, b;
	struct timespec ts = {0, 2 * 1000 * 1000};

	(void)state;
	a = agc_clock_mono_us();
	nanosleep(&ts, NULL);
	b = agc_clock_mono_us();
	assert_true(b >= a + 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_parse_iso_fraction),
		cmocka_unit_test(test_clock_parse_iso_no_fraction),
		cmocka_unit_test(test_clock_parse_iso_offset_zero),
		cmocka_unit_test(test_clock_parse_iso_garbage),
		cmocka_unit_test(test_clock_parse_iso_trailing_text),
		cmocka_unit_test(test_clock_parse_iso_impossible_day),
		cmocka_unit_test(test_clock_format_iso),
		cmocka_unit_test(test_clock_duration_units),
		cmocka_unit_test(test_clock_duration_invalid),
		cmocka_unit_test_setup_teardown(test_clock_now_override, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_clock_now_override_invalid, save_env, restore_env),
		cmocka_unit_test(test_clock_mono),
		/* Last: under UBSan an overflow aborts the run. */
		cmocka_unit_test_setup_teardown(test_clock_now_override_overflow, save_env, restore_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
