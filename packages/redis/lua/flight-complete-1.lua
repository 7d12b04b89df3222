-- Stores a leader's outcome in place of its lease and wakes the waiters, if the caller still
-- owns the lease.
-- KEYS[1] flight key
-- ARGV[1] owner token   ARGV[2] tagged outcome ('R' or 'E', then the payload)
-- ARGV[3] outcome TTL (ms, 0 = store nothing)   ARGV[4] notice channel
-- ARGV[5] business key (the notice message)
-- Returns 1 when completed, 0 when the lease is lost (nothing stored).

--#include flight-lease

local lease = heldLease(KEYS[1])
if not lease then
  return 0
end
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
if waitedFor(lease) then
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
return 1
