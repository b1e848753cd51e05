/* fscrypt_vm_key — a tiny static program run inside the Linux VM to give the
 * kernel fscrypt keys and policies (busybox has no keyctl and no fscryptctl):
 *   fscrypt_vm_key v1 DESC16HEX KEYFILE   add a v1 master key "fscrypt:DESC" (logon key)
 *   fscrypt_vm_key v1add MNT DESC16HEX KEYFILE  FS_IOC_ADD_ENCRYPTION_KEY of a v1 key (the
 *                                         file system's keyring: gone at unmount)
 *   fscrypt_vm_key v1set DIR DESC16HEX [PAD]  FS_IOC_SET_ENCRYPTION_POLICY v1, AES-256-XTS/CTS
 *   fscrypt_vm_key v2add MNT KEYFILE      FS_IOC_ADD_ENCRYPTION_KEY, prints the identifier
 *   fscrypt_vm_key v2set DIR IDHEX [PAD]  FS_IOC_SET_ENCRYPTION_POLICY v2, AES-256-XTS/CTS
 * PAD is the name padding, 4, 8, 16 or 32 (default 32).
 * Built with gcc -static by tests/data/crypt/make_images.sh. Test tool only. */
#include <fcntl.h>
#include <linux/fscrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int read_key(const char *path, unsigned char *k)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t n = fread(k, 1, 64, f);
	fclose(f);
	return n == 64 ? 0 : -1;
}

static int hex(const char *s, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sscanf(s + 2 * i, "%2hhx", &out[i]) != 1)
			return -1;
	return 0;
}

/* FSCRYPT_POLICY_FLAGS_PAD_* of a padding in bytes (-1: not one). */
static int pad_flag(int argc, char **argv, int i)
{
	int pad = argc > i ? atoi(argv[i]) : 32;
	switch (pad) {
	case 4: return FSCRYPT_POLICY_FLAGS_PAD_4;
	case 8: return FSCRYPT_POLICY_FLAGS_PAD_8;
	case 16: return FSCRYPT_POLICY_FLAGS_PAD_16;
	case 32: return FSCRYPT_POLICY_FLAGS_PAD_32;
	}
	return -1;
}

static int set_policy(const char *dir, const void *p)
{
	int fd = open(dir, O_RDONLY);
	if (fd < 0 || ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, p)) {
		perror("FS_IOC_SET_ENCRYPTION_POLICY");
		return 1;
	}
	close(fd);
	return 0;
}

static int add_key(const char *mnt, const unsigned char raw[64], const char *desc)
{
	struct fscrypt_add_key_arg *a = calloc(1, sizeof(*a) + 64);
	if (!a)
		return 1;
	a->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	if (desc) {
		a->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR;
		if (hex(desc, a->key_spec.u.descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE))
			return 2;
	}
	a->raw_size = 64;
	memcpy(a->raw, raw, 64);
	int fd = open(mnt, O_RDONLY);
	if (fd < 0 || ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, a)) {
		perror("FS_IOC_ADD_ENCRYPTION_KEY");
		return 1;
	}
	close(fd);
	if (!desc) {
		for (int i = 0; i < FSCRYPT_KEY_IDENTIFIER_SIZE; i++)
			printf("%02x", a->key_spec.u.identifier[i]);
		printf("\n");
	}
	free(a);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char raw[64];
	if (argc == 4 && !strcmp(argv[1], "v1")) {
		struct fscrypt_key k = { .mode = 0, .size = 64 };
		if (read_key(argv[3], raw))
			return 1;
		memcpy(k.raw, raw, 64);
		char desc[64];
		snprintf(desc, sizeof(desc), "fscrypt:%s", argv[2]);
		long id = syscall(SYS_add_key, "logon", desc, &k, sizeof(k), -5 /* KEY_SPEC_USER_SESSION_KEYRING: searched by request_key when there is no session keyring */);
		if (id < 0) {
			perror("add_key");
			return 1;
		}
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "v1add"))
		return read_key(argv[4], raw) ? 1 : add_key(argv[2], raw, argv[3]);
	if (argc == 4 && !strcmp(argv[1], "v2add"))
		return read_key(argv[3], raw) ? 1 : add_key(argv[2], raw, NULL);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "v1set")) {
		struct fscrypt_policy_v1 p = { .version = FSCRYPT_POLICY_V1,
					       .contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS,
					       .filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS };
		int f = pad_flag(argc, argv, 4);
		if (f < 0 || hex(argv[3], p.master_key_descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE))
			return 2;
		p.flags = (unsigned char)f;
		return set_policy(argv[2], &p);
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "v2set")) {
		struct fscrypt_policy_v2 p = { .version = FSCRYPT_POLICY_V2,
					       .contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS,
					       .filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS };
		int f = pad_flag(argc, argv, 4);
		if (f < 0 || hex(argv[3], p.master_key_identifier, FSCRYPT_KEY_IDENTIFIER_SIZE))
			return 2;
		p.flags = (unsigned char)f;
		return set_policy(argv[2], &p);
	}
	fprintf(stderr, "usage: fscrypt_vm_key v1 DESC KEYFILE | v1add MNT DESC KEYFILE | v1set DIR DESC [PAD] |\n"
			"       v2add MNT KEYFILE | v2set DIR IDHEX [PAD]\n");
	return 2;
}
