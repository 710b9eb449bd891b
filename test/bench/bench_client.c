/*-------------------------------------------------------------------------
 *
 * bench_client.c
 *		The clients of make bench that pgbench cannot play: the Redis lock
 *		around a PostgreSQL write, and the hand-off between blocked waiters.
 *
 * Modes:
 *
 *	redis-cycle HOST PORT CLIENTS THREADS SECONDS KEYS
 *		a bare Redis lock cycle, one round trip per command:
 *			SET lock:K <owner> NX PX 30000		take the lock (nil: held)
 *			INCR lock:K:fence					its fencing token
 *			EVALSHA <compare-and-delete> 1 lock:K <owner>
 *
 *	redis-job HOST PORT CONNINFO CLIENTS THREADS SECONDS KEYS LATFILE
 *		the job a worker does under a Redis lock: the same SET and INCR,
 *		then, in PostgreSQL (autocommit, prepared),
 *			UPDATE job_redis SET v = v + 1, fence = $t
 *			 WHERE id = $k AND fence <= $t
 *		then the compare-and-delete.  Each client has one Redis and one
 *		PostgreSQL connection.  An UPDATE that changes no row is counted as
 *		"lost" (its token was stale).
 *
 *	pg-job CONNINFO CLIENTS THREADS SECONDS KEYS LATFILE
 *		the job under a fence transaction lease in one round trip, with
 *		libpq's pipeline mode: BEGIN; SELECT fence_try_xact_lease(k, ttl);
 *		UPDATE job_fence SET v = v + 1 WHERE id = k AND fence_current_token()
 *		IS NOT NULL; COMMIT; then one Sync.  The same job as pgbench's
 *		job_fence_pipeline.sql, measured by the same machinery as the Redis
 *		job, so that the two tools can be compared.
 *
 *	handoff CONNINFO fence|advisory CLIENTS SECONDS LATFILE
 *		CLIENTS connections block on one key (fence_lease, or
 *		pg_advisory_lock), and each releases as soon as it is granted.
 *		A sample is the time from sending one holder's release to receiving
 *		the next holder's grant.
 *
 * In every job mode K is drawn at random from 1..KEYS for each job, a refused
 * SET ends the job there (and it still counts, as a refused take does in
 * pgbench), each command waits for the answer to the one before (the values
 * depend on each other), and the client is built like pgbench: THREADS
 * threads, each driving its share of the connections from one poll() loop
 * (handoff: one thread).  Connections are made first; the clock starts when
 * all are ready, so rates exclude connection time as pgbench's do.
 *
 * Prints one line: rate=<per second> jobs=N refused=N lost=N seconds=S, and
 * writes one latency per line, in microseconds, to LATFILE: per job from its
 * SET to the answer of its release (redis-job), from its first statement to
 * the pipeline's end (pg-job), or per hand-off.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include "bench_util.h"
#ifdef HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#define TTL_MS 30000

typedef enum
{
	MODE_REDIS_CYCLE,
	MODE_REDIS_JOB,
	MODE_PG_JOB,
	MODE_HANDOFF
} Mode;

typedef enum
{
	STEP_SET,					/* Redis: SET NX PX sent */
	STEP_INCR,					/* Redis: INCR sent */
	STEP_UPDATE,				/* PostgreSQL: UPDATE sent */
	STEP_RELEASE,				/* Redis: EVALSHA sent */
	STEP_TAKE,					/* handoff: blocking take sent */
	STEP_GIVE,					/* handoff: release sent */
	STEP_PIPELINE				/* pg-job: the whole job sent, then a Sync */
} Step;

typedef struct
{
#ifdef HAVE_HIREDIS
	redisContext *ctx;			/* connected socket (TCP_NODELAY set by hiredis) */
	redisReader *reader;		/* our own reader: replies come via poll() */
#endif
	PGconn	   *pg;
	PGresult   *res;			/* the last result of the query in flight */
	Step		step;
	long		key;
	long long	token;
	char		owner[64];
	unsigned long seq;
	double		started;		/* when this job began */
	int			done;			/* no more jobs on this connection */
} Conn;

typedef struct
{
	Tally		tally;			/* first: run_threads() adds it up */
	int			id;
	int			nconns;
	Conn	   *conns;
	uint64_t	rng;
} Worker;

static Mode mode;
static const char *host;
static int	port;
static const char *conninfo;
static int	handoff_fence;
static int	nclients;
static int	nthreads;
static double seconds;
static long nkeys;
static double deadline;
static pthread_barrier_t ready;

/* handoff: when the last holder's release was sent (one thread) */
static double released_at;

