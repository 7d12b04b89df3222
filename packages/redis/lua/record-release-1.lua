-- Deletes an in-progress record if the caller's lease still holds it (a transient failure: the
-- next caller runs the work again). A completed record is never deleted this way.
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- Returns 1 when deleted, 0 when the lease was lost or the record is completed.

--#include redis-clock
--#include record-value

if not heldValue(redis.call('GET', KEYS[1])) then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
