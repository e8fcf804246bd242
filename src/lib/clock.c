/* Clocks and time formats. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "error.h"

int64_t agc_clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t agc_clock_now_ms(void)
{
	const char *o = getenv("AGENTGC_NOW");
	struct timespec ts;

	if (o && *o) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(o, &end, 10);
		if (!errno && *end == '\0' && v > 0 && v <= INT64_MAX / 1000)
			return (int64_t)v * 1000;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t agc_clock_real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int digits(const char **p, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

int agc_time_parse_iso(const char *s, int64_t *ms)
{
	int Y, M, D, h, m, sec, frac = 0, fd = 0;
	struct tm tm;
	const char *p = s;
	time_t t;

	if (!s)
		return -1;
	if (digits(&p, 4, &Y) || *p++ != '-' || digits(&p, 2, &M) || *p++ != '-' || digits(&p, 2, &D))
		return -1;
	if (*p != 'T' && *p != ' ')
		return -1;
	p++;
	if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &m) || *p++ != ':' || digits(&p, 2, &sec))
		return -1;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (fd < 3) {
				frac = frac * 10 + (*p - '0');
				fd++;
			}
			p++;
		}
		while (fd < 3) {
			frac *= 10;
			fd++;
		}
	}
	if (!(strcmp(p, "Z") == 0 || strcmp(p, "+00:00") == 0 || *p == '\0'))
		return -1;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	{
		struct tm back;

		/* timegm rolls 30 February over into March: refuse days that do not exist. */
		if (!gmtime_r(&t, &back) || back.tm_mday != D || back.tm_mon != M - 1)
			return -1;
	}
	*ms = (int64_t)t * 1000 + frac;
	return 0;
}

void agc_time_format_iso(int64_t ms, char *out, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(out, n, "?");
		return;
	}
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int agc_duration_parse(const char *s, int64_t *ms)
{
	char *end;
	long long v;
	int64_t unit;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || v < 0)
		return -1;
	if (strcmp(end, "ms") == 0)
		unit = 1;
	else if (strcmp(end, "s") == 0)
		unit = 1000;
	else if (strcmp(end, "m") == 0)
		unit = 60 * 1000;
	else if (strcmp(end, "h") == 0)
		unit = 3600 * 1000;
	else if (strcmp(end, "d") == 0)
		unit = 86400 * 1000;
	else if (strcmp(end, "w") == 0)
		unit = 7 * 86400 * 1000LL;
	else
		return -1;
	if (v > INT64_MAX / unit)
		return -1;
	*ms = v * unit;
	return 0;
}
