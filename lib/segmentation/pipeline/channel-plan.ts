/**
 * One channel's read and plan: what arrived since the read position (as far as no writer holds
 * positions), the holds that timed out, the late writes of broken holds, and the next tick state,
 * kept under a size bound. No writes: `./channel-step.ts` records and delivers the result.
 */
import { createHash } from "node:crypto";
import type { Arrival, InferredReply } from "../../history/dynamodb/index.js";
import { type ChosenLinks, chooseLinks, type LinkableRef, linkConversations } from "./linking.js";
import {
  type BrokenHold,
  type ChannelSnapshot,
  type Hold,
  MAX_STATE_BYTES,
  type TickState,
} from "./store/channel-state.js";
import { encodeTickState } from "./store/tick-state.js";
import { newestInTails, planStreams, type StreamStates } from "./streams.js";
import type { MessageSource, TickDependencies, TickSettings } from "./tick-dependencies.js";
import type { MessageRef, PipelineConfig } from "./types.js";

/** Bytes of arrival refs (ids and timestamps) read per channel per tick, besides the count cap. */
const MAX_ARRIVAL_BYTES = 1024 * 1024;
/** A tick reads fewer arrivals rather than record a state over this (a quarter of the limit). */
export const TARGET_STATE_BYTES = MAX_STATE_BYTES / 4;
/** How long the positions of a broken hold are re-read for late writes of its writer. */
const BROKEN_HOLD_WATCH_MS = 24 * 3_600_000;

interface Step {
  state: TickState;
  changed: boolean;
  /** Holds to break once the state recording them as broken is written. */
  expired: Hold[];
  /** Holds first seen on positions handed out before (renewed or forged, never a reservation). */
  renewed: Hold[];
  /** Arrivals found by re-reading broken holds' positions. */
  behind: number;
  /** The reply linker's inferred parents of the arrivals planned (`linked` mode), to record. */
  links: InferredReply[];
  /** Conversations the linker merged into another (`linked` mode). */
  merges: number;
  nextDueAt: number | null;
}

/**
 * Reads what arrived since the read position, as far as no writer holds positions, plans it, and
 * returns the next state. Reads fewer arrivals when the state would grow too large.
 */
export async function advance(
  deps: TickDependencies,
  snapshot: ChannelSnapshot,
  now: number,
  wall: number,
): Promise<Step> {
  const { channel, marks, record } = snapshot;
  const state = withLinkerReset(record.state, marks.linkerReset);
  const handedOut = maxPosition(state.seqSeen, state.readUpTo);
  const { holdsSeen, expired, known, renewed } = trackHolds(state, marks.holds, {
    wall,
    timeoutMs: deps.settings.holdTimeoutMs,
    handedOut,
  });
  // Holds broken now no longer stop the read: a renewed one would otherwise stall it for good.
  const holding = marks.holds.filter((h) => !expired.includes(h));
  const horizon = readHorizon(marks.seq, holding);
  const { arrivals, capped } = await readArrivals(
    deps.messages,
    channel,
    state.readUpTo,
    horizon,
    deps.settings,
  );
  const broken = state.broken
    .filter((b) => b.until > wall)
    .map((b) => ({ ...b, seen: [...b.seen] }));
  const behind = await rereadBroken(
    deps.messages,
    channel,
    broken,
    state.readUpTo,
    deps.settings.conversations === "linked",
  );
  for (const hold of expired) {
    if (known.has(hold.name)) continue;
    const last = hold.first + BigInt(hold.count) - 1n;
    // A reservation's hold lies past the read position. A renewed one may cover positions read
    // already, whose messages would come back as new: only the unread part is watched.
    const first =
      state.readUpTo !== null && hold.first <= state.readUpTo ? state.readUpTo + 1n : hold.first;
    if (first > last) continue;
    broken.push({ hold: hold.name, first, last, seen: [], until: wall + BROKEN_HOLD_WATCH_MS });
  }
  const chosen =
    deps.settings.conversations === "linked"
      ? await chooseLinks(deps, channel, state.linker, [...behind, ...arrivals.flatMap(ref)])
      : { choices: new Map(), advised: false };
  const planned = planWithinBound(deps, channel, state, {
    arrivals,
    capped,
    behind,
    horizon,
    now,
    chosen,
  });
  const next: TickState = {
    ...planned.state,
    seqSeen: maxPosition(state.seqSeen, marks.seq),
    holdsSeen,
    broken: markSeen(broken, planned.taken),
  };
  const dueTimes = [planned.nextDueAt];
  if (planned.trimmed || expired.length > 0) dueTimes.push(now);
  if (marks.holds.length > 0 || broken.length > 0) dueTimes.push(now + deps.settings.holdTimeoutMs);
  const due = dueTimes.filter((t): t is number => t !== null);
  return {
    state: next,
    // Holds to break are broken by a commit, even one that leaves the state as it was; a linker
    // reset is recorded even when nothing else changed.
    changed: expired.length > 0 || !sameBytes(encodeTickState(next), encodeTickState(record.state)),
    expired,
    renewed,
    behind: behind.length,
    links: planned.links,
    merges: planned.merges,
    nextDueAt: due.length === 0 ? null : Math.min(...due),
  };
}

