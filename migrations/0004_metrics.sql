-- Prometheus counters for GET /metrics (src/core/metric-increments.ts): monotonic, kept apart from the traces
-- (which are pruned after 7 days), bumped in the same D1 batch as the trace or decision they count, so they
-- count exactly once. `labels` is canonical JSON (keys sorted); histogram buckets are stored cumulatively.
CREATE TABLE metric_counters (
  name TEXT NOT NULL,
  labels TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (name, labels)
);

-- The pools /metrics scrapes for live gauges: added by instance registration and by every workflow trace.
CREATE TABLE pools (
  name TEXT PRIMARY KEY
);

-- What existed before this migration: the α history is never pruned, so its counts are exact; ended
-- workflows are counted from here on (their traces were a pruned window anyway).
INSERT INTO metric_counters (name, labels, value)
  SELECT 'hexflow_tuning_decisions_total',
         json_object('installed', CASE installed WHEN 1 THEN 'true' ELSE 'false' END, 'pool', pool, 'reason', reason),
         count(*)
  FROM tuning_decisions GROUP BY pool, reason, installed;
INSERT OR IGNORE INTO pools (name) SELECT DISTINCT pool FROM workflow_traces;
INSERT OR IGNORE INTO pools (name) SELECT DISTINCT pool FROM tuning_decisions;
