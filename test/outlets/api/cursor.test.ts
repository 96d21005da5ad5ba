/** Cursors: what one scope issues decodes there and nowhere else; anything else is refused. */

import { ApiCursorError, cursorCodec } from "convoseg/api";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const isString = (p: unknown): p is string => typeof p === "string";
const scope = fc.record({
  route: fc.constantFrom("topics", "questions", "channels"),
  channel: fc.string({ maxLength: 20 }),
  filter: fc.constantFrom("", "answered", "unanswered"),
});

describe("cursorCodec", () => {
  it("decodes what it encoded, in the same scope, and refuses it in any other", () => {
    fc.assert(
      fc.property(scope, scope, fc.string({ maxLength: 200 }), (a, b, position) => {
        const codec = cursorCodec();
        const cursor = codec.encode(a, position);
        expect(codec.decode(a, cursor, isString)).toBe(position);
        const same = a.route === b.route && a.channel === b.channel && a.filter === b.filter;
        if (!same) expect(() => codec.decode(b, cursor, isString)).toThrow(ApiCursorError);
      }),
    );
  });

  it("refuses any string it did not issue, and any one-character edit of one it did", () => {
    fc.assert(
      fc.property(scope, fc.string({ maxLength: 300 }), fc.nat(), (s, junk, at) => {
        const codec = cursorCodec();
        expect(() => codec.decode(s, junk, isString)).toThrow(ApiCursorError);
        const cursor = codec.encode(s, "0123456789abcdef");
        const i = at % cursor.length;
        const edited = `${cursor.slice(0, i)}${cursor[i] === "A" ? "B" : "A"}${cursor.slice(i + 1)}`;
        expect(() => codec.decode(s, edited, isString)).toThrow(ApiCursorError);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses the tag's last character changed in its spare bits (decoding to the same bytes)", () => {
    const codec = cursorCodec();
    const s = { route: "topics", channel: "help", filter: "" };
    const cursor = codec.encode(s, "0123456789abcdef");
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(cursor.at(-1) as string);
    const twin = `${cursor.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(() => codec.decode(s, twin, isString)).toThrow(ApiCursorError);
  });
});
