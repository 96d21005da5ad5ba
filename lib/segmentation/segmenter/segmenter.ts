import { isPositiveInteger } from "../../base/numbers/index.js";
import { Carver, type ReplyPositions } from "./carver.js";
import { sortStable } from "./stable-order.js";
import { type Workspace, withWorkspace } from "./workspace.js";

/** Ceiling on one segment in size-accessor units: 500 messages under the default accessor. */
export const DEFAULT_MAX_SIZE = 500;
/** 24 hours: long enough for timezone-spanning replies, short enough not to stall extraction. */
export const DEFAULT_SETTLE_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_MIN_ITEMS = 1;

export interface SegmenterOptions {
  /** Ceiling on one segment, in the units the size accessor returns (integer > 0). */
  maxSize?: number;
  /** Milliseconds of silence after which a conversation is finished (finite, >= 0). */
  settle?: number;
  /** Segments with fewer items are dropped (integer > 0). */
  minItems?: number;
}

/**
 * Known reply links of a stream, read through two accessors (each called once per item): the
 * item's id, unique within the stream, and the id of the item it answers. A size cut then severs
 * the fewest links it can (`docs/specs/segmenter.md`, "Size cuts and replies"); a target that is
 * not in the stream, or is the item itself, is no link.
 */
export interface ReplyLinks<T> {
  id: (item: T) => string | number;
  replyTo: (item: T) => string | number | null | undefined;
}

/** Epoch milliseconds or a `Date`. */
export type Instant = number | Date;

/**
 * Splits a timestamped item stream (one chat channel) into conversation segments that are closed,
 * i.e. safe to hand to extraction. A silence longer than `settle` ends a conversation; within a
 * conversation a run is cut only when it exceeds `maxSize`, at the largest gap. The trailing
 * conversation is withheld until it has been quiet for longer than `settle`.
 *
 * Pure and deterministic; see `docs/specs/segmenter.md` for the exact contract.
 */
export class ConversationSegmenter {
  readonly maxSize: number;
  readonly settle: number;
  readonly minItems: number;

  constructor(options: SegmenterOptions = {}) {
    const {
      maxSize = DEFAULT_MAX_SIZE,
      settle = DEFAULT_SETTLE_MS,
      minItems = DEFAULT_MIN_ITEMS,
    } = options ?? {};
    this.maxSize = positiveInteger("maxSize", maxSize);
    this.minItems = positiveInteger("minItems", minItems);
    if (typeof settle !== "number" || !Number.isFinite(settle) || settle < 0) {
      throw new RangeError(
        `settle must be a finite, non-negative number of milliseconds (got ${describe(settle)})`,
      );
    }
    this.settle = settle;
  }

  /**
   * The closed segments of `items`, in time order, each a time-ordered list of the original items
   * (equal timestamps keep input order). `now` decides whether the trailing conversation has
   * settled. Each accessor is called exactly once per item; `size` defaults to one per item.
   * With `replies`, a size cut prefers the candidate that severs the fewest known reply links.
   *
   * @throws RangeError for an invalid `now`, a timestamp that is not a finite number or valid Date,
   *   or a size that is negative or not finite, naming the item index.
   */
  closedSegments<T>(
    items: readonly T[],
    now: Instant,
    timestamp: (item: T) => Instant,
    size?: (item: T) => number,
    replies?: ReplyLinks<T>,
  ): T[][] {
    const nowMs = toEpochMs(now);
    if (Number.isNaN(nowMs)) {
      throw new RangeError(
        `now must be finite epoch milliseconds or a valid Date (got ${describe(now)})`,
      );
    }
    if (items.length === 0) return [];
    return this.carve(
      items,
      timestamp,
      size,
      replies,
      ({ times, order, spans, conversationStarts }) => {
        const closed: T[][] = [];
        conversationStarts.forEach((from, c) => {
          const own = spans.slice(from, conversationStarts[c + 1] ?? spans.length);
          const isLast = c === conversationStarts.length - 1;
          const open = isLast && nowMs - times[times.length - 1] <= this.settle;
          if (open) own.length -= 2; // step 4: its last piece is withheld
          const pieces = this.materialize(items, order, own);
          for (const piece of open ? pieces : foldUndersizedLast(pieces, this.minItems)) {
            if (piece.length >= this.minItems) closed.push(piece);
          }
        });
        return closed;
      },
    );
  }

