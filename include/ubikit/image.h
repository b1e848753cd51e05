/* libubikit — opening the images users bring (the image layer, above fs).
 *
 * One call opens a file or a device, finds out what it is and its geometry,
 * attaches UBI when there is UBI, chooses the volume holding UBIFS and
 * mounts it, read-only or read-write:
 *
 *   kind        what it is                                  how it is changed
 *   UBI         ubinize output, a dump without OOB (dd)     in place (a file that ends
 *                                                           where its data ends may grow)
 *   NAND_OOB    raw NAND dump with OOB (nanddump -o)        in place, bad blocks kept
 *   UBIFS       bare UBIFS (mkfs.ubifs -o)                  written back at close, growing
 *                                                           up to max_leb_cnt LEBs
 *   SIM         ubikit flash simulator (IMAGE + IMAGE.sim)  in place, sidecar updated
 *   MTD         Linux MTD character device (/dev/mtdN)      in place
 *
 * Every detected value can be given instead (struct ubikit_image_opts).
 * Detection only reads. A read-only image is never written (nor its
 * sidecar); a read-write one is locked exclusively while open.
 *
 * Errors: negative errno, and a message naming the file and the place in
 * the caller's buffer (msg/msglen) or ubikit_image_errmsg(). No global
 * state; one struct ubikit_image per open image.
 *
 *   struct ubikit_image_opts o;
 *   ubikit_image_opts_init(&o);
 *   struct ubikit_image *img;
 *   char msg[1024];
 *   if (ubikit_image_open("dump.bin", &o, &img, msg, sizeof(msg)) == 0) {
 *           struct ubikit_fs *fs = ubikit_image_fs(img);  // mounted read-only
 *           ...  <ubikit/ubikit.h> calls on fs ...
 *           ubikit_image_close(img);                       // unmounts, detaches
 *   }
 */
#ifndef UBIKIT_IMAGE_H
#define UBIKIT_IMAGE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ubikit_fs;
struct ubikit_image;

enum ubikit_image_kind {
	UBIKIT_IMAGE_AUTO = 0, /* detect */
	UBIKIT_IMAGE_UBI,      /* PEBs without OOB: ubinize output or nanddump without -o */
	UBIKIT_IMAGE_NAND_OOB, /* PEBs of (page + OOB) x pages: nanddump -o */
	UBIKIT_IMAGE_UBIFS,    /* bare UBIFS: LEBs concatenated (mkfs.ubifs -o) */
	UBIKIT_IMAGE_SIM,      /* ubikit flash simulator file with its .sim sidecar */
	UBIKIT_IMAGE_MTD,      /* Linux MTD character device */
};

enum {
	UBIKIT_IMAGE_RDWR = 1 << 0,       /* open for changes (lock, flash and UBI read-write) */
	UBIKIT_IMAGE_NO_MOUNT = 1 << 1,   /* do not mount UBIFS at open (ubikit_image_mount later) */
	UBIKIT_IMAGE_NO_VOLUME = 1 << 2,  /* no UBIFS volume is fine (with NO_MOUNT) */
	UBIKIT_IMAGE_KEEP_FLASH = 1 << 3, /* a failed UBI attach still returns the image (flash only) */
};

struct ubikit_image_opts {
	enum ubikit_image_kind kind; /* AUTO = detect */
	uint32_t peb_size;           /* 0 = detect (data bytes per PEB) */
	uint32_t page_size;          /* 0 = detect (NAND page = min I/O) */
	uint32_t oob_size;           /* 0 = detect (with OOB only) */
	int with_oob;                /* -1 detect, 0 no, 1 yes */
	uint32_t vid_hdr_offset;     /* 0 = from the EC header */
	uint32_t leb_size;           /* 0 = detect (bare UBIFS) */
	const char *vol_name;        /* volume to use (NULL = first with UBIFS) */
	long vol_id;                 /* -1 = not given */
	int64_t offset;              /* -1 = detect; else byte offset of the UBI device in the file */
	int ubi_index;               /* -1 = the first; else which of the UBI devices found (0 = first) */
	unsigned flags;              /* UBIKIT_IMAGE_* */
	unsigned mount_flags;        /* extra UBIKIT_MOUNT_* (RDONLY is implied without RDWR) */
	const uint8_t *fscrypt_key;  /* fscrypt master key for the mount (see ubikit_mount_opts), or NULL */
	size_t fscrypt_key_len;
	const uint8_t *auth_cert;    /* signer's certificate for the mount (see ubikit_mount_opts), or NULL */
	size_t auth_cert_len;
	const uint8_t *auth_hmac_key; /* HMAC key for the mount (see ubikit_mount_opts), or NULL */
	size_t auth_hmac_key_len;
};

enum ubikit_image_flash { UBIKIT_IMAGE_FLASH_NAND = 1, UBIKIT_IMAGE_FLASH_NOR = 2 };

/* One UBI device found in a file (a dump may hold several one after another,
 * each with its own image_seq, at any byte offset). */
