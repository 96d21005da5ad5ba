/**
 * The crash properties' machinery, for any pair of stores: random multi-channel chat ingested in
 * order, ticks on a schedule, each tick's process (or each fanned-out worker) dying right after
 * a random call it makes to the channel store, the message store or the queue (and a lost lease
 * later), then ticks until everything settled. The properties check the delivered segments
 * against one segmenter call per channel over its final stream.
 */

import { compareRefs } from "convoseg/identity";
import { type IngestStore, ingest } from "convoseg/ingest";
import { type ConversationMerge, linkAll, mergesOf, settleMerges } from "convoseg/linker";
import {
  type ConversationMode,
  runShare,
  runTick,
  type SegmentDelivery,
  type TickDependencies,
  type TickSettings,
  tickShares,
} from "convoseg/pipeline";
import type { ChannelStore } from "convoseg/pipeline/store";
import { ConversationSegmenter } from "convoseg/segmenter";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CrashControl, crashing, InjectedCrash } from "../../support/crash.js";
import type { RogueMarks } from "../../support/rogue-marks.js";

export const MINUTE = 60_000;
export const T0 = Date.UTC(2025, 0, 6);
export const TICK = 15 * MINUTE;

export type Chat = {
  id: string;
  ts: number;
  channel: string;
  user?: string;
  text: string;
  thread?: string;
  replyTo?: string;
};

const PEOPLE = ["ana", "ben", "cleo", "dev", "eli"];
const TOPICS = ["grub boot menu", "wifi driver drops", "printer queue stuck", "ssh key refused"];

/**
 * Chat on three channels: bursts, pauses of under an hour, and silences past `settle`; about one
 * message in four a reply in the thread of an earlier message of its channel (a root outside any
 * thread), so that threads are streams of their own, open while their channel goes on; and
 * about one in three a reply (`replyTo`) to a recent message of its channel, which the size cuts
 * read as the reference's do.
 */
export const chatArbitrary = (maxLength: number) =>
  fc
    .array(
      fc.record({
        channel: fc.constantFrom("a", "b", "c"),
        gap: fc.oneof(
          { weight: 5, arbitrary: fc.integer({ min: 0, max: 3 }) },
          { weight: 2, arbitrary: fc.integer({ min: 10, max: 50 }) },
          { weight: 1, arbitrary: fc.integer({ min: 150, max: 400 }) },
        ),
        root: fc.oneof(
          { weight: 3, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.nat(1000) },
        ),
        answers: fc.oneof(
          { weight: 2, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.integer({ min: 1, max: 8 }) },
        ),
        person: fc.nat(PEOPLE.length - 1),
        addressee: fc.option(fc.nat(PEOPLE.length - 1), { nil: undefined }),
        topic: fc.nat(TOPICS.length - 1),
      }),
      { minLength: 1, maxLength },
    )
    .map((steps) => {
      let ts = T0;
      const roots = new Map<string, string[]>();
      const said = new Map<string, string[]>();
      return steps.map(({ channel, gap, root, answers, person, addressee, topic }, i): Chat => {
        ts += gap * MINUTE;
        const id = `m${String(i).padStart(3, "0")}`;
        // People address each other and talk of a few topics: interleaved conversations to link.
        const to = addressee === undefined ? "" : `${PEOPLE[addressee]}: `;
        const text = `${to}${TOPICS[topic]} ${i}`;
        const message: Chat = { id, ts, channel, user: PEOPLE[person], text };
        const earlier = roots.get(channel) ?? [];
        if (root !== null && earlier.length > 0) message.thread = earlier[root % earlier.length];
        else roots.set(channel, [...earlier, id]);
        const before = said.get(channel) ?? [];
        const target = answers === null ? undefined : before.at(-answers);
        if (target !== undefined) message.replyTo = target;
        said.set(channel, [...before, id]);
        return message;
      });
    });

/**
 * A message's stream, as the tick keys it: its channel, and its thread's root when in one, or in
 * `linked` mode its conversation's first message.
 */
const streamKey = (m: { channel: string; thread?: string; conversation?: string }): string =>
  m.thread !== undefined
    ? `${m.channel}\u0000${m.thread}`
    : m.conversation !== undefined
      ? `${m.channel}\u0000c${m.conversation}`
      : m.channel;

export const settingsArbitrary = fc.record({
  maxSize: fc.integer({ min: 1, max: 6 }),
  minItems: fc.integer({ min: 1, max: 3 }),
});

