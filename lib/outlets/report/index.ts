/**
 * The HTML report of segments and what was learned from them. The records it reads (`run --out`,
 * the workspace), its data model, the page's assets and the self-contained HTML, with anchors that
 * link a digest entry to its segment.
 */
export { parseSegmentAnchor, reportSegmentHref, segmentAnchor } from "./anchors.js";
export { loadReportAssets } from "./assets.js";
export { DROPPED, NOT_IN_INPUT, OPEN, THREAD_EXCERPT } from "./data.js";
export { embedJson, renderReportHtml } from "./html.js";
export { buildReport, sizeDistribution } from "./model.js";
export {
  InvalidRecordError,
  parseCandidatesRecord,
  parseSegmentRecord,
  type ReportInput,
  type ReportMessage,
  type SegmentRecord,
} from "./records.js";
