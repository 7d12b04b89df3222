-- Extends a lease (and with it its waiters mark) if the caller still owns it.
-- KEYS[1] flight key
-- ARGV[1] owner token   ARGV[2] lease TTL (ms)
-- Returns 1 when renewed, 0 when the lease is lost.

--#include flight-lease

if not heldLease(KEYS[1]) then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
