/**
 * Chat platforms' exports read as messages. Slack workspace exports (ZIP or folder),
 * DiscordChatExporter JSON, Telegram Desktop `result.json`, Mattermost bulk JSONL, WhatsApp
 * text and IRC logs (irssi, WeeChat, HexChat, mIRC, ZNC), each message as `import-chat --out`
 * writes it (platform ids, threads on their parent channel, kinds, readable text), merged by id
 * over several inputs, streamed with bounded memory, with a per-file report of what was skipped
 * and why.
 */

export { toChatMessage } from "./chat-message.js";
export { detectFormat } from "./detect.js";
export { discordEmbedsText, forwardedText } from "./discord-text.js";
export { ExportError, ExportFormatError, ExportInputError, ExportTimezoneError } from "./errors.js";
export { inline } from "./inline.js";
export {
  BATCH_SIZE,
  type ExportInput,
  type ExportReading,
  parseExportFormat,
  readExports,
} from "./read.js";
export { type SlackRaw, slackAuthor, slackText, slackTsMs } from "./slack.js";
export type { SlackNames } from "./slack-text.js";
export { type TelegramService, telegramServiceText } from "./telegram-service.js";
export { machineTimezone } from "./timezone.js";
export {
  type ChannelSummary,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportMessage,
  type ExportOptions,
  type ExportProgress,
  type ExportReport,
} from "./types.js";
