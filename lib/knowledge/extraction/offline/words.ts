/**
 * The offline extractor's word lists and its inflection rule: words that never name a subject
 * (function words, chat filler, and verbs, adjectives, adverbs and nouns too general to be one),
 * and the light stemmer that merges a word's inflections into one key.
 */

/**
 * Function words of English: articles, pronouns, prepositions, conjunctions, auxiliaries, and
 * their contractions (with the apostrophe, and as chat writes them without it).
 */
const FUNCTION_WORDS = `
a about above across after afterwards again against all almost alone along already also although
always am among amongst an and another any anybody anyhow anyone anything anyway anyways anywhere
are aren't arent around as at be became because become becomes becoming been before beforehand
behind being below beside besides between beyond both but by can can't cannot cant could couldn't
couldnt did didn't didnt do does doesn't doesnt doing don't dont done down during each either else
elsewhere enough etc even ever every everybody everyone everything everywhere except few for from
further had hadn't hadnt has hasn't hasnt have haven't havent having he he'd he'll he's hed hell
hes her here here's heres hers herself him himself his how how's hows however i i'd i'll i'm i've
id ill im ive if in indeed inside instead into is isn't isnt it it'd it'll it's itd itll its
itself just least less let let's lets many may maybe me might mightn't mine more moreover most
mostly much must mustn't mustnt my myself neither never nevertheless next no nobody none noone nor
not nothing now nowhere of off often on once one ones only onto or other others otherwise ought our
ours ourselves out over own per perhaps rather same shall shan't she she'd she'll she's shes should
shouldn't shouldnt since so some somebody somehow someone something sometime sometimes somewhat
somewhere still such than that that's thats the their theirs them themselves then thence there
there's theres thereafter thereby therefore these they they'd they'll they're they've theyd theyll
theyre theyve this those though through throughout thru thus till to together too toward towards
under unless until up upon us very via was wasn't wasnt we we'd we'll we're we've wed were weren't
werent weve what what's whats whatever when whence whenever where where's wheres whereas whereby
wherever whether which while whither who who's whos whoever whole whom whose why why's will with
within without won't wont would wouldn't wouldnt yet you you'd you'll you're you've youd youll
youre youve your yours yourself yourselves e.g i.e vs via etc ie eg regarding concerning
according despite unlike plus minus versus whereas hence thereof wherein amid
zero two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred
thousand million billion first second third fourth fifth half once twice dozen
`;

/** What chat says around its subjects: greetings, thanks, agreement, laughter, hedges. */
const CHAT_WORDS = `
hi hello hey hiya heya yo morning evening night bye goodbye cya later thanks thank thx thanx ty
tyvm cheers welcome please pls plz sorry yes yeah yea yep yup nope nah okay okey ok kk alright
sure lol lmao rofl haha hahaha hehe heh hmm hmmm hm huh uh um umm erm eh ah ahh oh ohh ooh wow
whoa oops ouch meh ugh argh damn darn dang heck hell crap shit fuck fucking wtf omg btw imo imho
afaik afaict iirc fwiw tbh idk dunno gonna wanna gotta kinda sorta lemme gimme ya yah aye nice
cool great awesome sweet neat fine good bad thanks! np ack nak brb afk bbl bbiab gn gm re wb
`;

/**
 * Verbs, adjectives, adverbs and nouns so general that they name no subject on their own (every
 * inflection is merged by the stemmer; the base forms are enough).
 */
const GENERAL_WORDS = `
able actual actually add added again ago agree ahead allow almost anyway apparently appear apply
ask asked asking assume available aware away back bad basically become begin believe best better
big bit bring build busy call called came case cause certain certainly change check clear clearly
close come comes coming completely consider correct could couple current currently day days deal
decide definitely depend describe different difficult do does easy easily either else end enough
entire entirely especially exact exactly example except expect explain fact fair false far fast
feel felt figure find fine first follow following forget forgot found free full fully get gets
getting give given go goes going gone good got gotten guess guy guys hand handle happen happened
hard hear help here high hold hope huge idea important instead interesting issue keep kind know
knowing known large last late later lead learn leave left less let like likely line little live
long look looked looking looks lot lots love low make makes making matter mean means meant mention
mind minute miss moment month much need needed needs new nice normal normally now number obvious
obviously odd ok old open option order original part particular people person pick place plan
play point possible possibly pretty probably problem problems properly put question quick quickly
quite random read ready real really reason recent recently remember right run said same saw say
saying says second see seem seemed seems seen send sense set several short show side similar
simple simply since small someone something sometimes soon sort sound sounds speak special start
started stop stuff suggest suppose supposed sure take taken talk tell test thing things think
thinking thought time times today told tomorrow took total tried true try trying turn type understand
unless use used useful uses using usual usually way ways week well went whatever wish wonder word
work worked working works worry wrong year years yesterday maybe anyway either etc also else
doing done making going getting trying saying looking seeing thinking wanting want wants wanted
stuff somewhere someone anything everything nothing everyone anyone else lot lots bunch kinda
version create created install installed installing fail failed failing drop dropped save saved
based basis currently tool tools info information details detail thanks issue issues answer
wait waiting guess trying seem stuff anyway able works worked hour hours minute minutes sudo
implement implemented implementation write wrote written writing return returned link linked
leak leaked file files list select command commands size user users computer thread call calls
fix fixed fixes support supported
`;

