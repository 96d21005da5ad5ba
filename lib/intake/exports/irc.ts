/**
 * IRC logs, one channel per file, as clients and bouncers write them:
 * - irssi: `HH:MM < nick> text`, dated by its `--- Log opened …` and `--- Day changed …` lines;
 * - WeeChat: `YYYY-MM-DD HH:MM:SS<TAB>nick<TAB>text`;
 * - ZNC, irclogs.ubuntu.com and mIRC: `[HH:MM[:SS]] <nick> text`, dated by mIRC's
 *   `Session Start:` and `Session Time:` lines, else by the file's path (`2024-05-01.log`,
 *   `#chan_20240501.log`, `2024/05/01/#chan.txt`);
 * - HexChat (and XChat): `Mon DD HH:MM:SS <nick><TAB>text`, the year from its
 *   `**** BEGIN LOGGING AT …` lines (a line in January after December is the next year's).
 * The layout is the first log line's. A time more than 6 hours earlier than the one before it,
 * with no date line between, is the next day's; lines of one logged time keep the log's order
 * (`LoggedOrder`). Joins, parts, quits, nick and mode changes are the network's (`kind: system`);
 * `/me` actions read `* nick does something`, as the IRC corpus writes them; colour and other
 * formatting codes are dropped. Times carry no zone and are read in the configured one; ids are
 * made from the content.
 */
import { basename, dirname, sep } from "node:path";
import type { FileTally, ReadContext } from "./context.js";
import { ExportFormatError } from "./errors.js";
import { fileLines } from "./files.js";
import { contentId, isoTimestamp, LoggedOrder, Repeats } from "./ids.js";
import { sortMessages } from "./order.js";
import type { ExportMessage } from "./types.js";

type Layout = "irssi" | "weechat" | "bracketed" | "hexchat";
const LAYOUT_NAMES: Record<Layout, string> = {
  irssi: "an irssi",
  weechat: "a WeeChat",
  bracketed: "a ZNC, irclogs or mIRC",
  hexchat: "a HexChat",
};

const WEECHAT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\t([^\t]*)\t(.*)$/;
const IRSSI = /^(\d{2}):(\d{2})(?::(\d{2}))? (.*)$/;
const BRACKETED = /^\[(\d{2}):(\d{2})(?::(\d{2}))?\] (.*)$/;
/** `--- Log opened Mon Dec 07 18:00:00 2026`, `--- Day changed Tue Dec 08 2026`. */
const IRSSI_DATE =
  /^--- (?:Log opened|Day changed) [A-Za-z]{3},? (?<month>[A-Za-z]{3}) +(?<day>\d{1,2})(?: \d{2}:\d{2}(?::\d{2})?)? (?<year>\d{4})\s*$/;
const IRSSI_OTHER = /^--- Log closed /;
/** mIRC's `Session Start: Mon Jun 03 12:00:00 2024`, and `Session Time:` at each midnight. */
const MIRC_DATE =
  /^Session (?:Start|Time): [A-Za-z]{3} (?<month>[A-Za-z]{3}) +(?<day>\d{1,2}) \d{2}:\d{2}:\d{2} (?<year>\d{4})\s*$/;
const MIRC_OTHER = /^Session (?:Close|Ident):/;
/**
 * What mIRC writes as `* …`, as it writes an action: the network's events (joins, parts, quits,
 * nick, mode and topic changes, kicks) and its own notes on the channel.
 */
