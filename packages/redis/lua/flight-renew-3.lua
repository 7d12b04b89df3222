-- Extends a lease, its fencing counter and its waiters flag if the caller still owns the lease.
-- KEYS[1] lease   KEYS[2] fence   KEYS[3] waiters
-- ARGV[1] owner token   ARGV[2] lease TTL (ms)
-- Returns 1 when renewed, 0 when the lease is lost.

--#include flight-lease

if not holdsLease(KEYS[1]) then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
