/**
 * The request bodies the emulator reads (VLLM_API section 2). Only the fields that change what it
 * does are listed; zod's default object mode drops the rest, which is vLLM's "accepted and ignored".
 */
import { z } from "zod";

const StopSchema = z.union([z.string(), z.array(z.string())]).nullish();

const StreamOptionsSchema = z
  .object({
    include_usage: z.boolean().nullish(),
    continuous_usage_stats: z.boolean().nullish(),
  })
  .nullish();

const common = {
  model: z.string().nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  n: z.number().int().min(1).nullish(),
  stop: StopSchema,
  include_stop_str_in_output: z.boolean().nullish(),
  ignore_eos: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: StreamOptionsSchema,
};

/** The fields both generation endpoints share. */
export type CommonFields = z.infer<z.ZodObject<typeof common>>;

const TokenIds = z.array(z.number().int().nonnegative());

export const CompletionRequestSchema = z.object({
  ...common,
  prompt: z.union([z.string(), z.array(z.string()), TokenIds, z.array(TokenIds)]),
});
export type CompletionRequest = z.infer<typeof CompletionRequestSchema>;

const ContentPartSchema = z.object({ type: z.string(), text: z.string().nullish() });

const MessageSchema = z.object({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentPartSchema)]).nullish(),
});

export const ChatRequestSchema = z.object({
  ...common,
  messages: z.array(MessageSchema).min(1),
  max_completion_tokens: z.number().int().min(1).nullish(),
});
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

export const AdminFaultSchema = z.object({
  mode: z.enum(["none", "error500", "error503", "hang", "die", "drop"]),
  /** How many of the next generation requests it applies to; absent: all of them. */
  count: z.number().int().positive().optional(),
});
export type AdminFault = z.infer<typeof AdminFaultSchema>;

export const AdminHealthSchema = z.object({ healthy: z.boolean() });

/** The text parts of a message, which is all the token estimate looks at. */
export function messageText(message: z.infer<typeof MessageSchema>): string {
  const c = message.content;
  if (c === undefined || c === null) return "";
  if (typeof c === "string") return c;
  return c.map((part) => part.text ?? "").join("");
}

/** One line naming the first problem, as vLLM's validation errors do. */
export function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "Invalid request";
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue.message}`;
}
