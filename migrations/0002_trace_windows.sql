-- The wall-clock arrival of a workflow (ms since the epoch), so an export window can be given as dates
-- whatever the pool's time scale; arrival_s stays on the pool clock for replays.
ALTER TABLE workflow_traces ADD COLUMN created_at_ms INTEGER;
CREATE INDEX workflow_traces_pool_created ON workflow_traces (pool, created_at_ms);
