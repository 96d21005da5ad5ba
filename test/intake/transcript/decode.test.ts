/**
 * From a file's bytes to text: what is refused (binary data, other encodings, bytes that are no
 * text in the named encoding), what is skipped (a leading byte order mark) and counted (line
 * ends, bare CRs), and byte ranges counted back in the file's bytes.
 */

import {
  decodeTranscript,
  inFileBytes,
  segmentTranscript,
  type TranscriptEncoding,
  TranscriptEncodingError,
} from "convoseg/transcript";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { thrown, utf8 } from "./support.js";

const bytes = (...values: (number | string)[]): Uint8Array =>
  Uint8Array.from(
    values.flatMap((value) => (typeof value === "number" ? [value] : [...utf8(value)])),
  );
const utf16 = (text: string, order: "le" | "be", bom = false): Uint8Array => {
  const out: number[] = bom ? (order === "le" ? [0xff, 0xfe] : [0xfe, 0xff]) : [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    out.push(...(order === "le" ? [unit & 0xff, unit >> 8] : [unit >> 8, unit & 0xff]));
  }
  return Uint8Array.from(out);
};
const refusal = (input: Uint8Array, encoding?: TranscriptEncoding) => {
  const error = thrown(() => decodeTranscript(input, encoding));
  expect(error).toBeInstanceOf(TranscriptEncodingError);
  return error as TranscriptEncodingError;
};
const jsonl = '{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n';

