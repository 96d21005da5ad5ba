import type { SegmentData } from "../data.js";
import { duration } from "./dom.js";

/** The cause of the cut before a segment, as the segment table says it. */
export function cutLabel(segment: SegmentData): string {
  const gap = segment.gapMs === null ? "" : duration(segment.gapMs);
  switch (segment.cut) {
    case "start":
      return "start";
    case "silence":
      return `silence ${gap}`;
    case "size":
      return `size cap, largest gap ${gap}`;
    case "late":
      return `late, after ${belongsAfter(segment)}`;
  }
}

/** The same, short enough for a label on the timeline. */
export function cutTag(segment: SegmentData): string {
  const gap = segment.gapMs === null ? "" : duration(segment.gapMs);
  switch (segment.cut) {
    case "start":
      return "start";
    case "silence":
      return `silence ${gap}`;
    case "size":
      return `size ${gap}`;
    case "late":
      return `late → ${belongsAfter(segment)}`;
  }
}

function belongsAfter(segment: SegmentData): string {
  if (segment.belongsAfter !== null) return `#${segment.belongsAfter + 1}`;
  return segment.belongsAfterId === null
    ? "an unknown segment"
    : `${segment.belongsAfterId} (not in the file)`;
}
