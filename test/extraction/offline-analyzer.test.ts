/**
 * The analyzer and the offline keyphrase extractor together, as local runs use them: the
 * extractor reads the analyzer's real prompts back, on every route.
 */
import { describe, expect, it } from "vitest";
import { Analyzer, type Route, type Turn } from "../../lib/extraction/index.js";
import { KeyphraseExtractor } from "../../lib/extraction/llm/offline.js";

const transcript: Turn[] = [
  {
    role: "user",
    content: "Our Postgres connection pool runs out under load. How do I raise the pool size?",
  },
  {
    role: "assistant",
    content:
      "Set max_connections in postgresql.conf, then size the connection pool in PgBouncer below it.",
  },
  { role: "user", content: "The PgBouncer connection pool is at 20 now. Is 50 safe?" },
  {
    role: "assistant",
    content: "With max_connections at 100, a connection pool of 50 leaves room for admin sessions.",
  },
  { role: "user", content: "Also, the Docker volume for the database fills up every week." },
  { role: "tool", content: "df: /var/lib/docker/volumes/pgdata 98% used" },
  {
    role: "assistant",
    content: "Prune the WAL archive on the Docker volume and move backups off it.",
  },
];

describe("analyzer with the offline keyphrase extractor", () => {
  it.each(["prefix", "non_prefix", "full", "full2", "sliding"] as Route[])(
    "finds the conversation's topics on the %s route, with ranges inside the transcript",
    async (route) => {
      const found = await new Analyzer(new KeyphraseExtractor(), {
        route,
        prefixStep: 2,
        windowSize: 4,
        overlap: 1,
      }).analyze(transcript);
      const topics = found.map((c) => c.topic.toLowerCase());
      expect(topics.some((t) => t.includes("connection pool"))).toBe(true);
      for (const candidate of found) {
        expect(candidate.confidence).toBeGreaterThanOrEqual(0.3);
        const [start, end] = candidate.turnRange ?? [0, 0];
        expect(start).toBeGreaterThanOrEqual(0);
        expect(end).toBeLessThan(transcript.length);
        const mentioned = transcript
          .slice(start, end + 1)
          .some((t) =>
            t.content.toLowerCase().includes(candidate.topic.toLowerCase().split(" ")[0]),
          );
        expect(mentioned, candidate.topic).toBe(true);
      }
    },
  );
});