describe("decodeTranscript: what it refuses", () => {
  it.each([
    ["an ELF executable", [0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]],
    ["a PNG image", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00]],
    ["a gzip archive", [0x1f, 0x8b, 0x08, 0x00]],
    ["a ZIP archive", [0x50, 0x4b, 0x03, 0x04, 0x14]],
    ["a PDF document", [...utf8("%PDF-1.7\n")]],
  ])("refuses %s by its magic number, even with an encoding named", (what, head) => {
    for (const encoding of [undefined, "latin1"] as const) {
      const error = refusal(Uint8Array.from([...head, ...utf8("User: hi\n")]), encoding);
      expect(error).toMatchObject({ found: what, binary: true, offset: 0 });
      expect(error.message).toContain(what);
      expect(error.code).toBe("TRANSCRIPT_NOT_TEXT");
      expect(error.name).toBe("TranscriptEncodingError");
    }
  });

  it("refuses a NUL byte as binary data, naming its byte and line", () => {
    const error = refusal(bytes("User: hi\nAssistant: ", 0x00, "x\n"));
    expect(error).toMatchObject({ found: "binary data", binary: true, offset: 20, line: 2 });
    expect(error.message).toBe(
      "binary data: a NUL byte at byte 20 (line 2), which no transcript holds",
    );
    // Decoded from a named encoding, a NUL character is refused too, at its file byte.
    expect(refusal(bytes("ab", 0x00), "latin1")).toMatchObject({ offset: 2, line: 1 });
    expect(refusal(utf16("a\nb\u0000", "le", true), "utf-16le")).toMatchObject({
      offset: 8,
      line: 2,
    });
  });

  it("refuses UTF-16 with a byte order mark, suggesting its encoding", () => {
    expect(refusal(utf16("User: hi\n", "le", true))).toMatchObject({
      found: "UTF-16LE text",
      suggested: "utf-16le",
      binary: false,
    });
    expect(refusal(utf16("User: hi\n", "be", true))).toMatchObject({
      found: "UTF-16BE text",
      suggested: "utf-16be",
    });
    expect(refusal(Uint8Array.from([0xff, 0xfe, 0, 0, 0x41, 0, 0, 0]))).toMatchObject({
      found: "UTF-32LE text",
    });
  });

  it("refuses UTF-16 without a byte order mark by its NUL bytes beside ASCII", () => {
    expect(refusal(utf16("User: hi\nAssistant: yo\n", "le"))).toMatchObject({
      found: "UTF-16LE text without a byte order mark",
      suggested: "utf-16le",
    });
    expect(refusal(utf16("User: hi\nAssistant: yo\n", "be"))).toMatchObject({
      found: "UTF-16BE text without a byte order mark",
      suggested: "utf-16be",
    });
  });

  it("refuses Latin-1 and Windows-1252 text at its first byte that is no UTF-8", () => {
    expect(refusal(bytes("User: caf", 0xe9, "\n"))).toMatchObject({
      found: "Latin-1 text",
      suggested: "latin1",
      offset: 9,
      line: 1,
    });
    // A byte 0x80 to 0x9F (a C1 control in Latin-1) is a Windows-1252 character: €, curly quotes.
    expect(refusal(bytes("User: ", 0x93, "hi", 0x94, " ", 0x80, "5\n"))).toMatchObject({
      found: "Windows-1252 text",
      suggested: "windows-1252",
      offset: 6,
    });
  });

  it("tells a damaged UTF-8 file and one cut inside a character from Latin-1", () => {
    expect(refusal(bytes("é\nx", 0xff, "\n"))).toMatchObject({ found: "invalid UTF-8", line: 2 });
    expect(refusal(bytes("User: café", 0xc3))).toMatchObject({
      found: "a truncated UTF-8 character",
      offset: 11,
    });
    // With no UTF-8 before it, a lead byte at the end is more likely Latin-1 than a cut.
    expect(refusal(bytes("User: caf", 0xe9))).toMatchObject({ found: "Latin-1 text", offset: 9 });
    // Overlong forms, surrogates and code points above U+10FFFF are no UTF-8.
    for (const bad of [
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
    ]) {
      expect(refusal(bytes("a", ...bad, "b"))).toMatchObject({ offset: 1, binary: false });
    }
  });

  it("refuses control bytes that are no UTF-8 as binary data", () => {
    const noise = bytes(...Array.from({ length: 64 }, (_, i) => [0x01, 0x02, 0xfe, i]).flat());
    expect(refusal(noise)).toMatchObject({ found: "binary data", binary: true });
  });

  it("refuses bytes that are no text in the named encoding", () => {
    expect(refusal(Uint8Array.from([0x41, 0x00, 0x42]), "utf-16le")).toMatchObject({
      found: "not utf-16le text",
    });
    expect(refusal(utf16("a\ud800b", "le"), "utf-16le")).toMatchObject({ offset: 2 });
    expect(refusal(utf16("a", "be", true), "utf-16le")).toMatchObject({
      found: "UTF-16BE text",
      suggested: "utf-16be",
    });
    expect(refusal(bytes("caf", 0xe9), "utf-8")).toMatchObject({ found: "Latin-1 text" });
  });
});

describe("decodeTranscript: what it reads", () => {
  it("reads UTF-8, skipping a leading byte order mark and reporting it", () => {
    expect(decodeTranscript(utf8(jsonl))).toMatchObject({ text: jsonl, bom: null, bytes: 67 });
    const withBom = decodeTranscript(bytes(0xef, 0xbb, 0xbf, jsonl));
    expect(withBom).toMatchObject({ text: jsonl, encoding: "utf-8", bom: "utf-8", bytes: 70 });
    // Only the leading one: a byte order mark inside the text is text.
    expect(decodeTranscript(bytes("a\n", 0xef, 0xbb, 0xbf, "b")).text).toBe("a\n\ufeffb");
  });

  it("decodes a named encoding, skipping its byte order mark", () => {
    const text = "User: café 😀\n";
    expect(decodeTranscript(utf16(text, "le", true), "utf-16le")).toMatchObject({
      text,
      bom: "utf-16le",
    });
    expect(decodeTranscript(utf16(text, "be"), "utf-16be")).toMatchObject({ text, bom: null });
    expect(decodeTranscript(bytes("caf", 0xe9, " ", 0x80), "latin1").text).toBe("café \u0080");
    expect(decodeTranscript(bytes("caf", 0xe9, " ", 0x80, 0x93, 0x81), "windows-1252").text).toBe(
      "café €\u201c\u0081",
    );
  });

  it("counts line ends: LF, CRLF and runs of bare CR, with the first bare CR's line", () => {
    expect(decodeTranscript(utf8("a\nb\r\nc\rd\r\r\ne\r\r"))).toMatchObject({
      lineEnds: { lf: 1, crlf: 2, bareCr: 2 },
      firstBareCrLine: 3,
    });
    expect(decodeTranscript(utf8("a\nb\n"))).toMatchObject({
      lineEnds: { lf: 2, crlf: 0, bareCr: 0 },
      firstBareCrLine: null,
    });
  });

  it("reads an empty file as empty text", () => {
    expect(decodeTranscript(new Uint8Array())).toMatchObject({ text: "", bytes: 0 });
  });
});

