-- Shared fragment (`--#include flight-lease`): the owner check and hand-over of a flight lease.

-- Whether the caller (owner token ARGV[1]) still holds `lease`.
local function holdsLease(lease)
  return redis.call('GET', lease) == ARGV[1]
end

-- Frees `lease` and, only if a follower waits (its `waiters` flag is set), publishes `message`
-- on `channel` to wake it.
local function freeLease(lease, waiters, channel, message)
  redis.call('DEL', lease)
  if redis.call('DEL', waiters) == 1 then
    redis.call('PUBLISH', channel, message)
  end
end
