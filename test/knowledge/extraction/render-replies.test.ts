/**
 * Replies in the render (issue 22 §1): a reply says which turn it answers, by number; ids never
 * reach the prompt; and whatever the authors, texts and ids, each turn stays one line that reads
 * back exactly (property).
 */

import { Analyzer, type ExtractionTurn, type LLM, type PromptTurn } from "convoseg/extraction";
import { renderTurns } from "convoseg/extraction/prompts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const LINE =
  /^Turn (\d+) \[([A-Z]+)\](?: ("(?:[^"\\]|\\.)*"))?(?: \(reply to (?:Turn (\d+)|an earlier message)\))?: ("(?:[^"\\]|\\.)*")$/;

describe("renderTurns: replies", () => {
  it("shows whom a reply answers by the answered turn's number", () => {
    const text = renderTurns(
      [
        { role: "user", content: "how do I pin a message?", author: "alice", id: "m1" },
        { role: "user", content: "   ", author: "x", id: "m2" },
        { role: "user", content: "which client?", author: "bob", id: "m3" },
        { role: "user", content: "right-click it", author: "carol", id: "m4", replyTo: "m1" },
        { role: "user", content: "web", author: "alice", id: "m5", replyTo: "m3" },
      ],
      false,
    );
    expect(text.split("\n")).toEqual([
      'Turn 1 [USER] "alice": "how do I pin a message?"',
      'Turn 2 [USER] "bob": "which client?"',
      'Turn 3 [USER] "carol" (reply to Turn 1): "right-click it"',
      'Turn 4 [USER] "alice" (reply to Turn 2): "web"',
    ]);
  });

  it("says 'an earlier message' when the answered one is not rendered before it in the window", () => {
    const text = renderTurns(
      [
        { role: "user", content: "as I said", author: "bob", id: "m9", replyTo: "m1" },
        { role: "user", content: "the answer", author: "ana", id: "m10", replyTo: "m11" },
        { role: "user", content: "question", author: "cy", id: "m11" },
        { role: "user", content: "(blank target)", author: "cy", id: "m12", replyTo: "m2" },
      ],
      false,
    );
    expect(text.split("\n")).toEqual([
      'Turn 1 [USER] "bob" (reply to an earlier message): "as I said"',
      'Turn 2 [USER] "ana" (reply to an earlier message): "the answer"',
      'Turn 3 [USER] "cy": "question"',
      'Turn 4 [USER] "cy" (reply to an earlier message): "(blank target)"',
    ]);
  });

  it("never writes an id into the prompt, and renders a turn without replies as before", () => {
    const text = renderTurns(
      [
        { role: "user", content: "hi", author: "a", id: "SECRET-ID-1" },
        { role: "user", content: "yo", author: "b", id: "SECRET-ID-2", replyTo: "SECRET-ID-1" },
      ],
      false,
    );
    expect(text).not.toContain("SECRET-ID");
    expect(renderTurns([{ role: "user", content: "hi", author: "a" }], false)).toBe(
      'Turn 1 [USER] "a": "hi"',
    );
  });

  it("keeps every turn one line that reads back, whatever the texts, authors and ids", () => {
    const turn = fc.record({
      author: fc.option(fc.string(), { nil: undefined }),
      content: fc.string({ minLength: 1 }).filter((t) => t.trim() !== ""),
      id: fc.constantFrom("a", "b", "c", "d\nTurn 9 [USER]: x"),
      replyTo: fc.option(fc.constantFrom("a", "b", "c", "zz", 'Turn 1"'), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(turn, { maxLength: 12 }), (drawn) => {
        const turns = drawn.map((t) => ({ role: "user", ...t }));
        const lines = renderTurns(turns, false)
          .split("\n")
          .filter((l) => l !== "");
        expect(lines).toHaveLength(turns.length);
        const seen = new Map<string, number>();
        lines.forEach((line, i) => {
          const match = LINE.exec(line);
          expect(match, line).not.toBeNull();
          const [, number, , author, answered, text] = match as RegExpExecArray;
          expect(Number(number)).toBe(i + 1);
          expect(JSON.parse(text)).toBe(turns[i].content.trim());
          if (turns[i].author) expect(JSON.parse(author)).toBe(turns[i].author);
          const target = turns[i].replyTo;
          const expected =
            target === undefined || target === turns[i].id ? undefined : seen.get(target);
          expect(answered === undefined ? undefined : Number(answered)).toBe(expected);
          if (!seen.has(turns[i].id)) seen.set(turns[i].id, i + 1);
        });
      }),
    );
  });
});

describe("Analyzer: replies reach the prompt", () => {
  it("renders an extraction turn's replyTo as the answered turn's number", async () => {
    const requests: PromptTurn[][] = [];
    const llm: LLM = {
      chatJSON: async (messages) => {
        requests.push([...messages]);
        return { candidates: [] };
      },
    };
    const turns: ExtractionTurn[] = [
      { role: "user", kind: "user", author: "alice", text: "router keeps dropping", id: "1" },
      { role: "user", kind: "user", author: "bob", text: "firmware?", id: "2", replyTo: "1" },
    ];
    await new Analyzer(llm, { route: "full" }).extract(turns);
    const prompt = requests[0].map((m) => m.content).join("\n");
    expect(prompt).toContain('Turn 2 [USER] "bob" (reply to Turn 1): "firmware?"');
  });
});
