/**
 * OpenAI's response shapes for the compatible endpoint: full bodies, stream chunks, and errors.
 * An error body is OpenAI's `{error:{message,type,param,code}}`, which contains the house shape
 * `{error:{code,message}}`, so OpenAI clients and this API's own clients both read it.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { CallStreamEnd } from "../objects/call-streams";
import type { Endpoint } from "./openai-schemas";
import { redactKeys } from "../db/api-keys";

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function usage(u: { promptTokens: number; completionTokens: number }): Usage {
  return { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens };
}

export function openaiError(status: number, code: string, message: string, param: string | null = null) {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message: redactKeys(message), type, param, code } };
}

/** The HTTP status and code a failed call's end event becomes. */
export function callFailure(e: Extract<CallStreamEnd, { error: unknown }>["error"]): { status: ContentfulStatusCode; code: string; message: string } {
  // vLLM answers 400 for what is wrong with the request itself (context length, stop strings): the client's to fix.
  if (e.code === "upstream_error" && e.status === 400) return { status: 400, code: "upstream_rejected", message: e.message };
  if (e.code === "upstream_timeout") return { status: 504, code: e.code, message: e.message };
  if (e.code === "cancelled") return { status: 409, code: e.code, message: e.message };
  return { status: 502, code: e.code, message: e.status === undefined ? e.message : `upstream answered ${e.status}: ${e.message}` };
}

/** Same id, creation time and model name on every body of one request. */
export class OpenAIShaper {
  readonly id: string;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly endpoint: Endpoint,
    readonly workflowId: string,
    private readonly model: string,
  ) {
    this.id = `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-${workflowId}`;
  }

  full(text: string, finishReason: string, u: Usage): object {
    const choice =
      this.endpoint === "chat"
        ? { index: 0, message: { role: "assistant", content: text }, logprobs: null, finish_reason: finishReason }
        : { index: 0, text, logprobs: null, finish_reason: finishReason };
    return { ...this.head(this.endpoint === "chat" ? "chat.completion" : "text_completion"), choices: [choice], usage: u };
  }

  /** Chat streams open with the assistant's role before any text; completion streams have no such chunk. */
  roleChunk(): object | undefined {
    if (this.endpoint !== "chat") return undefined;
    return this.chunk({ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null });
  }

  textChunk(text: string): object {
    return this.chunk(this.endpoint === "chat" ? { index: 0, delta: { content: text }, logprobs: null, finish_reason: null } : { index: 0, text, logprobs: null, finish_reason: null });
  }

  finishChunk(finishReason: string): object {
    return this.chunk(this.endpoint === "chat" ? { index: 0, delta: {}, logprobs: null, finish_reason: finishReason } : { index: 0, text: "", logprobs: null, finish_reason: finishReason });
  }

  usageChunk(u: Usage): object {
    return { ...this.head(this.streamObject()), choices: [], usage: u };
  }

  private chunk(choice: object): object {
    return { ...this.head(this.streamObject()), choices: [choice] };
  }

  private streamObject(): string {
    return this.endpoint === "chat" ? "chat.completion.chunk" : "text_completion";
  }

  private head(object: string): { id: string; object: string; created: number; model: string } {
    return { id: this.id, object, created: this.created, model: this.model };
  }
}

const encoder = new TextEncoder();
export const sse = (data: object | "[DONE]"): Uint8Array => encoder.encode(`data: ${data === "[DONE]" ? data : JSON.stringify(data)}\n\n`);
