package dev.pgfence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.pgfence.LeaseLostException.How;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * pgfence against a real server: PGFENCE_TEST_URL is a JDBC URL of a database with fence
 * installed, as a superuser (fence_break needs one). Few tests, and two worker JVMs: a JVM
 * starts slowly on a small machine.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FenceTest {
    static String url;
    static SimplePool pool;
    static Fence fence;
    static Connection admin;

    @BeforeAll
    static void setUp() throws SQLException {
        url = System.getenv("PGFENCE_TEST_URL");
        assertNotNull(url, "PGFENCE_TEST_URL names the test database");
        pool = new SimplePool(url);
        fence = new Fence(pool);
        admin = DriverManager.getConnection(url);
        sql("DROP TABLE IF EXISTS jobs, notes");
        sql("CREATE TABLE jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0)");
        sql("INSERT INTO jobs VALUES (1, 'pending')");
        sql("SELECT fence_protect('jobs')");
        sql("CREATE TABLE notes (id serial PRIMARY KEY, body text, fence fence_token NOT NULL DEFAULT 0)");
        sql("SELECT fence_protect('notes', require_token => true)");
    }

    @AfterAll
    static void tearDown() throws SQLException {
        try {
            admin.close();
        } catch (SQLException ignored) {
            // Broken by the restart test.
        }
        pool.close();
    }

    /**
     * The frozen holder: a worker JVM holds a 1 s lease and is stopped (SIGSTOP) past it; another
     * holder takes over and writes; the first one, resumed, tries its late write: it never lands,
     * and the worker learns the loss.
     */
    @Test
    void frozenHolderIsFencedOut() throws Exception {
        Process a = worker("job:frozen", 1000);
        BufferedReader out = new BufferedReader(new InputStreamReader(a.getInputStream(), StandardCharsets.UTF_8));
        try {
            String first = out.readLine();
            assertNotNull(first, "the worker printed its token");
            assertTrue(first.startsWith("token "), first);
            long tokenA = Long.parseLong(first.substring(6));
            assertEquals("started by A|" + tokenA, value("SELECT result || '|' || fence::bigint FROM jobs WHERE id = 1"));

            signal(a, "STOP");
            long tokenB;
            try (Lease b = fence.acquire("job:frozen", Duration.ofSeconds(30), Duration.ofSeconds(10))) {
                tokenB = b.token();
                assertTrue(tokenB > tokenA, "the new holder's token is larger");
                assertEquals("superseded", value("SELECT fence_lease_status('job:frozen', " + tokenA + ")"));
                b.inTransaction(c -> update(c, "UPDATE jobs SET result = 'done by B' WHERE id = 1"));

                signal(a, "CONT");
                try (OutputStream in = a.getOutputStream()) {
                    in.write("go\n".getBytes(StandardCharsets.UTF_8));
                }
                List<String> rest = new ArrayList<>();
                for (String line; (line = out.readLine()) != null; ) {
                    rest.add(line);
                }
                assertTrue(a.waitFor(30, TimeUnit.SECONDS), "the worker ends");
                System.out.println("frozen holder said: " + String.join("; ", rest));
                assertEquals(0, a.exitValue(), "the worker exits 0: " + rest);
                String late = rest.get(0);
                assertTrue(late.startsWith("late write: LeaseLostException ")
                        || late.equals("late write: StaleTokenException LF001"),
                    "the late write failed with the loss or LF001: " + rest);
                assertTrue(rest.contains("lost: expired") || rest.contains("lost: superseded")
                        || rest.contains("lost: deadline"), "lost() completed: " + rest);
                assertFalse(b.isLost());
            }
            assertEquals("done by B|" + tokenB, value("SELECT result || '|' || fence::bigint FROM jobs WHERE id = 1"),
                "the late write never landed");
        } finally {
            signal(a, "CONT");
            a.destroyForcibly();
        }
    }

    /** Renewals keep a 1 s lease through 4 s of work, a long transaction among it. */
    @Test
    void renewalKeepsAShortLease() throws Exception {
        long start = System.nanoTime();
        Lease lease = fence.acquire("renew:1s", Duration.ofSeconds(1), Duration.ZERO);
        try (lease) {
            lease.inTransaction(c -> value(c, "SELECT pg_sleep(1.5)"));
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(4)) {
                lease.inTransaction(c -> value(c, "SELECT pg_sleep(0.2)"));
            }
            assertFalse(lease.isLost(), "still held after 4 s");
            assertFalse(lease.lost().isDone());
            assertEquals("held", value("SELECT fence_lease_status('renew:1s', " + lease.token() + ")"));
        }
        assertEquals(How.RELEASED, lease.lost().get(1, TimeUnit.SECONDS).how(), "close() released it");
        assertEquals("released", value("SELECT fence_lease_status('renew:1s', " + lease.token() + ")"));
        assertThrows(LeaseLostException.class, () -> lease.inTransaction(c -> 1));
    }

    /**
     * Renewals that cannot reach the server suspend the lease; one that succeeds again resumes
     * it; when none does, the lease is lost at its local deadline (or at its expiry, if the
     * watchdog hears it first), not later.
     */
    @Test
    void failedRenewalsSuspendUntilTheDeadline() throws Exception {
        try (SimplePool flaky = new SimplePool(url)) {
            // The watchdog's connection comes from DriverManager: only renewals fail.
            Fence f = new Fence(flaky, ConnectionFactory.fromUrl(url, null));
            Lease lease = f.acquire("suspend:me", Duration.ofMillis(1500), Duration.ZERO);
            flaky.down = true;
            waitFor(lease::isSuspended, 2000, "a failed renewal suspends the lease");
            assertFalse(lease.isLost(), "suspended, still held");
            flaky.down = false;
            waitFor(() -> !lease.isSuspended(), 2000, "a renewal that succeeds resumes it");
            assertFalse(lease.isLost());

            flaky.down = true;
            long down = System.nanoTime();
            LeaseLostException lost = lease.lost().get(5, TimeUnit.SECONDS);
            long took = (System.nanoTime() - down) / 1_000_000;
            assertTrue(lost.how() == How.DEADLINE || lost.how() == How.EXPIRED, "lost: " + lost.how());
            assertTrue(took <= 1500 + 300, "lost within the TTL of the last renewal: " + took + " ms");
            assertThrows(LeaseLostException.class, () -> lease.inTransaction(c -> 1));
            assertEquals(lost.how(), assertThrows(LeaseLostException.class, lease::close).how());
        }
    }

    /** fence_break completes lost() and cancels the running statement within a second. */
    @Test
    void breakCancelsTheRunningStatement() throws Exception {
        Lease lease = fence.acquire("break:me", Duration.ofSeconds(30), Duration.ZERO);
        CompletableFuture<Throwable> work = CompletableFuture.supplyAsync(() -> {
            try {
                lease.inTransaction(c -> value(c, "SELECT pg_sleep(30) /* under break:me */"));
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!"1".equals(value("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                + "AND query LIKE '%under break:me%' AND pid <> pg_backend_pid()"))) {
            assertTrue(System.nanoTime() < until, "the statement started");
            Thread.sleep(20);
        }
        long broken = System.nanoTime();
        assertEquals(String.valueOf(lease.token()), value("SELECT fence_break('break:me')"));
        LeaseLostException lost = lease.lost().get(1, TimeUnit.SECONDS);
        assertEquals(How.BROKEN, lost.how());
        Throwable e = work.get(Math.max(1, 1000 - (System.nanoTime() - broken) / 1_000_000), TimeUnit.MILLISECONDS);
        long took = (System.nanoTime() - broken) / 1_000_000;
        assertTrue(took < 1000, "cancelled within a second: " + took + " ms");
        LeaseLostException le = assertInstanceOf(LeaseLostException.class, e);
        assertEquals(How.BROKEN, le.how());
        assertEquals("LF002", le.getSQLState());
        assertEquals("57014", ((SQLException) le.getCause()).getSQLState(), "the statement was cancelled");
        assertEquals(How.BROKEN,
            assertThrows(LeaseLostException.class, () -> lease.inTransaction(c -> 1)).how(),
            "the next transaction fails");
        assertEquals(How.BROKEN, assertThrows(LeaseLostException.class, lease::close).how(),
            "close() says the lease had been lost");
    }

    /**
     * A pool whose connections time out after 100 ms, whose connections the lease's own come
     * from too: the watchdog's one wait lasts the 2 s the lease is held and learns of a break
     * within a second, and the connection goes back to the pool with its timeouts.
     */
    @Test
    void poolTimeoutsDoNotReachTheWatchdog() throws Exception {
        String app = "pgfence-timeouts";
        String strictUrl = url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + app
            + "&options=-c%20statement_timeout=100%20-c%20lock_timeout=100"
            + "%20-c%20idle_in_transaction_session_timeout=100";
        try (SimplePool strict = new SimplePool(strictUrl)) {
            try (Connection c = strict.getConnection()) {
                assertEquals("100ms", value(c, "SHOW statement_timeout"));
            }
            Fence f = new Fence(strict);
            Lease lease = f.acquire("timeouts:me", Duration.ofSeconds(1), Duration.ZERO);
            Thread.sleep(2000);
            assertNull(lease.lost().getNow(null), "still held after 2 s");
            assertEquals("1", value("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app
                + "' AND state = 'active' AND query LIKE '%fence\\_wait\\_lease%\\_end(%' "
                + "AND now() - query_start > interval '1.5 seconds'"), "one wait all along");
            long broken = System.nanoTime();
            value("SELECT fence_break('timeouts:me')");
            assertEquals(How.BROKEN, lease.lost().get(1, TimeUnit.SECONDS).how());
            assertTrue((System.nanoTime() - broken) / 1_000_000 < 1000, "within a second");
            assertThrows(LeaseLostException.class, lease::close);
            try (Connection c = strict.getConnection()) {
                assertEquals("100ms", value(c, "SHOW statement_timeout"), "given back as it came");
            }
        }
    }

    /** Backends of application {@code app} sleeping in fence_wait_lease_end or fence_wait_leases_end. */
    static int waits(String app) throws SQLException {
        return Integer.parseInt(value("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app
            + "' AND state = 'active' AND query LIKE '%fence\\_wait\\_lease%\\_end(%'"));
    }

    static String withApp(String app) {
        return url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + app;
    }

    /** Twenty leases of one Fence: one backend waits for them all; a break of any is pushed within a second. */
    @Test
    void twentyLeasesOneWatchdog() throws Exception {
        String app = "pgfence-twenty";
        try (SimplePool p = new SimplePool(withApp(app))) {
            Fence f = new Fence(p);
            List<Lease> leases = new ArrayList<>();
            try {
                long first = System.nanoTime();
                for (int i = 0; i < 20; i++) {
                    leases.add(f.acquire("twenty:" + i, Duration.ofSeconds(30), Duration.ZERO));
                }
                long spread = (System.nanoTime() - first) / 1_000_000;
                waitFor(() -> leases.stream().allMatch(Lease::joinedWatchdog), 5000, "all twenty joined the watchdog");
                waitFor(() -> waits(app) == 1, 5000, "one backend waits for all twenty");
                // They joined as they were granted, 100 ms later. One cancel request at a time,
                // the next at least 50 ms later, serves all that joined meanwhile (and one more
                // may follow a call that the request reached before it started).
                long cancels = f.watchdog().counts()[1];
                assertTrue(cancels <= spread / 50 + 3,
                    cancels + " cancel requests for 20 leases granted over " + spread + " ms");
                for (int i : new int[] {13, 19, 0}) {
                    long broken = System.nanoTime();
                    value("SELECT fence_break('twenty:" + i + "')");
                    assertEquals(How.BROKEN, leases.get(i).lost().get(1, TimeUnit.SECONDS).how());
                    assertTrue((System.nanoTime() - broken) / 1_000_000 < 1000, "within a second");
                }
                for (int i = 0; i < 20; i++) {
                    assertEquals(i == 0 || i == 13 || i == 19, leases.get(i).lost().isDone(), "lease " + i);
                }
                waitFor(() -> waits(app) == 1, 5000, "the wait goes on with the others");
            } finally {
                for (Lease l : leases) {
                    try {
                        l.close();
                    } catch (LeaseLostException expected) {
                        // The broken ones.
                    }
                }
            }
            assertEquals("0", value("SELECT count(*) FROM fence_leases WHERE key LIKE 'twenty:%'"));
        }
    }

    /** A lease taken while the watchdog sleeps on another is watched at once. */
    @Test
    void newLeaseIsWatchedAtOnce() throws Exception {
        String app = "pgfence-later";
        try (SimplePool p = new SimplePool(withApp(app))) {
            Fence f = new Fence(p);
            try (Lease first = f.acquire("later:first", Duration.ofSeconds(30), Duration.ZERO)) {
                waitFor(() -> waits(app) == 1, 5000, "the watchdog waits");
                Lease later = f.acquire("later:me", Duration.ofSeconds(30), Duration.ZERO);
                value("SELECT fence_break('later:me')");
                assertEquals(How.BROKEN, later.lost().get(1, TimeUnit.SECONDS).how());
                assertThrows(LeaseLostException.class, later::close);
            }
        }
    }

    /** Backends of the applications whose names start with {@code prefix}. */
    static String backends(String prefix) throws SQLException {
        return value("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE '" + prefix + "%'");
    }

    /** Own connections from DriverManager, counted. */
    static ConnectionFactory counted(String app, AtomicInteger opened) {
        ConnectionFactory real = ConnectionFactory.fromUrl(withApp(app), null);
        return () -> {
            opened.incrementAndGet();
            return real.connect();
        };
    }

    /**
     * A lease on a free key is taken in one statement on a pooled connection: no connection is
     * opened for it (neither by the pool nor for the lease's own), no backend starts, and no
     * pooled connection carries its token afterwards, the one that took it included; nor once it
     * has joined the watchdog, which was already awake for another lease.
     */
    @Test
    void grantOnAFreeKeyOpensNoConnection() throws Exception {
        String app = "pgfence-free";
        AtomicInteger ownOpened = new AtomicInteger();
        try (SimplePool p = new SimplePool(withApp(app))) {
            Fence f = new Fence(p, counted(app + "-own", ownOpened));
            try (Lease warm = f.acquire("free:warm", Duration.ofSeconds(30), Duration.ZERO)) {
                waitFor(() -> waits(app + "-own") == 1, 5000, "the watchdog waits for the first lease");
                p.fill(3);
                int poolBefore = p.opened.get();
                int ownBefore = ownOpened.get();
                String before = backends(app);
                try (Lease lease = f.acquire("free:me", Duration.ofSeconds(30), Duration.ZERO)) {
                    assertEquals(poolBefore, p.opened.get(), "the pool opened no connection");
                    assertEquals(ownBefore, ownOpened.get(), "no own connection was opened");
                    assertEquals(before, backends(app), "no backend started");
                    List<String> tokens = p.onEachIdle("SELECT fence_current_token()::text");
                    assertEquals(3, tokens.size(), "every pooled connection is idle");
                    assertEquals(Arrays.asList(null, null, null), tokens, "no pooled connection carries a token");
                    assertEquals("held", value("SELECT fence_lease_status('free:me', " + lease.token() + ")"));
                    waitFor(lease::joinedWatchdog, 2000, "the lease joins the watchdog");
                    waitFor(() -> waits(app + "-own") == 1, 5000, "the watchdog waits for both");
                    assertEquals(poolBefore, p.opened.get(), "still no connection opened");
                    assertEquals(ownBefore, ownOpened.get(), "still no own connection opened");
                    assertEquals(before, backends(app), "still no backend started");
                    assertEquals(Arrays.asList(null, null, null), p.onEachIdle("SELECT fence_current_token()::text"),
                        "still no pooled connection carries a token");
                    assertEquals(String.valueOf(lease.token()),
                        lease.inTransaction(c -> value(c, "SELECT fence_current_token()::text")),
                        "its transactions carry its token");
                }
            }
        }
        assertEquals("0", value("SELECT count(*) FROM fence_leases WHERE key LIKE 'free:%'"));
    }

    /**
     * A lease broken before it joined the watchdog (in its first 100 ms) is still told lost
     * within a second, long before a renewal would find out: when it joins, the watchdog's call
     * returns at once.
     */
    @Test
    void leaseBrokenEarlyIsStillLost() throws Exception {
        for (int i = 0; ; i++) {
            Lease lease = fence.acquire("early:" + i, Duration.ofSeconds(30), Duration.ZERO);
            long broken = System.nanoTime();
            value("SELECT fence_break('early:" + i + "')");
            if (lease.joinedWatchdog()) {
                // Slower than 100 ms: not what this test is about. Again, with a new key.
                try {
                    lease.close();
                } catch (LeaseLostException expected) {
                    // If the watchdog told it already.
                }
                assertTrue(i < 4, "a break within 100 ms of the grant, in 5 tries");
                continue;
            }
            assertEquals(How.BROKEN, lease.lost().get(1, TimeUnit.SECONDS).how());
            long took = (System.nanoTime() - broken) / 1_000_000;
            assertTrue(took < 1000, "within a second: " + took + " ms");
            assertTrue(lease.joinedWatchdog(), "the watchdog told it");
            assertThrows(LeaseLostException.class, lease::close);
            return;
        }
    }

    /**
     * Leases released within 100 ms never join the watchdog: it sleeps on in the same call, and
     * no cancel request is sent for them.
     */
    @Test
    void shortLeasesLeaveTheWatchdogAlone() throws Exception {
        String app = "pgfence-short";
        try (SimplePool p = new SimplePool(withApp(app))) {
            Fence f = new Fence(p);
            try (Lease warm = f.acquire("short:warm", Duration.ofSeconds(30), Duration.ZERO)) {
                waitFor(() -> waits(app) == 1, 5000, "the watchdog waits for the first lease");
                Watchdog dog = f.watchdog();
                waitFor(() -> dog.counts()[0] > 0, 5000, "the watchdog's call was issued");
                String failed = null;
                // A machine too busy to take and release within 100 ms tries again.
                for (int round = 0; round < 3; round++) {
                    long[] before = dog.counts();
                    int joined = 0;
                    for (int i = 0; i < 20; i++) {
                        Lease l = f.acquire("short:" + i, Duration.ofSeconds(30), Duration.ZERO);
                        l.close();
                        joined += l.joinedWatchdog() ? 1 : 0;
                    }
                    Thread.sleep(200);
                    long[] after = dog.counts();
                    if (joined == 0 && after[0] == before[0] && after[1] == before[1]) {
                        failed = null;
                        break;
                    }
                    failed = "20 short leases disturbed the watchdog: " + joined + " joined, "
                        + (after[0] - before[0]) + " calls, " + (after[1] - before[1]) + " cancel requests";
                }
                assertNull(failed);
                assertEquals(1, waits(app), "the watchdog sleeps on");
                assertFalse(warm.isLost());
            }
        }
        assertEquals("0", value("SELECT count(*) FROM fence_leases WHERE key LIKE 'short:%'"));
    }

    /**
     * A lease on a held key: with no wait, refused at once without a connection; with a wait,
     * waits on a connection of its own and is granted when the holder releases. That connection
     * (from the pool here) goes back to the pool carrying no token.
     */
    @Test
    void leaseOnAHeldKeyWaits() throws Exception {
        String app = "pgfence-wait";
        try (SimplePool p = new SimplePool(withApp(app))) {
            Fence f = new Fence(p);
            Lease holder = fence.acquire("wait:me", Duration.ofSeconds(30), Duration.ZERO);
            Lease warm = f.acquire("wait:warm", Duration.ofSeconds(30), Duration.ZERO);
            try {
                // The watchdog's connection is out of the pool already; two are idle.
                waitFor(() -> waits(app) == 1, 5000, "the watchdog waits for the first lease");
                p.fill(2);
                int opened = p.opened.get();
                int borrowed = p.borrowed.get();
                assertThrows(LeaseUnavailableException.class,
                    () -> f.acquire("wait:me", Duration.ofSeconds(30), Duration.ZERO));
                assertEquals(opened, p.opened.get(), "a try opens no connection");
                assertEquals(borrowed + 1, p.borrowed.get(), "a try is one pooled connection's statement");
                CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
                    try {
                        return f.acquire("wait:me", Duration.ofSeconds(30), Duration.ofSeconds(10));
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                waitFor(() -> "1".equals(value("SELECT count(*) FROM fence_lease_waiters_of('wait:me')")), 5000,
                    "the waiter queues for the key");
                assertEquals("1", value("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app
                    + "' AND state = 'active' AND query LIKE '%fence\\_lease(%'"), "it waits on a connection");
                assertEquals(1, p.onEachIdle("SELECT 1").size(), "of its own, out of the pool");
                assertFalse(waiter.isDone(), "it waits while the key is held");
                holder.close();
                Lease lease = waiter.get(5, TimeUnit.SECONDS);
                try (lease) {
                    assertTrue(lease.token() > holder.token());
                    assertEquals("held", value("SELECT fence_lease_status('wait:me', " + lease.token() + ")"));
                    List<String> tokens = p.onEachIdle("SELECT fence_current_token()::text");
                    assertEquals(2, tokens.size(), "the waiting connection went back to the pool");
                    assertEquals(Arrays.asList(null, null), tokens, "no pooled connection carries a token");
                }
                assertEquals(opened, p.opened.get(), "the wait's connection came from the pool");
            } finally {
                holder.close();
                warm.close();
            }
        }
    }

    /**
     * Takes and releases key once (so that f has asked the server what it has), runs arm (which
     * sets the test pool to fail the next grant after it ran), and returns the error of the grant
     * that follows.
     */
    private static SQLException grantFailingAfterItRan(Fence f, String key, Runnable arm) throws SQLException {
        try (Lease first = f.acquire(key, Duration.ofSeconds(30), Duration.ZERO)) {
            assertTrue(first.token() > 0);
        }
        arm.run();
        return assertThrows(SQLException.class, () -> f.acquire(key, Duration.ofSeconds(30), Duration.ZERO));
    }

    /**
     * A grant on the pool whose answer never came back (the connection broke as it returned) may
     * have been made: what the lease's owner holds of the key is released, and the key is free.
     */
    @Test
    void grantWhoseAnswerIsLostIsReleased() throws Exception {
        try (SimplePool p = new SimplePool(url)) {
            Fence f = new Fence(p);
            SQLException e = grantFailingAfterItRan(f, "lost:answer", () -> p.loseAnswerOf = "fence_forget_token");
            assertEquals("08006", e.getSQLState());
            assertNull(p.loseAnswerOf, "the grant was made, and its answer lost");
            assertEquals("0", value("SELECT count(*) FROM fence_leases_of('lost:answer')"), "nothing is held");
            List<String> releases = new ArrayList<>();
            synchronized (p.prepared) {
                for (String q : p.prepared) {
                    if (q.contains("fence_release(l.")) {
                        releases.add(q);
                    }
                }
            }
            assertEquals(List.of(Lease.SQL_RELEASE_OWNED_OF_KEY), releases,
                "given back by the statement that reads only that key's leases");
            try (Lease again = f.acquire("lost:answer", Duration.ofSeconds(30), Duration.ZERO)) {
                assertTrue(again.token() > 0, "the key is free");
            }
        }
    }

    /**
     * A grant on the pool cancelled as it returned (57014) may have been made, and its session
     * may not have forgotten the token: it is given back on that very session, before the
     * session goes back to the pool, and not through another borrowed one.
     */
    @Test
    void cancelledGrantIsGivenBackOnItsOwnSession() throws Exception {
        try (SimplePool p = new SimplePool(url)) {
            Fence f = new Fence(p);
            int[] borrowed = new int[1];
            SQLException e = grantFailingAfterItRan(f, "cancel:answer", () -> {
                p.cancelAnswerOf = "fence_forget_token";
                borrowed[0] = p.borrowed.get();
            });
            assertEquals("57014", e.getSQLState());
            assertNull(p.cancelAnswerOf, "the grant was made, and then cancelled");
            assertEquals(borrowed[0] + 1, p.borrowed.get(), "given back on the grant's own session");
            assertEquals("0", value("SELECT count(*) FROM fence_leases_of('cancel:answer')"), "nothing is held");
            List<String> tokens = p.onEachIdle("SELECT fence_current_token('cancel:answer')::text");
            assertFalse(tokens.isEmpty(), "the grant's session is back in the pool");
            for (String t : tokens) {
                assertNull(t, "a session went back to the pool carrying no token");
            }
        }
    }

    /**
     * The statement that gives back a grant whose answer was lost reads only that key's leases
     * (fence_leases_of) once the server is known to have fence_forget_token (fence 1.3), and
     * fence_leases, every lease of the server, otherwise. Each releases what the owner holds of
     * the key, and nothing of another owner's.
     */
    @Test
    void releaseOfALostGrantReadsOneKeyWithFence13() throws Exception {
        assertTrue(Lease.SQL_RELEASE_OWNED_OF_KEY.contains("FROM fence_leases_of(?::text) l"));
        assertTrue(Lease.SQL_RELEASE_OWNED.contains("FROM fence_leases l"));
        try (SimplePool p = new SimplePool(url)) {
            Fence notAsked = new Fence(p);
            assertEquals(Lease.SQL_RELEASE_OWNED, Lease.releaseOwnedSql(notAsked), "not asked yet");
            releaseOwnedReleases(notAsked, "lostgrant:notasked");
            Fence asked = new Fence(p);
            try (Connection c = p.getConnection()) {
                assertTrue(asked.canForget(c), "this server has fence_forget_token");
            }
            assertEquals(Lease.SQL_RELEASE_OWNED_OF_KEY, Lease.releaseOwnedSql(asked), "fence 1.3");
            releaseOwnedReleases(asked, "lostgrant:13");
            Fence old = new Fence(p);
            old.watchEachLeaseAlone();
            assertEquals(Lease.SQL_RELEASE_OWNED, Lease.releaseOwnedSql(old), "fence 1.2");
            releaseOwnedReleases(old, "lostgrant:12");
        }
    }

    /** Lease.releaseOwned on f gives back what its owner holds of a key, and not another's. */
    private static void releaseOwnedReleases(Fence f, String key) throws SQLException {
        String owner = "pgfence-test-lost-grant";
        value("SELECT fence_forget_token('" + key + ":mine', fence_try_lease('" + key
            + ":mine', '30 s', owner => '" + owner + "'))");
        value("SELECT fence_forget_token('" + key + ":theirs', fence_try_lease('" + key
            + ":theirs', '30 s', owner => 'someone else'))");
        Lease.releaseOwned(f, key + ":mine", owner);
        Lease.releaseOwned(f, key + ":theirs", owner);
        assertEquals(key + ":theirs", value("SELECT string_agg(key, ',' ORDER BY key) FROM fence_leases "
            + "WHERE key IN ('" + key + ":mine', '" + key + ":theirs')"), key + ": only the owner's grant is given back");
        value("SELECT fence_release(key, token) FROM fence_leases WHERE key = '" + key + ":theirs'");
    }

    /**
     * As with fence 1.2 (no fence_wait_leases_end, no fence_forget_token): each lease is taken on
     * a connection of its own, which then watches it alone.
     */
    @Test
    void eachLeaseWatchesItselfWithoutTheSetWait() throws Exception {
        String app = "pgfence-alone";
        try (SimplePool p = new SimplePool(withApp(app))) {
            Fence f = new Fence(p);
            f.watchEachLeaseAlone();
            try (Lease a = f.acquire("alone:a", Duration.ofSeconds(30), Duration.ZERO)) {
                Lease b = f.acquire("alone:b", Duration.ofSeconds(30), Duration.ZERO);
                waitFor(() -> waits(app) == 2, 5000, "two watchdogs wait");
                // Each was taken on the connection that then watches it: two connections
                // borrowed, both kept (fence_forget_token is not used, as 1.2 has none).
                assertEquals(2, p.borrowed.get(), "one connection a lease");
                assertEquals(0, p.onEachIdle("SELECT 1").size(), "each kept by its lease");
                value("SELECT fence_break('alone:b')");
                assertEquals(How.BROKEN, b.lost().get(1, TimeUnit.SECONDS).how());
                assertFalse(a.lost().isDone());
                assertThrows(LeaseLostException.class, b::close);
            }
        }
    }

    /** The pooled connection goes back carrying no token, in autocommit; LF003 is classified. */
    @Test
    void pooledConnectionCarriesNoToken() throws Exception {
        try (SimplePool one = new SimplePool(url)) {
            // Own connections from DriverManager: the pool serves the work alone.
            Fence f = new Fence(one, ConnectionFactory.fromUrl(url, null));
            try (Lease lease = f.acquire("pooled", Duration.ofSeconds(30), Duration.ZERO)) {
                String pid = lease.inTransaction(c -> {
                    assertFalse(c.getAutoCommit());
                    assertEquals(String.valueOf(lease.token()), value(c, "SELECT fence_current_token()"));
                    SQLException refused = assertThrows(SQLException.class, c::commit);
                    assertEquals("0A000", refused.getSQLState());
                    update(c, "INSERT INTO notes (body) VALUES ('fenced')");
                    return value(c, "SELECT pg_backend_pid()");
                });
                assertEquals(String.valueOf(lease.token()),
                    value("SELECT fence::bigint FROM notes WHERE body = 'fenced'"), "the write carried the token");
                try (Connection c = one.getConnection()) {
                    assertEquals(pid, value(c, "SELECT pg_backend_pid()"), "the same pooled connection");
                    assertTrue(c.getAutoCommit(), "autocommit is back");
                    assertNull(value(c, "SELECT fence_current_token()"), "no token in effect");
                    SQLException e = assertThrows(SQLException.class,
                        () -> update(c, "INSERT INTO notes (body) VALUES ('unfenced')"));
                    SQLException f3 = FenceException.classify(e);
                    TokenRequiredException t = assertInstanceOf(TokenRequiredException.class, f3);
                    assertEquals("LF003", t.getSQLState());
                    assertEquals(e, t.getCause());
                }
            }
        }
        assertEquals("0", value("SELECT count(*) FROM notes WHERE body = 'unfenced'"));
    }

    /** A killed holder's lease ends by its TTL: refused at once, granted within it. */
    /**
     * A lease through PgBouncer in transaction mode (PGFENCE_TEST_PGBOUNCER_URL, one server
     * connection for all its clients): renewals, the transactions and the release go through it,
     * on pgJDBC connections with prepareThreshold=0 (PgBouncer 1.18 keeps no prepared
     * statements); the lease's own connection goes straight to the server.
     */
    @Test
    void leaseThroughTransactionPooling() throws Exception {
        String bouncer = System.getenv("PGFENCE_TEST_PGBOUNCER_URL");
        assertNotNull(bouncer, "PGFENCE_TEST_PGBOUNCER_URL names a PgBouncer in transaction mode");
        sql("DROP TABLE IF EXISTS pooled_jobs");
        sql("CREATE TABLE pooled_jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0)");
        sql("INSERT INTO pooled_jobs VALUES (1, 'pending')");
        sql("SELECT fence_protect('pooled_jobs', require_token => true)");
        try (SimplePool through = new SimplePool(bouncer + "&prepareThreshold=0")) {
            Fence f = new Fence(through, ConnectionFactory.fromUrl(url, null));
            Set<String> backends = new HashSet<>();
            Lease lease = f.acquire("pgbouncer", Duration.ofSeconds(1), Duration.ZERO);
            try (lease) {
                for (int i = 0; i < 6; i++) {
                    Thread.sleep(400);
                    String step = "pooled " + i;
                    backends.add(lease.inTransaction(c -> {
                        try (PreparedStatement ps = c.prepareStatement("UPDATE pooled_jobs SET result = ? WHERE id = 1")) {
                            ps.setString(1, step);
                            assertEquals(1, ps.executeUpdate());
                        }
                        return value(c, "SELECT pg_backend_pid()");
                    }));
                }
                // 2.4 s of a 1 s lease: renewals through PgBouncer kept it.
                assertFalse(lease.isLost(), "still held after 2.4 s");
                assertFalse(lease.isSuspended(), "not suspended");
                assertEquals("held", value("SELECT fence_lease_status('pgbouncer', " + lease.token() + ")"));
            }
            assertEquals(How.RELEASED, lease.lost().get(1, TimeUnit.SECONDS).how(), "close() released it");
            assertEquals("released", value("SELECT fence_lease_status('pgbouncer', " + lease.token() + ")"));
            assertEquals(1, backends.size(), "PgBouncer's one server connection served every transaction");
            assertEquals("pooled 5|" + lease.token(), value("SELECT result || '|' || fence::bigint FROM pooled_jobs"));

            // The next transaction on the pool, on the same server connection, carries no token.
            try (Connection c = through.getConnection()) {
                c.setAutoCommit(false);
                try {
                    assertTrue(backends.contains(value(c, "SELECT pg_backend_pid()")), "the same server connection");
                    assertNull(value(c, "SELECT fence_current_token()"), "no token in effect");
                    SQLException e = assertThrows(SQLException.class,
                        () -> update(c, "UPDATE pooled_jobs SET result = 'no token' WHERE id = 1"));
                    TokenRequiredException t = assertInstanceOf(TokenRequiredException.class, FenceException.classify(e));
                    assertEquals("LF003", t.getSQLState());
                } finally {
                    c.rollback();
                    c.setAutoCommit(true);
                }
            }
        }
        assertEquals("pooled 5", value("SELECT result FROM pooled_jobs"));
    }

    @Test
    void killedHoldersLeaseExpires() throws Exception {
        Process a = worker("job:killed", 2000);
        BufferedReader out = new BufferedReader(new InputStreamReader(a.getInputStream(), StandardCharsets.UTF_8));
        long tokenA;
        try {
            String first = out.readLine();
            assertNotNull(first, "the worker printed its token");
            tokenA = Long.parseLong(first.substring(6));
        } finally {
            a.destroyForcibly();
        }
        assertTrue(a.waitFor(10, TimeUnit.SECONDS));
        long killed = System.nanoTime();
        LeaseUnavailableException busy = assertThrows(LeaseUnavailableException.class,
            () -> fence.acquire("job:killed", Duration.ofSeconds(30), Duration.ZERO));
        assertEquals("55P03", busy.getSQLState());
        assertEquals("held", value("SELECT fence_lease_status('job:killed', " + tokenA + ")"),
            "a detached lease outlives its process");
        LeaseUnavailableException timedOut = assertThrows(LeaseUnavailableException.class,
            () -> fence.acquire("job:killed", Duration.ofSeconds(30), Duration.ofMillis(200)));
        assertEquals("55P03", ((SQLException) timedOut.getCause()).getSQLState(), "fence_lease's wait passed");
        // Waiting as long as it takes (bounded here by the test). The wait outlasts a third of
        // the 3 s TTL, so the grant is followed by a renewal on the lease's own connection.
        Lease b = assertTimeoutPreemptively(Duration.ofSeconds(10),
            () -> fence.acquire("job:killed", Duration.ofSeconds(3)));
        try (b) {
            long took = (System.nanoTime() - killed) / 1_000_000;
            assertTrue(b.token() > tokenA);
            assertTrue(took < 2500, "granted within the TTL of the killed holder: " + took + " ms");
            assertEquals("superseded", value("SELECT fence_lease_status('job:killed', " + tokenA + ")"),
                "the old token was taken over, never released");
        }
    }

    /**
     * A server restart ends every lease: the watchdog reconnects, sees another start time, and
     * the lease is lost with CONNECTION. PGFENCE_TEST_RESTART is a shell command that restarts the
     * server (skipped without it). Last, as it breaks the other tests' connections.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void serverRestartLosesTheLease() throws Exception {
        String restart = System.getenv("PGFENCE_TEST_RESTART");
        Assumptions.assumeTrue(restart != null && !restart.isBlank(), "PGFENCE_TEST_RESTART is not set");
        try (SimplePool own = new SimplePool(url)) {
            Fence f = new Fence(own, ConnectionFactory.fromUrl(url, null));
            Lease lease = f.acquire("restart:me", Duration.ofSeconds(30), Duration.ZERO);
            Process p = new ProcessBuilder("sh", "-c", restart).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "the server restarted");
            LeaseLostException lost = lease.lost().get(15, TimeUnit.SECONDS);
            assertEquals(How.CONNECTION, lost.how());
            assertEquals(How.CONNECTION,
                assertThrows(LeaseLostException.class, () -> lease.inTransaction(c -> 1)).how());
            assertEquals(How.CONNECTION, assertThrows(LeaseLostException.class, lease::close).how());
            try (Lease again = f.acquire("restart:me", Duration.ofSeconds(30), Duration.ZERO)) {
                assertTrue(again.token() > lease.token(), "the counter goes on across the restart");
            }
        }
    }

    // ------------------------------------------------------------------------ helpers

    interface Condition {
        boolean holds() throws Exception;
    }

    static void waitFor(Condition c, long millis, String what) throws Exception {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!c.holds()) {
            assertTrue(System.nanoTime() < until, what);
            Thread.sleep(10);
        }
    }

    static Process worker(String key, long ttlMillis) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
            System.getProperty("java.home") + "/bin/java", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
            "-cp", System.getProperty("java.class.path"), Worker.class.getName(), key, Long.toString(ttlMillis));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        return pb.start();
    }

    static void signal(Process p, String sig) throws Exception {
        if (p.isAlive()) {
            new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start().waitFor();
        }
    }

    static void sql(String q) throws SQLException {
        try (Statement s = admin.createStatement()) {
            s.execute(q);
        }
    }

    static String value(String q) throws SQLException {
        return value(admin, q);
    }

    static String value(Connection c, String q) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(q)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    static int update(Connection c, String q) throws SQLException {
        try (Statement s = c.createStatement()) {
            return s.executeUpdate(q);
        }
    }
}
