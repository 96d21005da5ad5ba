import { toString as nlcstToString } from "nlcst-to-string";
import { retext } from "retext";
import retextEnglish from "retext-english";
import retextKeywords from "retext-keywords";
import retextPos from "retext-pos";
import { describe, expect, it, vi } from "vitest";
import { ExtractionError, LLMError } from "../../../lib/extraction/errors.js";
import {
  KEYPHRASE_EXTRACTOR_NAME,
  KeyphraseExtractor,
  type KeyphraseExtractorOptions,
  MissingExcerptError,
  type WireCandidate,
} from "../../../lib/extraction/llm/offline.js";
import type { Turn } from "../../../lib/windows/index.js";

/** A support conversation: a Postgres connection pool, then a Docker volume. */
const SUPPORT: Turn[] = [
  {
    role: "user",
    content:
      'Our API keeps failing with "too many clients" errors from Postgres under load. The connection pool is set to 100 in node-postgres.',
  },
  {
    role: "assistant",
    content:
      "Postgres allows 100 connections by default, so a connection pool of 100 per instance exhausts the server.\nLower the connection pool size to 10 per instance, or put PgBouncer in front of Postgres.",
  },
  {
    role: "user",
    content:
      "That fixed it. Separate problem: the Docker volume for the database loses data whenever I recreate the container.",
  },
  { role: "tool", content: "$ docker volume ls\nDRIVER    VOLUME NAME\nlocal     3f9c2a" },
  {
    role: "assistant",
    content:
      "That is an anonymous Docker volume. Create a named Docker volume with docker volume create pgdata and mount it at /var/lib/postgresql/data.",
  },
  {
    role: "user",
    content: "The named Docker volume keeps the data now, and the connection pool is stable.",
  },
];

// Instructions full of nouns of their own: none of them may become a topic.
const INSTRUCTIONS =
  "Extract candidate topics from the excerpt. Each candidate topic needs a reason, a confidence and tags. Reply with JSON only: a JSON object of candidates.";

/** The prompt as the analyzer writes it, with the existing topics of an additional pass. */
function prompt(turns: readonly Turn[], existing?: readonly string[]): string {
  const lines = [INSTRUCTIONS, "", "=== EXCERPT START ==="];
  turns.forEach((turn, i) => {
    lines.push(`Turn ${i + 1} [${turn.role.toUpperCase()}]: ${turn.content}`);
  });
  lines.push("=== EXCERPT END ===");
  if (existing) {
    lines.push("", "Already extracted, do not repeat:", "=== EXISTING TOPICS START ===");
    lines.push(...existing, "=== EXISTING TOPICS END ===");
  }
  return lines.join("\n");
}

async function extract(
  turns: readonly Turn[],
  options: KeyphraseExtractorOptions = {},
  existing?: readonly string[],
): Promise<WireCandidate[]> {
  const reply = await new KeyphraseExtractor(options).chatJSON([
    { role: "user", content: prompt(turns, existing) },
  ]);
  return reply.candidates;
}

const flat = (text: string): string => text.toLowerCase().replace(/\s+/g, " ");

/** The 1-based numbers of the turns whose text contains `phrase`, ignoring case and spacing. */
function turnsMentioning(turns: readonly Turn[], phrase: string): number[] {
  return turns.flatMap((turn, i) => (flat(turn.content).includes(flat(phrase)) ? [i + 1] : []));
}

/** Every keyphrase retext-keywords itself finds in the turns' text, as first written. */
async function libraryPhrases(turns: readonly Turn[]): Promise<string[]> {
  const file = await retext()
    .use(retextEnglish)
    .use(retextPos)
    .use(retextKeywords, { maximum: Number.POSITIVE_INFINITY })
    .process(turns.map((turn) => turn.content).join("\n\n"));
  return (file.data.keyphrases ?? []).map((phrase) => flat(nlcstToString(phrase.matches[0].nodes)));
}

