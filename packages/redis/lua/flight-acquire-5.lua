-- Decides, in one round trip, what a SingleFlight caller does next.
-- KEYS[1] lease   KEYS[2] result   KEYS[3] error   KEYS[4] fence   KEYS[5] waiters
-- ARGV[1] owner token   ARGV[2] lease TTL (ms)
-- Returns {'cached', payload} | {'failed', payload} | {'leader', fence} |
--   {'busy', pttl, holder}   holder: the owner token of the lease, which may name its service

--#include redis-clock

local result = redis.call('GET', KEYS[2])
if result then
  return { 'cached', result }
end

local failure = redis.call('GET', KEYS[3])
if failure then
  return { 'failed', failure }
end

if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  -- A missing counter is seeded from the server clock in microseconds, so it can expire with its
  -- lease (no key left behind per business key) and still only ever grow: a new leader's token is
  -- above any earlier one unless a single key saw more than one leader per microsecond.
  local fence = redis.call('INCR', KEYS[4])
  if fence == 1 then
    local seed = microseconds((redisTime()))
    redis.call('SET', KEYS[4], seed, 'PX', ARGV[2])
    return { 'leader', tonumber(seed) }
  end
  redis.call('PEXPIRE', KEYS[4], ARGV[2])
  return { 'leader', fence }
end

-- Somebody waits: the leader's completion publishes a notice only when this flag is there, so a
-- flight nobody waits for costs no message to every subscribed process. It lives as long as the
-- lease (renewals extend both); a lease without expiry leaves waiters to poll.
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 0 then
  redis.call('SET', KEYS[5], '1', 'PX', pttl)
end
return { 'busy', pttl, redis.call('GET', KEYS[1]) }
