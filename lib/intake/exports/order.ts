/** The order readers hand messages over in, and the merge of several inputs by id. */
import { compareIds } from "../../base/identity/index.js";
import type { ExportMessage } from "./types.js";

/**
 * Channel-major order: by channel id (code point order), then oldest first (`ts` is fixed-width
 * ISO, so string order is time order), then id. Every reader yields in this order, so inputs
 * merge without holding more than one channel.
 */
export function compareExportMessages(a: ExportMessage, b: ExportMessage): number {
  return (
    (a.channel === b.channel ? 0 : compareIds(a.channel, b.channel)) ||
    (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0) ||
    compareIds(a.id, b.id)
  );
}

/** Sorts one reader's buffer into {@link compareExportMessages} order. */
export function sortMessages(messages: ExportMessage[]): ExportMessage[] {
  return messages.sort(compareExportMessages);
}

/** The fields whose difference makes a repeated id a conflict rather than a duplicate. */
const COMPARED = ["ts", "user", "text", "userId", "replyTo", "thread", "kind"] as const;

/** The fields two messages of one id disagree on (empty for a duplicate). */
export function differingFields(a: ExportMessage, b: ExportMessage): string[] {
  return COMPARED.filter((field) => a[field] !== b[field]);
}
