/**
 * Measures a vLLM server (or the emulator) and fits its cost profile:
 * `npm run calibrate -- --url http://HOST:8000 --model NAME [--register --gateway URL --pool P --instance ID]`.
 * docs/calibration.md says what it measures and how long it takes; `--help` lists the options.
 */
import { fitBatchSlope, fitCostModel } from "../src/core/cost-fit";
import { CALIBRATE_HELP, parseCalibrateArgs } from "./lib/calibrate-args";
import { CalibrationClient, ServerError } from "./lib/calibrate-client";
import { measure } from "./lib/calibrate-measure";
import { buildReport, printReport, registerCost } from "./lib/calibrate-report";
import { runCli } from "./lib/cli";

runCli(async () => {
  const args = parseCalibrateArgs(process.argv.slice(2));
  if (args === undefined) {
    process.stdout.write(`${CALIBRATE_HELP}\n`);
    return;
  }
  try {
    const client = new CalibrationClient(args.url, args.model, args.apiKey, args.timeoutS * 1000);
    const maxModelLen = await client.checkModel();
    const m = await measure(client, args, maxModelLen);
    const report = buildReport(args.url, args.model, m, fitCostModel(m.grid, args.maxNumBatchedTokens), fitBatchSlope(m.batch), args.typicalInput);
    if (args.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else printReport(report);
    if (args.register !== undefined) {
      await registerCost(args.register, report.cost);
      process.stderr.write(`registered as the cost profile of ${args.register.pool}/${args.register.instance} on ${args.register.gateway}\n`);
    }
  } catch (e) {
    // A server that is down or answers oddly is not a bug of this tool: one line, no stack trace.
    if (!(e instanceof ServerError)) throw e;
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(1);
  }
});
