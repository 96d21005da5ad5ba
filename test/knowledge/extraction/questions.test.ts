/**
 * The analyzer's questions (issue 25 §1) against a scripted model: what the prompts ask for,
 * how the model's turn numbers come back as the transcript's, what a malformed question becomes,
 * and that a stored window reply keeps them.
 */

import {
  Analyzer,
  dedupeQuestions,
  type ExtractionTurn,
  type LLM,
  QUESTION_STATUSES,
  type QuestionCandidate,
  type Turn,
} from "convoseg/extraction";
import { MAX_ANSWER_CHARS, MAX_QUESTION_CHARS, MAX_QUESTIONS } from "convoseg/extraction/bounds";
import { additionalPrompt, extractPrompt, replySchema } from "convoseg/extraction/prompts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { placeQuestions } from "../../../lib/knowledge/extraction/questions.js";
import { memoryOutputs } from "../../support/window-outputs.js";

const turn = (author: string, text: string): ExtractionTurn => ({
  role: "user",
  kind: "user",
  author,
  text,
});

const TURNS = [
  turn("ana", "morning all"),
  turn("bo", "hey"),
  turn("ana", "how do I reset the router?"),
  turn("bo", "hold the button for ten seconds"),
  turn("ana", "that worked"),
  turn("cy", "nice"),
];

/** The rendered number of the first line of `prompt` whose text holds `needle`. */
function numberOf(prompt: string, needle: string): number | undefined {
  const line = prompt.split("\n").find((l) => l.startsWith("Turn ") && l.includes(needle));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}

/** Answers every call with `reply(prompt)`, recording the user message of each request. */
function scripted(reply: (prompt: string) => unknown): LLM & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    chatJSON: async (messages: readonly Turn[]) => {
      const prompt = messages.find((m) => m.role === "user")?.content ?? "";
      prompts.push(prompt);
      return reply(prompt);
    },
  };
}

/** The question of turn 2 as the model sees it in each window, answered by turn 3 when shown. */
const resetQuestion = (prompt: string) => {
  const asked = numberOf(prompt, "reset the router");
  const answer = numberOf(prompt, "hold the button");
  if (asked === undefined) return { candidates: [], questions: [] };
  return {
    candidates: [],
    questions: [
      answer === undefined
        ? {
            question: "How do I reset the router?",
            asked,
            status: "unanswered",
            answer: null,
            answered_by: [],
          }
        : {
            question: "How do I reset the router?",
            asked,
            status: "answered",
            answer: "Hold the button for ten seconds.",
            answered_by: [answer],
          },
    ],
  };
};

