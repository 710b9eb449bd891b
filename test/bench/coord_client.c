/*-------------------------------------------------------------------------
 *
 * coord_client.c
 *		The job of make bench under a lock from a coordination service:
 *		etcd (its v3 API as JSON over HTTP, served by its gRPC gateway) and
 *		ZooKeeper (its C client), each around the same PostgreSQL write as
 *		the Redis job of bench_client.c.
 *
 * Modes:
 *
 *	etcd-job HOST PORT CONNINFO CLIENTS SECONDS KEYS LATFILE
 *		each client grants itself one lease (60 s, longer than any run) at
 *		the start and holds it for the whole run, as etcd's own
 *		concurrency.Session does for its mutexes; then, per job:
 *			POST /v3/kv/txn		if create_revision(lock/K) == 0, put
 *								lock/K with the lease (not created: refused);
 *								the token is the revision of that put
 *			UPDATE job_etcd SET v = v + 1, fence = $t
 *			 WHERE id = $k AND fence <= $t		(PostgreSQL, autocommit)
 *			POST /v3/kv/txn		if create_revision(lock/K) == token, delete
 *								it (the release, by token: a lock that was
 *								lost and taken by another is not deleted)
 *		3 round trips, 2 systems.  HTTP/1.1 keep-alive on one socket.
 *
 *	zk-job HOSTS CONNINFO CLIENTS SECONDS KEYS LATFILE
 *		the recipe of Apache Curator's InterProcessMutex, try form:
 *			create /fence-bench/K/lock- EPHEMERAL_SEQUENTIAL (zoo_create2;
 *				the row's lock node /fence-bench/K is made on first use,
 *				persistent, as Curator makes its parents when missing)
 *			getChildren /fence-bench/K: the lowest sequence holds the lock;
 *				not the lowest: delete ours and give up (refused)
 *			UPDATE job_zk ... fence <= $t, $t the node's czxid
 *			delete the node
 *		4 round trips, 2 systems.
 *
 *	zk-setup HOSTS KEYS
 *		makes the lock nodes /fence-bench/1 .. /fence-bench/KEYS (persistent,
 *		asynchronous creates, many in flight), so that no timed job pays
 *		for making its row's: the recipe in its best form, with every lock
 *		node in place, as in a system that has run a while with persistent
 *		lock nodes.
 *
 * One thread a client, each with its own connections (ZooKeeper's
 * multithreaded client adds its I/O and completion threads to each), every
 * call synchronous.  K is drawn at random from 1..KEYS; a refused take ends
 * the job there and still counts, as in bench_client.c; an UPDATE that
 * changes no row, or a release that finds the lock gone, is "lost".
 * Connections are made first; the clock starts when all are ready.
 *
 * Prints one line: rate=<per second> jobs=N refused=N lost=N seconds=S, and
 * writes one latency a line, in microseconds, to LATFILE: per job, from its
 * first request to the answer of its release.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include "bench_util.h"
#ifdef HAVE_ZOOKEEPER
#define THREADED				/* the multithreaded client's synchronous calls */
#include <zookeeper/zookeeper.h>
#endif

#define LEASE_TTL_S 60
#define ZK_SESSION_MS 30000
#define ZK_ROOT "/fence-bench"

typedef enum
{
	MODE_ETCD,
	MODE_ZK
} Mode;

typedef struct
{
	Tally		tally;			/* first: run_threads() adds it up */
	int			id;
	uint64_t	rng;
	PGconn	   *pg;
	/* etcd */
	int			fd;
	char		lease[32];
	char	   *buf;			/* response buffer */
	size_t		bufcap;
#ifdef HAVE_ZOOKEEPER
	zhandle_t  *zh;
#endif
} Client;

static Mode mode;
static const char *host;
static int	port;
static const char *conninfo;
static int	nclients;
static double seconds;
static long nkeys;
static double deadline;
static pthread_barrier_t ready;

/* ---------------------------------------------------------------- PostgreSQL */

static PGconn *
pg_connect(const char *table)
{
	PGconn	   *pg = PQconnectdb(conninfo);
	PGresult   *r;
	char		sql[256];

	if (PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "coord_client: cannot connect to PostgreSQL: %s", PQerrorMessage(pg));
		exit(1);
	}
	snprintf(sql, sizeof(sql),
			 "UPDATE %s SET v = v + 1, fence = $1 WHERE id = $2 AND fence <= $1", table);
	r = PQprepare(pg, "job", sql, 2, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "coord_client: cannot prepare the job: %s", PQerrorMessage(pg));
		exit(1);
	}
	PQclear(r);
	return pg;
}

