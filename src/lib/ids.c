/* Id grammars (SPEC R1). */
#include <string.h>

#include "error.h"
#include "ids.h"

int agc_id_uuid(const char *in, char *out)
{
	size_t i;

	if (!in || strlen(in) != AGC_UUID_LEN)
		return agc_error_set(AGC_EUNSAFE, "'%s' is not a session id (a UUID)", in ? in : "");
	for (i = 0; i < AGC_UUID_LEN; i++) {
		int c = (unsigned char)in[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return agc_error_set(AGC_EUNSAFE, "'%s' is not a session id (a UUID)", in);
			out[i] = '-';
		} else {
			if (agc_hexval(c) < 0)
				return agc_error_set(AGC_EUNSAFE, "'%s' is not a session id (a UUID)", in);
			out[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
		}
	}
	out[AGC_UUID_LEN] = '\0';
	return 0;
}

bool agc_id_is_uuid(const char *s, size_t len)
{
	size_t i;

	if (len != AGC_UUID_LEN)
		return false;
	for (i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
			return false;
		}
	}
	return true;
}

int agc_id_opencode(const char *in, char *out)
{
	size_t i, n;

	if (!in || strncmp(in, "ses_", 4) != 0)
		goto bad;
	n = strlen(in);
	if (n < 5 || n > 4 + 64)
		goto bad;
	for (i = 4; i < n; i++) {
		int c = (unsigned char)in[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'))
			goto bad;
	}
	memcpy(out, in, n + 1);
	return 0;
bad:
	return agc_error_set(AGC_EUNSAFE, "'%s' is not an OpenCode session id (ses_...)", in ? in : "");
}

bool agc_id_path_safe(const char *s)
{
	const unsigned char *p;

	if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (p = (const unsigned char *)s; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

bool agc_id_opencode_generated(const char *s)
{
	size_t i;

	if (!s || strlen(s) != 30 || strncmp(s, "ses_", 4) != 0)
		return false;
	for (i = 4; i < 30; i++) {
		int c = (unsigned char)s[i];
		bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
		bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');

		if (i < 16 ? !hex : !alnum)
			return false;
	}
	return true;
}
