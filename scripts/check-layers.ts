/**
 * Layering check: src/core and src/sim are pure TypeScript that must run in Node (simulator, benchmarks)
 * and in workerd (Durable Objects). They may not import runtime-bound code:
 *   - Cloudflare / Hono / Wrangler / Miniflare / workerd modules,
 *   - Node built-ins (`node:*` or bare names such as `fs`, `path`, `crypto`),
 *   - relative paths into the runtime layers (src/objects, src/api, src/upstream, src/emulator, workers/, scripts/),
 *   - and src/core may not import src/sim (core is the lower layer).
 *
 * Usage: `tsx scripts/check-layers.ts [rootDir]` (rootDir defaults to the repository root).
 * Exits 1 and prints one `file:line: ...` line per violation, or prints `layers ok (N files)`.
 */
import { type Dirent, readdirSync, readFileSync, realpathSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export interface Violation {
  /** Path relative to the root, with forward slashes. */
  file: string;
  /** 1-based line of the offending module specifier. */
  line: number;
  /** The module specifier as written (or a description for a non-literal dynamic import). */
  specifier: string;
  /** Why it is forbidden. */
  reason: string;
}

export interface CheckResult {
  files: string[];
  violations: Violation[];
}

/** The pure layers, lowest first. */
const PURE_LAYERS = ["src/core", "src/sim"] as const;

/** Relative imports from a pure layer must not resolve into these directories. */
const RUNTIME_DIRS = ["src/objects", "src/api", "src/upstream", "src/db", "src/connector", "src/emulator", "workers", "scripts"] as const;

const SOURCE_FILE = /\.(?:c|m)?tsx?$/;

const NODE_BUILTINS: ReadonlySet<string> = new Set(builtinModules.filter((name) => !name.startsWith("_")));

function isRelative(specifier: string): boolean {
  return (
    specifier === "." ||
    specifier === ".." ||
    specifier.startsWith("./") ||
    specifier.startsWith("../") ||
    specifier.startsWith("/")
  );
}

function bareName(specifier: string): string {
  // "@scope/pkg/sub" -> "@scope/pkg"; "pkg/sub" -> "pkg"
  const parts = specifier.split("/");
  const first = parts[0] ?? specifier;
  if (first.startsWith("@")) {
    return parts.length > 1 ? `${first}/${parts[1] ?? ""}` : first;
  }
  return first;
}

/** Why a non-relative specifier is forbidden, or undefined if it is allowed. */
function packageViolation(specifier: string): string | undefined {
  if (specifier.startsWith("cloudflare:")) return "Workers runtime module";
  if (specifier.startsWith("node:")) return "Node built-in";
  const name = bareName(specifier);
  if (name === "hono") return "HTTP framework belongs in src/api";
  if (name.startsWith("@cloudflare/")) return "Cloudflare package";
  if (name === "wrangler" || name === "miniflare" || name === "workerd") return "Cloudflare tooling";
  if (NODE_BUILTINS.has(name)) return "Node built-in";
  return undefined;
}

function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}

function isUnder(relPath: string, dir: string): boolean {
  return relPath === dir || relPath.startsWith(`${dir}/`);
}

/** Why a relative specifier from `fileRel` is forbidden, or undefined if it is allowed. */
function relativeViolation(rootDir: string, fileAbs: string, fileRel: string, specifier: string): string | undefined {
  const target = toPosix(path.relative(rootDir, path.resolve(path.dirname(fileAbs), specifier)));
  for (const dir of RUNTIME_DIRS) {
    if (isUnder(target, dir)) return `resolves into ${dir}/ (runtime layer)`;
  }
  if (isUnder(fileRel, "src/core") && isUnder(target, "src/sim")) {
    return "src/core must not depend on src/sim";
  }
  return undefined;
}

interface ModuleReference {
  specifier: string;
  /** Position of the specifier in the file. */
  pos: number;
  /** False for a dynamic import / require whose argument is not a string literal. */
  literal: boolean;
}

function stringOf(node: ts.Node | undefined): string | undefined {
  if (node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) {
    return node.text;
  }
  return undefined;
}

