import { InvalidModelOutputError, parseModelJSON } from "convoseg/extraction";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { replyBody, type ScanMeter } from "../../../lib/knowledge/extraction/parse.js";

describe("parseModelJSON", () => {
  it.each([
    ['{"candidates": []}', { candidates: [] }],
    ['```json\n{"candidates": [1]}\n```', { candidates: [1] }],
    ["```\n[1, 2]\n```", [1, 2]],
    ['<think>the user wants JSON\n{"no": 1}</think>\n{"yes": 2}', { yes: 2 }],
    ['  <THINK>x</THINK>```json\n{"a": "b"}```  ', { a: "b" }],
  ])("reads %j", (text, value) => {
    expect(parseModelJSON(text)).toEqual(value);
  });

  it.each([
    "",
    "   ",
    "<think>only thinking</think>",
    "Sure! Here it is: {",
    "```json\n{oops}\n```",
  ])("rejects %j with the raw text", (text) => {
    const error = (() => {
      try {
        parseModelJSON(text);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as InvalidModelOutputError).raw).toBe(text);
    expect((error as InvalidModelOutputError).code).toBe("EXTRACTION_INVALID_OUTPUT");
  });

  it("names the token limit a reply stopped at, and only then", () => {
    expect(() => parseModelJSON('{"topics": ["te', "maxTokens (8)")).toThrow(
      /^invalid model output: not JSON \(.*\); the reply stopped at maxTokens \(8\)$/,
    );
    expect(() => parseModelJSON("", "maxTokens (8)")).toThrow(
      "invalid model output: the reply is empty; the reply stopped at maxTokens (8)",
    );
    expect(() => parseModelJSON('{"topics": ["te')).toThrow(
      /^invalid model output: not JSON \([^;]*\)$/,
    );
    expect(parseModelJSON("{}", "maxTokens (8)")).toEqual({});
  });
});

/** The reader's earlier definition, by regexes: the reference on small inputs. */
function regexBody(text: string): string {
  const body = text.replace(/<think>[\s\S]*?<\/think>/gi, "").trim();
  const fenced = /^```[A-Za-z0-9_-]*\s*\n?([\s\S]*?)\n?```$/.exec(body);
  return fenced ? fenced[1].trim() : body;
}

describe("replyBody", () => {
  it("removes reasoning blocks and the fence exactly as the regexes did (property)", () => {
    const piece = fc.constantFrom(
      "<think>",
      "</think>",
      "<THINK>",
      "</Think>",
      "```",
      "json",
      "\n",
      " ",
      "{}",
      "<",
      "</",
      "x",
      "[1]",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        expect(replyBody(text)).toBe(regexBody(text));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ["an unclosed fence before 60,000 newlines", (n: number) => `\`\`\`json\n${"\n".repeat(n)}x`],
    ["60,000 unclosed reasoning blocks", (n: number) => "<think>".repeat(n / 7)],
    [
      "a reasoning block among 60,000 closes of other tags",
      (n: number) => `<think>${"</b>".repeat(n / 4)}`,
    ],
    ["60,000 openings of other tags", (n: number) => "<b>".repeat(n / 3)],
    [
      "fenced reasoning blocks, closed",
      (n: number) => `\`\`\`${"<think>a</think>".repeat(n / 16)}\`\`\``,
    ],
  ])("looks at each character a bounded number of times: %s", (_name, make) => {
    // Linear: a bounded number of looks per character, at any size (a quadratic scan of 60,000
    // characters makes thousands per character).
    for (const size of [6_000, 60_000]) {
      const text = make(size);
      const meter: ScanMeter = { steps: 0 };
      replyBody(text, meter);
      expect(meter.steps).toBeLessThanOrEqual(4 * text.length + 16);
    }
  });
});
