/**
 * The project's import graph, read from the sources: every `import`, `export … from` and
 * `import()` of every TypeScript file, type-only ones included, resolved to the file it names
 * (relative paths, and `convoseg/…` entry points through package.json `exports`). The house
 * rules and the generated maps read it; a regex reader is enough because biome keeps every
 * specifier on one `from "…"` form.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";

interface ImportEdge {
  readonly from: string;
  readonly to: string;
  /** As written: a relative path or `convoseg/…`. */
  readonly specifier: string;
}

export interface SourceTree {
  readonly root: string;
  /** Every .ts file under the source folders, relative to the root, posix separators. */
  readonly files: readonly string[];
  readonly edges: readonly ImportEdge[];
  /** package.json `exports`: entry name (`segmenter`) to barrel file. */
  readonly entries: ReadonlyMap<string, string>;
  /** The same, read the other way: barrel file to entry name. */
  readonly entryOfBarrel: ReadonlyMap<string, string>;
  /** Specifiers that name a file of ours but resolve to nothing. */
  readonly unresolved: readonly string[];
}

const SOURCE_FOLDERS = ["lib", "cli", "local", "functions", "infra", "bench", "test"];
const PACKAGE = "convoseg";

const stripComments = (src: string): string =>
  src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

function walk(root: string, dir: string, out: string[]): void {
  for (const name of readdirSync(join(root, dir))) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = posix.join(dir, name);
    if (statSync(join(root, path)).isDirectory()) walk(root, path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
}

export function readTree(root: string): SourceTree {
  const files: string[] = [];
  for (const folder of SOURCE_FOLDERS)
    if (existsSync(join(root, folder))) walk(root, folder, files);
  files.sort();
  const known = new Set(files);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports?: Record<string, string>;
  };
  const entries = new Map<string, string>();
  for (const [key, target] of Object.entries(pkg.exports ?? {})) {
    entries.set(key.replace(/^\.\//, ""), posix.normalize(target));
  }
  const resolveRelative = (from: string, spec: string): string | undefined => {
    const base = posix.normalize(posix.join(posix.dirname(from), spec));
    return [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, `${base}/index.ts`].find((c) =>
      known.has(c),
    );
  };
  const edges: ImportEdge[] = [];
  const unresolved: string[] = [];
  const specifiers =
    /(?:^|[\s;}])(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s+["']([^"']+)["']/gm;
  for (const file of files) {
    const src = stripComments(readFileSync(join(root, file), "utf8"));
    for (const m of src.matchAll(specifiers)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec === undefined) continue;
      let to: string | undefined;
      if (spec.startsWith(".")) {
        if (!/\.(js|ts)$|\/index$|^[^.]*$/.test(posix.basename(spec)) && /\.\w+$/.test(spec)) {
          continue; // a JSON or CSS file, not a module of ours
        }
        to = resolveRelative(file, spec);
      } else if (spec === PACKAGE || spec.startsWith(`${PACKAGE}/`)) {
        to = entries.get(spec.slice(PACKAGE.length + 1));
      } else continue;
      if (to === undefined) unresolved.push(`${file}: ${spec}`);
      else edges.push({ from: file, to, specifier: spec });
    }
  }
  const entryOfBarrel = new Map([...entries].map(([name, barrel]) => [barrel, name]));
  return { root, files, edges, entries, entryOfBarrel, unresolved };
}

/**
 * The module a lib file belongs to: the entry point of the nearest barrel above it, up to its
 * first `/`. Sub-barrels are facets of one module (`pipeline/contract` and `pipeline/store` are
 * both `pipeline`), whose files may use each other; between modules, only barrels.
 */
export function moduleOf(tree: SourceTree, file: string): string | undefined {
  let dir = posix.dirname(file);
  while (dir.startsWith("lib/")) {
    const entry = tree.entryOfBarrel.get(`${dir}/index.ts`);
    if (entry !== undefined) return entry.split("/")[0];
    dir = posix.dirname(dir);
  }
  return undefined;
}

/** `lib/knowledge/store/port.ts` -> `knowledge`. */
export const wingOf = (file: string): string | undefined =>
  file.startsWith("lib/") ? file.split("/")[1] : undefined;

/** Every cycle among the given files' imports, each as the files around it. */
export function cyclesOf(tree: SourceTree, within: (file: string) => boolean): string[][] {
  const graph = new Map<string, string[]>();
  for (const e of tree.edges) {
    if (!within(e.from) || !within(e.to)) continue;
    graph.set(e.from, [...(graph.get(e.from) ?? []), e.to]);
  }
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") cycles.push(stack.slice(stack.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

/** The names a barrel exports (`export { a, type b as c } from …`). */
export function barrelNames(root: string, barrel: string): string[] {
  const src = stripComments(readFileSync(join(root, barrel), "utf8"));
  const names: string[] = [];
  for (const m of src.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of (m[1] ?? "").split(",")) {
      const name = part.trim().replace(/^type\s+/, "");
      if (name !== "") names.push(name.split(/\s+as\s+/).pop() ?? name);
    }
  }
  for (const m of src.matchAll(/export\s+\*\s+as\s+(\w+)/g)) names.push(m[1] ?? "");
  return names;
}

/** What a barrel holds beyond re-exports (none is allowed), with comments and type aliases removed. */
export function barrelCode(root: string, barrel: string): string {
  return stripComments(readFileSync(join(root, barrel), "utf8"))
    .replace(/export\s+(?:type\s+)?\{[^}]*\}\s*from\s*["'][^"']+["'];?/g, "")
    .replace(/export\s+\*\s+as\s+\w+\s+from\s*["'][^"']+["'];?/g, "")
    .trim();
}

/** The first sentence of a file's leading doc comment, on one line. */
export function summaryOf(root: string, file: string): string {
  const src = readFileSync(join(root, file), "utf8");
  const doc = /^\s*\/\*\*([\s\S]*?)\*\//.exec(src)?.[1] ?? "";
  const text = doc
    .split("\n")
    .map((line) => line.replace(/^\s*\*\s?/, "").trim())
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end);
}

export const repoRoot = (): string => join(dirname(new URL(import.meta.url).pathname), "../..");
