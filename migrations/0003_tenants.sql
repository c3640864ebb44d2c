-- Tenants and their API keys. A key is stored only as its SHA-256 (hex) with a short random prefix to
-- find it by; the key itself is shown once, when it is issued.

CREATE TABLE tenants (
  id TEXT PRIMARY KEY,              -- tn_<16 hex>
  name TEXT NOT NULL UNIQUE,
  config TEXT NOT NULL,             -- JSON, src/core/tenant.ts TenantConfigSchema
  created_at_ms INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,              -- key_<16 hex>
  tenant_id TEXT NOT NULL REFERENCES tenants (id),
  prefix TEXT NOT NULL UNIQUE,      -- the key's public part, for lookup and for lists
  hash TEXT NOT NULL,               -- SHA-256 of the whole key, hex
  label TEXT,
  created_at_ms INTEGER NOT NULL,
  last_used_at_ms INTEGER,
  -- NULL while valid; when set, the key stops working at this time (now for a revocation, later for a
  -- rotation's grace period).
  expires_at_ms INTEGER,
  replaced_by TEXT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE INDEX workflow_traces_tenant_created ON workflow_traces (tenant, created_at_ms);