/**
 * The state to plan from: when an erasure asked for a reset since this state's (the marks'
 * `linkerReset` greater than its `linkerResetSeen`), without the reply linker's window, which
 * holds hashes of the erased person's words and names, and with the request recorded as seen. It
 * is recorded with the rest of the state, in the same conditional write: a tick that dies before
 * leaves the request to the next. Later arrivals are linked from an empty window.
 */
function withLinkerReset(state: TickState, requested: number | null): TickState {
  if (requested === null || (state.linkerResetSeen ?? Number.NEGATIVE_INFINITY) >= requested) {
    return state;
  }
  const { linker: _, ...rest } = state;
  return { ...rest, linkerResetSeen: requested };
}

/**
 * When (wall ms) each present hold was first seen, the holds to break (seen for the hold timeout,
 * or already recorded as broken by a tick that died before removing them), those recorded, and
 * the renewed ones. A reservation hands out positions past the read position and places their
 * hold in the same update, so a hold that no tick saw on positions a tick saw handed out
 * (`handedOut`) was placed otherwise: a writer renewing its hold under a new name, or a forged
 * one. It is aged from the earliest hold gone since the last tick (the one it replaces), so that
 * renewing never outlives the hold timeout; one on positions already read, or on a broken hold's,
 * is broken at once.
 */
function trackHolds(
  state: TickState,
  holds: readonly Hold[],
  clock: { wall: number; timeoutMs: number; handedOut: bigint | null },
) {
  const { wall, timeoutMs, handedOut } = clock;
  const known = new Set(state.broken.map((b) => b.hold));
  const present = new Set(holds.map((h) => h.name));
  const gone = Object.entries(state.holdsSeen).flatMap(([name, seen]) =>
    present.has(name) ? [] : [seen],
  );
  const inherited = Math.min(wall, ...gone);
  const holdsSeen: Record<string, number> = {};
  const renewed: Hold[] = [];
  for (const hold of holds) {
    const seen = state.holdsSeen[hold.name];
    if (seen !== undefined) {
      holdsSeen[hold.name] = seen;
    } else if (!known.has(hold.name) && handedOut !== null && hold.first <= handedOut) {
      renewed.push(hold);
      const last = hold.first + BigInt(hold.count) - 1n;
      const read = state.readUpTo !== null && hold.first <= state.readUpTo;
      const rebroken = state.broken.some((b) => hold.first <= b.last && last >= b.first);
      holdsSeen[hold.name] = read || rebroken ? wall - timeoutMs : inherited;
    } else {
      holdsSeen[hold.name] = wall;
    }
  }
  const expired = holds.filter((h) => known.has(h.name) || wall - holdsSeen[h.name] >= timeoutMs);
  for (const hold of expired) delete holdsSeen[hold.name];
  return { holdsSeen, expired, known, renewed };
}

