-- Decides, in one round trip, what a SingleFlight caller does next (see shared/flight-lease.lua
-- for what the flight key holds).
-- KEYS[1] flight key
-- ARGV[1] owner token   ARGV[2] lease TTL (ms)
-- Returns {'cached', payload, pttl} | {'failed', payload, pttl} | {'leader', fence} |
--   {'busy', pttl, holder}   holder: the owner token of the lease, which may name its service

local found = redis.call('SET', KEYS[1], 'L0' .. ARGV[1], 'NX', 'PX', ARGV[2], 'GET')
if not found then
  -- The fence is the server clock in microseconds (decimal digits: more than a double holds
  -- exactly), read only by a new leader: it grows from one leader to the next without a counter
  -- key, as long as the Redis clock does not step back and no key sees two leaders in one
  -- microsecond (two script runs never fit in one).
  local time = redis.call('TIME')
  return { 'leader', time[1] .. string.format('%06d', tonumber(time[2])) }
end

local tag = string.sub(found, 1, 1)
if tag == 'R' then
  return { 'cached', string.sub(found, 2), redis.call('PTTL', KEYS[1]) }
end
if tag == 'E' then
  return { 'failed', string.sub(found, 2), redis.call('PTTL', KEYS[1]) }
end

-- Somebody waits: mark the lease so the leader's completion publishes a notice. The mark lives
-- in the lease value, so it expires, renews and ends with the lease. A lease without expiry
-- (set by someone else) leaves waiters to poll.
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 0 and string.sub(found, 2, 2) == '0' then
  redis.call('SET', KEYS[1], 'L1' .. string.sub(found, 3), 'XX', 'KEEPTTL')
end
return { 'busy', pttl, string.sub(found, 3) }
