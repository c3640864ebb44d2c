/**
 * The degradation trigger's call to the tuner Worker (workers/tuner) through the TUNER service
 * binding. It runs after the coordinator has answered (waitUntil); a tuner that is not deployed or
 * fails is logged, and the cron tunes the pool on its next run anyway.
 */
export async function requestRetune(env: Env & { TUNER?: Fetcher }, pool: string, reason: string): Promise<void> {
  const tuner = env.TUNER;
  const token = env.ADMIN_TOKEN;
  if (tuner === undefined || token === undefined) {
    console.warn(`pool ${pool} degraded (${reason}) but no tuner is bound; waiting for the cron`);
    return;
  }
  try {
    const res = await tuner.fetch(`https://hexflow-tuner/tune?pool=${encodeURIComponent(pool)}&reason=degradation`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) console.error(`pool ${pool}: re-tune on degradation answered HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
    else await res.body?.cancel();
  } catch (e) {
    console.error(`pool ${pool}: re-tune on degradation failed`, e);
  }
}
