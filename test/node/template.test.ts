import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OUTPUT_SEPARATOR, TemplateRenderError, parseTemplate, placeholdersOf, render, type RenderContext } from "../../src/core/template";

const ctx: RenderContext = {
  inputs: { question: "Why is the sky blue?", db: "sales" },
  outputs: { plan: ["Step 1, step 2"], draft: ["alpha", "beta", "gamma"] },
  fanoutIndex: 2,
};

function parseError(template: string): string {
  const parsed = parseTemplate(template);
  return parsed.ok ? "(parsed)" : parsed.error;
}

describe("parseTemplate", () => {
  it("reads every placeholder form and keeps the text between them", () => {
    const parsed = parseTemplate("Q: {{inputs.question}} P: {{stages.plan.output}} {{stages.draft.outputs}}{{stages.draft.outputs[2]}} #{{fanout.index}}");
    expect(parsed).toEqual({
      ok: true,
      parts: [
        { kind: "text", text: "Q: " },
        { kind: "input", name: "question", raw: "{{inputs.question}}" },
        { kind: "text", text: " P: " },
        { kind: "output", stage: "plan", raw: "{{stages.plan.output}}" },
        { kind: "text", text: " " },
        { kind: "outputs", stage: "draft", raw: "{{stages.draft.outputs}}" },
        { kind: "output-at", stage: "draft", index: 2, raw: "{{stages.draft.outputs[2]}}" },
        { kind: "text", text: " #" },
        { kind: "fanout-index", raw: "{{fanout.index}}" },
      ],
    });
  });

  it("allows spaces just inside the braces and quotes the placeholder as written", () => {
    const parsed = parseTemplate("{{ inputs.question }}");
    expect(parsed.ok && placeholdersOf(parsed.parts)).toEqual([{ kind: "input", name: "question", raw: "{{ inputs.question }}" }]);
  });

  it.each([
    ["{{stages.plan.result}}"],
    ["{{inputs}}"],
    ["{{inputs.}}"],
    ["{{inputs.my-question}}"],
    ["{{stages.Plan.output}}"],
    ["{{stages.plan.outputs[-1]}}"],
    ["{{stages.plan.outputs[01]}}"],
    ["{{stages.plan.outputs[x]}}"],
    ["{{fanout.count}}"],
    ["{{}}"],
    ["{{{inputs.question}}}"],
  ])("rejects %s, naming it", (placeholder) => {
    const brace = placeholder.indexOf("}}") + 2;
    expect(parseError(`before ${placeholder} after`)).toBe(`unknown placeholder ${placeholder.slice(0, brace)}`);
  });

  it("rejects an unclosed placeholder and cuts a long quote", () => {
    expect(parseError("x {{inputs.question and more")).toBe("unclosed placeholder {{inputs.question and more");
    expect(parseError(`{{${"y".repeat(200)}}}`)).toBe(`unknown placeholder {{${"y".repeat(78)}...`);
  });

  it("treats single braces and a lone }} as text", () => {
    expect(parseTemplate('{"a": {"b": 1}} }} {x}')).toEqual({ ok: true, parts: [{ kind: "text", text: '{"a": {"b": 1}} }} {x}' }] });
  });
});

describe("render", () => {
  it("substitutes inputs, outputs and the fan-out index", () => {
    expect(render("Answer {{inputs.question}} per {{stages.plan.output}} (call {{fanout.index}})", ctx)).toBe(
      "Answer Why is the sky blue? per Step 1, step 2 (call 2)",
    );
  });

  it("joins a fan-out stage's outputs for .output, in call order", () => {
    expect(render("{{stages.draft.output}}", ctx)).toBe(["alpha", "beta", "gamma"].join(OUTPUT_SEPARATOR));
    expect(OUTPUT_SEPARATOR).toBe("\n\n");
  });

  it("numbers .outputs from 1 and indexes .outputs[N] from 0", () => {
    expect(render("Pick the best of:\n{{stages.draft.outputs}}", ctx)).toBe("Pick the best of:\n1. alpha\n2. beta\n3. gamma");
    expect(render("{{stages.plan.outputs}}", ctx)).toBe("1. Step 1, step 2");
    expect(render("{{stages.draft.outputs[0]}}|{{stages.draft.outputs[2]}}", ctx)).toBe("alpha|gamma");
  });

  it("gives each call of a fan-out its own index", () => {
    const prompts = [0, 1, 2].map((i) => render("Variant {{fanout.index}} of {{inputs.db}}", { ...ctx, fanoutIndex: i }));
    expect(prompts).toEqual(["Variant 0 of sales", "Variant 1 of sales", "Variant 2 of sales"]);
  });

  it("turns \\{{ into a literal {{ and leaves other backslashes alone", () => {
    expect(render("\\{{inputs.question}} is {{inputs.db}}", ctx)).toBe("{{inputs.question}} is sales");
    expect(render("a \\{{ b \\n c \\}}", ctx)).toBe("a {{ b \\n c \\}}");
    expect(render("\\{{{{inputs.db}}", ctx)).toBe("{{sales");
    expect(render("\\\\{{inputs.db}}", ctx)).toBe("\\{{inputs.db}}");
  });

  it("does not expand placeholders inside inserted values", () => {
    const hostile: RenderContext = { ...ctx, inputs: { question: "{{inputs.db}}", db: "secret" }, outputs: { plan: ["{{fanout.index}}"] } };
    expect(render("{{inputs.question}} {{stages.plan.output}}", hostile)).toBe("{{inputs.db}} {{fanout.index}}");
  });

  it("renders parsed parts exactly as it renders the text", () => {
    const template = "{{inputs.question}} / {{stages.draft.outputs}} / \\{{x}}";
    const parsed = parseTemplate(template);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(render(parsed.parts, ctx)).toBe(render(template, ctx));
  });

  it("throws TemplateRenderError when the context lacks what the template needs", () => {
    expect(() => render("{{inputs.missing}}", ctx)).toThrow(new TemplateRenderError('{{inputs.missing}}: no input "missing"'));
    expect(() => render("{{inputs.constructor}}", ctx)).toThrow(TemplateRenderError);
    expect(() => render("{{stages.judge.output}}", ctx)).toThrow('{{stages.judge.output}}: stage "judge" has no outputs');
    expect(() => render("{{stages.toString.outputs}}", { ...ctx, outputs: {} })).toThrow(TemplateRenderError);
    expect(() => render("{{stages.draft.outputs[3]}}", ctx)).toThrow('{{stages.draft.outputs[3]}}: stage "draft" has 3 outputs');
    expect(() => render("{{nope}}", ctx)).toThrow(new TemplateRenderError("unknown placeholder {{nope}}"));
  });

  it("returns any text back once its {{ are escaped", () => {
    const text = fc.string({ unit: fc.constantFrom("{", "}", "\\", "a", ".", " ", "\n"), maxLength: 60 });
    fc.assert(
      fc.property(text, (s) => {
        expect(render(s.replaceAll("{{", "\\{{"), ctx)).toBe(s);
      }),
    );
  });
});