/** Every module reference in a file: static/type imports, re-exports, import(), require(), import x = require(), import("x").T, triple-slash references. */
function moduleReferences(source: ts.SourceFile): ModuleReference[] {
  const refs: ModuleReference[] = [];
  const add = (node: ts.Node, specifier: string): void => {
    refs.push({ specifier, pos: node.getStart(source), literal: true });
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      const spec = stringOf(node.moduleSpecifier);
      if (spec !== undefined && node.moduleSpecifier !== undefined) add(node.moduleSpecifier, spec);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expr = node.moduleReference.expression;
      const spec = stringOf(expr);
      if (spec !== undefined) add(expr, spec);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg)) {
        const spec = stringOf(arg.literal);
        if (spec !== undefined) add(arg.literal, spec);
      }
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isDynamicImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(callee) && callee.text === "require";
      if (isDynamicImport || isRequire) {
        const arg = node.arguments[0];
        const spec = stringOf(arg);
        if (spec !== undefined && arg !== undefined) {
          add(arg, spec);
        } else {
          refs.push({
            specifier: `${isDynamicImport ? "import" : "require"}(<non-literal>)`,
            pos: node.getStart(source),
            literal: false,
          });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);

  for (const ref of source.typeReferenceDirectives) {
    refs.push({ specifier: ref.fileName, pos: ref.pos, literal: true });
  }
  for (const ref of source.referencedFiles) {
    const spec = isRelative(ref.fileName) ? ref.fileName : `./${ref.fileName}`;
    refs.push({ specifier: spec, pos: ref.pos, literal: true });
  }
  return refs;
}

/**
 * Ambient effects the pure layers must not reach for: the clock, unseeded randomness, timers, the
 * network and the process. `now` and randomness are passed in (DESIGN section 3).
 */
const IMPURE_MEMBERS = new Set(["Math.random", "Date.now", "performance.now", "crypto.getRandomValues", "crypto.randomUUID"]);
const IMPURE_GLOBALS = new Set(["setTimeout", "setInterval", "setImmediate", "fetch"]);

function impureUses(source: ts.SourceFile): { name: string; pos: number }[] {
  const uses: { name: string; pos: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const name = `${node.expression.text}.${node.name.text}`;
      if (IMPURE_MEMBERS.has(name) || node.expression.text === "process") uses.push({ name, pos: node.getStart(source) });
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "Date" && (node.arguments?.length ?? 0) === 0) {
      uses.push({ name: "new Date()", pos: node.getStart(source) });
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && IMPURE_GLOBALS.has(node.expression.text)) {
      uses.push({ name: `${node.expression.text}()`, pos: node.getStart(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

function listSourceFiles(dirAbs: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dirAbs, { withFileTypes: true });
  } catch {
    return []; // the layer does not exist (yet)
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name === "node_modules") continue;
    const abs = path.join(dirAbs, entry.name);
    if (entry.isDirectory()) files.push(...listSourceFiles(abs));
    else if (entry.isFile() && SOURCE_FILE.test(entry.name)) files.push(abs);
  }
  return files;
}

/** Scans the pure layers under `rootDir` and returns the files checked and every violation found. */
export function scanLayers(rootDir: string): CheckResult {
  const root = path.resolve(rootDir);
  const files = PURE_LAYERS.flatMap((layer) => listSourceFiles(path.join(root, layer))).sort();
  const violations: Violation[] = [];

  for (const fileAbs of files) {
    const fileRel = toPosix(path.relative(root, fileAbs));
    const text = readFileSync(fileAbs, "utf8");
    const source = ts.createSourceFile(fileAbs, text, ts.ScriptTarget.Latest, true);
    for (const ref of moduleReferences(source)) {
      let reason: string | undefined;
      if (!ref.literal) {
        reason = "dynamic module loading cannot be checked";
      } else if (isRelative(ref.specifier)) {
        reason = relativeViolation(root, fileAbs, fileRel, ref.specifier);
      } else {
        reason = packageViolation(ref.specifier);
      }
      if (reason !== undefined) {
        const line = source.getLineAndCharacterOfPosition(ref.pos).line + 1;
        violations.push({ file: fileRel, line, specifier: ref.specifier, reason });
      }
    }
    for (const use of impureUses(source)) {
      const line = source.getLineAndCharacterOfPosition(use.pos).line + 1;
      violations.push({ file: fileRel, line, specifier: use.name, reason: "ambient effect: pass now, randomness or I/O in" });
    }
  }

  violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { files: files.map((f) => toPosix(path.relative(root, f))), violations };
}

/** The violations in the pure layers under `rootDir` (empty when the layering holds). */
export function checkLayers(rootDir: string): Violation[] {
  return scanLayers(rootDir).violations;
}

export function formatViolation(v: Violation): string {
  const verb = v.reason.startsWith("ambient effect") ? "uses" : "imports";
  return `${v.file}:${v.line}: ${verb} "${v.specifier}" (${v.reason})`;
}

/** CLI entry; returns the process exit code. */
export function main(argv: readonly string[]): number {
  const defaultRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const root = path.resolve(argv[0] ?? defaultRoot);
  const { files, violations } = scanLayers(root);
  if (violations.length > 0) {
    for (const v of violations) console.error(formatViolation(v));
    return 1;
  }
  console.log(`layers ok (${files.length} files)`);
  return 0;
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  process.exitCode = main(process.argv.slice(2));
}
