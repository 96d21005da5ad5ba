/**
 * Ask in the channel: the answer to a question from the channel's own past, as searched.
 * Composed from the search's hits (questions with answers first, then conversations), with each
 * hit's platform link and date, rendered literally for Slack, Discord and Telegram, and posted
 * where the platform's request said to.
 */
export { ASK_HITS, type AskAnswer, type AskItem, composeAnswer, MAX_ASK_HITS } from "./answer.js";
export { AskError, type AskErrorCode } from "./errors.js";
export { type LinkPlace, messageLink } from "./links.js";
export {
  discordAskCommand,
  type RegisterOptions,
  registerDiscordAskCommand,
} from "./register.js";
export {
  type DiscordAnswerMessage,
  discordAnswer,
  discordText,
  type SlackAnswerMessage,
  slackAnswer,
  slackText,
  type TelegramAnswerMessage,
  telegramAnswer,
} from "./render.js";
export {
  type AskDeps,
  type AskJob,
  type AskOutcome,
  answerAsk,
  DISCORD_API_BASE,
  type DiscordAskJob,
  SLACK_RESPONSE_PREFIX,
  type SlackAskJob,
  TELEGRAM_API_BASE,
  type TelegramAskJob,
} from "./run.js";
