/* fscrypt_vm_key — a tiny static program run inside the Linux VM to give the
 * kernel fscrypt keys and policies (busybox has no keyctl and no fscryptctl):
 *   fscrypt_vm_key v1 DESC16HEX KEYFILE   add a v1 master key "fscrypt:DESC" (logon key)
 *   fscrypt_vm_key v2add MNT KEYFILE      FS_IOC_ADD_ENCRYPTION_KEY, prints the identifier
 *   fscrypt_vm_key v2set DIR IDHEX        FS_IOC_SET_ENCRYPTION_POLICY v2, AES-256-XTS/CTS
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
	if (argc == 4 && !strcmp(argv[1], "v2add")) {
		if (read_key(argv[3], raw))
			return 1;
		struct fscrypt_add_key_arg *a = calloc(1, sizeof(*a) + 64);
		a->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
		a->raw_size = 64;
		memcpy(a->raw, raw, 64);
		int fd = open(argv[2], O_RDONLY);
		if (fd < 0 || ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, a)) {
			perror("FS_IOC_ADD_ENCRYPTION_KEY");
			return 1;
		}
		for (int i = 0; i < FSCRYPT_KEY_IDENTIFIER_SIZE; i++)
			printf("%02x", a->key_spec.u.identifier[i]);
		printf("\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "v2set")) {
		struct fscrypt_policy_v2 p = { .version = FSCRYPT_POLICY_V2,
					       .contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS,
					       .filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS,
					       .flags = FSCRYPT_POLICY_FLAGS_PAD_32 };
		if (hex(argv[3], p.master_key_identifier, FSCRYPT_KEY_IDENTIFIER_SIZE))
			return 2;
		int fd = open(argv[2], O_RDONLY);
		if (fd < 0 || ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &p)) {
			perror("FS_IOC_SET_ENCRYPTION_POLICY");
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "usage: fscrypt_vm_key v1 DESC KEYFILE | v2add MNT KEYFILE | v2set DIR IDHEX\n");
	return 2;
}
