-- Deletes a cached result or error (an operator's eviction), never a running lease, and always
-- publishes a notice: every process drops its near-cached copy of the key on it.
-- KEYS[1] flight key
-- ARGV[1] notice channel   ARGV[2] business key (the notice message)
-- Returns 1 when an outcome was deleted, 0 when none was cached.

local tag = redis.call('GETRANGE', KEYS[1], 0, 0)
if tag ~= 'R' and tag ~= 'E' then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
