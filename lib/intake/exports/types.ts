/** What the export readers produce, take and report. */
import type { MessageKind } from "../../history/index.js";

/** The export formats read, as `--format` names them. */
export type ExportFormat = "slack" | "discord" | "telegram" | "mattermost" | "whatsapp" | "irc";

export const EXPORT_FORMATS: readonly ExportFormat[] = [
  "slack",
  "discord",
  "telegram",
  "mattermost",
  "whatsapp",
  "irc",
];

/**
 * One message of an export, exactly the object `import-chat --out` writes (keys in this order;
 * optional ones left out when unknown). `channel` is the platform's stable channel id, so that an
 * import and a live connector land in the same channel; a thread reply stays on its parent
 * channel with `thread` set.
 */
export interface ExportMessage {
  /** Unique per channel: the platform's id, or one made from the content (formats without ids). */
  id: string;
  /** ISO 8601 UTC with milliseconds (`2024-05-01T12:00:00.000Z`). */
  ts: string;
  channel: string;
  channelName: string;
  /** Display name, or the platform's user id when no name is known; null for system lines. */
  user: string | null;
  /** Readable text: mentions and links rendered, attachments named. */
  text: string;
  userId?: string;
  /** The id of the message this one answers, in the same channel. */
  replyTo?: string;
  /** The id of the thread's root, when this message is a thread reply. */
  thread?: string;
  kind?: MessageKind;
  platform?: ExportFormat;
  /** Discord: the channel's guild, a snowflake (its messages' links need it). */
  guild?: string;
}

/** What a reader is told: the zone of zone-less times, and where to report progress. */
export interface ExportOptions {
  /**
   * IANA zone that times without a zone are read in (WhatsApp, IRC logs, old Telegram exports
   * without `date_unixtime`). Default: the machine's zone ({@link ExportReport.timezone} names it).
   */
  timezone?: string;
  /** Called as files and entries are read; never given message text. */
  onProgress?: (progress: ExportProgress) => void;
}

export interface ExportProgress {
  /** The input (path given) being read, its format, and the file or ZIP entry now read. */
  input: string;
  format: ExportFormat;
  file: string;
  /** Files (or ZIP entries) of this input done, and how many it has when known. */
  filesDone: number;
  filesTotal?: number;
  /** Messages read so far, over all inputs. */
  messages: number;
}

/** One entry or line left out, with where and why. */
interface SkippedItem {
  /** The file (or `zip!entry`), and the entry (`messages[12]`) or 1-based line at fault. */
  file: string;
  at: string;
  field: string;
  reason: string;
}

/** Per file read: messages taken, and what was left out by reason. */
export interface FileReport {
  file: string;
  format: ExportFormat;
  messages: number;
  /** Count per reason (`hidden subtype message_changed`, `no timestamp`, ...). */
  skipped: Record<string, number>;
}

export interface ExportReport {
  /** The zone zone-less times were read in, and how many such times were read. */
  timezone: string;
  zonelessTimes: number;
  files: FileReport[];
  /** The first {@link MAX_REPORTED_ITEMS} items left out, each with file, entry or line, field. */
  skippedItems: SkippedItem[];
  /** Messages given again with the same id and content (overlapping inputs): left out. */
  duplicates: number;
  /** Messages given again with the same id but other content: the first kept, these listed. */
  conflicts: { channel: string; id: string; fields: string[] }[];
  /** Per channel read, in output order: what `--dry-run` prints (counts and date range). */
  channels: ChannelSummary[];
  /** Things the reader had to assume (a Slack folder not in channels.json, an ambiguous date order). */
  notes: string[];
}

export interface ChannelSummary {
  channel: string;
  channelName: string;
  platform?: ExportFormat;
  messages: number;
  /** `ts` of the oldest and the newest message. */
  first: string;
  last: string;
}

/** How many skipped items and conflicts a report lists one by one (counts are always whole). */
export const MAX_REPORTED_ITEMS = 1000;
