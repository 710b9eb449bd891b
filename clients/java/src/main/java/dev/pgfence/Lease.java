package dev.pgfence;

import dev.pgfence.LeaseLostException.How;
import java.lang.System.Logger.Level;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A held lease, from {@link Fence#acquire} until {@link #close()}.
 *
 * <p>While it is held, it renews itself every third of its TTL (less some jitter) through the
 * pool, and a watchdog connection sleeps in {@code fence_wait_leases_end} (the fence's, for all
 * its leases, from 100 ms after the grant) or, with fence 1.2, {@code fence_wait_lease_end} (the
 * lease's own), so that the server tells it the moment the lease ends. A renewal that fails for
 * want of the network leaves the lease <em>suspended</em>, still held until the local deadline:
 * the send time of the last successful renewal (or of the grant) plus the TTL, on {@link
 * System#nanoTime()}, which cannot come after the server's expiry.
 *
 * <p>When the lease is lost, no thread is interrupted: the statements running in its
 * transactions are cancelled ({@link Statement#cancel()}), the next {@link #inTransaction} fails
 * with {@link LeaseLostException}, and {@link #lost()} completes. Whatever a paused or
 * mistaken holder still writes, the trigger on a protected table rejects.
 */
public final class Lease implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.pgfence");

    /** fence's limit on an owner name, in bytes. */
    static final int OWNER_MAX_BYTES = 48;
    /** How long one fence_wait_lease_end sleeps before it asks again (proving the connection alive). */
    static final Duration WATCHDOG_POLL = Duration.ofSeconds(30);
    /**
     * How long a lease is held before it joins the fence's watchdog. Each join costs the watchdog
     * a cancel request (a connection to the postmaster) and a new call; most leases of a job loop
     * are released well within this, and then cost it nothing. A loss in the meantime is not
     * missed: the lease joins all the same, and the call returns at once as it is no longer held.
     * Renewals stay the fallback throughout.
     */
    static final Duration WATCHDOG_JOIN = Duration.ofMillis(100);

    // Keys travel as text and tokens as bigint (fence_token takes int8 implicitly, and ::bigint
    // reads one back). A grant also returns the server's start time: a restart ends every lease,
    // which the watchdog checks when it reconnects.
    private static final String GRANTED = "SELECT t::bigint, pg_postmaster_start_time()::text FROM ";
    private static final String TRY_LEASE = "fence_try_lease(?::text, ?::interval, owner => ?::text)";
    private static final String WAIT_LEASE = "fence_lease(?::text, ?::interval, ?::interval, owner => ?::text)";
    // fence_forget_token(key, grant) (fence 1.3): the session that took it forgets the grant, so
    // that a pooled connection goes back carrying no token; the lease stays held by its owner.
    private static final String FORGET = "fence_forget_token(?::text, ";
    static final String SQL_TRY_LEASE = GRANTED + TRY_LEASE + " AS t";
    static final String SQL_LEASE = GRANTED + WAIT_LEASE + " AS t";
    static final String SQL_TRY_LEASE_FORGET = GRANTED + FORGET + TRY_LEASE + ") AS t";
    static final String SQL_LEASE_FORGET = GRANTED + FORGET + WAIT_LEASE + ") AS t";
    static final String SQL_RENEW = "SELECT fence_renew(?::text, ?::bigint, ?::interval)";
    static final String SQL_RELEASE = "SELECT fence_release(?::text, ?::bigint)";
    static final String SQL_STATUS =
        "SELECT fence_lease_status(?::text, ?::bigint), pg_postmaster_start_time()::text";
    static final String SQL_WAIT_END = "SELECT fence_wait_lease_end(?::text, ?::bigint, ?::interval)";
    static final String SQL_USE_TOKEN = "SELECT fence_use_token(?::bigint, ?::text)";
    /** The timeouts an own connection must not keep from the pool's settings, and their values. */
    static final String SQL_OWN_TIMEOUTS = "SELECT current_setting('statement_timeout'), "
        + "current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout')";
    /** Sets them (session-wide, for the watchdog's wait): to 0, and back before the connection goes. */
    static final String SQL_SET_TIMEOUTS = "SELECT set_config('statement_timeout', ?, false), "
        + "set_config('lock_timeout', ?, false), set_config('idle_in_transaction_session_timeout', ?, false)";
    // What this owner holds of the key after a grant whose answer never came back. fence_leases_of
    // (fence 1.3, as fence_forget_token is) reads that key's leases only; fence_leases, for a
    // server of fence 1.2, reads every lease of the server.
    static final String SQL_RELEASE_OWNED_OF_KEY = "SELECT fence_release(l.key, l.token) "
        + "FROM fence_leases_of(?::text) l WHERE l.owner = ?::text";
    static final String SQL_RELEASE_OWNED = "SELECT fence_release(l.key, l.token) FROM fence_leases l "
        + "WHERE l.database = current_database() AND l.key = ?::text AND l.owner = ?::text";

    /** The work of one transaction: {@code conn} carries the lease's token until it returns. */
    @FunctionalInterface
    public interface Work<T> {
        T apply(Connection conn) throws SQLException;
    }

    private final Fence fence;
    private final String key;
    private final long token;
    private final String owner;
    private final Duration ttl;
    private final String ttlText;
    private final long ttlNanos;
    private final int tryTimeoutSeconds;
    private final String serverStarted;
    private final boolean ownAutoCommit;

    private final Object lock = new Object();
    private final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    private final Set<Tx> active = ConcurrentHashMap.newKeySet();
    private volatile LeaseLostException loss;
    private volatile boolean closing;
    private volatile boolean suspended;
    private long deadline; // System.nanoTime(); guarded by lock
    private boolean closed; // guarded by lock

    private volatile Connection own;
    /** The fence's watchdog, when it watches this lease (then there is no own connection). */
    private volatile Watchdog dog;
    /** The own connection's timeouts as they came, while the watchdog has them at 0; or null. */
    private volatile Object[] ownTimeouts;
    private volatile Connection ownTimeoutsOf;
    private volatile Statement ownStatement;
    private volatile Thread watchdog;
    private volatile ScheduledFuture<?> renewTask;
    private volatile ScheduledFuture<?> deadlineTask;
    private volatile ScheduledFuture<?> joinTask;
    private boolean joined; // in the fence's watchdog set (once); guarded by lock

    private Lease(Fence fence, String key, long token, String owner, Duration ttl, String serverStarted,
                  Connection own, boolean ownAutoCommit, long sentAt) {
        this.fence = fence;
        this.key = key;
        this.token = token;
        this.owner = owner;
        this.ttl = ttl;
        this.ttlText = interval(ttl);
        this.ttlNanos = ttl.toNanos();
        this.tryTimeoutSeconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE,
            (ttlNanos / 3 + 999_999_999L) / 1_000_000_000L));
        this.serverStarted = serverStarted;
        this.own = own;
        this.ownAutoCommit = ownAutoCommit;
        this.deadline = sentAt + ttlNanos;
    }

    // ---------------------------------------------------------------- what a holder uses

    /** The lease's fencing token. */
    public long token() {
        return token;
    }

    /** The lease's key. */
    public String key() {
        return key;
    }

    /** The generated owner name the lease is detached to (within the connecting role). */
    public String owner() {
        return owner;
    }

    /** The TTL each renewal asks for. */
    public Duration ttl() {
        return ttl;
    }

    /**
     * Completes once, with the reason, when the lease ends: lost (expired, superseded, broken,
     * connection, deadline) or released by {@link #close()} (how() {@code RELEASED}). A dependent
     * stage added with a non-async method runs on a pgfence thread: keep it short. Each call
     * returns a new future (completing it yourself changes nothing here).
     */
    public CompletableFuture<LeaseLostException> lost() {
        return lost.copy();
    }

    /** True once the lease is lost or closed. */
    public boolean isLost() {
        return loss != null;
    }

    /** True while renewals fail for want of the server; the lease is held until its local deadline. */
    public boolean isSuspended() {
        return suspended && loss == null;
    }

    /** Throws {@link LeaseLostException} if the lease is lost (or closed). */
    public void check() throws LeaseLostException {
        LeaseLostException l = loss;
        if (l != null) {
            throw new LeaseLostException(key, token, l.how(), l.getCause());
        }
    }

    /**
     * Runs {@code work} in one transaction on a connection from the pool, which carries this
     * lease's token ({@code fence_use_token(token, key)} is its first statement), then commits.
     *
     * <p>The token is set for that transaction only, so the connection goes back to the pool
     * carrying none, with its autocommit as it was. The transaction is rolled back if
     * {@code work} throws, and if the lease was lost meanwhile (then {@link LeaseLostException}
     * is thrown). {@code conn} belongs to this call: do not close it, commit, roll back or change
     * its autocommit (savepoints are fine), nor keep it after returning.
     *
     * @throws LeaseLostException if the lease is lost, before or during the work
     * @throws StaleTokenException LF001, a newer holder wrote a row first
     * @throws LeaseNotHeldException LF002 (the lease is then lost too)
     * @throws TokenRequiredException LF003
     */
    public <T> T inTransaction(Work<T> work) throws SQLException {
        check();
        Connection c = fence.dataSource().getConnection();
        Tx tx = null;
        Boolean autoCommit = null;
        try {
            autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            tx = new Tx(c);
            active.add(tx);
            // Lost between check() and add(): the cancellation may have missed this one.
            check();
            query(c, SQL_USE_TOKEN, 0, token, key);
            T result = work.apply(tx.proxy);
            tx.finish();
            LeaseLostException l = loss;
            if (l != null) {
                rollbackQuietly(c);
                throw new LeaseLostException(key, token, l.how(), l.getCause());
            }
            c.commit();
            return result;
        } catch (SQLException e) {
            rollbackQuietly(c);
            throw translate(e);
        } catch (RuntimeException | Error e) {
            rollbackQuietly(c);
            throw e;
        } finally {
            if (tx != null) {
                tx.finish();
                active.remove(tx);
            }
            if (autoCommit != null) {
                try {
                    c.setAutoCommit(autoCommit);
                } catch (SQLException ignored) {
                    // The connection is broken; the pool finds out.
                }
            }
            closeQuietly(c);
        }
    }

    /**
     * Releases the lease by its token and stops its renewals and its watchdog.
     *
     * @throws LeaseLostException if the lease had been lost while held, so that a loss nobody
     *     looked at is not silent (in a try-with-resources block whose body threw, it is
     *     suppressed under that exception)
     */
    @Override
    public void close() throws LeaseLostException {
        LeaseLostException before;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            closing = true;
            before = loss;
        }
        cancelTasks();
        Watchdog d = dog;
        if (d != null) {
            d.remove(this);
        }
        // The release wakes the watchdog's fence_wait_lease_end, which returns "released".
        Boolean released = release();
        Statement s = ownStatement;
        if (s != null) {
            try {
                s.cancel();
            } catch (SQLException ignored) {
                // The connection is gone: the watchdog ends anyway.
            }
        }
        Thread w = watchdog;
        if (w != null && w != Thread.currentThread()) {
            try {
                w.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LeaseLostException end = new LeaseLostException(key, token, How.RELEASED, null);
        synchronized (lock) {
            if (loss == null) {
                loss = end;
            }
        }
        lost.complete(end);
        if (Boolean.TRUE.equals(released)) {
            LOG.log(Level.DEBUG, "released lease \"{0}\" (token {1})", key, token);
        } else if (released != null) {
            LOG.log(Level.INFO, "lease \"{0}\" (token {1}) was no longer held at its release", key, token);
        }
        if (before != null && before.how() != How.RELEASED) {
            throw new LeaseLostException(key, token, before.how(), before.getCause());
        }
    }

    @Override
    public String toString() {
        LeaseLostException l = loss;
        return "Lease[" + key + ", token " + token + (l == null ? ", held" : ", " + l.how()) + "]";
    }

    // ---------------------------------------------------------------- taking it

    static Lease acquire(Fence fence, String key, Duration ttl, Duration wait) throws SQLException {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("key must be a non-empty string");
        }
        if (ttl == null || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive: " + ttl);
        }
        String owner = generatedOwner();
        Lease lease = fence.mayForget() ? tryOnPool(fence, key, ttl, owner) : null;
        if (lease != null) {
            return lease;
        }
        if (fence.canForget() && wait != null && wait.isZero()) {
            throw new LeaseUnavailableException(key, wait, null);
        }
        return acquireOnOwn(fence, key, ttl, wait, owner);
    }

    /**
     * One try on a pooled connection, one statement: the grant, forgotten by the session that
     * took it, so that the connection goes back carrying no token and no connection is opened
     * for the lease. Null if the key is held (or the server has no fence_forget_token).
     */
    private static Lease tryOnPool(Fence fence, String key, Duration ttl, String owner) throws SQLException {
        boolean asked = false;
        boolean givenBack = false;
        long sent;
        Object[] row;
        try (Connection c = fence.dataSource().getConnection()) {
            boolean auto = c.getAutoCommit();
            if (!auto) {
                c.setAutoCommit(true);
            }
            try {
                if (!fence.canForget(c)) {
                    return null;
                }
                sent = System.nanoTime();
                asked = true;
                row = query(c, SQL_TRY_LEASE_FORGET, 0, key, key, interval(ttl), owner);
            } catch (SQLException e) {
                // A grant may have come before the failure (a cancel can stop the statement
                // between the grant and the forget): give it back on this very session if it
                // still works, so that the session forgets the token before the pool hands it on.
                if (asked && mayHaveGranted(e)) {
                    givenBack = releaseOwnedOn(c, fence, key, owner);
                }
                throw e;
            } finally {
                if (!auto) {
                    c.setAutoCommit(false);
                }
            }
        } catch (SQLException e) {
            if (e instanceof FenceException) {
                throw e;
            }
            if (asked && mayHaveGranted(e) && !givenBack) {
                releaseOwned(fence, key, owner);
            }
            throw FenceException.classify(e);
        }
        if (row[0] == null) {
            return null;
        }
        return started(new Lease(fence, key, (Long) row[0], owner, ttl, (String) row[1], null, true, sent), sent);
    }

    /** A lease just granted, started; given back if it cannot start. */
    private static Lease started(Lease lease, long sent) throws SQLException {
        lease.dog = lease.fence.watchdog();
        try {
            lease.start(sent);
        } catch (SQLException | RuntimeException e) {
            lease.abandon();
            throw e;
        }
        return lease;
    }

    /**
     * The grant on a connection of the lease's own: the wait (fence_lease, bounded by its own
     * timeout), or with fence 1.2 any grant. On fence 1.3 the session forgets it; the connection
     * is closed once the grant is made (with fence 1.2, it watches the lease until it ends).
     */
    private static Lease acquireOnOwn(Fence fence, String key, Duration ttl, Duration wait, String owner)
            throws SQLException {
        boolean forget = fence.canForget();
        Connection own = fence.ownConnections().connect();
        boolean handedOver = false;
        boolean asked = false;
        Boolean ownAutoCommit = null;
        try {
            ownAutoCommit = own.getAutoCommit();
            own.setAutoCommit(false);
            if (wait == null) {
                // Wait forever: lock_timeout would end fence_lease's wait too.
                query(own, "SET LOCAL lock_timeout = 0", 0);
            }
            // fence_lease's own timeout bounds the wait, not the pool's statement_timeout.
            query(own, "SET LOCAL statement_timeout = 0", 0);
            long sent = System.nanoTime();
            asked = true;
            String waitText = wait == null ? null : interval(wait);
            Object[] row;
            if (wait != null && wait.isZero()) {
                // Only without fence_forget_token: with it, a try is made on the pool.
                row = query(own, SQL_TRY_LEASE, 0, key, interval(ttl), owner);
            } else {
                row = forget ? query(own, SQL_LEASE_FORGET, 0, key, key, interval(ttl), waitText, owner)
                    : query(own, SQL_LEASE, 0, key, interval(ttl), waitText, owner);
            }
            own.commit();
            own.setAutoCommit(true);
            if (row[0] == null) {
                throw new LeaseUnavailableException(key, wait, null);
            }
            Lease lease = new Lease(fence, key, (Long) row[0], owner, ttl, (String) row[1], own,
                ownAutoCommit, sent);
            handedOver = true;
            return started(lease, sent);
        } catch (SQLException e) {
            if (!handedOver) {
                rollbackQuietly(own);
            }
            if (e instanceof FenceException) {
                throw e;
            }
            if (FenceException.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                throw new LeaseUnavailableException(key, wait, e);
            }
            if (asked && !handedOver && mayHaveGranted(e)) {
                releaseOwned(fence, key, owner);
            }
            throw FenceException.classify(e);
        } finally {
            if (!handedOver) {
                giveBack(own, ownAutoCommit);
            }
        }
    }

    /** After the grant: renew at once if it came after a wait, then the watchdog and the timers. */
    private void start(long sent) throws SQLException {
        if (System.nanoTime() - sent > ttlNanos / 3) {
            // When during the wait it was granted is unknown: renew now for a deadline that
            // cannot be late.
            long again = System.nanoTime();
            Connection c = own;
            Object[] row = c != null ? query(c, SQL_RENEW, tryTimeoutSeconds, key, token, ttlText)
                : withPool(p -> query(p, SQL_RENEW, tryTimeoutSeconds, key, token, ttlText));
            if (!Boolean.TRUE.equals(row[0])) {
                throw new LeaseLostException(key, token, How.EXPIRED, null);
            }
            renewed(again);
        }
        LOG.log(Level.DEBUG, "acquired lease \"{0}\", token {1}, ttl {2}, owner {3}", key, token, ttl, owner);
        if (dog != null) {
            // The fence's watchdog watches it, once it has been held a while: its own
            // connection (if it had one, for a wait) is done.
            Connection c = own;
            own = null;
            closeOwn(c);
            joinTask = fence.scheduler().schedule(this::joinWatchdog, WATCHDOG_JOIN.toNanos(),
                TimeUnit.NANOSECONDS);
        } else {
            Thread t = new Thread(this::watch, "pgfence-watchdog:" + key);
            t.setDaemon(true);
            watchdog = t;
            t.start();
        }
        scheduleRenewal(nextRenewal());
        scheduleDeadlineCheck();
    }

    /**
     * Joins the fence's watchdog set, unless the lease ended first. Under the lease's lock, so
     * that close() either finds it joined (and takes it out) or keeps it from joining.
     */
    private void joinWatchdog() {
        synchronized (lock) {
            if (closed || closing || loss != null) {
                return;
            }
            joined = true;
            dog.add(this);
        }
    }

    /** Has the lease joined the fence's watchdog set? For the tests. */
    boolean joinedWatchdog() {
        synchronized (lock) {
            return joined;
        }
    }

    /** The grant failed after it was granted: give it back and free its connection. */
    private void abandon() {
        closing = true;
        cancelTasks();
        release();
        closeOwn(own);
    }

    // ---------------------------------------------------------------- renewing it

    private long nextRenewal() {
        return (long) (ttlNanos / 3 * ThreadLocalRandom.current().nextDouble(0.8, 1.0));
    }

    private long nextRetry() {
        long every = Math.max(Math.min(ttlNanos / 10, 1_000_000_000L), 20_000_000L);
        return (long) (every * ThreadLocalRandom.current().nextDouble(0.5, 1.0));
    }

    private void scheduleRenewal(long delayNanos) {
        if (finished()) {
            return;
        }
        renewTask = fence.scheduler().schedule(this::renewOnce, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void renewOnce() {
        if (finished()) {
            return;
        }
        long sent = System.nanoTime();
        Object[] row;
        try {
            row = withPool(c -> query(c, SQL_RENEW, tryTimeoutSeconds, key, token, ttlText));
        } catch (SQLException | RuntimeException e) {
            suspend(e);
            scheduleRenewal(nextRetry());
            return;
        }
        if (finished()) {
            return;
        }
        if (Boolean.TRUE.equals(row[0])) {
            renewed(sent);
            scheduleRenewal(nextRenewal());
        } else {
            lose(statusHow(), null);
        }
    }

    private void renewed(long sent) {
        boolean was;
        synchronized (lock) {
            deadline = Math.max(deadline, sent + ttlNanos);
            was = suspended;
            suspended = false;
        }
        if (was) {
            LOG.log(Level.INFO, "lease \"{0}\" renewed again after a suspension", key);
        }
    }

    private void suspend(Exception e) {
        long left;
        synchronized (lock) {
            if (suspended || loss != null) {
                return;
            }
            suspended = true;
            left = deadline - System.nanoTime();
        }
        LOG.log(Level.WARNING, "lease \"{0}\" suspended: renewal failed ({1}); lost in {2} ms unless a renewal succeeds",
            key, e.toString(), Math.max(left, 0) / 1_000_000);
    }

    private void scheduleDeadlineCheck() {
        long delay;
        synchronized (lock) {
            delay = deadline - System.nanoTime();
        }
        if (finished()) {
            return;
        }
        deadlineTask = fence.scheduler().schedule(this::checkDeadline, Math.max(delay, 0), TimeUnit.NANOSECONDS);
    }

    private void checkDeadline() {
        boolean passed;
        synchronized (lock) {
            passed = System.nanoTime() - deadline >= 0;
        }
        if (passed) {
            lose(How.DEADLINE, null);
        } else {
            scheduleDeadlineCheck();
        }
    }

    // ---------------------------------------------------------------- the watchdog

    /** Sleeps in fence_wait_lease_end on the lease's own connection until the lease ends. */
    private void watch() {
        Connection c = own;
        try {
            while (!finished()) {
                if (c == null) {
                    c = reconnect();
                    if (c == null) {
                        return;
                    }
                }
                if (ownTimeoutsOf != c) {
                    try {
                        liftTimeouts(c);
                    } catch (SQLException e) {
                        closeOwn(c);
                        c = null;
                        continue;
                    }
                }
                String how;
                try (PreparedStatement ps = c.prepareStatement(SQL_WAIT_END)) {
                    bind(ps, key, token, interval(WATCHDOG_POLL));
                    ps.setQueryTimeout((int) WATCHDOG_POLL.toSeconds() + 15);
                    ownStatement = ps;
                    if (finished()) {
                        return;
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        how = rs.next() ? rs.getString(1) : null;
                    }
                } catch (SQLException e) {
                    if (finished()) {
                        return;
                    }
                    LOG.log(Level.INFO, "watchdog connection of lease \"{0}\" failed ({1}); reconnecting", key, e.toString());
                    closeOwn(c);
                    c = null;
                    continue;
                } finally {
                    ownStatement = null;
                }
                if (how != null && !finished()) {
                    lose(How.fromServer(how), null);
                    return;
                }
            }
        } finally {
            closeOwn(c);
        }
    }

    /** A new own connection, once the lease is known to be still held on the same server run. */
    private Connection reconnect() {
        while (!finished()) {
            Connection c = null;
            try {
                c = fence.ownConnections().connect();
                c.setAutoCommit(true);
                Object[] row = query(c, SQL_STATUS, tryTimeoutSeconds, key, token);
                if (!serverStarted.equals(row[1])) {
                    closeOwn(c);
                    lose(How.CONNECTION, null);
                    return null;
                }
                if (!"held".equals(row[0])) {
                    closeOwn(c);
                    lose(How.fromServer((String) row[0]), null);
                    return null;
                }
                own = c;
                return c;
            } catch (SQLException | RuntimeException e) {
                closeQuietly(c);
                try {
                    TimeUnit.NANOSECONDS.sleep(nextRetry());
                } catch (InterruptedException ie) {
                    return null;
                }
            }
        }
        return null;
    }

    private void closeOwn(Connection c) {
        if (c != null && ownTimeoutsOf == c) {
            // It may go back to a pool: with the timeouts it came with.
            try {
                query(c, SQL_SET_TIMEOUTS, 0, ownTimeouts);
            } catch (SQLException ignored) {
                // Broken: closing is all that is left.
            }
            ownTimeoutsOf = null;
            ownTimeouts = null;
        }
        giveBack(c, ownAutoCommit);
    }

    /**
     * Lifts the pool's statement_timeout, lock_timeout and idle_in_transaction_session_timeout
     * on an own connection (autocommit) for the watchdog: a statement_timeout would cut every
     * wait short and make it reconnect in a loop.  closeOwn puts them back.
     */
    private void liftTimeouts(Connection c) throws SQLException {
        Object[] was = query(c, SQL_OWN_TIMEOUTS, 0);
        query(c, SQL_SET_TIMEOUTS, 0, "0", "0", "0");
        ownTimeouts = was;
        ownTimeoutsOf = c;
    }

    /** Closes an own connection with its autocommit as it came (it may go back to a pool). */
    private static void giveBack(Connection c, Boolean autoCommit) {
        if (c == null) {
            return;
        }
        try {
            if (autoCommit != null && c.getAutoCommit() != autoCommit) {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException ignored) {
            // Broken: closing is all that is left.
        }
        closeQuietly(c);
    }

    // ---------------------------------------------------------------- losing and releasing it

    private boolean finished() {
        return closing || loss != null;
    }

    /** The fence's watchdog read that the lease ended (fence_wait_leases_end's status). */
    void watchdogSays(String status) {
        lose(How.fromServer(status), null);
    }

    /** The fence's watchdog found the server restarted since the grant. */
    void watchdogLostConnection() {
        lose(How.CONNECTION, null);
    }

    /** Was the server that started at {@code started} the one that granted the lease? */
    boolean sameServer(String started) {
        return serverStarted.equals(started);
    }

    /** Declares the lease lost (once): cancels its running statements, completes lost(). */
    private void lose(How how, Throwable cause) {
        LeaseLostException e;
        synchronized (lock) {
            if (loss != null || closing) {
                return;
            }
            e = new LeaseLostException(key, token, how, cause);
            loss = e;
        }
        LOG.log(Level.WARNING, "lost lease \"{0}\" (token {1}): {2}", key, token, how);
        cancelTasks();
        for (Tx tx : active) {
            tx.cancel();
        }
        lost.complete(e);
        Statement s = ownStatement;
        if (s != null && how == How.DEADLINE) {
            // The watchdog may be stuck on a dead network; it has nothing left to wait for.
            try {
                s.cancel();
            } catch (SQLException ignored) {
                // Its connection is gone.
            }
        }
    }

    private void cancelTasks() {
        ScheduledFuture<?> r = renewTask;
        if (r != null) {
            r.cancel(false);
        }
        ScheduledFuture<?> d = deadlineTask;
        if (d != null) {
            d.cancel(false);
        }
        ScheduledFuture<?> j = joinTask;
        if (j != null) {
            j.cancel(false);
        }
    }

    /**
     * How the server says the lease ended, asked through the pool: CONNECTION if the server
     * restarted since the grant, EXPIRED if it cannot say.
     */
    private How statusHow() {
        try {
            Object[] row = withPool(c -> query(c, SQL_STATUS, tryTimeoutSeconds, key, token));
            if (!serverStarted.equals(row[1])) {
                return How.CONNECTION;
            }
            return How.fromServer((String) row[0]);
        } catch (SQLException | RuntimeException e) {
            return How.EXPIRED;
        }
    }

    /** fence_release by token, through the pool or else a connection of its own; null if neither worked. */
    private Boolean release() {
        SQLException first;
        try {
            return (Boolean) withPool(c -> query(c, SQL_RELEASE, Math.max(tryTimeoutSeconds, 5), key, token))[0];
        } catch (SQLException e) {
            first = e;
        }
        try (Connection c = fence.ownConnections().connect()) {
            c.setAutoCommit(true);
            return (Boolean) query(c, SQL_RELEASE, Math.max(tryTimeoutSeconds, 5), key, token)[0];
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "could not release lease \"{0}\" ({1}); it ends by its TTL", key, first.toString());
            return null;
        }
    }

    /**
     * What gives back this owner's grant of a key whose answer was lost: with fence_forget_token
     * (fence 1.3) the statement that reads only that key's leases; otherwise (fence 1.2, or not
     * asked yet) the one that reads every lease of the server.
     */
    static String releaseOwnedSql(Fence fence) {
        return fence.canForget() ? SQL_RELEASE_OWNED_OF_KEY : SQL_RELEASE_OWNED;
    }

    /** The same on c, the session of the grant whose answer was lost; false if c cannot run it. */
    private static boolean releaseOwnedOn(Connection c, Fence fence, String key, String owner) {
        try {
            if (c.isClosed()) {
                return false;
            }
        } catch (SQLException e) {
            return false;
        }
        try (PreparedStatement ps = c.prepareStatement(releaseOwnedSql(fence))) {
            bind(ps, key, owner);
            ps.setQueryTimeout(10);
            ps.execute();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    static void releaseOwned(Fence fence, String key, String owner) {
        try (Connection c = fence.dataSource().getConnection()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            try (PreparedStatement ps = c.prepareStatement(releaseOwnedSql(fence))) {
                bind(ps, key, owner);
                ps.setQueryTimeout(10);
                ps.execute();
            }
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "could not check lease \"{0}\" after a failed grant ({1}); it ends by its TTL",
                key, e.toString());
        }
    }

    /** Could the server have granted the lease before this error reached the client? */
    private static boolean mayHaveGranted(SQLException e) {
        String s = e.getSQLState();
        return s == null || s.startsWith("08") || s.equals("57014") || s.startsWith("57P");
    }

    private SQLException translate(SQLException e) {
        if (e instanceof FenceException) {
            return e;
        }
        LeaseLostException l = loss;
        if (l != null && ("57014".equals(e.getSQLState()) || "25P02".equals(e.getSQLState()))) {
            // pgfence cancelled it, as the lease was lost (or the work went on after that).
            return new LeaseLostException(key, token, l.how(), e);
        }
        SQLException f = FenceException.classify(e);
        if (f instanceof LeaseNotHeldException) {
            lose(statusHow(), e);
        }
        return f;
    }

    // ---------------------------------------------------------------- the transaction's connection

    /**
     * The connection handed to the work: the pooled one, except that the statements it makes are
     * remembered (to cancel them when the lease is lost) and the transaction is not its to end.
     */
    private final class Tx implements InvocationHandler {
        private final Connection real;
        private final Set<Statement> statements = ConcurrentHashMap.newKeySet();
        private volatile boolean done;
        final Connection proxy;

        Tx(Connection real) {
            this.real = real;
            this.proxy = (Connection) Proxy.newProxyInstance(Lease.class.getClassLoader(),
                new Class<?>[] {Connection.class}, this);
        }

        @Override
        public Object invoke(Object p, Method m, Object[] args) throws Throwable {
            String name = m.getName();
            int n = args == null ? 0 : args.length;
            if (m.getDeclaringClass() == Object.class) {
                switch (name) {
                    case "equals":
                        return p == args[0];
                    case "hashCode":
                        return System.identityHashCode(p);
                    default:
                        return "pgfence transaction of " + Lease.this + " on " + real;
                }
            }
            if (name.equals("isClosed") && n == 0) {
                return done || real.isClosed();
            }
            if (done) {
                throw new SQLException("this connection was lent by Lease.inTransaction, which has returned", "08003");
            }
            if ((name.equals("close") || name.equals("commit") || name.equals("setAutoCommit")
                    || name.equals("abort")) || (name.equals("rollback") && n == 0)) {
                throw new SQLException("Lease.inTransaction ends the transaction itself: return from the work "
                    + "(or throw) instead of calling " + name + "()", "0A000");
            }
            boolean makes = name.equals("createStatement") || name.equals("prepareStatement")
                || name.equals("prepareCall");
            if (makes) {
                check();
            }
            Object result;
            try {
                result = m.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (makes) {
                statements.add((Statement) result);
            }
            return result;
        }

        void cancel() {
            for (Statement s : statements) {
                try {
                    // A statement that is not running ignores it.
                    s.cancel();
                } catch (SQLException ignored) {
                    // Closed, or its connection is gone: nothing runs on it.
                }
            }
        }

        void finish() {
            done = true;
        }
    }

    // ---------------------------------------------------------------- JDBC helpers

    @FunctionalInterface
    private interface PoolCall<T> {
        T run(Connection c) throws SQLException;
    }

    /** A call on a pooled connection in autocommit mode, given back as it was. */
    private <T> T withPool(PoolCall<T> call) throws SQLException {
        try (Connection c = fence.dataSource().getConnection()) {
            boolean auto = c.getAutoCommit();
            if (!auto) {
                c.setAutoCommit(true);
            }
            try {
                return call.run(c);
            } finally {
                if (!auto) {
                    c.setAutoCommit(false);
                }
            }
        }
    }

    /** The first row of a statement (all nulls if it returns none), bounded by a query timeout. */
    private static Object[] query(Connection c, String sql, int timeoutSeconds, Object... params)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            if (timeoutSeconds > 0) {
                ps.setQueryTimeout(timeoutSeconds);
            }
            if (!ps.execute()) {
                return new Object[0];
            }
            try (ResultSet rs = ps.getResultSet()) {
                int cols = rs.getMetaData().getColumnCount();
                Object[] row = new Object[cols];
                if (rs.next()) {
                    for (int i = 0; i < cols; i++) {
                        row[i] = rs.getObject(i + 1);
                    }
                }
                return row;
            }
        }
    }

    private static void bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            Object v = params[i];
            if (v == null) {
                ps.setNull(i + 1, Types.VARCHAR);
            } else if (v instanceof Long) {
                ps.setLong(i + 1, (Long) v);
            } else {
                ps.setString(i + 1, v.toString());
            }
        }
    }

    /** A Duration as PostgreSQL interval text, to the microsecond. */
    static String interval(Duration d) {
        return String.format("%d.%06d seconds", d.getSeconds(), d.getNano() / 1000);
    }

    private static void rollbackQuietly(Connection c) {
        try {
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        } catch (SQLException ignored) {
            // Broken connection: the server rolls back.
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // Nothing more to do with it.
        }
    }

    /** A name no other process uses: pgfence, the host, the pid and 48 random bits, within 48 bytes. */
    static String generatedOwner() {
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        String tail = ":" + ProcessHandle.current().pid() + ":" + HexFormat.of().formatHex(random);
        String head = "pgfence:" + hostName();
        int room = OWNER_MAX_BYTES - tail.length();
        StringBuilder out = new StringBuilder();
        int used = 0;
        for (int i = 0; i < head.length(); ) {
            int cp = head.codePointAt(i);
            int bytes = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (used + bytes > room) {
                break;
            }
            out.appendCodePoint(cp);
            used += bytes;
            i += Character.charCount(cp);
        }
        return out + tail;
    }

    private static String hostName() {
        String h = System.getenv("HOSTNAME");
        if (h == null || h.isBlank()) {
            try {
                h = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                h = "host";
            }
        }
        int dot = h.indexOf('.');
        h = dot > 0 ? h.substring(0, dot) : h;
        return h.isEmpty() ? "host" : h;
    }
}
