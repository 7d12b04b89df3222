-- Uncounts a record counted by quota-take that was not created after all.
-- KEYS[1]  counter                <prefix>quota:{<scope>}:<window start ms>
-- Returns the count left. A counter that expired meanwhile is not recreated.

local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0
