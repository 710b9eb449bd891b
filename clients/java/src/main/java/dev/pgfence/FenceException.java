package dev.pgfence;

import java.sql.SQLException;

/**
 * The base class of every exception pgfence throws.
 *
 * <p>It is an {@link SQLException}, so code that handles JDBC errors handles these too. When a
 * driver's exception is the reason, it is kept as the {@linkplain #getCause() cause} and its
 * SQLSTATE is this exception's {@linkplain #getSQLState() SQLSTATE}.
 */
public class FenceException extends SQLException {
    private static final long serialVersionUID = 1L;

    /** SQLSTATE of a stale fencing token: a newer holder has written the row. */
    public static final String STALE_TOKEN = "LF001";
    /** SQLSTATE of a token that is not the current live token of its lease. */
    public static final String LEASE_NOT_HELD = "LF002";
    /** SQLSTATE of a write without a token to a table that requires one. */
    public static final String TOKEN_REQUIRED = "LF003";
    /** PostgreSQL's lock_not_available, which fence_lease raises when its timeout passes. */
    public static final String LOCK_NOT_AVAILABLE = "55P03";

    protected FenceException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

    /**
     * The pgfence exception a driver's exception means, or the exception itself.
     *
     * <p>LF001, LF002 and LF003 become {@link StaleTokenException}, {@link LeaseNotHeldException}
     * and {@link TokenRequiredException}, each with {@code e} as its cause; a FenceException, and
     * any other SQLSTATE, is returned as it is. Use it on connections pgfence did not hand you.
     */
    public static SQLException classify(SQLException e) {
        if (e instanceof FenceException || e.getSQLState() == null) {
            return e;
        }
        switch (e.getSQLState()) {
            case STALE_TOKEN:
                return new StaleTokenException(e);
            case LEASE_NOT_HELD:
                return new LeaseNotHeldException(e);
            case TOKEN_REQUIRED:
                return new TokenRequiredException(e);
            default:
                return e;
        }
    }

    /** The first line of a driver's message (pgJDBC appends the detail and hint lines). */
    static String firstLine(SQLException e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) {
            return e.getClass().getSimpleName();
        }
        int nl = m.indexOf('\n');
        return (nl < 0 ? m : m.substring(0, nl)).strip();
    }
}
