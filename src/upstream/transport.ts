/**
 * How the gateway reaches one vLLM server (the instance record's `transport`), as the `Fetcher` that both
 * its calls (GpuInstanceObject) and the coordinator's health probes use, so a probe tests the same path
 * the calls take (DESIGN section 3):
 * - `direct`: the global fetch to the registered url (local runs, the emulator, a reachable host).
 * - `vpc`: a Workers VPC service binding (`[[env.production.vpc_services]]`), which routes every request
 *   through a Cloudflare Tunnel to the one host and port its VPC service names; the url's host is only a label.
 * - `access`: the global fetch to a tunnel hostname behind Cloudflare Access, with the service token's
 *   `CF-Access-Client-Id` / `CF-Access-Client-Secret` (the ACCESS_CLIENT_ID / ACCESS_CLIENT_SECRET secrets).
 * With the VLLM_API_KEY secret set, every transport also sends it as vLLM's `--api-key` Bearer token.
 * Secrets go into request headers only: never into a message, a record or a log line.
 */
import type { InstanceRecord } from "../core/pool";
import type { Fetcher } from "./vllm-client";

export const DEFAULT_VPC_BINDING = "GPU_VPC";

/** What of a record decides the transport (a registration, or a record after an update). */
export type TransportChoice = Pick<InstanceRecord, "transport" | "vpcBinding" | "url">;

type Resolved = { ok: true; fetcher: Fetcher } | { ok: false; message: string };

interface BindingFetcher {
  fetch(input: string, init: RequestInit): Promise<Response>;
}

/** A service binding's fetch; VPC bindings cannot run locally, so tests bind a fake Worker under the name. */
function bindingNamed(env: Env, name: string): BindingFetcher | undefined {
  const value: unknown = Reflect.get(env, name);
  if (typeof value !== "object" || value === null) return undefined;
  const candidate = value as Partial<BindingFetcher>;
  return typeof candidate.fetch === "function" ? (value as BindingFetcher) : undefined;
}

function secret(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function withHeaders(base: Fetcher, extra: Readonly<Record<string, string>>): Fetcher {
  if (Object.keys(extra).length === 0) return base;
  return (input, init) => {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return base(input, { ...init, headers });
  };
}

/** The fetcher for a record's transport, or why its binding or secrets are missing (a message naming no secret value). */
export function resolveTransport(env: Env, r: TransportChoice): Resolved {
  const apiKey = secret(env.VLLM_API_KEY);
  const auth: Record<string, string> = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
  const global: Fetcher = (input, init) => fetch(input, init);
  switch (r.transport) {
    case "direct":
      return { ok: true, fetcher: withHeaders(global, auth) };
    case "vpc": {
      const name = r.vpcBinding ?? DEFAULT_VPC_BINDING;
      const binding = bindingNamed(env, name);
      if (binding === undefined) {
        return { ok: false, message: `transport "vpc" needs the Workers VPC service binding ${name}, which this Worker does not have (declare it under [[env.production.vpc_services]] in wrangler.toml, see docs/deploy.md)` };
      }
      return { ok: true, fetcher: withHeaders((input, init) => binding.fetch(input, init), auth) };
    }
    case "access": {
      const id = secret(env.ACCESS_CLIENT_ID);
      const clientSecret = secret(env.ACCESS_CLIENT_SECRET);
      if (id === undefined || clientSecret === undefined) {
        return { ok: false, message: 'transport "access" needs the secrets ACCESS_CLIENT_ID and ACCESS_CLIENT_SECRET (wrangler secret put ... --env production, see docs/deploy.md)' };
      }
      if (!r.url.startsWith("https://")) return { ok: false, message: 'transport "access" sends a service token: the url must be https' };
      return { ok: true, fetcher: withHeaders(global, { ...auth, "cf-access-client-id": id, "cf-access-client-secret": clientSecret }) };
    }
  }
}

/** Why a registration or update must be refused (its transport cannot work in this Worker), or undefined. */
export function transportProblem(env: Env, r: TransportChoice): string | undefined {
  if (r.vpcBinding !== undefined && r.transport !== "vpc") return `vpcBinding is only used with transport "vpc" (the transport is "${r.transport}")`;
  const resolved = resolveTransport(env, r);
  return resolved.ok ? undefined : resolved.message;
}

/**
 * The fetcher for calls and probes. A transport that stopped working after registration (a secret deleted,
 * a binding removed in a deploy) fails each request like an unreachable server: probes then take the
 * instance out of dispatch and its lastError says why.
 */
export function upstreamFetcher(env: Env, r: TransportChoice): Fetcher {
  const resolved = resolveTransport(env, r);
  if (resolved.ok) return resolved.fetcher;
  const message = resolved.message;
  return () => Promise.reject(new Error(message));
}
