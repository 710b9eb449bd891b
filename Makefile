# fence: leases with fencing tokens for PostgreSQL, built with PGXS.
#
#   make            build fence.so and the install script
#   make install    install into the PostgreSQL that PG_CONFIG names
#   make test       every suite against a throwaway instance (test/run)
#   make demo       replay the incident timelines on a throwaway instance (test/demo)
#   make bench      side-by-side benchmarks (test/bench/run)
#   make chaos      the full fault test, about 20 minutes (test/chaos/;
#                   FENCE_CHAOS_SEED and FENCE_CHAOS_SECONDS as for make test)
#   make check-asserts
#                   compile the sources as an assert-enabled server would
#   make prove_installcheck PROVE_TESTS=t/001_crash.pl
#                   TAP files (under test/) against the installed PostgreSQL
#                   that PG_CONFIG names, with fence installed into it
#
# make test and make demo set up what they need first (Debian packages when
# run as root); see README.md.

EXTENSION = fence
# The version is defined once, in fence.control.
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(dir $(lastword $(MAKEFILE_LIST)))fence.control)
MODULE_big = fence

OBJS = \
	src/init.o \
	src/guc.o \
	src/clock.o \
	src/watch_any.o \
	src/dbstate.o \
	src/counter.o \
	src/token.o \
	src/lease_roles.o \
	src/lease_table.o \
	src/lease_drop.o \
	src/lease_permit.o \
	src/lease_queue.o \
	src/lease_release.o \
	src/lease_wait.o \
	src/lease_watch.o \
	src/lease_grant.o \
	src/lease_views.o \
	src/lease_counts.o \
	src/session.o \
	src/lease_sql.o \
	src/lease_watch_many.o \
	src/citus.o \
	src/enforce_cache.o \
	src/enforce_commit.o \
	src/enforce.o \
	src/protect.o \
	src/extension.o \
	src/breaker.o \
	src/breaker_state.o \
	src/breaker_args.o \
	src/breaker_access.o \
	src/breaker_sql.o

# The install script of the current version is assembled from one piece per
# concern, in this order (a later piece may use what an earlier one created).
# Older versions' scripts and the update scripts are checked in as they
# shipped: never edit src/sql/fence--1.0.sql, src/sql/fence--1.1.sql nor
# src/sql/fence--1.2.sql; a change goes into the pieces and, for existing
# installations, into the newest update script.
SQL_PARTS = \
	src/sql/install.sql \
	src/sql/token.sql \
	src/sql/counter.sql \
	src/sql/clock.sql \
	src/sql/lease.sql \
	src/sql/stats.sql \
	src/sql/enforce.sql \
	src/sql/comments.sql \
	src/sql/breaker.sql

DATA_built = fence--$(EXTVERSION).sql
DATA = \
	src/sql/fence--1.0.sql \
	src/sql/fence--1.0--1.1.sql \
	src/sql/fence--1.1.sql \
	src/sql/fence--1.1--1.2.sql \
	src/sql/fence--1.2.sql \
	src/sql/fence--1.2--1.3.sql
EXTRA_CLEAN = fence--$(EXTVERSION).sql

