/**
 * The tick state's stored form (`encodeTickState`): the linker's window as bytes after the JSON,
 * what it saves over base64 inside the JSON, and states written that way before still read.
 */
import { readFileSync } from "node:fs";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { ReplyLinker } from "convoseg/linker";
import {
  decodeTickState,
  EMPTY_TICK_STATE,
  encodeTickState,
  type TickState,
} from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";

/** A linker's window after the shipped IRC excerpt: a busy channel's real state. */
function ircWindow(lines: number): string {
  const linker = new ReplyLinker();
  const rows = readFileSync(new URL("../../../examples/irc-ubuntu.jsonl", import.meta.url), "utf8")
    .trim()
    .split("\n")
    .slice(0, lines)
    .map(
      (line) => JSON.parse(line) as { id: number; ts: string; user: string | null; text: string },
    );
  for (const row of rows)
    linker.link({
      id: String(row.id),
      ts: Date.parse(row.ts),
      author: row.user ?? "",
      text: row.text,
      ...(row.user === null ? { kind: "system" as const } : {}),
    });
  return linker.snapshot();
}

/** The stored form before the window left the JSON: base64 in a `linker` field. */
function storedBefore(state: TickState): Uint8Array {
  const { readUpTo, seqSeen, broken, threads, ...rest } = state;
  return deflateRawSync(
    JSON.stringify({
      v: 1,
      ...rest,
      readUpTo: readUpTo === null ? null : readUpTo.toString(),
      ...(seqSeen === null ? {} : { seqSeen: seqSeen.toString() }),
      broken: broken.map((b) => ({ ...b, first: b.first.toString(), last: b.last.toString() })),
    }),
  );
}

describe("the tick state's stored form", () => {
  const state: TickState = { ...EMPTY_TICK_STATE, linker: ircWindow(300), readUpTo: 299n };

  it("gives back the window exactly, and every other field", () => {
    expect(decodeTickState("c", encodeTickState(state))).toEqual(state);
    const tiny: TickState = { ...state, linker: ircWindow(1) };
    expect(decodeTickState("c", encodeTickState(tiny))).toEqual(tiny);
    // Without a window (contiguous mode), the JSON alone, as before: no zero byte, no bytes after.
    const plain = inflateRawSync(encodeTickState(EMPTY_TICK_STATE));
    expect(plain.includes(0)).toBe(false);
    expect(JSON.parse(plain.toString("utf8"))).not.toHaveProperty("linker");
  });

  it("still reads a state stored with the window as base64 in the JSON", () => {
    expect(decodeTickState("c", storedBefore(state))).toEqual(state);
  });

  it("stores a busy channel's window in fewer bytes than base64 in the JSON did", () => {
    const now = encodeTickState(state).length;
    const before = storedBefore(state).length;
    expect(now).toBeLessThan(before * 0.95);
  });
});