/**
 * Where the channel's sequence must be moved back up to when it went back below positions a
 * tick saw handed out (or read), else null. Sequences only grow: whoever reserves from a lower
 * one is handed positions again, maybe behind the read position, where no tick reads.
 */
export function rewoundTo({ marks, record }: ChannelSnapshot): bigint | null {
  const handedOut = maxPosition(record.state.seqSeen, record.state.readUpTo);
  return handedOut !== null && (marks.seq === null || marks.seq < handedOut) ? handedOut : null;
}

/** The larger of two positions, either maybe absent. */
function maxPosition(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  return b === null || a > b ? a : b;
}

/**
 * Plans the arrivals, halving how many it takes until the state would stay under
 * {@link TARGET_STATE_BYTES} (taking none at worst). Returns the planner's state, the read
 * position and outbox that go with it, the arrivals taken, and whether some were left.
 */
function planWithinBound(
  deps: TickDependencies,
  channel: string,
  state: TickState,
  read: {
    arrivals: Arrival[];
    capped: boolean;
    behind: LinkableRef[];
    horizon: bigint | null;
    now: number;
    chosen: ChosenLinks;
  },
) {
  const { arrivals, capped, behind, horizon, now, chosen } = read;
  const config = {
    ...deps.settings,
    idBytesPerSegment: idBytesPerSegment(deps.bodies.maxBodyBytes),
  };
  for (let kept = arrivals.length; ; kept = Math.floor(kept / 2)) {
    const taken = arrivals.slice(0, kept);
    const read = [...behind, ...taken.flatMap(ref)];
    const { refs, linker, links, merges } =
      config.conversations === "linked"
        ? linkConversations(state.linker, read, chosen)
        : { refs: read, linker: undefined, links: [], merges: [] };
    const trimmed = capped || kept < arrivals.length;
    const streams = {
      planner: state.planner,
      threads: state.threads ?? [],
      threadFloor: state.threadFloor ?? null,
    };
    const at = planningTime(streams, refs, now, trimmed, kept, config);
    const result = planStreams(channel, streams, refs, at, config, merges);
    const planned: TickState = {
      ...state,
      planner: result.planner,
      threads: [...result.threads],
      readUpTo:
        taken.length === 0
          ? state.readUpTo
          : trimmed
            ? (taken.at(-1) as Arrival).position
            : (horizon as bigint),
      outbox: { segments: result.segments, dropped: result.dropped, late: result.late.length },
    };
    if (result.threadFloor === null) delete planned.threadFloor;
    else planned.threadFloor = result.threadFloor;
    if (linker === undefined) delete planned.linker;
    else planned.linker = linker;
    if (kept === 0 || encodeTickState(planned).byteLength <= TARGET_STATE_BYTES) {
      return {
        state: planned,
        taken,
        trimmed,
        links,
        merges: merges.length,
        nextDueAt: result.nextDueAt,
      };
    }
  }
}

/**
 * The bytes of ids a segment's reference form can list within the body limit: the rest of the
 * envelope (its bounds repeat two ids, plus the channel and table names) takes at most 8 KiB.
 */
const idBytesPerSegment = (maxBodyBytes: number): number => maxBodyBytes - 8 * 1024;

/**
 * The time to plan at. When arrivals were left unread (the cap, or a state kept small), the
 * conversation of the newest message read may go on in them: it is planned as still open, so
 * that a backlog read over several ticks gives the segments of one big read. Only when not a
 * single further arrival fits the state (very long ids in a huge open conversation) is it
 * planned at the real time, so that it settles and the channel moves on.
 */
function planningTime(
  streams: StreamStates,
  refs: readonly MessageRef[],
  now: number,
  trimmed: boolean,
  kept: number,
  config: PipelineConfig,
): number {
  if (!trimmed || kept === 0) return now;
  let newest = newestInTails(streams);
  for (const message of refs) newest = Math.max(newest, message.ts);
  return Math.min(now, newest + config.settle + config.grace);
}

