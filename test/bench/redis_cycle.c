/*-------------------------------------------------------------------------
 *
 * redis_cycle.c
 *		The Redis contender of make bench: the seeds' lock cycle, timed.
 *
 * One cycle is what the seeds' workers do around a job, one round trip per
 * command, each command waiting for the answer to the one before (the
 * values depend on each other, so the cycle cannot be pipelined):
 *
 *	SET lock:K <owner> NX PX 30000		take the lock (nil: someone holds it)
 *	INCR lock:K:fence					the fencing token, a second round trip
 *	EVALSHA <compare-and-delete> 1 lock:K <owner>
 *										release only if still ours
 *
 * K is drawn at random from 1..KEYS for every cycle.  A refused SET ends the
 * cycle there (and is counted as a cycle, as pgbench counts a refused
 * fence_try_lease).  The client is built like pgbench: THREADS threads, each
 * driving its share of the CLIENTS connections from one poll() loop, so the
 * two sides pay the same client overhead.  Connections are made first; the
 * clock starts when all are ready, so the rate excludes connection time, as
 * pgbench's "tps ... (without initial connection time)" does.
 *
 * Usage: redis_cycle HOST PORT CLIENTS THREADS SECONDS KEYS
 * Prints one line: rate=<cycles/s> cycles=N refused=N lost=N seconds=S, where
 * cycles are those finished within SECONDS of the start.
 * ("lost": the compare-and-delete found another owner; 0 unless a cycle
 * outlived its 30 s expiry).
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

#include <hiredis/hiredis.h>

#define TTL_MS 30000

/* Compare-and-delete: the usual safe release of a Redis lock. */
static const char *release_script =
"if redis.call('get', KEYS[1]) == ARGV[1] then "
"return redis.call('del', KEYS[1]) else return 0 end";

typedef enum
{
	STEP_SET,
	STEP_INCR,
	STEP_RELEASE
} Step;

typedef struct
{
	redisContext *ctx;			/* connected socket (TCP_NODELAY set by hiredis) */
	redisReader *reader;		/* our own reader: replies come via poll() */
	Step		step;
	long		key;
	char		owner[64];
	unsigned long seq;
} Conn;

typedef struct
{
	int			id;
	int			nconns;
	Conn	   *conns;
	uint64_t	rng;
	uint64_t	cycles;
	uint64_t	refused;
	uint64_t	lost;
	int			failed;
} Worker;

