import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reportCommand } from "../../../cli/report/report.js";
import { ALL_MESSAGES, CANDIDATES, NOW, OPS, SEGMENTS } from "./fixtures.js";
import { runCommand, tempDir, writeJsonLines } from "./support.js";

const dir = tempDir();
const report = (args: string[]) => runCommand(reportCommand, args, NOW);

/** The fixtures' messages, `help` named "Help desk" and ops "general", as a platform would. */
function files(names: Record<string, string>) {
  const named = ALL_MESSAGES.map((m) =>
    names[m.channel] === undefined ? m : { ...m, channelName: names[m.channel] },
  );
  const tag = Object.values(names).join("-").replace(/\W/g, "");
  return [
    "--segments",
    writeJsonLines(join(dir, `segments-${tag}.jsonl`), SEGMENTS),
    "--candidates",
    writeJsonLines(join(dir, `candidates-${tag}.jsonl`), CANDIDATES),
    "--input",
    writeJsonLines(join(dir, `input-${tag}.jsonl`), named),
    "--settle",
    "1h",
  ];
}

describe("report --channel", () => {
  it("reports only the channels given, by id or by the name their messages carry", async () => {
    const out = join(dir, "one.html");
    const byName = await report([
      ...files({ help: "Help desk" }),
      "--channel",
      "Help desk",
      "--out",
      out,
    ]);
    expect(byName.stderr).toContain('report: "Help desk" is channel help\n');
    expect(byName.stderr).toMatch(/1 channel, 4 segments/);
    expect(byName.code).toBe(0);
    const both = await report([...files({}), "--channel", "help", "--channel", OPS, "--out", out]);
    expect(both.stderr).toMatch(/2 channels, 5 segments/);
  });

  it("refuses a name two channels carry, and a channel the input does not have", async () => {
    const out = join(dir, "two.html");
    const ambiguous = await report([
      ...files({ help: "general", [OPS]: "general" }),
      "--channel",
      "general",
      "--out",
      out,
    ]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('report: "general" names 2 channels');
    const missing = await report([...files({}), "--channel", "nowhere", "--out", out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('report: no channel "nowhere" to report\n');
    expect(missing.stderr).not.toMatch(/report: wrote/);
    const typo = await report([...files({}), "--channel", "helpp", "--out", out]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(
      "report: did you mean (with the same options)\n  npm start -- report --channel help\n",
    );
  });
});