  /**
   * Steps 1 to 4 of the algorithm alone: each conversation's carved pieces, in time order, before
   * any withholding, folding or dropping. For callers that decide finality themselves (the
   * pipeline, which must not emit a piece that a settling conversation could still fold into).
   */
  conversations<T>(
    items: readonly T[],
    timestamp: (item: T) => Instant,
    size?: (item: T) => number,
    replies?: ReplyLinks<T>,
  ): T[][][] {
    if (items.length === 0) return [];
    return this.carve(items, timestamp, size, replies, ({ order, spans, conversationStarts }) =>
      conversationStarts.map((from, c) =>
        this.materialize(
          items,
          order,
          spans.slice(from, conversationStarts[c + 1] ?? spans.length),
        ),
      ),
    );
  }

  /**
   * Measures and sorts the items, splits them into conversations at gaps longer than `settle`,
   * and carves each; `use` gets the spans (over sorted positions) while the workspace is held.
   */
  private carve<T, R>(
    items: readonly T[],
    timestamp: (item: T) => Instant,
    size: ((item: T) => number) | undefined,
    replies: ReplyLinks<T> | undefined,
    use: (carved: Carved) => R,
  ): R {
    return withWorkspace(items.length, size !== undefined, (ws) => {
      const exactSums = measure(items, timestamp, size, ws);
      const links = replies === undefined ? undefined : readLinks(items, replies);
      const order = sortStable(ws.times, ws);
      let sizes = ws.sizes;
      if (order && ws.sizes && ws.sortedSizes) sizes = gather(ws.sizes, order, ws.sortedSizes);
      const { times } = ws;
      const carver = new Carver(
        times,
        sizes,
        exactSums,
        this.maxSize,
        this.minItems,
        ws.candidates,
        links === undefined ? undefined : replyPositions(links, order),
      );
      const spans: number[] = [];
      const conversationStarts: number[] = [];
      let start = 0;
      for (let end = 1; end <= times.length; end++) {
        if (end < times.length && times[end] - times[end - 1] <= this.settle) continue;
        conversationStarts.push(spans.length);
        carver.carve(start, end, spans);
        start = end;
      }
      return use({ times, order, spans, conversationStarts });
    });
  }

  /** The original items of each span. */
  private materialize<T>(
    items: readonly T[],
    order: Uint32Array | undefined,
    spans: number[],
  ): T[][] {
    const segments: T[][] = [];
    for (let s = 0; s < spans.length; s += 2) {
      const start = spans[s];
      const end = spans[s + 1];
      if (order === undefined) {
        segments.push(items.slice(start, end));
        continue;
      }
      const segment: T[] = [];
      for (let i = start; i < end; i++) segment.push(items[order[i]]);
      segments.push(segment);
    }
    return segments;
  }
}

/**
 * A settled conversation's pieces (step 4), its last merged into the one before it when it holds
 * fewer than `minItems` items; `pieces` itself when nothing folds. The pipeline's planner folds
 * with it too, so that the two cannot disagree.
 */
export function foldUndersizedLast<T>(pieces: T[][], minItems: number): T[][] {
  const last = pieces.at(-1);
  if (pieces.length < 2 || last === undefined || last.length >= minItems) return pieces;
  return [...pieces.slice(0, -2), [...pieces[pieces.length - 2], ...last]];
}

interface Carved {
  /** Sorted timestamps. */
  times: Float64Array;
  /** Input position of each sorted item; undefined when the input was already in order. */
  order: Uint32Array | undefined;
  /** Carved pieces as flat `[start, end)` pairs over sorted positions. */
  spans: number[];
  /** Index in `spans` where each conversation's pieces begin. */
  conversationStarts: number[];
}

