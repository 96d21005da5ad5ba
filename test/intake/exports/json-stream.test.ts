import { ExportFormatError } from "convoseg/exports";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type JsonPath, JsonScanner } from "../../../lib/intake/exports/json-stream.js";

const select = (path: JsonPath) =>
  path.length === 0
    ? "descend"
    : path[0] === "messages"
      ? path.length === 1
        ? "descend"
        : "capture"
      : path[0] === "head" && path.length === 1
        ? "capture"
        : "skip";

function scan(text: string, cuts: number[]): { path: JsonPath; value: unknown }[] {
  const scanner = new JsonScanner("doc.json", select);
  const out: { path: JsonPath; value: unknown }[] = [];
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    for (const v of scanner.push(text.slice(at, cut)))
      out.push({ path: v.path, value: JSON.parse(v.raw) });
    at = Math.max(at, cut);
  }
  for (const v of scanner.push(text.slice(at)))
    out.push({ path: v.path, value: JSON.parse(v.raw) });
  for (const v of scanner.end()) out.push({ path: v.path, value: JSON.parse(v.raw) });
  return out;
}

describe("the bounded JSON reader", () => {
  it("hands over exactly the selected values, however the text is cut into chunks", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.jsonValue(),
        fc.constantFrom(0, 1, 2),
        fc.array(fc.nat(), { maxLength: 12 }),
        (head, messages, other, indent, rawCuts) => {
          const text = JSON.stringify(
            { skipped: other, head, messages, after: other },
            null,
            indent,
          );
          const cuts = rawCuts.map((c) => c % (text.length + 1));
          const found = scan(text, cuts);
          // JSON.parse turns -0 into 0 on the way back, as it would for the whole file.
          expect(found).toEqual([
            { path: ["head"], value: JSON.parse(JSON.stringify(head)) },
            ...messages.map((m, i) => ({
              path: ["messages", i],
              value: JSON.parse(JSON.stringify(m)),
            })),
          ]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("finds the end of strings dense with backslashes and quotes, cut anywhere", () => {
    const dense = fc.string({
      unit: fc.constantFrom('"', "\\", "a", "}", "]", "é"),
      maxLength: 12,
    });
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(dense, dense, { maxKeys: 3 }), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (messages, rawCuts) => {
          const text = JSON.stringify({ skipped: messages, messages });
          const cuts = rawCuts.map((c) => c % (text.length + 1));
          expect(scan(text, cuts).map((v) => v.value)).toEqual(messages);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads strings with escapes and non-ASCII keys cut anywhere", () => {
    const text = '{"h\\u00e9ad": 1, "head": "a\\"b\\\\", "messages": [{"t": "é\\n\\"}"}, "]["]}';
    for (let cut = 0; cut <= text.length; cut++) {
      expect(scan(text, [cut]).map((v) => v.value)).toEqual(['a"b\\', { t: 'é\n"}' }, "]["]);
    }
  });

  it("refuses truncated and malformed documents with the path and character", () => {
    const scanner = new JsonScanner("doc.json", select);
    scanner.push('{"messages": [1, 2');
    expect(() => scanner.end()).toThrow(ExportFormatError);
    const bad = new JsonScanner("doc.json", select);
    expect(() => bad.push('{"messages": [1 2]}')).toThrow(
      expect.objectContaining({
        file: "doc.json",
        at: "messages[0] (character 17)",
        field: "document",
      }),
    );
    expect(() => new JsonScanner("doc.json", select).push('{"a" 1}')).toThrow(/expected ":"/);
    expect(() => new JsonScanner("doc.json", select).push("{} {}")).toThrow(/more data after/);
  });
});
