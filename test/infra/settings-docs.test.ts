/**
 * The deploy docs' settings table against the code's (`SETTINGS`): the same settings, each once,
 * with the same defaults, wherever the table lives in README.md or docs/.
 */

import { parseDuration } from "convoseg/duration";
import { describe, expect, it } from "vitest";
import { SETTINGS, type Setting } from "../../infra/settings/index.js";
import { docPages, tablesWithHeader } from "../support/docs.js";

const HEADER = ["setting", "default", "meaning"];
/** How the table says a setting has no default value. */
const NO_DEFAULT = new Set(["none", "generated"]);

/** Each documented setting with the default its row gives, and where. */
function documented(): { name: string; default: string; where: string }[] {
  const tables = tablesWithHeader(docPages(), HEADER);
  expect(
    tables.map((t) => `${t.page}:${t.line}`),
    "exactly one settings table",
  ).toHaveLength(1);
  const [table] = tables;
  return table.rows.flatMap(([names, defaults], i) => {
    const where = `${table.page}, row ${i + 1} of the table at line ${table.line}`;
    const settings = [...names.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const values = defaults.split(",").map((d) => d.trim().replace(/^`(.*)`$/, "$1"));
    // One default for several settings applies to each ("generated").
    expect(values.length === 1 || values.length === settings.length, where).toBe(true);
    return settings.map((name, j) => ({
      name,
      default: values[values.length === 1 ? 0 : j],
      where,
    }));
  });
}

/** Whether the docs' `text` says what the setting's default is. */
function sameDefault(setting: Setting, text: string): boolean {
  if (NO_DEFAULT.has(text)) return setting.default === undefined;
  if (setting.default === undefined) return false;
  switch (setting.kind) {
    case "duration":
      return parseDuration(text) === parseDuration(String(setting.default));
    case "integer":
    case "price":
    case "fraction":
      return Number(text) === Number(setting.default);
    default:
      return text === String(setting.default);
  }
}

describe("the settings table in the docs", () => {
  it("names every setting of the code once, and no other", () => {
    const names = documented().map((d) => d.name);
    expect([...names].sort()).toEqual(SETTINGS.map((s) => s.name).sort());
  });

  it("gives each setting the code's default", () => {
    const byName = new Map(SETTINGS.map((s) => [s.name as string, s]));
    for (const row of documented()) {
      const setting = byName.get(row.name);
      if (setting === undefined) continue;
      expect(
        sameDefault(setting, row.default),
        `${row.name}: the docs say ${JSON.stringify(row.default)}, the code ${JSON.stringify(setting.default ?? "none")} (${row.where})`,
      ).toBe(true);
    }
  });
});
