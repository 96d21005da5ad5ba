/**
 * The one conformance suite every channel store passes (the memory double and the DynamoDB
 * adapter), as the history stores share theirs: what the tick's exactly-once argument rests on.
 * Marks come from the store's position allocator (ingestion's side), states from `record`.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { PositionAllocator } from "convoseg/history/positions";
import { ChannelStateError } from "convoseg/pipeline";
import { dueShardOf, shareShards } from "convoseg/pipeline/schema";
import {
  type ChannelStore,
  EMPTY_MARKS,
  EMPTY_TICK_STATE,
  encodeTickState,
  MAX_STATE_BYTES,
  STATE_PAGE_BYTES,
  type TickState,
} from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";

interface ChannelStoreSubject {
  store: ChannelStore;
  /** Ingestion's side of the same table: reservations leave holds, releases mark due. */
  positions: PositionAllocator;
  /** Sets the pipeline clock that releases mark channels due with. */
  setNow(ms: number): void;
}

/** Makes an empty store (with its own due index) whose due index has `dueShards` shards. */
export type ChannelStoreFactory = (dueShards: number) => Promise<ChannelStoreSubject>;

const T0 = Date.UTC(2025, 0, 6);
const LEASE = 60_000;
let unique = 0;
const channelName = (label: string) => `${label}-${++unique}-${randomUUID().slice(0, 8)}`;

/**
 * A tick state whose encoding is a little over `bytes` long: random ids deflate little, to
 * about 102 bytes a reference.
 */
function stateOfSize(bytes: number): TickState {
  const dropped = Array.from({ length: Math.ceil(bytes / 100) }, (_, i) => ({
    id: randomBytes(96).toString("base64"),
    ts: T0 + i,
  }));
  return { ...EMPTY_TICK_STATE, outbox: { segments: [], dropped, late: 0 } };
}

const next = (state: TickState, recordId = randomUUID()) => ({
  state,
  encoded: encodeTickState(state),
  leaseUntil: T0 + LEASE,
  recordId,
});

/** Reserves and releases one position of `channel` at pipeline time `at`: a writer's mark. */
async function mark(subject: ChannelStoreSubject, channel: string, at: number): Promise<void> {
  subject.setNow(at);
  const lease = await subject.positions.reserve(channel, 1);
  await lease.release();
}

async function due(store: ChannelStore, now: number, share?: { index: number; of: number }) {
  const list: { channel: string; dueAt: number }[] = [];
  for await (const entry of store.dueChannels(now, share)) list.push(entry);
  return list;
}

