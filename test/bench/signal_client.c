/*-------------------------------------------------------------------------
 *
 * signal_client.c
 *		How soon a lease's holder learns that it lost it (make bench, the
 *		signal section): from just before the takeover is sent to the
 *		answer of the holder's watchdog, blocked in fence_wait_lease_end,
 *		against the same wake-up through PostgreSQL's own means.
 *
 * usage: signal_client CONNINFO KIND REPS LATFILE
 *
 *	fence_break		a holder takes the lease of one key, detached (fence_try_lease
 *					with an owner name, so that another connection may release
 *					it by its token); its watchdog, on a second connection,
 *					blocks in fence_wait_lease_end(key, token); a third
 *					connection breaks the lease (fence_break)
 *	fence_release	the same, the third connection releasing the lease by its
 *					token (fence_release(key, token)) instead
 *	advisory		a holder takes pg_advisory_lock; a waiter blocks in
 *					pg_advisory_lock on the same key; the holder unlocks
 *	notify			a listener waits (LISTEN); another connection sends
 *					NOTIFY (autocommit); the sample ends when the
 *					notification arrives
 *
 * Before each takeover the client waits until the watchdog (or waiter) is
 * seen waiting in pg_stat_activity, so that every sample measures a wake-up,
 * not a race with the wait's start (the listener: seen idle, the same
 * probe, so that every kind runs the same loop).  One sample a repetition, in
 * microseconds, one a line, in LATFILE; prints "reps=N".
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include "bench_util.h"

#define KEY "bench-signal"

static void
die(PGconn *pg, const char *what)
{
	fprintf(stderr, "signal_client: %s: %s", what, pg ? PQerrorMessage(pg) : "\n");
	exit(1);
}

static PGconn *
connect_to(const char *conninfo)
{
	PGconn	   *pg = PQconnectdb(conninfo);

	if (PQstatus(pg) != CONNECTION_OK)
		die(pg, "cannot connect");
	return pg;
}

/* One statement, its one value (or NULL); dies on an error. */
static char *
one_value(PGconn *pg, const char *sql, int n, const char *const *params)
{
	static char out[64];
	PGresult   *r = PQexecParams(pg, sql, n, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
		die(pg, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) == 0 || PQgetisnull(r, 0, 0))
	{
		PQclear(r);
		return NULL;
	}
	snprintf(out, sizeof(out), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return out;
}

/* Wait (5 s at most) for input on pg, then read it. */
static void
wait_input(PGconn *pg)
{
	struct pollfd p = {.fd = PQsocket(pg),.events = POLLIN};
	int			n;

	do
		n = poll(&p, 1, 5000);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		die(NULL, "no answer within 5 s");
	if (!PQconsumeInput(pg))
		die(pg, "read");
}

/*
 * Wait for the answer of the async query in flight on pg; checked, and its
 * first value (or "") returned, valid until the next call.
 */
static const char *
finish_async(PGconn *pg)
{
	static char out[64];
	PGresult   *r;

	out[0] = '\0';
	while (PQisBusy(pg))
		wait_input(pg);
	while ((r = PQgetResult(pg)) != NULL)
	{
		if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
			die(pg, "async statement");
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
			snprintf(out, sizeof(out), "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	return out;
}

/*
 * Wait until the backend PID is seen waiting in a statement (or, with idle,
 * waiting for its client), as pg_stat_activity says.
 */
static void
wait_until_waiting(PGconn *probe, const char *pid, int idle)
{
	const char *params[1] = {pid};

	for (int i = 0; i < 5000; i++)
	{
		char	   *w = one_value(probe, idle
								  ? "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $1"
								  : "SELECT wait_event_type IS NOT NULL AND wait_event_type <> 'Client' "
								  "FROM pg_stat_activity WHERE pid = $1 AND state = 'active'",
								  1, params);

		if (w && strcmp(w, "t") == 0)
			return;
		usleep(200);
	}
	die(NULL, "the watchdog was never seen waiting");
}

int
main(int argc, char **argv)
{
	const char *conninfo,
			   *kind,
			   *latfile;
	int			reps;
	PGconn	   *holder,
			   *watch,
			   *taker;
	char		watch_pid[32];
	FILE	   *f;

	if (argc != 5)
	{
		fprintf(stderr, "usage: %s CONNINFO fence_break|fence_release|advisory|notify REPS LATFILE\n", argv[0]);
		return 2;
	}
	conninfo = argv[1];
	kind = argv[2];
	reps = atoi(argv[3]);
	latfile = argv[4];
	if (strcmp(kind, "fence_break") != 0 && strcmp(kind, "fence_release") != 0 &&
		strcmp(kind, "advisory") != 0 && strcmp(kind, "notify") != 0)
	{
		fprintf(stderr, "signal_client: unknown kind %s\n", kind);
		return 2;
	}
	if (reps < 1)
		return 2;
	holder = connect_to(conninfo);
	watch = connect_to(conninfo);
	taker = connect_to(conninfo);
	snprintf(watch_pid, sizeof(watch_pid), "%d", PQbackendPID(watch));
	if (strcmp(kind, "notify") == 0)
		one_value(watch, "LISTEN bench_signal", 0, NULL);
	f = fopen(latfile, "w");
	if (f == NULL)
		die(NULL, "cannot write the latency file");

	for (int i = 0; i < reps; i++)
	{
		double		t0,
					t1;

		if (strcmp(kind, "notify") == 0)
		{
			PGnotify   *n = NULL;

			wait_until_waiting(taker, watch_pid, 1);
			t0 = now_s();
			if (!PQsendQuery(holder, "NOTIFY bench_signal"))
				die(holder, "NOTIFY");
			while ((n = PQnotifies(watch)) == NULL)
				wait_input(watch);
			t1 = now_s();
			PQfreemem(n);
			finish_async(holder);
		}
		else if (strcmp(kind, "advisory") == 0)
		{
			one_value(holder, "SELECT pg_advisory_lock(4242)", 0, NULL);
			if (!PQsendQuery(watch, "SELECT pg_advisory_lock(4242)"))
				die(watch, "pg_advisory_lock");
			wait_until_waiting(taker, watch_pid, 0);
			t0 = now_s();
			if (!PQsendQuery(holder, "SELECT pg_advisory_unlock(4242)"))
				die(holder, "pg_advisory_unlock");
			finish_async(watch);
			t1 = now_s();
			finish_async(holder);
			one_value(watch, "SELECT pg_advisory_unlock(4242)", 0, NULL);
		}
		else
		{
			char		token[32];
			const char *params[2] = {KEY, token};
			const char *how;
			char	   *t = one_value(holder, "SELECT fence_try_lease('" KEY "', '1 min', 'bench-holder')::bigint", 0, NULL);

			if (t == NULL)
				die(NULL, "the lease was not granted");
			snprintf(token, sizeof(token), "%s", t);
			if (!PQsendQueryParams(watch, "SELECT fence_wait_lease_end($1::text, $2::bigint)", 2, NULL,
								   params, NULL, NULL, 0))
				die(watch, "fence_wait_lease_end");
			wait_until_waiting(taker, watch_pid, 0);
			t0 = now_s();
			if (strcmp(kind, "fence_break") == 0)
			{
				if (!PQsendQuery(taker, "SELECT fence_break('" KEY "')"))
					die(taker, "fence_break");
			}
			else if (!PQsendQueryParams(taker, "SELECT fence_release($1::text, $2::bigint)", 2, NULL,
										params, NULL, NULL, 0))
				die(taker, "fence_release");
			how = finish_async(watch);
			t1 = now_s();
			if (strcmp(how, "released") != 0)
			{
				fprintf(stderr, "signal_client: the watchdog said \"%s\", not \"released\"\n", how);
				return 1;
			}
			if (strcmp(kind, "fence_release") == 0 && strcmp(finish_async(taker), "t") != 0)
			{
				fprintf(stderr, "signal_client: the release by token failed\n");
				return 1;
			}
			finish_async(taker);
		}
		fprintf(f, "%.0f\n", (t1 - t0) * 1e6);
	}
	if (fclose(f) != 0)
		die(NULL, "cannot write the latency file");
	PQfinish(holder);
	PQfinish(watch);
	PQfinish(taker);
	printf("reps=%d\n", reps);
	return 0;
}
