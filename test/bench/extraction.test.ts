/**
 * The measuring functions of the extraction benchmark: the prompt prefix a provider could serve
 * from its cache, the tokens counted line by line, the messages the windows show and the reply
 * links they keep.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  commonPrefixLength,
  lineWiseCounter,
  linksKept,
  messagesShown,
  nearLinksKept,
  type Place,
  promptTokens,
} from "../../bench/extraction.js";

const at = (segment: number, position: number): Place => ({ segment, position });
/** One token per character, so that expected counts can be read off the strings. */
const characters = (text: string) => text.length;

describe("commonPrefixLength", () => {
  it("is the length of the shared start, the whole of a prompt that the other extends", () => {
    expect(commonPrefixLength("instructions\nturn 1", "instructions\nturn 2")).toBe(18);
    expect(commonPrefixLength("head\nturn 1", "head\nturn 1\nturn 2")).toBe(11);
    expect(commonPrefixLength("abc", "xyz")).toBe(0);
    expect(commonPrefixLength("", "abc")).toBe(0);
  });

  it("never ends inside a surrogate pair", () => {
    // 😀 and 😃 share their high surrogate: a prefix ending there would be a lone surrogate.
    expect(commonPrefixLength("a😀", "a😃")).toBe(1);
    expect(commonPrefixLength("a😀b", "a😀c")).toBe(3);
  });
});

describe("promptTokens", () => {
  it("counts as repeated the start each prompt shares with the previous one of its segment", () => {
    const tokens = promptTokens([["HEAD one", "HEAD one two", "HEAD three"]], characters);
    expect(tokens).toEqual({ input: 8 + 12 + 10, repeated: 8 + 5 });
  });

  it("repeats nothing across segments, nor in a segment's first prompt", () => {
    expect(promptTokens([["HEAD one"], ["HEAD one"]], characters)).toEqual({
      input: 16,
      repeated: 0,
    });
  });
});

describe("lineWiseCounter", () => {
  it("counts exactly what the tokenizer counts for the whole text", () => {
    const prompt = [
      'Answer with a JSON object {"candidates": [...]}, each candidate with these fields:',
      "=== EXCERPT START ===",
      "Turn 1 [USER]: nick: ok?",
      "Turn 2 [USER]: other:   trailing spaces   ",
      "Turn 3 [USER]: 12345 numbers 2024-11-15 and ... dots",
      "Turn 4 [USER]: ünïcödé and 😀 emoji",
      "Turn 5 [USER]: code:\n    indented\n42\n\n\tTabbed",
      "=== EXCERPT END ===",
      "Return ONLY valid JSON, no other text.",
    ].join("\n");
    expect(lineWiseCounter(countTokens)(prompt)).toBe(countTokens(prompt));
  });

  it("asks the tokenizer once per distinct line", () => {
    const seen: string[] = [];
    const count = lineWiseCounter((text) => {
      seen.push(text);
      return text.length;
    });
    expect(count("head\nTurn 1\n")).toBe(12);
    expect(count("head\nTurn 1\nTurn 2")).toBe(18);
    expect(seen).toEqual(["head\n", "Turn 1\n", "Turn 2"]);
  });
});

describe("linksKept", () => {
  // Two windows of one segment overlapping at position 4, as a sliding route cuts them.
  const windows = [
    [
      { start: 0, end: 5 },
      { start: 4, end: 9 },
    ],
    [{ start: 0, end: 3 }],
  ];

  it("keeps a link whose two messages are in one window, the overlap included", () => {
    const inside = [at(0, 3), at(0, 1)] as const;
    const inOverlap = [at(0, 4), at(0, 8)] as const;
    expect(linksKept([inside, inOverlap], windows)).toEqual({ kept: 2, acrossSegments: 0 });
  });

  it("loses a link that only spans two windows, and one across segments", () => {
    const acrossWindows = [at(0, 6), at(0, 2)] as const;
    const acrossSegments = [at(1, 0), at(0, 8)] as const;
    expect(linksKept([acrossWindows, acrossSegments], windows)).toEqual({
      kept: 0,
      acrossSegments: 1,
    });
  });

  it("loses a link to a message no window shows", () => {
    expect(linksKept([[at(0, 1), at(0, 0)]], [[{ start: 1, end: 3 }]])).toEqual({
      kept: 0,
      acrossSegments: 0,
    });
  });
});

describe("messagesShown", () => {
  it("counts each message once however many windows show it, and no message none shows", () => {
    const prefixWindows = [
      { start: 0, end: 5 },
      { start: 0, end: 10 },
    ];
    // The last two windows of a 12-message segment: messages 0 to 4 are not shown.
    const lastWindows = [
      { start: 5, end: 10 },
      { start: 10, end: 12 },
    ];
    expect(messagesShown([prefixWindows, lastWindows, []])).toBe(10 + 7);
  });
});

describe("nearLinksKept", () => {
  it("counts only links fewer than windowSize apart in one segment, and those in one window", () => {
    const windows = [
      [
        { start: 0, end: 5 },
        { start: 4, end: 9 },
      ],
      [{ start: 0, end: 3 }],
    ];
    const links = [
      [at(0, 3), at(0, 1)], // near, kept
      [at(0, 6), at(0, 2)], // near (4 apart), severed
      [at(0, 8), at(0, 1)], // 7 apart: not near at windowSize 5
      [at(0, 2), at(0, 2)], // a line linked to itself: no reply
      [at(1, 0), at(0, 0)], // across segments
    ] as const;
    expect(nearLinksKept(links, windows, 5)).toEqual({ near: 2, kept: 1 });
  });
});
