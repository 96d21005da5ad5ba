/** A chat input's messages split by channel, as `segment` and `disentangle` take them. */
import { compareIds, compareRefs } from "convoseg/identity";
import type { ChatMessage } from "convoseg/messages";

/** Channels in id order, each with its messages in the product's order (timestamp, then id). */
export function byChannel(messages: ChatMessage[]): [string, ChatMessage[]][] {
  const channels = new Map<string, ChatMessage[]>();
  for (const message of messages) {
    const list = channels.get(message.channel);
    if (list) list.push(message);
    else channels.set(message.channel, [message]);
  }
  return [...channels]
    .sort(([a], [b]) => compareIds(a, b))
    .map(([channel, list]) => [channel, list.sort(compareRefs)]);
}
