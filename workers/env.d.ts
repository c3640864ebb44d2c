// Secrets are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Admin credential for /admin routes (`wrangler secret put ADMIN_TOKEN`; `npm start` sets one locally). */
    ADMIN_TOKEN?: string;
    /** Cloudflare Access service token, for instances registered with transport "access" (src/upstream/transport.ts). */
    ACCESS_CLIENT_ID?: string;
    ACCESS_CLIENT_SECRET?: string;
    /** vLLM's --api-key, sent as a Bearer token to every instance when set. */
    VLLM_API_KEY?: string;
  }
}
