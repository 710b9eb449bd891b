# fence: leases with fencing tokens for PostgreSQL, built with PGXS.
#
#   make            build fence.so and the install script
#   make install    install into the PostgreSQL that PG_CONFIG names
#   make test       every suite against a throwaway instance (test/run)
#   make demo       replay the seed timelines on a throwaway instance (test/demo)
#   make bench      side-by-side benchmarks (test/bench/run)
#
# make test and make demo set up what they need first (Debian packages when
# run as root); see README.md.

EXTENSION = fence
MODULE_big = fence

OBJS = \
	src/fence.o \
	src/guc.o \
	src/clock.o \
	src/stats.o \
	src/counter.o \
	src/token.o \
	src/lease_table.o \
	src/session.o \
	src/lease_sql.o \
	src/enforce.o

# The install script is assembled from one piece per concern, in this order
# (a later piece may use what an earlier one created).
SQL_PARTS = \
	src/sql/token.sql \
	src/sql/counter.sql \
	src/sql/clock.sql \
	src/sql/lease.sql \
	src/sql/stats.sql \
	src/sql/enforce.sql

DATA_built = fence--1.0.sql
EXTRA_CLEAN = fence--1.0.sql

# pg_regress suite: sql/ and expected/ at the top level (inputdir "."),
# the usual contrib layout, so plain "make installcheck" works too.
REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --temp-config=$(srcdir)/test/fence.conf

# Prefer PostgreSQL 15's own pg_config when several versions are installed.
ifneq ($(wildcard /usr/lib/postgresql/15/bin/pg_config),)
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
else
PG_CONFIG ?= pg_config
endif

# Server headers are included as system headers so that -Wextra judges our
# code, not PostgreSQL's inline functions.  Unused parameters are normal in
# callbacks with fixed signatures, as in PostgreSQL itself.
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter

PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)
else
# No PostgreSQL development files yet: only the set-up targets below work.
all install installcheck:
	@echo "fence: PostgreSQL 15 development files not found; run 'make test' or 'make demo' (they install them as root), or: apt-get install postgresql-15 postgresql-server-dev-15" >&2
	@exit 1
endif

$(OBJS): src/fence.h

fence--1.0.sql: $(SQL_PARTS)
	cat $(SQL_PARTS) > $@

.PHONY: test demo bench
test:
	@bash test/run

demo:
	@bash test/demo

bench:
	@bash test/bench/run
