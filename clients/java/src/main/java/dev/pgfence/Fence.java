package dev.pgfence;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Leases on one database, through a {@link DataSource} (usually a connection pool).
 *
 * <pre>{@code
 * Fence fence = new Fence(dataSource);
 * try (Lease lease = fence.acquire("job:1", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     lease.inTransaction(conn -> { ... writes that carry lease.token() ... });
 * }
 * }</pre>
 *
 * <p>Every lease is detached (owned by a generated name, not by a connection), so any pooled
 * connection can renew and release it. With fence 1.3 a lease on a free key is taken in one
 * statement on a pooled connection, which forgets it ({@code fence_forget_token}) and goes back
 * carrying no token; a connection of the lease's own, from the {@link ConnectionFactory} (by
 * default the same DataSource), is opened only to wait for a held key. One own connection of this
 * Fence, its watchdog, then sleeps in {@code fence_wait_leases_end} on every lease held for 100 ms
 * or more: the server tells a lease the moment it ends. With fence 1.2 each lease is taken on its
 * own connection, which then waits in {@code fence_wait_lease_end} for it alone. Renewals run
 * every third of the TTL through the pool, on this Fence's few daemon threads. A Fence is
 * thread-safe; make one per database and share it.
 */
public final class Fence {
    // What the server has, in one round trip. fence_forget_token has a text and a bigint form,
    // which to_regproc finds ambiguous (NULL), and to_regprocedure fails on PostgreSQL 15 when
    // fence_token is not to be found: look for the name in pg_proc.
    static final String SQL_PROBE = "SELECT to_regproc('fence_wait_leases_end') IS NOT NULL, "
        + "EXISTS (SELECT FROM pg_catalog.pg_proc WHERE proname = 'fence_forget_token' "
        + "AND pg_catalog.pg_function_is_visible(oid))";

    private final DataSource pool;
    private final ConnectionFactory own;
    private final ScheduledThreadPoolExecutor scheduler;
    private final Object dogLock = new Object();
    private boolean probed; // has the server been asked what it has? guarded by dogLock
    private boolean multi; // has it fence_wait_leases_end? guarded by dogLock
    private boolean forget; // has it fence_forget_token? guarded by dogLock
    private Watchdog dog; // guarded by dogLock

    /** Leases through {@code pool}; each lease's own connection is taken from it too. */
    public Fence(DataSource pool) {
        this(pool, ConnectionFactory.from(Objects.requireNonNull(pool, "pool")));
    }

    /**
     * Leases through {@code pool}; each lease's own connection comes from {@code ownConnections}
     * (for example {@link ConnectionFactory#fromUrl}, to reach the server past a transaction
     * pooler, or to keep the pool's connections for the work).
     */
    public Fence(DataSource pool, ConnectionFactory ownConnections) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.own = Objects.requireNonNull(ownConnections, "ownConnections");
        AtomicInteger n = new AtomicInteger();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "pgfence-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // Renewals, the watchdog's joins and cancel requests, for every lease: a few threads, as
        // a renewal stuck on the network holds one for its query timeout.
        this.scheduler = new ScheduledThreadPoolExecutor(4, threads);
        this.scheduler.setKeepAliveTime(30, TimeUnit.SECONDS);
        this.scheduler.allowCoreThreadTimeOut(true);
        this.scheduler.setRemoveOnCancelPolicy(true);
    }

    /**
     * Takes the lease on {@code key}, waiting up to {@code wait} for it.
     *
     * @param ttl how long the lease lasts without a renewal (it is renewed every third of it)
     * @param wait how long to wait for it: {@link Duration#ZERO} tries once
     * @throws LeaseUnavailableException if it was not granted in time
     */
    public Lease acquire(String key, Duration ttl, Duration wait) throws SQLException {
        Objects.requireNonNull(wait, "wait (Duration.ZERO tries once; acquire(key, ttl) waits forever)");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative: " + wait);
        }
        return Lease.acquire(this, key, ttl, wait);
    }

    /** Takes the lease on {@code key}, waiting as long as it takes (lock_timeout too is lifted). */
    public Lease acquire(String key, Duration ttl) throws SQLException {
        return Lease.acquire(this, key, ttl, null);
    }

    /** The same lease as the key's decimal text ({@code 42} is {@code "42"}). */
    public Lease acquire(long key, Duration ttl, Duration wait) throws SQLException {
        return acquire(Long.toString(key), ttl, wait);
    }

    /** The same lease as the key's decimal text, waiting as long as it takes. */
    public Lease acquire(long key, Duration ttl) throws SQLException {
        return acquire(Long.toString(key), ttl);
    }

    /** The pool the work, the renewals and the releases use. */
    public DataSource dataSource() {
        return pool;
    }

    ConnectionFactory ownConnections() {
        return own;
    }

    /**
     * Asks the server once, on {@code c}, whether it has fence_wait_leases_end and
     * fence_forget_token (both came with fence 1.3). A failure leaves it to be asked again.
     */
    private void probe(Connection c) throws SQLException {
        synchronized (dogLock) {
            if (probed) {
                return;
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(SQL_PROBE)) {
                rs.next();
                multi = rs.getBoolean(1);
                forget = rs.getBoolean(2);
            }
            probed = true;
        }
    }

    /**
     * Has the server fence_forget_token, so that a lease can be taken on a pooled connection
     * that then carries nothing? Asked once, on {@code c}.
     */
    boolean canForget(Connection c) throws SQLException {
        probe(c);
        return canForget();
    }

    /** Has the server fence_forget_token, as far as it has been asked? */
    boolean canForget() {
        synchronized (dogLock) {
            return probed && forget;
        }
    }

    /** Not yet asked, or the server has fence_forget_token: worth a pooled connection to try. */
    boolean mayForget() {
        synchronized (dogLock) {
            return !probed || forget;
        }
    }

    /** The watchdog of all this fence's leases, if the server has fence_wait_leases_end; else null. */
    Watchdog watchdog() {
        synchronized (dogLock) {
            if (!probed || !multi) {
                return null;
            }
            if (dog == null) {
                dog = new Watchdog(this);
            }
            return dog;
        }
    }

    /**
     * As with a server of fence 1.2 (neither fence_wait_leases_end nor fence_forget_token): each
     * lease is taken and watched on a connection of its own. For the tests.
     */
    void watchEachLeaseAlone() {
        synchronized (dogLock) {
            probed = true;
            multi = false;
            forget = false;
        }
    }

    ScheduledThreadPoolExecutor scheduler() {
        return scheduler;
    }
}
