/**
 * Issue 10, docs: "a new user can follow docs/deploy.md without guessing: every command in it is either run by a
 * test or marked as needing a Cloudflare account". Every command line of a shell block in docs/deploy.md must
 * carry a marker, on its own line (a trailing comment, after any continuation lines) or in the comment lines just
 * above it: `(tested: <file>)`, whose file must exist, or `(needs a Cloudflare account)` / `(needs a GPU host)` /
 * `(needs …)`. And every `npm run X` that docs/deploy.md or docs/operations.md names must be a script in
 * package.json.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = process.cwd();
const read = (file: string): string => readFileSync(path.join(ROOT, file), "utf8");

/** One command as written: its first line's number in the file and its text, continuation lines joined. */
interface Command {
  line: number;
  text: string;
  /** The comment lines directly above it in the same block (none if a blank line or another command is between). */
  comments: string[];
}

const SHELL_FENCE = /^```(sh|bash|shell|console)\s*$/;
const MARKER = /\((tested: ([^)]+)|needs [^)]+)\)/;

/** The commands of every shell block of a markdown text. */
function shellCommands(markdown: string): Command[] {
  const commands: Command[] = [];
  let inShell = false;
  let inOther = false;
  let comments: string[] = [];
  let current: Command | undefined;
  const lines = markdown.split("\n");
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!inShell && !inOther && line.startsWith("```")) {
      if (SHELL_FENCE.test(line)) inShell = true;
      else inOther = true;
      comments = [];
      return;
    }
    if ((inShell || inOther) && line === "```") {
      inShell = false;
      inOther = false;
      current = undefined;
      return;
    }
    if (!inShell) return;
    if (current !== undefined) {
      // A continuation of the command above.
      current.text += `\n${line}`;
      if (!line.endsWith("\\")) current = undefined;
      return;
    }
    if (line === "") {
      comments = [];
      return;
    }
    if (line.startsWith("#")) {
      comments.push(line);
      return;
    }
    const command: Command = { line: i + 1, text: line, comments };
    commands.push(command);
    comments = [];
    if (line.endsWith("\\")) current = command;
  });
  return commands;
}

/** The marker a command carries (on its lines, or else in the comments above it), or undefined. */
function markerOf(command: Command): RegExpMatchArray | undefined {
  const own = MARKER.exec(command.text);
  if (own !== null) return own;
  for (const comment of [...command.comments].reverse()) {
    const m = MARKER.exec(comment);
    if (m !== null) return m;
  }
  return undefined;
}

/** Every `npm run X` named anywhere in a markdown text. */
function npmScripts(markdown: string): string[] {
  return [...markdown.matchAll(/npm run ([A-Za-z0-9:_-]+)/g)].map((m) => m[1] ?? "");
}

const PackageSchema = (value: unknown): Record<string, string> => {
  if (typeof value !== "object" || value === null || !("scripts" in value)) throw new Error("package.json has no scripts");
  const scripts: unknown = value.scripts;
  if (typeof scripts !== "object" || scripts === null) throw new Error("package.json scripts is not an object");
  return Object.fromEntries(Object.entries(scripts).filter((e): e is [string, string] => typeof e[1] === "string"));
};

describe("docs/deploy.md commands", () => {
  const commands = shellCommands(read("docs/deploy.md"));

  it("has commands to check", () => {
    expect(commands.length).toBeGreaterThan(20);
  });

  it("marks every command as tested (by an existing test file) or as needing an account or a host", () => {
    const unmarked = commands.filter((c) => markerOf(c) === undefined).map((c) => `docs/deploy.md:${c.line}: ${c.text}`);
    expect(unmarked).toEqual([]);
    const missingTests = commands.flatMap((c) => {
      const file = markerOf(c)?.[2];
      if (file === undefined) return [];
      return file
        .split(/,\s*/)
        .map((f) => f.trim().split(/\s/)[0] ?? "")
        .filter((f) => !existsSync(path.join(ROOT, f)))
        .map((f) => `docs/deploy.md:${c.line}: ${f}`);
    });
    expect(missingTests).toEqual([]);
  });

  it("the check notices an unmarked command, and accepts a marker above or on the line", () => {
    const doc = [
      "```sh",
      "# create it (needs a Cloudflare account)",
      "npx wrangler d1 create x",
      "",
      "npx wrangler deploy",
      "npm run gpu-host -- --help   # (tested: test/tooling/gpu-host.test.ts)",
      "curl -X POST a \\",
      "  -d '{}'   # (needs a GPU host)",
      "```",
      "```toml",
      "name = \"x\"",
      "```",
    ].join("\n");
    const found = shellCommands(doc);
    expect(found.map((c) => c.line)).toEqual([3, 5, 6, 7]);
    expect(found.map((c) => markerOf(c) !== undefined)).toEqual([true, false, true, true]);
  });
});

describe("npm scripts named in the docs", () => {
  const scripts = PackageSchema(JSON.parse(read("package.json")));

  it.each([["docs/deploy.md"], ["docs/operations.md"]])("every `npm run X` in %s is in package.json", (file) => {
    const named = npmScripts(read(file));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((s) => !(s in scripts))).toEqual([]);
  });
});
