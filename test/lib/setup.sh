# Shared set-up for test/run, test/demo and test/bench/run (sourced, not run).
#
# fence_setup: make sure PostgreSQL and the test tools are installed (as
#   root: apt-get installs what is missing; otherwise: print the exact
#   command and stop), build fence, and stage a private copy of that
#   PostgreSQL with fence installed into it under $FENCE_WORK.  The system
#   PostgreSQL is never touched, so no sudo is needed for tests and parallel
#   runs do not collide.  PostgreSQL refuses to run as root: when we are
#   root, every server-side step runs as the "postgres" user through
#   fence_as_pg.
#
# Which PostgreSQL: the one whose pg_config FENCE_PG_CONFIG names (make test
# PG_CONFIG=... sets it), any installation of 15 or later that has its
# server headers, pg_regress, pg_isolation_regress, the TAP modules
# (configure --enable-tap-tests) and contrib's dblink.  Without it, Debian's
# PostgreSQL 15 (the packages are installed when missing).
#
# FENCE_TEST_TOOLS=0 (make demo sets it) asks only for what a replay on a
# server of its own needs: PostgreSQL with its server headers and dblink
# (the timeline player's workers are dblink connections), a compiler and
# make, and python3 for the pictures; not IPC::Run, prove, pg_regress,
# pg_isolation_regress nor the TAP modules.
#
# After fence_setup:
#   FENCE_SRC   the checkout
#   FENCE_WORK  a fresh directory the test user owns (kept on failure)
#   FENCE_BIN   the staged PostgreSQL bindir (initdb, postgres, psql, ...)
#   FENCE_PGXS  the staged pgxs directory (pg_regress, isolation, TAP modules)
#   FENCE_COPY  a copy of sql/, expected/, test/ and doc/ readable by the test user
#   FENCE_PG_MAJOR  the major version of the PostgreSQL under test

FENCE_DEBIAN_PG_VERSION=15
FENCE_DEBIAN_PG_CONFIG=/usr/lib/postgresql/$FENCE_DEBIAN_PG_VERSION/bin/pg_config
FENCE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FENCE_PG_CONFIG=${FENCE_PG_CONFIG:-}
FENCE_TEST_TOOLS=${FENCE_TEST_TOOLS:-1}

fence_log() { printf '== %s\n' "$*" >&2; }

