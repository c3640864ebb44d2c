// Secrets are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Admin credential for /admin routes (`wrangler secret put ADMIN_TOKEN`; `npm start` sets one locally). */
    ADMIN_TOKEN?: string;
  }
}
