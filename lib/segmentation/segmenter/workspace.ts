import type { SortScratch } from "./stable-order.js";

/**
 * The typed arrays one segmentation call works in, carved from one buffer that is reused across
 * calls. A fresh large ArrayBuffer per call would make V8 report external memory pressure and run
 * a full collection of the caller's whole heap each time (seconds for millions of live messages);
 * reusing one buffer makes repeated calls allocation-free. It is held through a WeakRef, so the
 * collector can still take it back when memory is short.
 */
export interface Workspace extends SortScratch {
  /** Timestamps of the items, epoch ms; sorted in place. */
  times: Float64Array;
  /** Sizes in input order, and gathered into sorted order (only with a size accessor). */
  sizes: Float64Array | undefined;
  sortedSizes: Float64Array | undefined;
  /** Cut candidates of the carver. */
  candidates: Int32Array;
}

let cached: WeakRef<ArrayBuffer> | undefined;
let busy = false;

/** Runs `work` with a workspace for `n` items; a re-entrant call gets a private one. */
export function withWorkspace<R>(n: number, withSizes: boolean, work: (ws: Workspace) => R): R {
  const bytes = n * (withSizes ? 44 : 28);
  if (busy) return work(carve(new ArrayBuffer(bytes), n, withSizes));
  let buffer = cached?.deref();
  if (buffer === undefined || buffer.byteLength < bytes) {
    buffer = new ArrayBuffer(bytes);
    cached = new WeakRef(buffer);
  }
  busy = true;
  try {
    return work(carve(buffer, n, withSizes));
  } finally {
    busy = false;
  }
}

/** Lays the arrays out back to back, the 8-byte ones first so that every view is aligned. */
function carve(buffer: ArrayBuffer, n: number, withSizes: boolean): Workspace {
  const wideBytes = (withSizes ? 4 : 2) * 8 * n;
  const narrow = (slot: number) => new Uint32Array(buffer, wideBytes + slot * 4 * n, n);
  return {
    times: new Float64Array(buffer, 0, n),
    spareKeys: new Uint32Array(buffer, 8 * n, 2 * n),
    sizes: withSizes ? new Float64Array(buffer, 16 * n, n) : undefined,
    sortedSizes: withSizes ? new Float64Array(buffer, 24 * n, n) : undefined,
    order: narrow(0),
    spareOrder: narrow(1),
    candidates: new Int32Array(buffer, wideBytes + 8 * n, n),
  };
}