const MIRC_EVENT =
  /^(?:\S+ (?:\([^)]*\) )?has (?:joined #|left #|quit )|\S+ is now known as \S+$|\S+ sets mode: |\S+ changes topic to |\S+ was kicked (?:from #\S+ )?by |Now talking in #|Topic is |Set by \S+ on |(?:Joins|Parts|Quits): )/;
/** HexChat's default time stamp, `%b %d %H:%M:%S`, then the line. */
const HEXCHAT = /^([A-Za-z]{3}) (\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (.*)$/;
/** `**** BEGIN LOGGING AT Mon Dec  7 18:00:00 2026`; its `ENDING` line dates nothing. */
const HEXCHAT_DATE =
  /^\*\*\*\* BEGIN LOGGING AT [A-Za-z]{3} (?<month>[A-Za-z]{3}) +(?<day>\d{1,2}) \d{2}:\d{2}:\d{2} (?<year>\d{4})\s*$/;
const HEXCHAT_OTHER = /^\*\*\*\* ENDING LOGGING AT /;
/**
 * A layout's own lines besides the chat: those that date what follows (named groups `month`,
 * `day`, `year`) and those passed over; `writer` names the client in a skipped line's reason.
 */
const DATE_LINES: Partial<Record<Layout, { date: RegExp; other: RegExp; writer: string }>> = {
  irssi: { date: IRSSI_DATE, other: IRSSI_OTHER, writer: "irssi" },
  bracketed: { date: MIRC_DATE, other: MIRC_OTHER, writer: "mIRC" },
  hexchat: { date: HEXCHAT_DATE, other: HEXCHAT_OTHER, writer: "HexChat" },
};
/** HexChat's joins, parts, quits and other events of the network. */
const HEXCHAT_NETWORK = /^(?:-->|<--|---)\t(.*)$/;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
/** Channel status marks a client may show before a nick (op, voice, …). */
const MODES = /^[@+%&~!]+/;
const SAID = /^<[ @+%&~!]*([^>\s]+)> ?(.*)$/;
const ACTION = /^ ?\* (\S+) (.*)$/;
const NOTICE = /^-([^\s(-]+)(?:\([^)]*\))?- ?(.*)$/;
/** irssi's `-!-`, ZNC's `***`, irclogs' `===`: the network's own lines. */
const NETWORK = /^(?:-!-|\*\*\*|===) ?(.*)$/;
const WEECHAT_NETWORK = new Set(["-->", "<--", "--", "=!=", "-"]);
/**
 * How far back (seconds) an undated time must go to be the next day's: past midnight it goes back
 * nearly a day, when clocks go back an hour (or a line comes late) only a little.
 */
const NEXT_DAY_BACK = 6 * 3600;
/**
 * IRC's formatting codes, which bouncers log as sent: colours (`^C` with up to two numbers, `^D`
 * with hex ones), bold, italics, underline, strike-through, monospace, reverse and reset.
 */
const FORMATTING =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  /\x03(?:\d{1,2}(?:,\d{1,2})?)?|\x04(?:[0-9a-fA-F]{6}(?:,[0-9a-fA-F]{6})?)?|[\x02\x0f\x11\x16\x1d\x1e\x1f]/g;

/** The names an IRC log file has: a folder given as IRC reads these, and a channel drops it. */
export const IRC_LOG_FILE = /\.(?:log|txt|weechatlog)$/i;

/** The layout of one line of an IRC log, if it is one. */
export function ircLayout(line: string): Layout | undefined {
  if (WEECHAT.test(line)) return "weechat";
  if (HEXCHAT_DATE.test(line) || HEXCHAT_OTHER.test(line)) return "hexchat";
  const stamped = HEXCHAT.exec(line);
  if (stamped && monthOf(stamped[1]) > 0 && hexchatSaid(stamped[6]) !== undefined) return "hexchat";
  if (IRSSI_DATE.test(line) || IRSSI_OTHER.test(line)) return "irssi";
  if (MIRC_DATE.test(line)) return "bracketed";
  const timed = IRSSI.exec(line);
  if (timed && (SAID.test(timed[4]) || /^(?:-!-| \* )/.test(timed[4]))) return "irssi";
  const bracketed = BRACKETED.exec(line);
  if (bracketed && [SAID, ACTION, NETWORK].some((r) => r.test(bracketed[4]))) return "bracketed";
  return undefined;
}

interface Day {
  year: number;
  month: number;
  day: number;
}

/** A date in the last parts of a path (`2024-05-01.log`, `#c_20240501.log`, `2024/05/01/#c.txt`). */
function dateInPath(input: string): Day | undefined {
  const tail = input.split(sep).slice(-4).join("/");
  const found = [...tail.matchAll(/(\d{4})[-/_.]?(\d{2})[-/_.]?(\d{2})/g)].at(-1);
  if (!found) return undefined;
  const [year, month, day] = [Number(found[1]), Number(found[2]), Number(found[3])];
  return validDay(year, month, day) ? { year, month, day } : undefined;
}

function validDay(year: number, month: number, day: number): boolean {
  return (
    month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate()
  );
}

/** The channel of a log: its file's name without extension and date, else its folder's (ZNC). */
function ircChannel(input: string): { channel: string; channelName: string } {
  let stem = basename(input).replace(IRC_LOG_FILE, "");
  stem = stem.replace(/[-_.]?\d{4}-?\d{2}-?\d{2}$/, "").trim();
  if (stem === "") stem = basename(dirname(input)).trim() || basename(input);
  // WeeChat names a file `irc.<network>.<#channel>`: the channel is shown, the whole is the id.
  const hash = stem.indexOf("#");
  return { channel: stem, channelName: hash > 0 ? stem.slice(hash) : stem };
}

/** One line read: who said what, or the network's line (`user` null). */
interface Said {
  user: string | null;
  text: string;
}

function spoken(rest: string): Said | undefined {
  const said = SAID.exec(rest);
  if (said) return { user: said[1].replace(MODES, ""), text: said[2] };
  const action = ACTION.exec(rest);
  if (action) {
    const line = `${action[1]} ${action[2]}`;
    return MIRC_EVENT.test(line) ? { user: null, text: line } : actionOf(action[1], action[2]);
  }
  const network = NETWORK.exec(rest);
  if (network) return { user: null, text: network[1] };
  const notice = NOTICE.exec(rest);
  if (notice) return { user: notice[1], text: notice[2] };
  return undefined;
}

function actionOf(nick: string, doing: string): Said {
  const user = nick.replace(MODES, "");
  return { user, text: `* ${user} ${doing}` };
}

/** A HexChat line after its time: a tab ends the nick or the event's mark. */
function hexchatSaid(rest: string): Said | undefined {
  const network = HEXCHAT_NETWORK.exec(rest);
  if (network) return { user: null, text: network[1] };
  return rest.includes("\t") ? spoken(rest.replace("\t", " ")) : undefined;
}

/** 1 to 12 for an English month's abbreviation, 0 for anything else. */
function monthOf(name: string): number {
  return MONTHS.indexOf(name.toLowerCase()) + 1;
}

function weechatSaid(prefix: string, text: string): Said {
  const trimmed = prefix.trim();
  if (WEECHAT_NETWORK.has(trimmed)) return { user: null, text };
  if (trimmed === "*") {
    const space = text.indexOf(" ");
    return space > 0 ? actionOf(text.slice(0, space), text.slice(space + 1)) : { user: null, text };
  }
  return { user: trimmed.replace(MODES, ""), text };
}

export async function* readIrc(
  input: string,
  context: ReadContext,
): AsyncGenerator<ExportMessage[]> {
  context.progress(input, 0, 1);
  const tally = context.file(input);
  const { channel, channelName } = ircChannel(input);
  const repeats = new Repeats();
  const buffer: ExportMessage[] = [];
  let layout: Layout | undefined;
  let day = dateInPath(input);
  let last = -1;
  let rolled = false;
  const order = new LoggedOrder();
  let line = 0;
  for await (const text of fileLines(input, context.notUtf8(input))) {
    line++;
    if (text.trim() === "") continue;
    layout ??= ircLayout(text);
    if (layout === undefined) {
      tally.skip(`line ${line}`, "line", "before the first line of an IRC log");
      continue;
    }
    const dating = DATE_LINES[layout];
    const dated = dating?.date.exec(text)?.groups;
    if (dating !== undefined && dated !== undefined) {
      const found = {
        year: Number(dated.year),
        month: monthOf(dated.month),
        day: Number(dated.day),
      };
      if (validDay(found.year, found.month, found.day)) {
        day = found;
        last = -1;
      } else tally.skip(`line ${line}`, "date", `not a date ${dating.writer} writes`);
      continue;
    }
    if (dating?.other.test(text)) continue;
    const read = readLine(layout, text, day);
    if (read === undefined) {
      tally.skip(`line ${line}`, "line", `not a line of ${LAYOUT_NAMES[layout]} log`);
      continue;
    }
    if (read.day !== undefined) {
      if (!validDay(read.day.year, read.day.month, read.day.day)) {
        tally.skip(`line ${line}`, "date", "no such day");
        continue;
      }
      day = read.day;
    }
    if (day === undefined) {
      throw new ExportFormatError(
        input,
        `line ${line}`,
        "date",
        "an IRC log line with a time and no date: name the file with its date (2024-05-01.log) or keep the log's date lines (irssi's '--- Log opened', HexChat's '**** BEGIN LOGGING', mIRC's 'Session Start')",
      );
    }
    const seconds = read.hour * 3600 + read.minute * 60 + read.second;
    if (read.day === undefined && seconds < last - NEXT_DAY_BACK) {
      // Past midnight with no date line between (a log of several days): the next day.
      const next = new Date(Date.UTC(day.year, day.month - 1, day.day + 1));
      day = { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() };
      rolled = true;
    }
    last = seconds;
    const ms = lineTime(context, tally, line, day, read);
    if (ms === undefined) continue;
    const said = { user: read.said.user, text: read.said.text.replace(FORMATTING, "").trim() };
    if (said.text === "") {
      tally.skip(`line ${line}`, "text", "no text");
      continue;
    }
    buffer.push(ircMessage(ms, order.next(ms), said, { channel, channelName }, repeats));
    tally.taken();
  }
  if (rolled) {
    context.note(
      "IRC: a time more than 6 hours earlier than the line before it was read as the next day",
    );
  }
  yield sortMessages(buffer);
}

interface Read {
  day?: Day;
  hour: number;
  minute: number;
  second: number;
  said: Said;
}

function readLine(layout: Layout, text: string, day: Day | undefined): Read | undefined {
  if (layout === "hexchat") {
    const m = HEXCHAT.exec(text);
    const said = m ? hexchatSaid(m[6]) : undefined;
    const month = m ? monthOf(m[1]) : 0;
    if (!m || said === undefined || month === 0) return undefined;
    const [hour, minute, second] = [Number(m[3]), Number(m[4]), Number(m[5])];
    // The line names its month and day, the log's last BEGIN line the year: a line in an
    // earlier month than that day's is in the year after (a log open over New Year).
    const year = day === undefined ? undefined : day.year + (month < day.month ? 1 : 0);
    const dated = year === undefined ? undefined : { year, month, day: Number(m[2]) };
    return { ...(dated === undefined ? {} : { day: dated }), hour, minute, second, said };
  }
  if (layout === "weechat") {
    const m = WEECHAT.exec(text);
    if (!m) return undefined;
    const day = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
    if (!validDay(day.year, day.month, day.day)) return undefined;
    const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6])];
    return { day, hour, minute, second, said: weechatSaid(m[7], m[8]) };
  }
  const m = (layout === "irssi" ? IRSSI : BRACKETED).exec(text);
  const said = m ? spoken(m[4]) : undefined;
  if (!m || said === undefined) return undefined;
  return { hour: Number(m[1]), minute: Number(m[2]), second: Number(m[3] ?? 0), said };
}

