import type { ConversationId } from "../../../history/index.js";
import type { PositionAllocator, PositionLease } from "../../../history/positions/index.js";
import { ChannelStateError } from "../errors.js";
import { DUE_SHARDS, dueShardOf, shareShards } from "../schema/due-shards.js";
import { holdName } from "../schema/table.js";
import type { TickShare } from "../types.js";
import {
  type ChannelMarks,
  type ChannelSnapshot,
  type ChannelStore,
  type DueChannel,
  EMPTY_TICK_STATE,
  MAX_STATE_BYTES,
  parseHold,
  type RecordOutcome,
  STATE_PAGE_BYTES,
  type TickState,
} from "./channel-state.js";
import { decodeTickState, encodeTickState } from "./tick-state.js";

interface Marks {
  seq: bigint | null;
  holds: Map<string, bigint>;
  marks: number;
  dueAt: number | null;
  delivered: number;
  linkerReset: number | null;
}

interface Stored {
  version: number;
  encoded: Uint8Array;
  leaseUntil: number | null;
  recordId: string | null;
}

/**
 * The channels table in memory, with the same semantics as `DynamoDbChannelStore` and
 * `ChannelPositions` (conditions, holds, due times, size limit), for fast deterministic tests of
 * the tick and of whole pipelines with `MemoryStore`. States are kept encoded, as stored.
 */
export class MemoryChannelStore implements ChannelStore, PositionAllocator {
  private readonly marksOf = new Map<string, Marks>();
  private readonly states = new Map<string, Stored>();
  private readonly claims = new Map<string, { owner: string; until: number }>();
  private tokens = 0;

