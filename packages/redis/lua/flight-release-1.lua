-- Frees a lease without storing anything (a transient failure) and wakes the waiters, so one of
-- them may lead, if the caller still owns it.
-- KEYS[1] flight key
-- ARGV[1] owner token   ARGV[2] notice channel   ARGV[3] business key (the notice message)
-- Returns 1 when released, 0 when the lease is lost.

--#include flight-lease

local lease = heldLease(KEYS[1])
if not lease then
  return 0
end
redis.call('DEL', KEYS[1])
if waitedFor(lease) then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return 1
