/**
 * Serves one planned generation request: hands it to the engine loop and writes what the loop
 * produces, either as one JSON body at the end or as an SSE stream whose headers go out at once
 * (a Worker may hold only six connections waiting for headers; DESIGN section 3). A client that
 * goes away before the end aborts the request, which frees its place in the engine.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { EngineLoop } from "./engine-loop";
import { sendJson } from "./http";
import type { GenerationPlan } from "./request-plan";
import { ResponseShaper, usage } from "./responses";

export function serveGeneration(res: ServerResponse, plan: GenerationPlan, loop: EngineLoop, model: string): void {
  const shaper = new ResponseShaper(plan.endpoint, model);
  const id = randomUUID();
  const total = plan.pieces.length;
  const finish = { reason: plan.finishReason, stopReason: plan.stopReason };
  let sent = 0;
  let ended = false;
  const event = (body: object): void => {
    res.write(`data: ${JSON.stringify(body)}\n\n`);
  };

  if (plan.stream) {
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    const role = shaper.roleChunk();
    if (role !== undefined) event(role);
  }
  res.on("close", () => {
    if (!ended) loop.abort(id);
  });

  loop.submit({
    id,
    promptTokens: plan.promptTokens,
    outputTokens: total,
    finishReason: plan.finishReason,
    onTokens(count, done) {
      if (res.destroyed) return;
      const text = plan.pieces.slice(sent, sent + count).join("");
      sent += count;
      if (!plan.stream) {
        if (!done) return;
        ended = true;
        sendJson(res, 200, shaper.full(plan.pieces.join(""), finish.reason, finish.stopReason, usage(plan.promptTokens, total)));
        return;
      }
      // Several tokens may share a chunk (vLLM's detokenizer does the same); clients count with usage.
      if (text !== "" || done) event(shaper.deltaChunk(text, done ? finish : undefined));
      if (!done) return;
      ended = true;
      if (plan.includeUsage) event(shaper.usageChunk(usage(plan.promptTokens, total)));
      res.end("data: [DONE]\n\n");
    },
  });
}