/**
 * Calls each accessor once per item, in input order, writing validated results into the
 * workspace. Returns whether sizes sum exactly (all integers, safe total): then the carver may
 * subtract instead of re-adding.
 */
function measure<T>(
  items: readonly T[],
  timestamp: (item: T) => Instant,
  size: ((item: T) => number) | undefined,
  { times, sizes }: Workspace,
): boolean {
  let allIntegers = true;
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const t = timestamp(item);
    const ms = toEpochMs(t);
    if (Number.isNaN(ms)) {
      throw new RangeError(
        `timestamp of item ${i} must be finite epoch milliseconds or a valid Date (got ${describe(t)})`,
      );
    }
    times[i] = ms;
    if (size === undefined || sizes === undefined) continue;
    const s = size(item);
    if (typeof s !== "number" || !Number.isFinite(s) || s < 0) {
      throw new RangeError(
        `size of item ${i} must be a finite, non-negative number (got ${describe(s)})`,
      );
    }
    sizes[i] = s;
    total += s;
    if (!Number.isInteger(s)) allIntegers = false;
  }
  return allIntegers && total <= Number.MAX_SAFE_INTEGER;
}

interface InputLinks {
  ids: (string | number)[];
  targets: (string | number | null | undefined)[];
  /** Every id some item answers: only these need a position. */
  targeted: Set<string | number>;
}

/**
 * Calls the reply accessors once per item, in input order, checking what they return; undefined
 * when no item answers another, so that a stream without links costs nothing more.
 */
function readLinks<T>(items: readonly T[], { id, replyTo }: ReplyLinks<T>): InputLinks | undefined {
  const ids: (string | number)[] = [];
  const targets: (string | number | null | undefined)[] = [];
  const targeted = new Set<string | number>();
  for (let i = 0; i < items.length; i++) {
    const own = id(items[i]);
    if (typeof own !== "string" && typeof own !== "number") {
      throw new RangeError(`id of item ${i} must be a string or a number (got ${describe(own)})`);
    }
    const target = replyTo(items[i]);
    if (target != null) {
      if (typeof target !== "string" && typeof target !== "number") {
        throw new RangeError(
          `replyTo of item ${i} must be a string, a number, null or undefined (got ${describe(target)})`,
        );
      }
      if (target !== own) targeted.add(target);
    }
    ids.push(own);
    targets.push(target);
  }
  return targeted.size === 0 ? undefined : { ids, targets, targeted };
}

/** Each sorted item's reply target as a sorted position (-1: none); the first of equal ids wins. */
function replyPositions(
  { ids, targets, targeted }: InputLinks,
  order: Uint32Array | undefined,
): ReplyPositions {
  const n = ids.length;
  const positions = new Map<string | number, number>();
  for (let i = 0; i < n; i++) {
    const id = ids[order === undefined ? i : order[i]];
    if (targeted.has(id) && !positions.has(id)) positions.set(id, i);
  }
  const parents = new Int32Array(n);
  const linkedBefore = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const target = targets[order === undefined ? i : order[i]];
    const parent = target == null ? -1 : (positions.get(target) ?? -1);
    parents[i] = parent === i ? -1 : parent;
    linkedBefore[i + 1] = linkedBefore[i] + (parents[i] < 0 ? 0 : 1);
  }
  return { parents, linkedBefore, severedDiff: new Int32Array(n + 2) };
}

/** Epoch milliseconds of a number or Date, or NaN when it is neither finite nor a valid Date. */
function toEpochMs(value: unknown): number {
  const ms =
    typeof value === "number" ? value : value instanceof Date ? value.getTime() : Number.NaN;
  return Number.isFinite(ms) ? ms : Number.NaN;
}

function gather(values: Float64Array, order: Uint32Array, out: Float64Array): Float64Array {
  for (let i = 0; i < order.length; i++) out[i] = values[order[i]];
  return out;
}

function positiveInteger(name: string, value: unknown): number {
  if (!isPositiveInteger(value)) {
    throw new RangeError(`${name} must be a positive integer (got ${describe(value)})`);
  }
  return value;
}

function describe(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : "a Date";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return value === null ? "null" : typeof value;
}