describe("questions asked of the model", () => {
  it("asks for them in both prompt families and in the reply schema", () => {
    for (const prompt of [
      extractPrompt('Turn 1 [USER]: "x"', false),
      additionalPrompt('Turn 1 [USER]: "x"', ["a topic"], true),
    ]) {
      for (const field of ['"questions"', '"asked"', '"status"', '"answered_by"']) {
        expect(prompt.text.slice(0, prompt.excerptAt)).toContain(field);
      }
      expect(prompt.text).toContain(String(MAX_QUESTION_CHARS));
      expect(prompt.text).toContain(String(MAX_ANSWER_CHARS));
    }
    for (const selective of [false, true]) {
      const schema = replySchema(selective) as {
        required: string[];
        properties: { questions: { items: { required: string[] } } };
      };
      expect(schema.required).toContain("questions");
      expect(schema.properties.questions.items.required).toEqual([
        "question",
        "asked",
        "status",
        "answer",
        "answered_by",
      ]);
    }
  });

  it.each([
    ["sliding", { route: "sliding", windowSize: 4, overlap: 2 }],
    ["prefix", { route: "prefix", prefixStep: 2 }],
    ["non_prefix", { route: "non_prefix", prefixStep: 2 }],
    ["full", { route: "full" }],
    ["full2", { route: "full2" }],
  ] as const)(
    "maps turn numbers to the transcript and merges overlapping windows (%s)",
    async (_name, options) => {
      const llm = scripted(resetQuestion);
      const { questions } = await new Analyzer(llm, options).extract(TURNS);
      expect(llm.prompts.length).toBeGreaterThan(0);
      expect(questions).toEqual([
        {
          question: "How do I reset the router?",
          asked: 2,
          status: "answered",
          answer: "Hold the button for ten seconds.",
          answeredBy: [3],
        },
      ]);
    },
  );

  it("drops questions it cannot read or place, and corrects answering turns, counting drops", async () => {
    const llm = scripted(() => ({
      candidates: [
        {
          topic: "router reset",
          reason: "r",
          confidence: 0.9,
          tags: [],
          turn_range: [3, 4],
          subjective: false,
        },
      ],
      questions: [
        {
          question: "past the window",
          asked: 9,
          status: "unanswered",
          answer: null,
          answered_by: [],
        },
        { question: "turn zero", asked: 0, status: "unanswered", answer: null, answered_by: [] },
        { question: "   ", asked: 2, status: "unanswered", answer: null, answered_by: [] },
        { question: "odd status", asked: 2, status: "maybe", answer: null, answered_by: [] },
        { question: "not a number", asked: "3", status: "answered", answer: "x", answered_by: [4] },
        "not an object",
        // Answering turns before the question, the question itself and past the window go.
        {
          question: "How do I reset?",
          asked: 3,
          status: "answered",
          answer: "Hold it.",
          answered_by: [1, 3, 4, 4, 99],
        },
        // Answered by nothing that can be: unclear, and no answer.
        {
          question: "Which model?",
          asked: 4,
          status: "answered",
          answer: "A guess",
          answered_by: [2],
        },
        // Not answered: no answering turns kept.
        { question: "Anyone?", asked: 5, status: "unanswered", answer: "stray", answered_by: [6] },
      ],
    }));
    const extraction = await new Analyzer(llm, { route: "full" }).extract(TURNS);
    expect(llm.prompts).toHaveLength(1);
    expect(extraction.candidates.map((c) => c.topic)).toEqual(["router reset"]);
    expect(extraction.questions).toEqual([
      {
        question: "How do I reset?",
        asked: 2,
        status: "answered",
        answer: "Hold it.",
        answeredBy: [3],
      },
      { question: "Which model?", asked: 3, status: "unclear", answeredBy: [] },
      { question: "Anyone?", asked: 4, status: "unanswered", answeredBy: [] },
    ]);
    expect(extraction.trimmed).toEqual({ questions: 6 });
  });

  it("keeps the first questions of a window and cuts long texts, counting each", async () => {
    const many = Array.from({ length: MAX_QUESTIONS + 3 }, (_, i) => ({
      question: i === 0 ? "q".repeat(5000) : `question ${i}?`,
      asked: 1,
      status: i === 0 ? "answered" : "unanswered",
      answer: i === 0 ? "a".repeat(5000) : null,
      answered_by: i === 0 ? [2] : [],
    }));
    const { questions, trimmed } = await new Analyzer(
      scripted(() => ({ candidates: [], questions: many })),
      {
        route: "full",
      },
    ).extract(TURNS);
    expect(questions).toHaveLength(MAX_QUESTIONS);
    expect(questions?.[0].question.length).toBeLessThanOrEqual(MAX_QUESTION_CHARS);
    expect(questions?.[0].answer?.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(questions?.[1].question).toBe("question 1?");
    expect(trimmed).toEqual({ questions: 3, questionTexts: 1, answers: 1 });
  });

  it("stores a window's questions with its reply and reads them back; an old reply has none", async () => {
    const outputs = memoryOutputs();
    const first = await new Analyzer(scripted(resetQuestion), { route: "full" }).extract(TURNS, {
      outputs,
    });
    const [stored] = outputs.stored.values();
    expect(stored.questions).toEqual([expect.objectContaining({ asked: 3, answeredBy: [4] })]);
    const silent = scripted(() => {
      throw new Error("no call expected");
    });
    const again = await new Analyzer(silent, { route: "full" }).extract(TURNS, { outputs });
    expect(again.questions).toEqual(first.questions);
    for (const [prompt, output] of outputs.stored) {
      const { questions: _gone, ...old } = output;
      outputs.stored.set(prompt, old);
    }
    const old = await new Analyzer(silent, { route: "full" }).extract(TURNS, { outputs });
    expect(old.questions).toEqual([]);
  });

  it("places any reply's questions within the window, after their asking turn (property)", () => {
    const wireQuestion = fc.record({
      question: fc.string({ maxLength: 20 }),
      asked: fc.integer({ min: -3, max: 15 }),
      status: fc.constantFrom(...QUESTION_STATUSES),
      answer: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
      answeredBy: fc.array(fc.integer({ min: -3, max: 15 }), { maxLength: 5 }),
    });
    fc.assert(
      fc.property(
        fc.array(wireQuestion, { maxLength: 10 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 0, max: 50 }),
        (questions, shown, offset) => {
          const indexes = [...shown].sort((a, b) => a - b);
          const trimmed = {};
          const placed = placeQuestions(questions, indexes, offset, trimmed);
          const allowed = new Set(indexes.map((i) => i + offset));
          expect(placed.length + ((trimmed as { questions?: number }).questions ?? 0)).toBe(
            questions.length,
          );
          for (const q of dedupeQuestions(placed)) checkQuestion(q, allowed);
        },
      ),
    );
  });
});

function checkQuestion(q: QuestionCandidate, allowed: ReadonlySet<number>): void {
  expect(allowed.has(q.asked)).toBe(true);
  for (const by of q.answeredBy) {
    expect(allowed.has(by)).toBe(true);
    expect(by).toBeGreaterThan(q.asked);
  }
  expect([...q.answeredBy].sort((a, b) => a - b)).toEqual(q.answeredBy);
  expect(q.status === "answered").toBe(q.answeredBy.length > 0);
  if (q.status !== "answered") expect(q.answer).toBeUndefined();
}
