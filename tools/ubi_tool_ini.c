/* ubi_tool_ini — see ubi_tool_ini.h. */
#include "ubi_tool_ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *strip(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* Set key (owned string passed in) to val (copied; NULL for a section). */
static int ini_set(struct ubi_ini *ini, char *key, const char *val)
{
	for (size_t i = 0; i < ini->n; i++) {
		if (!strcmp(ini->e[i].key, key)) {
			free(key);
			char *v = val ? strdup(val) : NULL;
			if (val && !v)
				return -ENOMEM;
			free(ini->e[i].val);
			ini->e[i].val = v;
			return 0;
		}
	}
	if (ini->n == ini->cap) {
		size_t cap = ini->cap ? ini->cap * 2 : 32;
		struct ubi_ini_entry *e = realloc(ini->e, cap * sizeof(*e));
		if (!e) {
			free(key);
			return -ENOMEM;
		}
		ini->e = e;
		ini->cap = cap;
	}
	char *v = val ? strdup(val) : NULL;
	if (val && !v) {
		free(key);
		return -ENOMEM;
	}
	ini->e[ini->n].key = key;
	ini->e[ini->n].val = v;
	ini->n++;
	return 0;
}

/* A quoted value: up to the first unescaped closing quote; '\' escapes. */
static void unquote(char *v, char quote)
{
	char *out = v;
	for (char *p = v + 1; *p; p++) {
		if (*p == '\\' && p[1]) {
			*out++ = *++p;
			continue;
		}
		if (*p == quote)
			break;
		*out++ = *p;
	}
	*out = '\0';
}

/* Parse one logical line. Returns 0, 1 on syntax error, <0 on ENOMEM. */
static int parse_line(struct ubi_ini *ini, char *line, char **section)
{
	char *s = strip(line);
	size_t len = strlen(s);
	if (!len || s[0] == '#' || s[0] == ';')
		return 0;
	if (s[0] == '[' && s[len - 1] == ']') {
		s[len - 1] = '\0';
		char *name = strip(s + 1);
		lower(name);
		char *copy = strdup(name);
		char *key = strdup(name);
		if (!copy || !key) {
			free(copy);
			free(key);
			return -ENOMEM;
		}
		free(*section);
		*section = copy;
		return ini_set(ini, key, NULL);
	}
	char *eq = strchr(s, '=');
	if (!eq || eq == s)
		return 1;
	*eq = '\0';
	char *key = strip(s);
	lower(key);
	char *val = eq + 1;
	while (*val && isspace((unsigned char)*val))
		val++;
	if ((val[0] == '"' || val[0] == '\'') && val[1]) {
		unquote(val, val[0]);
	} else {
		val[strcspn(val, ";#")] = '\0';
		val = strip(val);
		if (!strcmp(val, "\"\"") || !strcmp(val, "''"))
			val[0] = '\0';
	}
	const char *sec = *section ? *section : "";
	char *full = malloc(strlen(sec) + strlen(key) + 2);
	if (!full)
		return -ENOMEM;
	sprintf(full, "%s:%s", sec, key);
	return ini_set(ini, full, val);
}

int ubi_ini_load(const char *path, struct ubi_ini *ini, struct util_err *err)
{
	memset(ini, 0, sizeof(*ini));
	FILE *f = fopen(path, "r");
	if (!f)
		return util_err_set(err, -errno, "cannot open ini file \"%s\": %s", path, strerror(errno));
	char *buf = NULL, *logical = NULL, *section = NULL;
	size_t cap = 0, lcap = 0, llen = 0;
	unsigned lineno = 0, first_line = 0;
	int ret = 0;
	ssize_t n;
	while ((n = getline(&buf, &cap, f)) >= 0) {
		lineno++;
		while (n && isspace((unsigned char)buf[n - 1]))
			buf[--n] = '\0';
		if (!llen)
			first_line = lineno;
		int cont = n && buf[n - 1] == '\\';
		if (cont)
			buf[--n] = '\0';
		if (llen + (size_t)n + 1 > lcap) {
			size_t nc = (llen + (size_t)n + 1) * 2;
			char *p = realloc(logical, nc);
			if (!p) {
				ret = util_err_set(err, -ENOMEM, "out of memory reading \"%s\"", path);
				goto out;
			}
			logical = p;
			lcap = nc;
		}
		memcpy(logical + llen, buf, (size_t)n + 1);
		llen += (size_t)n;
		if (cont)
			continue;
		int r = parse_line(ini, logical, &section);
		llen = 0;
		if (r < 0) {
			ret = util_err_set(err, r, "out of memory reading \"%s\"", path);
			goto out;
		}
		if (r > 0) {
			ret = util_err_set(err, -EINVAL,
					   "syntax error in ini file \"%s\" line %u: expected \"[section]\", "
					   "\"key = value\" or a comment",
					   path, first_line);
			goto out;
		}
	}
	if (llen) { /* file ended inside a continued line */
		int r = parse_line(ini, logical, &section);
		if (r)
			ret = util_err_set(err, r < 0 ? r : -EINVAL, "syntax error in ini file \"%s\" line %u", path,
					   first_line);
	}
	if (ferror(f))
		ret = util_err_set(err, -EIO, "cannot read ini file \"%s\"", path);
out:
	free(buf);
	free(logical);
	free(section);
	fclose(f);
	if (ret)
		ubi_ini_free(ini);
	return ret;
}

void ubi_ini_free(struct ubi_ini *ini)
{
	for (size_t i = 0; i < ini->n; i++) {
		free(ini->e[i].key);
		free(ini->e[i].val);
	}
	free(ini->e);
	memset(ini, 0, sizeof(*ini));
}

size_t ubi_ini_nsec(const struct ubi_ini *ini)
{
	size_t c = 0;
	for (size_t i = 0; i < ini->n; i++)
		if (!strchr(ini->e[i].key, ':'))
			c++;
	return c;
}

const char *ubi_ini_secname(const struct ubi_ini *ini, size_t idx)
{
	for (size_t i = 0; i < ini->n; i++)
		if (!strchr(ini->e[i].key, ':') && idx-- == 0)
			return ini->e[i].key;
	return NULL;
}

const char *ubi_ini_get(const struct ubi_ini *ini, const char *section, const char *key)
{
	size_t sl = strlen(section), kl = strlen(key);
	for (size_t i = 0; i < ini->n; i++) {
		const char *k = ini->e[i].key;
		if (strlen(k) != sl + kl + 1 || k[sl] != ':')
			continue;
		if (!strncasecmp(k, section, sl) && !strcasecmp(k + sl + 1, key))
			return ini->e[i].val;
	}
	return NULL;
}
