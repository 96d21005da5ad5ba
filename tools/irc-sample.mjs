// Cuts examples/irc-ubuntu.jsonl from the Ubuntu IRC disentanglement data (CC-BY-4.0, see
// examples/README.md): a contiguous stretch of one annotated #ubuntu file, as the chat input
// format reads it. Deterministic: the same source gives the same bytes.
//
//   node tools/irc-sample.mjs ../shared/data/irc/ubuntu.test.2008-07-14_18.jsonl 1000 300 > examples/irc-ubuntu.jsonl
import { readFileSync } from "node:fs";

const [source, first, count] = process.argv.slice(2);
if (source === undefined || first === undefined || count === undefined) {
  process.stderr.write("usage: node tools/irc-sample.mjs <annotated.jsonl> <first id> <lines>\n");
  process.exit(2);
}
const from = Number(first);
const to = from + Number(count);
const lines = readFileSync(source, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line))
  .filter((m) => m.id >= from && m.id < to);
for (const m of lines) {
  // IRC has no reply metadata: the annotators' links are kept under a name the reader ignores,
  // so that a run infers its conversations as it would on any IRC log. Links to lines before
  // the excerpt are dropped.
  const links = (m.replyTo ?? []).filter((id) => id >= from && id < to);
  const out = {
    id: m.id,
    ts: m.ts,
    channel: "ubuntu",
    platform: "irc",
    user: m.user,
    text: m.text,
    ...(m.system ? { system: true } : {}),
    ...(links.length > 0 ? { annotatedReplyTo: links } : {}),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
