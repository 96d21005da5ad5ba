/**
 * `segment --conversations`: with `linked` (the default) a channel's own messages are linked by
 * the reply linker and each conversation is segmented as a stream of its own; every message is
 * in exactly one segment, a segment's messages share one conversation, a platform's `replyTo` is
 * taken as given, and a long conversation is still cut at its lulls; thread replies are segmented
 * as before; `contiguous` prints what the command printed before the linker.
 */
import { compareRefs } from "convoseg/identity";
import { type LinkDecision, linkAll, settledConversations } from "convoseg/linker";
import { ConversationSegmenter } from "convoseg/segmenter";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { conversationStreams } from "../../cli/shared/conversation-streams.js";
import { runCli } from "../support/cli.js";

const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const NOW = T0 + 30 * DAY;

interface Line {
  id: string;
  ts: number;
  channel?: string;
  user?: string | null;
  text?: string;
  system?: boolean;
  replyTo?: string;
  thread?: string;
}

const lines = (messages: Line[]) => messages.map((m) => `${JSON.stringify(m)}\n`).join("");
const segment = (messages: Line[], ...flags: string[]) =>
  runCli(["segment", "-", ...flags], NOW, lines(messages));
const json = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

/** Two help conversations of one channel, interleaved, with a join between them. */
const chat: Line[] = [
  ["ana", "how do I mount an ntfs partition read-write on boot?"],
  ["bo", "anyone know why my wifi drops after suspend?"],
  ["cy", "ana: add it to /etc/fstab with the ntfs-3g type"],
  [null, "dee [~dee@host] has joined #help"],
  ["dee", "bo: which wifi card? run lspci and look for the network controller"],
  ["ana", "cy: thanks, and which options for the fstab line?"],
  ["bo", "dee: an intel 7260, lspci says iwlwifi"],
  ["cy", "ana: defaults,uid=1000 is enough for the ntfs partition"],
  ["dee", "bo: reload iwlwifi after suspend, that fixes the wifi drops"],
  ["ana", "cy: the ntfs partition mounts now, thanks"],
  ["bo", "dee: great, the wifi stays up after suspend now"],
].map(([user, text], i) => ({
  id: `m${String(i).padStart(2, "0")}`,
  ts: T0 + i * MINUTE,
  user,
  text: text as string,
  ...(user === null ? { system: true } : {}),
}));

/** The linker's decisions for a channel's own lines as `segment` gives them to it. */
function decisions(messages: Line[]): LinkDecision[] {
  return linkAll(
    messages.toSorted(compareRefs).map((m) => ({
      id: m.id,
      ts: m.ts,
      author: m.user ?? "",
      text: m.text ?? "",
      ...(m.system ? { kind: "system" as const } : {}),
      ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
    })),
  );
}

/** The stream the CLI puts a message in: its conversation, or (a system line) none. */
/** Each message's conversation as the whole run settles it (null: a system line, in none). */
function conversationsOf(messages: Line[]): Map<string, string | null> {
  const all = decisions(messages);
  const settled = settledConversations(all);
  return new Map(all.map((d, i) => [d.id, d.source === "system" ? null : (settled[i] as string)]));
}

