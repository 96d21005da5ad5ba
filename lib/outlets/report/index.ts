export { parseSegmentAnchor, reportSegmentHref, segmentAnchor } from "./anchors.js";
export { loadReportAssets } from "./assets.js";
export * from "./data.js";
export { embedJson, type ReportAssets, renderReportHtml } from "./html.js";
export { buildReport, sizeDistribution } from "./model.js";
export {
  InvalidRecordError,
  parseCandidatesRecord,
  parseSegmentRecord,
  type ReportInput,
  type SegmentRecord,
} from "./records.js";
