/**
 * Serves one planned generation request: hands it to the engine loop and writes what the loop
 * produces, either as one JSON body at the end or as an SSE stream whose headers go out at once
 * (a Worker may hold only six connections waiting for headers; DESIGN section 3). A client that
 * goes away before the end aborts the request, which frees its place in the engine.
 *
 * `drop` (the fault): the response starts as usual and the connection is cut part-way, with no end: a
 * stream after its first chunk and about a third of its tokens, a JSON body after half of its bytes.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { EngineLoop } from "./engine-loop";
import { sendJson } from "./http";
import type { GenerationPlan } from "./request-plan";
import { ResponseShaper, usage } from "./responses";

export function serveGeneration(res: ServerResponse, plan: GenerationPlan, loop: EngineLoop, model: string, drop = false): void {
  const shaper = new ResponseShaper(plan.endpoint, model);
  const id = randomUUID();
  const total = plan.pieces.length;
  const finish = { reason: plan.finishReason, stopReason: plan.stopReason };
  let sent = 0;
  let ended = false;
  const dropAt = Math.max(1, Math.ceil(total / 3));
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
        const body = shaper.full(plan.pieces.join(""), finish.reason, finish.stopReason, usage(plan.promptTokens, total));
        if (drop) return cutJson(res, JSON.stringify(body));
        sendJson(res, 200, body);
        return;
      }
      if (drop && (sent >= dropAt || done)) {
        // The tokens so far, never the finish or [DONE]; then the socket goes, as a crashed proxy would cut it.
        if (text !== "") event(shaper.deltaChunk(text, undefined));
        res.destroy();
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

/** A 200 whose announced body is cut after half of its bytes. */
function cutJson(res: ServerResponse, body: string): void {
  const bytes = Buffer.from(body);
  res.writeHead(200, { "content-type": "application/json", "content-length": bytes.length });
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
}
