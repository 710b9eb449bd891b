package dev.pgfence;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One watchdog for every lease of a {@link Fence}, when the server has {@code
 * fence_wait_leases_end} (fence 1.3): one own connection sleeps in one call on the whole set, and
 * the server answers the moment any lease of it ends.
 *
 * <p>A lease joins the set once it has been held for {@link Lease#WATCHDOG_JOIN} (most leases
 * are released before that and never disturb the call); the call running then does not watch it,
 * so the watchdog cancels that call ({@code Statement.cancel()}, a cancel request that leaves the
 * connection usable) and calls again with the new set: the new lease is watched within a round
 * trip. One cancel request is in flight at a time, on the fence's scheduler, for all the leases
 * that join meanwhile. A cancel request that reaches the server before the call starts cancels
 * nothing, so it is sent again while that call still runs. A lease that leaves the set needs no
 * cancel: its release ends the running call by itself. With no lease left, the thread ends and
 * gives its connection back. On a server without the function (fence 1.2) each lease watches
 * itself on a connection of its own.
 */
final class Watchdog {
    private static final Logger LOG = System.getLogger("dev.pgfence");
    /** fence_wait_leases_end watches at most this many leases in one call; the rest rely on renewals. */
    static final int MAX_WATCHED = 10000;
    private static final long[] CANCEL_RETRIES_MS = {50, 100, 200, 500, 1000, 2000, 5000};
    static final String SQL_WAIT_LEASES_END = "SELECT key, token::bigint, status "
        + "FROM fence_wait_leases_end(?::text[], ?::bigint[], ?::interval)";

    private final Fence fence;
    private final Object lock = new Object();
    private final Set<Lease> leases = new LinkedHashSet<>(); // guarded by lock
    private long added; // leases added so far; guarded by lock
    private long issued = -1; // the added count the running call watches; guarded by lock
    private long calls; // calls issued so far; guarded by lock
    private long cancels; // cancel requests sent so far; guarded by lock
    private boolean cancelling; // a cancel request is in flight or due; guarded by lock
    private Thread thread; // guarded by lock
    private PreparedStatement running; // guarded by lock
    private Connection runningOn; // the connection of running; guarded by lock

    Watchdog(Fence fence) {
        this.fence = fence;
    }

    void add(Lease lease) {
        boolean cancel = false;
        synchronized (lock) {
            leases.add(lease);
            added++;
            if (thread == null) {
                Thread t = new Thread(this::run, "pgfence-watchdog");
                t.setDaemon(true);
                thread = t;
                t.start();
            } else if (running != null && !cancelling) {
                cancelling = true;
                cancel = true;
            }
        }
        if (cancel) {
            fence.scheduler().execute(() -> cancelStale(null, 0));
        }
    }

    void remove(Lease lease) {
        synchronized (lock) {
            leases.remove(lease);
        }
    }

    /** Calls issued and cancel requests sent so far: for the tests. */
    long[] counts() {
        synchronized (lock) {
            return new long[] {calls, cancels};
        }
    }

    /**
     * Cancels the running call while it does not watch every lease added, on the fence's
     * scheduler. One such cancel request is in flight at a time, however many leases join
     * meanwhile: the call that follows watches them all. A cancel request that reaches the server
     * before its call starts cancels nothing, so it is sent again, after a pause that grows, for
     * as long as that call runs stale; a new call starts the pauses over.
     */
    private void cancelStale(Statement last, int tries) {
        Statement ps;
        Connection c;
        int n;
        synchronized (lock) {
            if (running == null || issued == added) {
                // Between calls (the next one watches every lease), or up to date.
                cancelling = false;
                return;
            }
            ps = running;
            c = runningOn;
            n = ps == last ? tries : 0;
            cancels++;
        }
        sendCancel(c, ps);
        long pause = CANCEL_RETRIES_MS[Math.min(n, CANCEL_RETRIES_MS.length - 1)];
        fence.scheduler().schedule(() -> cancelStale(ps, n + 1), pause, TimeUnit.MILLISECONDS);
    }

