package dev.pgfence;

import java.sql.SQLException;

/** SQLSTATE LF003: the table is protected with require_token, and the write carried no token. */
public class TokenRequiredException extends FenceException {
    private static final long serialVersionUID = 1L;

    /** Wraps the driver's exception, keeping it as the cause and its SQLSTATE. */
    public TokenRequiredException(SQLException cause) {
        super(firstLine(cause), cause.getSQLState() != null ? cause.getSQLState() : TOKEN_REQUIRED, cause);
    }
}
