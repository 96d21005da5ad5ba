/**
 * examples/irc-ubuntu.jsonl, the README's IRC example: it reads as `run --input` reads it, it is
 * a busy stretch of interleaved conversations (the annotators' links say so), it stays small, and
 * tools/irc-sample.mjs makes it again byte for byte where the source data is at hand.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadInput } from "../../cli/shared/export-input.js";

const SAMPLE = "examples/irc-ubuntu.jsonl";
const SOURCE = "../shared/data/irc/ubuntu.test.2008-07-14_18.jsonl";
const HOUR = 3_600_000;

interface Line {
  id: number;
  ts: string;
  user: string | null;
  system?: boolean;
  annotatedReplyTo?: number[];
}

const lines = (): Line[] =>
  readFileSync(SAMPLE, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Line);

/** The annotated conversations: connected components of the reply links, system lines apart. */
function conversations(all: readonly Line[]): Map<number, Line[]> {
  const parent = new Map<number, number>();
  const root = (id: number): number => {
    let at = id;
    while ((parent.get(at) ?? at) !== at) at = parent.get(at) as number;
    return at;
  };
  for (const line of all) {
    for (const to of line.annotatedReplyTo ?? []) parent.set(root(line.id), root(to));
  }
  const out = new Map<number, Line[]>();
  for (const line of all.filter((l) => l.system !== true)) {
    const of = out.get(root(line.id)) ?? [];
    of.push(line);
    out.set(root(line.id), of);
  }
  return out;
}

describe("the IRC sample", () => {
  it("reads as run --input reads it: every line a message of #ubuntu, none refused", async () => {
    let stderr = "";
    const loaded = await loadInput(
      "run",
      SAMPLE,
      { skipInvalid: false },
      {
        stdin: Readable.from([]),
        stdout: { write: () => true },
        stderr: { write: (text: string) => (stderr += text) },
        now: () => 0,
      },
    );
    expect(stderr).not.toMatch(/refus|invalid/);
    expect(loaded?.messages).toHaveLength(300);
    expect(new Set(loaded?.messages.map((m) => m.channel))).toEqual(new Set(["ubuntu"]));
    expect(loaded?.skipped).toBe(0);
  });

  it("is a busy hour of interleaved conversations, and small", () => {
    const all = lines();
    const first = Date.parse(all[0].ts);
    const hour = all.filter((l) => Date.parse(l.ts) < first + HOUR && l.system !== true);
    expect(new Set(hour.map((l) => l.user)).size).toBeGreaterThan(5);
    const talks = [...conversations(all).values()].filter((c) => c.length >= 5);
    expect(talks.length).toBeGreaterThanOrEqual(5);
    // Interleaved: some conversation's messages fall between another's first and last.
    const span = (c: Line[]) => [c[0].id, (c.at(-1) as Line).id];
    const overlapping = talks.filter((a) =>
      talks.some((b) => b !== a && span(b)[0] < span(a)[0] && span(a)[0] < span(b)[1]),
    );
    expect(overlapping.length).toBeGreaterThanOrEqual(3);
    expect(statSync(SAMPLE).size).toBeLessThan(100_000);
  });

  it.skipIf(!existsSync(SOURCE))("is what tools/irc-sample.mjs cuts from the source", () => {
    const made = execFileSync(process.execPath, ["tools/irc-sample.mjs", SOURCE, "1000", "300"]);
    expect(made.toString()).toBe(readFileSync(SAMPLE, "utf8"));
  });
});
