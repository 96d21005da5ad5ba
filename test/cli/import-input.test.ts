/**
 * `import` on bad files, each written here: what it refuses (binary data, text that is not
 * UTF-8, a file of only whitespace; exit 1, nothing read as text) and what it reports beside a
 * segmentation (a file that looks like JSONL read as plain text, with its first bad line; a
 * skipped byte order mark; bare CR line ends), in the table and in `--json`. Every case refused
 * here is refused before any table is opened, so this file needs no emulator; that nothing is
 * stored is checked against DynamoDB Local in import.test.ts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-import-input-"));
let files = 0;
/** A file holding `content` (text as UTF-8, or raw bytes). */
function file(content: string | Uint8Array): string {
  const path = join(dir, `input-${files++}`);
  writeFileSync(path, content);
  return path;
}
const cli = (args: string[], stdin: string | Uint8Array = "") =>
  runCli(["import", ...args, "--conversation", "c"], Date.UTC(2026, 11, 1), stdin);
const dryRun = async (path: string, ...flags: string[]) => {
  const table = await cli([path, "--dry-run", ...flags]);
  const json = await cli([path, "--dry-run", "--json", ...flags]);
  expect(table.code, table.stderr).toBe(0);
  expect(json.code, json.stderr).toBe(0);
  return { table: table.stdout, report: JSON.parse(json.stdout) as DryRunJson };
};

interface DryRunJson {
  formatDetected: string;
  segments: { byteStart: number; byteEnd: number; role: string | null }[];
  mergedSegments: number;
  input: {
    bytes: number;
    encoding: string;
    bom: string | null;
    lineEnds: { lf: number; crlf: number; bareCr: number };
    firstBareCrLine: number | null;
    fallback: { line: number | null; reason: string; badLines: number; lines: number } | null;
    warnings: string[];
  };
}

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const user = line({ role: "user", content: "The export job times out." });
const assistant = line({ role: "assistant", content: "Raise the pool size." });
const utf16le = (text: string, bom: boolean) =>
  Uint8Array.from([
    ...(bom ? [0xff, 0xfe] : []),
    ...[...text].flatMap((c) => [c.charCodeAt(0) & 0xff, c.charCodeAt(0) >> 8]),
  ]);

describe("import reports a file that looks like JSONL but is read as plain text", () => {
  it("names a truncated last line and the fallback, in the table and in --json", async () => {
    const path = file(`${user}${assistant}{"role":"user","content":"and the retr`);
    const { table, report } = await dryRun(path);

    expect(report.formatDetected).toBe("plain");
    expect(report.input.fallback).toEqual({
      line: 3,
      reason:
        "unexpected end of input at column 39 (the line ends before its JSON does: the file looks cut short)",
      badLines: 1,
      lines: 3,
    });
    const warning =
      "warning: read as plain text, not JSONL: line 3 of 3 is not a JSONL message: unexpected end of input at column 39 (the line ends before its JSON does: the file looks cut short); 1 bad line in all (--format jsonl lists every one)";
    expect(table.split("\n")[0]).toBe(warning);
    expect(table).toContain("format plain, 1 segment");
    expect(report.input.warnings).toEqual([warning.slice("warning: ".length)]);
  });

  it("names a line nested deeper than 128 levels", async () => {
    const deep = `{"role":"user","content":"x","meta":${"[".repeat(200)}${"]".repeat(200)}}\n`;
    const { report } = await dryRun(file(`${user}${deep}${assistant}`));
    expect(report.input.fallback).toMatchObject({ line: 2, badLines: 1, lines: 3 });
    expect(report.input.fallback?.reason).toBe(
      "recursion limit exceeded at column 164 (JSON nested deeper than 128 levels)",
    );
  });

  it("names a line that starts with a byte order mark (files joined together)", async () => {
    const { report } = await dryRun(file(`${user}\ufeff${assistant}`));
    expect(report.input.fallback?.line).toBe(2);
    expect(report.input.fallback?.reason).toBe(
      "expected value at column 1 (the line starts with a byte order mark, U+FEFF: files joined together?)",
    );
  });

  it("says when no line is a message", async () => {
    const { report } = await dryRun(file(line({ type: "summary", summary: "s" }).repeat(2)));
    expect(report.input.fallback).toEqual({
      line: null,
      reason:
        "no line is a message: none has a role (nor a message or payload with one); chat lines, such as {id, ts, user, text}, are read by `run --input`, not `import`",
      badLines: 0,
      lines: 2,
    });
  });

  it("says nothing of a plain transcript, a forced format, or a file read as JSONL", async () => {
    for (const [content, flags] of [
      ["User: hi\nAssistant: {not json}\n", []],
      [`${user}{"role":`, ["--format", "plain"]],
      [`${user}${assistant}`, []],
    ] as const) {
      const { table, report } = await dryRun(file(content), ...flags);
      expect(report.input.fallback).toBeNull();
      expect(report.input.warnings).toEqual([]);
      expect(table.startsWith("format ")).toBe(true);
    }
  });
});

