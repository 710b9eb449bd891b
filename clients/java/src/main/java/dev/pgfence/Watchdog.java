package dev.pgfence;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
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
 * <p>A lease taken joins the set; the call running then does not watch it, so the watchdog
 * cancels that call ({@code Statement.cancel()}, a cancel request that leaves the connection
 * usable) and calls again with the new set: the new lease is watched within a round trip. A cancel
 * request that reaches the server before the call starts cancels nothing, so it is sent again while
 * that call still runs. A lease that leaves the set needs no cancel: its release ends the running
 * call by itself. With no lease left, the thread ends and gives its connection back. On a server
 * without the function (fence 1.2) each lease watches itself on a connection of its own.
 */
final class Watchdog {
    private static final Logger LOG = System.getLogger("dev.pgfence");
    /** fence_wait_leases_end watches at most this many leases in one call; the rest rely on renewals. */
    static final int MAX_WATCHED = 10000;
    private static final long[] CANCEL_RETRIES_MS = {50, 100, 200, 500, 1000, 2000, 5000};
    static final String SQL_HAS_WAIT_LEASES_END = "SELECT to_regproc('fence_wait_leases_end') IS NOT NULL";
    static final String SQL_WAIT_LEASES_END = "SELECT key, token::bigint, status "
        + "FROM fence_wait_leases_end(?::text[], ?::bigint[], ?::interval)";

    private final Fence fence;
    private final Object lock = new Object();
    private final Set<Lease> leases = new LinkedHashSet<>(); // guarded by lock
    private long added; // guarded by lock
    private long issued = -1; // the added count the running call watches; guarded by lock
    private long calls; // guarded by lock
    private boolean cancelSent; // guarded by lock
    private Thread thread; // guarded by lock
    private PreparedStatement running; // guarded by lock

    Watchdog(Fence fence) {
        this.fence = fence;
    }

    void add(Lease lease) {
        PreparedStatement toCancel = null;
        long call = 0;
        synchronized (lock) {
            leases.add(lease);
            added++;
            if (thread == null) {
                Thread t = new Thread(this::run, "pgfence-watchdog");
                t.setDaemon(true);
                thread = t;
                t.start();
            } else if (issued >= 0 && !cancelSent && running != null) {
                cancelSent = true;
                toCancel = running;
                call = calls;
            }
        }
        if (toCancel != null) {
            PreparedStatement ps = toCancel;
            long c = call;
            Thread t = new Thread(() -> cancelCall(ps, c), "pgfence-watchdog-cancel");
            t.setDaemon(true);
            t.start();
        }
    }

    void remove(Lease lease) {
        synchronized (lock) {
            leases.remove(lease);
        }
    }

    /** Does call number {@code call} still run, though a lease was added since? */
    private boolean stale(long call) {
        synchronized (lock) {
            return calls == call && issued >= 0 && issued != added;
        }
    }

    private void cancelCall(Statement ps, long call) {
        for (long pause : CANCEL_RETRIES_MS) {
            try {
                ps.cancel();
                TimeUnit.MILLISECONDS.sleep(pause);
            } catch (SQLException e) {
                return; // closed: its call is over
            } catch (InterruptedException e) {
                return;
            }
            if (!stale(call)) {
                return;
            }
        }
    }

    private void run() {
        OwnConnection conn = null;
        try {
            while (true) {
                List<Lease> watched = new ArrayList<>();
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
                    call(conn.c, watched, ended);
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

    private void call(Connection c, List<Lease> watched, List<Object[]> ended) throws SQLException {
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
                issued = added;
                calls++;
                cancelSent = false;
                running = ps;
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ended.add(new Object[] {rs.getString(1), rs.getLong(2), rs.getString(3)});
                }
            } finally {
                synchronized (lock) {
                    issued = -1;
                    running = null;
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