/**
 * Words that stand first in a line with a colon as labels (`Note: …`, `Error: …`), not as a
 * nickname being addressed.
 */
const LABEL_WORDS = `
note notes error errors warning warnings edit update updated example output input result results
usage fix solution answer question problem issue info hint tip reason source code log logs update
step steps summary todo fixme ps also eta status hint update re fyi nb bug bugs patch change changes
e w i q a so ok well yes no but and or then now also see edit2 update2 quote
`;

const VOWEL = /[aeiouy]/;

function wordSet(...lists: string[]): Set<string> {
  return new Set(lists.flatMap((list) => list.split(/\s+/u).filter(Boolean)));
}

/** The words of `lists`, in lower case as written and as stemmed. */
function stemmedSet(...lists: string[]): Set<string> {
  const words = wordSet(...lists);
  for (const word of [...words]) words.add(stem(word));
  return words;
}

/** Words never proposed, nor part of a phrase, in lower case as written and as stemmed. */
export const STOPWORDS: ReadonlySet<string> = stemmedSet(FUNCTION_WORDS, CHAT_WORDS);

/**
 * Words too general to be a topic alone, which a phrase may hold beside a word that is not
 * (`fresh install`, `error message`), as written and as stemmed.
 */
export const GENERAL: ReadonlySet<string> = stemmedSet(GENERAL_WORDS);

/** Words that, first in a line and followed by a colon, are a label rather than a nickname. */
export const LABELS: ReadonlySet<string> = wordSet(LABEL_WORDS, FUNCTION_WORDS, CHAT_WORDS);

/**
 * A lower-case word's key, merging its inflections: Porter's plural and past/present participle
 * rules (steps 1a to 1c), then its final-e and double-l rules (5a, 5b), so that `driver` and
 * `drivers`, `crash`, `crashes`, `crashed` and `crashing`, `cache` and `caches` each share a key.
 * Only words of letters a to z of four or more are stemmed; others are their own key. The key
 * need not be a word: topics show the form people wrote.
 */
export function stem(word: string): string {
  if (word.length < 4 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  // 1a: plurals.
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = `${w.slice(0, -3)}i`;
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) {
    w = w.slice(0, -1);
  }
  // 1b: -eed, -ed, -ing.
  let fixup = false;
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else if (w.endsWith("ed") && VOWEL.test(w.slice(0, -2))) {
    w = w.slice(0, -2);
    fixup = true;
  } else if (w.endsWith("ing") && VOWEL.test(w.slice(0, -3)) && w.length > 5) {
    w = w.slice(0, -3);
    fixup = true;
  }
  if (fixup) {
    if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w = `${w}e`;
    else if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
    else if (measure(w) === 1 && cvc(w)) w = `${w}e`;
  }
  // 1c: a final y after a vowel-bearing stem is i.
  if (w.endsWith("y") && VOWEL.test(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;
  // 5a: a final e goes (keeping "cache"/"caches" and "patch"/"patches" together).
  if (w.endsWith("e")) {
    const base = w.slice(0, -1);
    if (measure(base) > 1 || (measure(base) === 1 && !cvc(base))) w = base;
  }
  // 5b: a final double l goes in long stems.
  if (w.endsWith("ll") && measure(w) > 1) w = w.slice(0, -1);
  return w;
}

/** Porter's measure: the number of vowel-consonant sequences after the first consonants. */
function measure(word: string): number {
  return (word.replace(/^[^aeiou]+/, "").match(/[aeiou]+[^aeiou]+/g) ?? []).length;
}

/** Consonant-vowel-consonant at the end, the last not w, x or y. */
function cvc(word: string): boolean {
  return /[^aeiou][aeiouy][^aeiouwxy]$/.test(word);
}