describe("segment --conversations linked", () => {
  it("is the default: each conversation its own stream, every message in one segment", async () => {
    const { code, stdout, stderr } = await segment(chat, "--json");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const segments = json(stdout);
    const ids = segments.flatMap((s) => s.messageIds);
    expect(ids.toSorted()).toEqual(chat.map((m) => m.id));
    const conversationOf = conversationsOf(chat);
    for (const s of segments) {
      expect(Object.keys(s)).toEqual([
        "channel",
        "thread",
        "conversation",
        "index",
        "first",
        "last",
        "count",
        "cut",
        "gapBeforeMs",
        "messageIds",
      ]);
      expect(s.thread).toBeNull();
      for (const id of s.messageIds) expect(conversationOf.get(id)).toBe(s.conversation);
      // Named by its first message, the first of its stream; system lines in the channel's own.
      expect(s.messageIds[0]).toBe(s.conversation ?? s.messageIds[0]);
    }
    // More than one conversation, so more than the one segment contiguous makes of the hour.
    expect(new Set(segments.map((s) => s.conversation)).size).toBeGreaterThan(1);
    const contiguous = await segment(chat, "--json", "--conversations", "contiguous");
    expect(json(contiguous.stdout).map((s) => s.messageIds)).toEqual([chat.map((m) => m.id)]);
    // Explicit linked is the default.
    expect((await segment(chat, "--json", "--conversations", "linked")).stdout).toBe(stdout);
  });

  it("lists a channel's conversations by first message, then its threads", async () => {
    const messages: Line[] = [
      ...chat,
      { id: "t1", ts: T0 + 2 * MINUTE, user: "eve", text: "in the thread", thread: "m01" },
      { id: "t2", ts: T0 + 3 * MINUTE, user: "fay", text: "me too", thread: "m00" },
    ];
    const { code, stdout } = await segment(messages, "--json");
    expect(code).toBe(0);
    const segments = json(stdout);
    const own = segments.filter((s) => s.thread === null);
    // Conversations by first message, then the channel's system lines.
    const linked = own.filter((s) => s.conversation !== null);
    const firsts = linked.map((s) => chat.findIndex((m) => m.id === s.messageIds[0]));
    expect(firsts).toEqual(firsts.toSorted((a, b) => a - b));
    expect(own.slice(linked.length).every((s) => s.conversation === null)).toBe(true);
    expect(segments.slice(own.length).map((s) => [s.thread, s.conversation, s.messageIds])).toEqual(
      [
        ["m00", null, ["t2"]],
        ["m01", null, ["t1"]],
      ],
    );
  });

  it("segments thread replies exactly as contiguous does", async () => {
    const threaded: Line[] = [
      ...chat,
      { id: "r1", ts: T0 + 2 * MINUTE, user: "eve", text: "same here", thread: "m01" },
      { id: "r2", ts: T0 + 3 * DAY, user: "bo", text: "fixed", thread: "m01" },
      { id: "r3", ts: T0 + 3 * DAY + MINUTE, user: "eve", text: "ok", thread: "m01" },
      { id: "s1", ts: T0 + 4 * MINUTE, user: "fay", text: "+1", thread: "m05", replyTo: "m05" },
    ];
    const strip = ({ conversation: _conversation, ...rest }: Record<string, unknown>) => rest;
    const linked = json((await segment(threaded, "--json", "--max-size", "2")).stdout);
    const contiguous = json(
      (await segment(threaded, "--json", "--max-size", "2", "--conversations", "contiguous"))
        .stdout,
    );
    const threads = (segments: Record<string, unknown>[]) =>
      segments.filter((s) => s.thread !== null).map(strip);
    expect(threads(linked)).toEqual(threads(contiguous));
    expect(threads(linked).length).toBe(3);
    expect(linked.filter((s) => s.thread !== null).every((s) => s.conversation === null)).toBe(
      true,
    );
  });

  it("takes a replyTo as given and cuts a long conversation at its lulls", async () => {
    const messages: Line[] = [
      { id: "q", ts: T0, user: "ana", text: "is the mirror down?" },
      // Unrelated words, two days later: its replyTo puts it with "q".
      { id: "a", ts: T0 + 2 * DAY, user: "cy", text: "yes, since monday", replyTo: "q" },
      { id: "b", ts: T0 + 2 * DAY + MINUTE, user: "ana", text: "thanks", replyTo: "a" },
    ];
    const { code, stdout, stderr } = await segment(messages, "--json");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const ofQ = json(stdout).filter((s) => s.conversation === "q");
    expect(ofQ.map((s) => [s.index, s.cut, s.messageIds])).toEqual([
      [1, "start", ["q"]],
      [2, "silence", ["a", "b"]],
    ]);
    expect(ofQ[1].gapBeforeMs).toBe(2 * DAY);
  });

  it("segments each conversation with the segmenter's options, open and dropped counted", async () => {
    const { code, stdout } = await segment(chat, "--json", "--min-items", "2");
    expect(code).toBe(0);
    const streams = conversationStreams(chat, decisions(chat));
    const segmenter = new ConversationSegmenter({ minItems: 2 });
    const expected = streams.flatMap(({ conversation, messages }) =>
      segmenter
        .closedSegments(messages, NOW, (m) => m.ts)
        .map((piece) => [conversation, piece.map((m) => m.id)]),
    );
    expect(json(stdout).map((s) => [s.conversation, s.messageIds])).toEqual(expected);
    // Still open at now: withheld, in each conversation of its own.
    const soon = await runCli(["segment", "-"], chat[chat.length - 1].ts + MINUTE, lines(chat));
    expect(soon.stdout).toMatch(
      /in \d+ linked conversations, 0 closed segments \(0 messages\), 10 open/,
    );
    expect(soon.stdout).toContain(
      'channel "default" system lines: 1 message, 0 closed segments (0 messages), 1 open',
    );
  });

  it("prints a channel's conversations in one table, each segment with its conversation", async () => {
    const { code, stdout } = await segment(chat);
    expect(code).toBe(0);
    const count = conversationStreams(chat, decisions(chat)).filter(
      (c) => c.conversation !== null,
    ).length;
    expect(stdout).toContain("minItems 1, conversations linked, now ");
    expect(stdout).toContain(
      `channel "default": 10 messages in ${count} linked conversations, ${count} closed segments (10 messages), 0 open, 0 dropped`,
    );
    expect(stdout).toMatch(/^ {2}conversation {3}# {2}first {19}last {20}messages {2}cut$/m);
    expect(stdout).toMatch(/^ {2}m00 {12}1 {2}2024-01-01 00:00:00Z {4}2024-01-01 \d\d:\d\d:00Z/m);
    expect(stdout).toContain(
      `1 channel (${count} conversations), 11 messages, ${count + 1} closed segments`,
    );
  });

  it("keeps every message in exactly one segment, one conversation each (property)", async () => {
    const words = ["mount", "wifi", "drops", "ntfs", "thanks", "why", "kernel", "boot", "?"];
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            user: fc.constantFrom("ana", "bo", "cy", null),
            text: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }),
            step: fc.constantFrom(0, 1, 5, 60 * 30),
            reply: fc.option(fc.nat(), { freq: 4 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.integer({ min: 1, max: 6 }),
        async (steps, maxSize) => {
          let ts = T0;
          const messages: Line[] = steps.map(({ user, text, step, reply }, i) => {
            ts += step * MINUTE;
            const line: Line = { id: `m${i}`, ts, user, text: text.join(" ") };
            if (user === null) line.system = true;
            if (reply !== null && i > 0) line.replyTo = `m${reply % i}`;
            return line;
          });
          const { code, stdout } = await segment(
            messages,
            "--json",
            "--max-size",
            String(maxSize),
            "--settle",
            "1h",
          );
          expect(code).toBe(0);
          const segments = json(stdout);
          expect(segments.flatMap((s) => s.messageIds).toSorted()).toEqual(
            messages.map((m) => m.id).toSorted(),
          );
          const conversationOf = conversationsOf(messages);
          for (const s of segments) {
            expect(s.count).toBeLessThanOrEqual(maxSize);
            for (const id of s.messageIds) expect(conversationOf.get(id)).toBe(s.conversation);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it("rejects another --conversations value, naming the two", async () => {
    const { code, stdout, stderr } = await segment(chat, "--conversations", "threads");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^segment: --conversations must be linked or contiguous \(got "threads"\)/,
    );
    expect(stderr).toContain("Usage: npm start -- segment");
  });
});

describe("conversationStreams", () => {
  const decision = (id: string, conversation: string): LinkDecision => ({
    id,
    conversation,
    source: "inferred",
  });

  it("groups by conversation, streams by their first message, messages in order", () => {
    const messages = ["a", "b", "c", "d", "e"].map((id) => ({ id }));
    const streams = conversationStreams(messages, [
      decision("a", "a"),
      decision("b", "b"),
      decision("c", "a"),
      decision("d", "x"),
      decision("e", "b"),
    ]);
    expect(streams.map((s) => [s.conversation, s.messages.map((m) => m.id)])).toEqual([
      ["a", ["a", "c"]],
      ["b", ["b", "e"]],
      ["x", ["d"]],
    ]);
  });

  it("refuses decisions that are not the messages'", () => {
    expect(() => conversationStreams([{ id: "a" }], [])).toThrow(RangeError);
    expect(() => conversationStreams([{ id: "a" }], [decision("b", "b")])).toThrow(
      /decision 0 is "b"'s, not "a"'s/,
    );
  });
});
