# ubifs_mkfs_lib.sh — the source tree of the mkfs tests (sourced after
# ubifs_lib.sh): make_tree's tree (every file type, hard links, sparse
# files, 10000 names, long names and targets) plus xattrs (user.*, and
# trusted.* as root; values up to 4000 bytes), a socket, files with zero
# blocks inside, and a 6 MiB file of mixed text and random data.
mkfs_tree() {
	local d=$1
	make_tree "$d"
	(
		set -e
		cd "$d"
		setfattr -n user.colour -v blue hello.txt
		setfattr -n user.empty hello.txt
		setfattr -n user.big -v "0x$(head -c 4000 /dev/zero | tr '\0' 'a' | xxd -p | tr -d '\n')" f4096
		setfattr -n user.dir -v yes sub
		if [ "$(id -u)" = 0 ]; then
			setfattr -n trusted.t -v secret sub/deeper
		fi
		python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' sock
		{ head -c 8192 /dev/urandom; head -c 16384 /dev/zero; printf 'end'; } >zeros-inside
		{ for i in $(seq 1 40000); do echo "mixed line $i"; done; head -c 3M /dev/urandom; } >mixed.bin
		touch -d '2020-01-02 03:04:05' zeros-inside mixed.bin
		touch -d '2022-03-04 05:06:07' . sub sub/deeper
	)
}