#ifdef HAVE_HIREDIS
/* Compare-and-delete: the usual safe release of a Redis lock. */
static const char *release_script =
"if redis.call('get', KEYS[1]) == ARGV[1] then "
"return redis.call('del', KEYS[1]) else return 0 end";
static char sha[64];			/* its SHA1 after SCRIPT LOAD */
#endif

/* ---------------------------------------------------------------- PostgreSQL */

static PGconn *
pg_connect(void)
{
	PGconn	   *pg = PQconnectdb(conninfo);

	if (PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "bench_client: cannot connect to PostgreSQL: %s", PQerrorMessage(pg));
		exit(1);
	}
	return pg;
}

static void
pg_prepare(PGconn *pg, const char *name, const char *sql, int nparams)
{
	PGresult   *r = PQprepare(pg, name, sql, nparams, NULL);

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "bench_client: cannot prepare %s: %s", name, PQerrorMessage(pg));
		exit(1);
	}
	PQclear(r);
}

static int
pg_send(Conn *c, const char *stmt, int nparams, const char *const *values)
{
	return PQsendQueryPrepared(c->pg, stmt, nparams, values, NULL, NULL, 0) ? 0 : -1;
}

/*
 * After input arrived: 1 and *out set once the query in flight is complete
 * (its last result; PQgetResult said NULL), 0 if more input is needed, -1
 * if the connection failed.  PQgetResult is only called when it will not
 * block.
 */
static int
pg_collect(Conn *c, PGresult **out)
{
	if (!PQconsumeInput(c->pg))
		return -1;
	for (;;)
	{
		PGresult   *r;

		if (PQisBusy(c->pg))
			return 0;
		r = PQgetResult(c->pg);
		if (r == NULL)
		{
			*out = c->res;
			c->res = NULL;
			return *out ? 1 : -1;
		}
		if (c->res)
			PQclear(c->res);
		c->res = r;
	}
}

/*
 * Pipeline mode: 1 once the Sync's result arrived and every statement
 * before it succeeded, 0 if more input is needed, -1 on an error.
 */
static int
pg_collect_pipeline(Conn *c)
{
	if (!PQconsumeInput(c->pg))
		return -1;
	while (!PQisBusy(c->pg))
	{
		PGresult   *r = PQgetResult(c->pg);
		ExecStatusType st;

		if (r == NULL)
			continue;			/* the end of one statement's results */
		st = PQresultStatus(r);
		if (st == PGRES_PIPELINE_SYNC)
		{
			PQclear(r);
			return 1;
		}
		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		{
			fprintf(stderr, "bench_client: PostgreSQL error in the pipeline: %s",
					PQresultErrorMessage(r));
			PQclear(r);
			return -1;
		}
		PQclear(r);
	}
	return 0;
}

static int
pg_failed(Conn *c, PGresult *r, ExecStatusType want)
{
	if (PQresultStatus(r) == want)
		return 0;
	fprintf(stderr, "bench_client: PostgreSQL error: %s", PQresultErrorMessage(r));
	return 1;
}

/* ---------------------------------------------------------------- Redis */

#ifdef HAVE_HIREDIS
/* Send one formatted command; it is small, so a blocking write is fine. */
static int
send_command(Conn *c, const char *fmt,...)
{
	va_list		ap;
	char	   *cmd;
	int			len;
	int			off = 0;

	va_start(ap, fmt);
	len = redisvFormatCommand(&cmd, fmt, ap);
	va_end(ap);
	if (len < 0)
		return -1;
	while (off < len)
	{
		ssize_t		n = write(c->ctx->fd, cmd + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			redisFreeCommand(cmd);
			return -1;
		}
		off += n;
	}
	redisFreeCommand(cmd);
	return 0;
}

/* Handle one Redis reply; returns -1 on a protocol or server error. */
static int
on_redis_reply(Worker *w, Conn *c, redisReply *r, int *done)
{
	*done = 0;
	if (r->type == REDIS_REPLY_ERROR)
	{
		fprintf(stderr, "bench_client: Redis error: %s\n", r->str);
		return -1;
	}
	switch (c->step)
	{
		case STEP_SET:
			if (r->type == REDIS_REPLY_NIL)
			{
				w->tally.refused++;
				*done = 1;
				return 0;
			}
			c->step = STEP_INCR;
			return send_command(c, "INCR lock:%ld:fence", c->key);
		case STEP_INCR:
			if (r->type != REDIS_REPLY_INTEGER)
				return -1;
			c->token = r->integer;
			if (mode == MODE_REDIS_JOB)
			{
				char		t[32],
							k[32];
				const char *values[2] = {t, k};

				snprintf(t, sizeof(t), "%lld", c->token);
				snprintf(k, sizeof(k), "%ld", c->key);
				c->step = STEP_UPDATE;
				return pg_send(c, "job", 2, values);
			}
			c->step = STEP_RELEASE;
			return send_command(c, "EVALSHA %s 1 lock:%ld %s", sha, c->key, c->owner);
		case STEP_RELEASE:
			if (r->type != REDIS_REPLY_INTEGER)
				return -1;
			if (r->integer != 1)
				w->tally.lost++;
			*done = 1;
			return 0;
		default:
			return -1;
	}
}
#endif

