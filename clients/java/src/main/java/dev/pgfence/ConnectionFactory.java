package dev.pgfence;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * Where pgfence's own connections come from: the fence's watchdog, which sleeps in {@code
 * fence_wait_leases_end} while the fence holds leases; a lease's, which waits for a held key in
 * {@code fence_lease} and is closed once it is granted (with fence 1.2, it takes every lease and
 * then sleeps in {@code fence_wait_lease_end} for as long as the lease is held). Each is held
 * by one of them alone, never shared.
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
