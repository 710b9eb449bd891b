package dev.pgfence;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * Where a lease's own connection comes from: the connection that takes the lease and then sleeps
 * in {@code fence_wait_lease_end} for as long as the lease is held. It is held by the lease
 * alone, never shared, and closed when the lease ends.
 */
@FunctionalInterface
public interface ConnectionFactory {
    /** A new connection (or one taken from a pool, held until it is closed). */
    Connection connect() throws SQLException;

    /** Connections from {@link DriverManager}: past a transaction pooler, straight to the server. */
    static ConnectionFactory fromUrl(String url, Properties info) {
        Properties copy = new Properties();
        if (info != null) {
            copy.putAll(info);
        }
        return () -> DriverManager.getConnection(url, copy);
    }

    /** Connections from a DataSource (a pooled one is held out of its pool while the lease lasts). */
    static ConnectionFactory from(DataSource source) {
        return source::getConnection;
    }
}
