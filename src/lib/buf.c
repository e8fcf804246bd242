/* Bounded buffers (curl DYNBUF, git strbuf): every growth is checked against a cap. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "error.h"
#include "hset.h"

static size_t buf_max(const agc_buf *b)
{
	return b->max ? b->max : AGC_BUF_DEFAULT_MAX;
}

int agc_buf_grow(agc_buf *b, size_t len)
{
	size_t need, cap;
	char *p;

	if (len > buf_max(b) || b->len > buf_max(b) - len)
		return agc_error_set(-1, "buffer would exceed its limit of %zu bytes", buf_max(b));
	need = b->len + len + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->ptr, cap);
	if (!p)
		return agc_error_oom();
	b->ptr = p;
	b->cap = cap;
	return 0;
}

int agc_buf_add(agc_buf *b, const void *data, size_t len)
{
	if (agc_buf_grow(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	return 0;
}

int agc_buf_adds(agc_buf *b, const char *s)
{
	return agc_buf_add(b, s, strlen(s));
}

int agc_buf_addc(agc_buf *b, char c)
{
	return agc_buf_add(b, &c, 1);
}

int agc_buf_vprintf(agc_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return agc_error_set(-1, "cannot format text");
	if (agc_buf_grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int agc_buf_printf(agc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = agc_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void agc_buf_clear(agc_buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

void agc_buf_release(agc_buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

char *agc_buf_detach(agc_buf *b, size_t *len)
{
	char *p = b->ptr;

	if (!p) {
		p = calloc(1, 1);
		if (!p) {
			agc_error_oom();
			return NULL;
		}
	}
	if (len)
		*len = b->len;
	b->ptr = NULL;
	b->len = b->cap = 0;
	return p;
}

const char *agc_buf_cstr(const agc_buf *b)
{
	return b->ptr ? b->ptr : "";
}

int agc_array_grow(void **ptr, size_t *cap, size_t need, size_t elsize, size_t max)
{
	size_t n;
	void *p;

	if (need <= *cap)
		return 0;
	if (max && need > max)
		return agc_error_set(-1, "too many entries (limit %zu)", max);
	n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	if (max && n > max)
		n = max;
	if (n > SIZE_MAX / elsize)
		return agc_error_oom();
	p = realloc(*ptr, n * elsize);
	if (!p)
		return agc_error_oom();
	*ptr = p;
	*cap = n;
	return 0;
}

char *agc_strdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p)
		agc_error_oom();
	return p;
}

char *agc_strndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		agc_error_oom();
	return p;
}

char *agc_strfmt(const char *fmt, ...)
{
	agc_buf b = AGC_BUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = agc_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		agc_buf_release(&b);
		return NULL;
	}
	return agc_buf_detach(&b, NULL);
}

static size_t pool_hash(const char *s)
{
	return (size_t)agc_fnv1a(AGC_FNV_BASIS, s, strlen(s));
}

const char *agc_strpool_add(agc_strpool *p, const char *s)
{
	size_t i, mask;

	if (!s)
		return NULL;
	if (p->n * 2 >= p->nslots) {
		size_t n = p->nslots ? p->nslots * 2 : 64, k;
		char **v = calloc(n, sizeof(*v));

		if (!v)
			return NULL;
		for (k = 0; k < p->nslots; k++)
			if (p->slots[k]) {
				for (i = pool_hash(p->slots[k]) & (n - 1); v[i]; i = (i + 1) & (n - 1))
					;
				v[i] = p->slots[k];
			}
		free(p->slots);
		p->slots = v;
		p->nslots = n;
	}
	mask = p->nslots - 1;
	for (i = pool_hash(s) & mask; p->slots[i]; i = (i + 1) & mask)
		if (strcmp(p->slots[i], s) == 0)
			return p->slots[i];
	if (!(p->slots[i] = agc_strdup(s)))
		return NULL;
	p->n++;
	return p->slots[i];
}

void agc_strpool_release(agc_strpool *p)
{
	size_t i;

	for (i = 0; i < p->nslots; i++)
		free(p->slots[i]);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

bool agc_mem_icase(const char *hay, size_t len, const char *needle, size_t nl)
{
	size_t i;

	if (!nl || len < nl)
		return nl == 0;
	for (i = 0; i + nl <= len; i++)
		if ((hay[i] | 0x20) == (needle[0] | 0x20) && strncasecmp(hay + i, needle, nl) == 0)
			return true;
	return false;
}