export function describeChannelStoreConformance(name: string, make: ChannelStoreFactory): void {
  describe(`${name}: channel store conformance`, () => {
    it("knows nothing of a channel never written", async () => {
      const { store } = await make(4);
      const snapshot = await store.load(channelName("new"));
      expect(snapshot.marks).toEqual({
        seq: null,
        marks: 0,
        holds: [],
        dueAt: null,
        delivered: 0,
        linkerReset: null,
      });
      expect(snapshot.record).toEqual({
        version: 0,
        state: EMPTY_TICK_STATE,
        leaseUntil: null,
        recordId: null,
      });
      expect([snapshot.stateBytes, snapshot.pages]).toEqual([0, 0]);
      expect(await store.earliestDue()).toBeNull();
      expect(await due(store, Number.MAX_SAFE_INTEGER)).toEqual([]);
    });

    it("shows a writer's hold until it is released, then the channel is due from the release", async () => {
      const subject = await make(4);
      const { store, positions } = subject;
      const channel = channelName("hold");
      subject.setNow(T0);
      const first = await positions.reserve(channel, 3);
      const second = await positions.reserve(channel, 2);
      expect(second.first).toBe(first.first + 3n);
      let snapshot = await store.load(channel);
      expect(snapshot.marks.seq).toBe(second.first + 1n);
      expect(snapshot.marks.holds.map((h) => [h.first, h.count])).toEqual([
        [first.first, 3],
        [second.first, 2],
      ]);
      expect(snapshot.marks.dueAt).toBeNull();
      subject.setNow(T0 + 5);
      await first.release();
      snapshot = await store.load(channel);
      expect(snapshot.marks.holds.map((h) => h.first)).toEqual([second.first]);
      expect([snapshot.marks.marks, snapshot.marks.dueAt]).toEqual([1, T0 + 5]);
      // A later release keeps the earlier due time: a busy channel still ages.
      subject.setNow(T0 + 9);
      await second.release();
      snapshot = await store.load(channel);
      expect([snapshot.marks.holds, snapshot.marks.marks, snapshot.marks.dueAt]).toEqual([
        [],
        2,
        T0 + 5,
      ]);
      expect(await due(store, T0 + 4)).toEqual([]);
      expect(await due(store, T0 + 5)).toEqual([{ channel, dueAt: T0 + 5 }]);
      expect(await store.earliestDue()).toBe(T0 + 5);
    });

    it("breaks the named holds only", async () => {
      const subject = await make(4);
      const channel = channelName("break");
      const leases = [
        await subject.positions.reserve(channel, 1),
        await subject.positions.reserve(channel, 1),
      ];
      const [gone, kept] = (await subject.store.load(channel)).marks.holds;
      await subject.store.breakHolds(channel, [gone.name]);
      await subject.store.breakHolds(channel, []);
      const snapshot = await subject.store.load(channel);
      expect(snapshot.marks.holds).toEqual([kept]);
      expect(snapshot.marks.marks).toBe(0);
      // The writer of a broken hold may still release it: the channel is marked all the same.
      subject.setNow(T0);
      await leases[0].release();
      expect((await subject.store.load(channel)).marks).toMatchObject({ marks: 1, dueAt: T0 });
    });

    it("moves a sequence up to a position, never down, and writers go on from there", async () => {
      const subject = await make(4);
      const channel = channelName("sequence");
      const lease = await subject.positions.reserve(channel, 2);
      await lease.release();
      const seq = lease.first + 1n;
      await subject.store.advanceSequence(channel, seq - 1n);
      expect((await subject.store.load(channel)).marks.seq).toBe(seq);
      await subject.store.advanceSequence(channel, seq + 100n);
      await subject.store.advanceSequence(channel, seq + 100n);
      const snapshot = await subject.store.load(channel);
      expect([snapshot.marks.seq, snapshot.marks.marks]).toEqual([seq + 100n, 1]);
      expect((await subject.positions.reserve(channel, 1)).first).toBe(seq + 101n);
    });

    it("records on the version it read and refuses a record on a stale one", async () => {
      const { store } = await make(4);
      const channel = channelName("fence");
      const empty = await store.load(channel);
      const state = stateOfSize(1000);
      const first = next(state);
      expect(await store.record(empty, first)).toBe("recorded");
      const snapshot = await store.load(channel);
      expect(snapshot.record).toEqual({
        version: 1,
        state,
        leaseUntil: first.leaseUntil,
        recordId: first.recordId,
      });
      expect(snapshot.stateBytes).toBe(first.encoded.byteLength);
      // Another tick that read version 0 loses the race.
      expect(await store.record(empty, next(EMPTY_TICK_STATE))).toBe("conflict");
      expect(await store.record(snapshot, next(EMPTY_TICK_STATE))).toBe("recorded");
      expect((await store.load(channel)).record.version).toBe(2);
    });

    it("recognises its own record when the answer was lost, and only its own", async () => {
      const { store } = await make(4);
      const channel = channelName("lost");
      for (const size of [100, STATE_PAGE_BYTES + 10_000]) {
        const read = await store.load(channel);
        const mine = next(stateOfSize(size));
        expect(await store.record(read, mine)).toBe("recorded");
        // The same write again, as a retry whose first attempt committed unseen.
        expect(await store.record(read, mine)).toBe("recorded");
        expect(await store.record(read, { ...mine, recordId: randomUUID() })).toBe("conflict");
        expect((await store.load(channel)).record.recordId).toBe(mine.recordId);
      }
    });

    it("keeps a state over a page in page items, and drops them when it shrinks", async () => {
      const { store } = await make(4);
      const channel = channelName("pages");
      const large = stateOfSize(2.5 * STATE_PAGE_BYTES);
      const written = next(large);
      expect(written.encoded.byteLength).toBeGreaterThan(2 * STATE_PAGE_BYTES);
      expect(await store.record(await store.load(channel), written)).toBe("recorded");
      let snapshot = await store.load(channel);
      expect(snapshot.pages).toBe(Math.ceil(written.encoded.byteLength / STATE_PAGE_BYTES) - 1);
      expect(snapshot.record.state).toEqual(large);
      expect(snapshot.stateBytes).toBe(written.encoded.byteLength);
      const small = stateOfSize(500);
      expect(await store.record(snapshot, next(small))).toBe("recorded");
      snapshot = await store.load(channel);
      expect([snapshot.pages, snapshot.record.version]).toEqual([0, 2]);
      expect(snapshot.record.state).toEqual(small);
    });

    it("refuses a state over the size limit, naming the channel, and keeps the old one", async () => {
      const { store } = await make(4);
      const channel = channelName("huge");
      const read = await store.load(channel);
      // One byte over: refused before anything is decoded or written.
      const huge = { ...next(EMPTY_TICK_STATE), encoded: randomBytes(MAX_STATE_BYTES + 1) };
      const error = await store.record(read, huge).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ChannelStateError);
      expect((error as ChannelStateError).channel).toBe(channel);
      expect((error as Error).message).toContain(`exceeds ${MAX_STATE_BYTES} bytes`);
      expect((await store.load(channel)).record.version).toBe(0);
    });

    it("finishes a delivery: takes the channel off the due index, or sets when it is due next", async () => {
      const subject = await make(4);
      const { store } = subject;
      const [idle, later] = [channelName("idle"), channelName("later")];
      for (const channel of [idle, later]) {
        await mark(subject, channel, T0);
        const read = await store.load(channel);
        await store.record(read, next(EMPTY_TICK_STATE));
        await store.finish(read, 1, channel === idle ? null : T0 + 1000, T0 + 10);
        expect((await store.load(channel)).marks).toMatchObject({
          delivered: 1,
          dueAt: channel === idle ? null : T0 + 1000,
        });
      }
      expect(await due(store, T0 + 999)).toEqual([]);
      expect(await due(store, T0 + 1000)).toEqual([{ channel: later, dueAt: T0 + 1000 }]);
      expect(await store.earliestDue()).toBe(T0 + 1000);
    });

    it("keeps a channel due when a writer came after the read, at the earlier of its mark and now", async () => {
      const subject = await make(4);
      const { store } = subject;
      const channel = channelName("raced");
      await mark(subject, channel, T0);
      const read = await store.load(channel);
      await store.record(read, next(EMPTY_TICK_STATE));
      // A release after the read: the tick's plan did not see it.
      await mark(subject, channel, T0 + 20);
      await store.finish(read, 1, null, T0 + 50);
      expect((await store.load(channel)).marks).toMatchObject({ delivered: 1, dueAt: T0 });
      // Only a reservation since the read, its release still to come: due now, not never.
      const other = channelName("reserved");
      await mark(subject, other, T0);
      const before = await store.load(other);
      await store.finish(before, 0, null, T0 + 1);
      expect((await store.load(other)).marks.dueAt).toBeNull();
      const reread = await store.load(other);
      const open = await subject.positions.reserve(other, 1);
      await store.finish(reread, 0, null, T0 + 70);
      expect((await store.load(other)).marks.dueAt).toBe(T0 + 70);
      await open.release();
    });

    it("takes an erasure's linker reset request: raised only, the channel due, the tick's state untouched", async () => {
      const subject = await make(4);
      const { store } = subject;
      const channel = channelName("reset");
      await mark(subject, channel, T0);
      const read = await store.load(channel);
      const state: TickState = { ...EMPTY_TICK_STATE, linker: "AQ==", linkerResetSeen: 7 };
      await store.record(read, next(state));
      await store.finish(read, 1, T0 + 5000, T0 + 1);
      const recorded = await store.load(channel);
      expect(recorded.marks).toMatchObject({ dueAt: T0 + 5000, linkerReset: null });
      // Due now (before its settle time), the request recorded, nothing else of the marks moved.
      await store.requestLinkerReset(channel, 1000, T0 + 10);
      let after = await store.load(channel);
      expect(after.marks).toEqual({ ...recorded.marks, dueAt: T0 + 10, linkerReset: 1000 });
      expect(after.record).toEqual(recorded.record);
      expect(await due(store, T0 + 10)).toEqual([{ channel, dueAt: T0 + 10 }]);
      // A second request always reads as newer, whatever its time; an earlier due time stays.
      await store.requestLinkerReset(channel, 1000, T0 + 20);
      expect((await store.load(channel)).marks).toMatchObject({
        dueAt: T0 + 10,
        linkerReset: 1001,
      });
      await store.requestLinkerReset(channel, 500, T0 + 30);
      expect((await store.load(channel)).marks.linkerReset).toBe(1002);
      await store.requestLinkerReset(channel, 9000, T0 + 40);
      after = await store.load(channel);
      expect(after.marks).toMatchObject({ dueAt: T0 + 10, linkerReset: 9000 });
      // A channel never written is made due by it alone.
      const fresh = channelName("reset-new");
      await store.requestLinkerReset(fresh, 3, T0 + 50);
      expect((await store.load(fresh)).marks).toEqual({
        ...EMPTY_MARKS,
        dueAt: T0 + 50,
        linkerReset: 3,
      });
      expect(await due(store, T0 + 50)).toEqual([
        { channel, dueAt: T0 + 10 },
        { channel: fresh, dueAt: T0 + 50 },
      ]);
    });

    it("keeps a channel due when an erasure asked for a linker reset after the tick's read", async () => {
      const subject = await make(4);
      const { store } = subject;
      const channel = channelName("reset-raced");
      await mark(subject, channel, T0);
      const read = await store.load(channel);
      await store.record(read, next(EMPTY_TICK_STATE));
      await store.requestLinkerReset(channel, 1000, T0 + 20);
      // The tick, not having seen the request, would take the channel off the index: it stays.
      await store.finish(read, 1, null, T0 + 50);
      expect((await store.load(channel)).marks).toMatchObject({ delivered: 1, dueAt: T0 });
      // One that read it finishes as it likes.
      const seen = await store.load(channel);
      await store.record(seen, next({ ...EMPTY_TICK_STATE, linkerResetSeen: 1000 }));
      await store.finish(seen, 2, null, T0 + 60);
      expect((await store.load(channel)).marks).toMatchObject({
        delivered: 2,
        dueAt: null,
        linkerReset: 1000,
      });
    });

    it("never lets an older version's finish undo a newer one's", async () => {
      const subject = await make(4);
      const { store } = subject;
      const channel = channelName("order");
      await mark(subject, channel, T0);
      const first = await store.load(channel);
      await store.record(first, next(EMPTY_TICK_STATE));
      const second = await store.load(channel);
      await store.record(second, next(EMPTY_TICK_STATE));
      await store.finish(second, 2, T0 + 500, T0 + 1);
      // The first tick's finish arrives late, wanting the channel off the index.
      await store.finish(first, 1, null, T0 + 2);
      expect((await store.load(channel)).marks).toMatchObject({ delivered: 2, dueAt: T0 + 500 });
    });

    it("lists due channels longest waiting first across every shard, and a share's alone", async () => {
      const subject = await make(4);
      const { store } = subject;
      // Channels spread over the shards, marked in an order unrelated to their names.
      const channels = Array.from({ length: 12 }, (_, i) => channelName(`due${i}`));
      const times = channels.map((_, i) => T0 + ((i * 7) % 12) * 100);
      for (const [i, channel] of channels.entries()) await mark(subject, channel, times[i]);
      expect(new Set(channels.map((c) => dueShardOf(c, 4))).size).toBeGreaterThan(1);
      const expected = channels
        .map((channel, i) => ({ channel, dueAt: times[i] }))
        .sort((a, b) => a.dueAt - b.dueAt);
      expect(await due(store, T0 + 2000)).toEqual(expected);
      expect(await due(store, T0 + 450)).toEqual(expected.filter((d) => d.dueAt <= T0 + 450));
      const shares = [
        { index: 0, of: 2 },
        { index: 1, of: 2 },
      ];
      const byShare = await Promise.all(shares.map((share) => due(store, T0 + 2000, share)));
      for (const [i, listed] of byShare.entries()) {
        expect(listed).toEqual(
          expected.filter((d) => shareShards([dueShardOf(d.channel, 4)], shares[i]).length > 0),
        );
      }
      expect(byShare.flat().length).toBe(channels.length);
    });

    it("lets one owner at a time claim a share, until its claim runs out", async () => {
      const { store } = await make(4);
      const share = { index: 1, of: 2 };
      expect(await store.claimShare(share, "a", T0 + 100, T0)).toBe(true);
      expect(await store.claimShare(share, "b", T0 + 200, T0 + 50)).toBe(false);
      // Another share is free.
      expect(await store.claimShare({ index: 0, of: 2 }, "b", T0 + 200, T0 + 50)).toBe(true);
      // Only the owner's release ends a claim.
      await store.releaseShare(share, "b");
      expect(await store.claimShare(share, "c", T0 + 200, T0 + 60)).toBe(false);
      await store.releaseShare(share, "a");
      expect(await store.claimShare(share, "c", T0 + 200, T0 + 60)).toBe(true);
      // A claim that ran out is anyone's; the late owner's release leaves the new claim alone.
      expect(await store.claimShare(share, "d", T0 + 400, T0 + 200)).toBe(true);
      await store.releaseShare(share, "c");
      expect(await store.claimShare(share, "e", T0 + 500, T0 + 300)).toBe(false);
    });

    it("resets a channel: forgets its state, makes it due now, and fences a tick in flight", async () => {
      const subject = await make(4);
      const { store } = subject;
      const channel = channelName("reset");
      await mark(subject, channel, T0);
      await store.record(await store.load(channel), next(stateOfSize(1.5 * STATE_PAGE_BYTES)));
      const inFlight = await store.load(channel);
      expect(inFlight.pages).toBeGreaterThan(0);
      await store.finish(inFlight, 1, null, T0 + 1);
      await store.reset(channel, T0 + 3000);
      const snapshot = await store.load(channel);
      expect(snapshot.record).toEqual({
        version: 2,
        state: EMPTY_TICK_STATE,
        leaseUntil: null,
        recordId: null,
      });
      expect(snapshot.pages).toBe(0);
      expect(snapshot.marks.dueAt).toBe(T0 + 3000);
      expect(await due(store, T0 + 3000)).toEqual([{ channel, dueAt: T0 + 3000 }]);
      expect(await store.record(inFlight, next(EMPTY_TICK_STATE))).toBe("conflict");
    });
  });
}
