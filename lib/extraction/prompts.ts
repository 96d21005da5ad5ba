/**
 * The prompts of the analyzer and the JSON schema of the reply. Every prompt is one user message:
 * the instructions, then the excerpt between markers, then the closing instruction, so that the
 * part two windows of a prefix chain share (the instructions and the shorter window's excerpt) is
 * a prefix of both prompts, which providers cache.
 */
/**
 * The version of the prompts and reply schema below. Results and stored window replies are keyed
 * by it: change it with any change to what the model is asked, so that segments are re-extracted.
 */
export const PROMPT_VERSION = "1";

export const EXCERPT_START = "=== EXCERPT START ===";
export const EXCERPT_END = "=== EXCERPT END ===";
export const EXISTING_START = "=== EXISTING TOPICS START ===";
export const EXISTING_END = "=== EXISTING TOPICS END ===";

const FACT_CATEGORIES = `Prefer CONCRETE FACTS over vague summaries. Worth keeping are:
- specific numbers, dates, versions and limits (ttl_days, ports, sizes);
- exact API endpoints and file paths;
- exact commands and flags;
- colors and other visual details;
- the root cause of errors, and what fixed them.`;

const JUDGEMENT = `For each topic judge whether it is subjective (a preference, taste or opinion of a
person: "subjective": true) or objective (a fact that could be checked: "subjective": false).`;

const WIKI_WORTHY = `Also give "wiki_worthy": true if the topic deserves its own wiki page (durable,
self-contained, non-trivial), false if it is trivial, ephemeral or minor. Judge honestly.`;

const LANGUAGE = "Write each topic and reason in the language of the excerpt.";

function fieldsDescription(selective: boolean): string {
  return `Answer with a JSON object {"candidates": [...]}, each candidate with these fields:
- "topic": a short name of the topic;
- "reason": one sentence on why it is worth remembering;
- "confidence": how sure you are that it is worth remembering, from 0 to 1;
- "tags": up to 5 short tags;
- "turn_range": [start_turn, end_turn], the numbers of the first and last turns it comes from (approximate), or null;
- "subjective": true or false, as above${selective ? ';\n- "wiki_worthy": true or false, as above.' : "."}
If nothing is worth remembering, answer {"candidates": []}.`;
}

/** A prompt and how much of it is a prefix it may share with the prompts of longer windows. */
export interface Prompt {
  text: string;
  /** Where the excerpt's text begins (the shared instructions end there). */
  excerptAt: number;
}

/** The prompt that asks for the topics of one window. */
export function extractPrompt(excerpt: string, selective: boolean): Prompt {
  return prompt(
    [
      "You read an excerpt of a conversation and identify topics that would be worth remembering:",
      "technical decisions, preferences of the user (including coding style), project conventions,",
      "facts about the codebase or the systems discussed, and strong opinions.",
    ],
    excerpt,
    selective,
  );
}

/** The second pass of the `full2` route: topics not among `existing` (normalized topics). */
export function additionalPrompt(
  excerpt: string,
  existing: readonly string[],
  selective: boolean,
): Prompt {
  return prompt(
    [
      "You read an excerpt of a conversation. Topics worth remembering were already extracted from it;",
      "identify ADDITIONAL topics worth remembering that were NOT already extracted;",
      "do NOT repeat any of these, even in different wording:",
      EXISTING_START,
      ...existing,
      EXISTING_END,
      "A topic that is one of these in other words is not additional: do not repeat it.",
    ],
    excerpt,
    selective,
  );
}

/** `task`, then the instructions every prompt shares, then the excerpt between its markers. */
function prompt(task: readonly string[], excerpt: string, selective: boolean): Prompt {
  const head = [
    ...task,
    JUDGEMENT,
    FACT_CATEGORIES,
    ...(selective ? [WIKI_WORTHY] : []),
    fieldsDescription(selective),
    LANGUAGE,
    EXCERPT_START,
    "",
  ].join("\n");
  return {
    text: `${head}${excerpt}\n${EXCERPT_END}\nReturn ONLY valid JSON, no other text.`,
    excerptAt: head.length,
  };
}

/**
 * The JSON schema of the reply, in the portable subset providers enforce: every field required,
 * optional ones nullable, no numeric or length bounds (those are checked after parsing).
 */
export function replySchema(selective: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    topic: { type: "string" },
    reason: { type: "string" },
    confidence: { type: "number" },
    tags: { type: "array", items: { type: "string" } },
    turn_range: { anyOf: [{ type: "array", items: { type: "integer" } }, { type: "null" }] },
    subjective: { type: "boolean" },
  };
  if (selective) properties.wiki_worthy = { anyOf: [{ type: "boolean" }, { type: "null" }] };
  return {
    type: "object",
    properties: {
      candidates: {
        type: "array",
        items: {
          type: "object",
          properties,
          required: Object.keys(properties),
          additionalProperties: false,
        },
      },
    },
    required: ["candidates"],
    additionalProperties: false,
  };
}
