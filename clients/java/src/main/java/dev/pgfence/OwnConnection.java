package dev.pgfence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A connection of pgfence's own for the watchdog of several leases: in autocommit, with the pool's
 * statement_timeout, lock_timeout and idle_in_transaction_session_timeout lifted, and both put back
 * before it is closed (it may go back to a pool).
 */
final class OwnConnection {
    final Connection c;
    private final boolean autoCommit;
    private final String[] timeouts;

    private OwnConnection(Connection c, boolean autoCommit, String[] timeouts) {
        this.c = c;
        this.autoCommit = autoCommit;
        this.timeouts = timeouts;
    }

    static OwnConnection open(Fence fence) throws SQLException {
        Connection c = fence.ownConnections().connect();
        try {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true);
            String[] was = new String[3];
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery(Lease.SQL_OWN_TIMEOUTS)) {
                rs.next();
                for (int i = 0; i < 3; i++) {
                    was[i] = rs.getString(i + 1);
                }
            }
            OwnConnection own = new OwnConnection(c, autoCommit, was);
            own.setTimeouts("0", "0", "0");
            return own;
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // Broken already.
            }
            throw e;
        }
    }

    private void setTimeouts(String... values) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(Lease.SQL_SET_TIMEOUTS)) {
            for (int i = 0; i < 3; i++) {
                ps.setString(i + 1, values[i]);
            }
            ps.execute();
        }
    }

    String serverStarted() throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_postmaster_start_time()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    void close() {
        try {
            setTimeouts(timeouts);
            c.setAutoCommit(autoCommit);
        } catch (SQLException ignored) {
            // Broken: closing is all that is left.
        }
        try {
            c.close();
        } catch (SQLException ignored) {
            // Gone already.
        }
    }
}
