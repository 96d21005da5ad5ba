/**
 * The chunker tests of the original's `chunk_tests.rs` that apply to the modes segmentation uses
 * (paragraph boundary and hard splits, no overlap): 10 of its 12. The sentence-boundary and
 * overlap tests are left out because neither mode is ported.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ByteRange,
  hardSplit,
  paragraphChunks,
} from "../../../lib/intake/transcript/chunk.js";
import { utf8 } from "./support.js";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The chunks of `text` under a `max`-byte ceiling, as text. */
function chunks(text: string, max: number): string[] {
  const bytes = utf8(text);
  return paragraphChunks(bytes, 0, bytes.length, max).map(({ start, end }) =>
    decoder.decode(bytes.subarray(start, end)),
  );
}

function hardChunks(text: string, max: number): string[] {
  const bytes = utf8(text);
  const out: ByteRange[] = [];
  hardSplit(bytes, 0, bytes.length, max, out);
  return out.map(({ start, end }) => decoder.decode(bytes.subarray(start, end)));
}

describe("paragraphChunks and hardSplit: the original's chunker tests", () => {
  it("1. gives no chunks for empty input", () => {
    expect(chunks("", 2048)).toEqual([]);
  });

  it("2. gives one whole chunk under the ceiling", () => {
    const bytes = utf8("short enough");
    expect(paragraphChunks(bytes, 0, bytes.length, 2048)).toEqual([{ start: 0, end: 12 }]);
  });

  it("3. partitions the input without overlap", () => {
    const text =
      "First paragraph about deploys.\n\nSecond paragraph about tests.\n\nThird paragraph about releases.";
    const bytes = utf8(text);
    const ranges = paragraphChunks(bytes, 0, bytes.length, 40);
    expect(ranges.length).toBeGreaterThan(1);
    expect(chunks(text, 40).join("")).toBe(text);
    ranges.slice(1).forEach((range, i) => {
      expect(range.start).toBe(ranges[i].end);
    });
  });

  it("4. prefers paragraph boundaries, cutting after the whole blank-line run", () => {
    expect(chunks("Alpha paragraph line.\n\nBeta paragraph line.", 25)).toEqual([
      "Alpha paragraph line.\n\n",
      "Beta paragraph line.",
    ]);
    expect(chunks("Alpha.\n\n\n\nBeta gamma.", 11)).toEqual(["Alpha.\n\n\n\n", "Beta gamma."]);
  });

  it("5. never cuts inside a multibyte character", () => {
    const text = "五".repeat(40);
    const pieces = hardChunks(text, 10);
    expect(pieces.join("")).toBe(text);
    for (const piece of pieces) {
      expect([...piece].every((c) => c === "五")).toBe(true);
      expect(utf8(piece).length).toBeLessThanOrEqual(10);
    }
  });

  it("6. keeps code fences atomic, an oversized one as one chunk", () => {
    const fence =
      "```rust\nlet very_long_binding_name = compute_everything_at_once(1, 2, 3);\n```\n";
    const text = `Intro prose before the code.\n\n${fence}\nOutro prose after the code.`;
    const found = chunks(text, 30);
    expect(found).toContain(fence);
    expect(found.join("")).toBe(text);
  });

  it("7. does not take inline or indented-in-prose backticks for a fence", () => {
    const text = `Use \`\`\`inline\`\`\` here ${"x".repeat(40)}`;
    const found = chunks(text, 16);
    expect(found.length).toBeGreaterThan(1);
    expect(found.every((chunk) => utf8(chunk).length <= 16)).toBe(true);
    expect(found.join("")).toBe(text);
  });

  it("8. hard-splits an oversized paragraph", () => {
    const found = chunks("x".repeat(100), 30);
    expect(found.map((c) => c.length)).toEqual([30, 30, 30, 10]);
  });

  it("9. advances past a character a tiny ceiling cannot hold, never cutting it", () => {
    const text = "😀😀😀";
    const found = hardChunks(text, 2);
    expect(found).toEqual(["😀", "😀", "😀"]);
    expect(chunks(text, 2)).toEqual(["😀", "😀", "😀"]);
  });

  it("10. is deterministic", () => {
    const text = "Alpha.\n\nBeta gamma delta. Epsilon!\n\n```code\nblock\n```\nZeta.";
    expect(chunks(text, 16)).toEqual(chunks(text, 16));
  });
});

describe("paragraphChunks: packing", () => {
  it("starts a fresh chunk after a hard-split paragraph", () => {
    expect(chunks(`${"a".repeat(25)}\n\nb\n\nc`, 10)).toEqual([
      "aaaaaaaaaa",
      "aaaaaaaaaa",
      "aaaaa\n\n",
      "b\n\nc",
    ]);
  });

  it("does not cut at CRLF blank lines", () => {
    expect(chunks("aaaa\r\n\r\nbbbb", 6)).toEqual(["aaaa\r\n", "\r\nbbbb"]);
  });

  it("partitions any text, each chunk within the ceiling unless a fence or one wider character", () => {
    const piece = fc.constantFrom("a", "é", "😀", "\n", "\n\n", "```\n", " ```x\n", "word ");
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 60 }),
        fc.integer({ min: 1, max: 24 }),
        (parts, max) => {
          const text = parts.join("");
          const bytes = utf8(text);
          const ranges = paragraphChunks(bytes, 0, bytes.length, max);
          let cursor = 0;
          for (const { start, end } of ranges) {
            expect(start).toBe(cursor);
            expect(end).toBeGreaterThan(start);
            const chunk = decoder.decode(bytes.subarray(start, end));
            const fenceOrOneCharacter =
              chunk.trimStart().startsWith("```") || [...chunk].length === 1;
            if (end - start > max) expect(fenceOrOneCharacter).toBe(true);
            cursor = end;
          }
          expect(cursor).toBe(bytes.length);
          expect(chunks(text, max).join("")).toBe(text);
        },
      ),
    );
  });
});