/* ---------------------------------------------------------------- jobs */

static int
start_job(Worker *w, Conn *c)
{
	c->started = now_s();
	if (mode == MODE_HANDOFF)
	{
		c->step = STEP_TAKE;
		return pg_send(c, "take", 0, NULL);
	}
	c->key = (long) (next_rand(&w->rng) % (uint64_t) nkeys) + 1;
	if (mode == MODE_PG_JOB)
	{
		char		k[32];
		const char *values[1] = {k};

		snprintf(k, sizeof(k), "%ld", c->key);
		c->step = STEP_PIPELINE;
		if (pg_send(c, "begin", 0, NULL) < 0 ||
			pg_send(c, "take", 1, values) < 0 ||
			pg_send(c, "job", 1, values) < 0 ||
			pg_send(c, "commit", 0, NULL) < 0 ||
			!PQpipelineSync(c->pg))
			return -1;
		return 0;
	}
#ifdef HAVE_HIREDIS
	snprintf(c->owner, sizeof(c->owner), "w%d-%lu", w->id, c->seq++);
	c->step = STEP_SET;
	return send_command(c, "SET lock:%ld %s NX PX %d", c->key, c->owner, TTL_MS);
#else
	return -1;
#endif
}

/* A PostgreSQL answer arrived.  Sets *done when the job is over. */
static int
on_pg_result(Worker *w, Conn *c, PGresult *r, int *done)
{
	*done = 0;
	switch (c->step)
	{
		case STEP_UPDATE:
			if (pg_failed(c, r, PGRES_COMMAND_OK))
				return -1;
			if (strcmp(PQcmdTuples(r), "1") != 0)
				w->tally.lost++;
#ifdef HAVE_HIREDIS
			c->step = STEP_RELEASE;
			return send_command(c, "EVALSHA %s 1 lock:%ld %s", sha, c->key, c->owner);
#else
			return -1;
#endif
		case STEP_TAKE:
			{
				double		t = now_s();
				char		tok[32];
				const char *values[1] = {tok};

				if (pg_failed(c, r, PGRES_TUPLES_OK))
					return -1;
				/* the first grant of the run follows no release */
				if (released_at > 0 && t < deadline)
				{
					latency_add(&w->tally.lat, t - released_at);
					w->tally.jobs++;
				}
				snprintf(tok, sizeof(tok), "%s", PQgetvalue(r, 0, 0));
				released_at = now_s();
				c->step = STEP_GIVE;
				return handoff_fence ? pg_send(c, "give", 1, values) : pg_send(c, "give", 0, NULL);
			}
		case STEP_GIVE:
			if (pg_failed(c, r, PGRES_TUPLES_OK))
				return -1;
			if (strcmp(PQgetvalue(r, 0, 0), "t") != 0)
			{
				fprintf(stderr, "bench_client: a release failed\n");
				return -1;
			}
			*done = 1;
			return 0;
		default:
			return -1;
	}
}

