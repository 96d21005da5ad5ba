/**
 * The exactly-once property with edits and deletions: random chat and random edits and deletions
 * of it, each ingested at a random time (before or after its segment goes out), ticks dying after
 * random calls. Checked: every message never deleted is in exactly one distinct delivered
 * segment; no message is in two; a deleted message is in none sent after its deletion; a
 * segment's first send is its reference segment without what was deleted by then (its id kept);
 * a resend repeats it, less what was deleted since; and every body carries each message's text as
 * of the send.
 */

import {
  type ConversationMode,
  runTick,
  type SegmentDelivery,
  type TickSettings,
} from "convoseg/pipeline";
import { parseSegmentBody } from "convoseg/pipeline/contract";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Chat,
  chatArbitrary,
  crashingDeps,
  crashSettings,
  MINUTE,
  reference,
  replay,
  type StoresFactory,
  settingsArbitrary,
  survive,
  T0,
  TICK,
  type TimedChange,
} from "./crash-replay.js";

interface Change {
  target: number;
  kind: "edit" | "delete";
  /** Minutes after the target message's timestamp. */
  delay: number;
}

const changesArbitrary = fc.array(
  fc.record({
    target: fc.nat(),
    kind: fc.constantFrom<Change["kind"]>("edit", "delete"),
    delay: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 100, max: 400 })),
  }),
  { maxLength: 15 },
);

/** The tick before which something ingested at `at` is stored: the first with its clock at or past it. */
const tickOf = (at: number) => Math.max(0, Math.ceil((at - T0) / TICK));

/** The changes as ingestion lines in time order, each with the tick it is applied before. */
function timedChanges(chat: Chat[], changes: Change[]) {
  return changes
    .map((c, k) => {
      const message = chat[c.target % chat.length];
      const at = message.ts + c.delay * MINUTE;
      const target = { id: message.id, channel: message.channel };
      const input: Record<string, unknown> =
        c.kind === "delete"
          ? { op: "delete", ...target }
          : { op: "edit", ...target, text: `edit ${k}`, editedAt: at };
      return { at, tick: tickOf(at), input };
    })
    .sort((a, b) => a.at - b.at);
}

/** What the store holds of each message before tick `tick`: its text, or deleted. */
function storedAt(chat: Chat[], changes: ReturnType<typeof timedChanges>, tick: number) {
  const state = new Map(
    chat.map((m) => [m.id, { text: m.text, editedAt: Number.NEGATIVE_INFINITY, deleted: false }]),
  );
  for (const { tick: applied, input } of changes) {
    if (applied > tick) break;
    const message = state.get(input.id as string);
    if (message === undefined || message.deleted) continue;
    if (input.op === "delete") message.deleted = true;
    else if ((input.editedAt as number) > message.editedAt) {
      message.text = input.text as string;
      message.editedAt = input.editedAt as number;
    }
  }
  return state;
}

/** The chat and changes replayed, each tick dying after call `crashes[tick]`; each send with its tick. */
async function replayWithChanges(
  makeStores: StoresFactory,
  chat: Chat[],
  s: TickSettings,
  crashes: number[],
  changes: readonly TimedChange[],
): Promise<{ delivery: SegmentDelivery; tick: number }[]> {
  const clock = { now: T0, wall: T0 };
  const stores = await makeStores(clock, 4);
  const sent: SegmentDelivery[] = [];
  const sends: { delivery: SegmentDelivery; tick: number }[] = [];
  await replay(
    chat,
    s,
    clock,
    stores,
    async (tick, crashesAllowed) => {
      // A process of its own per tick, dead once it crashed: a crashed tick's deliveries still
      // in flight would otherwise send, a tick later, what they read before a change.
      const crashAt = crashesAllowed ? (crashes[tick % crashes.length] ?? 0) : 0;
      const control = { calls: 0, crashAt, dies: true };
      const deps = crashingDeps(stores, { sent, settings: s, clock }, control);
      await runTick(deps).catch(survive);
      for (const delivery of sent.splice(0)) sends.push({ delivery, tick });
    },
    s.leaseMs + 1,
    changes,
  );
  return sends;
}