/** The settings of the crash properties, around the generated segmenter options. */
export const crashSettings = (
  partial: { maxSize: number; minItems: number },
  conversations: ConversationMode = "contiguous",
): TickSettings => ({
  ...partial,
  conversations,
  settle: 2 * 60 * MINUTE,
  grace: 0,
  maxArrivalsPerChannel: 1000,
  leaseMs: MINUTE,
  channelConcurrency: 2,
  holdTimeoutMs: 5 * MINUTE,
});

/** The clocks a replay runs on: the pipeline's, and the wall's for leases and claims. */
export interface ReplayClock {
  now: number;
  wall: number;
}

/**
 * The two stores a replay runs on: messages (written by ingestion, read by the tick), channels;
 * and a writer of the channels' marks outside ingestion's protocol.
 */
export interface ReplayStores {
  messages: IngestStore & TickDependencies["messages"];
  channels: ChannelStore;
  rogue: RogueMarks;
}

/** Fresh, empty stores for one replay, on its clock, with a due index of `dueShards` shards. */
export type StoresFactory = (clock: ReplayClock, dueShards: number) => Promise<ReplayStores>;

/** The reply links the tick's size cuts read, as the reference reads them. */
const REPLY_LINKS = { id: (m: Chat) => m.id, replyTo: (m: Chat) => m.replyTo };

/**
 * One segmenter call per stream (a channel's own, each of its threads') over its final messages:
 * the distinct segments expected, by {@link streamKey}.
 */
export function reference(chat: Chat[], s: TickSettings): Map<string, string[][]> {
  const segmenter = new ConversationSegmenter({
    maxSize: s.maxSize,
    settle: s.settle,
    minItems: s.minItems,
  });
  const result = new Map<string, string[][]>();
  const keyed = s.conversations === "linked" ? linkedReference(chat) : chat;
  for (const stream of new Set(keyed.map(streamKey))) {
    const list = keyed.filter((m) => streamKey(m) === stream).sort(compareRefs);
    result.set(
      stream,
      segmenter
        .closedSegments(list, Number.MAX_SAFE_INTEGER, (m) => m.ts, undefined, REPLY_LINKS)
        .map((seg) => seg.map((m) => m.id)),
    );
  }
  return result;
}

/**
 * `linked` mode's reference: each channel's messages outside threads, in the order ingestion
 * writes them, through one reply linker that never stops; each message then keyed by the
 * conversation it puts it in.
 */
function linkedReference(chat: Chat[]): (Chat & { conversation?: string })[] {
  const { conversation } = linkedConversations(chat);
  return chat.map((m) => {
    const c = conversation.get(m.id);
    return c === undefined ? m : { ...m, conversation: c };
  });
}

/**
 * Each message's conversation as one reply linker that never stops decides it (per channel, its
 * messages outside threads in the order ingestion writes them), and the linker's merges
 * (`LinkDecision.merged`) in the order made. Where there are none, the tick's segments are one
 * big run's; where there are, which messages a merge hands over depends on what the tick had
 * delivered by then, so the segments depend on when ticks ran.
 */
function linkedConversations(chat: Chat[]): {
  conversation: Map<string, string>;
  merges: ConversationMerge[];
} {
  const sorted = [...chat].sort(compareRefs);
  const conversation = new Map<string, string>();
  const merges: ConversationMerge[] = [];
  for (const channel of new Set(sorted.map((m) => m.channel))) {
    const own = sorted.filter((m) => m.channel === channel && m.thread === undefined);
    const decisions = linkAll(
      own.map((m) => ({
        id: m.id,
        ts: m.ts,
        author: m.user ?? "",
        text: m.text,
        ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
      })),
    );
    for (const d of decisions) conversation.set(d.id, d.conversation);
    merges.push(...mergesOf(decisions));
  }
  return { conversation, merges };
}

/** The segments sent, each once, in first-sent order; one sent again repeats its messages. */
export function distinctSegments(sent: readonly SegmentDelivery[]): SegmentDelivery["segment"][] {
  const byId = new Map<string, string[]>();
  const distinct: SegmentDelivery["segment"][] = [];
  for (const { segment } of sent) {
    const ids = segment.messages.map((m) => m.id);
    const earlier = byId.get(segment.segmentId);
    if (earlier) {
      expect(ids).toEqual(earlier);
      continue;
    }
    byId.set(segment.segmentId, ids);
    distinct.push(segment);
  }
  return distinct;
}

