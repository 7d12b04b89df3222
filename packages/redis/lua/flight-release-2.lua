-- Frees a lease without storing anything (a transient failure) and wakes the waiters, so one of
-- them may lead, if the caller still owns it.
-- KEYS[1] lease   KEYS[2] waiters
-- ARGV[1] owner token   ARGV[2] notice channel   ARGV[3] business key (the notice message)
-- Returns 1 when released, 0 when the lease is lost.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if redis.call('DEL', KEYS[2]) == 1 then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return 1
