-- Stores a leader's outcome, frees its lease and wakes the waiters, if the caller still owns it.
-- KEYS[1] lease   KEYS[2] result or error (whichever the outcome is)   KEYS[3] waiters
-- ARGV[1] owner token   ARGV[2] payload   ARGV[3] outcome TTL (ms, 0 = store nothing)
-- ARGV[4] notice channel   ARGV[5] business key (the notice message)
-- Returns 1 when completed, 0 when the lease is lost (nothing stored).

--#include flight-lease

if not holdsLease(KEYS[1]) then
  return 0
end
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
freeLease(KEYS[1], KEYS[3], ARGV[4], ARGV[5])
return 1
