#!/usr/bin/env bash
# Build PostgreSQL from an upstream source tarball once per machine and print
# the path of its pg_config.  Used by .ci/run for the version matrix:
#
#   pg_config=$(bash test/lib/pgbuild.sh [TARBALL])
#   make test PG_CONFIG="$pg_config"
#
# TARBALL defaults to postgresql-18.6.tar.bz2 in ../shared/pg/ beside the
# checkout (FENCE_PG_TARBALL overrides).  When a SHA256SUMS file lies beside
# the tarball, the tarball must match it.  The installation goes into a cache
# directory named after the tarball's sha256, so a second run (or another
# checkout on the same machine) reuses it in seconds, and a different tarball
# never reuses a stale build:
#
#   $FENCE_PG_CACHE/<sha256>/       default /var/cache/fence-pg as root,
#                                   else ${XDG_CACHE_HOME:-~/.cache}/fence-pg
#
# The build is what the tests need and no more: no ICU, readline or zlib;
# TAP test modules; contrib/dblink.  It is built into a temporary directory
# and renamed into place only when complete, under a lock, so an interrupted
# or concurrent build never leaves a half-built cache behind.  As root, the
# Debian packages the build needs (bison, flex) are installed first.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tarball=${1:-${FENCE_PG_TARBALL:-$src/../shared/pg/postgresql-18.6.tar.bz2}}
log() { printf '== %s\n' "$*" >&2; }
die() { printf 'fence: %s\n' "$*" >&2; exit 1; }

[ -f "$tarball" ] || die "no PostgreSQL source tarball at $tarball (set FENCE_PG_TARBALL)"
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

sha=$(sha256sum "$tarball" | awk '{print $1}')
sums=$(dirname "$tarball")/SHA256SUMS
if [ -f "$sums" ]; then
	want=$(awk -v f="$(basename "$tarball")" '$2 == f || $2 == "*" f {print $1}' "$sums")
	[ -n "$want" ] || die "$(basename "$tarball") is not listed in $sums"
	[ "$want" = "$sha" ] || die "$tarball: sha256 $sha, but $sums says $want"
fi

if [ -z "${FENCE_PG_CACHE:-}" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		FENCE_PG_CACHE=/var/cache/fence-pg
	else
		FENCE_PG_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/fence-pg
	fi
fi
prefix=$FENCE_PG_CACHE/$sha
mkdir -p "$FENCE_PG_CACHE"

if [ -x "$prefix/bin/pg_config" ]; then
	echo "$prefix/bin/pg_config"
	exit 0
fi

# One build at a time per cache; whoever waited finds the finished build.
exec 9>"$FENCE_PG_CACHE/.lock"
flock 9
if [ -x "$prefix/bin/pg_config" ]; then
	echo "$prefix/bin/pg_config"
	exit 0
fi

missing=()
command -v bison >/dev/null 2>&1 || missing+=(bison)
command -v flex >/dev/null 2>&1 || missing+=(flex)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v bzip2 >/dev/null 2>&1 || missing+=(bzip2)
perl -MIPC::Run -e1 2>/dev/null || missing+=(libipc-run-perl)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "building PostgreSQL needs: ${missing[*]}; install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}"
	fi
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The temporary tree is configured with its final prefix: PostgreSQL's
# binaries find share/ and lib/ relative to themselves, but its pg_config
# and the rpath of its programs name the configured prefix.
build=$(mktemp -d "$FENCE_PG_CACHE/.build.XXXXXX")
trap 'rm -rf "$build"' EXIT
blog=$FENCE_PG_CACHE/build-$sha.log
log "building PostgreSQL from $(basename "$tarball") into $prefix (once per machine; log in $blog)"
start=$(date +%s)
(
	set -e
	cd "$build"
	tar -xf "$tarball"
	cd postgresql-*/
	./configure --prefix="$prefix" --without-icu --without-readline --without-zlib --enable-tap-tests
	make -j"${FENCE_PG_JOBS:-2}"
	make install DESTDIR="$build/root"
	make -C contrib/dblink install DESTDIR="$build/root"
) >"$blog" 2>&1 || { tail -n 40 "$blog" >&2; die "PostgreSQL build failed; log in $blog"; }
mv "$build/root$prefix" "$prefix"
log "PostgreSQL built in $(( $(date +%s) - start )) s"
echo "$prefix/bin/pg_config"
