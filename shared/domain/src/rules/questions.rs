//! Questions and how they end: what is a question, whether it is put to
//! the room, and whether its asker moved on (found the answer, or was only
//! guessing), with the words each is read from.

use super::scene::{talks_in_threads, Scene, QUESTION_MAX_AGE};
use crate::ids::UserId;
use crate::message::{speaks_to, thread_began, Message};
use crate::text::{mentions_user, names, spoken};

/// Whether `text` is a question: a "?" (or "？") in its prose and at least
/// three words, where a run of Japanese counts a word per three characters
/// (it has no spaces between words). A "?" in code (`` `link-target?` ``, a
/// code block) or in a link's address is no question mark.
pub fn is_question(text: &str) -> bool {
    let said = spoken(text);
    let prose = prose(&said);
    (prose.contains('?') || prose.contains('？')) && words(&said) >= 3
}

/// `text` without its code (between backticks: spans and blocks) and the
/// addresses of its links (`<https://...>`, as Slack writes them).
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['`', '<']) {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let (open, close) = if after.starts_with("```") {
            ("```", "```")
        } else if after.starts_with('`') {
            ("`", "`")
        } else {
            ("<", ">")
        };
        match after[open.len()..].find(close) {
            Some(end) => rest = &after[open.len() + end + close.len()..],
            // Unclosed: the rest is prose.
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| !w.starts_with("<@"))
        .map(|w| {
            let wide = w.chars().filter(|c| !c.is_ascii()).count();
            if wide == 0 {
                usize::from(w.chars().any(char::is_alphanumeric))
            } else {
                wide.div_ceil(3)
            }
        })
        .sum()
}

/// Whether a top-level `message` is judged on its own wait, apart from the
/// channel's top level: a question ([`is_question`]) put to nobody by an
/// @-mention. On the top level's one wait, which every new message there
/// restarts, a question in a busy channel would be judged only if it were
/// the last message when the channel went quiet. One put to someone is
/// theirs: it stays on the top level's wait.
pub fn waits_on_its_own(message: &Message) -> bool {
    message.thread_ts.is_none() && !message.text.contains("<@") && is_question(&message.text)
}

/// The most top-level questions of one channel given a wait of their own
/// in an hour ([`waits_on_its_own`]); the others wait with the top level,
/// as every message did before. So a busy channel makes at most this many
/// schedules of questions an hour, besides its top level's and its
/// threads'. No channel of the dev corpora asks more than 20 top-level
/// questions in an hour (docs/deciding.md).
pub const QUESTION_WAITS_PER_HOUR: u64 = 20;

/// Whether `text` @-mentions someone other than `bot`.
pub(super) fn mentions_other(text: &str, bot: &UserId) -> bool {
    text.contains("<@") && !mentions_user(text, bot)
}

/// Whether `message` is a person's (not a bot's).
pub(super) fn person(message: &Message) -> bool {
    !message.is_bot
}

/// The latest question in the conversation that a person asked, put to
/// nobody by an @-mention (one put to someone is theirs, however long they
/// take), and that no one else (person or bot) has answered in its
/// conversation ([`said_after`]): its asker may have said more since,
/// unless he moved on ([`moved_on`]).
/// At the top level, a question that has a thread is that thread's to
/// judge: it is not waiting here too.
pub(super) fn unanswered_question<'a>(scene: &Scene<'a>) -> Option<&'a Message> {
    let oldest = scene.now - QUESTION_MAX_AGE;
    let in_threads = talks_in_threads(scene.channel);
    scene
        .conversation
        .iter()
        .rev()
        .filter(|m| person(m) && m.ts.to_datetime() >= oldest && is_question(&m.text))
        .filter(|m| !mentions_other(&m.text, scene.bot))
        .find(|q| {
            let in_thread = |m: &&Message| scene.top_level && m.thread_ts == Some(q.ts);
            if scene.channel.iter().any(|m| in_thread(&m)) {
                return false;
            }
            if asked_again(scene, q) {
                return false;
            }
            let later = said_after(scene, q, in_threads);
            !later
                .iter()
                .any(|m| m.user != q.user || m.user == *scene.bot)
                && !moved_on(q, &later)
        })
}

/// Whether the asker of the top-level question `q` asked again at the top
/// level since, in the channel's window ([`asks_again`]).
fn asked_again(scene: &Scene<'_>, q: &Message) -> bool {
    scene.channel.iter().any(|m| asks_again(q, m))
}

