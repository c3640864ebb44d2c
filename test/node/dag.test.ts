import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_FAN_OUT,
  MAX_INPUT_CHARS,
  MAX_INPUTS,
  MAX_OUTPUT_TOKENS,
  MAX_PROMPT_CHARS,
  MAX_STAGES,
  MAX_TOTAL_CALLS,
  readyStages,
  remainingStages,
  validateDag,
  type DagPlan,
} from "../../src/core/dag";
import { render } from "../../src/core/template";

interface StageInput {
  id: string;
  after?: string[];
  prompt?: string;
  fanOut?: number;
  maxTokens?: number;
  expectedOutputTokens?: number;
  [extra: string]: unknown;
}

const stage = (id: string, after: string[] = [], more: Record<string, unknown> = {}): StageInput => ({
  id,
  after,
  prompt: `Do ${id}.`,
  fanOut: 1,
  maxTokens: 256,
  ...more,
});

const request = <T>(stages: T[], more: Record<string, unknown> = {}) => ({
  kind: "dag",
  inputs: { question: "How many orders shipped late?" },
  stages,
  ...more,
});

function plan(input: unknown): DagPlan {
  const r = validateDag(input);
  if (!r.ok) throw new Error(`expected a valid DAG, got: ${r.error.message}`);
  return r.value;
}

function errorOf(input: unknown): string {
  const r = validateDag(input);
  return r.ok ? "(valid)" : r.error.message;
}

const ids = (p: DagPlan) => p.stages.map((s) => s.id);

describe("validateDag: a valid DAG", () => {
  // plan -> {facts, draft}; facts -> check; {draft, check} -> final, listed out of order on purpose.
  const diamond = request([
    stage("final", ["draft", "check"], { prompt: "Best of {{stages.draft.outputs}} given {{stages.check.output}} for {{inputs.question}}" }),
    stage("check", ["facts"], { prompt: "Check {{stages.facts.output}} against {{stages.plan.output}}" }),
    stage("draft", ["plan"], { prompt: "Draft {{fanout.index}}: {{stages.plan.output}}", fanOut: 3, maxTokens: 512 }),
    stage("facts", ["plan"], { prompt: "Facts for {{inputs.question}}" }),
    stage("plan", [], { prompt: "Plan how to answer: {{inputs.question}}", expectedOutputTokens: 120 }),
  ]);

  it("orders a 5-stage diamond by dependency, ties by request order", () => {
    const p = plan(diamond);
    expect(ids(p)).toEqual(["plan", "draft", "facts", "check", "final"]);
    expect(p.totalCalls).toBe(7);
    const byId = new Map(p.stages.map((s) => [s.id, s]));
    expect(byId.get("final")?.after).toEqual(["draft", "check"]);
    expect(byId.get("final")?.ancestors).toEqual(["plan", "draft", "facts", "check"]);
    expect(byId.get("check")?.ancestors).toEqual(["plan", "facts"]);
    expect(byId.get("plan")?.descendants).toEqual(["draft", "facts", "check", "final"]);
    expect(byId.get("facts")?.descendants).toEqual(["check", "final"]);
    expect(byId.get("final")?.descendants).toEqual([]);
    expect(byId.get("plan")?.expectedOutputTokens).toBe(120);
  });

  it("is deterministic and keeps the request's inputs, SLO and model", () => {
    const p = plan({ ...diamond, sloMs: 30_000, model: "llama-3.1-70b" });
    expect(plan({ ...diamond, sloMs: 30_000, model: "llama-3.1-70b" })).toEqual(p);
    expect(p).toMatchObject({ inputs: { question: "How many orders shipped late?" }, sloMs: 30_000, model: "llama-3.1-70b" });
    expect(plan(diamond)).not.toHaveProperty("sloMs");
  });

  it("accepts the documented plan -> draft x3 -> judge request", () => {
    const body = JSON.parse(
      '{"kind":"dag","inputs":{"question":"q"},"stages":[{"id":"plan","after":[],"prompt":"Plan how to answer: {{inputs.question}}","fanOut":1,"maxTokens":256,"expectedOutputTokens":120},{"id":"draft","after":["plan"],"prompt":"Follow {{stages.plan.output}} ...","fanOut":3,"maxTokens":512},{"id":"judge","after":["draft"],"prompt":"Pick the best of: {{stages.draft.outputs}}","fanOut":1,"maxTokens":64}]}',
    ) as unknown;
    expect(ids(plan(body))).toEqual(["plan", "draft", "judge"]);
  });

  it("fills defaults: no inputs, no after, fanOut 1", () => {
    const p = plan({ kind: "dag", stages: [{ id: "only", prompt: "Hi", maxTokens: 8 }] });
    expect(p.inputs).toEqual({});
    expect(p.stages[0]).toMatchObject({ id: "only", after: [], fanOut: 1, ancestors: [] });
  });

  it("keeps independent roots in request order", () => {
    expect(ids(plan(request([stage("b"), stage("a"), stage("c", ["a"]), stage("d")])))).toEqual(["b", "a", "c", "d"]);
  });

  it("releases stages as their dependencies finish and lists the unreleased ones", () => {
    const p = plan(diamond);
    const ready = (finished: string[], released: string[]) => readyStages(p, new Set(finished), new Set(released)).map((s) => s.id);
    expect(ready([], [])).toEqual(["plan"]);
    expect(ready([], ["plan"])).toEqual([]);
    expect(ready(["plan"], ["plan"])).toEqual(["draft", "facts"]);
    expect(ready(["plan", "facts"], ["plan", "facts", "draft"])).toEqual(["check"]);
    expect(ready(["plan", "facts", "check"], ["plan", "facts", "draft", "check"])).toEqual([]);
    expect(remainingStages(p, new Set(["plan", "facts"]))).toEqual(["draft", "check", "final"]);
  });

  it("renders a planned stage's template with its fan-out index", () => {
    const draft = plan(diamond).stages.find((s) => s.id === "draft");
    const rendered = render(draft?.template ?? [], { inputs: {}, outputs: { plan: ["P"] }, fanoutIndex: 1 });
    expect(rendered).toBe("Draft 1: P");
  });
});