static const char *host;
static int	port;
static int	nclients;
static int	nthreads;
static double seconds;
static long nkeys;
static char sha[64];
static double deadline;
static pthread_barrier_t ready;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t
next_rand(uint64_t *state)
{
	/* xorshift64* */
	uint64_t	x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

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

static int
start_cycle(Worker *w, Conn *c)
{
	c->key = (long) (next_rand(&w->rng) % (uint64_t) nkeys) + 1;
	snprintf(c->owner, sizeof(c->owner), "w%d-%lu", w->id, c->seq++);
	c->step = STEP_SET;
	return send_command(c, "SET lock:%ld %s NX PX %d", c->key, c->owner, TTL_MS);
}

/* Handle one reply; returns -1 on a protocol or server error. */
static int
on_reply(Worker *w, Conn *c, redisReply *r, int *done)
{
	*done = 0;
	if (r->type == REDIS_REPLY_ERROR)
	{
		fprintf(stderr, "redis_cycle: server error: %s\n", r->str);
		return -1;
	}
	switch (c->step)
	{
		case STEP_SET:
			if (r->type == REDIS_REPLY_NIL)
			{
				w->refused++;
				*done = 1;
				return 0;
			}
			c->step = STEP_INCR;
			return send_command(c, "INCR lock:%ld:fence", c->key);
		case STEP_INCR:
			if (r->type != REDIS_REPLY_INTEGER)
				return -1;
			c->step = STEP_RELEASE;
			return send_command(c, "EVALSHA %s 1 lock:%ld %s", sha, c->key, c->owner);
		case STEP_RELEASE:
			if (r->type != REDIS_REPLY_INTEGER)
				return -1;
			if (r->integer != 1)
				w->lost++;
			*done = 1;
			return 0;
	}
	return -1;
}

static void *
worker_main(void *arg)
{
	Worker	   *w = arg;
	struct pollfd *fds = calloc(w->nconns, sizeof(struct pollfd));
	int			active = w->nconns;
	char		buf[16384];

	for (int i = 0; i < w->nconns; i++)
	{
		fds[i].fd = w->conns[i].ctx->fd;
		fds[i].events = POLLIN;
	}

	pthread_barrier_wait(&ready);

	for (int i = 0; i < w->nconns; i++)
		if (start_cycle(w, &w->conns[i]) < 0)
			goto fail;

	while (active > 0)
	{
		int			n = poll(fds, w->nconns, 1000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		for (int i = 0; i < w->nconns; i++)
		{
			Conn	   *c = &w->conns[i];
			ssize_t		got;
			void	   *reply;

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			got = read(fds[i].fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				goto fail;
			if (redisReaderFeed(c->reader, buf, got) != REDIS_OK)
				goto fail;
			while (fds[i].fd >= 0)
			{
				int			done;
				int			rc;

				if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
					goto fail;
				if (reply == NULL)
					break;
				rc = on_reply(w, c, reply, &done);
				freeReplyObject(reply);
				if (rc < 0)
					goto fail;
				if (!done)
					continue;
				if (now_s() >= deadline)
				{
					/* time is up: this connection finishes here */
					fds[i].fd = -1;
					active--;
				}
				else
				{
					w->cycles++;
					if (start_cycle(w, c) < 0)
						goto fail;
				}
			}
		}
	}
	free(fds);
	return NULL;

fail:
	w->failed = 1;
	free(fds);
	return NULL;
}

int
main(int argc, char **argv)
{
	redisContext *setup;
	redisReply *r;
	Worker	   *workers;
	pthread_t  *tids;
	uint64_t	cycles = 0,
				refused = 0,
				lost = 0;
	double		start;
	int			failed = 0;

	if (argc != 7)
	{
		fprintf(stderr, "usage: %s HOST PORT CLIENTS THREADS SECONDS KEYS\n", argv[0]);
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	nclients = atoi(argv[3]);
	nthreads = atoi(argv[4]);
	seconds = atof(argv[5]);
	nkeys = atol(argv[6]);
	if (nclients < 1 || nthreads < 1 || seconds <= 0 || nkeys < 1)
	{
		fprintf(stderr, "redis_cycle: bad arguments\n");
		return 2;
	}
	if (nthreads > nclients)
		nthreads = nclients;

	setup = redisConnect(host, port);
	if (setup == NULL || setup->err)
	{
		fprintf(stderr, "redis_cycle: cannot connect to %s:%d: %s\n", host, port,
				setup ? setup->errstr : "out of memory");
		return 1;
	}
	r = redisCommand(setup, "SCRIPT LOAD %s", release_script);
	if (r == NULL || r->type != REDIS_REPLY_STRING || r->len >= (int) sizeof(sha))
	{
		fprintf(stderr, "redis_cycle: SCRIPT LOAD failed\n");
		return 1;
	}
	memcpy(sha, r->str, r->len);
	sha[r->len] = '\0';
	freeReplyObject(r);
	redisFree(setup);

	workers = calloc(nthreads, sizeof(Worker));
	tids = calloc(nthreads, sizeof(pthread_t));
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

			c->ctx = redisConnect(host, port);
			if (c->ctx == NULL || c->ctx->err)
			{
				fprintf(stderr, "redis_cycle: cannot connect: %s\n",
						c->ctx ? c->ctx->errstr : "out of memory");
				return 1;
			}
			c->reader = redisReaderCreate();
			/* distinct owners across connections of one thread too */
			c->seq = (unsigned long) i << 40;
		}
	}

	pthread_barrier_init(&ready, NULL, nthreads + 1);
	for (int t = 0; t < nthreads; t++)
		pthread_create(&tids[t], NULL, worker_main, &workers[t]);
	start = now_s();
	deadline = start + seconds;
	pthread_barrier_wait(&ready);
	for (int t = 0; t < nthreads; t++)
	{
		pthread_join(tids[t], NULL);
		cycles += workers[t].cycles;
		refused += workers[t].refused;
		lost += workers[t].lost;
		failed |= workers[t].failed;
	}
	if (failed)
	{
		fprintf(stderr, "redis_cycle: a connection failed\n");
		return 1;
	}
	printf("rate=%.1f cycles=%llu refused=%llu lost=%llu seconds=%.3f\n",
		   cycles / seconds, (unsigned long long) cycles,
		   (unsigned long long) refused, (unsigned long long) lost, seconds);
	return 0;
}
