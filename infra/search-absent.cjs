// Bundled in place of @lancedb/lancedb when `search` is off (infra/search.ts): the functions then
// have no layer, and a bundle importing the real module would fail to start. Nothing calls it,
// since without SEARCH_INDEX_URI search is off; a call would be a TypeError, not a wrong answer.
module.exports = {};