/**
 * The distinct segments sent are exactly the reference's, none late, and a segment sent again
 * repeats its content. Returns how many distinct segments were sent.
 */
function expectReferenceSegments(sent: SegmentDelivery[], chat: Chat[], s: TickSettings): number {
  if (s.conversations === "linked") {
    const linked = linkedConversations(chat);
    if (linked.merges.length > 0) return expectMergedSegments(sent, chat, s, linked);
  }
  const byId = new Map<string, string[]>();
  const distinct = new Map<string, string[][]>();
  for (const segment of distinctSegments(sent)) {
    const ids = segment.messages.map((m) => m.id);
    expect(segment.late).toBe(false);
    // Linked, a segment outside threads is one conversation's, and names it; contiguous, none.
    const linked = s.conversations === "linked" && segment.thread === undefined;
    expect(typeof segment.conversation).toBe(linked ? "string" : "undefined");
    byId.set(segment.segmentId, ids);
    const stream = streamKey(segment);
    distinct.set(stream, [...(distinct.get(stream) ?? []), ids]);
  }
  for (const [stream, segments] of reference(chat, s)) {
    expect(distinct.get(stream) ?? []).toEqual(segments);
  }
  return byId.size;
}

/** A tick's dependencies on `stores`, every call of them counted by `control`. */
export function crashingDeps(
  stores: ReplayStores,
  world: { sent: SegmentDelivery[]; settings: TickSettings; clock: ReplayClock },
  control: CrashControl,
): TickDependencies {
  const { sent, settings, clock } = world;
  return {
    messages: crashing(stores.messages, control),
    channels: crashing(stores.channels, control),
    sink: crashing(
      { send: async (entries: SegmentDelivery[]) => void sent.push(...entries) },
      control,
    ),
    bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
    metrics: { add() {} },
    logger: { info() {}, warn() {}, error() {} },
    settings,
    now: () => clock.now,
    wallNow: () => clock.wall,
  };
}

export const survive = (error: unknown) => {
  if (!(error instanceof InjectedCrash)) throw error;
};

/** An edit or deletion line ingested once the pipeline clock reaches `at`. */
export interface TimedChange {
  at: number;
  input: Record<string, unknown>;
}

/**
 * Ticks every {@link TICK} from the first message until the chat has settled and nothing is due,
 * ingesting what the clock has reached before each tick (its messages, then the `changes` due, in
 * order); `tick` runs one (possibly crashing) tick, told whether crashes are still allowed (not
 * once the chat has settled).
 */
export async function replay(
  chat: Chat[],
  s: TickSettings,
  clock: ReplayClock,
  stores: ReplayStores,
  tick: (index: number, crashes: boolean) => Promise<void>,
  wallStep = s.leaseMs + 1,
  changes: readonly TimedChange[] = [],
): Promise<void> {
  const sorted = [...chat].sort(compareRefs);
  const end = sorted[sorted.length - 1].ts + s.settle + 2 * TICK;
  let next = 0;
  let nextChange = 0;
  for (let index = 0; clock.now <= end || (await stores.channels.earliestDue()) !== null; index++) {
    const batch: unknown[] = [];
    while (next < sorted.length && sorted[next].ts <= clock.now) batch.push(sorted[next++]);
    while (nextChange < changes.length && changes[nextChange].at <= clock.now) {
      batch.push(changes[nextChange++].input);
    }
    if (batch.length > 0) await ingest(stores.messages, batch);
    await tick(index, clock.now <= end);
    clock.now += TICK;
    // Past any lease and claim: a crashed tick's segments and share are taken up again.
    clock.wall += wallStep;
    if (index > 2000) throw new Error("did not settle");
  }
}

/**
 * One tick's process: its dependencies, dead from the call after `crashAt` on (0: it does not
 * die), so that a crashed tick's work still in flight makes no more calls, as a killed Lambda's.
 */
function tickProcess(
  stores: ReplayStores,
  sent: SegmentDelivery[],
  settings: TickSettings,
  clock: ReplayClock,
  crashAt: number,
) {
  return crashingDeps(stores, { sent, settings, clock }, { calls: 0, crashAt, dies: true });
}

