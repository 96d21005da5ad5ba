/**
 * Ask in the channel: the answer to a question from the channel's own past, as searched.
 * Composed from the search's hits (questions with answers first, then conversations), with each
 * hit's platform link and date, rendered literally for Slack, Discord and Telegram, and posted
 * where the platform's request said to, with an optional model-written summary citing the hits;
 * a message marked as a question's answer by a person; and the registration of Discord's commands.
 */
export { type AskAnswer, composeAnswer } from "./answer.js";
export { AskError } from "./errors.js";
export { messageLink } from "./links.js";
export { type MarkJob, markAnswer } from "./mark.js";
export { discordAskCommand, registerDiscordAskCommand } from "./register.js";
export { discordAnswer, slackAnswer, telegramAnswer } from "./render.js";
export { type AskJob, answerAsk, DISCORD_API_BASE } from "./run.js";
export { type AnswerWriter, answerWriter, SUMMARY_MAX_TOKENS } from "./summary.js";
