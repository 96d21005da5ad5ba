/**
 * How a segment is addressed on a FIFO queue: its channel is the message group (a channel's
 * segments are received in order) and its segment id the deduplication id. Every producer
 * (the tick, `reextract`) derives them by this rule, so a channel is one group whoever sends.
 */
import { createHash } from "node:crypto";

/** SQS group and deduplication ids: 1 to 128 ASCII letters, digits and punctuation. */
const VALID_FIFO_ID = /^[!-~]{1,128}$/;

/**
 * The value itself when SQS accepts it as a group or deduplication id, else its SHA-256 hex
 * digest: channel ids may hold spaces, non-ASCII characters or be long, and a deterministic
 * stand-in keeps both per-channel order and deduplication.
 */
export function fifoId(value: string): string {
  return VALID_FIFO_ID.test(value) ? value : createHash("sha256").update(value).digest("hex");
}