/**
 * Where the linker merged conversations: every message in at most one segment (in every one with
 * `minItems` 1), a segment sent again repeats its content, a thread's segment holds its replies,
 * and every other segment holds messages of one conversation as the merges leave it, and names
 * one of its ids: the conversation each message was linked into, or one it was merged into later.
 * Returns how many distinct segments were sent.
 */
function expectMergedSegments(
  sent: SegmentDelivery[],
  chat: Chat[],
  s: TickSettings,
  linked: ReturnType<typeof linkedConversations>,
): number {
  const settled = settleMerges(linked.merges);
  // Where a conversation went after each merge: a message's segment is named by the conversation
  // it was linked into, or by one that conversation was merged into before the segment was sent.
  const keptFrom = new Map(linked.merges.map((m) => [m.gone, m.kept]));
  const namesOf = (conversation: string): string[] => {
    const names = [conversation];
    for (let c = keptFrom.get(conversation); c !== undefined; c = keptFrom.get(c)) names.push(c);
    return names;
  };
  const threadOf = new Map(chat.map((m) => [m.id, m.thread]));
  const delivered = new Set<string>();
  const distinct = distinctSegments(sent);
  for (const segment of distinct) {
    const ids = segment.messages.map((m) => m.id);
    for (const id of ids) {
      expect(delivered.has(id), `${id} delivered twice`).toBe(false);
      delivered.add(id);
    }
    if (segment.thread !== undefined) {
      for (const id of ids) expect(threadOf.get(id)).toBe(segment.thread);
      continue;
    }
    const conversations = new Set(ids.map((id) => settled(linked.conversation.get(id) as string)));
    expect(conversations).toEqual(new Set([settled(segment.conversation as string)]));
    for (const id of ids)
      expect(namesOf(linked.conversation.get(id) as string), id).toContain(segment.conversation);
  }
  if (s.minItems === 1) expect([...delivered].sort()).toEqual(chat.map((m) => m.id).sort());
  return distinct.length;
}

/** The chat replayed with one tick at a time, its process dying after call `crashes[tick]`. */
async function replayWithCrashes(
  makeStores: StoresFactory,
  chat: Chat[],
  s: TickSettings,
  crashes: number[],
): Promise<SegmentDelivery[]> {
  const clock = { now: T0, wall: T0 };
  const stores = await makeStores(clock, 4);
  const sent: SegmentDelivery[] = [];
  await replay(chat, s, clock, stores, async (tick, crashesAllowed) => {
    const crashAt = crashesAllowed ? (crashes[tick % crashes.length] ?? 0) : 0;
    await runTick(tickProcess(stores, sent, s, clock, crashAt)).catch(survive);
  });
  return sent;
}

/** What the rogue writer does before a tick (`../support/rogue-marks.ts`). */
type RogueStep =
  | { action: "none" }
  /** Sets a due channel's sequence back by `back`. */
  | { action: "rewind"; channel: string; back: bigint }
  /** Replaces its hold on the channel by one under a new name, at `offset` from the sequence. */
  | { action: "renew"; channel: string; offset: number };

const rogueArbitrary = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.constant<RogueStep>({ action: "none" }) },
    {
      weight: 1,
      arbitrary: fc.record({
        action: fc.constant("rewind" as const),
        channel: fc.constantFrom("a", "b", "c"),
        back: fc.bigInt({ min: 1n, max: 10n ** 12n }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        action: fc.constant("renew" as const),
        channel: fc.constantFrom("a", "b", "c"),
        offset: fc.integer({ min: -3, max: 1 }),
      }),
    },
  ),
  { minLength: 1, maxLength: 20 },
);

/**
 * The chat replayed with crashes as {@link replayWithCrashes}, and the rogue writer's step before
 * each tick. A sequence is set back only where a tick can tell: on a channel whose every position
 * handed out a tick has seen (below that, messages no tick has read yet would be hidden until
 * writers pass them again), due once set back (a crashed tick's process goes on in its other
 * workers, and may finish the channel with a later due time after a check made before), in a tick
 * that does not crash (else the next writer would be handed positions behind the read position
 * before any tick could see it); elsewhere it is put back. A rewind no tick loads before the next
 * writer is a limit, not a bug: see docs/pipeline.md, "Writers outside the protocol". Wall time
 * steps two hours, past the hold timeout, so that broken holds' day-long watches end within a few
 * ticks.
 */
