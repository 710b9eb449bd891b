package dev.pgfence;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A holder in a JVM of its own, which the tests freeze (SIGSTOP) or kill.
 *
 * <p>{@code Worker KEY TTL_MS}: takes the lease, writes "started by A" to jobs row 1 in a
 * transaction of the lease, prints "token N", then waits for a line on stdin. When it comes, it
 * writes "done by A" the same way and prints how that went ("late write: ok", or the exception's
 * class, and how the lease was lost), then what lost() completed with.
 */
public final class Worker {
    public static void main(String[] args) throws Exception {
        String key = args[0];
        Duration ttl = Duration.ofMillis(Long.parseLong(args[1]));
        try (SimplePool pool = new SimplePool(System.getenv("PGFENCE_TEST_URL"))) {
            Fence fence = new Fence(pool);
            Lease lease = fence.acquire(key, ttl, Duration.ofSeconds(10));
            write(lease, "started by A");
            System.out.println("token " + lease.token());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            in.readLine();
            try {
                write(lease, "done by A");
                System.out.println("late write: ok");
            } catch (LeaseLostException e) {
                System.out.println("late write: LeaseLostException " + e.how());
            } catch (StaleTokenException e) {
                System.out.println("late write: StaleTokenException " + e.getSQLState());
            } catch (SQLException e) {
                System.out.println("late write: " + e.getClass().getSimpleName() + " " + e.getSQLState());
            }
            try {
                System.out.println("lost: " + lease.lost().get(5, TimeUnit.SECONDS).how());
            } catch (java.util.concurrent.TimeoutException e) {
                System.out.println("lost: not completed");
            }
            try {
                lease.close();
            } catch (LeaseLostException e) {
                System.out.println("close: " + e.how());
            }
            System.out.flush();
        }
    }

    private static void write(Lease lease, String result) throws SQLException {
        lease.inTransaction(c -> {
            try (PreparedStatement ps = c.prepareStatement("UPDATE jobs SET result = ? WHERE id = 1")) {
                ps.setString(1, result);
                return ps.executeUpdate();
            }
        });
    }

    private Worker() {
    }
}
