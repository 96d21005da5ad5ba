import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { reportCommand } from "../../../cli/report/report.js";
import { ALL_MESSAGES, CANDIDATES, NOW, SEGMENTS } from "./fixtures.js";
import { runCommand, tempDir, writeJsonLines } from "./support.js";

const dir = tempDir();
const report = (args: string[]) => runCommand(reportCommand, args, NOW);

describe("report command", () => {
  it("writes report.html from segments alone, saying what it holds", async () => {
    const segments = writeJsonLines(join(dir, "alone.jsonl"), SEGMENTS);
    const out = join(dir, "alone.html");
    const { code, stderr } = await report(["--segments", segments, "--out", out]);
    expect(stderr).toBe(`report: wrote ${out} (0.2 MB): 2 channels, 5 segments\n`);
    expect(code).toBe(0);
    expect(readFileSync(out, "utf8")).toMatch(/^<!doctype html>/);
  });

  it("writes into the workspace folder by default, never the current directory", async () => {
    const segments = writeJsonLines(join(dir, "default.jsonl"), SEGMENTS);
    const here = tempDir();
    const cwd = process.cwd();
    process.chdir(here);
    try {
      const { code, stderr } = await report(["--segments", segments]);
      expect(code).toBe(0);
      expect(stderr).toMatch(/^report: wrote \.convoseg\/report\.html /);
      expect(readFileSync(join(here, ".convoseg", "report.html"), "utf8")).toMatch(/^<!doctype/);
      expect(existsSync(join(here, "report.html"))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it("names the file, line and field of each bad line, and writes nothing", async () => {
    const segments = writeJsonLines(join(dir, "bad-segments.jsonl"), [
      SEGMENTS[0],
      "{not json",
      { ...SEGMENTS[1], messageIds: ["h04"] },
      "",
      SEGMENTS[0],
      { ...SEGMENTS[1], count: 9 },
    ]);
    const candidates = writeJsonLines(join(dir, "bad-candidates.jsonl"), [
      { ...CANDIDATES[0], usage: { calls: "two" } },
    ]);
    const input = writeJsonLines(join(dir, "bad-input.jsonl"), [...ALL_MESSAGES, { id: "x" }]);
    const out = join(dir, "bad.html");
    const args = [
      "--segments",
      segments,
      "--candidates",
      candidates,
      "--input",
      input,
      "--out",
      out,
    ];
    const { code, stderr } = await report(args);
    expect(stderr.split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^${segments}: line 2: json: not valid JSON`)),
      `${segments}: line 3: messageIds[0]: "h04" is also in the segment on line 1`,
      `${segments}: line 5: segmentId: repeats line 1`,
      `${segments}: line 6: count: 9 but messageIds has 4`,
      `${candidates}: line 1: usage.calls: expected a count (got "two")`,
      expect.stringMatching(new RegExp(`^${input}: line ${ALL_MESSAGES.length + 1}: ts: `)),
      "report: 6 invalid lines; no report was written (fix them, or pass --skip-invalid)",
      "",
    ]);
    expect(code).toBe(1);
    expect(existsSync(out)).toBe(false);
    const skipped = await report([...args, "--skip-invalid"]);
    expect(skipped.stderr).toContain(`skipped ${segments}: line 2: json`);
    expect(skipped.stderr).toContain("2 channels, 1 segment");
    expect(skipped.code).toBe(0);
  });

  it("says cleanly that a file cannot be read, or the page cannot be written (its folder checked first)", async () => {
    const missing = join(dir, "missing.jsonl");
    const unread = await report(["--segments", missing]);
    expect(unread.stderr).toMatch(new RegExp(`^report: cannot read ${missing}: ENOENT`));
    expect(unread.code).toBe(1);
    const out = join(dir, "no-such-dir", "report.html");
    const segments = writeJsonLines(join(dir, "unwritten.jsonl"), SEGMENTS);
    const unwritten = await report(["--segments", segments, "--out", out]);
    expect(unwritten.stderr).toMatch(
      new RegExp(
        `^report: --out ${out}: there is no folder ${join(dir, "no-such-dir")} to write it in`,
      ),
    );
    expect(unwritten.code).toBe(2);
    // A folder where the page would go: it cannot be written over.
    const onto = await report(["--segments", segments, "--out", dir]);
    expect(onto.stderr).toMatch(new RegExp(`^report: cannot write ${dir}: EISDIR`));
    expect(onto.code).toBe(1);
  });

  describe("--open", () => {
    const segments = () => writeJsonLines(join(dir, "open.jsonl"), SEGMENTS);
    const script = (name: string, body: string) => {
      const path = join(dir, name);
      writeFileSync(path, `#!/bin/sh\n${body}\n`);
      chmodSync(path, 0o755);
      return path;
    };

    it("opens the written page with $BROWSER", async () => {
      const seen = join(dir, "browser-args.txt");
      vi.stubEnv("BROWSER", script("browser.sh", `printf '%s' "$1" > '${seen}'`));
      const out = join(dir, "opened.html");
      const { code, stderr } = await report(["--segments", segments(), "--out", out, "--open"]);
      expect(code).toBe(0);
      expect(stderr).toMatch(
        /^report: wrote .*\nreport: opened it in the browser \(\S+browser\.sh\)\n$/,
      );
      expect(readFileSync(seen, "utf8")).toBe(out);
    });

    it.each([
      [
        "no display and no BROWSER",
        undefined,
        /no display \(DISPLAY and WAYLAND_DISPLAY are not set\)/,
      ],
      [
        "a BROWSER that is not there",
        "/nonexistent/browser",
        /\/nonexistent\/browser was not found/,
      ],
      ["a BROWSER that fails", "fails", /exited with status 3/],
    ])("says where the page is with %s, and succeeds", async (_, browser, why) => {
      vi.stubEnv("DISPLAY", undefined);
      vi.stubEnv("WAYLAND_DISPLAY", undefined);
      vi.stubEnv("BROWSER", browser === "fails" ? script("fails.sh", "exit 3") : browser);
      const out = join(dir, "not-opened.html");
      const { code, stderr } = await report(["--segments", segments(), "--out", out, "--open"]);
      expect(code).toBe(0);
      expect(existsSync(out)).toBe(true);
      const last = stderr.trimEnd().split("\n").at(-1) ?? "";
      expect(last).toMatch(why);
      expect(last).toMatch(
        /^report: no browser to open it \(.*\); open file:\/\/\/\S+\/not-opened\.html in one$/,
      );
    });
  });

  it.each([
    [["--candidates", "c"], /--candidates goes with --segments \(a workspace has its own\)/],
    [["--segments", "a", "--workspace", "w"], /--workspace and --segments name two sources/],
    [["--segments", "a", "--input", "-", "--candidates", "-"], /only one of the files can be -/],
    [["--segments", "a", "--settle", "soon"], /--settle must be a duration/],
    [["--segments", "a", "--now", "later"], /--now must be ISO-8601/],
    [["--segments", "a", "extra"], /unexpected argument "extra"/],
  ])("rejects %j with usage", async (args, message) => {
    const { code, stderr } = await report(args);
    expect(stderr).toMatch(message);
    expect(stderr).toContain("Usage: npm start -- report");
    expect(code).toBe(2);
  });
});
