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
 * connection can renew and release it. Each lease holds one connection of its own, from the
 * {@link ConnectionFactory} (by default the same DataSource), that takes it and then waits in
 * {@code fence_wait_lease_end}: the server tells the lease the moment it ends. Renewals run every
 * third of the TTL through the pool, on daemon threads of this Fence. A Fence is thread-safe;
 * make one per database and share it.
 */
public final class Fence {
    private final DataSource pool;
    private final ConnectionFactory own;
    private final ScheduledThreadPoolExecutor scheduler;
    private final Object dogLock = new Object();
    private Boolean multi; // has the server fence_wait_leases_end? null: not asked yet; guarded by dogLock
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
            Thread t = new Thread(r, "pgfence-renew-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // A few threads: a renewal stuck on the network holds one for its query timeout.
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
     * The watchdog of all this fence's leases, if the server has fence_wait_leases_end (asked
     * once, on {@code c}); else null.
     */
    Watchdog watchdog(Connection c) {
        synchronized (dogLock) {
            if (multi == null) {
                try (Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery(Watchdog.SQL_HAS_WAIT_LEASES_END)) {
                    multi = rs.next() && rs.getBoolean(1);
                } catch (SQLException e) {
                    return null; // asked again with the next lease
                }
            }
            if (!multi) {
                return null;
            }
            if (dog == null) {
                dog = new Watchdog(this);
            }
            return dog;
        }
    }

    /** As with a server without fence_wait_leases_end (fence 1.2): for the tests. */
    void watchEachLeaseAlone() {
        synchronized (dogLock) {
            multi = false;
        }
    }

    ScheduledThreadPoolExecutor scheduler() {
        return scheduler;
    }
}
