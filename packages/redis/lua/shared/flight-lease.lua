-- Shared fragment (`--#include flight-lease`): the one key of a flight and its owner checks.
-- The key holds, tagged by its first character, either
--   'L' .. waiters .. owner   a lease: waiters is '1' once a follower waits for it, else '0'
--   'R' .. payload            a cached result
--   'E' .. payload            a cached deterministic error
-- so one `SET NX GET` tells a caller what is there and takes the lease when nothing is.

-- The lease value of the caller (owner token ARGV[1]) if it still holds `key`, else nil.
local function heldLease(key)
  local held = redis.call('GET', key)
  if held == 'L0' .. ARGV[1] or held == 'L1' .. ARGV[1] then
    return held
  end
  return nil
end

-- Whether a lease value says a follower waits: only then is a notice worth publishing, so a
-- flight nobody waits for costs no message to every subscribed process.
local function waitedFor(lease)
  return string.sub(lease, 2, 2) == '1'
end