struct ubikit_image_ubi_dev {
	uint64_t offset;      /* where its PEB 0 starts in the file */
	uint64_t size;        /* bytes up to the end of its last PEB with an EC header */
	uint32_t peb_stride;  /* bytes per PEB in the file */
	uint32_t ec_headers;  /* PEBs with a good EC header */
	uint32_t image_seq;
	uint32_t vid_hdr_offset, data_offset;
};

#define UBIKIT_IMAGE_MAX_UBI_DEVS 16

/* What detection found, and how (how[] is for people). */
struct ubikit_image_geo {
	enum ubikit_image_kind kind;
	uint64_t file_size;
	int has_oob;
	uint32_t peb_size;     /* data bytes per PEB */
	uint32_t page_size;    /* min I/O (NAND page, 1 for NOR, UBIFS min_io for bare) */
	uint32_t subpage_size;
	uint32_t oob_size;
	uint32_t peb_stride;   /* bytes per PEB in the file (peb_size or pages*(page+oob)) */
	uint32_t peb_count;
	uint32_t vid_hdr_offset, data_offset;
	uint32_t leb_size;     /* UBI LEB size (PEB - data_offset) or UBIFS leb_size */
	uint32_t vtbl_pebs;    /* PEBs the volume table reserves for volumes (0 = unknown) */
	enum ubikit_image_flash flash_type;
	uint64_t offset;       /* byte offset of the chosen UBI device in the file (0: start) */
	uint64_t dev_size;     /* bytes from there that belong to it (0: the rest of the file) */
	int ubi_dev_count;     /* UBI devices found in the file (dumps with OOB: 0, not searched) */
	int ubi_dev_index;     /* the chosen one (-1: given by offset, none of the list) */
	struct ubikit_image_ubi_dev ubi_devs[UBIKIT_IMAGE_MAX_UBI_DEVS];
	char how[1024];
};

/* One UBI volume of an open image (a bare UBIFS image is one volume, id 0). */
struct ubikit_image_volume {
	uint32_t id;
	char name[128];
	int dynamic;          /* 1 dynamic, 0 static */
	uint32_t reserved_lebs;
	uint32_t leb_size;
	int has_ubifs;        /* LEB 0 starts with a UBIFS superblock */
	int chosen;           /* the volume that is (or will be) mounted */
};

void ubikit_image_opts_init(struct ubikit_image_opts *o);
/* Detection only: nothing is opened for writing, nothing attached. */
int ubikit_image_detect(const char *path, const struct ubikit_image_opts *o, struct ubikit_image_geo *g,
			char *msg, size_t msglen);
/* Detect, open the flash (or the bare image), attach UBI, choose the volume
 * (o->vol_name / o->vol_id, else the first whose LEB 0 holds a UBIFS
 * superblock) and, unless UBIKIT_IMAGE_NO_MOUNT, mount it. On failure *out
 * is NULL (except with UBIKIT_IMAGE_KEEP_FLASH for a failed attach) and
 * msg holds the reason. */
int ubikit_image_open(const char *path, const struct ubikit_image_opts *o, struct ubikit_image **out, char *msg,
		      size_t msglen);
const struct ubikit_image_geo *ubikit_image_geometry(const struct ubikit_image *img);
/* Volumes: fills up to max entries, returns how many there are (<0 error). */
int ubikit_image_volumes(const struct ubikit_image *img, struct ubikit_image_volume *vols, int max);
/* Choose another volume (by name if name != NULL, else by id); unmounts
 * the current one first (committing it on a read-write image). */
int ubikit_image_select(struct ubikit_image *img, const char *name, uint32_t id);
/* Mount the chosen volume (again); flags are UBIKIT_MOUNT_*. A read-only
 * image mounts read-only whatever the flags say. */
int ubikit_image_mount(struct ubikit_image *img, unsigned mount_flags);
/* The mounted file system (NULL if none); owned by the image. */
struct ubikit_fs *ubikit_image_fs(const struct ubikit_image *img);
/* Make what the file system wrote so far durable in the file or device
 * (after ubikit_fsync/ubikit_sync): a bare image writes its changed LEBs
 * back, a flash image finishes pending erases and syncs the file. Without
 * it a bare image reaches its file only at close. */
int ubikit_image_flush(struct ubikit_image *img);
/* Unmount (commit) the file system, keep the image open. */
int ubikit_image_unmount(struct ubikit_image *img);
/* Unmount, detach UBI, write back (bare image), release the lock, free.
 * Returns the first error of a read-write image's way to disk. */
int ubikit_image_close(struct ubikit_image *img);
/* Same; the reason of a failure is copied into msg (may be NULL). */
int ubikit_image_close_msg(struct ubikit_image *img, char *msg, size_t msglen);
/* The reason of the last failure on img ("" if none). */
const char *ubikit_image_errmsg(const struct ubikit_image *img);
const char *ubikit_image_kind_name(enum ubikit_image_kind k);

#ifdef __cplusplus
}
#endif
#endif