/* The write with the token: 1 if it changed the row, 0 if not, -1 on error. */
static int
pg_write(Client *c, long key, long long token)
{
	char		t[32],
				k[32];
	const char *values[2] = {t, k};
	PGresult   *r;
	int			rc;

	snprintf(t, sizeof(t), "%lld", token);
	snprintf(k, sizeof(k), "%ld", key);
	r = PQexecPrepared(c->pg, "job", 2, values, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "coord_client: PostgreSQL error: %s", PQresultErrorMessage(r));
		PQclear(r);
		return -1;
	}
	rc = strcmp(PQcmdTuples(r), "1") == 0;
	PQclear(r);
	return rc;
}

/* ---------------------------------------------------------------- etcd */

static void
base64(const char *in, char *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t		n = strlen(in),
				i;
	const unsigned char *s = (const unsigned char *) in;

	for (i = 0; i + 2 < n; i += 3)
	{
		*out++ = tab[s[i] >> 2];
		*out++ = tab[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*out++ = tab[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)];
		*out++ = tab[s[i + 2] & 63];
	}
	if (n - i == 1)
	{
		*out++ = tab[s[i] >> 2];
		*out++ = tab[(s[i] & 3) << 4];
		*out++ = '=';
		*out++ = '=';
	}
	else if (n - i == 2)
	{
		*out++ = tab[s[i] >> 2];
		*out++ = tab[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*out++ = tab[(s[i + 1] & 15) << 2];
		*out++ = '=';
	}
	*out = '\0';
}

static int
etcd_connect(void)
{
	struct sockaddr_in a;
	int			fd = socket(AF_INET, SOCK_STREAM, 0);
	int			one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
		connect(fd, (struct sockaddr *) &a, sizeof(a)) != 0)
	{
		fprintf(stderr, "coord_client: cannot connect to etcd at %s:%d: %s\n", host, port, strerror(errno));
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Read more of the response into c->buf from *len on; -1 at EOF or error. */
static int
read_more(Client *c, size_t *len)
{
	ssize_t		n;

	if (*len + 4096 + 1 > c->bufcap)
	{
		c->bufcap = c->bufcap ? c->bufcap * 2 : 16384;
		c->buf = realloc(c->buf, c->bufcap);
		if (c->buf == NULL)
			return -1;
	}
	do
		n = read(c->fd, c->buf + *len, c->bufcap - *len - 1);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	*len += n;
	c->buf[*len] = '\0';
	return 0;
}

/*
 * POST a JSON body on the keep-alive connection; returns the response body
 * (in c->buf, NUL-terminated; valid until the next call) or NULL on an
 * error or a status other than 200.  Handles Content-Length and chunked
 * bodies (the gateway sends the first; Go's server may send the second).
 */
static char *
etcd_post(Client *c, const char *path, const char *body)
{
	char		req[2048];
	int			n = snprintf(req, sizeof(req),
							 "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
							 "Content-Length: %zu\r\n\r\n%s", path, host, port, strlen(body), body);
	size_t		len = 0,
				off = 0;
	char	   *hdr_end,
			   *p;
	long		clen = -1;

	if (n <= 0 || n >= (int) sizeof(req))
		return NULL;
	if (c->buf)
		c->buf[0] = '\0';		/* the last response is read and done with */
	while (off < (size_t) n)
	{
		ssize_t		w = write(c->fd, req + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return NULL;
		off += w;
	}
	while ((c->buf == NULL || (hdr_end = strstr(c->buf, "\r\n\r\n")) == NULL))
		if (read_more(c, &len) < 0)
			return NULL;
	if (strncmp(c->buf, "HTTP/1.1 200", 12) != 0)
	{
		fprintf(stderr, "coord_client: etcd %s: %.200s\n", path, c->buf);
		return NULL;
	}
	*hdr_end = '\0';
	if ((p = strcasestr(c->buf, "\r\nContent-Length:")) != NULL)
		clen = atol(p + 17);
	else if (strcasestr(c->buf, "\r\nTransfer-Encoding: chunked") == NULL)
		return NULL;
	*hdr_end = '\r';
	off = hdr_end + 4 - c->buf;
	if (clen >= 0)
	{
		while (len < off + clen)
			if (read_more(c, &len) < 0)
				return NULL;
		/* one request at a time: nothing can follow this response */
		memmove(c->buf, c->buf + off, clen);
		c->buf[clen] = '\0';
		return c->buf;
	}
	else
	{
		/* chunked: join the chunks in place, up to the last (empty) one */
		size_t		out = 0;

		for (;;)
		{
			char	   *eol;
			long		sz;

			while ((eol = strstr(c->buf + off, "\r\n")) == NULL)
				if (read_more(c, &len) < 0)
					return NULL;
			sz = strtol(c->buf + off, NULL, 16);
			off = eol + 2 - c->buf;
			while (len < off + sz + 2)
				if (read_more(c, &len) < 0)
					return NULL;
			if (sz == 0)
				break;
			memmove(c->buf + out, c->buf + off, sz);
			out += sz;
			off += sz + 2;
		}
		c->buf[out] = '\0';
		return c->buf;
	}
}

/* The value of the first "name":"digits" in a JSON text, or -1. */
static long long
json_int(const char *json, const char *name)
{
	char		pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":\"", name);
	p = strstr(json, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

static int
etcd_setup(Client *c)
{
	char	   *r;
	char		body[64];

	c->fd = etcd_connect();
	snprintf(body, sizeof(body), "{\"TTL\":\"%d\"}", LEASE_TTL_S);
	r = etcd_post(c, "/v3/lease/grant", body);
	if (r == NULL || json_int(r, "ID") <= 0)
	{
		fprintf(stderr, "coord_client: etcd lease grant failed: %s\n", r ? r : "(no answer)");
		return -1;
	}
	snprintf(c->lease, sizeof(c->lease), "%lld", json_int(r, "ID"));
	return 0;
}

static int
etcd_job(Client *c, long key)
{
	char		k[32],
				k64[64],
				v64[64],
				body[512];
	char	   *r;
	long long	token;
	int			w;

	snprintf(k, sizeof(k), "lock/%ld", key);
	base64(k, k64);
	base64(c->lease, v64);
	snprintf(body, sizeof(body),
			 "{\"compare\":[{\"key\":\"%s\",\"result\":\"EQUAL\",\"target\":\"CREATE\",\"create_revision\":\"0\"}],"
			 "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%s\"}}]}",
			 k64, k64, v64, c->lease);
	if ((r = etcd_post(c, "/v3/kv/txn", body)) == NULL)
		return -1;
	if (strstr(r, "\"succeeded\":true") == NULL)
	{
		c->tally.refused++;
		return 0;
	}
	/* the header's revision: the transaction's, so the put's */
	if ((token = json_int(r, "revision")) <= 0)
		return -1;
	if ((w = pg_write(c, key, token)) < 0)
		return -1;
	if (w == 0)
		c->tally.lost++;
	snprintf(body, sizeof(body),
			 "{\"compare\":[{\"key\":\"%s\",\"result\":\"EQUAL\",\"target\":\"CREATE\",\"create_revision\":\"%lld\"}],"
			 "\"success\":[{\"request_delete_range\":{\"key\":\"%s\"}}]}",
			 k64, token, k64);
	if ((r = etcd_post(c, "/v3/kv/txn", body)) == NULL)
		return -1;
	if (strstr(r, "\"succeeded\":true") == NULL)
		c->tally.lost++;
	return 0;
}

/* ---------------------------------------------------------------- ZooKeeper */

#ifdef HAVE_ZOOKEEPER
static zhandle_t *
zk_connect(void)
{
	zhandle_t  *zh = zookeeper_init(host, NULL, ZK_SESSION_MS, NULL, NULL, 0);

	for (int i = 0; zh && i < 1000 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
		usleep(10000);
	if (zh == NULL || zoo_state(zh) != ZOO_CONNECTED_STATE)
	{
		fprintf(stderr, "coord_client: cannot connect to ZooKeeper at %s\n", host);
		exit(1);
	}
	return zh;
}

/* The sequence number at the end of a child's name. */
static long
zk_seq(const char *name)
{
	size_t		n = strlen(name);

	return n >= 10 ? atol(name + n - 10) : -1;
}

static int
zk_job(Client *c, long key)
{
	char		parent[64],
				prefix[80],
				created[128];
	struct Stat st;
	struct String_vector kids;
	const char *mine;
	long		myseq,
				low = -1;
	int			rc,
				w;

	snprintf(parent, sizeof(parent), ZK_ROOT "/%ld", key);
	snprintf(prefix, sizeof(prefix), "%s/lock-", parent);
	rc = zoo_create2(c->zh, prefix, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
					 created, sizeof(created), &st);
	if (rc == ZNONODE)
	{
		/* the row's lock node, on its first use */
		rc = zoo_create(c->zh, parent, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
		if (rc != ZOK && rc != ZNODEEXISTS)
			goto fail;
		rc = zoo_create2(c->zh, prefix, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
						 created, sizeof(created), &st);
	}
	if (rc != ZOK)
		goto fail;
	mine = strrchr(created, '/') + 1;
	myseq = zk_seq(mine);
	rc = zoo_get_children(c->zh, parent, 0, &kids);
	if (rc != ZOK)
		goto fail;
	for (int i = 0; i < kids.count; i++)
	{
		long		s = zk_seq(kids.data[i]);

		if (s >= 0 && (low < 0 || s < low))
			low = s;
	}
	deallocate_String_vector(&kids);
	if (low != myseq)
	{
		c->tally.refused++;
		rc = zoo_delete(c->zh, created, -1);
		return rc == ZOK ? 0 : -1;
	}
	if ((w = pg_write(c, key, (long long) st.czxid)) < 0)
		return -1;
	if (w == 0)
		c->tally.lost++;
	rc = zoo_delete(c->zh, created, -1);
	if (rc == ZNONODE)
		c->tally.lost++;
	else if (rc != ZOK)
		goto fail;
	return 0;

fail:
	fprintf(stderr, "coord_client: ZooKeeper: %s\n", zerror(rc));
	return -1;
}

/* Make the lock nodes of KEYS rows, up to 1,000 creates in flight. */
static volatile int zk_in_flight;
static volatile int zk_setup_failed;
static pthread_mutex_t zk_lock = PTHREAD_MUTEX_INITIALIZER;

static void
zk_created(int rc, const char *value, const void *data)
{
	(void) value;
	(void) data;
	pthread_mutex_lock(&zk_lock);
	if (rc != ZOK && rc != ZNODEEXISTS)
		zk_setup_failed = rc;
	zk_in_flight--;
	pthread_mutex_unlock(&zk_lock);
}

static int
zk_setup(zhandle_t *zh)
{
	for (long k = 1; k <= nkeys && !zk_setup_failed; k++)
	{
		char		path[64];
		int			rc;

		while (zk_in_flight >= 1000)
			usleep(1000);
		snprintf(path, sizeof(path), ZK_ROOT "/%ld", k);
		pthread_mutex_lock(&zk_lock);
		zk_in_flight++;
		pthread_mutex_unlock(&zk_lock);
		rc = zoo_acreate(zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, zk_created, NULL);
		if (rc != ZOK)
		{
			fprintf(stderr, "coord_client: ZooKeeper: %s\n", zerror(rc));
			return -1;
		}
	}
	while (zk_in_flight > 0)
		usleep(1000);
	if (zk_setup_failed)
	{
		fprintf(stderr, "coord_client: ZooKeeper: %s\n", zerror(zk_setup_failed));
		return -1;
	}
	return 0;
}
#endif

/* ---------------------------------------------------------------- run */

static void *
client_main(void *arg)
{
	Client	   *c = arg;

	pthread_barrier_wait(&ready);
	while (now_s() < deadline)
	{
		long		key = (long) (next_rand(&c->rng) % (uint64_t) nkeys) + 1;
		double		t0 = now_s();
		int			rc;

#ifdef HAVE_ZOOKEEPER
		rc = mode == MODE_ETCD ? etcd_job(c, key) : zk_job(c, key);
#else
		rc = etcd_job(c, key);
#endif
		if (rc < 0)
		{
			c->tally.failed = 1;
			break;
		}
		if (now_s() >= deadline)
			break;				/* as in bench_client.c: a job ending late is not counted */
		c->tally.jobs++;
		latency_add(&c->tally.lat, now_s() - t0);
	}
	return NULL;
}

static void
usage(const char *argv0)
{
	fprintf(stderr,
			"usage: %s etcd-job HOST PORT CONNINFO CLIENTS SECONDS KEYS LATFILE\n"
			"       %s zk-job HOSTS CONNINFO CLIENTS SECONDS KEYS LATFILE\n"
			"       %s zk-setup HOSTS KEYS\n",
			argv0, argv0, argv0);
	exit(2);
}

int
main(int argc, char **argv)
{
	Client	   *clients;
	Tally		sum;
	const char *latfile;
	char	  **a;

	if (argc == 9 && strcmp(argv[1], "etcd-job") == 0)
	{
		mode = MODE_ETCD;
		host = argv[2];
		port = atoi(argv[3]);
		a = argv + 4;
	}
	else if (argc == 8 && strcmp(argv[1], "zk-job") == 0)
	{
		mode = MODE_ZK;
		host = argv[2];
		a = argv + 3;
	}
	else if (argc == 4 && strcmp(argv[1], "zk-setup") == 0)
	{
#ifdef HAVE_ZOOKEEPER
		zhandle_t  *zh;
		int			rc;

		host = argv[2];
		nkeys = atol(argv[3]);
		zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
		zh = zk_connect();
		rc = zoo_create(zh, ZK_ROOT, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
		if ((rc != ZOK && rc != ZNODEEXISTS) || zk_setup(zh) < 0)
			return 1;
		zookeeper_close(zh);
		printf("lock nodes: %ld\n", nkeys);
		return 0;
#else
		fprintf(stderr, "coord_client: built without the ZooKeeper C client\n");
		return 2;
#endif
	}
	else
		usage(argv[0]);
	conninfo = a[0];
	nclients = atoi(a[1]);
	seconds = atof(a[2]);
	nkeys = atol(a[3]);
	latfile = a[4];
	if (nclients < 1 || seconds <= 0 || nkeys < 1)
	{
		fprintf(stderr, "coord_client: bad arguments\n");
		return 2;
	}
#ifndef HAVE_ZOOKEEPER
	if (mode == MODE_ZK)
	{
		fprintf(stderr, "coord_client: built without the ZooKeeper C client\n");
		return 2;
	}
#else
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	if (mode == MODE_ZK)
	{
		zhandle_t  *zh = zk_connect();
		int			rc = zoo_create(zh, ZK_ROOT, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);

		if (rc != ZOK && rc != ZNODEEXISTS)
		{
			fprintf(stderr, "coord_client: cannot create " ZK_ROOT ": %s\n", zerror(rc));
			return 1;
		}
		zookeeper_close(zh);
	}
#endif

	clients = calloc(nclients, sizeof(Client));
	for (int i = 0; i < nclients; i++)
	{
		Client	   *c = &clients[i];

		c->id = i;
		c->rng = 0x9E3779B97F4A7C15ULL * (uint64_t) (i + 1) ^ (uint64_t) getpid();
		c->pg = pg_connect(mode == MODE_ETCD ? "job_etcd" : "job_zk");
		if (mode == MODE_ETCD && etcd_setup(c) < 0)
			return 1;
#ifdef HAVE_ZOOKEEPER
		if (mode == MODE_ZK)
			c->zh = zk_connect();
#endif
	}

	sum = run_threads(client_main, clients, nclients, sizeof(Client), &ready, &deadline, seconds);
	if (sum.failed)
	{
		fprintf(stderr, "coord_client: a client failed\n");
		return 1;
	}
	/* end the clients' sessions: their ephemeral nodes and leases go now */
	for (int i = 0; i < nclients; i++)
	{
		Client	   *c = &clients[i];

		if (mode == MODE_ETCD)
		{
			char		body[64];

			snprintf(body, sizeof(body), "{\"ID\":\"%s\"}", c->lease);
			etcd_post(c, "/v3/lease/revoke", body);
			close(c->fd);
		}
#ifdef HAVE_ZOOKEEPER
		else
			zookeeper_close(c->zh);
#endif
		PQfinish(c->pg);
	}
	return finish_run("coord_client", latfile, &clients[0].tally.lat, nclients, sizeof(Client),
					  sum.jobs, sum.refused, sum.lost, seconds);
}
