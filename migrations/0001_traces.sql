-- hexflow's own D1 database (binding TRACES): what ran, for the tuner and for export.
-- Times are pool-clock seconds (emulated time on an emulated pool), as the workflow view reports them.

CREATE TABLE workflow_traces (
  workflow_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  pool TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  arrival_s REAL NOT NULL,
  finished_s REAL,
  slo_s REAL NOT NULL,
  latency_s REAL,
  slo_met INTEGER,
  policy TEXT,
  alpha_version INTEGER,
  error_code TEXT,
  recorded_at_ms INTEGER NOT NULL
);
CREATE INDEX workflow_traces_pool_arrival ON workflow_traces (pool, arrival_s);
CREATE INDEX workflow_traces_recorded ON workflow_traces (recorded_at_ms);

CREATE TABLE call_traces (
  call_id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  tenant TEXT NOT NULL,
  pool TEXT NOT NULL,
  stage_index INTEGER NOT NULL,
  step TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER,
  instance_id TEXT NOT NULL,
  gpu TEXT,
  released_s REAL NOT NULL,
  enqueued_s REAL,
  admitted_s REAL,
  finished_s REAL,
  deadline_s REAL NOT NULL,
  budget_s REAL NOT NULL,
  met INTEGER,
  alpha_version INTEGER,
  error TEXT,
  recorded_at_ms INTEGER NOT NULL
);
CREATE INDEX call_traces_workflow ON call_traces (workflow_id);
CREATE INDEX call_traces_recorded ON call_traces (recorded_at_ms);

CREATE TABLE tuning_decisions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  pool TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  reason TEXT NOT NULL,            -- "cron" | "degradation" | "manual"
  window_start_s REAL,
  window_end_s REAL,
  workflows INTEGER NOT NULL,
  arrival_rate REAL,
  current_alpha REAL NOT NULL,
  best_alpha REAL,
  gain REAL,                       -- simulated relative improvement of best over current (P95), e.g. 0.08
  installed INTEGER NOT NULL,      -- 1 when the coordinator took the new alpha
  alpha_version INTEGER,
  skipped TEXT,                    -- why nothing was simulated (too few workflows, alpha pinned), else NULL
  curve TEXT NOT NULL,             -- JSON [{alpha, p95S, attainment}...]
  cpu_ms REAL
);
CREATE INDEX tuning_decisions_pool_at ON tuning_decisions (pool, at_ms);