describe("validateDag: graph errors", () => {
  it.each([
    ["unknown after", [stage("plan"), stage("draft", ["plann"])], 'stage "draft": after references unknown stage "plann"'],
    [
      "prompt reads a stage that is not a dependency",
      [stage("plan"), stage("summary", ["plan"]), stage("judge", ["plan"], { prompt: "Judge {{stages.summary.output}}" })],
      'stage "judge": prompt references {{stages.summary.output}}, which is not among its dependencies',
    ],
    ["a two-stage cycle", [stage("a", ["b"]), stage("b", ["a"])], "stages form a cycle: a -> b -> a"],
    ["a too-wide fan-out", [stage("x", [], { fanOut: 40 })], 'stage "x": fanOut 40 is over the limit of 16'],
    ["a duplicate id", [stage("plan"), stage("draft"), stage("plan")], 'duplicate stage id "plan"'],
    ["no stages", [], "stages: at least one stage is required"],
    ["an unknown input", [stage("plan", [], { prompt: "Plan {{inputs.questoin}}" })], 'stage "plan": prompt references unknown input "questoin"'],
  ])("%s", (_name, stages, message) => {
    expect(validateDag(request(stages))).toEqual({ ok: false, error: { code: "invalid_request", message } });
  });

  it("prints a longer cycle in execution order, from the stage listed first", () => {
    const stages = [stage("root"), stage("c", ["b"]), stage("a", ["c", "root"]), stage("b", ["a"])];
    expect(errorOf(request(stages))).toBe("stages form a cycle: c -> a -> b -> c");
    expect(errorOf(request([stage("solo", ["solo"])]))).toBe("stages form a cycle: solo -> solo");
  });

  it("reports a cycle reached only through a stage outside it", () => {
    expect(errorOf(request([stage("tail", ["x"]), stage("x", ["y"]), stage("y", ["x"])]))).toBe("stages form a cycle: x -> y -> x");
  });

  it("rejects a listed-twice dependency and a hint above maxTokens", () => {
    expect(errorOf(request([stage("a"), stage("b", ["a", "a"])]))).toBe('stage "b": after lists "a" twice');
    expect(errorOf(request([stage("a", [], { maxTokens: 100, expectedOutputTokens: 101 })]))).toBe(
      'stage "a": expectedOutputTokens 101 is over its maxTokens 100',
    );
  });

  it("checks every prompt reference", () => {
    const two = (prompt: string) => errorOf(request([stage("draft", [], { fanOut: 3 }), stage("judge", ["draft"], { prompt })]));
    expect(two("{{stages.sumary.output}}")).toBe('stage "judge": prompt references {{stages.sumary.output}}, but there is no stage "sumary"');
    expect(two("{{stages.judge.output}}")).toBe('stage "judge": prompt references {{stages.judge.output}}, which is not among its dependencies');
    expect(two("{{stages.draft.outputs[3]}}")).toBe(
      'stage "judge": prompt references {{stages.draft.outputs[3]}}, but stage "draft" has fanOut 3 (calls 0 to 2)',
    );
    expect(two("{{stages.draft.outputs[2]}} {{ stages.draft.output }} {{fanout.index}}")).toBe("(valid)");
    expect(two("{{stages.draft.result}}")).toBe('stage "judge": prompt has unknown placeholder {{stages.draft.result}}');
    expect(two("{{inputs.question")).toBe('stage "judge": prompt has unclosed placeholder {{inputs.question');
    expect(two("\\{{stages.nothing.here}}")).toBe("(valid)");
  });

  it("lets a prompt read a transitive dependency", () => {
    const stages = [stage("plan"), stage("draft", ["plan"]), stage("judge", ["draft"], { prompt: "{{stages.plan.output}}" })];
    expect(errorOf(request(stages))).toBe("(valid)");
  });
});

