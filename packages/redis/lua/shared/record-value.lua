-- Shared fragment (`--#include record-value`): the record as one string value, so that one
-- `SET … NX GET` both claims a record and reads the one already there.
--
--   <kind><fence> <leaseEnd> <createdAt> <retention> <digestLen> <serviceLen> <identityLen> <ownerToken>\n
--   <digest><service><identity>[<responseStatus> <bodyKind> <headersLen>\n<headers><body>]
--
-- kind is `p` (in progress) or `c` (completed, followed by the response); times are Redis
-- milliseconds; lengths count bytes. The store writes everything after `<createdAt>` (the record
-- tail, ARGV of the begin scripts) and decodes replies itself: scripts only read the kind, fence,
-- lease end, retention and owner token, with one pattern match each.

-- The value of an in-progress record: what a begin writes.
local function inProgressValue(fence, leaseEnd, nowMs, tail)
  return 'p' .. fence .. ' ' .. integer(leaseEnd) .. ' ' .. integer(nowMs) .. tail
end

-- Whether a record value is live at `nowMs`: completed, or in progress with its lease running.
-- An in-progress record whose lease ended is abandoned: any begin takes it over.
local function isLive(value, nowMs)
  local leaseEnd = string.match(value, '^p%d+ (%d+)')
  return not leaseEnd or tonumber(leaseEnd) > nowMs
end

-- The fence, retention and owner token of an in-progress record value held by the caller's
-- lease (owner token ARGV[1], fence ARGV[2]); nil otherwise. The lease may have expired, as long
-- as nobody took the record over since (the fence, not the clock, decides who may confirm).
local function heldValue(value)
  if not value then
    return nil
  end
  local fence, retention, token = string.match(value, '^p(%d+) %d+ %d+ (%d+) %d+ %d+ %d+ ([^\n]*)\n')
  if fence ~= ARGV[2] or token ~= ARGV[1] then
    return nil
  end
  return fence, tonumber(retention)
end
