import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectFormat } from "convoseg/exports";
import { describe, expect, it } from "vitest";
import { fixture, readAll, tempDir } from "./support.js";

const IRSSI = fixture("irc", "#ubuntu.log");
const WEECHAT = fixture("irc", "irc.libera.#rust.weechatlog");
const ZNC = fixture("irc", "znc", "#convoseg", "2026-12-07.log");
const HEXCHAT = fixture("irc", "Libera.Chat-#rust.log");
const MIRC = fixture("irc", "#help.libera.log");

function log(name: string, text: string): string {
  const path = join(tempDir(), name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

describe("IRC logs", () => {
  it("reads irssi's log, dated by its Log opened and Day changed lines", async () => {
    const { messages } = await readAll([IRSSI]);
    expect(messages.map((m) => [m.ts, m.user, m.kind, m.text])).toEqual([
      [
        "2026-12-07T23:50:00.000Z",
        null,
        "system",
        "alice [~alice@host.example] has joined #ubuntu",
      ],
      ["2026-12-07T23:51:00.000Z", "alice", "user", "how do I mount an ntfs partition?"],
      [
        "2026-12-07T23:52:00.000Z",
        "bob",
        "user",
        "alice: install ntfs-3g, then sudo mount -t ntfs-3g /dev/sdb1 /mnt",
      ],
      ["2026-12-07T23:58:00.000Z", "alice", "user", "* alice tries it"],
      ["2026-12-08T00:02:00.000Z", "alice", "user", "bob: that worked, thanks"],
      ["2026-12-08T00:03:00.000Z", null, "system", "bob is now known as bobby"],
      ["2026-12-08T00:04:00.000Z", "carol", "user", "anyone seen grub hang after the update?"],
    ]);
    expect(new Set(messages.map((m) => [m.channel, m.channelName, m.platform].join(" ")))).toEqual(
      new Set(["#ubuntu #ubuntu irc"]),
    );
  });

  it("reads WeeChat's log: the file names network and channel, the channel is shown", async () => {
    const { messages } = await readAll([WEECHAT]);
    expect(messages.map((m) => [m.ts, m.user, m.kind, m.text])).toEqual([
      ["2026-12-07T10:00:01.000Z", null, "system", "dana (~dana@host) has joined #rust"],
      ["2026-12-07T10:00:30.000Z", "dana", "user", "is there a crate for parsing IRC logs?"],
      ["2026-12-07T10:01:02.000Z", "erin", "user", "dana: try irc-proto"],
      ["2026-12-07T10:01:40.000Z", "dana", "user", "* dana looks"],
      ["2026-12-07T10:02:00.000Z", null, "system", "erin (~erin@host) has quit (Quit: bye)"],
    ]);
    expect(messages[0]).toMatchObject({ channel: "irc.libera.#rust", channelName: "#rust" });
  });

  it("reads ZNC's daily log, dated and named by its path, past midnight the next day", async () => {
    const { messages, report } = await readAll([ZNC]);
    expect(messages.map((m) => [m.ts, m.user, m.text])).toEqual([
      ["2026-12-07T09:00:00.000Z", null, "Joins: fay (~fay@host)"],
      ["2026-12-07T09:00:05.000Z", "fay", "does the tick retry a failed delivery?"],
      ["2026-12-07T09:01:10.000Z", "gus", "fay: yes, after the lease"],
      ["2026-12-07T09:01:15.000Z", "fay", "* fay nods"],
      ["2026-12-07T23:59:59.000Z", "gus", "late one"],
      ["2026-12-08T00:00:30.000Z", "gus", "after midnight"],
    ]);
    expect(messages[0]?.channel).toBe("#convoseg");
    expect(report.notes).toEqual([
      "IRC: a time more than 6 hours earlier than the line before it was read as the next day",
    ]);
  });

  it("reads times in the zone given, and irclogs' dated folders and === lines", async () => {
    const path = log(
      join("2024", "05", "01", "#ubuntu.txt"),
      "[10:00] === ann joined #ubuntu\n[10:01] <ann> hello\n[10:02] <@ben> ann: hi\n",
    );
    const { messages, report } = await readAll([path], { timezone: "Europe/Paris" });
    expect(messages.map((m) => [m.ts, m.user, m.kind])).toEqual([
      ["2024-05-01T08:00:00.000Z", null, "system"],
      ["2024-05-01T08:01:00.000Z", "ann", "user"],
      ["2024-05-01T08:02:00.000Z", "ben", "user"],
    ]);
    expect([report.timezone, report.zonelessTimes]).toEqual(["Europe/Paris", 3]);
  });

  it("keeps the log's order within a minute, which the time alone does not tell", async () => {
    const lines = ["zed: first", "amy: second", "mia: third", "bo: fourth"];
    const path = log(
      "#order-2024-05-01.log",
      `${lines.map((text, i) => `10:00 < ${["amy", "zed", "bo", "mia"][i]}> ${text}`).join("\n")}\n`,
    );
    const { messages } = await readAll([path]);
    expect(messages.map((m) => [m.ts, m.text])).toEqual(
      lines.map((text, i) => [`2024-05-01T10:00:00.00${i}Z`, text]),
    );
    // Its ids are its content's, the minute as logged: the same line of another log is the same.
    const again = log("#order-2024-05-01.log", "10:00 < mia> bo: fourth\n");
    expect((await readAll([again])).messages[0]?.id).toBe(messages[3]?.id);
  });

  it("reads a notice as its nick's, and skips dates and times that are none", async () => {
    const irssi = log(
      "#notices.log",
      [
        "--- Log opened Fri Mar 01 10:00:00 2024",
        "10:00 -ubottu(~bot@host)- ann: see https://help.ubuntu.com",
        "--- Day changed Fri Xyz 01 2024",
        "25:00 < ann> never",
        "10:01 < ann> thanks",
      ].join("\n"),
    );
    const weechat = log("irc.net.#w.weechatlog", "2024-03-01 10:00:00\t *\tann\n");
    const { messages, report } = await readAll([irssi, weechat]);
    expect(messages.map((m) => [m.channel, m.user, m.kind, m.text])).toEqual([
      ["#notices", "ubottu", "user", "ann: see https://help.ubuntu.com"],
      ["#notices", "ann", "user", "thanks"],
      ["irc.net.#w", null, "system", "ann"],
    ]);
    expect(report.skippedItems.map((s) => [s.at, s.field, s.reason])).toEqual([
      ["line 3", "date", "not a date irssi writes"],
      ["line 4", "time", "not a time of day convoseg takes"],
    ]);
  });

  it("drops IRC's colour and formatting codes, which bouncers log as sent", async () => {
    const path = log(
      "#colours-2024-05-01.log",
      "[10:00:00] <ann> \x0304,01red\x03 and \x02bold\x02 \x1ditalic\x0f \x04ff0000hex\x04 done\n[10:00:01] <ann> \x0304\x03\n",
    );
    const { messages, report } = await readAll([path]);
    expect(messages.map((m) => m.text)).toEqual(["red and bold italic hex done"]);
    expect(report.skippedItems.map((s) => s.reason)).toEqual(["no text"]);
  });

  it("stays on the day when clocks go back, and moves on past midnight", async () => {
    // Paris, 2024-10-27: 03:00 summer time is 02:00 winter time; the log's clock repeats 02:xx,
    // and a repeated time is read as its first occurrence, as every zone-less time is: the day
    // stays the 27th (before, a time earlier than the line before was always the next day's).
    const path = log(
      "#dst-2024-10-27.log",
      "[02:50:00] <ann> before\n[02:05:00] <ann> after the change\n[23:59:00] <ann> late\n[00:01:00] <ann> next day\n",
    );
    const { messages } = await readAll([path], { timezone: "Europe/Paris" });
    expect(messages.map((m) => [m.ts, m.text])).toEqual([
      ["2024-10-27T00:05:00.000Z", "after the change"],
      ["2024-10-27T00:50:00.000Z", "before"],
      ["2024-10-27T22:59:00.000Z", "late"],
      ["2024-10-27T23:01:00.000Z", "next day"],
    ]);
  });

  it("reads HexChat's log: the year from its BEGIN LOGGING lines, January after December the next", async () => {
    const { messages } = await readAll([HEXCHAT]);
    expect(messages.map((m) => [m.ts, m.user, m.kind, m.text])).toEqual([
      ["2025-12-31T23:58:40.000Z", null, "system", "You are now talking on #rust"],
      ["2025-12-31T23:58:41.000Z", null, "system", "Topic for #rust is: Rust, the language"],
      ["2025-12-31T23:58:50.000Z", null, "system", "gil (~gil@host) has joined #rust"],
      ["2025-12-31T23:59:02.000Z", "gil", "user", "how do I read a file line by line?"],
      ["2025-12-31T23:59:30.000Z", "hana", "user", "gil: BufReader::new(file).lines()"],
      // Logged in the same second, after it: a millisecond later.
      ["2025-12-31T23:59:30.001Z", "gil", "user", "* gil tries it"],
      ["2026-01-01T00:00:05.000Z", "gil", "user", "hana: works, thanks! happy new year"],
      ["2026-01-01T00:00:09.000Z", null, "system", "gil (~gil@host) has quit (Quit: bye)"],
      ["2026-01-02T09:00:01.000Z", "ivy", "user", "anyone around?"],
    ]);
    expect(messages[0]).toMatchObject({ channel: "Libera.Chat-#rust", channelName: "#rust" });
  });

  it("reads mIRC's log, dated by its Session lines, its events the network's", async () => {
    const { messages, report } = await readAll([MIRC]);
    expect(messages.map((m) => [m.ts, m.user, m.kind, m.text])).toEqual([
      ["2025-12-05T23:58:00.000Z", null, "system", "Now talking in #help"],
      ["2025-12-05T23:58:00.001Z", null, "system", "Topic is 'Ask away'"],
      ["2025-12-05T23:58:00.002Z", null, "system", "Set by ChanServ on Mon Dec 01 10:00:00"],
      ["2025-12-05T23:58:00.003Z", null, "system", "jo (~jo@host) has joined #help"],
      ["2025-12-05T23:59:00.000Z", "jo", "user", "how do I keep a windows service running?"],
      ["2025-12-05T23:59:00.001Z", "kim", "user", "jo: sc config name start= auto"],
      ["2025-12-06T00:00:00.000Z", "jo", "user", "* jo tries it"],
      ["2025-12-06T00:01:00.000Z", "jo", "user", "kim: that did it, thanks"],
      ["2025-12-06T00:02:00.000Z", null, "system", "kim is now known as kim_away"],
      ["2025-12-06T00:03:00.000Z", null, "system", "jo has quit IRC (Quit: bye)"],
    ]);
    // mIRC names its file `#channel.network.log`, and a channel's name may hold a dot
    // (`#node.js`): the whole stem is the channel.
    expect(messages[0]).toMatchObject({ channel: "#help.libera", channelName: "#help.libera" });
    expect(report.skippedItems).toEqual([]);
  });

  it("refuses a HexChat line it cannot date, and skips one with no such day", async () => {
    const undated = log("#hex.log", "Dec 31 23:59:02 <gil>\thello\n");
    await expect(readAll([undated])).rejects.toThrow(
      expect.objectContaining({
        name: "ExportFormatError",
        message: expect.stringMatching(/line 1.*HexChat's '\*\*\*\* BEGIN LOGGING'/),
      }),
    );
    const { messages, report } = await readAll([
      log(
        "#hex.log",
        "**** BEGIN LOGGING AT Sun Feb  1 10:00:00 2026\nFeb 30 10:00:01 <gil>\tno such day\n**** BEGIN LOGGING AT Mon Feb 30 10:00:00 2026\nFeb 01 10:00:02 <gil>\tok\n",
      ),
    ]);
    expect(messages.map((m) => m.text)).toEqual(["ok"]);
    expect(report.skippedItems.map((s) => [s.at, s.field, s.reason])).toEqual([
      ["line 2", "date", "no such day"],
      ["line 3", "date", "not a date HexChat writes"],
    ]);
  });

  it("refuses a time it cannot date, naming the line and what to do", async () => {
    const path = log("#nodate.log", "[10:00] <ann> hello\n");
    await expect(readAll([path])).rejects.toThrow(
      expect.objectContaining({
        name: "ExportFormatError",
        message: expect.stringMatching(/line 1.*name the file with its date/),
      }),
    );
  });

  it("skips lines that are no log line, by line and reason, and keeps repeats apart", async () => {
    const path = log(
      "#chan_20240501.log",
      "a header a tool wrote\n[10:00:00] <ann> ok\n[10:00:00] <ann> ok\n[10:00:01] garbage\n[10:00:02] <ann>  \n",
    );
    const { messages, report } = await readAll([path]);
    expect(messages.map((m) => [m.ts, m.text])).toEqual([
      ["2024-05-01T10:00:00.000Z", "ok"],
      ["2024-05-01T10:00:00.001Z", "ok"],
    ]);
    expect(messages[0]?.id).not.toBe(messages[1]?.id);
    expect(messages[0]?.channel).toBe("#chan");
    expect(report.skippedItems.map((s) => [s.at, s.reason])).toEqual([
      ["line 1", "before the first line of an IRC log"],
      ["line 4", "not a line of a ZNC, irclogs or mIRC log"],
      ["line 5", "no text"],
    ]);
  });

  it("is told from the other formats by its first line, one file or a folder of them", async () => {
    for (const path of [IRSSI, WEECHAT, ZNC, HEXCHAT, MIRC, fixture("irc")])
      expect([path, await detectFormat(path)]).toEqual([path, "irc"]);
    // Read twice (an overlapping log), each message is kept once.
    const { messages, report } = await readAll([IRSSI, IRSSI]);
    expect(messages).toHaveLength(7);
    expect(report.duplicates).toBe(7);
  });
});
