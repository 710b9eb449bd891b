'use strict';
// pgfence: fence's leases with fencing tokens, for node-postgres.
const { Fence } = require('./lib/fence');
const { Lease } = require('./lib/lease');
const { Breaker, BreakerOpenError } = require('./lib/breaker');
const errors = require('./lib/errors');

module.exports = {
  Fence,
  Lease,
  Breaker,
  BreakerOpenError,
  FenceError: errors.FenceError,
  StaleTokenError: errors.StaleTokenError,
  LeaseNotHeldError: errors.LeaseNotHeldError,
  TokenRequiredError: errors.TokenRequiredError,
  LeaseUnavailableError: errors.LeaseUnavailableError,
  LeaseLostError: errors.LeaseLostError,
  classify: errors.classify,
  LOST_HOWS: errors.HOWS,
};