# Debian packages needed, and the file each one provides.
fence_missing_packages() {
	local -a missing=()
	local v=$FENCE_DEBIAN_PG_VERSION
	if [ -z "$FENCE_PG_CONFIG" ]; then
		[ -x /usr/lib/postgresql/$v/bin/postgres ] || missing+=(postgresql-$v)
		[ -x "$FENCE_DEBIAN_PG_CONFIG" ] && [ -f /usr/include/postgresql/$v/server/postgres.h ] \
			|| missing+=(postgresql-server-dev-$v)
	fi
	if [ "$FENCE_TEST_TOOLS" != 0 ]; then
		perl -MIPC::Run -e1 2>/dev/null || missing+=(libipc-run-perl)
		command -v prove >/dev/null 2>&1 || missing+=(perl)
	fi
	command -v make >/dev/null 2>&1 || missing+=(make)
	command -v gcc >/dev/null 2>&1 || missing+=(gcc)
	command -v python3 >/dev/null 2>&1 || missing+=(python3)
	local extra
	for extra in "$@"; do
		case "$extra" in
			redis) command -v redis-server >/dev/null 2>&1 || missing+=(redis-server) ;;
			pgbouncer) command -v pgbouncer >/dev/null 2>&1 || missing+=(pgbouncer) ;;
			# test/t/072_metrics.pl scrapes Debian's postgres_exporter.
			exporter) [ -x /usr/bin/prometheus-postgres-exporter ] \
				|| missing+=(prometheus-postgres-exporter) ;;
			hiredis) [ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev) ;;
			# make bench's etcd and ZooKeeper contenders: the servers (it
			# starts its own on loopback) and ZooKeeper's C client.
			etcd) command -v etcd >/dev/null 2>&1 || missing+=(etcd-server) ;;
			zookeeper)
				{ [ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null 2>&1; } \
					|| missing+=(zookeeper) ;;
			zkclient) [ -f /usr/include/zookeeper/zookeeper.h ] || missing+=(libzookeeper-mt-dev) ;;
			package)
				# Building the Debian package (debian/control's Build-Depends,
				# and what dpkg-buildpackage checks besides).
				local p
				for p in build-essential dpkg-dev debhelper postgresql-server-dev-all; do
					dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed \
						|| missing+=("$p")
				done ;;
			# The upstream suite extracts PostgreSQL's tests from its source
			# tarball and patches their expected output.
			upstream)
				command -v bzip2 >/dev/null 2>&1 || missing+=(bzip2)
				command -v patch >/dev/null 2>&1 || missing+=(patch)
				;;
			# The docs suite opens the demo's pictures in a headless browser;
			# the pictures name DejaVu Sans, so it must be there to measure.
			chromium)
				command -v chromium >/dev/null 2>&1 || missing+=(chromium)
				[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
				;;
			# The driver tests (test/t/04*): Debian's Python with psycopg 3,
			# its pool and asyncpg; Node.js and npm (the JavaScript drivers
			# come from the npm registry at test time).
			drivers)
				/usr/bin/python3 -c 'import psycopg' 2>/dev/null || missing+=(python3-psycopg)
				/usr/bin/python3 -c 'import psycopg_pool' 2>/dev/null || missing+=(python3-psycopg-pool)
				/usr/bin/python3 -c 'import asyncpg' 2>/dev/null || missing+=(python3-asyncpg)
				command -v node >/dev/null 2>&1 || missing+=(nodejs)
				command -v npm >/dev/null 2>&1 || missing+=(npm)
				;;
			# The fault test (test/t/080_chaos.pl, test/chaos/): Debian's
			# Python with psycopg 3.
			chaos)
				/usr/bin/python3 -c 'import psycopg' 2>/dev/null || missing+=(python3-psycopg)
				;;
			# The Python client's tests (test/t/044_python_client.pl): Debian's
			# Python with psycopg 3, psycopg_pool, pytest and pytest-asyncio,
			# and what a venv needs to pip install the package offline.
			pyclient)
				local m
				for m in psycopg psycopg_pool pytest pytest_asyncio setuptools; do
					/usr/bin/python3 -c "import $m" 2>/dev/null || missing+=("python3-${m//_/-}")
				done
				dpkg-query -W -f '${db:Status-Status}' python3-venv 2>/dev/null | grep -qx installed \
					|| missing+=(python3-venv)
				;;
			# The Go client's tests (test/t/046_go_client.pl): Debian's Go
			# and pgx v4, which go test builds in GOPATH mode, offline.
			goclient)
				command -v go >/dev/null 2>&1 || missing+=(golang-go)
				[ -d /usr/share/gocode/src/github.com/jackc/pgx/v4 ] \
					|| missing+=(golang-github-jackc-pgx-v4-dev)
				;;
			# The Java client's tests (test/t/047_java_client.pl): a JDK 17,
			# pgJDBC and JUnit 5 with its console launcher, all Debian's.
			javaclient)
				command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
				[ -f /usr/share/java/postgresql.jar ] || missing+=(libpostgresql-jdbc-java)
				[ -f /usr/share/java/junit-platform-console-standalone.jar ] || missing+=(junit5)
				;;
			# The Patroni test (test/t/063_patroni.pl): Patroni (which
			# pulls in python3-etcd and python3-psycopg2) and etcd, whose
			# server it starts on loopback itself; no etcdctl is needed.
			patroni)
				command -v patroni >/dev/null 2>&1 || missing+=(patroni)
				command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
				;;
			# The job framework recipes (test/t/043_job_frameworks.pl): Celery
			# with its Redis client and a Redis server, Node.js and npm (pg-boss
			# and graphile-worker come from the npm registry at test time), and
			# psycopg for the Celery task.
			jobs)
				/usr/bin/python3 -c 'import celery' 2>/dev/null || missing+=(python3-celery)
				/usr/bin/python3 -c 'import redis' 2>/dev/null || missing+=(python3-redis)
				/usr/bin/python3 -c 'import psycopg' 2>/dev/null || missing+=(python3-psycopg)
				/usr/bin/python3 -c 'import psycopg_pool' 2>/dev/null || missing+=(python3-psycopg-pool)
				command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
				command -v node >/dev/null 2>&1 || missing+=(nodejs)
				command -v npm >/dev/null 2>&1 || missing+=(npm)
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
		echo "fence: install them as root (or with sudo):" >&2
		echo "    apt-get update && apt-get install -y ${missing[*]}" >&2
		echo "fence: then run this command again (as root it installs them itself)." >&2
		exit 1
	fi
	# apt-get's own output, one line per package and step, is kept in a log;
	# what shows is a line per step and a count every 20 packages, so that a
	# fresh machine's install (some minutes) is never silent.
	local log status
	log=$(mktemp "${TMPDIR:-/tmp}/fence-apt.XXXXXX")
	export DEBIAN_FRONTEND=noninteractive
	fence_log "installing ${#missing[@]} Debian packages and what they depend on: ${missing[*]}"
	fence_log "apt-get update (apt-get's output: $log)"
	# Another apt-get or dpkg on the machine (a parallel run's) holds its
	# lock for a while: wait for it rather than fail.
	local -a wait_lock=(-o DPkg::Lock::Timeout=600)
	apt-get "${wait_lock[@]}" update -q >>"$log" 2>&1 || tail -n 20 "$log" >&2
	fence_log "apt-get install --no-install-recommends"
	apt-get "${wait_lock[@]}" install -y -q --no-install-recommends "${missing[@]}" 2>&1 | tee -a "$log" | awk '
		/ newly installed, / { n = $1 + $3; print "   " $0; fflush(); next }
		/^(Need to get|After this operation)/ { print "   " $0; fflush(); next }
		/^Get:[0-9]+ / { if (++got % 20 == 0 || got == n) { printf "   downloaded %d of %d\n", got, n; fflush() } next }
		/^Setting up / { if (++set % 20 == 0 || set == n) { printf "   set up %d of %d\n", set, n; fflush() } next }
	' >&2
	status=${PIPESTATUS[0]}
	[ "$status" -eq 0 ] || { tail -n 30 "$log" >&2; echo "fence: apt-get install failed ($status); its output: $log" >&2; }
	mapfile -t missing < <(fence_missing_packages "$@" | sed '/^$/d')
	if [ ${#missing[@]} -ne 0 ]; then
		echo "fence: still missing after apt-get: ${missing[*]}; apt-get's output: $log" >&2
		exit 1
	fi
	rm -f "$log"
}

# Run a command as the unprivileged test user (postgres when we are root).
fence_as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- env "PATH=$PATH" "$@"
	else
		"$@"
	fi
}

