-- Uncounts an identity counted by quota-take whose record was not created after all.
-- KEYS[1]  counted identities     <prefix>quota:{<scope>}:<window start ms>:ids (a set)
-- ARGV[1]  identity               the record key hash of the identity
-- Returns how many identities stay counted. A set that expired meanwhile is not recreated.

redis.call('SREM', KEYS[1], ARGV[1])
return redis.call('SCARD', KEYS[1])
