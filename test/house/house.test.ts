/**
 * The house rules, read from the imports (test/house/imports.ts): `lib/` is its wings and
 * nothing else, a wing imports only the wings its README allows, modules meet only at barrels,
 * code outside `lib` (and every test that is not a module's own) enters through the package's
 * entry points, no lib/ or cli/ file passes 450 lines, nothing imports in a circle, and the
 * maps in the README and docs/architecture.md are the ones the tree generates.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  barrelCode,
  barrelNames,
  cyclesOf,
  moduleOf,
  readTree,
  repoRoot,
  summaryOf,
  wingOf,
} from "./imports.js";
import { moduleMap, readmeLayout, withMap } from "./maps.js";
import { readWings } from "./wings.js";

const ROOT = repoRoot();
const tree = readTree(ROOT);
const wings = readWings(ROOT);
const MAX_BARREL_NAMES = 40;
const MAX_FILE_LINES = 450;

describe("the wings", () => {
  it("lib/ holds only wing folders, each opening with its README", () => {
    const entries = readdirSync(join(ROOT, "lib"));
    expect(entries.filter((n) => !statSync(join(ROOT, "lib", n)).isDirectory())).toEqual([]);
    expect(wings.map((w) => w.name).sort()).toEqual(entries.sort());
    expect(wings.length).toBeLessThanOrEqual(8);
  });

  it("each wing imports only itself and the wings its README allows", () => {
    const allowed = new Map(wings.map((w) => [w.name, new Set([w.name, ...w.mayImport])]));
    for (const w of wings)
      for (const m of w.mayImport) expect(allowed.has(m), `${w.name}: ${m}`).toBe(true);
    const crossings = tree.edges
      .filter((e) => e.from.startsWith("lib/"))
      .filter((e) => {
        const to = wingOf(e.to);
        return to === undefined || !allowed.get(wingOf(e.from) ?? "")?.has(to);
      })
      .map((e) => `${e.from} -> ${e.to}`);
    expect(crossings).toEqual([]);
  });

  it("modules meet only at barrels", () => {
    const reachIn = tree.edges
      .filter((e) => e.from.startsWith("lib/") && e.to.startsWith("lib/"))
      .filter((e) => moduleOf(tree, e.from) !== moduleOf(tree, e.to) && !e.to.endsWith("/index.ts"))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(reachIn).toEqual([]);
  });

  it("every lib file belongs to a module with an entry point", () => {
    const orphans = tree.files.filter(
      (f) => f.startsWith("lib/") && moduleOf(tree, f) === undefined,
    );
    expect(orphans).toEqual([]);
  });
});

describe("entry points and barrels", () => {
  const barrels = tree.files.filter((f) => f.startsWith("lib/") && f.endsWith("/index.ts"));

  it("package.json exports names every barrel, and only barrels", () => {
    expect([...tree.entries.values()].sort()).toEqual(barrels.sort());
  });

  it("a barrel only re-exports, at most 40 names", () => {
    for (const barrel of barrels) {
      expect(barrelCode(ROOT, barrel), barrel).toBe("");
      expect(barrelNames(ROOT, barrel).length, barrel).toBeLessThanOrEqual(MAX_BARREL_NAMES);
    }
  });

  it("a barrel opens with a doc comment whose first sentence says what the module is", () => {
    for (const barrel of barrels) {
      const summary = summaryOf(ROOT, barrel);
      expect(summary.length, barrel).toBeGreaterThan(0);
      expect(summary.length, `${barrel}: "${summary}"`).toBeLessThanOrEqual(120);
    }
  });

  it("code outside lib enters through the entry points; a module's own tests may reach inside", () => {
    const ownTest = (from: string, to: string) =>
      from.startsWith("test/") && to.startsWith(`lib/${from.slice(5, from.lastIndexOf("/"))}/`);
    const around = tree.edges
      .filter((e) => !e.from.startsWith("lib/") && e.to.startsWith("lib/"))
      .filter((e) => !e.specifier.startsWith("convoseg/") && !ownTest(e.from, e.to))
      .map((e) => `${e.from} -> ${e.specifier}`);
    expect(around).toEqual([]);
  });

  it("every specifier of ours resolves", () => {
    expect(tree.unresolved).toEqual([]);
  });
});

describe("files", () => {
  it("in lib/ and cli/ hold at most 450 lines each", () => {
    const long = tree.files
      .filter((f) => f.startsWith("lib/") || f.startsWith("cli/"))
      .map((f) => ({ f, lines: readFileSync(join(ROOT, f), "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ f, lines }) => `${f}: ${lines}`);
    expect(long).toEqual([]);
  });
});

describe("imports", () => {
  it("form no cycle anywhere, type-only imports included", () => {
    expect(cyclesOf(tree, () => true).map((c) => c.join(" -> "))).toEqual([]);
  });
});

describe("the maps", () => {
  const documents = [
    ["README.md", readmeLayout(tree, wings)],
    ["docs/architecture.md", moduleMap(tree, wings)],
  ] as const;
  it.each(documents)("%s holds the map the tree generates", (file, map) => {
    const path = join(ROOT, file);
    const text = readFileSync(path, "utf8");
    const expected = withMap(text, map, file);
    if (process.env.UPDATE_MAPS === "1") writeFileSync(path, expected);
    else
      expect(text, `${file} is stale: run UPDATE_MAPS=1 npx vitest run test/house`).toBe(expected);
  });
});
