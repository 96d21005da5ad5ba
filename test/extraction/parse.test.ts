import { describe, expect, it } from "vitest";
import { InvalidModelOutputError, parseModelJSON } from "../../lib/extraction/index.js";

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