    /**
     * Sends a cancel request for the call running on {@code c}. pgJDBC's {@code
     * Statement.cancel()} sends one per execution: if it reached the server before the call
     * started, it cancelled nothing, and that statement's later cancel() calls send nothing. The
     * driver's connection sends one each time it is asked ({@code PGConnection.cancelQuery()},
     * found by its name: pgfence does not depend on pgJDBC); with another driver, the statement
     * is asked again.
     */
    private static void sendCancel(Connection c, Statement ps) {
        try {
            Connection real = c.unwrap(Connection.class);
            Method cancel = real.getClass().getMethod("cancelQuery");
            cancel.invoke(real);
            return;
        } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
            // Not pgJDBC (or it failed): the statement's own cancel.
        }
        try {
            ps.cancel();
        } catch (SQLException e) {
            // Closed: its call is over, and the next one watches every lease.
        }
    }

    private void run() {
        OwnConnection conn = null;
        try {
            while (true) {
                List<Lease> watched = new ArrayList<>();
                long snapshot;
                synchronized (lock) {
                    if (leases.isEmpty()) {
                        thread = null;
                        issued = -1;
                        return;
                    }
                    for (Lease l : leases) {
                        if (watched.size() == MAX_WATCHED) {
                            break;
                        }
                        watched.add(l);
                    }
                    snapshot = added;
                }
                if (conn == null) {
                    conn = open();
                    if (conn == null) {
                        pause();
                    }
                    continue;
                }
                List<Object[]> ended = new ArrayList<>();
                try {
                    call(conn.c, watched, snapshot, ended);
                } catch (SQLException e) {
                    if ("57014".equals(e.getSQLState())) {
                        continue; // a lease was added: ask again
                    }
                    LOG.log(Level.INFO, "watchdog connection failed ({0}); reconnecting", e.toString());
                    conn.close();
                    conn = null;
                    pause();
                    continue;
                }
                for (Object[] row : ended) {
                    for (Lease l : watched) {
                        if (!l.key().equals(row[0]) || l.token() != (Long) row[1]) {
                            continue;
                        }
                        boolean still;
                        synchronized (lock) {
                            still = leases.remove(l);
                        }
                        if (still) {
                            l.watchdogSays((String) row[2]);
                        }
                    }
                }
            }
        } finally {
            if (conn != null) {
                conn.close();
            }
        }
    }

    /**
     * One fence_wait_leases_end on {@code watched}, the set as it was when {@code snapshot} leases
     * had been added; nothing if one was added since (the caller asks again with it).
     */
    private void call(Connection c, List<Lease> watched, long snapshot, List<Object[]> ended)
            throws SQLException {
        String[] keys = new String[watched.size()];
        Long[] tokens = new Long[watched.size()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = watched.get(i).key();
            tokens[i] = watched.get(i).token();
        }
        try (PreparedStatement ps = c.prepareStatement(SQL_WAIT_LEASES_END)) {
            ps.setArray(1, c.createArrayOf("text", keys));
            ps.setArray(2, c.createArrayOf("bigint", tokens));
            ps.setString(3, Lease.interval(Lease.WATCHDOG_POLL));
            ps.setQueryTimeout((int) Lease.WATCHDOG_POLL.toSeconds() + 15);
            synchronized (lock) {
                if (snapshot != added) {
                    return;
                }
                issued = snapshot;
                calls++;
                running = ps;
                runningOn = c;
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ended.add(new Object[] {rs.getString(1), rs.getLong(2), rs.getString(3)});
                }
            } finally {
                synchronized (lock) {
                    issued = -1;
                    running = null;
                    runningOn = null;
                }
            }
        }
    }

    /** A new watchdog connection; the leases of a server that restarted since their grant are lost. */
    private OwnConnection open() {
        OwnConnection conn = null;
        String started;
        try {
            conn = OwnConnection.open(fence);
            started = conn.serverStarted();
        } catch (SQLException | RuntimeException e) {
            if (conn != null) {
                conn.close();
            }
            return null;
        }
        List<Lease> gone = new ArrayList<>();
        synchronized (lock) {
            for (Lease l : new ArrayList<>(leases)) {
                if (!l.sameServer(started)) {
                    leases.remove(l);
                    gone.add(l);
                }
            }
        }
        for (Lease l : gone) {
            l.watchdogLostConnection();
        }
        return conn;
    }

    private static void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(500 + ThreadLocalRandom.current().nextLong(500));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

