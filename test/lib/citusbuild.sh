#!/usr/bin/env bash
# Build Citus from its release source tarball once per machine, for one
# PostgreSQL, and print the directory that holds the result:
#
#   dir=$(bash test/lib/citusbuild.sh PG_CONFIG [TARBALL])
#   $dir/lib/        citus.so and the other libraries, for pg_config --pkglibdir
#   $dir/extension/  citus.control and its scripts, for <sharedir>/extension
#
# TARBALL defaults to citus-14.0.1.tar.xz in ../shared/citus/ beside the
# checkout (FENCE_CITUS_TARBALL overrides).  When a SHA256SUMS file lies
# beside the tarball, the tarball must match it.  As test/lib/pgbuild.sh does
# for PostgreSQL, the build goes into a cache named after the tarball's
# sha256, and after the PostgreSQL it was built for (its version and where
# its headers are), so that a second run reuses it at once and neither
# another tarball nor another PostgreSQL ever reuses a stale build:
#
#   $FENCE_CITUS_CACHE/<sha256>-<pg>/   default /var/cache/fence-citus as root,
#                                       else ${XDG_CACHE_HOME:-~/.cache}/fence-citus
#
# Citus is configured without libcurl, lz4 and zstd (the tests need none of
# them) and built with make -j2 (FENCE_CITUS_JOBS) into a temporary directory
# that is renamed into place only when complete, under a lock.  As root, the
# Debian package the build needs besides PostgreSQL's (libkrb5-dev: the
# server headers include gssapi) is installed first.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
log() { printf '== %s\n' "$*" >&2; }
die() { printf 'fence: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: citusbuild.sh PG_CONFIG [TARBALL]"
pg_config=$1
tarball=${2:-${FENCE_CITUS_TARBALL:-$src/../shared/citus/citus-14.0.1.tar.xz}}
[ -x "$pg_config" ] || die "$pg_config is not an executable pg_config"
[ -f "$tarball" ] || die "no Citus source tarball at $tarball (set FENCE_CITUS_TARBALL)"
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

sha=$(sha256sum "$tarball" | awk '{print $1}')
sums=$(dirname "$tarball")/SHA256SUMS
if [ -f "$sums" ]; then
	want=$(awk -v f="$(basename "$tarball")" '$2 == f || $2 == "*" f {print $1}' "$sums")
	[ -n "$want" ] || die "$(basename "$tarball") is not listed in $sums"
	[ "$want" = "$sha" ] || die "$tarball: sha256 $sha, but $sums says $want"
fi

pgkey=$( { "$pg_config" --version; "$pg_config" --includedir-server; } | sha256sum | cut -c1-16)

if [ -z "${FENCE_CITUS_CACHE:-}" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		FENCE_CITUS_CACHE=/var/cache/fence-citus
	else
		FENCE_CITUS_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/fence-citus
	fi
fi
dest=$FENCE_CITUS_CACHE/$sha-$pgkey
mkdir -p "$FENCE_CITUS_CACHE"

if [ -f "$dest/lib/citus.so" ]; then
	echo "$dest"
	exit 0
fi

# One build at a time per cache; whoever waited finds the finished build.
exec 9>"$FENCE_CITUS_CACHE/.lock"
flock 9
if [ -f "$dest/lib/citus.so" ]; then
	echo "$dest"
	exit 0
fi

missing=()
dpkg-query -W -f '${db:Status-Status}' libkrb5-dev 2>/dev/null | grep -qx installed \
	|| [ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "building Citus needs: ${missing[*]}; install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}"
	fi
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build=$(mktemp -d "$FENCE_CITUS_CACHE/.build.XXXXXX")
trap 'rm -rf "$build"' EXIT
blog=$FENCE_CITUS_CACHE/build-$sha-$pgkey.log
log "building Citus from $(basename "$tarball") for $("$pg_config" --version) into $dest (once per machine; log in $blog)"
start=$(date +%s)
pkglibdir=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)
(
	set -e
	cd "$build"
	tar -xf "$tarball"
	cd citus-*/
	./configure PG_CONFIG="$pg_config" --without-libcurl --without-lz4 --without-zstd
	make -j"${FENCE_CITUS_JOBS:-2}"
	make install DESTDIR="$build/root"
) >"$blog" 2>&1 || { tail -n 40 "$blog" >&2; die "Citus build failed; log in $blog"; }
mkdir -p "$build/out"
mv "$build/root$pkglibdir" "$build/out/lib"
mv "$build/root$sharedir/extension" "$build/out/extension"
# Without LLVM there is no bitcode; with it, the bitcode is not needed.
rm -rf "$build/out/lib/bitcode"
mv "$build/out" "$dest"
log "Citus built in $(( $(date +%s) - start )) s"
echo "$dest"
