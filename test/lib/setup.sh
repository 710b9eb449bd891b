# Shared set-up for test/run, test/demo and test/bench/run (sourced, not run).
#
# fence_setup: make sure PostgreSQL 15 and the test tools are installed
#   (as root: apt-get installs what is missing; otherwise: print the exact
#   command and stop), build fence, and stage a private copy of PostgreSQL 15
#   with fence installed into it under $FENCE_WORK.  The system PostgreSQL is
#   never touched, so no sudo is needed for tests and parallel runs do not
#   collide.  PostgreSQL refuses to run as root: when we are root, every
#   server-side step runs as the "postgres" user through fence_as_pg.
#
# After fence_setup:
#   FENCE_SRC   the checkout
#   FENCE_WORK  a fresh directory the test user owns (kept on failure)
#   FENCE_BIN   the staged PostgreSQL bindir (initdb, postgres, psql, ...)
#   FENCE_PGXS  the staged pgxs directory (pg_regress, isolation, TAP modules)
#   FENCE_COPY  a copy of sql/, expected/ and test/ readable by the test user

FENCE_PG_VERSION=15
FENCE_PG_ROOT=/usr/lib/postgresql/$FENCE_PG_VERSION
FENCE_PG_SHARE=/usr/share/postgresql/$FENCE_PG_VERSION
FENCE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

fence_log() { printf '== %s\n' "$*" >&2; }

# Debian packages needed, and the file each one provides.
fence_missing_packages() {
	local -a missing=()
	[ -x "$FENCE_PG_ROOT/bin/postgres" ] || missing+=(postgresql-$FENCE_PG_VERSION)
	[ -x "$FENCE_PG_ROOT/bin/pg_config" ] && [ -f /usr/include/postgresql/$FENCE_PG_VERSION/server/postgres.h ] \
		|| missing+=(postgresql-server-dev-$FENCE_PG_VERSION)
	perl -MIPC::Run -e1 2>/dev/null || missing+=(libipc-run-perl)
	command -v prove >/dev/null 2>&1 || missing+=(perl)
	command -v make >/dev/null 2>&1 || missing+=(make)
	command -v gcc >/dev/null 2>&1 || missing+=(gcc)
	command -v python3 >/dev/null 2>&1 || missing+=(python3)
	local extra
	for extra in "$@"; do
		case "$extra" in
			redis) command -v redis-server >/dev/null 2>&1 || missing+=(redis-server) ;;
			pgbouncer) command -v pgbouncer >/dev/null 2>&1 || missing+=(pgbouncer) ;;
			hiredis) [ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev) ;;
			# The docs suite opens the demo's pictures in a headless browser;
			# the pictures name DejaVu Sans, so it must be there to measure.
			chromium)
				command -v chromium >/dev/null 2>&1 || missing+=(chromium)
				[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
				;;
		esac
	done
	printf '%s\n' "${missing[@]}"
}

fence_install_packages() {
	local -a missing
	mapfile -t missing < <(fence_missing_packages "$@" | sed '/^$/d')
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "fence: missing Debian packages: ${missing[*]}" >&2
		echo "fence: install them with:" >&2
		echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
		echo "fence: then run this command again (as root it installs them itself)." >&2
		exit 1
	fi
	fence_log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	mapfile -t missing < <(fence_missing_packages "$@" | sed '/^$/d')
	if [ ${#missing[@]} -ne 0 ]; then
		echo "fence: still missing after apt-get: ${missing[*]}" >&2
		exit 1
	fi
}

# Run a command as the unprivileged test user (postgres when we are root).
fence_as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- env "PATH=$PATH" "$@"
	else
		"$@"
	fi
}

fence_setup() {
	fence_install_packages "$@"

	FENCE_WORK=$(mktemp -d "${TMPDIR:-/tmp}/fence.XXXXXX")
	chmod 755 "$FENCE_WORK"
	local stage=$FENCE_WORK/install

	fence_log "building fence"
	make -C "$FENCE_SRC" -s PG_CONFIG="$FENCE_PG_ROOT/bin/pg_config" COPT=-Werror >/dev/null

	# A private, relocated copy of PostgreSQL: its binaries find share/ and
	# lib/ relative to themselves, exactly as PostgreSQL's own "make check"
	# temporary installation does.
	fence_log "staging PostgreSQL $FENCE_PG_VERSION with fence in $stage"
	mkdir -p "$stage/usr/lib/postgresql" "$stage/usr/share/postgresql"
	cp -a "$FENCE_PG_ROOT" "$stage/usr/lib/postgresql/"
	cp -a "$FENCE_PG_SHARE" "$stage/usr/share/postgresql/"
	make -C "$FENCE_SRC" -s PG_CONFIG="$FENCE_PG_ROOT/bin/pg_config" COPT=-Werror DESTDIR="$stage" install >/dev/null

	FENCE_BIN=$stage$FENCE_PG_ROOT/bin
	FENCE_PGXS=$stage$FENCE_PG_ROOT/lib/pgxs
	FENCE_COPY=$FENCE_WORK/src
	mkdir -p "$FENCE_COPY"
	cp -a "$FENCE_SRC/sql" "$FENCE_SRC/expected" "$FENCE_SRC/test" "$FENCE_COPY/"

	if [ "$(id -u)" -eq 0 ]; then
		chown -R postgres: "$FENCE_WORK"
	fi
	export FENCE_SRC FENCE_WORK FENCE_BIN FENCE_PGXS FENCE_COPY
}
