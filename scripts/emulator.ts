/**
 * One emulated vLLM server: `npm run emulator -- --gpu A100 --port 8001 --time-scale 20`.
 * Prints `ready http://HOST:PORT gpu=GPU timeScale=K` once listening; `--help` lists the options.
 * An injected `die` fault ends the process with exit code 1, as a crashed server would.
 */
import { EMULATOR_HELP, parseEmulatorArgs } from "../src/emulator/cli-args";
import { resolveConfig, startEmulator } from "../src/emulator";
import { UsageError, runCli } from "./lib/cli";

runCli(async () => {
  const args = parseEmulatorArgs(process.argv.slice(2));
  if (!args.ok) throw new UsageError(args.error);
  if (args.help) {
    process.stdout.write(`${EMULATOR_HELP}\n`);
    return;
  }
  const cfg = resolveConfig(args.options);
  const handle = await startEmulator({
    ...args.options,
    onDie: () => {
      process.stderr.write("emulator: died (injected fault)\n");
      process.exit(1);
    },
  }).catch((e: unknown) => {
    // A taken port or an address this machine lacks is the caller's mistake, not a bug.
    if (e instanceof Error && "code" in e && (e.code === "EADDRINUSE" || e.code === "EADDRNOTAVAIL" || e.code === "EACCES")) {
      throw new UsageError(`cannot listen on ${cfg.host}:${cfg.port} (${String(e.code)})`);
    }
    throw e;
  });
  process.stdout.write(`ready ${handle.url} gpu=${cfg.gpu} timeScale=${cfg.timeScale}\n`);
  const shutdown = () => {
    void handle.close().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
});
