-- Counts a record identity for a scope in a fixed window, once: an identity already counted in
-- the window (a retry whose record was released) is not counted again.
-- KEYS[1]  counted identities     <prefix>quota:{<scope>}:<window start ms>:ids (a set)
-- ARGV[1]  identity               the record key hash of the identity
-- ARGV[2]  limit                  positive integer
-- ARGV[3]  set TTL (ms)           at least the window, so the set outlives it
-- Returns 1 when counted now, 2 when it was counted already, 0 when the limit was already
-- reached (nothing counted).

if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then
  return 2
end
local counted = redis.call('SCARD', KEYS[1])
if counted >= tonumber(ARGV[2]) then
  return 0
end
redis.call('SADD', KEYS[1], ARGV[1])
if counted == 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
