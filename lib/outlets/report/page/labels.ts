import type { ChannelData, SegmentData, ThreadData } from "../data.js";
import { duration, el } from "./dom.js";

/**
 * The cause of the cut before a segment, as the segment table says it; the first segment of a
 * linked conversation (`thread`, its stream) is `new conversation`.
 */
export function cutLabel(segment: SegmentData, thread?: ThreadData): string {
  if (segment.cut === "start" && thread?.linked) return "new conversation";
  return cutText(segment, false);
}

/** The same, short enough for a label on the timeline. */
export function cutTag(segment: SegmentData): string {
  return cutText(segment, true);
}

function cutText(segment: SegmentData, short: boolean): string {
  const gap = segment.gapMs === null ? "" : duration(segment.gapMs);
  switch (segment.cut) {
    case "start":
      return "start";
    case "silence":
      return `silence ${gap}`;
    case "size":
      return short ? `size ${gap}` : `size cap, largest gap ${gap}`;
    case "late":
      return short ? `late → ${belongsAfter(segment)}` : `late, after ${belongsAfter(segment)}`;
  }
}

function belongsAfter(segment: SegmentData): string {
  if (segment.belongsAfter !== null) return `#${segment.belongsAfter + 1}`;
  return segment.belongsAfterId === null
    ? "an unknown segment"
    : `${segment.belongsAfterId} (not in the file)`;
}

/**
 * A thread as its rows and a segment's details name it: its root's author and words
 * (`ana: “has anyone tried…”`), either alone when the other is not known, or `thread <root id>`;
 * a linked conversation the same by its first message that is more than a greeting (channelThreads
 * picks it), or `conversation <id>`. A string, set as text like everything else from the data.
 */
export function threadLabel(thread: ThreadData): string {
  const words = thread.excerpt === undefined ? undefined : `“${thread.excerpt}”`;
  if (thread.author !== undefined)
    return words === undefined ? thread.author : `${thread.author}: ${words}`;
  return words ?? `${streamNoun(thread)} ${thread.root}`;
}

/** What a stream of its own is to a reader: a platform thread, or a linked conversation. */
export function streamNoun(thread: ThreadData): "thread" | "conversation" {
  return thread.linked ? "conversation" : "thread";
}

/** The mark of a channel the generated sample filled (`run` without `--input`): not the user's. */
export function sampleTag(channel: ChannelData): HTMLElement | "" {
  return channel.sample
    ? el(
        "span",
        { class: "sample-tag", title: "made up by run without --input: the demo, not your chat" },
        "sample",
      )
    : "";
}
