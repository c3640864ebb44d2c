/**
 * Bundles the dashboard's browser code (web/dashboard/, Chart.js included) into public/assets/dashboard.js,
 * which Workers Static Assets serve beside public/dashboard.html: the page needs no CDN. `npm start`, the
 * local stack and `npm run build` run it; it takes well under a second.
 *
 * Usage: `tsx scripts/build-dashboard.ts`
 */
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export async function buildDashboard(): Promise<void> {
  await build({
    entryPoints: [`${ROOT}web/dashboard/main.ts`],
    outfile: `${ROOT}public/assets/dashboard.js`,
    bundle: true,
    minify: true,
    format: "iife",
    target: "es2022",
    sourcemap: false,
    logLevel: "warning",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildDashboard().catch((e: unknown) => {
    console.error(`build-dashboard: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
