import type { SegmentData } from "../data.js";
import { duration } from "./dom.js";

/** The cause of the cut before a segment, as the segment table says it. */
export function cutLabel(segment: SegmentData): string {
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
