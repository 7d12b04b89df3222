-- Deletes one instance's entry for one claim; the entries of other instances (replicas of the
-- same service still running) stay. The keys go once no entry is left.
-- KEYS[1]  entries hash           <prefix>claims:{<mechanism>:<operation>}:entries
-- KEYS[2]  expiries sorted set    <prefix>claims:{<mechanism>:<operation>}:expiry
-- ARGV[1]  instance id
-- Returns 1 when the instance had an entry, else 0.

local removed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
end
return removed
