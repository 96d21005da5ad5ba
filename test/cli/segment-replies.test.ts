/**
 * `segment` with replies (issue 24 §3): a size cut keeps a reply with the message it answers
 * where the segmenter's rule can; a replyTo naming no message of the channel is ignored for
 * cutting and counted on stderr, never an error; without replyTo the output is exactly the
 * segmenter's without links (property); `--json` says each segment's thread (null for the channel's own stream).
 * The channel's own messages are one stream here (`--conversations contiguous`), as before the
 * reply linker: `segment-conversations.test.ts` has the linked conversations.
 */

import { ConversationSegmenter } from "convoseg/segmenter";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const NOW = T0 + 30 * DAY;

const lines = (messages: object[]) => messages.map((m) => `${JSON.stringify(m)}\n`).join("");
const segment = (messages: object[], ...flags: string[]) =>
  runCli(
    ["segment", "-", "--json", "--conversations", "contiguous", ...flags],
    NOW,
    lines(messages),
  );
const ids = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l).messageIds);

/**
 * One conversation of five messages, the widest gap (10 minutes) before m2: at --max-size 4 the
 * plain cut falls there, between m2 and m1, which m2 answers.
 */
const conversation = [
  { id: "m0", ts: T0 },
  { id: "m1", ts: T0 + MINUTE },
  { id: "m2", ts: T0 + 11 * MINUTE },
  { id: "m3", ts: T0 + 12 * MINUTE },
  { id: "m4", ts: T0 + 13 * MINUTE },
];

describe("segment with replies", () => {
  it("keeps a reply with the message it answers when a long conversation is cut", async () => {
    const plain = await segment(conversation, "--max-size", "4");
    expect(ids(plain.stdout)).toEqual([
      ["m0", "m1"],
      ["m2", "m3", "m4"],
    ]);
    const linked = conversation.map((m) => (m.id === "m2" ? { ...m, replyTo: "m1" } : m));
    const { code, stdout, stderr } = await segment(linked, "--max-size", "4");
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(ids(stdout)).toEqual([["m0", "m1", "m2", "m3"], ["m4"]]);
    expect(
      stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).cut),
    ).toEqual(["start", "size"]);
  });

  it("ignores and counts a replyTo naming no message of its channel, and one naming itself", async () => {
    const messages = [
      ...conversation.map((m) => (m.id === "m2" ? { ...m, replyTo: "gone" } : m)),
      // m3 answers itself (dropped when read: no link, no count); m4 answers b1 of channel b.
      { id: "b1", ts: T0, channel: "b" },
    ].map((m) =>
      m.id === "m3" ? { ...m, replyTo: "m3" } : m.id === "m4" ? { ...m, replyTo: "b1" } : m,
    );
    const { code, stdout, stderr } = await segment(messages, "--max-size", "4");
    expect(code).toBe(0);
    expect(stderr).toBe(
      "segment: 2 replyTo name no message of their channel: ignored for cutting\n",
    );
    // Channels in id order: "b" before "default".
    expect(ids(stdout)).toEqual([["b1"], ["m0", "m1"], ["m2", "m3", "m4"]]);
    const one = await segment([{ id: "x", ts: T0, replyTo: "y" }]);
    expect(one.stderr).toBe(
      "segment: 1 replyTo names no message of its channel: ignored for cutting\n",
    );
  });

  it("segments a thread's replies as their own stream and prints each segment's thread", async () => {
    const { code, stdout, stderr } = await segment([
      { id: "r", ts: T0 },
      { id: "t1", ts: T0 + MINUTE, thread: "r", replyTo: "r" },
      { id: "c1", ts: T0 + 2 * MINUTE },
      // The root's own line may name its thread (Slack's thread_ts): it stays in the channel's.
      { id: "s", ts: T0 + 3 * MINUTE, thread: "s" },
      { id: "t2", ts: T0 + DAY + 3 * MINUTE, thread: "r" },
      { id: "u1", ts: T0 + 4 * MINUTE, thread: "s" },
    ]);
    expect(code).toBe(0);
    // A reply to its thread's root names a message of the channel: not counted.
    expect(stderr).toBe("");
    const segments = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(segments.map((s) => [s.thread, s.index, s.messageIds])).toEqual([
      [null, 1, ["r", "c1", "s"]],
      ["r", 1, ["t1"]],
      ["r", 2, ["t2"]],
      ["s", 1, ["u1"]],
    ]);
    const table = await runCli(
      ["segment", "-", "--conversations", "contiguous"],
      NOW,
      lines([
        { id: "r", ts: T0 },
        { id: "t", ts: T0, thread: "r" },
      ]),
    );
    expect(table.stdout).toContain('channel "default" thread "r": 1 message');
    expect(table.stdout).toContain("1 channel (1 thread), 2 messages, 2 closed segments");
  });

  it("without replyTo prints exactly the segmenter's segments without links", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            channel: fc.constantFrom("a", "b"),
            step: fc.constantFrom(1, 2, 5, 30, 2000),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        async (steps, maxSize, unknownLinks) => {
          let ts = T0;
          const messages = steps.map(({ channel, step }, i) => {
            ts += step * MINUTE;
            return { id: `m${i}`, ts, channel };
          });
          // Links to no message of the channel change nothing but the count on stderr.
          const input = unknownLinks
            ? messages.map((m) => ({ ...m, replyTo: "elsewhere" }))
            : messages;
          const { code, stdout, stderr } = await segment(
            input,
            "--max-size",
            String(maxSize),
            "--settle",
            "1h",
          );
          expect(code).toBe(0);
          expect(stderr).toBe(
            unknownLinks
              ? `segment: ${messages.length} replyTo name${messages.length === 1 ? "s" : ""} no message of ${messages.length === 1 ? "its" : "their"} channel: ignored for cutting\n`
              : "",
          );
          const segmenter = new ConversationSegmenter({ maxSize, settle: 60 * MINUTE });
          const expected = ["a", "b"].flatMap((channel) =>
            segmenter
              .closedSegments(
                messages.filter((m) => m.channel === channel),
                NOW,
                (m) => m.ts,
              )
              .map((piece) => piece.map((m) => m.id)),
          );
          expect(ids(stdout)).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
