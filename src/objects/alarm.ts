/**
 * Re-sets a Durable Object's stored alarm when the object is constructed. Cloudflare keeps alarms across
 * restarts and deploys, but the local runtime (workerd under wrangler dev) does not re-schedule them after
 * a restart although storage still holds them (workerd#2927, workers-sdk#5948): an object woken by a
 * request then re-arms itself. Harmless in production, where the alarm is simply set to the time it had.
 * `latestMs` brings a stored alarm (or none) forward to at most that time.
 */
export async function rearmStoredAlarm(storage: DurableObjectStorage, latestMs?: number): Promise<void> {
  const at = await storage.getAlarm();
  const next = at === null ? latestMs : latestMs === undefined ? at : Math.min(at, latestMs);
  if (next !== undefined) await storage.setAlarm(next);
}
