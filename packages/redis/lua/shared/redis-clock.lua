-- Shared fragment (`--#include redis-clock`): Redis' own clock, the one PEXPIRE uses, so a lease
-- and its key's TTL never disagree and no client clock is compared with another.

-- The TIME reply ({ seconds, microseconds }) and the same instant in whole milliseconds.
local function redisTime()
  local time = redis.call('TIME')
  return time, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- A TIME reply in microseconds, as decimal digits (more than a double holds exactly).
local function microseconds(time)
  return time[1] .. string.format('%06d', tonumber(time[2]))
end

-- A number as decimal digits, never in exponent notation.
local function integer(n)
  return string.format('%.0f', n)
end
