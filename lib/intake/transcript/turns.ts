/**
 * From segments to the product's messages: each transcript turn becomes one message of the
 * history store, its role mapped to the store's roles, its id derived from the transcript's
 * content and the turn's index (so a re-import is a repeat, never a new message), and a
 * compressed render for the model in which a log run is its distinct lines with repeat counts
 * and code stays whole.
 */
import { createHash } from "node:crypto";
import type { Message, Part, Role } from "../../history/index.js";
import { parseTimestamp } from "../../history/messages/index.js";
import { volatilePrefixLength } from "./log-prefix.js";
import { decodeUtf8, encodeUtf8 } from "./source.js";
import type { SegmentationOutcome, TranscriptSegment } from "./types.js";

/** One turn of a transcript: its segments, in order. */
export interface ImportedTurn {
  /** The turn's index in the transcript, from 0. */
  index: number;
  /** The store's role for it (see {@link storeRole}). */
  role: Role;
  /** The role as the transcript wrote it, or null before the first marker. */
  label: string | null;
  segments: TranscriptSegment[];
  byteStart: number;
  byteEnd: number;
  /** The session's own time for the turn: its JSONL line's `timestamp` as written, or null. */
  timestamp: string | null;
  /** What the model is shown: bodies as they are, code whole, log runs compressed. */
  rendered: string;
}

const STORE_ROLES: Record<string, Role> = {
  system: "system",
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  tool: "tool",
};

/**
 * The store's role for a transcript role (System → system, User/Human → user, Assistant/AI →
 * assistant, Tool → tool, in any case); anything else, and text before the first marker, is
 * stored as `user`, with the transcript's own label kept in the message's metadata.
 */
function storeRole(label: string | null): Role {
  return (label === null ? undefined : STORE_ROLES[label.toLowerCase()]) ?? "user";
}

/** The turns of a segmentation, in transcript order. */
export function importedTurns(outcome: SegmentationOutcome): ImportedTurn[] {
  const turns: ImportedTurn[] = [];
  for (const segment of outcome.segments) {
    const last = turns.at(-1);
    if (last !== undefined && last.index === segment.turn) {
      last.segments.push(segment);
      last.byteEnd = segment.byteEnd;
      continue;
    }
    turns.push({
      index: segment.turn,
      role: storeRole(segment.role),
      label: segment.role,
      segments: [segment],
      byteStart: segment.byteStart,
      byteEnd: segment.byteEnd,
      timestamp: segment.timestamp ?? null,
      rendered: "",
    });
  }
  for (const turn of turns) turn.rendered = turn.segments.map(renderSegment).join("");
  return turns;
}

/**
 * A segment as the model reads it. A log run becomes its distinct lines in order of first
 * appearance, a line that only differs by its timestamp (and bracketed counters) counting as
 * the same, each with `(xN)` when it occurs N > 1 times; bodies and code are their text.
 */
function renderSegment(segment: TranscriptSegment): string {
  if (segment.kind !== "log") return segment.content;
  const trailing = segment.content.endsWith("\n") ? "\n" : "";
  const lines = (trailing ? segment.content.slice(0, -1) : segment.content).split("\n");
  const distinct = new Map<string, { shown: string; count: number }>();
  for (const line of lines) {
    const { key, shown } = withoutVolatilePrefix(line.endsWith("\r") ? line.slice(0, -1) : line);
    const entry = distinct.get(key);
    if (entry) entry.count++;
    else distinct.set(key, { shown, count: 1 });
  }
  const rendered = [...distinct.values()].map(({ shown, count }) =>
    count > 1 ? `${shown} (x${count})` : shown,
  );
  return `${rendered.join("\n")}${trailing}`;
}

/**
 * A log line's grouping key and what is shown of it: without its timestamp and counters when it
 * has them (the key then marked as masked, so it cannot equal a literal line), else itself.
 */
function withoutVolatilePrefix(line: string): { key: string; shown: string } {
  const bytes = encodeUtf8(line);
  const prefix = volatilePrefixLength(bytes, 0, bytes.length);
  if (prefix === 0) return { key: line, shown: line };
  const rest = decodeUtf8(bytes, prefix, bytes.length).trimStart();
  return { key: `\u0000TS\u0000${rest}`, shown: rest };
}

/** A transcript's id: the first 16 hex digits of the SHA-256 of its text. */
export function transcriptId(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/**
 * Epoch milliseconds of a turn's timestamp when it is an ISO-8601 date-time with a zone (or epoch
 * milliseconds) in the accepted window, as chat input's `ts` is read; otherwise undefined.
 */
function turnTs(timestamp: string | null): number | undefined {
  if (timestamp === null) return undefined;
  try {
    return parseTimestamp(timestamp);
  } catch {
    return undefined;
  }
}

/**
 * The turns as messages of the history store: id `<transcriptId>-<turn>`, the store's role, one
 * text part per segment (with its kind and byte range), and the transcript's label and turn in
 * the metadata (`cache: true` on a system turn the policy marks for prompt caching). A turn whose
 * line carries a `timestamp` keeps it in the metadata as written and, when it is a date-time with
 * a zone, as the message's `ts`.
 */
export function transcriptMessages(text: string, turns: readonly ImportedTurn[]): Message[] {
  const id = transcriptId(text);
  return turns.map((turn) => {
    const parts: Part[] = turn.segments.map((segment) => ({
      type: "text",
      text: segment.content,
      metadata: { kind: segment.kind, byteStart: segment.byteStart, byteEnd: segment.byteEnd },
    }));
    const cache = turn.segments.some((segment) => segment.metadata.cache === true);
    const ts = turnTs(turn.timestamp);
    return {
      id: `${id}-${turn.index}`,
      role: turn.role,
      parts,
      metadata: {
        transcript: id,
        turn: turn.index,
        role: turn.label,
        ...(cache ? { cache: true } : {}),
        ...(turn.timestamp === null ? {} : { timestamp: turn.timestamp }),
      },
      ...(ts === undefined ? {} : { ts }),
    };
  });
}
