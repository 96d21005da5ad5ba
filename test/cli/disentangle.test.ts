/**
 * `npm start -- disentangle`: every message once, in its channel's order, linked only to an
 * earlier message of its channel, in the conversation its parents lead to; the platform's links
 * kept unless `--ignore-links`; and a summary safe for a terminal. The reply linker's model is
 * retrained from time to time, so nothing here depends on its exact decisions beyond what any
 * sane model gets right.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const SECOND = 1000;
const T0 = Date.UTC(2024, 2, 1, 10);

const run = (args: string[], stdinText = "") => runCli(args, T0 + 86_400_000, stdinText);

const dir = mkdtempSync(join(tmpdir(), "convoseg-disentangle-"));
function file(name: string, lines: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n"));
  return path;
}

interface Line {
  channel?: string;
  id: string;
  conversation: string;
  parent?: string;
}

function parseLines(stdout: string): Line[] {
  return stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Line);
}

/** Two pairs of people, alternating within a minute, each line opening with its addressee. */
const interleaved = [
  ["alice", "bob: my wifi driver fails after the kernel upgrade, the card is an intel ax200"],
  ["carol", "dave: which python version does the build script need for the pyproject?"],
  ["bob", "alice: check dmesg for the iwlwifi firmware error of the ax200 card"],
  ["dave", "carol: python 3.11, the build script reads the pyproject toml"],
  ["alice", "bob: dmesg says iwlwifi firmware file missing for the kernel"],
  ["carol", "dave: pip says the pyproject needs setuptools, python 3.10 here"],
  ["bob", "alice: install linux-firmware, then reload the iwlwifi module"],
  ["dave", "carol: upgrade python to 3.11 and pip install setuptools"],
  ["alice", "bob: the wifi works now, iwlwifi loaded the firmware"],
  ["carol", "dave: the build script runs with python 3.11 now"],
].map(([user, text], i) => ({
  id: `m${String(i + 1).padStart(2, "0")}`,
  ts: T0 + i * 5 * SECOND,
  user,
  text,
}));

/** Two channels, lines out of order, a system line, a replyTo and a thread. */
const mixed = [
  {
    id: "b2",
    ts: T0 + 20 * SECOND,
    channel: "beta",
    user: "erin",
    text: "frank: sure, which one?",
  },
  { id: "a1", ts: T0, channel: "alpha", user: "alice", text: "how do I mount an iso image?" },
  { id: "a2", ts: T0 + 5 * SECOND, channel: "alpha", kind: "system", text: "bob has joined" },
  { id: "a3", ts: T0 + 10 * SECOND, channel: "alpha", user: "bob", text: "alice: mount -o loop" },
  { id: "b1", ts: T0 + 15 * SECOND, channel: "beta", user: "frank", text: "erin: got a minute?" },
  { id: "a4", ts: T0 + 12 * SECOND, channel: "alpha", user: "carol", text: "+1", replyTo: "a1" },
  {
    id: "a5",
    ts: T0 + 30 * SECOND,
    channel: "alpha",
    user: "alice",
    text: "thanks!",
    thread: "a3",
  },
  { id: "a6", ts: T0 + 40 * SECOND, channel: "alpha", system: true, text: "dave has quit" },
  { id: "b3", ts: T0 + 25 * SECOND, channel: "beta", user: "frank", text: "the backup one" },
];

/** Checks what holds whatever the model decides, and returns the lines by channel. */
function checkShape(
  lines: Line[],
  input: { id: string; ts: number; channel?: string }[],
): Map<string, Line[]> {
  const byChannel = new Map<string, Line[]>();
  for (const line of lines) {
    const list = byChannel.get(line.channel ?? "default") ?? [];
    list.push(line);
    byChannel.set(line.channel ?? "default", list);
  }
  for (const [channel, list] of byChannel) {
    const expected = input
      .filter((m) => (m.channel ?? "default") === channel)
      .sort((a, b) => a.ts - b.ts || (a.id < b.id ? -1 : 1))
      .map((m) => m.id);
    expect(list.map((l) => l.id)).toEqual(expected);
    const position = new Map(list.map((l, i) => [l.id, i]));
    const byId = new Map(list.map((l) => [l.id, l]));
    list.forEach((line, i) => {
      if (line.parent !== undefined) {
        expect(position.get(line.parent), `${line.id}'s parent`).toBeLessThan(i);
      }
      let root = line;
      while (root.parent !== undefined) root = byId.get(root.parent) as Line;
      expect(line.conversation, `${line.id}'s conversation`).toBe(root.id);
    });
  }
  return byChannel;
}

