/*-------------------------------------------------------------------------
 *
 * bench_util.h
 *		What make bench's C clients share: the clock, the random keys, the
 *		latency samples and the timed run of threads (bench_client.c,
 *		coord_client.c, signal_client.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: a key at random, cheaply, per thread. */
static inline uint64_t
next_rand(uint64_t *state)
{
	uint64_t	x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Latency samples in microseconds, a growing array per thread. */
typedef struct
{
	uint32_t   *us;
	size_t		n;
	size_t		cap;
} Latencies;

static inline void
latency_add(Latencies *l, double secs)
{
	double		us = secs * 1e6;

	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 65536;
		l->us = realloc(l->us, l->cap * sizeof(uint32_t));
		if (l->us == NULL)
		{
			fprintf(stderr, "bench: out of memory\n");
			exit(1);
		}
	}
	l->us[l->n++] = us < 0 ? 0 : us > 4e9 ? 4000000000U : (uint32_t) (us + 0.5);
}

/* Append the samples to f, one a line. */
static inline void
latency_write(FILE *f, const Latencies *l)
{
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%u\n", l->us[i]);
}

/*
 * What one thread of a timed run counts.  It is the first member of the
 * thread's struct, so that run_threads() can add the threads' up.
 */
typedef struct
{
	uint64_t	jobs;
	uint64_t	refused;
	uint64_t	lost;
	int			failed;			/* a connection failed: the run is void */
	Latencies	lat;
} Tally;

/*
 * A timed run of N threads: fn runs on each thread's struct (the first at
 * FIRST, each SIZE bytes long, a Tally first in it).  Each thread waits on
 * READY (for N + 1) before its first job, so that connections are all made
 * before the clock starts; *DEADLINE, when the threads stop, is set SECONDS
 * ahead just before they are let go.  Returns the sum of the threads'
 * tallies once all have ended, its lat empty (finish_run() writes each
 * thread's own).
 */
static inline Tally
run_threads(void *(*fn) (void *), void *first, int n, size_t size,
			pthread_barrier_t *ready, double *deadline, double seconds)
{
	pthread_t  *tids = calloc(n, sizeof(pthread_t));
	Tally		sum = {0};

	pthread_barrier_init(ready, NULL, n + 1);
	for (int i = 0; i < n; i++)
		pthread_create(&tids[i], NULL, fn, (char *) first + i * size);
	*deadline = now_s() + seconds;
	pthread_barrier_wait(ready);
	for (int i = 0; i < n; i++)
	{
		const Tally *t = (const Tally *) ((const char *) first + i * size);

		pthread_join(tids[i], NULL);
		sum.jobs += t->jobs;
		sum.refused += t->refused;
		sum.lost += t->lost;
		sum.failed |= t->failed;
	}
	free(tids);
	return sum;
}

/*
 * The end of a timed run: every thread's samples to LATFILE (unless NULL),
 * one a line, and the line the bench reads:
 *	rate=<per second> jobs=N refused=N lost=N seconds=S
 * The samples are the Latencies at FIRST and every STRIDE bytes after it, N
 * of them (one in each thread's struct).  Returns the exit code.
 */
static inline int
finish_run(const char *prog, const char *latfile, const Latencies *first, int n, size_t stride,
		   uint64_t jobs, uint64_t refused, uint64_t lost, double seconds)
{
	if (latfile)
	{
		FILE	   *f = fopen(latfile, "w");

		if (f == NULL)
		{
			fprintf(stderr, "%s: cannot write %s: %s\n", prog, latfile, strerror(errno));
			return 1;
		}
		for (int i = 0; i < n; i++)
			latency_write(f, (const Latencies *) ((const char *) first + i * stride));
		if (fclose(f) != 0)
		{
			fprintf(stderr, "%s: cannot write %s\n", prog, latfile);
			return 1;
		}
	}
	printf("rate=%.1f jobs=%llu refused=%llu lost=%llu seconds=%.3f\n",
		   jobs / seconds, (unsigned long long) jobs,
		   (unsigned long long) refused, (unsigned long long) lost, seconds);
	return 0;
}

#endif							/* BENCH_UTIL_H */
