/**
 * The report page's segment anchors: `report.html#segment=<channel>/<segmentId>` opens the
 * channel and selects the segment (each part percent-encoded), so that a digest entry, or any
 * page, can link to the conversation it came from. Shared by the page's script and Node.
 */

const SEGMENT_ANCHOR = "segment=";

/** The fragment (without `#`) that selects `segmentId` of `channel` in the report. */
export function segmentAnchor(channel: string, segmentId: string): string {
  return `${SEGMENT_ANCHOR}${encodeURIComponent(channel)}/${encodeURIComponent(segmentId)}`;
}

/** The link to a segment in the report at `report` (a path or URL, default `report.html`). */
export function reportSegmentHref(
  where: { channel: string; segmentId: string },
  report = "report.html",
): string {
  return `${report}#${segmentAnchor(where.channel, where.segmentId)}`;
}

/** The channel and segment a fragment (with or without `#`) names, or undefined for another. */
export function parseSegmentAnchor(
  hash: string,
): { channel: string; segmentId: string } | undefined {
  const fragment = hash.startsWith("#") ? hash.slice(1) : hash;
  if (!fragment.startsWith(SEGMENT_ANCHOR)) return undefined;
  const parts = fragment.slice(SEGMENT_ANCHOR.length).split("/");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return undefined;
  try {
    return { channel: decodeURIComponent(parts[0]), segmentId: decodeURIComponent(parts[1]) };
  } catch {
    return undefined;
  }
}
