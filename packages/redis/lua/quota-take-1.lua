-- Counts one new record for a scope in a fixed window, unless the limit is reached.
-- KEYS[1]  counter                <prefix>quota:{<scope>}:<window start ms>
-- ARGV[1]  limit                  positive integer
-- ARGV[2]  counter TTL (ms)       at least the window, so the counter outlives it
-- Returns 1 when counted, 0 when the limit was already reached (nothing counted).

local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if count > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
