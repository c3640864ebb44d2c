/**
 * The workers test project's stand-in for a Workers VPC service binding (which cannot run locally): a
 * Node-side service binding that answers like vLLM behind a tunnel (`/health`, streamed `/v1/completions`)
 * and records what reached it, so test/workers/transport.test.ts can see that calls and probes went this way.
 * `GET /__fake/requests` answers the record, `DELETE /__fake/requests` clears it.
 */
import { Response, type Request } from "miniflare";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
}

export function fakeVpcBinding(): (request: Request) => Promise<Response> {
  const recorded: RecordedRequest[] = [];
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/__fake/requests") {
      if (request.method === "DELETE") recorded.length = 0;
      return Response.json(recorded);
    }
    recorded.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers) });
    if (url.pathname === "/health") return new Response(null, { status: 200 });
    if (request.method !== "POST" || !url.pathname.startsWith("/v1/")) return Response.json({ error: { message: "not found" } }, { status: 404 });
    await request.arrayBuffer();
    const prompt = Number(request.headers.get("x-hexflow-prompt-tokens") ?? 1);
    const completion = Number(request.headers.get("x-hexflow-output-tokens") ?? 1);
    const events = [
      { id: "cmpl-vpc", object: "text_completion", choices: [{ index: 0, text: "tok ".repeat(completion), finish_reason: "length" }] },
      { id: "cmpl-vpc", object: "text_completion", choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } },
    ];
    const body = `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`;
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
}
