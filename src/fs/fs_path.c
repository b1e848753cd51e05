/* fs_path — resolving paths to inode numbers: components looked up one by
 * one from the root ("." and ".." handled on the walked stack, since UBIFS
 * stores no parent entries), symlinks followed with a bound (ELOOP after
 * 40), ENOTDIR for a non-directory in the middle, ENAMETOOLONG for names
 * over 255 bytes. Relative paths start at the root. fs_path_last names the
 * last component's kind for the callers' Linux errnos. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/fs.h"

#define FS_MAX_SYMLINKS 40
#define FS_MAX_DEPTH 4096

int fs_resolve(struct ubikit_fs *fs, const char *path, int follow_last, uint64_t *inum)
{
	if (!path)
		return -EINVAL;
	if (!*path)
		return -ENOENT;
	size_t plen = strlen(path);
	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	char *work = malloc(PATH_MAX * 2);
	uint64_t *stack = malloc(FS_MAX_DEPTH * sizeof(*stack));
	struct ubifs_inode *ino = malloc(sizeof(*ino));
	int err = 0, links = 0, sp = 0;
	if (!work || !stack || !ino) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(work, path, plen + 1);
	stack[0] = UBIKIT_ROOT_INO;
	char *p = work;
	*inum = UBIKIT_ROOT_INO;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			*inum = stack[sp];
			break;
		}
		char *end = strchr(p, '/');
		size_t nlen = end ? (size_t)(end - p) : strlen(p);
		char *rest = end ? end : p + nlen;
		while (*rest == '/')
			rest++;
		int last = *rest == 0;
		int trailing_slash = end != NULL; /* "name/" must be a directory */
		if (nlen > 255) {
			err = -ENAMETOOLONG;
			goto out;
		}
		if (nlen == 1 && p[0] == '.') {
			p = rest;
			continue;
		}
		if (nlen == 2 && p[0] == '.' && p[1] == '.') {
			if (sp > 0)
				sp--;
			p = rest;
			continue;
		}
		uint64_t child;
		err = ubifs_lookup(fs->ubifs, stack[sp], p, nlen, &child, NULL);
		if (err)
			goto out;
		err = ubifs_read_inode(fs->ubifs, child, ino);
		if (err)
			goto out;
		if (S_ISLNK(ino->mode) && (!last || follow_last || trailing_slash)) {
			if (++links > FS_MAX_SYMLINKS) {
				err = -ELOOP;
				goto out;
			}
			if (ino->flags & UBIFS_CRYPT_FL) { /* the target as readlink shows it */
				char t[UBIFS_MAX_INO_DATA + 1];
				size_t tl = 0;
				err = ubifs_crypt_symlink(fs->ubifs, ino, t, sizeof(t), &tl);
				if (err)
					goto out;
				memcpy(ino->data, t, tl);
				ino->data_len = (uint32_t)tl;
			}
			size_t rlen = strlen(rest);
			if ((size_t)ino->data_len + 1 + rlen + 1 > PATH_MAX * 2) {
				err = -ENAMETOOLONG;
				goto out;
			}
			/* new path = target "/" rest, built in place from the end */
			int slash = rlen > 0 || trailing_slash;
			memmove(work + ino->data_len + slash, rest, rlen + 1);
			memcpy(work, ino->data, ino->data_len);
			if (slash)
				work[ino->data_len] = '/';
			if (memchr(work, 0, ino->data_len)) {
				err = -ENOENT; /* a NUL inside a target ends the path there */
				goto out;
			}
			if (work[0] == '/')
				sp = 0;
			p = work;
			continue;
		}
		if (last && !trailing_slash) {
			*inum = child;
			break;
		}
		if (!S_ISDIR(ino->mode)) {
			err = -ENOTDIR;
			goto out;
		}
		if (sp + 1 >= FS_MAX_DEPTH) {
			err = -ENAMETOOLONG;
			goto out;
		}
		stack[++sp] = child;
		p = rest;
	}
out:
	free(work);
	free(stack);
	free(ino);
	return err;
}

int fs_resolve_parent(struct ubikit_fs *fs, const char *path, uint64_t *dir, char name[256], size_t *nlen)
{
	if (!path)
		return -EINVAL;
	size_t len = strlen(path);
	if (len == 0)
		return -ENOENT;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	size_t n = len - start;
	if (n == 0)
		return -EBUSY; /* the root */
	if (n > 255)
		return -ENAMETOOLONG;
	if ((n == 1 && path[start] == '.') || (n == 2 && path[start] == '.' && path[start + 1] == '.'))
		return -EINVAL;
	memcpy(name, path + start, n);
	name[n] = 0;
	*nlen = n;
	if (start == 0) {
		*dir = UBIKIT_ROOT_INO;
		return 0;
	}
	char *d = malloc(start + 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, path, start);
	d[start] = 0;
	int err = fs_resolve(fs, d, 1, dir);
	free(d);
	if (err)
		return err;
	struct ubikit_stat st;
	err = ubikit_stat_ino(fs, *dir, &st);
	if (!err && !S_ISDIR(st.mode))
		err = -ENOTDIR;
	return err;
}

int fs_path_last(const char *path, int *trailing_slash)
{
	size_t len = strlen(path);
	*trailing_slash = 0;
	while (len > 0 && path[len - 1] == '/') {
		len--;
		*trailing_slash = 1;
	}
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	size_t n = len - start;
	if (n == 0)
		return path[0] ? FS_LAST_ROOT : FS_LAST_NORM; /* "" is ENOENT at the lookup */
	if (n == 1 && path[start] == '.')
		return FS_LAST_DOT;
	if (n == 2 && path[start] == '.' && path[start + 1] == '.')
		return FS_LAST_DOTDOT;
	return FS_LAST_NORM;
}
