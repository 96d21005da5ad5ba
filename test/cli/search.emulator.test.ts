/**
 * `search` on a local workspace: after a run, a word of a message finds it (and what was learned
 * around it), filtered by channel, kind, status and time; the index is built once and again only
 * after the workspace changed; bad flags are named.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { sampleRun } from "../support/workspace-run.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

interface Hit {
  kind: string;
  channel: string;
  ts: number;
  status: string;
  author: string;
  snippet: string;
  marks: [number, number][];
  evidence: string[];
  anchor: string;
}

const hits = (stdout: string): Hit[] =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Hit);

describe("search", () => {
  it("finds messages, conversations, topics and questions by their words, filtered as asked", async () => {
    const { dir, ws, chat } = await sampleRun(
      "search",
      { seed: 11, channels: ["desk", "ops"], perChannel: 40 },
      cli,
    );
    const target = chat.find((m) => m.channel === "ops" && String(m.text).split(" ").length > 4);
    if (target === undefined) throw new Error("no message to look for");
    const word = String(target.text)
      .split(/[^\p{L}]+/u)
      .filter((w) => w.length > 5)[0] as string;

    // `run` built the index before it ended: the first search answers without building it.
    expect(existsSync(join(dir, "search", "built.json"))).toBe(true);
    const first = await cli(["search", word, "--json", "--limit", "100", ...ws]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain("indexed");
    const all = hits(first.stdout);
    expect(all.some((h) => h.kind === "message" && h.evidence.includes(String(target.id)))).toBe(
      true,
    );
    // Each hit marks the word it was found by.
    for (const hit of all.filter((h) => h.kind === "message")) {
      const marked = hit.marks.map(([s, e]) => hit.snippet.slice(s, e).toLowerCase());
      expect(
        marked.some((m) => m.startsWith(word.toLowerCase().slice(0, 4))),
        hit.snippet,
      ).toBe(true);
    }

    // The index is kept: the next search answers without building it.
    const only = await cli([
      "search",
      word,
      "--channel",
      "ops",
      "--kind",
      "message",
      "--json",
      ...ws,
    ]);
    expect(only.code, only.stderr).toBe(0);
    expect(only.stderr).not.toContain("indexed");
    const onlyHits = hits(only.stdout);
    expect(onlyHits.length).toBeGreaterThan(0);
    expect(new Set(onlyHits.map((h) => `${h.kind} ${h.channel}`))).toEqual(
      new Set(["message ops"]),
    );
    expect(onlyHits.every((h) => h.anchor === "" || h.anchor.startsWith("#segment=ops/"))).toBe(
      true,
    );

    const nosuch = await cli(["search", word, "--channel", "opz", ...ws]);
    expect(nosuch.code).toBe(2);
    expect(nosuch.stderr).toContain('search: no channel "opz" in the workspace');
    expect(nosuch.stderr).toContain(`npm start -- search "${word}" --channel ops`);

    const questions = await cli(["search", "how", "--status", "unanswered", "--json", ...ws]);
    expect(questions.code, questions.stderr).toBe(0);
    for (const hit of hits(questions.stdout)) {
      expect([hit.kind, hit.status]).toEqual(["question", "unanswered"]);
    }

    // --since counts back from the workspace's clock: nothing of the chat is from its last minute.
    const late = await cli(["search", word, "--since", "2100-01-01", "--json", ...ws]);
    expect([late.code, late.stdout]).toEqual([0, ""]);

    const text = await cli(["search", word, "--limit", "1", ...ws]);
    expect(text.stdout).toMatch(/^1 hit for ".+", best first:\n\n\w+/);
    expect(text.stdout).toContain("«");
    // Its links open the workspace's report, which only `report` writes: until then it says so.
    const page = join(dir, "report.html");
    const linked = ["search", word, "--kind", "conversation", "--limit", "1", ...ws];
    const unwritten = await cli(linked);
    expect(unwritten.stdout).toContain(`open ${page}#segment=`);
    expect(unwritten.stdout).toContain(
      `${page} is not written yet: npm start -- report --workspace ${dir} writes it`,
    );
    writeFileSync(page, "<!doctype html>");
    const written = await cli(linked);
    expect(written.stdout).toContain(`open ${page}#segment=`);
    expect(written.stdout).not.toContain("not written yet");

    // A run that adds chat changes the tables, and indexes them again before it ends.
    const more = join(dir, "..", "more.jsonl");
    writeFileSync(
      more,
      `${JSON.stringify({ id: "zz1", ts: "2025-03-01T00:00:00Z", channel: "ops", user: "kim", text: "the flux capacitor overheats" })}\n`,
    );
    const run = await cli(["run", "--input", more, "--settle", "1h", "--tick", "15m", ...ws]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/search: indexed [\d,]+ documents/);
    const after = await cli(["search", "capacitor", "--json", ...ws]);
    expect(after.stderr).not.toContain("indexed");
    expect(hits(after.stdout).map((h) => h.evidence[0])).toContain("zz1");
  }, 420_000); // A sample run, two index builds and a dozen searches: CI runs slower than a desk.

  it("names what is wrong with a query before opening anything", async () => {
    const none = await cli(["search"]);
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining("expected the words")]);
    const two = await cli(["search", "wifi", "driver"]);
    expect(two.stderr).toContain('quote it when it has spaces: npm start -- search "wifi driver"');
    const kind = await cli(["search", "wifi", "--kind", "thread"]);
    expect(kind.stderr).toContain("--kind must be one of message, conversation, topic, question");
    const limit = await cli(["search", "wifi", "--limit", "500"]);
    expect(limit.stderr).toContain("--limit must be a whole number from 1 to 100");
    const status = await cli(["search", "wifi", "--status", "open"]);
    expect(status.stderr).toContain("--status must be one of answered, unanswered, unclear");
  });
});
