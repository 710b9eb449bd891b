package dev.pgfence;

import java.sql.SQLException;

/** SQLSTATE LF002: the token is not the current live token of its lease (fence_assert_current, or a strict trigger). Thrown from a lease's transaction, it also marks that lease lost. */
public class LeaseNotHeldException extends FenceException {
    private static final long serialVersionUID = 1L;

    /** Wraps the driver's exception, keeping it as the cause and its SQLSTATE. */
    public LeaseNotHeldException(SQLException cause) {
        super(firstLine(cause), cause.getSQLState() != null ? cause.getSQLState() : LEASE_NOT_HELD, cause);
    }
}
