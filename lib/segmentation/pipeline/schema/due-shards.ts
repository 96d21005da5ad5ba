/**
 * The due index's shards: which shard a channel's due mark goes to, which shards a tick reads,
 * and how the workers of a fanned-out tick divide them.
 */
import { createHash } from "node:crypto";
import type { TickShare } from "../types.js";

/** Shards of the due index by default (the `dueShards` setting; see {@link dueShardsRead}). */
export const DUE_SHARDS = 4;
/**
 * Most shards the due index may be given. Each shard is one GSI partition key value, so one
 * partition: about 1,000 writes/s of due marks each. 1,000 shards carry ~1M marks/s, well past a
 * table's default throughput quota (40,000 write units/s), so more would buy nothing; and every
 * tick queries every shard (twice, with `earliestDue`), so the count is also the tick's fixed cost.
 */
export const MAX_DUE_SHARDS = 1000;

/** The due index shard of a channel among `shards`: a stable hash, so every writer agrees. */
export function dueShardOf(channel: string, shards: number = DUE_SHARDS): string {
  return String(createHash("sha256").update(channel).digest().readUInt32BE(0) % shards);
}

/**
 * The shards the tick reads: every shard id below the larger of the current count and the
 * previous one (`previousDueShards`, kept while a change of `dueShards` migrates).
 *
 * Changing the count is safe because a due item is never hidden. A writer on either count puts
 * the item in a shard below that count, and the reader covers both, so during a rolling deploy
 * (or while users' own `IngestClient`s still run the old count) both are found. Every due item
 * the tick finishes is rewritten under the current count, so items leave the old-only shards
 * (`current..previous-1`, only when shrinking) as their channels come due; the tick reports
 * what is left there as the `DueItemsInOldShards` metric. Growing needs no previous count (the
 * old shards are a subset of the new), shrinking does until that metric reads 0 with every
 * writer on the new count; then the previous count is dropped. Reading the union instead of
 * sweeping old shards keeps one code path and costs only a few extra queries per tick.
 */
export function dueShardsRead(dueShards: number, previousDueShards?: number | null): string[] {
  const count = Math.max(dueShards, previousDueShards ?? 0);
  return Array.from({ length: count }, (_, shard) => String(shard));
}

/**
 * The shards of `shards` (as {@link dueShardsRead} lists them) that `share` owns: those whose
 * number is the share's index modulo the share count. Every shard has one owner, so the workers
 * of a tick together read the whole index, each channel in one worker's part.
 */
export function shareShards(shards: readonly string[], share: TickShare): string[] {
  return shards.filter((shard) => Number(shard) % share.of === share.index);
}

/** Throws unless `shards` is a shard count the due index may have (1 to {@link MAX_DUE_SHARDS}). */
export function checkDueShards(shards: number, name = "dueShards"): number {
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_DUE_SHARDS) {
    throw new RangeError(`${name} must be an integer from 1 to ${MAX_DUE_SHARDS} (got ${shards})`);
  }
  return shards;
}