describe("validateDag: limits at and over the bound", () => {
  const one = (more: Record<string, unknown>) => errorOf(request([stage("x", [], more)]));

  it("fanOut", () => {
    expect(one({ fanOut: MAX_FAN_OUT })).toBe("(valid)");
    expect(one({ fanOut: MAX_FAN_OUT + 1 })).toBe('stage "x": fanOut 17 is over the limit of 16');
    expect(one({ fanOut: 0 })).toBe('stage "x": fanOut 0 is under the minimum of 1');
    expect(one({ fanOut: 1.5 })).toBe('stage "x": fanOut must be an integer, got 1.5');
    expect(one({ fanOut: 1e300 })).toBe('stage "x": fanOut 1e+300 is over the limit of 16');
    expect(one({ fanOut: "3" })).toBe('stage "x": fanOut must be a number, got "3"');
  });

  it("maxTokens", () => {
    expect(one({ maxTokens: MAX_OUTPUT_TOKENS })).toBe("(valid)");
    expect(one({ maxTokens: MAX_OUTPUT_TOKENS + 1 })).toBe('stage "x": maxTokens 8193 is over the limit of 8192');
    expect(one({ maxTokens: 0 })).toBe('stage "x": maxTokens 0 is under the minimum of 1');
    expect(one({ maxTokens: undefined })).toBe('stage "x": maxTokens is required');
  });

  it("prompt length", () => {
    expect(one({ prompt: "p".repeat(MAX_PROMPT_CHARS) })).toBe("(valid)");
    expect(one({ prompt: "p".repeat(MAX_PROMPT_CHARS + 1) })).toBe('stage "x": prompt is 32001 characters, over the limit of 32000');
    expect(one({ prompt: "" })).toBe('stage "x": prompt must not be empty');
  });

  it("stage count and total calls", () => {
    const many = (n: number, fanOut = 1) => Array.from({ length: n }, (_, i) => stage(`s${i}`, [], { fanOut }));
    expect(errorOf(request(many(MAX_STAGES)))).toBe("(valid)");
    expect(errorOf(request(many(MAX_STAGES + 1)))).toBe("stages: 33 stages are over the limit of 32");
    expect(errorOf(request(many(MAX_TOTAL_CALLS / 2, 2)))).toBe("(valid)");
    const overByOne = [...many(MAX_TOTAL_CALLS / 2 - 1, 2), stage("last", [], { fanOut: 3 })];
    expect(errorOf(request(overByOne))).toBe("stages: 65 calls in total (the sum of fanOut) are over the limit of 64");
  });

  it("inputs", () => {
    const inputs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`in${i}`, "v"]));
    expect(errorOf(request([stage("x")], { inputs: inputs(MAX_INPUTS) }))).toBe("(valid)");
    expect(errorOf(request([stage("x")], { inputs: inputs(MAX_INPUTS + 1) }))).toBe("inputs has 17 entries, over the limit of 16");
    expect(errorOf(request([stage("x")], { inputs: { q: "v".repeat(MAX_INPUT_CHARS) } }))).toBe("(valid)");
    expect(errorOf(request([stage("x")], { inputs: { q: "v".repeat(MAX_INPUT_CHARS + 1) } }))).toBe(
      "inputs.q is 32001 characters, over the limit of 32000",
    );
    expect(errorOf(request([stage("x")], { inputs: { "my-q": "v" } }))).toBe('inputs: name "my-q" must match /^[A-Za-z][A-Za-z0-9_]{0,63}$/');
    expect(errorOf(request([stage("x")], { inputs: { q: 3 } }))).toBe("inputs.q must be a string, got 3");
  });

  it("stage ids", () => {
    expect(one({ id: "a".repeat(32) })).toBe("(valid)");
    expect(one({ id: "a".repeat(33) })).toBe(`stages[0]: id must match /^[a-z][a-z0-9_]{0,31}$/, got "${"a".repeat(33)}"`);
    expect(one({ id: "b".repeat(50) })).toBe(`stages[0]: id must match /^[a-z][a-z0-9_]{0,31}$/, got "${"b".repeat(40)}..."`);
    expect(one({ id: "Plan" })).toBe('stages[0]: id must match /^[a-z][a-z0-9_]{0,31}$/, got "Plan"');
    expect(one({ id: "draft_2" })).toBe("(valid)");
  });

  it("request shape", () => {
    expect(errorOf(request([stage("x", [], { afer: ["y"] })]))).toBe('stage "x" has unknown field "afer"');
    expect(errorOf(request([stage("x")], { pool: "gpu" }))).toBe('request has unknown field "pool"');
    expect(errorOf(request([stage("x")], { kind: "replay" }))).toBe('kind must be "dag"');
    expect(errorOf(request([stage("x")], { sloMs: 0 }))).toBe("sloMs 0 must be greater than 0");
    expect(errorOf(request([5]))).toBe("stages[0] must be an object, got 5");
    expect(errorOf(null)).toBe("request must be an object, got null");
    expect(errorOf(request([stage("x", [], { after: "y" })]))).toBe('stage "x": after must be an array, got "y"');
  });
});

