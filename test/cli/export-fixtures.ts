/** The export fixtures of test/intake/exports, as the command tests hand them to `import-chat` and `run`. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { writeZip } from "../support/zip.js";

const EXPORTS = join(import.meta.dirname, "..", "intake", "exports", "fixtures");
export const exportFixture = (...parts: string[]): string => join(EXPORTS, ...parts);

export const SLACK_FOLDER = exportFixture("slack", "workspace");

/** The Slack fixture folder zipped as Slack's export does (no top folder), at `path`. */
export async function slackZip(path: string): Promise<string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else files[relative(SLACK_FOLDER, file).split("\\").join("/")] = readFileSync(file, "utf8");
    }
  };
  walk(SLACK_FOLDER);
  await writeZip(path, files);
  return path;
}

/** The JSON lines of `text`, parsed. */
export const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