describe("disentangle command", () => {
  it("prints every message once, in its channel's order, with earlier parents and roots", async () => {
    const { code, stdout, stderr } = await run([
      "disentangle",
      file("mixed.jsonl", mixed),
      "--json",
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = parseLines(stdout);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(
        line.parent === undefined
          ? ["channel", "id", "conversation"]
          : ["channel", "id", "conversation", "parent"],
      );
    }
    expect(lines.map((l) => l.channel)).toEqual([
      ...Array(6).fill("alpha"),
      ...Array(3).fill("beta"),
    ]);
    const byChannel = checkShape(lines, mixed);
    const alpha = new Map((byChannel.get("alpha") ?? []).map((l) => [l.id, l]));
    // System lines are never linked, nor linked to.
    for (const id of ["a2", "a6"])
      expect(alpha.get(id)).toEqual({ channel: "alpha", id, conversation: id });
    for (const line of lines) expect(["a2", "a6"]).not.toContain(line.parent);
    // The platform's links are kept: a replyTo, and a thread reply's root.
    expect(alpha.get("a4")?.parent).toBe("a1");
    expect(alpha.get("a5")?.parent).toBe("a3");
  });

  it("leaves out channel with one channel, and reads standard input", async () => {
    const { code, stdout } = await run(
      ["disentangle", "-", "--json"],
      interleaved.map((m) => JSON.stringify(m)).join("\n"),
    );
    expect(code).toBe(0);
    const lines = parseLines(stdout);
    for (const line of lines) expect(line.channel).toBeUndefined();
    expect(lines[0]).toEqual({ id: "m01", conversation: "m01" });
    checkShape(lines, interleaved);
  });

  it("separates two pairs of people talking over each other", async () => {
    const { code, stdout } = await run([
      "disentangle",
      file("interleaved.jsonl", interleaved),
      "--json",
    ]);
    expect(code).toBe(0);
    const conversation = new Map(parseLines(stdout).map((l) => [l.id, l.conversation]));
    const of = (people: string[]) =>
      new Set(
        interleaved.filter((m) => people.includes(m.user)).map((m) => conversation.get(m.id)),
      );
    const first = of(["alice", "bob"]);
    const second = of(["carol", "dave"]);
    expect(first.size).toBe(1);
    expect(second.size).toBe(1);
    expect([...first][0]).not.toBe([...second][0]);
  });

  it("separates them the same from an irssi log of the channel", async () => {
    // 2024-03-01, 10:00 UTC on: one line every 5 s, shown to the minute as irssi writes them.
    const log = [
      "--- Log opened Fri Mar 01 10:00:00 2024",
      ...interleaved.map((m, i) => `10:0${Math.floor(i / 12)} < ${m.user}> ${m.text}`),
    ];
    const path = join(dir, "#help.log");
    writeFileSync(path, `${log.join("\n")}\n`);
    const { code, stdout } = await run(["disentangle", path, "--json", "--timezone", "UTC"]);
    expect(code).toBe(0);
    const lines = parseLines(stdout);
    expect(lines).toHaveLength(interleaved.length);
    expect(new Set(lines.map((l) => l.channel))).toEqual(new Set([undefined]));
    const byPair = [0, 1].map(
      (pair) => new Set(lines.filter((_, i) => i % 2 === pair).map((l) => l.conversation)),
    );
    expect(byPair.map((c) => c.size)).toEqual([1, 1]);
    expect([...(byPair[0] as Set<string>)][0]).not.toBe([...(byPair[1] as Set<string>)][0]);
  });

  it("keeps a platform link as given, and infers instead with --ignore-links", async () => {
    const input = [
      ...interleaved.slice(0, 4),
      { id: "r1", ts: T0 + 21 * SECOND, user: "erin", text: "me too", replyTo: "gone" },
      { id: "r2", ts: T0 + 22 * SECOND, user: "erin", text: "and me", thread: "lost" },
      { id: "r3", ts: T0 + 23 * SECOND, user: "frank", text: "same here", replyTo: "m01" },
    ];
    const path = file("links.jsonl", input);
    const given = await run(["disentangle", path, "--json"]);
    expect(given.code).toBe(0);
    expect(given.stderr).toMatch(/2 replyTo or thread name no message of their channel/);
    const kept = new Map(parseLines(given.stdout).map((l) => [l.id, l]));
    // A parent outside the input is kept, and is the root the conversation is named by.
    expect(kept.get("r1")).toEqual({ id: "r1", conversation: "gone", parent: "gone" });
    expect(kept.get("r2")).toEqual({ id: "r2", conversation: "lost", parent: "lost" });
    expect(kept.get("r3")).toMatchObject({
      parent: "m01",
      conversation: kept.get("m01")?.conversation,
    });

    const ignored = await run(["disentangle", path, "--json", "--ignore-links"]);
    expect(ignored.code).toBe(0);
    expect(ignored.stderr).toBe("");
    const lines = parseLines(ignored.stdout);
    checkShape(lines, input);
    for (const line of lines) {
      expect(["gone", "lost"]).not.toContain(line.parent);
      expect(["gone", "lost"]).not.toContain(line.conversation);
    }
    const summary = await run(["disentangle", path, "--ignore-links"]);
    expect(summary.stdout).toMatch(/links: 0 platform/);
    expect((await run(["disentangle", path])).stdout).toMatch(/links: 3 platform/);
  });

  it("summarises conversations, with chat text made safe for a terminal", async () => {
    const hostile = interleaved.map((m, i) =>
      i === 2 ? { ...m, text: `\u001b[31malice: ${"red ".repeat(60)}\u001b[0m\nsecond line` } : m,
    );
    const { code, stdout, stderr } = await run(["disentangle", file("hostile.jsonl", hostile)]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).not.toContain("\u001b");
    expect(stdout).toMatch(/^channel "default": 10 messages, (\d+) conversations? \(/);
    expect(stdout).toMatch(/\n1 channel, 10 messages, \d+ conversations?\n$/);
    const counted = Number(/, (\d+) conversations? \(/.exec(stdout)?.[1]);
    const json = parseLines(
      (await run(["disentangle", file("hostile2.jsonl", hostile), "--json"])).stdout,
    );
    expect(counted).toBe(new Set(json.map((l) => l.conversation)).size);
    for (const line of stdout.split("\n")) expect(Array.from(line).length).toBeLessThan(200);
    expect(stdout).not.toContain("second line\n");
  });

  it("says no messages for an empty input", async () => {
    const { code, stdout } = await run(["disentangle", file("empty.jsonl", [])]);
    expect(code).toBe(0);
    expect(stdout).toBe("no messages\n");
    expect((await run(["disentangle", file("empty2.jsonl", []), "--json"])).stdout).toBe("");
  });

  it("refuses a missing file, two files and an unknown flag, naming the problem", async () => {
    const missing = await run(["disentangle", join(dir, "nothing-here.jsonl")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^disentangle: cannot read .*nothing-here\.jsonl/);
    expect(missing.stdout).toBe("");

    const two = await run(["disentangle", "a.jsonl", "b.jsonl"]);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/^disentangle: expected one input file/);
    expect(two.stderr).toContain("Usage: npm start -- disentangle");

    const none = await run(["disentangle"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^disentangle: missing input file/);

    const flag = await run(["disentangle", file("flag.jsonl", interleaved), "--threads"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/^disentangle: .*--threads/);
    expect(flag.stdout).toBe("");
  });

  it("stops on a malformed line unless --skip-invalid", async () => {
    const path = file("broken.jsonl", [interleaved[0], "{not json", interleaved[1]]);
    const stopped = await run(["disentangle", path, "--json"]);
    expect(stopped.code).toBe(1);
    expect(stopped.stdout).toBe("");
    expect(stopped.stderr).toMatch(/line 2: .*\n.*1 invalid line; nothing was linked/);
    const skipped = await run(["disentangle", path, "--json", "--skip-invalid"]);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/^skipped line 2: /);
    expect(parseLines(skipped.stdout).map((l) => l.id)).toEqual(["m01", "m02"]);
  });

  it("answers --help with every option", async () => {
    const { code, stdout } = await run(["disentangle", "--help"]);
    expect(code).toBe(0);
    for (const flag of ["--channel", "--timezone", "--ignore-links", "--json", "--skip-invalid"]) {
      expect(stdout).toContain(`  ${flag}`);
    }
  });
});
