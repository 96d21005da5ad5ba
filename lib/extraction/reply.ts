/**
 * What a model's reply must be, checked after parsing (zod): an array of wire candidates, or an
 * object holding them under `candidates`. Missing optional fields take their empty values.
 */
import { z } from "zod";
import type { Candidate } from "./types.js";

const wireCandidate = z.object({
  topic: z.string(),
  reason: z.string().nullish(),
  confidence: z.number().min(0).max(1),
  tags: z.array(z.string()).nullish(),
  turn_range: z.tuple([z.number().int(), z.number().int()]).nullish(),
  subjective: z.boolean().nullish(),
  wiki_worthy: z.boolean().nullish(),
});

const reply = z.union([z.array(wireCandidate), z.object({ candidates: z.array(wireCandidate) })]);

/**
 * A candidate as the model gave it, with its optional fields filled in: its `turnRange` still the
 * model's 1-based turn numbers, not yet mapped to the transcript.
 */
export type WireCandidate = Candidate;

/** The candidates of a reply, or the reason it is not one (a path and a problem per issue). */
export function readReply(value: unknown): { candidates: WireCandidate[] } | { problem: string } {
  const parsed = reply.safeParse(value);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join(".") || "reply"}: ${issue.message}`)
      .join("; ");
    return { problem };
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.candidates;
  return {
    candidates: list.map((c) => {
      const candidate: WireCandidate = {
        topic: c.topic,
        reason: c.reason ?? "",
        confidence: c.confidence,
        tags: c.tags ?? [],
        turnRange: c.turn_range ?? null,
        subjective: c.subjective ?? false,
      };
      if (c.wiki_worthy !== undefined && c.wiki_worthy !== null)
        candidate.wikiWorthy = c.wiki_worthy;
      return candidate;
    }),
  };
}
