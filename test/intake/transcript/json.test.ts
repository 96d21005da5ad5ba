/** The line parser against `JSON.parse`, and where it deliberately differs. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  JsonObject,
  type JsonValue,
  MalformedLineError,
  parseJson,
} from "../../../lib/intake/transcript/json.js";

/** A parsed value as `JSON.parse` would give it. */
function plain(value: JsonValue): unknown {
  if (value instanceof JsonObject) {
    return Object.fromEntries([...value.fields].map(([key, field]) => [key, plain(field)]));
  }
  return Array.isArray(value) ? value.map(plain) : value;
}

const parsesLikeJsonParse = (text: string) => {
  let expected: unknown;
  try {
    expected = JSON.parse(text);
  } catch {
    expect(() => parseJson(text)).toThrow(MalformedLineError);
    return;
  }
  expect(plain(parseJson(text))).toEqual(expected);
};

describe("parseJson", () => {
  it("reads what JSON.stringify writes as JSON.parse does", () => {
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: "small" }), (value) => {
        parsesLikeJsonParse(JSON.stringify(value));
        parsesLikeJsonParse(JSON.stringify(value, null, 2));
      }),
    );
  });

  it("accepts and rejects what JSON.parse does, for broken JSON too", () => {
    const broken = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom("", "x", ",", "}", "]", '"', "\\", "0", "-", "."))
      .map(([text, at, insert]) => {
        const cut = at % (text.length + 1);
        return text.slice(0, cut) + insert + text.slice(cut + 1);
      });
    fc.assert(fc.property(broken, parsesLikeJsonParse), { numRuns: 500 });
    for (const text of [
      "01",
      "1.",
      ".5",
      "-",
      "1e",
      "+1",
      "tru",
      "nul",
      '"\\x"',
      '"a\tb"',
      "[1,]",
      "{,}",
    ]) {
      expect(() => parseJson(text), text).toThrow(MalformedLineError);
    }
  });

  it("records repeated keys, the last value winning", () => {
    const value = parseJson('{"a":1,"a":2,"b":3}');
    expect(value).toBeInstanceOf(JsonObject);
    const object = value as JsonObject;
    expect(object.fields.get("a")).toBe(2);
    expect([...object.repeatedKeys]).toEqual(["a"]);
  });

  it("keeps a __proto__ key as an ordinary member", () => {
    expect(plain(parseJson('{"__proto__":{"x":1}}'))).toEqual(JSON.parse('{"__proto__":{"x":1}}'));
  });

  it("refuses lone surrogate escapes, which JSON.parse accepts", () => {
    for (const text of ['"\\ud800"', '"\\udc00"', '"\\ud800\\u0041"', '"\\ud800x"']) {
      expect(() => parseJson(text), text).toThrow(MalformedLineError);
    }
    expect(parseJson('"\\ud83d\\ude00"')).toBe("😀");
  });

  it("bounds nesting at 128 levels", () => {
    expect(() => parseJson(`${"[".repeat(128)}${"]".repeat(128)}`)).not.toThrow();
    expect(() => parseJson("[".repeat(1_000_000))).toThrow(
      new MalformedLineError("recursion limit exceeded at column 129"),
    );
  });

  it("names the column of a syntax error", () => {
    expect(() => parseJson('{"a" 1}')).toThrow(new MalformedLineError("expected ':' at column 6"));
    expect(() => parseJson('{"a":1')).toThrow(
      new MalformedLineError("unexpected end of input at column 7"),
    );
    expect(() => parseJson("[1 2]")).toThrow(
      new MalformedLineError("expected ',' or ']' at column 4"),
    );
    expect(() => parseJson("{1:2}")).toThrow(
      new MalformedLineError("expected a string key at column 2"),
    );
  });
});