function expectChangesHonoured(
  sends: { delivery: SegmentDelivery; tick: number }[],
  chat: Chat[],
  changes: ReturnType<typeof timedChanges>,
  s: TickSettings,
): void {
  const final = storedAt(chat, changes, Number.POSITIVE_INFINITY);
  const firstSend = new Map<string, { ids: string[]; tick: number }>();
  for (const { delivery, tick } of sends) {
    const { segment, body } = delivery;
    expect(segment.late).toBe(false);
    const ids = segment.messages.map((m) => m.id);
    expect(ids.length).toBeGreaterThan(0);
    const stored = storedAt(chat, changes, tick);
    const parsed = parseSegmentBody(body);
    expect(parsed.messages?.map((m) => [m.id, m.text])).toEqual(
      ids.map((id) => [id, stored.get(id)?.text]),
    );
    const first = firstSend.get(segment.segmentId);
    if (first === undefined) firstSend.set(segment.segmentId, { ids, tick });
    else expect(ids).toEqual(first.ids.filter((id) => !stored.get(id)?.deleted));
  }
  const segmentOf = new Map<string, string>();
  for (const [segmentId, { ids }] of firstSend) {
    for (const id of ids) {
      expect(segmentOf.get(id)).toBeUndefined();
      segmentOf.set(id, segmentId);
    }
  }
  if (s.conversations === "linked") {
    // Linked, an edit or deletion the tick reads before linking changes what the linker reads, so
    // no one reference holds: every message not deleted by the end is in exactly one segment.
    for (const m of chat) if (!final.get(m.id)?.deleted) expect(segmentOf.has(m.id)).toBe(true);
    return;
  }
  // What the segmenter's minItems drops is in no segment, deleted or not (it is reported).
  const planned = new Set([...reference(chat, s).values()].flat(2));
  for (const m of chat) {
    if (!planned.has(m.id)) expect(segmentOf.has(m.id)).toBe(false);
    else if (!final.get(m.id)?.deleted) expect(segmentOf.has(m.id)).toBe(true);
  }
  // Each first send is its reference segment less what was deleted by then; the rest were all deleted.
  const matched = new Set<string>();
  for (const segments of reference(chat, s).values()) {
    for (const planned of segments) {
      const sent = [...firstSend.entries()].find(([, f]) => planned.includes(f.ids[0]));
      if (sent === undefined) {
        expect(planned.every((id) => final.get(id)?.deleted)).toBe(true);
        continue;
      }
      matched.add(sent[0]);
      const stored = storedAt(chat, changes, sent[1].tick);
      expect(sent[1].ids).toEqual(planned.filter((id) => !stored.get(id)?.deleted));
    }
  }
  expect(matched.size).toBe(firstSend.size);
}

/** The property on stores from `makeStores`. */
export function describeChangeProperties(
  name: string,
  makeStores: StoresFactory,
  effort: { maxMessages: number; runs: number; timeout: number },
  conversations: ConversationMode = "contiguous",
): void {
  describe(`${name}, ${conversations}: edits and deletions under random crash points`, () => {
    it(
      "delivers every message not deleted before delivery in exactly one segment, as stored then",
      async () => {
        await fc.assert(
          fc.asyncProperty(
            chatArbitrary(effort.maxMessages),
            changesArbitrary,
            settingsArbitrary,
            fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 20 }),
            async (chat, drawn, partial, crashes) => {
              // Linked, minItems 1: no piece is dropped, whatever the linker made of the edits.
              const s =
                conversations === "linked"
                  ? crashSettings({ ...partial, minItems: 1 }, conversations)
                  : crashSettings(partial);
              const changes = timedChanges(chat, drawn);
              const sends = await replayWithChanges(makeStores, chat, s, crashes, changes);
              expectChangesHonoured(sends, chat, changes, s);
            },
          ),
          { numRuns: effort.runs },
        );
      },
      effort.timeout,
    );
  });
}
