-- Registration tokens: what a GPU host uses to register itself (and re-register after a reboot) in one pool,
-- and nothing else. Stored like tenant API keys (0003): a short random prefix to find the row by, and the
-- SHA-256 of the whole token; the token itself is shown once, when it is created.

CREATE TABLE registration_tokens (
  id TEXT PRIMARY KEY,              -- rt_<16 hex>
  pool TEXT NOT NULL,               -- the one pool the token registers into
  prefix TEXT NOT NULL UNIQUE,      -- the token's public part, for lookup and for lists
  hash TEXT NOT NULL,               -- SHA-256 of the whole token, hex
  label TEXT,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,   -- every token ends: a host kit left on a disk stops working by itself
  revoked_at_ms INTEGER,
  last_used_at_ms INTEGER,
  last_instance_id TEXT             -- the instance the token last registered, for the operator's list
);
CREATE INDEX registration_tokens_pool ON registration_tokens (pool, created_at_ms);
