/**
 * vLLM's response bodies and stream chunks (VLLM_API section 3), field for field. Stream chunks of
 * /v1/completions carry every field (vLLM dumps them with nulls); chat chunks omit unset ones.
 */
import { randomUUID } from "node:crypto";
import type { Endpoint } from "./request-plan";

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
}

export type FinishReason = "stop" | "length";

export function usage(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens };
}

/** Builds the bodies of one request: same id, creation time and model name throughout. */
export class ResponseShaper {
  private readonly id: string;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly endpoint: Endpoint,
    private readonly model: string,
  ) {
    const hex = randomUUID().replaceAll("-", "");
    this.id = endpoint === "chat" ? `chatcmpl-${hex}` : `cmpl-${hex}`;
  }

  full(text: string, finishReason: FinishReason, stopReason: string | null, u: Usage): object {
    if (this.endpoint === "completion") {
      return {
        ...this.head("text_completion"),
        choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: stopReason, prompt_logprobs: null }],
        usage: { ...u, prompt_tokens_details: null },
        system_fingerprint: null,
        service_tier: null,
        kv_transfer_params: null,
      };
    }
    return {
      ...this.head("chat.completion"),
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: text, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning_content: null },
          logprobs: null,
          finish_reason: finishReason,
          stop_reason: stopReason,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: { ...u, prompt_tokens_details: null },
      prompt_logprobs: null,
      kv_transfer_params: null,
    };
  }

  /** Chat streams open with the assistant role before any token; completions have no such chunk. */
  roleChunk(): object | undefined {
    if (this.endpoint !== "chat") return undefined;
    return { ...this.head("chat.completion.chunk"), choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] };
  }

  deltaChunk(text: string, finish: { reason: FinishReason; stopReason: string | null } | undefined): object {
    if (this.endpoint === "completion") {
      return {
        ...this.head("text_completion"),
        choices: [{ index: 0, text, logprobs: null, finish_reason: finish?.reason ?? null, stop_reason: finish?.stopReason ?? null }],
        usage: null,
      };
    }
    const choice =
      finish === undefined
        ? { index: 0, delta: { content: text }, logprobs: null, finish_reason: null }
        : { index: 0, delta: { content: text }, logprobs: null, finish_reason: finish.reason, stop_reason: finish.stopReason };
    return { ...this.head("chat.completion.chunk"), choices: [choice] };
  }

  usageChunk(u: Usage): object {
    return { ...this.head(this.endpoint === "chat" ? "chat.completion.chunk" : "text_completion"), choices: [], usage: u };
  }

  private head(object: string): { id: string; object: string; created: number; model: string } {
    return { id: this.id, object, created: this.created, model: this.model };
  }
}