async function replayWithRogue(
  makeStores: StoresFactory,
  chat: Chat[],
  s: TickSettings,
  crashes: number[],
  steps: RogueStep[],
): Promise<SegmentDelivery[]> {
  const clock = { now: T0, wall: T0 };
  const stores = await makeStores(clock, 4);
  const sent: SegmentDelivery[] = [];
  const holds = new Map<string, string>();
  let renewals = 0;
  const rogueStep = async (step: RogueStep): Promise<boolean> => {
    if (step.action === "none") return false;
    const { marks, record } = await stores.channels.load(step.channel);
    const { seq } = marks;
    if (seq === null) return false;
    if (step.action === "rewind") {
      if (record.state.seqSeen !== seq) return false;
      await stores.rogue.setSeq(step.channel, seq - step.back);
      // Due only when checked after the rewind: a crashed tick's tail may finish the channel
      // meanwhile, and its finish leaves it due only if it sees the sequence changed.
      for await (const due of stores.channels.dueChannels(clock.now)) {
        if (due.channel === step.channel) return true;
      }
      await stores.rogue.setSeq(step.channel, seq);
      return false;
    }
    const previous = holds.get(step.channel);
    if (previous !== undefined) await stores.rogue.setHold(step.channel, previous, null);
    const name = `h1.rogue${++renewals}`;
    await stores.rogue.setHold(step.channel, name, seq + BigInt(step.offset));
    holds.set(step.channel, name);
    return false;
  };
  await replay(
    chat,
    s,
    clock,
    stores,
    async (tick, crashesAllowed) => {
      const rewound = crashesAllowed && (await rogueStep(steps[tick % steps.length]));
      const crashAt = crashesAllowed && !rewound ? (crashes[tick % crashes.length] ?? 0) : 0;
      await runTick(tickProcess(stores, sent, s, clock, crashAt)).catch(survive);
    },
    2 * 60 * MINUTE,
  );
  return sent;
}

/** Every message is in exactly one distinct segment, and a segment sent again repeats itself. */
function expectEachMessageOnce(sent: SegmentDelivery[], chat: Chat[]): void {
  const byId = new Map<string, string[]>();
  for (const { segment } of sent) {
    const ids = segment.messages.map((m) => m.id);
    const earlier = byId.get(segment.segmentId);
    if (earlier) expect(ids).toEqual(earlier);
    else byId.set(segment.segmentId, ids);
  }
  const delivered = [...byId.values()].flat().sort();
  expect(delivered).toEqual(chat.map((m) => m.id).sort());
}

interface FanOut {
  workers: number;
  dueShards: number;
  /** Per tick, the call after which each worker dies (0: it does not). */
  crashes: number[][];
  /** Per tick, whether a second worker of share 0 starts while the first runs. */
  duplicates: boolean[];
}

const fanOutArbitrary = fc.integer({ min: 2, max: 4 }).chain((workers) =>
  fc.record({
    workers: fc.constant(workers),
    dueShards: fc.integer({ min: workers, max: 8 }),
    crashes: fc.array(fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: workers }), {
      minLength: 1,
      maxLength: 12,
    }),
    duplicates: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
  }),
);

/**
 * The chat replayed with each tick fanned out: a worker per share, all at once, each a process
 * of its own that dies (makes no more calls, keeps its claim) right after its chosen call.
 */
async function replayFannedOut(
  makeStores: StoresFactory,
  chat: Chat[],
  s: TickSettings,
  fan: FanOut,
): Promise<{ sent: SegmentDelivery[]; crashed: number }> {
  const clock = { now: T0, wall: T0 };
  const stores = await makeStores(clock, fan.dueShards);
  const sent: SegmentDelivery[] = [];
  let crashed = 0;
  await replay(chat, s, clock, stores, async (tick, crashesAllowed) => {
    const crashes = crashesAllowed ? (fan.crashes[tick % fan.crashes.length] ?? []) : [];
    const starts = tickShares(fan.workers).map((share) => ({
      share,
      crashAt: crashes[share.index] ?? 0,
    }));
    if (fan.duplicates[tick % fan.duplicates.length]) starts.push({ ...starts[0], crashAt: 0 });
    await Promise.all(
      starts.map(async ({ share, crashAt }) => {
        const control: CrashControl = { calls: 0, crashAt, dies: true };
        const deps = crashingDeps(stores, { sent, settings: s, clock }, control);
        await runShare(deps, share, { until: clock.wall + s.leaseMs }).catch(survive);
        if (control.dead) crashed++;
      }),
    );
  });
  return { sent, crashed };
}

