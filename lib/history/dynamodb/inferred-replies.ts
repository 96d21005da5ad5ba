/**
 * The reply linker's inferred parents, recorded on stored messages by the segmentation tick: one
 * conditional update per message, naming only `inferredReplyTo` (what the tick's grant allows).
 */
import type { CallOptions } from "../store.js";
import { type TableAccess, updateIf } from "./access.js";
import { INFERRED_REPLY_TO, PARTITION_KEY, SORT_KEY } from "./schema.js";

/** A message and the one it answers, as the linker inferred it. */
export interface InferredReply {
  id: string;
  parent: string;
}

/** Updates at once: enough to overlap round trips, few enough not to burst a table's capacity. */
const CONCURRENCY = 8;

/**
 * Sets each message's `inferredReplyTo`; a message no longer stored (cleared, expired) is left
 * alone, never recreated. Idempotent: a tick that runs again after a crash writes the same links.
 */
export async function recordInferredReplies(
  access: TableAccess,
  conversation: string,
  links: readonly InferredReply[],
  options?: CallOptions,
): Promise<void> {
  for (let i = 0; i < links.length; i += CONCURRENCY) {
    await Promise.all(
      links.slice(i, i + CONCURRENCY).map((link) => recordOne(access, conversation, link, options)),
    );
  }
}

function recordOne(
  access: TableAccess,
  conversation: string,
  link: InferredReply,
  options?: CallOptions,
): Promise<boolean> {
  return updateIf(
    access,
    {
      Key: { [PARTITION_KEY]: conversation, [SORT_KEY]: `m#${link.id}` },
      UpdateExpression: "SET #inferred = :parent",
      ConditionExpression: "attribute_exists(#key)",
      ExpressionAttributeNames: { "#inferred": INFERRED_REPLY_TO, "#key": SORT_KEY },
      ExpressionAttributeValues: { ":parent": link.parent },
    },
    options?.signal,
  );
}