/** The line's time, epoch ms; undefined (skipped) for no time of day or one out of range. */
function lineTime(
  context: ReadContext,
  tally: FileTally,
  line: number,
  day: Day,
  { hour, minute, second }: Read,
): number | undefined {
  const ms =
    hour < 24 && minute < 60 && second < 60
      ? context.wallClock(day.year, day.month, day.day, hour, minute, second)
      : undefined;
  if (ms === undefined || isoTimestamp(ms) === undefined) {
    tally.skip(`line ${line}`, "time", "not a time of day convoseg takes");
    return undefined;
  }
  context.zoneless();
  return ms;
}

/**
 * A message logged at `ms`, given `at` (`LoggedOrder`); its id made from the time as logged, so
 * the same line of two overlapping logs is one message. `text` is clean: no codes, trimmed.
 */
function ircMessage(
  ms: number,
  at: number,
  { user, text }: Said,
  { channel, channelName }: { channel: string; channelName: string },
  repeats: Repeats,
): ExportMessage {
  const content = [isoTimestamp(ms) as string, user ?? "", text];
  return {
    id: contentId(content, repeats.next(content)),
    // At the far end of the times convoseg takes, the time as logged.
    ts: isoTimestamp(at) ?? (content[0] as string),
    channel,
    channelName,
    user,
    text,
    kind: user === null ? "system" : "user",
    platform: "irc",
  };
}
