/**
 * `npm start`: the whole system on one machine with emulated GPUs. Starts one vLLM emulator per GPU
 * of the fleet, `wrangler dev`, registers the fleet, prints the URL and a curl to try. Ctrl-C stops
 * everything it started.
 */
import { parseArgs } from "node:util";
import { REFERENCE_POOL, parseCluster } from "../src/sim/cluster";
import { UsageError, numberArg, runCli } from "./lib/cli";
import { startStack } from "./lib/stack";

runCli(async () => {
  const { values } = parseArgs({
    options: {
      fleet: { type: "string" },
      "time-scale": { type: "string" },
      port: { type: "string" },
      pool: { type: "string", default: "default" },
      "keep-state": { type: "boolean", default: false },
      "no-demo-db": { type: "boolean", default: false },
      "tune-every": { type: "string" },
      "tuning-config": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      [
        "usage: npm start -- [--fleet A100,A100,A6000,L40S] [--time-scale 20] [--port 8787] [--pool default] [--keep-state] [--no-demo-db]",
        "                    [--tune-every 300] [--tuning-config '{\"threshold\":0.08,\"windowS\":900}']",
        "  --tune-every S     run the tuner's cron every S seconds (default 300, as deployed; 0: never, tune with POST /admin/pools/:pool/tune)",
        "  --tuning-config J  the tuner's TUNING_CONFIG (JSON overrides of src/sim/tuning-decision.ts)",
        "",
      ].join("\n"),
    );
    return;
  }
  const fleet = values.fleet === undefined ? { ok: true as const, value: [...REFERENCE_POOL] } : parseCluster(values.fleet);
  if (!fleet.ok) throw new UsageError(fleet.error);
  const timeScale = numberArg("time-scale", values["time-scale"], 20);
  const port = numberArg("port", values.port, 8787, (n) => Number.isInteger(n) && n >= 0 && n < 65_536);
  const tuneEveryS = numberArg("tune-every", values["tune-every"], 300, (n) => n >= 0);
  const tuningConfig = values["tuning-config"];
  if (tuningConfig !== undefined) {
    try {
      JSON.parse(tuningConfig);
    } catch {
      throw new UsageError("--tuning-config: not valid JSON");
    }
  }
  process.stdout.write(`starting ${fleet.value.length} emulated vLLM servers (${fleet.value.join(", ")}, Llama-3.1-70B, ${timeScale}x real time) and wrangler dev...\n`);
  const stack = await startStack({ fleet: fleet.value, timeScale, port, pool: values.pool, keepState: values["keep-state"], stateDir: ".wrangler/state-local", quiet: false, demoDatabase: !values["no-demo-db"], tuneEveryS, ...(tuningConfig === undefined ? {} : { tuningConfig }) });
  const example = JSON.stringify({
    kind: "replay",
    calls: [
      { step: "Information Retriever", inputTokens: 306, outputTokens: 7 },
      { step: "generate_candidate_llama-agent", inputTokens: 12000, outputTokens: 700 },
      { step: "generate_candidate_llama-agent", inputTokens: 9000, outputTokens: 500 },
      { step: "revise", inputTokens: 7000, outputTokens: 120 },
      { step: "unit_tester", inputTokens: 275, outputTokens: 5 },
    ],
  });
  process.stdout.write(
    [
      "",
      `hexflow is up at ${stack.url}  (pool "${stack.pool}": ${stack.emulators.map((e) => `${e.id} ${e.url}`).join(", ")})`,
      `tenant "local", API key: ${stack.apiKey}`,
      `admin token: ${stack.adminToken}`,
      `(both saved in .wrangler/state-local/credentials.json, where npm run demo and loadgen find them)`,
      `Dashboard: ${stack.url}/dashboard?pool=${stack.pool}#token=${stack.adminToken}`,
      "",
      `  export HEXFLOW_API_KEY=${stack.apiKey}`,
      "Run a workflow (times are emulated seconds: the pool runs " + `${timeScale}x faster than real time):`,
      `  curl -s -X POST ${stack.url}/v1/workflows -H "authorization: Bearer $HEXFLOW_API_KEY" -H 'content-type: application/json' -d '${example}'`,
      `  curl -s ${stack.url}/v1/workflows/<id from the answer> -H "authorization: Bearer $HEXFLOW_API_KEY"`,
      `Pool and policy: curl -s ${stack.url}/admin/pools/${stack.pool} -H 'authorization: Bearer ${stack.adminToken}'`,
      `α tuning (the tuner Worker at ${stack.tunerUrl}; its cron runs ${tuneEveryS > 0 ? `every ${tuneEveryS} s` : "only when asked"}): tune now, then read the decisions:`,
      `  curl -s -X POST ${stack.url}/admin/pools/${stack.pool}/tune -H 'authorization: Bearer ${stack.adminToken}'`,
      `  curl -s ${stack.url}/admin/pools/${stack.pool}/tuning -H 'authorization: Bearer ${stack.adminToken}'`,
      ...(values["no-demo-db"]
        ? [`Databases for Text-to-SQL: curl -s ${stack.url}/v1/databases -H "authorization: Bearer $HEXFLOW_API_KEY"`]
        : [
            "Ask the demo database a question (Text-to-SQL; the answer has the SQL, the rows and every self-correction round):",
            `  curl -s -X POST ${stack.url}/v1/workflows -H "authorization: Bearer $HEXFLOW_API_KEY" -H 'content-type: application/json' -H 'prefer: wait=60' \\`,
            `    -d '{"kind":"text2sql","database":"demo","question":"Which five customers spent the most?"}'`,
          ]),
      `OpenAI-compatible: curl -s ${stack.url}/v1/chat/completions -H "authorization: Bearer $HEXFLOW_API_KEY" -H 'content-type: application/json' -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":32}'`,
      `Tenants and keys: curl -s ${stack.url}/admin/tenants -H 'authorization: Bearer ${stack.adminToken}'   |   API: ${stack.url}/openapi.json`,
      "More load: npm run demo   |   Ctrl-C stops everything",
      "",
    ].join("\n"),
  );
  const shutdown = () => {
    process.stdout.write("\nstopping...\n");
    void stack.stop().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  for (const e of stack.emulators) e.child.once("exit", (code) => process.stderr.write(`emulator ${e.id} exited (${code ?? "signal"})\n`));
});