# Check the installation FENCE_PG_CONFIG names and set FENCE_PG_* from it.
fence_inspect_pg() {
	local pgc version
	pgc=$(command -v "$FENCE_PG_CONFIG") && [ -x "$pgc" ] \
		|| { echo "fence: PG_CONFIG=$FENCE_PG_CONFIG is not an executable pg_config" >&2; exit 1; }
	FENCE_PG_CONFIG=$pgc
	version=$("$pgc" --version) || exit 1
	FENCE_PG_MAJOR=$(sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p' <<<"$version")
	if [ -z "$FENCE_PG_MAJOR" ] || [ "$FENCE_PG_MAJOR" -lt 15 ]; then
		echo "fence: $pgc is $version; fence needs PostgreSQL 15 or later" >&2
		exit 1
	fi
	FENCE_PG_BINDIR=$("$pgc" --bindir)
	FENCE_PG_PKGLIBDIR=$("$pgc" --pkglibdir)
	FENCE_PG_SHAREDIR=$("$pgc" --sharedir)
	# pgxs.mk is <pgxs>/src/makefiles/pgxs.mk
	FENCE_PG_PGXSDIR=$(dirname "$(dirname "$(dirname "$("$pgc" --pgxs)")")")
	local f
	local -a need=("$FENCE_PG_BINDIR/postgres" "$FENCE_PG_BINDIR/initdb" \
		"$("$pgc" --includedir-server)/postgres.h" \
		"$FENCE_PG_SHAREDIR/extension/dblink.control") absent=()
	[ "$FENCE_TEST_TOOLS" = 0 ] || need+=("$FENCE_PG_PGXSDIR/src/test/regress/pg_regress" \
		"$FENCE_PG_PGXSDIR/src/test/isolation/pg_isolation_regress" \
		"$FENCE_PG_PGXSDIR/src/test/perl/PostgreSQL/Test/Cluster.pm")
	for f in "${need[@]}"; do
		[ -e "$f" ] || absent+=("$f")
	done
	if [ ${#absent[@]} -gt 0 ]; then
		echo "fence: the PostgreSQL $FENCE_PG_MAJOR at $pgc lacks what this needs:" >&2
		printf '    %s\n' "${absent[@]}" >&2
		if [ "$FENCE_TEST_TOOLS" = 0 ]; then
			echo "fence: it needs its server headers and contrib/dblink installed" >&2
		else
			echo "fence: it needs its server headers, the regress and isolation test programs and TAP modules (configure --enable-tap-tests), and contrib/dblink installed" >&2
		fi
		exit 1
	fi
}

# fence's objects are built in the checkout, as PGXS does: rebuild from
# scratch when the PostgreSQL they were built for changes.
fence_build() {
	local stamp=$FENCE_SRC/.fence-built-for
	local want
	want="$FENCE_PG_CONFIG $("$FENCE_PG_CONFIG" --version)"
	if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
		make -C "$FENCE_SRC" -s PG_CONFIG="$FENCE_PG_CONFIG" clean >/dev/null
	fi
	make -C "$FENCE_SRC" -s PG_CONFIG="$FENCE_PG_CONFIG" COPT=-Werror >/dev/null || exit 1
	make -C "$FENCE_SRC" -s PG_CONFIG="$FENCE_PG_CONFIG" COPT=-Werror check-asserts || exit 1
	echo "$want" >"$stamp"
}

fence_setup() {
	fence_install_packages "$@"
	[ -n "$FENCE_PG_CONFIG" ] || FENCE_PG_CONFIG=$FENCE_DEBIAN_PG_CONFIG
	# Debian's packages create the postgres user; a PostgreSQL built from
	# source on a machine without them does not.
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi
	fence_inspect_pg

	FENCE_WORK=$(mktemp -d "${TMPDIR:-/tmp}/fence.XXXXXX")
	chmod 755 "$FENCE_WORK"
	local stage=$FENCE_WORK/install

	fence_log "building fence for PostgreSQL $FENCE_PG_MAJOR ($FENCE_PG_CONFIG)"
	fence_build

	# A private, relocated copy of PostgreSQL: its binaries find share/ and
	# lib/ relative to themselves, exactly as PostgreSQL's own "make check"
	# temporary installation does, so the copy keeps the installation's
	# layout under $stage.  (Shared libraries such as libpq stay where they
	# are; the programs find them as before.)
	fence_log "staging PostgreSQL $FENCE_PG_MAJOR with fence in $stage"
	local d
	for d in "$FENCE_PG_BINDIR" "$FENCE_PG_PKGLIBDIR" "$FENCE_PG_SHAREDIR" "$FENCE_PG_PGXSDIR"; do
		[ -d "$stage$d" ] && continue
		mkdir -p "$stage$(dirname "$d")"
		cp -a "$d" "$stage$d"
	done
	make -C "$FENCE_SRC" -s PG_CONFIG="$FENCE_PG_CONFIG" COPT=-Werror DESTDIR="$stage" install >/dev/null || exit 1

	FENCE_BIN=$stage$FENCE_PG_BINDIR
	FENCE_PGXS=$stage$FENCE_PG_PGXSDIR
	FENCE_COPY=$FENCE_WORK/src
	mkdir -p "$FENCE_COPY"
	cp -a "$FENCE_SRC/sql" "$FENCE_SRC/expected" "$FENCE_SRC/test" "$FENCE_SRC/doc" \
		"$FENCE_SRC/contrib" "$FENCE_SRC/clients" "$FENCE_COPY/"
	# What the package and layering tests read.
	mkdir -p "$FENCE_COPY/src"
	cp -a "$FENCE_SRC"/src/*.c "$FENCE_SRC"/src/*.h "$FENCE_SRC/src/sql" "$FENCE_COPY/src/"
	cp -a "$FENCE_SRC/fence.control" "$FENCE_SRC/META.json" "$FENCE_SRC/LICENSE" "$FENCE_SRC/README.md" \
		"$FENCE_SRC/CHANGELOG.md" "$FENCE_COPY/" 2>/dev/null

	if [ "$(id -u)" -eq 0 ]; then
		chown -R postgres: "$FENCE_WORK"
	fi
	export FENCE_SRC FENCE_WORK FENCE_BIN FENCE_PGXS FENCE_COPY FENCE_PG_MAJOR
}

# Citus for test/t/064_citus.pl, installed into the staged PostgreSQL when
# that test runs: built once per machine by test/lib/citusbuild.sh (as root
# it installs libkrb5-dev first), from ../shared/citus/ beside the checkout
# (FENCE_CITUS_TARBALL overrides).  The cluster runs on PostgreSQL 18 only,
# to keep the other runs of the CI short (Citus 14 also builds on 16 and
# 17, never on 15).  Sets FENCE_CITUS to "installed", or to "skip: <why>" or
# "fail: <why>", which the test reports.
fence_citus_stage() {
	local tarball=${FENCE_CITUS_TARBALL:-$FENCE_SRC/../shared/citus/citus-14.0.1.tar.xz}
	local dir stage=$FENCE_WORK/install
	if [ "$FENCE_PG_MAJOR" != 18 ]; then
		FENCE_CITUS="skip: the Citus cluster runs on PostgreSQL 18 only, and this is PostgreSQL $FENCE_PG_MAJOR"
	elif [ ! -f "$tarball" ]; then
		FENCE_CITUS="skip: no Citus source tarball at $tarball"
	elif dir=$(bash "$FENCE_SRC/test/lib/citusbuild.sh" "$FENCE_PG_CONFIG" "$tarball"); then
		cp -R "$dir/lib/." "$stage$FENCE_PG_PKGLIBDIR/"
		cp -R "$dir/extension/." "$stage$FENCE_PG_SHAREDIR/extension/"
		FENCE_CITUS=installed
	else
		FENCE_CITUS="fail: Citus could not be built from $tarball (see above)"
	fi
	export FENCE_CITUS
}
