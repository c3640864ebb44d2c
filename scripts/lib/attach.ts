import { z } from "zod";
import { GpuTypeSchema, type GpuType } from "../../src/core/gpu";
import { UsageError } from "./cli";
import { adminFetch } from "./admin-client";

const PoolSchema = z.object({
  policy: z.string(),
  alpha: z.number(),
  timeScale: z.number().nullable(),
  admission: z.enum(["enforce", "off"]).default("enforce"),
  instances: z.array(z.object({ id: z.string(), gpu: GpuTypeSchema, state: z.string() })),
});

export interface Target {
  url: string;
  adminToken: string;
  apiKey: string;
  pool: string;
  gpus: GpuType[];
  timeScale: number;
  setPolicy(policy: string, alpha: number | null): Promise<void>;
  stop(): Promise<void>;
}

/** Sets the pool's policy and α, and its admission control when `admission` is given. */
export function policySetter(url: string, token: string, pool: string, admission?: "enforce" | "off"): Target["setPolicy"] {
  return async (policy, alpha) => {
    const body = { policy, ...(alpha === null ? {} : { alpha }), ...(admission === undefined ? {} : { admission }) };
    const res = await adminFetch(url, token, `/pools/${pool}/policy`, { method: "PUT", body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`setting policy ${policy} failed: ${res.status} ${await res.text()}`);
  };
}

/**
 * A stack someone else started (`npm start`): its fleet and clock are read from the pool, and its
 * policy and α are put back as they were when the benchmark ends.
 */
export async function attachStack(url: string, adminToken: string | undefined, apiKey: string, pool: string, admission: "enforce" | "off"): Promise<Target> {
  if (adminToken === undefined || adminToken === "") throw new UsageError("--url needs the stack's admin token: --admin-token or HEXFLOW_ADMIN_TOKEN");
  let res: Response;
  try {
    res = await adminFetch(url, adminToken, `/pools/${pool}`);
  } catch {
    throw new UsageError(`no hexflow at ${url}: run \`npm start\` first`);
  }
  if (res.status === 401) throw new UsageError(`the admin token was refused by ${url}`);
  const parsed = PoolSchema.safeParse(await res.json());
  if (!res.ok || !parsed.success) throw new UsageError(`could not read pool "${pool}" at ${url} (status ${res.status})`);
  const active = parsed.data.instances.filter((i) => i.state === "active");
  if (active.length === 0 || parsed.data.timeScale === null) throw new UsageError(`pool "${pool}" at ${url} has no active instance`);
  const setPolicy = policySetter(url, adminToken, pool, admission);
  const before = parsed.data;
  const restore = policySetter(url, adminToken, pool, before.admission);
  return { url, adminToken, apiKey, pool, gpus: active.map((i) => i.gpu), timeScale: parsed.data.timeScale, setPolicy, stop: () => restore(before.policy, before.alpha) };
}
