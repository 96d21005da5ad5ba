import type { Candidate } from "./types.js";

/** The dedupe key of a topic: lower-case, whitespace runs collapsed to one space, trimmed. */
export function normalizeTopic(topic: string): string {
  return topic.toLowerCase().split(/\s+/u).filter(Boolean).join(" ");
}

/**
 * Merges candidates with the same normalized topic, in one pass: the first occurrence keeps its
 * position; a later one with a strictly higher confidence brings its topic, reason, subjective
 * flag and confidence; tags are unioned in order of appearance; the first defined verdict
 * (`wikiWorthy`) wins; the turn range becomes the hull of the known ranges. A candidate with a
 * blank topic is never merged.
 */
export function dedupeCandidates(candidates: readonly Candidate[]): Candidate[] {
  const merged: Candidate[] = [];
  const byKey = new Map<string, Candidate>();
  for (const candidate of candidates) {
    const key = normalizeTopic(candidate.topic);
    const kept = key === "" ? undefined : byKey.get(key);
    if (kept === undefined) {
      const copy = { ...candidate, tags: [...candidate.tags] };
      merged.push(copy);
      if (key !== "") byKey.set(key, copy);
      continue;
    }
    if (candidate.confidence > kept.confidence) {
      kept.topic = candidate.topic;
      kept.reason = candidate.reason;
      kept.subjective = candidate.subjective;
      kept.confidence = candidate.confidence;
    }
    for (const tag of candidate.tags) if (!kept.tags.includes(tag)) kept.tags.push(tag);
    if (kept.wikiWorthy === undefined && candidate.wikiWorthy !== undefined) {
      kept.wikiWorthy = candidate.wikiWorthy;
    }
    kept.turnRange = hull(kept.turnRange, candidate.turnRange);
  }
  return merged;
}

function hull(a: [number, number] | null, b: [number, number] | null): [number, number] | null {
  if (a === null) return b === null ? null : [b[0], b[1]];
  if (b === null) return a;
  return [Math.min(a[0], b[0]), Math.max(a[1], b[1])];
}