describe("import --format jsonl lists every bad line", () => {
  it("names each line with its reason and what to do, and exits 1", async () => {
    const path = file(`${user}{"content":"x"}\n\n   \n${assistant}{"role":"user","content":"cut`);
    const run = await cli([path, "--format", "jsonl", "--dry-run"]);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      [
        "import: jsonl line 2: not a valid {role, content} object: missing field `role` (nothing was written)",
        "import: 3 of 6 lines are not JSONL:",
        "  line 2: missing field `role`",
        "  line 4: unexpected end of input at column 4 (a line of only whitespace is not blank in JSONL)",
        "  line 6: unexpected end of input at column 30 (the line ends before its JSON does: the file looks cut short)",
        "Fix or remove those lines, or import with --format auto (a file that is not JSONL is then read as plain text).",
        "",
      ].join("\n"),
    );
  });
});

describe("import reports a byte order mark and bare CR line ends", () => {
  it("skips a leading byte order mark, reads the file as JSONL, counts offsets in its bytes", async () => {
    const text = `${user}${assistant}`;
    const { table, report } = await dryRun(file(`\ufeff${text}`));

    expect(report.formatDetected).toBe("jsonl");
    expect(report.input).toMatchObject({ bom: "utf-8", encoding: "utf-8", bytes: text.length + 3 });
    expect(report.segments.map((s) => [s.byteStart, s.byteEnd])).toEqual([
      [3, 3 + user.length],
      [3 + user.length, 3 + text.length],
    ]);
    expect(table.split("\n")[0]).toBe(
      "warning: read as UTF-8, its UTF-8 byte order mark skipped (byte ranges count the file's bytes)",
    );
    // Forced JSONL reads it too: the mark is skipped before the segmenter sees the text.
    expect((await cli([file(`\ufeff${text}`), "--format", "jsonl", "--dry-run"])).code).toBe(0);
  });

  it("counts bare CR line ends and names the first one's line", async () => {
    const { table, report } = await dryRun(file("User: hi\nAssistant: yo\rUser: ok\r"));
    expect(report.input.lineEnds).toEqual({ lf: 1, crlf: 0, bareCr: 2 });
    expect(report.input.firstBareCrLine).toBe(2);
    expect(table.split("\n")[0]).toBe(
      "warning: 2 line ends are a bare CR (\\r without \\n), the first on line 2: only \\n ends a line here, so those lines run together; convert them first (tr '\\r' '\\n')",
    );
  });

  it("adds the bare CRs to the reason of a JSONL file that falls back because of them", async () => {
    const { report } = await dryRun(file(`${user.trimEnd()}\r${assistant.trimEnd()}\r`));
    expect(report.input.warnings).toHaveLength(2);
    expect(report.input.fallback?.reason).toBe(
      "trailing characters at column 55 (the line holds bare CRs: lines that end in \\r alone run together)",
    );
  });
});