  /**
   * @param now the pipeline clock that due times are in.
   * @param dueShards the due index shards that the shares of a fanned-out tick divide.
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly dueShards: number = DUE_SHARDS,
  ) {}

  async reserve(channel: ConversationId, count: number): Promise<PositionLease> {
    const marks = this.marks(channel);
    const first = (marks.seq ?? BigInt(Date.now()) * 1_000_000n) + 1n;
    marks.seq = first + BigInt(count) - 1n;
    const hold = holdName(count, `m${++this.tokens}`);
    marks.holds.set(hold, first);
    return { first, release: async () => this.release(channel, hold) };
  }

  private release(channel: string, hold: string): void {
    const marks = this.marks(channel);
    marks.holds.delete(hold);
    marks.marks++;
    const now = this.now();
    if (marks.dueAt === null || marks.dueAt > now) marks.dueAt = now;
  }

  async load(channel: string): Promise<ChannelSnapshot> {
    const marks = this.marksOf.get(channel);
    const stored = this.states.get(channel);
    const snapshotMarks: ChannelMarks = {
      seq: marks?.seq ?? null,
      marks: marks?.marks ?? 0,
      holds: [...(marks?.holds ?? [])]
        .flatMap(([name, first]) => parseHold(name, first) ?? [])
        .sort((a, b) => (a.first < b.first ? -1 : 1)),
      dueAt: marks?.dueAt ?? null,
      delivered: marks?.delivered ?? 0,
      linkerReset: marks?.linkerReset ?? null,
    };
    return {
      channel,
      marks: snapshotMarks,
      record: {
        version: stored?.version ?? 0,
        state: stored ? decodeTickState(channel, stored.encoded) : EMPTY_TICK_STATE,
        leaseUntil: stored?.leaseUntil ?? null,
        recordId: stored?.recordId ?? null,
      },
      stateBytes: stored?.encoded.byteLength ?? 0,
      pages: stored ? Math.ceil(stored.encoded.byteLength / STATE_PAGE_BYTES) - 1 : 0,
    };
  }

  async record(
    snapshot: ChannelSnapshot,
    next: { state: TickState; encoded: Uint8Array; leaseUntil: number; recordId: string },
  ): Promise<RecordOutcome> {
    if (next.encoded.byteLength > MAX_STATE_BYTES) {
      throw new ChannelStateError(
        snapshot.channel,
        `tick state of ${next.encoded.byteLength} bytes exceeds ${MAX_STATE_BYTES} bytes`,
      );
    }
    const stored = this.states.get(snapshot.channel);
    if ((stored?.version ?? 0) !== snapshot.record.version) {
      return stored?.recordId === next.recordId ? "recorded" : "conflict";
    }
    this.states.set(snapshot.channel, {
      version: snapshot.record.version + 1,
      encoded: new Uint8Array(next.encoded),
      leaseUntil: next.leaseUntil,
      recordId: next.recordId,
    });
    return "recorded";
  }

  async finish(
    snapshot: ChannelSnapshot,
    version: number,
    nextDueAt: number | null,
    now: number,
  ): Promise<void> {
    const marks = this.marks(snapshot.channel);
    if (marks.delivered > version) return;
    marks.delivered = version;
    if (
      marks.marks === snapshot.marks.marks &&
      marks.seq === snapshot.marks.seq &&
      marks.linkerReset === snapshot.marks.linkerReset
    ) {
      marks.dueAt = nextDueAt;
    } else if (marks.dueAt === null || marks.dueAt > now) {
      marks.dueAt = now;
    }
  }

  async requestLinkerReset(channel: string, requestedAt: number, now: number): Promise<void> {
    const marks = this.marks(channel);
    marks.linkerReset =
      marks.linkerReset === null || marks.linkerReset < requestedAt
        ? requestedAt
        : marks.linkerReset + 1;
    if (marks.dueAt === null || marks.dueAt > now) marks.dueAt = now;
  }

  async breakHolds(channel: string, holds: readonly string[]): Promise<void> {
    const marks = this.marks(channel);
    for (const hold of holds) marks.holds.delete(hold);
  }

  async advanceSequence(channel: string, to: bigint): Promise<void> {
    const marks = this.marks(channel);
    if (marks.seq === null || marks.seq < to) marks.seq = to;
  }

  async *dueChannels(now: number, share?: TickShare): AsyncIterable<DueChannel> {
    const owns = (channel: string) =>
      share === undefined || shareShards([dueShardOf(channel, this.dueShards)], share).length > 0;
    const due = [...this.marksOf]
      .flatMap(([channel, marks]) =>
        marks.dueAt !== null && marks.dueAt <= now && owns(channel)
          ? [{ channel, dueAt: marks.dueAt }]
          : [],
      )
      .sort((a, b) => a.dueAt - b.dueAt);
    yield* due;
  }

  async claimShare(
    share: TickShare,
    owner: string,
    until: number,
    wallNow: number,
  ): Promise<boolean> {
    const key = `${share.index}/${share.of}`;
    const claim = this.claims.get(key);
    if (claim !== undefined && claim.until > wallNow) return false;
    this.claims.set(key, { owner, until });
    return true;
  }

  async releaseShare(share: TickShare, owner: string): Promise<void> {
    const key = `${share.index}/${share.of}`;
    if (this.claims.get(key)?.owner === owner) this.claims.delete(key);
  }

  async earliestDue(): Promise<number | null> {
    const due = [...this.marksOf.values()].flatMap((m) => (m.dueAt === null ? [] : [m.dueAt]));
    return due.length === 0 ? null : Math.min(...due);
  }

  async reset(channel: string, now: number): Promise<void> {
    const stored = this.states.get(channel);
    this.states.set(channel, {
      version: (stored?.version ?? 0) + 1,
      encoded: encodeTickState(EMPTY_TICK_STATE),
      leaseUntil: null,
      recordId: null,
    });
    this.marks(channel).dueAt = now;
  }

  private marks(channel: string): Marks {
    let marks = this.marksOf.get(channel);
    if (marks === undefined) {
      marks = {
        seq: null,
        holds: new Map(),
        marks: 0,
        dueAt: null,
        delivered: 0,
        linkerReset: null,
      };
      this.marksOf.set(channel, marks);
    }
    return marks;
  }
}
