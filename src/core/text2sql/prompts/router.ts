/**
 * The router calls of two CHESS agents: the information retriever (which schema-linking tool next) and the
 * unit tester (which testing tool next). Each call is tiny (~300 tokens in, ~5 out): pick one name.
 */
import { STEP } from "../../chess";
import { joinPrompt, parsed, questionSection, unparseable, type ParseResult } from "../format";

export type RouterAgent = typeof STEP.retriever | typeof STEP.unitTester;

export interface RouterTool {
  name: string;
  description: string;
}

/** The name that ends an agent's turn; always offered, so the router can stop. */
export const ROUTER_DONE = "done";

export const RETRIEVER_TOOLS: readonly RouterTool[] = [
  { name: STEP.keywords, description: "pull the keywords, entities and literal values out of the question" },
  { name: "select_schema", description: "choose the tables and columns the query needs" },
];

export const UNIT_TESTER_TOOLS: readonly RouterTool[] = [
  { name: STEP.unitTest, description: "write natural-language unit tests that a correct query must pass" },
  { name: STEP.evaluate, description: "judge every candidate query against the unit tests" },
];

export interface RouterInput {
  agent: RouterAgent;
  question: string;
  tools: readonly RouterTool[];
  /** Tools already run for this question, in order; the router should not repeat them without reason. */
  done: readonly string[];
}

export interface RouterDecision {
  /** One of the offered tool names as given, or ROUTER_DONE. */
  next: string;
}

export function buildRouterPrompt(input: RouterInput): string {
  const role =
    input.agent === STEP.retriever
      ? "You decide the next step of gathering database context for a Text-to-SQL question."
      : "You decide the next step of testing candidate SQL queries for a Text-to-SQL question.";
  const tools = input.tools.map((t) => `- ${t.name}: ${t.description}`);
  tools.push(`- ${ROUTER_DONE}: nothing more is needed`);
  const history = input.done.length === 0 ? "Nothing has run yet." : `Already run, in order: ${input.done.join(", ")}.`;
  return joinPrompt(input.agent, [
    role,
    questionSection(input.question),
    `### tools\n${tools.join("\n")}`,
    `### progress\n${history}`,
    `### answer format\nReply with exactly one line, naming one tool from the list:\nnext: <tool name>`,
  ]);
}

const clean = (s: string) => s.replace(/[`*"'.]/g, "").trim().toLowerCase();

/** The tool named on the last `next:` line; a name that is not offered is an error, never a guess. */
export function parseRouter(text: string, agent: RouterAgent, tools: readonly RouterTool[]): ParseResult<RouterDecision> {
  const lines = [...text.matchAll(/^[\s*>-]*\**next\**\s*:\s*(.+)$/gim)];
  const last = lines.at(-1)?.[1];
  if (last === undefined) return unparseable(agent, "no `next: <tool name>` line in the answer");
  const wanted = clean(last);
  const offered = [...tools.map((t) => t.name), ROUTER_DONE];
  const name = offered.find((n) => clean(n) === wanted);
  if (name === undefined) return unparseable(agent, `"${last.trim()}" is not one of: ${offered.join(", ")}`);
  return parsed({ next: name });
}
