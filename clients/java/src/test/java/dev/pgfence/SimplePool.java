package dev.pgfence;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A minimal connection pool for the tests (no pool library is packaged here): idle connections
 * are reused last in, first out, so the next borrower gets the connection given back last.
 */
final class SimplePool implements DataSource, AutoCloseable {
    private final String url;
    private final Deque<Connection> idle = new ArrayDeque<>();
    /** While true, no connection is handed out: the server is out of reach, as far as a borrower can tell. */
    volatile boolean down;
    /** Connections opened so far, and handed out so far. */
    final AtomicInteger opened = new AtomicInteger();
    final AtomicInteger borrowed = new AtomicInteger();
    /**
     * A statement whose text contains this is run, and then its answer is lost: the connection
     * breaks (08006) as the statement returns, once.
     */
    volatile String loseAnswerOf;
    /**
     * A statement whose text contains this is run, and then it fails as a cancelled statement
     * does (57014), once; the connection stays usable.
     */
    volatile String cancelAnswerOf;
    /** The text of each statement prepared on a connection of this pool, in order. */
    final List<String> prepared = Collections.synchronizedList(new ArrayList<>());

    SimplePool(String url) {
        this.url = url;
    }

    @Override
    public Connection getConnection() throws SQLException {
        if (down) {
            throw new SQLException("the test pool is down", "08001");
        }
        Connection real;
        synchronized (idle) {
            real = idle.pollFirst();
        }
        if (real == null || real.isClosed()) {
            real = DriverManager.getConnection(url);
            opened.incrementAndGet();
        }
        borrowed.incrementAndGet();
        Connection physical = real;
        boolean[] returned = {false};
        return (Connection) Proxy.newProxyInstance(SimplePool.class.getClassLoader(),
            new Class<?>[] {Connection.class}, (p, m, args) -> {
                switch (m.getName()) {
                    case "close":
                        if (!returned[0]) {
                            returned[0] = true;
                            if (!physical.isClosed()) {
                                synchronized (idle) {
                                    idle.addFirst(physical);
                                }
                            }
                        }
                        return null;
                    case "isClosed":
                        return returned[0] || physical.isClosed();
                    case "equals":
                        return p == args[0];
                    case "hashCode":
                        return System.identityHashCode(p);
                    case "toString":
                        return "pooled " + physical;
                    default:
                        if (returned[0]) {
                            throw new SQLException("connection given back to the pool", "08003");
                        }
                        if (m.getName().equals("prepareStatement")) {
                            prepared.add((String) args[0]);
                        }
                        Object result;
                        try {
                            result = m.invoke(physical, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                        String lose = loseAnswerOf;
                        if (lose != null && m.getName().equals("prepareStatement") && ((String) args[0]).contains(lose)) {
                            loseAnswerOf = null;
                            return losingAnswer((PreparedStatement) result, physical, null);
                        }
                        String cancel = cancelAnswerOf;
                        if (cancel != null && m.getName().equals("prepareStatement") && ((String) args[0]).contains(cancel)) {
                            cancelAnswerOf = null;
                            return losingAnswer((PreparedStatement) result, physical, "57014");
                        }
                        return result;
                }
            });
    }

    /** Makes the pool hold at least {@code n} idle connections. */
    void fill(int n) throws SQLException {
        List<Connection> taken = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                taken.add(getConnection());
            }
        } finally {
            for (Connection c : taken) {
                c.close();
            }
        }
    }

    /** The first column of {@code query}'s first row on each idle connection (none is borrowed meanwhile). */
    List<String> onEachIdle(String query) throws SQLException {
        List<String> values = new ArrayList<>();
        synchronized (idle) {
            for (Connection c : idle) {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
                    values.add(rs.next() ? rs.getString(1) : null);
                }
            }
        }
        return values;
    }

    /**
     * {@code ps}, whose execution runs on the server and then breaks {@code physical}, or with
     * {@code sqlState} fails with it instead, leaving the connection as it is.
     */
    private static PreparedStatement losingAnswer(PreparedStatement ps, Connection physical, String sqlState) {
        return (PreparedStatement) Proxy.newProxyInstance(SimplePool.class.getClassLoader(),
            new Class<?>[] {PreparedStatement.class}, (p, m, args) -> {
                Object result;
                try {
                    result = m.invoke(ps, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
                if (m.getName().startsWith("execute")) {
                    if (sqlState != null) {
                        throw new SQLException("the test pool cancelled the statement", sqlState);
                    }
                    physical.close();
                    throw new SQLException("the test pool lost the answer", "08006");
                }
                return result;
            });
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public void close() {
        synchronized (idle) {
            for (Connection c : idle) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // closing anyway
                }
            }
            idle.clear();
        }
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