/// Whether `m` asks the top-level question `q` again: its asker's later
/// top-level question of its own wait in the same channel, within
/// [`QUESTION_MAX_AGE`]. The
/// later one stands for both, and is answered once, in its own thread.
pub fn asks_again(q: &Message, m: &Message) -> bool {
    q.thread_ts.is_none()
        && m.channel == q.channel
        && m.thread_ts.is_none()
        && m.user == q.user
        && m.ts > q.ts
        && m.ts.to_datetime() - q.ts.to_datetime() <= QUESTION_MAX_AGE
        && waits_on_its_own(m)
}

/// What was said in `q`'s conversation after it, oldest first: for a
/// question in a thread, the thread; for a top-level one, its thread and,
/// where the channel's people do not talk in threads (`in_threads`), the
/// top level until its thread began ([`speaks_to`]), from the judged
/// conversation and the channel's window alike. So the judgment, the
/// answer times it learns and the eval hold a question answered by the
/// same messages.
pub(super) fn said_after<'a>(scene: &Scene<'a>, q: &Message, in_threads: bool) -> Vec<&'a Message> {
    if q.thread_ts.is_some() {
        return scene.conversation.iter().filter(|m| m.ts > q.ts).collect();
    }
    let began = thread_began(q, scene.channel, in_threads);
    let mut later: Vec<&Message> = scene
        .conversation
        .iter()
        .chain(scene.channel)
        .filter(|m| m.ts > q.ts && m.channel == q.channel)
        .filter(|m| speaks_to(q, m.thread_ts, m.ts, began))
        .collect();
    later.sort_by_key(|m| m.ts);
    later.dedup_by_key(|m| m.ts);
    later
}

/// Words that put a question to the room rather than to one person.
const TO_THE_ROOM: &[&str] = &[
    "anyone",
    "anybody",
    "someone",
    "somebody",
    "everyone",
    "everybody",
    "any idea",
    "any ideas",
    "any thoughts",
    "folks",
    "y'all",
    "誰か",
    "だれか",
    "どなたか",
    "皆さん",
    "みなさん",
    "みんな",
];

/// Words with which an asker says he has his answer.
const RESOLVED: &[&str] = &[
    "nvm",
    "never mind",
    "nevermind",
    "got it",
    "figured it out",
    "figured out",
    "solved",
    "fixed",
    "found it",
    "works now",
    "working now",
    "turns out",
    "解決",
    "できました",
    "わかりました",
    "分かりました",
];

/// Words that make a question a guess the asker thinks aloud.
const GUESSING: &[&str] = &[
    "probably",
    "maybe",
    "perhaps",
    "i guess",
    "i suppose",
    "i wonder",
    "might be",
    "たぶん",
    "多分",
    // The particle closing a wondering question, not "かな" inside words
    // (なかなか, 静かな).
    "かな?",
    "かな？",
];

/// Words that say the asker is still stuck, whatever else he says ("still
/// not fixed", "didn't work, got it?").
const STILL_STUCK: &[&str] = &[
    "still",
    "not",
    "no luck",
    "doesn't",
    "didn't",
    "isn't",
    "won't",
    "can't",
    "まだ",
    "できない",
    "だめ",
    "ダメ",
];

fn has_any(text: &str, words: &[&str]) -> bool {
    let said = spoken(text);
    words.iter().any(|w| names(&said, w))
}

/// Words alone with which a person sees it ("OH….", "ah!", "i see").
const REALISED: &[&str] = &["oh", "ohh", "ah", "ahh", "aha", "i see", "なるほど"];

/// Whether `text` is only a word of seeing it: a short message made of one
/// of [`REALISED`].
fn realised(text: &str) -> bool {
    let plain: String = text
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || !c.is_ascii())
        .filter(|c| !matches!(c, '…' | '！' | '。'))
        .collect();
    let plain = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    REALISED.contains(&plain.as_str())
}

/// Whether `text` puts its question to the room ("anyone?", "does someone
/// know"), not to one person.
pub fn to_the_room(text: &str) -> bool {
    has_any(text, TO_THE_ROOM)
}

/// Whether the asker of `question` moved on in `later` (the conversation's
/// messages after it, all his own): he said he has his answer ("nvm, got
/// it", "nope, it was the lockfile"), or his question was a guess
/// ("probably the flaky test again?") that he followed with more of his own
/// thinking rather than a plea. Adding details to a real question ("it
/// says error 17") keeps it waiting.
pub fn moved_on(question: &Message, later: &[&Message]) -> bool {
    let own = || later.iter().filter(|m| m.user == question.user);
    let resolved =
        |text: &str| (has_any(text, RESOLVED) && !has_any(text, STILL_STUCK)) || realised(text);
    own().any(|m| resolved(&m.text))
        || (has_any(&question.text, GUESSING)
            && own().any(|m| {
                !is_question(&m.text) && !to_the_room(&m.text) && !has_any(&m.text, STILL_STUCK)
            }))
}
