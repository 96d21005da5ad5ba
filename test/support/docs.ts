/**
 * The manual as tests read it: README.md and every Markdown file under docs/, wherever a page
 * lives, so that a test finds what it checks by its content (a table's header, a command) and
 * pages can move without the tests following them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface DocPage {
  /** Relative to the repository root, e.g. `docs/deploy.md`. */
  path: string;
  text: string;
}

/** README.md and docs/**\/*.md, in path order. */
export function docPages(): DocPage[] {
  const docs = join(ROOT, "docs");
  const pages = readdirSync(docs, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md"))
    .map((file) => join(docs, file));
  return [join(ROOT, "README.md"), ...pages.sort()].map((file) => ({
    path: relative(ROOT, file),
    text: readFileSync(file, "utf8"),
  }));
}

/** The cells of a Markdown table row (`| a | b |`), trimmed; undefined for a line that is not one. */
function tableCells(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith("|") || !trimmed.endsWith("|")) return undefined;
  return trimmed
    .slice(1, -1)
    .split("|")
    .map((cell) => cell.trim());
}

/**
 * The body rows of every table whose header row is `header` (cells compared exactly), with where
 * each table is: the separator row after the header is skipped, the table ends at the first line
 * that is not a row.
 */
export function tablesWithHeader(
  pages: readonly DocPage[],
  header: readonly string[],
): { page: string; line: number; rows: string[][] }[] {
  const found: { page: string; line: number; rows: string[][] }[] = [];
  for (const page of pages) {
    const lines = page.text.split("\n");
    lines.forEach((line, index) => {
      const cells = tableCells(line);
      if (cells === undefined || cells.join("\u0000") !== header.join("\u0000")) return;
      const rows: string[][] = [];
      for (let at = index + 2; at < lines.length; at++) {
        const row = tableCells(lines[at]);
        if (row === undefined) break;
        rows.push(row);
      }
      found.push({ page: page.path, line: index + 1, rows });
    });
  }
  return found;
}
