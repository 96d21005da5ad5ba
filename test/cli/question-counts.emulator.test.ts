/**
 * One meaning of answered, unanswered and unclear: after a run, `questions`, the report and the
 * digest of the whole span count a channel's questions of each status alike.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "convoseg/digest";
import type { Question } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { sampleRun } from "../support/workspace-run.js";

const STATUSES = ["unanswered", "unclear", "answered"] as const;
type Counts = Record<(typeof STATUSES)[number], number>;

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

/** The question counts the report's page shows: each list with what its cap left out. */
function reportCounts(file: string): Counts {
  const html = readFileSync(file, "utf8");
  const json = /<script type="application\/json" id="report-data"[^>]*>([\s\S]*?)<\/script>/.exec(
    html,
  );
  if (!json) throw new Error(`no report data in ${file}`);
  const questions = JSON.parse(json[1]).knowledge.questions as Record<string, unknown[]> & {
    omitted: Counts;
  };
  return Object.fromEntries(
    STATUSES.map((s) => [s, questions[s].length + questions.omitted[s]]),
  ) as Counts;
}

describe("question counts", () => {
  it("are the same in questions, the report and the digest of the same span", async () => {
    const { dir, ws, chat } = await sampleRun("counts", {
      seed: 5,
      channels: ["desk"],
      perChannel: 60,
    });

    const listed = await cli(["questions", "desk", "--json", ...ws]);
    expect(listed.code, listed.stderr).toBe(0);
    const questions = (JSON.parse(listed.stdout) as { questions: Question[] }).questions;
    const byCommand = Object.fromEntries(
      STATUSES.map((s) => [s, questions.filter((q) => q.status === s).length]),
    ) as Counts;
    // The sample asks questions of every status: the comparison is not of zeros.
    for (const status of STATUSES) expect(byCommand[status], status).toBeGreaterThan(0);

    const report = join(dir, "counts.html");
    const reported = await cli(["report", "--out", report, ...ws]);
    expect(reported.code, reported.stderr).toBe(0);
    expect(reportCounts(report)).toEqual(byCommand);

    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const times = chat.map((m) => m.ts);
    const since = day(Math.min(...times));
    const until = day(Math.max(...times) + 86_400_000);
    const digested = await cli([
      "digest",
      "desk",
      "--since",
      since,
      "--until",
      until,
      "--format",
      "json",
      ...ws,
    ]);
    expect(digested.code, digested.stderr).toBe(0);
    const digest = JSON.parse(digested.stdout) as Digest;
    expect(
      Object.fromEntries(STATUSES.map((s) => [s, digest[s].length + (digest.omitted?.[s] ?? 0)])),
    ).toEqual(byCommand);
    const md = await cli(["digest", "desk", "--since", since, "--until", until, ...ws]);
    expect(md.stdout).toContain(`Unanswered (${byCommand.unanswered}), oldest first`);
    expect(md.stdout).toContain(`Unclear (${byCommand.unclear}):`);
    expect(md.stdout).toContain(`Answered (${byCommand.answered})`);
  }, 150_000); // A sample run and five commands, each starting DynamoDB Local.
});
