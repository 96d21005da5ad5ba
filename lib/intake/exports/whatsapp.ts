/**
 * WhatsApp "Export chat" text: `date, time - Author: text` (Android) or `[date, time] Author: text`
 * (iOS), in the locale's date order (`M/D/YY` or `D/M/YY`, detected per file: a first or second
 * number over 12 decides, else the order under which dates do not go backwards) and 12 h or 24 h
 * time; lines without that prefix continue the message before. Lines without an author are the
 * platform's (`kind: system`), as are iOS lines whose text starts with a left-to-right mark and is
 * no attachment. Times carry no zone and are read in the configured one; messages of one minute
 * keep the file's order (`LoggedOrder`). Ids are made from the content (time as written, author,
 * text, ordinal among exact repeats), never from the file or the line.
 */
import { basename, dirname } from "node:path";
import type { FileTally, ReadContext } from "./context.js";
import { ExportFormatError } from "./errors.js";
import { fileLines } from "./files.js";
import { contentId, isoTimestamp, LoggedOrder, Repeats } from "./ids.js";
import { sortMessages } from "./order.js";
import type { ExportMessage } from "./types.js";

const SPACE = "[ \\u00a0\\u202f]";
const DATE = "(\\d{1,4})[./-](\\d{1,2})[./-](\\d{1,4})";
/**
 * The 12-hour marks WhatsApp writes: after the time `AM`, `a.m.`, `a. m.` (Spanish, whose
 * midnight hour is `00`), German `vorm.`/`nachm.`, Greek `π.μ.`/`μ.μ.`, Arabic `ص`/`م`; before it
 * Japanese `午前`/`午後`, Chinese `上午`/`下午`, Korean `오전`/`오후`.
 */
const AFTER = `[aApP]\\.?${SPACE}?[mM]\\.?|vorm\\.|nachm\\.|\u03c0\\.${SPACE}?\u03bc\\.|\u03bc\\.${SPACE}?\u03bc\\.|\u0635|\u0645`;
const BEFORE = "\u5348\u524d|\u5348\u5f8c|\u4e0a\u5348|\u4e0b\u5348|\uc624\uc804|\uc624\ud6c4";
const AFTERNOON = /^(?:[pP]|nachm|\u03bc\.|\u0645|\u5348\u5f8c|\u4e0b\u5348|\uc624\ud6c4)/;
const TIME = `(?:(${BEFORE})${SPACE}?)?(\\d{1,2})[:.](\\d{2})(?:[:.](\\d{2}))?(?:${SPACE}?(${AFTER}))?`;
const MARKS = "[\\u200e\\u200f]*";
const BRACKETED = new RegExp(`^${MARKS}\\[${DATE},?${SPACE}+${TIME}\\]${SPACE}(.*)$`);
const DASHED = new RegExp(`^${MARKS}${DATE},?${SPACE}+${TIME}${SPACE}[-\\u2013]${SPACE}(.*)$`);
const AUTHOR = /^([^:]{1,80}?): ([\s\S]*)$/;
const ATTACHMENT = /^\u200e?(<attached: [^>]*>|.* omitted)$/;

interface Header {
  a: number;
  b: number;
  c: number;
  hour: number;
  minute: number;
  second: number;
  rest: string;
}

export function parseHeader(line: string): Header | undefined {
  const match = BRACKETED.exec(line) ?? DASHED.exec(line);
  if (!match) return undefined;
  const [, a, b, c, before, h, mi, s, after, rest] = match;
  let hour = Number(h);
  const meridiem = before ?? after;
  if (meridiem !== undefined) {
    // Some locales write the hour after midnight as 00 (`00:15 a. m.`), most as 12.
    if (hour > 12) return undefined;
    hour = (hour % 12) + (AFTERNOON.test(meridiem) ? 12 : 0);
  }
  return {
    a: Number(a),
    b: Number(b),
    c: Number(c),
    hour,
    minute: Number(mi),
    second: Number(s ?? 0),
    rest,
  };
}

/** The order of a file's `a/b/yy` dates; a line starting with a four-digit year is Y-M-D. */
type Order = "dmy" | "mdy";

