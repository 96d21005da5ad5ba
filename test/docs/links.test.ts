/** Every relative link of the README and docs/ reaches a file, and every anchor a heading. */
import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { docPages } from "../support/docs.js";
import { anchors, links } from "./markdown.js";

const ROOT = join(import.meta.dirname, "../..");
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

describe("the manual's links", () => {
  const pages = docPages();
  const byPath = new Map(pages.map((page) => [page.path, page.text]));

  it("covers the README and the docs pages", () => {
    expect(byPath.has("README.md")).toBe(true);
    expect(byPath.has("docs/architecture.md")).toBe(true);
    expect(pages.length).toBeGreaterThan(10);
  });

  it.each(pages.map((page) => page.path))(
    "%s: relative links resolve, anchors name headings",
    (file) => {
      const broken: string[] = [];
      for (const { target, line } of links(byPath.get(file) ?? "")) {
        if (EXTERNAL.test(target)) continue;
        const [path, anchor] = target.split("#", 2);
        const resolved = path === "" ? file : normalize(join(dirname(file), decodeURI(path)));
        const absolute = join(ROOT, resolved);
        if (!existsSync(absolute)) {
          broken.push(`line ${line}: ${target}: no file ${resolved}`);
          continue;
        }
        if (anchor === undefined || anchor === "") continue;
        const page = byPath.get(resolved);
        if (page === undefined || statSync(absolute).isDirectory()) {
          broken.push(`line ${line}: ${target}: an anchor into ${resolved}, which is no page`);
        } else if (!anchors(page).has(anchor)) {
          broken.push(`line ${line}: ${target}: no heading #${anchor} in ${resolved}`);
        }
      }
      expect(broken).toEqual([]);
    },
  );
});
