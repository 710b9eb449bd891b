package dev.pgfence;

import java.sql.SQLException;

/** SQLSTATE LF001: the write's token is below the row's fence; a newer holder has written it. Stop, and take the lease again before retrying. */
public class StaleTokenException extends FenceException {
    private static final long serialVersionUID = 1L;

    /** Wraps the driver's exception, keeping it as the cause and its SQLSTATE. */
    public StaleTokenException(SQLException cause) {
        super(firstLine(cause), cause.getSQLState() != null ? cause.getSQLState() : STALE_TOKEN, cause);
    }
}