/** How hard each property is tried: many runs on memory stores (seconds), few on DynamoDB Local. */
export interface PropertyEffort {
  /** Messages of a generated chat at most. */
  maxMessages: number;
  crashRuns: number;
  fanOutRuns: number;
  cleanFanOutRuns: number;
  rogueRuns: number;
  /** Per property, in ms. */
  timeout: number;
}

/** The exactly-once properties, on stores from `makeStores`. */
export function describeCrashProperties(
  name: string,
  makeStores: StoresFactory,
  effort: PropertyEffort,
  conversations: ConversationMode = "contiguous",
): void {
  const settingsOf = (partial: { maxSize: number; minItems: number }) =>
    crashSettings(partial, conversations);
  name = `${name}, ${conversations}`;
  const chat = chatArbitrary(effort.maxMessages);
  describe(`${name}: a tick under random crash points`, () => {
    it(
      "delivers exactly the segments of one big run, each with one content, none late",
      async () => {
        await fc.assert(
          fc.asyncProperty(
            chat,
            settingsArbitrary,
            fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 20 }),
            async (chat, partial, crashes) => {
              const s = settingsOf(partial);
              expectReferenceSegments(
                await replayWithCrashes(makeStores, chat, s, crashes),
                chat,
                s,
              );
            },
          ),
          { numRuns: effort.crashRuns },
        );
      },
      effort.timeout,
    );
  });

  describe(`${name}: a tick under random crash points and a writer outside the protocol`, () => {
    it(
      "delivers every message in one segment whatever the rogue does to sequences and holds",
      async () => {
        await fc.assert(
          fc.asyncProperty(
            chat,
            settingsArbitrary,
            fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 20 }),
            rogueArbitrary,
            async (chat, partial, crashes, steps) => {
              // Held back, messages may come late, in segments of their own: none is dropped.
              const s = settingsOf({ ...partial, minItems: 1 });
              expectEachMessageOnce(
                await replayWithRogue(makeStores, chat, s, crashes, steps),
                chat,
              );
            },
          ),
          { numRuns: effort.rogueRuns },
        );
      },
      effort.timeout,
    );

    it("delivers every message when a crashed tick's tail finishes the channel as it is set back", async () => {
      // Found by the property: the tail of tick 11's crash set b's next due time after the rogue
      // had checked b due, so no tick loaded b before m005's writer was handed position 2 again.
      const at = [151, 151, 166, 179, 181, 181, 181];
      const channels = ["b", "b", "a", "a", "a", "b", "a"];
      const chat = at.map(
        (minute, i): Chat => ({
          id: `m00${i}`,
          ts: T0 + minute * MINUTE,
          channel: channels[i],
          text: `message ${i}`,
        }),
      );
      const s = settingsOf({ maxSize: 1, minItems: 1 });
      const rewind: RogueStep = { action: "rewind", channel: "b", back: 1n };
      expectEachMessageOnce(await replayWithRogue(makeStores, chat, s, [2], [rewind]), chat);
    });
  });

  describe(`${name}: a fanned-out tick under random crash points`, () => {
    it(
      "loses nothing and delivers a segment twice only after a worker died",
      async () => {
        await fc.assert(
          fc.asyncProperty(chat, settingsArbitrary, fanOutArbitrary, async (chat, partial, fan) => {
            const s = settingsOf(partial);
            const { sent, crashed } = await replayFannedOut(makeStores, chat, s, fan);
            const distinct = expectReferenceSegments(sent, chat, s);
            if (crashed === 0) expect(sent.length).toBe(distinct);
          }),
          { numRuns: effort.fanOutRuns },
        );
      },
      effort.timeout,
    );

    it(
      "without crashes, delivers every segment exactly once, duplicate workers and all",
      async () => {
        await fc.assert(
          fc.asyncProperty(chat, settingsArbitrary, fanOutArbitrary, async (chat, partial, fan) => {
            const s = settingsOf(partial);
            const { sent } = await replayFannedOut(makeStores, chat, s, { ...fan, crashes: [[]] });
            const ids = sent.map((d) => d.segment.segmentId);
            expect(new Set(ids).size).toBe(ids.length);
            expectReferenceSegments(sent, chat, s);
          }),
          { numRuns: effort.cleanFanOutRuns },
        );
      },
      effort.timeout,
    );
  });
}
