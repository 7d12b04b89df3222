-- Frees a lease without storing anything (a transient failure) and wakes the waiters, so one of
-- them may lead, if the caller still owns it.
-- KEYS[1] lease   KEYS[2] waiters
-- ARGV[1] owner token   ARGV[2] notice channel   ARGV[3] business key (the notice message)
-- Returns 1 when released, 0 when the lease is lost.

--#include flight-lease

if not holdsLease(KEYS[1]) then
  return 0
end
freeLease(KEYS[1], KEYS[2], ARGV[2], ARGV[3])
return 1