# pg_regress suite: sql/ and expected/ at the top level (inputdir "."),
# the usual contrib layout, so plain "make installcheck" works too, against
# a running server configured as test/fence.conf is (see CONTRIBUTING.md):
# shared_preload_libraries = 'fence', fence.test_clock = on (the timelines
# move the virtual clock), max_prepared_transactions of 1 or more (two tests
# prepare a transaction), and contrib's dblink installed.  make test sets up
# all of that on a throwaway instance.  The tests are looked up in
# $(srcdir) (set by PGXS) so that an out-of-tree build finds them.
REGRESS = $(patsubst $(srcdir)/sql/%.sql,%,$(sort $(wildcard $(srcdir)/sql/*.sql)))
REGRESS_OPTS = --temp-config=$(srcdir)/test/fence.conf

PG_CONFIG ?= pg_config

# Server headers are included as system headers so that -Wextra judges our
# code, not PostgreSQL's inline functions.  Unused parameters are normal in
# callbacks with fixed signatures, as in PostgreSQL itself.  Warnings are
# not errors here (a newer compiler must not break a user's build); the test
# harness and CI add -Werror through COPT.
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter

PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)
else
# No PostgreSQL development files yet: only the set-up targets below work.
all install installcheck:
	@echo "fence: no PostgreSQL development files found through PG_CONFIG=$(PG_CONFIG); set PG_CONFIG to the pg_config of your PostgreSQL (15 or later), or run 'make test' or 'make demo' (as root they install Debian's PostgreSQL 15)" >&2
	@exit 1
endif

$(OBJS): src/fence.h
src/enforce_cache.o src/enforce_commit.o src/enforce.o src/protect.o: src/trigger.h
$(filter src/lease_%,$(filter-out src/lease_sql.o,$(OBJS))): src/lease_internal.h
$(filter src/breaker%,$(OBJS)): src/breaker_internal.h
src/init.o $(filter src/lease_%,$(filter-out src/lease_sql.o,$(OBJS))): src/lease_counts.h

# An out-of-tree (VPATH) build, such as Debian's pg_buildext runs in
# build-<version>/, writes the objects under src/ of the build directory and
# finds the sources in $(srcdir): make creates that src/ first and takes the
# SQL pieces where VPATH found them.
ifdef VPATH
$(OBJS): | $(CURDIR)/src
$(CURDIR)/src:
	$(MKDIR_P) $@
endif

fence--$(EXTVERSION).sql: $(SQL_PARTS)
	cat $^ > $@

# Assert() compiles to nothing unless PostgreSQL was configured with
# --enable-cassert, so a server without it never compiles the asserted
# expressions: this compiles every source once more as an assert-enabled
# server would, writing no object.  The test harness runs it with -Werror.
.PHONY: check-asserts
check-asserts:
	@for f in $(OBJS:.o=.c); do \
		$(CC) $(CPPFLAGS) $(CFLAGS) -DUSE_ASSERT_CHECKING -fsyntax-only $(srcdir)/$$f || exit 1; \
	done

# The test harness uses the PostgreSQL of a PG_CONFIG given on the command
# line or in the environment, else Debian's PostgreSQL 15 (installed first
# when missing and run as root).
FENCE_PG_CONFIG = $(if $(filter command% environment%,$(origin PG_CONFIG)),$(PG_CONFIG))

# As PGXS's own prove_installcheck does for a TAP_TESTS module (fence does
# not set TAP_TESTS: that would add every TAP file to make installcheck):
# the TAP files start their own servers from the installation's binaries,
# so run it as a user that may run initdb, never as root.
PROVE_TESTS ?= t/*.pl
.PHONY: prove_installcheck
prove_installcheck:
	rm -rf '$(CURDIR)/tmp_check'
	$(MKDIR_P) '$(CURDIR)/tmp_check'
	cd '$(srcdir)/test' && \
	TESTDIR='$(CURDIR)' TESTDATADIR='$(CURDIR)/tmp_check' TESTLOGDIR='$(CURDIR)/tmp_check/log' \
	PATH="$(bindir):$$PATH" PG_REGRESS='$(pgxsdir)/src/test/regress/pg_regress' \
	FENCE_SRC='$(abspath $(srcdir))' \
	prove -I '$(pgxsdir)/src/test/perl' -I . $(PROVE_FLAGS) $(PROVE_TESTS)

.PHONY: test demo bench chaos
test:
	@FENCE_PG_CONFIG='$(FENCE_PG_CONFIG)' bash test/run

demo:
	@FENCE_PG_CONFIG='$(FENCE_PG_CONFIG)' bash test/demo

bench:
	@FENCE_PG_CONFIG='$(FENCE_PG_CONFIG)' bash test/bench/run

# The fault test's full schedule: test/t/080_chaos.pl with FENCE_CHAOS=full,
# through the same harness as make test (which runs its short schedule).
chaos:
	@FENCE_PG_CONFIG='$(FENCE_PG_CONFIG)' FENCE_CHAOS=full FENCE_SUITES=tap FENCE_TESTS=080_chaos bash test/run
