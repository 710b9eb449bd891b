/*-------------------------------------------------------------------------
 *
 * signal_client.c
 *		How soon a lease's holder learns that it lost it (make bench, the
 *		signal section): from just before the takeover is sent to the
 *		answer of the holder's watchdog, blocked in fence_wait_lease_end,
 *		against the same wake-up through PostgreSQL's own means.
 *
 * usage: signal_client CONNINFO KIND[,KIND...] REPS LATPREFIX
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
 * probe, so that every kind runs the same loop); the probe never runs on
 * the connection that then sends the takeover.  With several kinds, each
 * repetition takes one sample of each, in the order given, on the same three
 * connections: the kinds are compared under the same conditions, since this
 * machine's wake-up times drift from one second to the next.  One sample a
 * repetition, in microseconds, one a line, in LATPREFIX.KIND; prints
 * "reps=N".
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

/* The three connections every kind uses, and the watchdog's PID. */
typedef struct Conns
{
	PGconn	   *holder;
	PGconn	   *watch;
	PGconn	   *taker;
	char		watch_pid[32];
} Conns;

/* One NOTIFY to the listener; seconds from the send to its arrival. */
static double
sample_notify(Conns *c)
{
	PGnotify   *n = NULL;
	double		t0,
				t1;

	wait_until_waiting(c->taker, c->watch_pid, 1);
	t0 = now_s();
	if (!PQsendQuery(c->holder, "NOTIFY bench_signal"))
		die(c->holder, "NOTIFY");
	while ((n = PQnotifies(c->watch)) == NULL)
		wait_input(c->watch);
	t1 = now_s();
	PQfreemem(n);
	finish_async(c->holder);
	return t1 - t0;
}

/* One advisory unlock to a waiter blocked in pg_advisory_lock. */
static double
sample_advisory(Conns *c)
{
	double		t0,
				t1;

	one_value(c->holder, "SELECT pg_advisory_lock(4242)", 0, NULL);
	if (!PQsendQuery(c->watch, "SELECT pg_advisory_lock(4242)"))
		die(c->watch, "pg_advisory_lock");
	wait_until_waiting(c->taker, c->watch_pid, 0);
	t0 = now_s();
	if (!PQsendQuery(c->holder, "SELECT pg_advisory_unlock(4242)"))
		die(c->holder, "pg_advisory_unlock");
	finish_async(c->watch);
	t1 = now_s();
	finish_async(c->holder);
	one_value(c->watch, "SELECT pg_advisory_unlock(4242)", 0, NULL);
	return t1 - t0;
}

/*
 * One takeover of a detached lease its watchdog waits on: fence_break, or
 * with by_token, fence_release(key, token) from another connection.
 */
static double
sample_fence(Conns *c, int by_token)
{
	char		token[32];
	const char *params[2] = {KEY, token};
	const char *how;
	double		t0,
				t1;
	char	   *t = one_value(c->holder, "SELECT fence_try_lease('" KEY "', '1 min', 'bench-holder')::bigint", 0, NULL);

	if (t == NULL)
		die(NULL, "the lease was not granted");
	snprintf(token, sizeof(token), "%s", t);
	if (!PQsendQueryParams(c->watch, "SELECT fence_wait_lease_end($1::text, $2::bigint)", 2, NULL,
						   params, NULL, NULL, 0))
		die(c->watch, "fence_wait_lease_end");

	/*
	 * The holder probes, not the taker: as in the advisory loop, the
	 * connection that sends the takeover is not the one that has just run
	 * the probe.  A takeover sent right after its own connection's probe
	 * measured about 50 us slower at p50, a cost of the probe's query and
	 * not of the wake-up.
	 */
	wait_until_waiting(c->holder, c->watch_pid, 0);
	t0 = now_s();
	if (!by_token)
	{
		if (!PQsendQuery(c->taker, "SELECT fence_break('" KEY "')"))
			die(c->taker, "fence_break");
	}
	else if (!PQsendQueryParams(c->taker, "SELECT fence_release($1::text, $2::bigint)", 2, NULL,
								params, NULL, NULL, 0))
		die(c->taker, "fence_release");
	how = finish_async(c->watch);
	t1 = now_s();
	if (strcmp(how, "released") != 0)
	{
		fprintf(stderr, "signal_client: the watchdog said \"%s\", not \"released\"\n", how);
		exit(1);
	}
	if (by_token && strcmp(finish_async(c->taker), "t") != 0)
	{
		fprintf(stderr, "signal_client: the release by token failed\n");
		exit(1);
	}
	finish_async(c->taker);
	return t1 - t0;
}

#define MAX_KINDS 4

int
main(int argc, char **argv)
{
	const char *conninfo,
			   *prefix;
	char	   *kinds[MAX_KINDS];
	FILE	   *files[MAX_KINDS];
	int			nkinds = 0;
	int			reps;
	Conns		c;
	char	   *list;

	if (argc != 5)
	{
		fprintf(stderr, "usage: %s CONNINFO KIND[,KIND...] REPS LATPREFIX\n"
				"kinds: fence_break, fence_release, advisory, notify\n", argv[0]);
		return 2;
	}
	conninfo = argv[1];
	reps = atoi(argv[3]);
	prefix = argv[4];
	if (reps < 1)
		return 2;
	list = strdup(argv[2]);
	for (char *k = strtok(list, ","); k != NULL; k = strtok(NULL, ","))
	{
		char		path[4096];

		if (strcmp(k, "fence_break") != 0 && strcmp(k, "fence_release") != 0 &&
			strcmp(k, "advisory") != 0 && strcmp(k, "notify") != 0)
		{
			fprintf(stderr, "signal_client: unknown kind %s\n", k);
			return 2;
		}
		if (nkinds == MAX_KINDS)
		{
			fprintf(stderr, "signal_client: at most %d kinds\n", MAX_KINDS);
			return 2;
		}
		snprintf(path, sizeof(path), "%s.%s", prefix, k);
		kinds[nkinds] = k;
		files[nkinds] = fopen(path, "w");
		if (files[nkinds] == NULL)
			die(NULL, "cannot write a latency file");
		nkinds++;
	}
	c.holder = connect_to(conninfo);
	c.watch = connect_to(conninfo);
	c.taker = connect_to(conninfo);
	snprintf(c.watch_pid, sizeof(c.watch_pid), "%d", PQbackendPID(c.watch));
	/* Only the notify kind sends on this channel. */
	one_value(c.watch, "LISTEN bench_signal", 0, NULL);

	for (int i = 0; i < reps; i++)
	{
		for (int k = 0; k < nkinds; k++)
		{
			double		secs;

			if (strcmp(kinds[k], "notify") == 0)
				secs = sample_notify(&c);
			else if (strcmp(kinds[k], "advisory") == 0)
				secs = sample_advisory(&c);
			else
				secs = sample_fence(&c, strcmp(kinds[k], "fence_release") == 0);
			fprintf(files[k], "%.0f\n", secs * 1e6);
		}
	}
	for (int k = 0; k < nkinds; k++)
		if (fclose(files[k]) != 0)
			die(NULL, "cannot write a latency file");
	PQfinish(c.holder);
	PQfinish(c.watch);
	PQfinish(c.taker);
	free(list);
	printf("reps=%d\n", reps);
	return 0;
}
