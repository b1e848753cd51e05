/* ubifs_scan — walking the nodes of one LEB.
 *
 * Two users: the mount path (strict scan of spec §4 and the kernel's
 * recovery scan of a journal tail; internal, ubifs_priv.h) and `ubikit dump`,
 * which wants to see everything in a LEB, including broken nodes. The dump
 * scanner below is lenient: it reports every node it can delimit (with
 * crc_ok = 0 when the CRC is wrong), padding, garbage and where empty space
 * starts, and resynchronises on the next 8-byte aligned node magic after
 * garbage. It never writes. */
#ifndef UBIKIT_UBIFS_SCAN_H
#define UBIKIT_UBIFS_SCAN_H
#include <stddef.h>
#include <stdint.h>

#include "ubifs/ubifs_media.h"

struct ubi_vol_io;

enum ubifs_scan_kind {
	UBIFS_SCAN_NODE = 0,    /* a node with a sane header (check crc_ok) */
	UBIFS_SCAN_PADDING = 1, /* padding node or 0xCE padding bytes (len = bytes skipped) */
	UBIFS_SCAN_GARBAGE = 2, /* bytes that are no node (len = bytes skipped to resync) */
	UBIFS_SCAN_EMPTY = 3,   /* 0xFF from offs to the end of the LEB (len = that many) */
	UBIFS_SCAN_BAD_EMPTY = 4, /* not all 0xFF after the last node (offs = first non-FF) */
};

struct ubifs_scan_node {
	enum ubifs_scan_kind kind;
	uint32_t lnum, offs, len; /* len: node length (header field) or bytes covered */
	uint8_t type, group_type; /* node_type / group_type from the header */
	uint64_t sqnum;
	int crc_ok;               /* CRC verified */
	int has_key;              /* node types 0..3 */
	struct ubifs_key key;
	const uint8_t *node;      /* node bytes (len of them), valid during the callback */
	const char *problem;      /* NULL, or what is wrong ("bad CRC", "garbage", ...) */
};

/* Return non-zero from the callback to stop the walk (that value is returned). */
typedef int (*ubifs_scan_cb)(void *arg, const struct ubifs_scan_node *n);

/* Walk LEB lnum of vol from offset 0. fanout is used for the index node
 * length rule (0 = accept up to the LEB size). Returns 0 when the walk
 * completed, the callback's non-zero value, or a negative errno (read
 * failure, bad arguments). */
int ubifs_scan_leb(struct ubi_vol_io *vol, uint32_t lnum, uint32_t fanout, ubifs_scan_cb cb, void *arg);

#endif