describe("inFileBytes", () => {
  it("counts ranges after a skipped UTF-8 byte order mark", () => {
    const decoded = decodeTranscript(bytes(0xef, 0xbb, 0xbf, jsonl));
    const outcome = inFileBytes(segmentTranscript(decoded.text), decoded);
    expect(outcome.formatDetected).toBe("jsonl");
    expect(outcome.segments.map((s) => [s.byteStart, s.byteEnd])).toEqual([
      [3, 34],
      [34, 70],
    ]);
  });

  it("leaves a UTF-8 file without a byte order mark as it is", () => {
    const decoded = decodeTranscript(utf8(jsonl));
    const outcome = segmentTranscript(decoded.text);
    expect(inFileBytes(outcome, decoded)).toBe(outcome);
  });

  it("counts ranges through the encoding: the last range ends at the file's size", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 40 });
    const lines = fc.array(
      fc.tuple(fc.constantFrom("User: ", "Assistant: ", ""), text).map(([m, t]) => `${m}${t}\n`),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(lines, fc.boolean(), (parts, bom) => {
        const source = parts.join("");
        if (source.includes("\u0000")) return;
        for (const [encoding, file] of [
          ["utf-16le", utf16(source, "le", bom)],
          ["utf-16be", utf16(source, "be", bom)],
        ] as const) {
          let decoded: ReturnType<typeof decodeTranscript>;
          try {
            decoded = decodeTranscript(file, encoding);
          } catch (error) {
            // Without a byte order mark, text may begin with a binary format's signature
            // (U+1F8B in UTF-16BE is gzip's 1F 8B): refused as that format, by design.
            const signature =
              error instanceof TranscriptEncodingError && error.binary && error.offset === 0;
            if (!bom && signature) continue;
            throw error;
          }
          const outcome = inFileBytes(
            segmentTranscript(decoded.text, { minSegmentBytes: 0 }),
            decoded,
          );
          expect(outcome.segments[0].byteStart).toBe(bom ? 2 : 0);
          expect(outcome.segments.at(-1)?.byteEnd).toBe(file.length);
          for (const segment of outcome.segments) {
            // Each range, decoded from the file, is the segment's text.
            const slice = file.subarray(segment.byteStart, segment.byteEnd);
            expect(new TextDecoder(encoding, { ignoreBOM: true }).decode(slice)).toBe(
              segment.content,
            );
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("counts one byte per character for latin1 and windows-1252", () => {
    const file = bytes("User: caf", 0xe9, "\nAssistant: ", 0x80, "5\n");
    for (const encoding of ["latin1", "windows-1252"] as const) {
      const decoded = decodeTranscript(file, encoding);
      const outcome = inFileBytes(segmentTranscript(decoded.text, { minSegmentBytes: 0 }), decoded);
      expect(outcome.segments.map((s) => [s.byteStart, s.byteEnd])).toEqual([
        [0, 11],
        [11, file.length],
      ]);
    }
  });
});