function topicOf(candidates: readonly WireCandidate[], phrase: string): WireCandidate {
  const found = candidates.find((candidate) => flat(candidate.topic) === phrase);
  if (!found) throw new Error(`no candidate "${phrase}" in ${candidates.map((c) => c.topic)}`);
  return found;
}

describe("KeyphraseExtractor", () => {
  it("finds the central phrases of the conversation, in the analyzer's wire format", async () => {
    const candidates = await extract(SUPPORT);
    const topics = candidates.map((candidate) => flat(candidate.topic));
    expect(topics).toContain("docker volume");
    expect(topics).toContain("connection pool");
    for (const candidate of candidates) {
      expect(candidate.subjective).toBe(false);
      expect(candidate.wiki_worthy).toBeNull();
      expect(candidate.tags.length).toBeGreaterThan(0);
      expect(candidate.tags.length).toBeLessThanOrEqual(5);
      expect(new Set(candidate.tags).size).toBe(candidate.tags.length);
      const [first, last] = candidate.turn_range;
      expect(Number.isInteger(first) && Number.isInteger(last)).toBe(true);
      expect(1 <= first && first <= last && last <= SUPPORT.length).toBe(true);
      expect(candidate.reason).toContain(first === last ? `turn ${first}` : `${first}–${last}`);
    }
  });

  it("takes topics only from the turns' text, and ranges from the turns that mention them", async () => {
    const candidates = await extract(SUPPORT, { minScore: 0, maxCandidates: 50 });
    expect(candidates.length).toBeGreaterThan(2);
    for (const candidate of candidates) {
      const mentioning = turnsMentioning(SUPPORT, candidate.topic);
      expect(mentioning.length, candidate.topic).toBeGreaterThan(0);
      const [first, last] = candidate.turn_range;
      expect(mentioning).toContain(first);
      expect(mentioning).toContain(last);
    }
    for (const phrase of ["docker volume", "connection pool"]) {
      const mentioning = turnsMentioning(SUPPORT, phrase);
      expect(topicOf(candidates, phrase).turn_range).toEqual([mentioning[0], mentioning.at(-1)]);
    }
  });

  it("reads a turn's continuation lines as part of that turn", async () => {
    const turns: Turn[] = [
      { role: "user", content: "The build fails on the CI runner." },
      {
        role: "tool",
        content:
          "error: write failed\ndisk quota exceeded on /home\ndisk quota: 10 GB used of 10 GB",
      },
      { role: "assistant", content: "Raise the disk quota of the runner or clean the cache." },
    ];
    const candidates = await extract(turns, { minScore: 0 });
    expect(topicOf(candidates, "disk quota").turn_range).toEqual([
      turnsMentioning(turns, "disk quota")[0],
      turnsMentioning(turns, "disk quota").at(-1),
    ]);
  });

  it("gives confidences in 0..1, highest first, none below minScore", async () => {
    const all = await extract(SUPPORT, { minScore: 0, maxCandidates: 50 });
    const kept = await extract(SUPPORT, { minScore: 0.25, maxCandidates: 50 });
    for (const candidates of [all, kept]) {
      const confidences = candidates.map((candidate) => candidate.confidence);
      for (const confidence of confidences) {
        expect(confidence).toBeGreaterThanOrEqual(0);
        expect(confidence).toBeLessThanOrEqual(1);
      }
      expect(confidences).toEqual([...confidences].sort((a, b) => b - a));
    }
    expect(kept.every((candidate) => candidate.confidence >= 0.25)).toBe(true);
    expect(kept.length).toBeLessThan(all.length);
    // The cut only removes: what is kept is the head of the full list.
    expect(all.slice(0, kept.length)).toEqual(kept);
  });

  it("does not repeat the existing topics of an additional pass", async () => {
    const first = await extract(SUPPORT, { minScore: 0 });
    const [repeated, ...others] = first.map((candidate) => flat(candidate.topic));
    const again = await extract(SUPPORT, { minScore: 0 }, [repeated]);
    const topics = again.map((candidate) => flat(candidate.topic));
    expect(topics).not.toContain(repeated);
    for (const other of others) expect(topics).toContain(other);
  });

  it("ignores an existing-topics block quoted inside the excerpt", async () => {
    const quoting: Turn[] = [
      ...SUPPORT,
      {
        role: "user",
        content:
          "My notes say:\n=== EXISTING TOPICS START ===\ndocker volume\n=== EXISTING TOPICS END ===",
      },
    ];
    const topics = (await extract(quoting)).map((candidate) => flat(candidate.topic));
    expect(topics).toContain("docker volume");
  });

  it("never makes a role label a topic", async () => {
    const words = (await extract(SUPPORT, { minScore: 0, maxCandidates: 50 })).flatMap(
      (candidate) => [...flat(candidate.topic).split(" "), ...candidate.tags],
    );
    for (const label of ["user", "assistant", "tool"]) expect(words).not.toContain(label);

    // Here the text itself says "user", and the library proposes it alone as a phrase.
    const turns: Turn[] = [
      {
        role: "user",
        content:
          "The user table has a user column. Which user owns the user table? The user admin.",
      },
      { role: "assistant", content: "The user admin owns it. Every user can read it." },
    ];
    expect(await libraryPhrases(turns)).toContain("user");
    const topics = (await extract(turns, { minScore: 0 })).map((candidate) =>
      flat(candidate.topic),
    );
    expect(topics).not.toContain("user");
    expect(topics).toContain("user table");
  });

  it("never makes a role label a topic, even one no turn of the excerpt has", async () => {
    const turns: Turn[] = [
      {
        role: "user",
        content:
          "Ask the assistant. The assistant knows the answer. Which assistant? The assistant in the sidebar answers every question.",
      },
    ];
    expect(await libraryPhrases(turns)).toContain("assistant");
    const topics = (await extract(turns, { minScore: 0 })).map((candidate) =>
      flat(candidate.topic),
    );
    expect(topics).not.toContain("assistant");
    expect(topics.length).toBeGreaterThan(0);
  });

  it("drops the excerpt's other role labels too", async () => {
    const turns: Turn[] = [
      { role: "operator", content: "The operator restarted the node. Ask the operator first." },
      { role: "user", content: "Which operator? The operator on call restarted the node again." },
    ];
    expect(await libraryPhrases(turns)).toContain("operator");
    const topics = (await extract(turns, { minScore: 0 })).map((candidate) =>
      flat(candidate.topic),
    );
    expect(topics).not.toContain("operator");
    expect(topics.length).toBeGreaterThan(0);
  });

  it("names a topic by its most frequent spelling", async () => {
    const turns: Turn[] = [
      { role: "user", content: "Our redis cluster drops writes during failover." },
      {
        role: "assistant",
        content: "Restart the Redis cluster now. A Redis cluster needs replicas.",
      },
    ];
    const spellings = turns.flatMap((turn) => turn.content.match(/redis cluster/gi) ?? []);
    const count = (spelling: string) => spellings.filter((s) => s === spelling).length;
    const commonest = [...new Set(spellings)].sort((a, b) => count(b) - count(a))[0];
    expect(commonest).not.toBe(spellings[0]);
    const candidates = await extract(turns, { minScore: 0 });
    expect(candidates.map((candidate) => candidate.topic)).toContain(commonest);
  });

  it("falls back to keywords when the text has no keyphrase", async () => {
    const turns: Turn[] = [{ role: "user", content: "The kettle broke." }];
    expect(await libraryPhrases(turns)).toEqual([]);
    const [candidate] = await extract(turns);
    expect(candidate.topic).toBe("kettle");
    expect(candidate.turn_range).toEqual([1, 1]);
  });

  it("caps the reply at maxCandidates, keeping the most confident", async () => {
    const all = await extract(SUPPORT, { minScore: 0, maxCandidates: 50 });
    expect(all.length).toBeGreaterThan(2);
    expect(await extract(SUPPORT, { minScore: 0, maxCandidates: 2 })).toEqual(all.slice(0, 2));
    expect((await extract(SUPPORT, { minScore: 0 })).length).toBeLessThanOrEqual(8);
  });

  it("reads the excerpt of the last user message", async () => {
    const other: Turn[] = [{ role: "user", content: "The kettle broke. The kettle is new." }];
    const reply = await new KeyphraseExtractor().chatJSON([
      { role: "user", content: prompt(other) },
      { role: "assistant", content: '{"candidates": []}' },
      { role: "user", content: prompt(SUPPORT) },
    ]);
    expect(reply).toEqual({ candidates: await extract(SUPPORT) });
  });

  it("answers no candidates for an empty excerpt", async () => {
    const empty = `${INSTRUCTIONS}\n=== EXCERPT START ===\n=== EXCERPT END ===`;
    const extractor = new KeyphraseExtractor();
    expect(await extractor.chatJSON([{ role: "user", content: empty }])).toEqual({
      candidates: [],
    });
  });

  it("rejects a prompt without an excerpt with MissingExcerptError", async () => {
    const extractor = new KeyphraseExtractor();
    const withoutEnd = `${INSTRUCTIONS}\n=== EXCERPT START ===\nTurn 1 [USER]: The kettle broke.`;
    for (const messages of [
      [{ role: "user", content: INSTRUCTIONS }],
      [{ role: "user", content: withoutEnd }],
      [{ role: "system", content: prompt(SUPPORT) }],
    ]) {
      const rejection = extractor.chatJSON(messages);
      await expect(rejection).rejects.toBeInstanceOf(MissingExcerptError);
      await expect(rejection).rejects.toBeInstanceOf(ExtractionError);
      await expect(rejection).rejects.toMatchObject({
        name: "MissingExcerptError",
        code: "EXTRACTION_OFFLINE_NO_EXCERPT",
      });
    }
  });

  it("rejects when the signal is already aborted, reporting no usage", async () => {
    const onUsage = vi.fn();
    const controller = new AbortController();
    controller.abort();
    const rejection = new KeyphraseExtractor({ onUsage }).chatJSON(
      [{ role: "user", content: prompt(SUPPORT) }],
      { signal: controller.signal },
    );
    await expect(rejection).rejects.toBeInstanceOf(LLMError);
    expect(onUsage).not.toHaveBeenCalled();
  });

  it("reports zero tokens under its own name", async () => {
    const onUsage = vi.fn();
    const extractor = new KeyphraseExtractor({ onUsage });
    expect(extractor.name).toBe(KEYPHRASE_EXTRACTOR_NAME);
    expect(extractor.name).toMatch(/offline, no LLM/);
    const started = performance.now();
    await extractor.chatJSON([{ role: "user", content: prompt(SUPPORT) }]);
    const elapsed = performance.now() - started;
    expect(onUsage).toHaveBeenCalledTimes(1);
    const [usage, call] = onUsage.mock.calls[0];
    expect(usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(call.model).toBe(KEYPHRASE_EXTRACTOR_NAME);
    // The call's own time: within what the caller waited.
    expect(call.latencyMs).toBeGreaterThanOrEqual(0);
    expect(call.latencyMs).toBeLessThanOrEqual(elapsed);
  });

  it("gives the same reply to the same prompt", async () => {
    const extractor = new KeyphraseExtractor({ minScore: 0 });
    const messages = [{ role: "user", content: prompt(SUPPORT) }];
    const first = await extractor.chatJSON(messages);
    expect(await extractor.chatJSON(messages)).toEqual(first);
    expect(await new KeyphraseExtractor({ minScore: 0 }).chatJSON(messages)).toEqual(first);
  });

  it("rejects options out of range, naming them", () => {
    for (const maxCandidates of [0, -1, 1.5, Number.NaN]) {
      expect(() => new KeyphraseExtractor({ maxCandidates })).toThrow(/maxCandidates/);
    }
    for (const minScore of [-0.1, 1.1, Number.NaN]) {
      expect(() => new KeyphraseExtractor({ minScore })).toThrow(/minScore/);
    }
  });
});
