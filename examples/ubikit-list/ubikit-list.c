/* ubikit-list — a program using the installed libubikit (docs/library.md):
 * open an image (a NAND dump, a UBI or bare UBIFS image: detected), list a
 * directory, print a file.
 *
 *   ubikit-list IMAGE [DIR [FILE]]
 *
 * prints "<type> <size> <name>" per entry of DIR (default "/"), then
 * FILE's bytes if FILE is given. Only the public headers are used. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <ubikit/image.h>
#include <ubikit/ubikit.h>
#include <ubikit/version.h>

static int list_dir(struct ubikit_fs *fs, const char *dir)
{
	struct ubikit_dir *d;
	int ret = ubikit_opendir(fs, dir, &d);
	if (ret) {
		fprintf(stderr, "ubikit-list: %s: %s\n", dir, ubikit_errmsg(fs));
		return ret;
	}
	struct ubikit_dirent de;
	while ((ret = ubikit_readdir(d, &de)) > 0) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", de.name);
		struct ubikit_stat st;
		if (ubikit_lstat(fs, path, &st) == 0)
			printf("%c %llu %s\n", S_ISDIR(st.mode) ? 'd' : S_ISLNK(st.mode) ? 'l' : S_ISREG(st.mode) ? 'f' : 'o',
			       (unsigned long long)st.size, de.name);
	}
	ubikit_closedir(d);
	return ret;
}

static int print_file(struct ubikit_fs *fs, const char *path)
{
	struct ubikit_file *f;
	int ret = ubikit_open(fs, path, O_RDONLY, 0, &f);
	if (ret) {
		fprintf(stderr, "ubikit-list: %s: %s\n", path, ubikit_errmsg(fs));
		return ret;
	}
	char buf[65536];
	ssize_t n;
	while ((n = ubikit_read(f, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	ubikit_close(f);
	return n < 0 ? (int)n : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: ubikit-list IMAGE [DIR [FILE]]  (libubikit %s)\n", ubikit_version());
		return 2;
	}
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o); /* detect kind and geometry, read-only */
	struct ubikit_image *img;
	char msg[1024];
	if (ubikit_image_open(argv[1], &o, &img, msg, sizeof(msg))) {
		fprintf(stderr, "ubikit-list: %s\n", msg); /* names the file and the place */
		return 1;
	}
	const struct ubikit_image_geo *g = ubikit_image_geometry(img);
	printf("# %s, %u PEBs of %u bytes\n", ubikit_image_kind_name(g->kind), g->peb_count, g->peb_size);
	struct ubikit_fs *fs = ubikit_image_fs(img); /* mounted read-only */
	int ret = list_dir(fs, argc > 2 ? argv[2] : "/");
	if (!ret && argc > 3)
		ret = print_file(fs, argv[3]);
	ubikit_image_close(img); /* unmounts, detaches UBI, closes the file */
	return ret ? 1 : 0;
}