/**
 * The last position a tick may read up to: every position up to the channel's sequence was
 * handed out, and none at or past a writer's hold may be passed while the writer still writes.
 */
function readHorizon(seq: bigint | null, holds: readonly Hold[]): bigint | null {
  let horizon = seq;
  for (const hold of holds) {
    if (horizon === null || hold.first - 1n < horizon) horizon = hold.first - 1n;
  }
  return horizon;
}

/** Arrivals after the read position up to the horizon, at most so many and so many bytes. */
async function readArrivals(
  messages: MessageSource,
  channel: string,
  readUpTo: bigint | null,
  horizon: bigint | null,
  settings: TickSettings,
): Promise<{ arrivals: Arrival[]; capped: boolean }> {
  const arrivals: Arrival[] = [];
  if (horizon === null || (readUpTo !== null && horizon <= readUpTo)) {
    return { arrivals, capped: false };
  }
  let bytes = 0;
  for await (const arrival of messages.arrivalsAfter(channel, readUpTo ?? undefined, {
    upTo: horizon,
    links: true,
    content: settings.conversations === "linked",
  })) {
    if (arrivals.length >= settings.maxArrivalsPerChannel || bytes >= MAX_ARRIVAL_BYTES) {
      return { arrivals, capped: true };
    }
    arrivals.push(arrival);
    bytes += Buffer.byteLength(arrival.id ?? "") + 16;
  }
  return { arrivals, capped: false };
}

/**
 * Re-reads the positions of broken holds already passed by the read position; what was not seen
 * there before was written late by a writer whose hold was broken. Marks it seen.
 */
async function rereadBroken(
  messages: MessageSource,
  channel: string,
  broken: BrokenHold[],
  readUpTo: bigint | null,
  content: boolean,
): Promise<LinkableRef[]> {
  const found: LinkableRef[] = [];
  if (readUpTo === null) return found;
  for (const hold of broken) {
    if (hold.first > readUpTo) continue;
    const last = hold.last < readUpTo ? hold.last : readUpTo;
    const seen = new Set(hold.seen);
    for await (const arrival of messages.arrivalsAfter(channel, hold.first - 1n, {
      upTo: last,
      links: true,
      content,
    })) {
      const message = ref(arrival);
      if (message.length === 0) continue;
      const digest = idDigest(message[0].id);
      if (seen.has(digest)) continue;
      seen.add(digest);
      hold.seen.push(digest);
      found.push(...message);
    }
  }
  return found;
}

/** Broken holds with the ids of these arrivals in their ranges marked seen. */
function markSeen(broken: BrokenHold[], arrivals: readonly Arrival[]): BrokenHold[] {
  if (broken.length === 0) return broken;
  return broken.map((hold) => {
    const seen = new Set(hold.seen);
    for (const arrival of arrivals) {
      if (
        arrival.id !== undefined &&
        arrival.position >= hold.first &&
        arrival.position <= hold.last
      ) {
        seen.add(idDigest(arrival.id));
      }
    }
    return { ...hold, seen: [...seen] };
  });
}

/**
 * The planner's ref of an arrival, with its thread when it is a reply in one; arrivals without a
 * platform id or timestamp are not chat.
 */
function ref(arrival: Arrival): LinkableRef[] {
  if (arrival.id === undefined || arrival.ts === undefined) return [];
  const message: LinkableRef = { id: arrival.id, ts: arrival.ts };
  if (arrival.thread !== undefined) message.thread = arrival.thread;
  if (arrival.replyTo !== undefined) message.replyTo = arrival.replyTo;
  if (arrival.content !== undefined) message.content = arrival.content;
  return [message];
}

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.byteLength === b.byteLength && Buffer.from(a).equals(Buffer.from(b));

/** The digest a broken hold remembers a seen message by: 16 bytes of SHA-256, base64. */
function idDigest(id: string): string {
  return createHash("sha256").update(id).digest().subarray(0, 16).toString("base64");
}