describe("import refuses what is not UTF-8 text", () => {
  const elf = Uint8Array.from([
    0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x3e, 0x00, 0x01, 0x00, 0x00, 0x00,
  ]);

  it.each([
    [
      "an ELF executable",
      elf,
      "is not text: an ELF executable (it starts with the bytes 7F 45 4C 46); nothing was written.\nImport a transcript: plain text or JSONL, in UTF-8.",
    ],
    [
      "a file with a NUL byte",
      Uint8Array.from([...Buffer.from("User: hi\nAssistant: "), 0, 0x41, 0x0a]),
      "is not text: binary data: a NUL byte at byte 20 (line 2), which no transcript holds; nothing was written.",
    ],
    [
      "UTF-16 with a byte order mark",
      utf16le("User: hi\n", true),
      "is not UTF-8: UTF-16LE text (it starts with the byte order mark FF FE); nothing was written.\nIf it is UTF-16LE text, pass --encoding utf-16le, or convert it first: iconv -f UTF-16LE -t UTF-8 FILE > FILE.utf8",
    ],
    [
      "UTF-16 without a byte order mark",
      utf16le("User: hi\nAssistant: yo\n", false),
      "is not UTF-8: UTF-16LE text without a byte order mark (NUL bytes at odd offsets, beside ASCII); nothing was written.\nIf it is UTF-16LE text, pass --encoding utf-16le",
    ],
    [
      "Latin-1 text",
      Uint8Array.from([...Buffer.from("User: caf"), 0xe9, ...Buffer.from(" au lait\n")]),
      "is not UTF-8: the byte E9 at byte 9 (line 1) starts no UTF-8 character; it looks like Latin-1 text; nothing was written.\nIf it is Latin-1 text, pass --encoding latin1, or convert it first: iconv -f LATIN1 -t UTF-8 FILE > FILE.utf8",
    ],
  ])("refuses %s, naming what was found, and exits 1", async (_what, content, message) => {
    const path = file(content);
    for (const flags of [["--dry-run"], ["--dry-run", "--json"], []]) {
      const run = await cli([path, ...flags]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`import: ${path} ${message}`);
    }
  });

  it("refuses binary data on standard input too", async () => {
    const run = await cli(["-", "--dry-run"], elf);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^import: standard input is not text: an ELF executable/);
  });

  it("reads them with --encoding, counting offsets in the file's bytes", async () => {
    const utf16 = await dryRun(
      file(utf16le("User: hi\nAssistant: yo\n", true)),
      "--encoding",
      "utf-16le",
    );
    expect(utf16.report.input).toMatchObject({ encoding: "utf-16le", bom: "utf-16le", bytes: 48 });
    expect(utf16.report.segments.map((s) => [s.role, s.byteStart, s.byteEnd])).toEqual([
      ["User", 2, 20],
      ["Assistant", 20, 48],
    ]);
    expect(utf16.table.split("\n")[0]).toBe(
      "warning: decoded from utf-16le, its UTF-16LE byte order mark skipped (byte ranges count the file's bytes)",
    );
    const latin1 = Uint8Array.from([...Buffer.from("User: caf"), 0xe9, 0x0a]);
    const { report } = await dryRun(file(latin1), "--encoding", "LATIN1");
    expect(report.input.encoding).toBe("latin1");
    expect(report.segments.at(-1)?.byteEnd).toBe(latin1.length);
  });

  it("still refuses an ELF executable with --encoding, and bytes that are not in it", async () => {
    const run = await cli([file(elf), "--dry-run", "--encoding", "latin1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("is not text: an ELF executable");
    const odd = await cli([file(Uint8Array.from([0x41, 0, 0x42])), "--encoding", "utf-16le"]);
    expect(odd.code).toBe(1);
    expect(odd.stderr).toContain(
      "cannot be read as utf-16le: an odd number of bytes (3), which utf-16le text never has; nothing was written.\nCheck --encoding utf-16le",
    );
  });

  it("rejects an unknown --encoding as a usage error", async () => {
    const run = await cli([file(user), "--encoding", "ebcdic"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--encoding must be one of utf-8, utf-16le, utf-16be, latin1, windows-1252 \(got "ebcdic"\)/,
    );
  });
});

describe("import of a file with nothing in it", () => {
  it.each([
    ["an empty file", "", "it is empty"],
    ["a whitespace-only file", "  \n\t\n\r\n", "only whitespace (7 bytes)"],
    ["a byte order mark and blank lines", "\ufeff\n\n", "only whitespace (5 bytes)"],
  ])("imports nothing from %s, says so, and exits 1", async (_what, content, why) => {
    const path = file(content);
    for (const flags of [["--dry-run"], []]) {
      const run = await cli([path, ...flags]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe(
        `import: ${path} holds no transcript: ${why}; nothing to import, nothing was written\n`,
      );
    }
  });
});

describe("import --dry-run --json", () => {
  it("keeps the segmentation's fields and adds `input`", async () => {
    const { report } = await dryRun("examples/agent-session.txt");
    expect(Object.keys(report)).toEqual(["formatDetected", "segments", "mergedSegments", "input"]);
    expect(Object.keys(report.input)).toEqual([
      "bytes",
      "encoding",
      "bom",
      "lineEnds",
      "firstBareCrLine",
      "fallback",
      "warnings",
    ]);
    expect(report.input).toMatchObject({
      encoding: "utf-8",
      bom: null,
      lineEnds: { crlf: 0, bareCr: 0 },
      firstBareCrLine: null,
      fallback: null,
      warnings: [],
    });
    expect(report.segments.at(-1)?.byteEnd).toBe(report.input.bytes);
  });
});