/** Stage i may depend only on stages before it in `rank`, so every generated graph is acyclic. */
const acyclicDag = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc.record({
    deps: fc.tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => j)))),
    listed: fc.shuffledSubarray(Array.from({ length: n }, (_, i) => i), { minLength: n, maxLength: n }),
    fanOut: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: n, maxLength: n }),
  }),
);

function buildRequest(deps: number[][], listed: number[], fanOut: number[]) {
  const stages = listed.map((i) => {
    const after = (deps[i] ?? []).map((j) => `s${j}`);
    const refs = after.map((d) => `{{stages.${d}.outputs}}`).join(" ");
    return stage(`s${i}`, after, { prompt: `Stage ${i} of {{inputs.question}} #{{fanout.index}} ${refs}`, fanOut: fanOut[i] ?? 1 });
  });
  return request(stages);
}

describe("validateDag: properties", () => {
  it("accepts any acyclic DAG; its order respects every edge and breaks ties by request order", () => {
    fc.assert(
      fc.property(acyclicDag, ({ deps, listed, fanOut }) => {
        const req = buildRequest(deps, listed, fanOut);
        const order = ids(plan(req));
        expect([...order].sort()).toEqual(req.stages.map((s) => s.id).sort());
        const position = new Map(order.map((id, k) => [id, k]));
        for (const s of req.stages) {
          for (const d of s.after ?? []) expect(position.get(d) ?? -1).toBeLessThan(position.get(s.id) ?? -1);
        }
        // Each pick is the first listed stage whose dependencies are all already placed.
        const placed = new Set<string>();
        for (const id of order) {
          const first = req.stages.find((s) => !placed.has(s.id) && (s.after ?? []).every((d) => placed.has(d)));
          expect(id).toBe(first?.id);
          placed.add(id);
        }
      }),
    );
  });

  it("rejects it with a real cycle once a back edge is added", () => {
    const withBackEdge = acyclicDag.chain((g) =>
      fc.record({ g: fc.constant(g), to: fc.nat({ max: g.deps.length - 1 }), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(withBackEdge, ({ g, to, pick }) => {
        // from is `to` itself or one of its ancestors, so the edge to -> from closes a cycle.
        const ancestors = new Set<number>([to]);
        for (let i = to; i >= 0; i--) if (ancestors.has(i)) for (const j of g.deps[i] ?? []) ancestors.add(j);
        const candidates = [...ancestors];
        const from = candidates[pick % candidates.length] ?? to;
        const req = buildRequest(g.deps, g.listed, g.fanOut);
        const stages = req.stages;
        const source = stages.find((s) => s.id === `s${from}`);
        source?.after?.push(`s${to}`);
        const message = errorOf(req);
        expect(message).toMatch(/^stages form a cycle: /);
        const cycle = message.replace("stages form a cycle: ", "").split(" -> ");
        expect(cycle.at(0)).toBe(cycle.at(-1));
        for (let k = 0; k + 1 < cycle.length; k++) {
          const next = stages.find((s) => s.id === cycle[k + 1]);
          expect(next?.after).toContain(cycle[k]);
        }
      }),
    );
  });
});
