/**
 * Re-sets a Durable Object's stored alarm when the object is constructed. Cloudflare keeps alarms across
 * restarts and deploys, but the local runtime (workerd under wrangler dev) does not re-schedule them after
 * a restart although storage still holds them (workerd#2927, workers-sdk#5948): an object woken by a
 * request then re-arms itself. Setting the time it already has may be taken as no change, so the alarm
 * moves by a millisecond. Harmless in production. `latestMs` brings a stored alarm (or none) forward to
 * at most that time.
 */
export async function rearmStoredAlarm(storage: DurableObjectStorage, latestMs?: number): Promise<void> {
  const at = await storage.getAlarm();
  if (at === null) {
    if (latestMs !== undefined) await storage.setAlarm(latestMs);
    return;
  }
  const next = latestMs === undefined ? at : Math.min(at, latestMs);
  await storage.setAlarm(next === at ? at + 1 : next);
}
