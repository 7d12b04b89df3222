-- Deletes an in-progress record if the caller's lease still holds it (a transient failure: the
-- next caller runs the work again). A completed record is never deleted this way.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- Returns 1 when deleted, 0 when the lease was lost or the record is completed.

--#include record-lease

if not heldRecord() then
  return 0
end

redis.call('DEL', KEYS[1])
return 1
