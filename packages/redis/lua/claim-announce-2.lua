-- Writes (or renews) one instance's entry for one claim and returns every other live entry, in
-- one atomic step: two services announcing the same operation at once each see the other, or the
-- later one sees the earlier. Entries whose expiry has passed are deleted on the way. Both keys
-- live as long as their longest-lived entry, so an operation nobody renews disappears by itself.
-- KEYS[1]  entries hash           <prefix>claims:{<mechanism>:<operation>}:entries
--                                 (field: instance id, value: the claim as JSON)
-- KEYS[2]  expiries sorted set    <prefix>claims:{<mechanism>:<operation>}:expiry
--                                 (member: instance id, score: expiry in ms of Redis' clock)
-- ARGV[1]  instance id
-- ARGV[2]  the claim as JSON
-- ARGV[3]  TTL (ms)               positive integer
-- Returns the JSON of every other instance's live entry (the caller compares the owners).

--#include redis-clock

local _, nowMs = redisTime()
local now = integer(nowMs)

local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, instance in ipairs(expired) do
  redis.call('HDEL', KEYS[1], instance)
end
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
end

redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], integer(nowMs + tonumber(ARGV[3])), ARGV[1])

local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local keep = integer(tonumber(last[2]) - nowMs)
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)

local others = {}
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  if entries[i] ~= ARGV[1] then
    others[#others + 1] = entries[i + 1]
  end
end
return others