/** The date order of a file, from one pass over its dated lines. */
async function detectOrder(input: string, context: ReadContext): Promise<Order> {
  let dayFirst = 0;
  let monthFirst = 0;
  let line = 0;
  const backwards = { dmy: 0, mdy: 0 };
  const last = { dmy: 0, mdy: 0 };
  for await (const text of fileLines(input)) {
    line++;
    const header = parseHeader(text);
    if (!header) continue;
    if (header.a > 31) continue;
    if (header.a > 12) dayFirst = dayFirst || line;
    if (header.b > 12) monthFirst = monthFirst || line;
    if (dayFirst && monthFirst) {
      throw new ExportFormatError(
        input,
        `line ${Math.max(dayFirst, monthFirst)}`,
        "date",
        `the day comes first on line ${dayFirst} and second on line ${monthFirst}: mixed date orders in one file`,
      );
    }
    const year = header.c < 100 ? 2000 + header.c : header.c;
    const dmy = year * 10_000 + header.b * 100 + header.a;
    const mdy = year * 10_000 + header.a * 100 + header.b;
    if (dmy < last.dmy) backwards.dmy++;
    if (mdy < last.mdy) backwards.mdy++;
    last.dmy = dmy;
    last.mdy = mdy;
  }
  if (dayFirst) return "dmy";
  if (monthFirst) return "mdy";
  if (backwards.mdy < backwards.dmy) return "mdy";
  if (backwards.dmy === backwards.mdy && last.dmy !== 0) {
    context.note("WhatsApp: a file's dates read as D/M/Y; no date tells day from month");
  }
  return "dmy";
}

/** The chat's name: from `WhatsApp Chat with NAME.txt`, else the file's (or, for `_chat.txt`, its folder's) name. */
function whatsappChatName(input: string): string {
  const file = basename(input);
  const named = /^WhatsApp Chat (?:with |- )(.+)\.txt$/i.exec(file);
  if (named) return named[1].trim();
  const stem = file.replace(/\.txt$/i, "").trim();
  return stem === "_chat" ? basename(dirname(input)).trim() || stem : stem;
}

export async function* readWhatsapp(
  input: string,
  context: ReadContext,
): AsyncGenerator<ExportMessage[]> {
  context.progress(input, 0, 1);
  const tally = context.file(input);
  const order = await detectOrder(input, context);
  const name = whatsappChatName(input);
  const repeats = new Repeats();
  const sameMinute = new LoggedOrder();
  const buffer: ExportMessage[] = [];
  let open: { ts: string; rest: string; lines: string[] } | undefined;
  const close = () => {
    if (open === undefined) return;
    const at = isoTimestamp(sameMinute.next(Date.parse(open.ts))) ?? open.ts;
    const message = whatsappMessage(
      open.ts,
      at,
      [open.rest, ...open.lines].join("\n"),
      name,
      repeats,
    );
    buffer.push(message);
    tally.taken();
    open = undefined;
  };
  let line = 0;
  for await (const text of fileLines(input, context.notUtf8(input))) {
    line++;
    const header = parseHeader(text);
    if (header === undefined) {
      if (open) open.lines.push(text);
      else if (text.trim() !== "")
        tally.skip(`line ${line}`, "date", "text before the first dated line");
      continue;
    }
    const ts = headerTime(header, order, context, tally, line);
    if (ts === undefined) {
      if (open) open.lines.push(text);
      continue;
    }
    close();
    open = { ts, rest: header.rest, lines: [] };
  }
  close();
  yield sortMessages(buffer);
}

function headerTime(
  header: Header,
  order: Order,
  context: ReadContext,
  tally: FileTally,
  line: number,
): string | undefined {
  const [year, month, day] =
    header.a > 31
      ? [header.a, header.b, header.c]
      : order === "dmy"
        ? [header.c, header.b, header.a]
        : [header.c, header.a, header.b];
  const fullYear = year < 100 ? 2000 + year : year;
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= new Date(Date.UTC(fullYear, month, 0)).getUTCDate() &&
    header.hour < 24 &&
    header.minute < 60 &&
    header.second < 60;
  const ts = valid
    ? isoTimestamp(
        context.wallClock(fullYear, month, day, header.hour, header.minute, header.second),
      )
    : undefined;
  if (ts === undefined) {
    tally.skip(
      `line ${line}`,
      "date",
      "not a date and time (read as the text of the message before)",
    );
    return undefined;
  }
  context.zoneless();
  return ts;
}

/** The message written at `ts`, given the time `at` (`LoggedOrder`); its id made from `ts`. */
function whatsappMessage(
  ts: string,
  at: string,
  rest: string,
  channel: string,
  repeats: Repeats,
): ExportMessage {
  const match = AUTHOR.exec(rest);
  let author: string | null = null;
  let text = rest;
  if (match && !/["\u201c\u201d]/.test(match[1])) {
    const candidate = match[1].replace(/[\u200e\u200f]/g, "").trim();
    const body = match[2];
    const iosSystem = body.startsWith("\u200e") && !ATTACHMENT.test(body.split("\n")[0]);
    if (candidate !== "" && !iosSystem) author = candidate;
    text = body.replace(/^\u200e/, "");
  }
  text = text.replace(/^[\u200e\u200f]+/, "");
  const content = [ts, author ?? "", text];
  const message: ExportMessage = {
    id: contentId(content, repeats.next(content)),
    ts: at,
    channel,
    channelName: channel,
    user: author,
    text,
  };
  message.kind = author === null ? "system" : "user";
  message.platform = "whatsapp";
  return message;
}
