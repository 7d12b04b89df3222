-- Frees a lease whoever holds it (an operator's force-release) and wakes the waiters. The holder's
-- owner token is gone, so it can no longer renew, complete or release; the fence counter stays,
-- so the next leader's token is above the released holder's. A cached outcome is left alone.
-- KEYS[1] lease   KEYS[2] waiters
-- ARGV[1] notice channel   ARGV[2] business key (the notice message)
-- Returns 1 when a lease was freed, 0 when none was held.

--#include flight-lease

if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
freeLease(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
return 1