static void *
worker_main(void *arg)
{
	Worker	   *w = arg;
	/* two descriptors a connection: Redis at 2i, PostgreSQL at 2i+1 */
	struct pollfd *fds = calloc(2 * w->nconns, sizeof(struct pollfd));
	int			active = w->nconns;

	pthread_barrier_wait(&ready);

	for (int i = 0; i < w->nconns; i++)
		if (start_job(w, &w->conns[i]) < 0)
			goto fail;

	while (active > 0)
	{
		int			n;

		for (int i = 0; i < w->nconns; i++)
		{
			Conn	   *c = &w->conns[i];
			int			on_pg = c->step == STEP_UPDATE || c->step == STEP_TAKE ||
				c->step == STEP_GIVE || c->step == STEP_PIPELINE;

			fds[2 * i].fd = -1;
			fds[2 * i + 1].fd = -1;
			fds[2 * i].events = fds[2 * i + 1].events = POLLIN;
			if (c->done)
				continue;
			if (on_pg)
				fds[2 * i + 1].fd = PQsocket(c->pg);
#ifdef HAVE_HIREDIS
			else
				fds[2 * i].fd = c->ctx->fd;
#endif
		}
		n = poll(fds, 2 * w->nconns, 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		for (int i = 0; i < w->nconns; i++)
		{
			Conn	   *c = &w->conns[i];
			int			done = 0;

			if (c->done)
				continue;
			if (fds[2 * i + 1].fd >= 0 && (fds[2 * i + 1].revents & (POLLIN | POLLERR | POLLHUP)) &&
				c->step == STEP_PIPELINE)
			{
				int			rc = pg_collect_pipeline(c);

				if (rc < 0)
					goto fail;
				if (rc == 0)
					continue;
				done = 1;
			}
			else if (fds[2 * i + 1].fd >= 0 && (fds[2 * i + 1].revents & (POLLIN | POLLERR | POLLHUP)))
			{
				PGresult   *r;
				int			rc = pg_collect(c, &r);

				if (rc < 0)
					goto fail;
				if (rc == 0)
					continue;
				rc = on_pg_result(w, c, r, &done);
				PQclear(r);
				if (rc < 0)
					goto fail;
			}
#ifdef HAVE_HIREDIS
			else if (fds[2 * i].fd >= 0 && (fds[2 * i].revents & (POLLIN | POLLERR | POLLHUP)))
			{
				char		buf[16384];
				ssize_t		got = read(c->ctx->fd, buf, sizeof(buf));
				void	   *reply;

				if (got < 0 && errno == EINTR)
					continue;
				if (got <= 0)
					goto fail;
				if (redisReaderFeed(c->reader, buf, got) != REDIS_OK)
					goto fail;
				/* one command in flight: at most one reply */
				if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
					goto fail;
				if (reply == NULL)
					continue;
				{
					int			rc = on_redis_reply(w, c, reply, &done);

					freeReplyObject(reply);
					if (rc < 0)
						goto fail;
				}
			}
#endif
			if (!done)
				continue;
			if (now_s() >= deadline)
			{
				/* time is up: this connection finishes here */
				c->done = 1;
				active--;
				continue;
			}
			if (mode != MODE_HANDOFF)
			{
				w->tally.jobs++;
				latency_add(&w->tally.lat, now_s() - c->started);
			}
			if (start_job(w, c) < 0)
				goto fail;
		}
	}
	free(fds);
	return NULL;

fail:
	w->tally.failed = 1;
	free(fds);
	return NULL;
}

static void
usage(const char *argv0)
{
	fprintf(stderr,
			"usage: %s redis-cycle HOST PORT CLIENTS THREADS SECONDS KEYS\n"
			"       %s redis-job HOST PORT CONNINFO CLIENTS THREADS SECONDS KEYS LATFILE\n"
			"       %s pg-job CONNINFO CLIENTS THREADS SECONDS KEYS LATFILE\n"
			"       %s handoff CONNINFO fence|advisory CLIENTS SECONDS LATFILE\n",
			argv0, argv0, argv0, argv0);
	exit(2);
}

/* CLIENTS THREADS SECONDS KEYS, the same four arguments in every job mode */
static void
load_args(char **a)
{
	nclients = atoi(a[0]);
	nthreads = atoi(a[1]);
	seconds = atof(a[2]);
	nkeys = atol(a[3]);
}

int
main(int argc, char **argv)
{
	Worker	   *workers;
	Tally		sum;
	const char *latfile = NULL;

	if (argc < 2)
		usage(argv[0]);
	if (strcmp(argv[1], "redis-cycle") == 0 && argc == 8)
	{
		mode = MODE_REDIS_CYCLE;
		host = argv[2];
		port = atoi(argv[3]);
		load_args(argv + 4);
	}
	else if (strcmp(argv[1], "redis-job") == 0 && argc == 10)
	{
		mode = MODE_REDIS_JOB;
		host = argv[2];
		port = atoi(argv[3]);
		conninfo = argv[4];
		load_args(argv + 5);
		latfile = argv[9];
	}
	else if (strcmp(argv[1], "pg-job") == 0 && argc == 8)
	{
		mode = MODE_PG_JOB;
		conninfo = argv[2];
		load_args(argv + 3);
		latfile = argv[7];
	}
	else if (strcmp(argv[1], "handoff") == 0 && argc == 7)
	{
		mode = MODE_HANDOFF;
		conninfo = argv[2];
		if (strcmp(argv[3], "fence") == 0)
			handoff_fence = 1;
		else if (strcmp(argv[3], "advisory") != 0)
			usage(argv[0]);
		nclients = atoi(argv[4]);
		nthreads = 1;			/* one thread sees every grant in order */
		seconds = atof(argv[5]);
		nkeys = 1;
		latfile = argv[6];
	}
	else
		usage(argv[0]);
	if (nclients < 1 || nthreads < 1 || seconds <= 0 || nkeys < 1)
	{
		fprintf(stderr, "bench_client: bad arguments\n");
		return 2;
	}
	if (nthreads > nclients)
		nthreads = nclients;

#ifdef HAVE_HIREDIS
	if (mode == MODE_REDIS_CYCLE || mode == MODE_REDIS_JOB)
	{
		redisContext *setup = redisConnect(host, port);
		redisReply *r;

		if (setup == NULL || setup->err)
		{
			fprintf(stderr, "bench_client: cannot connect to Redis at %s:%d: %s\n", host, port,
					setup ? setup->errstr : "out of memory");
			return 1;
		}
		r = redisCommand(setup, "SCRIPT LOAD %s", release_script);
		if (r == NULL || r->type != REDIS_REPLY_STRING || r->len >= (int) sizeof(sha))
		{
			fprintf(stderr, "bench_client: SCRIPT LOAD failed\n");
			return 1;
		}
		memcpy(sha, r->str, r->len);
		sha[r->len] = '\0';
		freeReplyObject(r);
		redisFree(setup);
	}
#else
	if (mode == MODE_REDIS_CYCLE || mode == MODE_REDIS_JOB)
	{
		fprintf(stderr, "bench_client: built without hiredis: the Redis modes are not available\n");
		return 2;
	}
#endif

	workers = calloc(nthreads, sizeof(Worker));
	for (int t = 0; t < nthreads; t++)
	{
		Worker	   *w = &workers[t];

		w->id = t;
		w->nconns = nclients / nthreads + (t < nclients % nthreads ? 1 : 0);
		w->conns = calloc(w->nconns, sizeof(Conn));
		w->rng = 0x9E3779B97F4A7C15ULL * (uint64_t) (t + 1) ^ (uint64_t) getpid();
		for (int i = 0; i < w->nconns; i++)
		{
			Conn	   *c = &w->conns[i];

#ifdef HAVE_HIREDIS
			if (mode == MODE_REDIS_CYCLE || mode == MODE_REDIS_JOB)
			{
				c->ctx = redisConnect(host, port);
				if (c->ctx == NULL || c->ctx->err)
				{
					fprintf(stderr, "bench_client: cannot connect to Redis: %s\n",
							c->ctx ? c->ctx->errstr : "out of memory");
					return 1;
				}
				c->reader = redisReaderCreate();
			}
#endif
			/* distinct owners across connections of one thread too */
			c->seq = (unsigned long) i << 40;
			if (mode == MODE_REDIS_JOB)
			{
				c->pg = pg_connect();
				pg_prepare(c->pg, "job",
						   "UPDATE job_redis SET v = v + 1, fence = $1 WHERE id = $2 AND fence <= $1", 2);
			}
			else if (mode == MODE_PG_JOB)
			{
				c->pg = pg_connect();
				pg_prepare(c->pg, "begin", "BEGIN", 0);
				pg_prepare(c->pg, "take", "SELECT fence_try_xact_lease($1::bigint, '30 s')", 1);
				pg_prepare(c->pg, "job",
						   "UPDATE job_fence SET v = v + 1 WHERE id = $1 AND fence_current_token() IS NOT NULL", 1);
				pg_prepare(c->pg, "commit", "COMMIT", 0);
				if (!PQenterPipelineMode(c->pg))
				{
					fprintf(stderr, "bench_client: cannot enter pipeline mode: %s", PQerrorMessage(c->pg));
					return 1;
				}
			}
			else if (mode == MODE_HANDOFF)
			{
				c->pg = pg_connect();
				if (handoff_fence)
				{
					pg_prepare(c->pg, "take", "SELECT fence_lease(1::bigint, '30 s')", 0);
					pg_prepare(c->pg, "give", "SELECT fence_release(1::bigint, $1::fence_token)", 1);
				}
				else
				{
					pg_prepare(c->pg, "take", "SELECT pg_advisory_lock(1::bigint)", 0);
					pg_prepare(c->pg, "give", "SELECT pg_advisory_unlock(1::bigint)", 0);
				}
			}
		}
	}

	sum = run_threads(worker_main, workers, nthreads, sizeof(Worker), &ready, &deadline, seconds);
	if (sum.failed)
	{
		fprintf(stderr, "bench_client: a connection failed\n");
		return 1;
	}
	return finish_run("bench_client", latfile, &workers[0].tally.lat, nthreads, sizeof(Worker),
					  sum.jobs, sum.refused, sum.lost, seconds);
}
