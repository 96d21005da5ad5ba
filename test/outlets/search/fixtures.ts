import type { SearchDocument } from "convoseg/search";

/** A message document of `ana` in `ubuntu` at 1,000 ms, with whatever `over` says instead. */
export const doc = (
  over: Partial<SearchDocument> & Pick<SearchDocument, "id" | "text">,
): SearchDocument => ({
  kind: "message",
  channel: "ubuntu",
  ts: 1_000,
  author: "ana",
  authorId: "",
  title: "",
  status: "",
  segment: "",
  evidence: [over.id],
  permalink: "",
  ...over,
});
